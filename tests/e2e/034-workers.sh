#!/usr/bin/env bash
# End to end: one intake and three workers on one PostgreSQL store, each
# worker with its own kernel lab, real kernels.  PostgreSQL is started by
# the test (tests/unit/pg-fixture.sh: its own data dir, a Unix socket in
# it, no TCP).  Three single-patch series are delivered into a Maildir
# that `printkbot daemon --queue-only` reads ([store] url); three
# `printkbot worker`s, each on its own $PRINTKBOT_CACHE (set up here),
# claim the jobs with FOR UPDATE SKIP LOCKED.  They share one [build]
# ccache_dir: lab 0's base is built first, cold, and the other two labs
# build theirs from its objects when their worker takes a job.  The
# worker building first is killed (kill -9) with its make; another
# worker building is stopped (SIGSTOP): it stalls without dying.
# Both jobs stay running under their leases (15 s), the live worker takes
# them over only once the leases ended; the stalled worker, let go on
# again, finds its lease lost and its late result is refused.  At the end
# every series job is done, the two taken over in two attempts, and there
# is exactly one reply per patch (SMTP is down: each waits in the queue
# and is one file of the outbox).
source "$(dirname "$0")/lib.sh"

# not under $work: the server runs as nobody (as root), who cannot enter $work
pgdir=$(mktemp -u "${TMPDIR:-/tmp}/printkbot-pg.XXXXXX")
url=$(bash tests/unit/pg-fixture.sh start "$pgdir") || {
	[ $? -eq 77 ] && skip "no PostgreSQL (Debian's postgresql)"
	fail "PostgreSQL did not start" "$pgdir/server.log"
}
at_exit bash tests/unit/pg-fixture.sh stop "$pgdir"
unset PRINTKBOT_DB   # the store is the configuration's url

md=$work/Maildir
mkdir -p "$md"/{new,cur,tmp}
cat >"$work/printkbot.conf" <<EOC
[store]
url = $url

[daemon]
from = printkbot <bot@example.org>
reply_on = always
series_wait = 600
outbox = $work/outbox
lease = 15
worker_poll = 1

[smtp]
url = smtp://127.0.0.1:9

[build]
ccache_dir = $work/ccache

[source local]
type = maildir
start = all
path = $md
list = list@example.org
EOC

n=0
for fix in level-change text-change pure-conversion; do
	n=$((n + 1))
	patch_mail "$fix" "w$n@example.org" "Tue, 1 Dec 2026 10:00:0$n +0000" "$md" "100$n.mail"
done

# three labs: each its own tree (set up from Debian's source) and build dir, at once
setups=()
for i in 0 1 2; do
	PRINTKBOT_CACHE=$work/lab$i "$bot" setup >"$work/setup$i.log" 2>&1 &
	setups[i]=$!
done
for i in 0 1 2; do
	wait "${setups[i]}" || fail "setting up lab $i" "$work/setup$i.log"
done
ok "three labs set up"

cstat() { CCACHE_DIR=$work/ccache ccache --print-stats | awk -v k="$1" '$1 == k { print $2 }'; }
PRINTKBOT_CACHE=$work/lab0 "$bot" boot --config "$work/printkbot.conf" >"$work/base0.log" 2>&1 ||
	fail "building and booting lab 0's base" "$work/base0.log"
misses0=$(cstat cache_miss)
[ "${misses0:-0}" -ge 500 ] || fail "lab 0's cold base build wrote ${misses0:-no} objects into the shared ccache" "$work/base0.log"
ok "lab 0's base built cold: $misses0 objects into the shared ccache"

q() { psql -X -q -t -A -d "$url" -c "$1"; }
descendants() {  # pid: every process below it
	local c
	for c in $(ps -o pid= --ppid "$1"); do echo "$c"; descendants "$c"; done
}
has_make() { descendants "$1" | xargs -r ps -o comm= -p 2>/dev/null | grep -q '^make$'; }
building() {  # a live worker with a make below it, not $1: its index in pids
	local i
	for i in 0 1 2; do
		[ -n "${pids[i]}" ] && [ "$i" != "${1:-}" ] && has_make "${pids[i]}" && { echo "$i"; return 0; }
	done
	return 1
}
job_of() { q "select id from jobs where state = 'running' and kind = 'series' and worker like '%:$1'"; }

$bot daemon --config "$work/printkbot.conf" --queue-only 2>"$work/intake.log" &
intake=$!
wait_for 30 "the intake started" grep -q "started (intake only)" "$work/intake.log"
queued3() { test "$(q "select count(*) from jobs where kind = 'series'" 2>/dev/null)" = 3; }
wait_for 60 "the intake queued the three series" queued3
ok "intake: three series queued on PostgreSQL, none run by it"
check "a second intake on the same store is refused" \
	sh -c "! timeout 60 '$bot' daemon --config '$work/printkbot.conf' --queue-only 2>'$work/intake2.log' &&
		grep -q \"another printkbot daemon's intake uses\" '$work/intake2.log'"

pids=()
for i in 0 1 2; do
	PRINTKBOT_CACHE=$work/lab$i $bot worker --config "$work/printkbot.conf" 2>"$work/worker$i.log" &
	pids[i]=$!
done

# kill -9 the first worker seen building, with its make
wait_for 900 "a worker building" building >/dev/null
k=$(building)
victim=${pids[k]}
job=$(job_of "$victim")
[ -n "$job" ] || fail "the building worker $victim holds no series job" "$work/worker$k.log"
orphans=$(descendants "$victim")
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
for p in $orphans; do kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true; done
pids[k]=
ok "kill -9 of worker $victim in the middle of job $job's build"
check "its job is still running, under its lease" test "$(q "select state from jobs where id = $job")" = running

# stop another building worker: it stalls, alive, and renews nothing
wait_for 900 "another worker building" building "$k" >/dev/null
s=$(building "$k")
stalled=${pids[s]}
sjob=$(job_of "$stalled")
[ -n "$sjob" ] || fail "the building worker $stalled holds no series job" "$work/worker$s.log"
kill -STOP "$stalled"
ok "worker $stalled stalls (SIGSTOP) in the middle of job $sjob"
requeued() { grep -q "job $sjob: its worker's lease ended: queued again" "$work"/worker*.log; }
wait_for 900 "the stalled worker's job taken over" requeued
kill -CONT "$stalled"

alldone() { test "$(q "select count(*) from jobs where kind = 'series' and state = 'done'" 2>/dev/null)" = 3; }
wait_for 1800 "every series job done" alldone
lost() { grep -q "the lease was lost" "$work/worker$s.log"; }
poll 600 lost || true
kill -TERM "$intake" "${pids[@]}" 2>/dev/null || true
wait || true
cat "$work"/worker*.log >"$work/workers.log"
check "the killed worker's job was taken over after its lease ended" \
	grep -q "job $job: its worker's lease ended: queued again" "$work/workers.log"
check "both jobs taken over ran in two attempts" \
	test "$(q "select string_agg(attempts::text, ',' order by id) from jobs where id in ($job, $sjob)")" = 2,2
check "no other job was taken from a live worker" \
	test "$(q "select count(*) from jobs where kind = 'series' and attempts > 1")" = 2
check "the stalled worker's late result was refused (its lease was lost)" lost
check "exactly one reply per patch" \
	test "$(q "select count(*) || '/' || count(distinct mail_id) from replies")" = 3/3
check "each reply waits in the queue (SMTP is down), one job each" \
	test "$(q "select count(*) from jobs where kind = 'reply' and state = 'queued'")" = 3
check "and is one file in the outbox's new/" test "$(ls "$work/outbox/new" | wc -l)" = 3
hits=$(( $(cstat direct_cache_hit) + $(cstat preprocessed_cache_hit) ))
again=$(( $(cstat cache_miss) - misses0 ))
check "the other labs' bases came from lab 0's objects ($hits from the ccache, $again compiled again)" \
	test "$hits" -ge $((misses0 / 2)) -a "$again" -le $((misses0 / 20))
checks_end "$work/intake.log" "$work/workers.log"
passed
