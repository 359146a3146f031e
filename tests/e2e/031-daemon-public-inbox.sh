#!/usr/bin/env bash
# End to end: a public-inbox v2 archive as the daemon's source.  The test
# builds the archive (git/0.git and git/1.git, one commit per mail, the mail
# as the blob `m`) from the 1,500 real mails of linux-serial in
# ../shared/corpus, and `printkbot daemon --once --queue-only` reads it with
# libgit2: the queued series are exactly those with logging churn (the
# scan's count, checked against `printkbot scan`), replies and mails
# without a patch are skipped, and a second run reads nothing again, then
# only the mails committed since (60 in epoch 1, 40 in a new epoch 2).
# And a source with the default start (now), first seen when the archive
# holds 1,400 mails, queues nothing of them, then exactly the 100 that come
# after.  No kernel is built.
source "$(dirname "$0")/lib.sh"
corpus=../shared/corpus/linux-serial-1500.mbox.xz
[ -f "$corpus" ] || skip "$corpus not found"

xz -dc "$corpus" >"$work/all.mbox"
# Two epochs: the first 1,000 mails in 0.git, 400 in 1.git; the last 100 come later.
python3 - <<'PY'
from e2elib import inbox_commit, mbox_messages, path
mails = mbox_messages(path("all.mbox"))
assert len(mails) == 1500, len(mails)
inbox_commit(path("inbox/git/0.git"), mails[:1000], 1700000000, False)
inbox_commit(path("inbox/git/1.git"), mails[1000:1400], 1700000000, False)
PY
cat >"$work/printkbot.conf" <<EOF
[daemon]
from = printkbot <bot@example.org>
series_wait = 0

[source linux-serial]
type = public-inbox
start = all
path = $work/inbox
EOF
# The same archive as a new source with the default start, in its own store.
cat >"$work/now.conf" <<EOF
[store]
path = $work/now.db

[daemon]
from = printkbot <bot@example.org>
series_wait = 0

[source lore-now]
type = public-inbox
path = $work/inbox
EOF
$bot daemon --config "$work/printkbot.conf" --once --queue-only 2>"$work/run1.log"
$bot queue --config "$work/printkbot.conf" --json >"$work/queue1.json"
$bot scan --json "$work/all.mbox" >"$work/scan.json" || true

python3 - "$work" <<'PY'
import json, os, sqlite3, sys
from e2elib import check, done
work = sys.argv[1]
db = sqlite3.connect(os.environ["PRINTKBOT_DB"])
log = open(os.path.join(work, "run1.log")).read()
check("1400 new mail(s)" in log, "run 1 read the 1,400 mails of both epochs (%s)" %
      [l for l in log.splitlines() if "new mail" in l])
mails = db.execute("select count(*) from mails").fetchone()[0]
check(mails == 1400, "1,400 mails stored by Message-ID (%d)" % mails)
jobs = [json.loads(l) for l in open(os.path.join(work, "queue1.json"))]
check(all(j["kind"] == "series" and j["state"] == "queued" for j in jobs), "only series jobs, queued")
queued = {r[0]: r[1] for r in db.execute("select message_id, churn from mails where state = 'queued' and number > 0")}
# Every queued series has churn; every patch with churn that was not skipped is queued.
check(all(db.execute("select sum(churn) from mails where job_id = ?", (j,)).fetchone()[0] > 0
          for (j,) in db.execute("select distinct job_id from mails where state = 'queued'")),
      "every queued series changes printk-family calls")
churned = {r[0] for r in db.execute("select message_id from mails where churn > 0")}
lost = [r for r in db.execute("select message_id, reason from mails where churn > 0 and state != 'queued'")]
check(all(r[1] and ("superseded" in r[1] or "missing" in r[1] or "never arrived" in r[1]) for r in lost),
      "a patch with churn is queued unless superseded or after a gap (%s)" % lost[:3])
# The scan of the same mails agrees: a patch has churn exactly when `scan` says it is not no-churn.
scan = {}
for line in open(os.path.join(work, "scan.json")):
    o = json.loads(line)
    mid = (o.get("message_id") or "").strip("<>")
    scan[mid] = o.get("verdict") != "no-churn"
accepted = {r[0]: r[1] for r in db.execute("select message_id, churn from mails where number > 0 and (state != 'skipped' or reason like 'no logging churn%' or reason like 'superseded%' or reason like 'after a missing%' or reason like 'patch 1%')")}
disagree = [m for m, c in accepted.items() if m in scan and scan[m] != (c > 0)]
check(not disagree, "churn as `printkbot scan` sees it, for all %d patches (%s)" % (len(accepted), disagree[:3]))
skipped = dict(db.execute("select reason, count(*) from mails where state = 'skipped' group by reason").fetchall())
print("skipped:", skipped)
check(skipped.get("a reply", 0) > 700, "replies skipped")
check(skipped.get("no logging churn (scan): nothing to build", 0) > 50, "series without churn never queued")
print("queued: %d series, %d patches, %d with churn" % (len(jobs), len(queued), sum(1 for c in queued.values() if c)))
done()
PY

# A second run reads nothing; after 100 more commits it reads exactly those.
$bot daemon --config "$work/printkbot.conf" --once --queue-only 2>"$work/run2.log"
! grep -q "new mail" "$work/run2.log" || fail "run 2 read mails again" "$work/run2.log"
ok "run 2: nothing read twice"
$bot daemon --config "$work/now.conf" --once --queue-only 2>"$work/now1.log"
grep -q "source lore-now: first look, start = now" "$work/now1.log" ||
	fail "start = now: the first look is not said" "$work/now1.log"
! grep -q "new mail" "$work/now1.log" || fail "start = now: mails already there were read" "$work/now1.log"
[ "$(sqlite3 "$work/now.db" "select count(*) from mails")/$(sqlite3 "$work/now.db" "select count(*) from jobs")" = 0/0 ] ||
	fail "start = now: mails or jobs stored at the first look" "$work/now1.log"
ok "start = now: the 1,400 mails there at the first look are not read, nothing queued"
python3 - <<'PY'
from e2elib import inbox_commit, mbox_messages, path
later = mbox_messages(path("all.mbox"))[1400:]
inbox_commit(path("inbox/git/1.git"), later[:60], 1800000000, True)
inbox_commit(path("inbox/git/2.git"), later[60:], 1800000100, False)
PY
$bot daemon --config "$work/now.conf" --once --queue-only 2>"$work/now2.log"
grep -q "source lore-now: 100 new mail(s)" "$work/now2.log" ||
	fail "start = now: not exactly the 100 mails committed since" "$work/now2.log"
python3 - <<'PY'
import email, email.policy, sqlite3
from e2elib import check, done, mbox_messages, path
later = set()
for raw in mbox_messages(path("all.mbox"))[1400:]:
    m = email.message_from_bytes(raw, policy=email.policy.compat32)
    later.add((m["Message-ID"] or "").strip().strip("<>"))
db = sqlite3.connect(path("now.db"))
stored = {r[0] for r in db.execute("select message_id from mails")}
check(len(stored) == 100 and stored <= later,
      "start = now: the 100 mails stored are those committed since (%d, %d others)" % (len(stored), len(stored - later)))
jobs = db.execute("select count(*) from jobs").fetchone()[0]
queued = db.execute("select count(distinct job_id) from mails where state = 'queued'").fetchone()[0]
check(queued == jobs, "start = now: every job is the series of some of those mails (%d jobs)" % jobs)
done()
PY
$bot daemon --config "$work/printkbot.conf" --once --queue-only 2>"$work/run3.log"
grep -q "source linux-serial: 100 new mail(s)" "$work/run3.log" ||
	fail "run 3 did not read exactly the 100 new mails" "$work/run3.log"
ok "run 3: exactly the 100 mails committed since"
stored=$(sqlite3 "$PRINTKBOT_DB" "select count(*) from mails")
[ "$stored" = 1500 ] || fail "not 1500 mails stored ($stored)"
ok "1,500 mails stored, each once"
passed
