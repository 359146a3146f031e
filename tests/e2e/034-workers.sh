#!/usr/bin/env bash
# End to end: one intake and three workers on one SQLite store, real
# kernels.  Three single-patch series are delivered into a Maildir that
# `printkbot daemon --queue-only` reads; three `printkbot worker`s claim the
# jobs (they share this machine's lab, whose lock takes their builds one at
# a time, and the outbox).  The worker building first is killed (kill -9)
# with its make: its job stays running under its lease (15 s), the others
# do not touch it, and once the lease ended one of them takes it over.
# At the end every series job is done, the killed one in two attempts,
# and there is exactly one reply per patch (SMTP is down: each waits in
# the queue and is one file of the outbox).
source "$(dirname "$0")/lib.sh"
lab_setup

md=$work/Maildir
mkdir -p "$md"/{new,cur,tmp}
cat >"$work/printkbot.conf" <<EOC
[daemon]
from = printkbot <bot@example.org>
reply_on = always
series_wait = 600
outbox = $work/outbox
lease = 15
worker_poll = 1

[smtp]
url = smtp://127.0.0.1:9

[source local]
type = maildir
start = all
path = $md
list = list@example.org
EOC

n=0
for fix in level-change text-change pure-conversion; do
	n=$((n + 1))
	{
		echo "From: Jane Dev <jane@example.org>"
		echo "To: list@example.org"
		sed -n 's/^Subject: /Subject: /p' "$src/tests/data/test/$fix.patch"
		echo "Message-ID: <w$n@example.org>"
		echo "Date: Tue, 1 Dec 2026 10:00:0$n +0000"
		echo
		sed -n '/^$/,$p' "$src/tests/data/test/$fix.patch" | tail -n +2
	} >"$md/tmp/$n.mail"
	mv "$md/tmp/$n.mail" "$md/new/100$n.mail"
done

q() { sqlite3 "$PRINTKBOT_DB" "$1"; }
descendants() {  # pid: every process below it
	local c
	for c in $(ps -o pid= --ppid "$1"); do echo "$c"; descendants "$c"; done
}
has_make() { descendants "$1" | xargs -r ps -o comm= -p 2>/dev/null | grep -q '^make$'; }
building() {  # a worker with a make below it: its index in pids
	local i
	for i in 0 1 2; do
		[ -n "${pids[i]}" ] && has_make "${pids[i]}" && { echo "$i"; return 0; }
	done
	return 1
}

$bot daemon --config "$work/printkbot.conf" --queue-only 2>"$work/intake.log" &
intake=$!
wait_for 30 "the intake started" grep -q "started (intake only)" "$work/intake.log"
queued3() { test "$(q "select count(*) from jobs where kind = 'series'" 2>/dev/null)" = 3; }
wait_for 60 "the intake queued the three series" queued3
ok "intake: three series queued, none run by it"

pids=()
for i in 0 1 2; do
	$bot worker --config "$work/printkbot.conf" 2>"$work/worker$i.log" &
	pids[i]=$!
done
wait_for 600 "a worker building" building >/dev/null
k=$(building)
victim=${pids[k]}
job=$(q "select id from jobs where state = 'running' and kind = 'series' and worker like '%:$victim'")
[ -n "$job" ] || fail "the building worker $victim holds no series job" "$work/worker$k.log"
orphans=$(descendants "$victim")
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
for p in $orphans; do kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true; done
t_kill=$(date +%s)
pids[k]=
ok "kill -9 of worker $victim in the middle of job $job's build"
check "its job is still running, under its lease" test "$(q "select state from jobs where id = $job")" = running

alldone() { test "$(q "select count(*) from jobs where kind = 'series' and state = 'done'" 2>/dev/null)" = 3; }
wait_for 1500 "every series job done" alldone
t_take=$(q "select updated from jobs where id = $job and state = 'done'")
cat "$work"/worker*.log >"$work/workers.log"
check "the killed worker's job was taken over after its lease ended" \
	grep -q "job $job: its worker's lease ended: queued again" "$work/workers.log"
check "and run in two attempts" test "$(q "select attempts from jobs where id = $job")" = 2
check "no other job was taken from a live worker" \
	test "$(q "select count(*) from jobs where kind = 'series' and attempts > 1")" = 1
none_lost() { ! grep -q "lease was lost" "$work/workers.log"; }
check "no result refused (no live worker lost its lease)" none_lost
check "exactly one reply per patch" \
	test "$(q "select count(*) || '/' || count(distinct mail_id) from replies")" = 3/3
check "each reply waits in the queue (SMTP is down), one job each" \
	test "$(q "select count(*) from jobs where kind = 'reply' and state = 'queued'")" = 3
check "and is one file in the outbox's new/" test "$(ls "$work/outbox/new" | wc -l)" = 3
echo "killed at $t_kill, its job done at $t_take"
kill -TERM "$intake" "${pids[@]}" 2>/dev/null || true
wait || true
checks_end "$work/intake.log" "$work/workers.log"
passed
