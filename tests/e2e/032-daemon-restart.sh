#!/usr/bin/env bash
# End to end: the daemon stopped in the middle of a build, cleanly and not.
# A 2-patch series is delivered into a Maildir the daemon watches (inotify).
#   1. SIGTERM while make runs: the daemon exits within seconds, its make is
#      ended and reaped, the job is back in the queue;
#   2. kill -9 while make runs (the test then ends the orphaned make by the
#      process ids it saw, as systemd would end the unit's cgroup): the job
#      is left "running";
#   3. `daemon --once` queues it again, tests both patches, and renders
#      exactly one reply per patch (SMTP is down: the replies wait, none is
#      lost and none is rendered twice).
source "$(dirname "$0")/lib.sh"
lab_setup

md=$work/Maildir
mkdir -p "$md"/{new,cur,tmp}
cat >"$work/printkbot.conf" <<EOF
[daemon]
from = printkbot <bot@example.org>
reply_on = always
series_wait = 600
outbox = $work/outbox

[smtp]
url = smtp://127.0.0.1:9

[source local]
type = maildir
path = $md
list = list@example.org
EOF

# The series as git send-email would thread it: 1/2 and 2/2 under 1/2.
mk() {  # n subject fixture: a mail of the series into the Maildir
	local n=$1 fix=$2 irt=
	[ "$n" = 2 ] && irt="In-Reply-To: <p1@example.org>
References: <p1@example.org>"
	{
		echo "From: Jane Dev <jane@example.org>"
		echo "To: list@example.org"
		echo "Subject: [PATCH $n/2] $(sed -n 's/^Subject: \[PATCH\] //p' "$src/tests/data/test/$fix.patch")"
		echo "Message-ID: <p$n@example.org>"
		[ -n "$irt" ] && echo "$irt"
		echo "Date: Tue, 1 Dec 2026 10:00:0$n +0000"
		echo
		sed -n '/^$/,$p' "$src/tests/data/test/$fix.patch" | tail -n +2
	} >"$md/tmp/$n.mail"
	mv "$md/tmp/$n.mail" "$md/new/100$n.mail"
}

descendants() {  # pid: every process below it
	local c
	for c in $(ps -o pid= --ppid "$1"); do echo "$c"; descendants "$c"; done
}

has_make() {  # pid: the daemon has a make below it
	descendants "$1" | xargs -r ps -o comm= -p 2>/dev/null | grep -q '^make$'
}

# 1. SIGTERM while building.
$bot daemon --config "$work/printkbot.conf" 2>"$work/run1.log" &
d=$!
sleep 1
mk 1 level-change
mk 2 pure-conversion     # the daemon sees both through inotify
wait_for 300 "run 1: a make started by the daemon" has_make "$d"
makes=$(descendants "$d")
t0=$(date +%s)
kill -TERM "$d"
wait "$d" || true
t1=$(date +%s)
echo "SIGTERM: the daemon exited after $((t1 - t0)) s"
[ $((t1 - t0)) -le 15 ] || fail "SIGTERM took $((t1 - t0)) s" "$work/run1.log"
for p in $makes; do
	! kill -0 "$p" 2>/dev/null || fail "child $p still runs after SIGTERM"
done
ok "SIGTERM: every child of the daemon ended and reaped"
grep -q "interrupted by a signal: back in the queue" "$work/run1.log" ||
	fail "the job was not put back" "$work/run1.log"
ok "SIGTERM: the job is back in the queue"
[ -z "$(ls "$md/new")" ] || fail "the Maildir's new mail was not taken"

# 2. kill -9 while building.
$bot daemon --config "$work/printkbot.conf" 2>"$work/run2.log" &
d=$!
wait_for 300 "run 2: a make started by the daemon" has_make "$d"
orphans=$(descendants "$d")
kill -9 "$d"
wait "$d" 2>/dev/null || true
for p in $orphans; do kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true; done
[ "$(sqlite3 "$PRINTKBOT_DB" "select state from jobs where kind = 'series'")" = running ] ||
	fail "after kill -9 the job is not left running"
ok "kill -9: the job is left running"

# 3. Restart: the job is picked up again and finished, one reply per patch.
$bot daemon --config "$work/printkbot.conf" --once 2>"$work/run3.log" || fail "run 3: daemon --once" "$work/run3.log"
check "restart: the interrupted job was queued again" grep -q "was running when the daemon stopped: queued again" "$work/run3.log"
check "restart: the series job is done" test "$(sqlite3 "$PRINTKBOT_DB" "select state from jobs where kind = 'series'")" = done
check "one job for the series, however often it was interrupted" \
	test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from jobs where kind = 'series'")" = 1
check "exactly one reply per patch" \
	test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) || '/' || count(distinct mail_id) from replies")" = 2/2
check "each reply waits in the queue (SMTP is down)" \
	test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from jobs where kind = 'reply' and state = 'queued'")" = 2
check "and is one file in the outbox's new/, under its Message-ID" \
	test "$(ls "$work/outbox/new" | sort | tr '\n' ' ')" = \
	     "$(sqlite3 "$PRINTKBOT_DB" "select message_id from replies order by message_id" | tr '\n' ' ')"
# (the verdict of 2/2 is test.c's business: its before side is 1/2's single boot)
check "both patches tested after the restart, the level change seen" \
	grep -q "done: 2 patches: console-changed, " "$work/run3.log"
checks_end "$work/run1.log" "$work/run2.log" "$work/run3.log"
passed
