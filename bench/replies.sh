#!/usr/bin/env bash
# What the lists would be mailed: the daemon over each real corpus, a
# list's policy as [list NAME] says it (doc/daemon.md, "What is mailed").
# Needs a run dir that bench/series.sh kept (KEEP=DIR): per corpus its
# mails, its series, where each went and the store its tests filled.
#
# Per corpus and per policy of the list (POLICIES, default "changes";
# also "positive" (changes and positive = true) and "always"):
# 1. the daemon's store is a copy of the series bench's: the daemon tests
#    every series again, and finds each build and boot there instead of
#    making them (the same patch on the same parent is the same commit);
# 2. the corpus is fed to an mbox source one mail at a time in Date
#    order, as the series bench feeds its intake: after each mail the
#    intake runs (`daemon --queue-only --once`), and when it queued a
#    series, the daemon runs (`daemon --once`): the series is tested and
#    its mail decided and sent before the next mail comes, as on the list
#    (a v2 comes after v1 was answered).  A last pass with series_wait = 0
#    queues what stayed incomplete.  The patches of a series the series
#    bench placed but did not test to its end (LIMIT, its timeout) are
#    left out of the feed: they would be built here.  A series no base
#    takes whole is fed (UNPLACED=0 leaves it out): the daemon tries its
#    patches on the first base all the same, and builds those that apply,
#    which the series bench never did (its figures say how many kernels
#    the run built);
# 3. the list is [list linux-serial] (its List-Id names it), reply as the
#    policy says, the other keys at their defaults; the mails go over
#    SMTP (STARTTLS, AUTH) to the Postfix of tests/e2e/mailservers.sh,
#    which rewrites every recipient to one local mailbox and relays
#    nothing: no mail leaves the machine;
# 4. the table: patches tested and mails sent by verdict, the mails held
#    by each rule (and by the once-per-change rule and the brakes), lines
#    per mail sent (median, max), and the console effects against the
#    console-changed mails (the target: one mail per distinct effect).
#
# Run: SERIES=DIR bash bench/replies.sh            (DIR as bench/series.sh's KEEP=DIR)
#      CORPUS=2023q1|2025|both  POLICIES="changes positive always"  E2E_KEEP=1 (keep the work dir)
#      UNPLACED=0 (leave out the series no base takes: no kernel built at all on a full series run)
# The lab is the usual one ($PRINTKBOT_CACHE), taken under its lock; the
# daemon reads $BENCH_CONFIG's [test], [build] and [policy] when given (what
# the series bench's `test` read from $PRINTKBOT_CONFIG), so that it chooses
# the bases the series bench chose.
set -euo pipefail
[ -n "${SERIES:-}" ] || { echo "SERIES=DIR: the run dir bench/series.sh kept (KEEP=DIR)" >&2; exit 2; }
series_dir=$(cd "$SERIES" && pwd)
source "$(dirname "$0")/../tests/e2e/lib.sh"
source tests/e2e/mailservers.sh
case ${CORPUS:-both} in
2023q1 | 2025) corpora=("$CORPUS") ;;
both) corpora=(2023q1 2025) ;;
*) echo "CORPUS is 2023q1, 2025 or both" >&2; exit 2 ;;
esac

mail_need
mail_users=sink mail_start
# every recipient (the corpus' real authors and lists) becomes the sink's mailbox, the
# headers untouched; and should one not, nothing is relayed anyway
cat >>"$work/postfix/main.cf" <<EOF
recipient_canonical_maps = regexp:$work/postfix/sink
recipient_canonical_classes = envelope_recipient
default_transport = error:the bench relays nothing
relay_transport = error:the bench relays nothing
EOF
echo '/.*/ sink@example.org' >"$work/postfix/sink"
postfix -c "$work/postfix" reload >>"$work/postfix-ctl.log" 2>&1 || fail "postfix reload" "$work/postfix-ctl.log"
echo pw >"$work/bot-password"
chmod 600 "$work/bot-password"

# the daemon's config for run dir $1, policy $2, series_wait $3
daemon_config() {
	[ -z "${BENCH_CONFIG:-}" ] || python3 - "$BENCH_CONFIG" <<'PY'
import re, sys
keep, out = False, []
for line in open(sys.argv[1]):
    g = re.match(r"\s*\[([^\]]+)\]", line)
    if g:
        keep = g.group(1) in ("test", "build", "policy")
    if keep:
        out.append(line)
print("".join(out))
PY
	cat <<EOF
[daemon]
from = printkbot <bot@example.org>
series_wait = $3
retry_min = 1
retry_max = 5
outbox = $1/outbox

$(mail_smtp_group)

[list linux-serial]
address = linux-serial@vger.kernel.org
reply = $([ "$2" = positive ] && echo changes || echo "$2")
$([ "$2" = positive ] && echo "positive = true")

[source corpus]
type = mbox
path = $1/feed.mbox
start = all
EOF
}

for c in "${corpora[@]}"; do
	from=$series_dir/$c
	[ -f "$from/which.txt" ] && [ -f "$from/store.db" -o "${PLACE_ONLY:-0}" = 1 ] ||
		{ echo "no series bench run of $c in $series_dir (bench/series.sh KEEP=DIR, not PLACE_ONLY)" >&2; exit 2; }
	for policy in ${POLICIES:-changes}; do
		run=$work/$c-$policy
		mkdir -p "$run"
		[ ! -f "$from/store.db" ] || cp "$from/store.db" "$run/store.db"
		daemon_config "$run" "$policy" 2592000 >"$run/feed.conf"
		daemon_config "$run" "$policy" 0 >"$run/last.conf"
		# the sink, emptied: its mails are this run's
		rm -f "$work/mail/sink/Maildir/new/"* "$work/mail/sink/Maildir/cur/"*
		s=$SECONDS
		python3 - "$from" "$run" "$bot" <<'PY'
# Feed the corpus in Date order, one mail a pass; the daemon runs when
# the intake queued a series.  The mails of series placed but not tested
# to their end are left out (they would be built here).
import email.utils, json, os, re, subprocess, sys
frm, run, bot = sys.argv[1:4]
skip, untested = set(), 0
which = {}
for line in open(frm + "/which.txt"):
    path, _, rest = line.rstrip("\n").partition(": ")
    which[path] = not rest.startswith("no base takes it")
unplaced = os.environ.get("UNPLACED", "1") != "0"
for s in map(json.loads, open(frm + "/series.jsonl")):
    path = s["mbox"]
    if path in which and not which[path] and not unplaced:
        skip.update(s["message_ids"])
        continue
    if not which.get(path):
        continue
    rc = path[:-5] + ".rc"
    done = os.path.exists(rc) and open(rc).read().split()[0] in ("0", "1")
    if not done:
        untested += 1
        skip.update(s["message_ids"])
buf = open(frm + "/corpus.mbox", "rb").read()
starts = [0] + [m.start() + 1 for m in re.finditer(rb"\nFrom ", buf)]
mails = [buf[a:b] for a, b in zip(starts, starts[1:] + [len(buf)]) if b > a]
def header(raw, name):
    m = re.search(rb"^" + name + rb":[ \t]*(.*(?:\n[ \t].*)*)", raw.split(b"\n\n", 1)[0], re.M | re.I)
    return m.group(1).decode("latin-1").replace("\n", " ").strip() if m else ""
keyed, last = [], 0.0
for i, raw in enumerate(mails):
    try:
        last = email.utils.parsedate_to_datetime(header(raw, b"Date")).timestamp()
    except Exception:
        pass
    keyed.append((last, i, raw))
keyed.sort()
feed, log = run + "/feed.mbox", open(run + "/daemon.log", "ab")
open(feed, "wb").close()
def daemon(conf, queue_only):
    start = log.tell()
    subprocess.run([bot, "daemon", "--config", conf, "--db", run + "/store.db", "--once"] +
                   (["--queue-only"] if queue_only else []), stdout=log, stderr=log, check=True)
    log.flush()
    with open(run + "/daemon.log", "rb") as f:
        f.seek(start)
        return f.read()
fed = left = 0
for _, _, raw in keyed:
    if header(raw, b"Message-ID").strip("<>") in skip:
        left += 1
        continue
    with open(feed, "ab") as f:
        f.write(raw if raw.endswith(b"\n") else raw + b"\n")
    old = os.stat(feed).st_mtime - 60   # the source reads a file's last mail once nothing wrote it for a second
    os.utime(feed, (old, old))
    fed += 1
    if b": queued: " in daemon(run + "/feed.conf", True):
        daemon(run + "/feed.conf", False)
daemon(run + "/last.conf", True)
daemon(run + "/last.conf", False)
print("%d mails fed, %d left out (the patches of %d series the series bench did not test to their end%s)"
      % (fed, left, untested, "" if unplaced else ", and of the series no base takes"), file=sys.stderr)
PY
		# Postfix delivers after the daemon's send: wait for the sink to hold every mail sent
		sent=$(sqlite3 "$run/store.db" "select count(*) from replies where sent is not null")
		poll 60 mails_at_least sink "$sent" || echo "the sink holds fewer mails than the $sent sent" >&2
		printf '%s, %s: fed and answered in %d s\n' "$c" "$policy" $((SECONDS - s)) >&2
		python3 - "$run" "$c" "$policy" "$work/mail/sink/Maildir" "$from/store.db" <<'PY'
import collections, email, email.policy, glob, os, sqlite3, statistics, sys
run, corpus, policy, sink, old_store = sys.argv[1:6]
db = sqlite3.connect(run + "/store.db")
name = {"2023q1": "linux-serial 2023-Q1", "2025": "linux-serial 2025-11..2026-03"}[corpus]
rows = db.execute("select t.verdict, r.rule, r.held, r.text is not null and r.held is null, r.sent, r.effect "
                  "from replies r join reviews v on v.id = r.review_id join tests t on t.id = v.test_id "
                  "where r.mail_id is not null").fetchall()
tested = collections.Counter(v for v, *_ in rows)
def kind(held):
    if held.startswith("max_per"): return held.split(":")[0]
    if held.startswith("the same effect"): return "once per change"
    if held.startswith("replaced by"): return "replaced (embargo)"
    if held.startswith("the subject"): return "subject_prefixes"
    return "policy"
held = collections.Counter((rule, kind(h or "")) for v, rule, h, mailed, sent, e in rows if not mailed)
mails = [email.message_from_binary_file(open(p, "rb"), policy=email.policy.default)
         for p in sorted(glob.glob(os.path.join(sink, "*", "*")))]
# one copy a recipient reaches the sink: each mail once, by its Message-ID
seen, unique = set(), []
for m in mails:
    if m["X-Printkbot"] and m["Message-ID"] not in seen:
        seen.add(m["Message-ID"])
        unique.append(m)
mails = unique
by_verdict = collections.Counter(dict(x.split("=", 1) for x in m["X-Printkbot"].split("; ")[1:]
                                      if "=" in x).get("verdict", "?") for m in mails)
lines = [len(m.get_content().splitlines()) for m in mails]
effects = {e for v, rule, h, mailed, sent, e in rows if rule == "console-changed"}
old = sqlite3.connect(old_store) if os.path.exists(old_store) else None
builds = db.execute("select count(*) from builds").fetchone()[0] - (
    old.execute("select count(*) from builds").fetchone()[0] if old else 0)
print("%s, reply = %s:" % (name, policy))
print("  patches tested: %d (%s)" % (len(rows), ", ".join("%s %d" % kv for kv in sorted(tested.items())) or "-"))
print("  mails sent: %d (%s)" % (len(mails), ", ".join("%s %d" % kv for kv in sorted(by_verdict.items())) or "-"))
print("  held: %d (%s)" % (sum(held.values()), ", ".join("%s %d" % ("%s: %s" % k if k[1] != "policy" else k[0], n)
                                                       for k, n in sorted(held.items())) or "-"))
print("  console effects: %d distinct, %d console-changed mails sent" % (len(effects), by_verdict["console-changed"]))
print("  lines a mail: median %s, max %s" % (statistics.median(lines) if lines else "-", max(lines) if lines else "-"))
print("  kernels built by this run (not in the series bench's store): %d" % builds)
bad = [v for v in ("does-not-apply", "not-built", "refused") if by_verdict[v]] if policy != "always" else []
print("  targets: %s" % ("met" if not bad and all(n <= 120 for n in lines) and
                         (policy == "always" or by_verdict["console-changed"] <= len(effects)) else
                         "NOT met (%s)" % ", ".join(bad or ["a mail over 120 lines or a repeated effect"])))
PY
	done
done
