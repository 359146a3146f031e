#!/usr/bin/env bash
# End to end: the daemon posts each finished review to [kcidb] url as a
# KCIDB v5.3 document, to a submission endpoint of the test's own on
# loopback (tests/e2e/kcidb-server.py) that checks the bearer token and
# validates every document against KCIDB's schema (../shared/kcidb/) with
# Debian's python3-jsonschema.  The corpus' PCI-gap rewording patch goes
# through a Maildir source (no reply: reply_on = never): one POST, valid,
# with the token of [kcidb] token_file, its checkout naming the mail's
# Message-ID and its comparison a failure (the boot line changed).  Then
# `report --kcidb` of the same review gives the same document, and a
# token file others may read stops the daemon before it starts.
source "$(dirname "$0")/lib.sh"
schema=$src/../shared/kcidb/kcidb-io.schema.v5.3.json
[ -r "$schema" ] || skip "no $schema (the workplace's shared data)"
py=/usr/bin/python3
$py -c 'import jsonschema, rfc3987' 2>/dev/null || fail "python3-jsonschema or python3-rfc3987 missing: make deps"
lab_setup

port=$(free_port)
token="e2e-$RANDOM-token"
mkdir -p "$work/posts" "$work/md"/{new,cur,tmp}
printf '%s\n' "$token" >"$work/token"
chmod 600 "$work/token"
$py "$src/tests/e2e/kcidb-server.py" "$port" "$token" "$work/posts" "$schema" 2>"$work/server.log" &
wait_port "$port"

config() {  # the daemon's configuration, its token file $1
	cat >"$work/printkbot.conf" <<CONF
[daemon]
from = printkbot <bot@example.org>
reply_on = never
outbox = $work/outbox

[source local]
type = maildir
start = all
path = $work/md

[kcidb]
origin = printkbot_e2e
url = http://127.0.0.1:$port/submit
token_file = $1
CONF
}

# a token others may read: refused, naming the file and the cure, before anything runs
cp "$work/token" "$work/token-open"
chmod 644 "$work/token-open"
config "$work/token-open"
keep open txt "$bot" daemon --config "$work/printkbot.conf" --once

config "$work/token"
cp "$src/tests/data/test/text-change.patch" "$work/md/new/1.mail"
keep daemon txt "$bot" daemon --config "$work/printkbot.conf" --once
review=$(sed -n 's/.*kcidb: 1 review(s) posted to .* the first \([0-9]*\).*/\1/p' "$work/daemon.err")
keep report json "$bot" report --db "$work/printkbot.db" --config "$work/printkbot.conf" --kcidb "${review:-0}"

python3 - <<'PY'
import glob, json, os
from e2elib import check, done, rc, text, work

check(rc("open") == 2 and "[kcidb] token_file" in text("open.err") and "chmod 600" in text("open.err"),
      "a token file its group or others may read stops the daemon, saying so")
check(rc("daemon") == 0, "the daemon ran the series and ended")
posts = sorted(glob.glob(os.path.join(work, "posts", "*.txt")))
check(len(posts) == 1, "one POST for the one review (%d)" % len(posts))
status = open(posts[0]).read() if posts else ""
check(status.startswith("200 valid: 2 checkouts, 2 builds, 4 tests"),
      "the endpoint took the token and the document validated: %s" % status.strip())
doc = json.load(open(posts[0].replace(".txt", ".json"))) if posts else {}
series = [c for c in doc.get("checkouts", []) if c.get("patchset_hash")]
check(len(series) == 1 and series[0]["message_id"] == "text-change@printkbot.invalid"
      and series[0]["id"].startswith("printkbot_e2e:"), "the checkout: the mail's Message-ID, the configured origin")
diff = [t for t in doc.get("tests", []) if t["path"] == "printk.console_diff"]
check(len(diff) == 1 and diff[0]["status"] == "FAIL" and "free for PCI devices" in diff[0]["log_excerpt"],
      "the boot log's comparison failed with the changed line")
check("posted to http://127.0.0.1" in text("daemon.err") and "e2e-" not in text("daemon.err"),
      "the daemon logs the post, never the token")
check(rc("report") == 0 and json.loads(text("report.json")) == doc, "report --kcidb gives the same document")
done()
PY
passed
