#!/usr/bin/env bash
# The worker pool on this machine (doc/workers.md):
# 1. the claim latency of an empty queue: what an idle worker pays per ask
#    (bench/claim.c, 1000 claims), on SQLite and on PostgreSQL;
# 2. throughput with 1, 2 and 3 workers, each on its own lab: PATCHES
#    single-patch series (fixtures that build on the lab's config) are
#    queued by `printkbot daemon --queue-only`, then N `printkbot worker`s
#    run them; the time from the workers' start to the last job done.  A
#    round starts on an empty store, so its first job boots the base (the
#    noise mask is learnt once, shared through the store).  The rounds
#    run 1, 2, 3 workers, PASSES times over, side by side.  With 2 CPUs
#    expect at most 2x: two builds at once already fill them.
# STORE=pg runs both on a PostgreSQL the bench starts (tests/unit/pg-fixture.sh).
# WORKERS="1 2" runs only those rounds; KEEP=DIR keeps the last round's
# store and the logs there.
# The labs are kept in $PRINTKBOT_BENCH_LABS (default
# ~/.cache/printkbot-bench-labs, ~2.7 GB each) and warmed on the first run:
# lab 0's base is built cold, the other two from its objects in the labs'
# shared ccache ([build] ccache_dir), as a machine's workers would.
set -euo pipefail
cd "$(dirname "$0")/.."
labs=${PRINTKBOT_BENCH_LABS:-$HOME/.cache/printkbot-bench-labs}
passes=${PASSES:-1}
fixtures=(level-change text-change pure-conversion pr_fmt-added debug-compiled-out build-failure)
work=$(mktemp -d)
pgdir=
cleanup() {
	[ -z "$(jobs -pr)" ] || { kill $(jobs -pr) 2>/dev/null; wait 2>/dev/null; }
	[ -z "$pgdir" ] || bash tests/unit/pg-fixture.sh stop "$pgdir"
	[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp -r "$work"/*.log "$work"/round.db* "$KEEP"/ 2>/dev/null; }
	rm -rf "$work"
}
trap cleanup EXIT
make -s bot/libprintkbot.a printkbot printkbot-core
flag() { make -s --no-print-directory -f Makefile -f - "print-$1" <<<'print-%: ; @echo $($*)'; }
$(flag CC) $(flag CFLAGS) -Ibot -o "$work/claim" bench/claim.c bot/libprintkbot.a $(flag LDLIBS)

# a fresh store for a round: a SQLite file, or a new database on the bench's PostgreSQL
round_store() {
	if [ "${STORE:-sqlite}" = pg ]; then
		psql -X -q -d "$pg_url" -c "DROP DATABASE IF EXISTS round" -c \
			"CREATE DATABASE round ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
		sed 's,/postgres?,/round?,' <<<"$pg_url"
	else
		rm -f "$work/round.db"*
		echo "$work/round.db"
	fi
}
q() {
	if [ "${STORE:-sqlite}" = pg ]; then psql -X -q -t -A -d "$1" -c "$2"; else sqlite3 "$1" "$2"; fi
}
if [ "${STORE:-sqlite}" = pg ]; then
	pgdir=$(mktemp -u "${TMPDIR:-/tmp}/printkbot-pg.XXXXXX")
	pg_url=$(bash tests/unit/pg-fixture.sh start "$pgdir")
fi

# --- 1. claim latency ---
echo "claim latency (bench/claim.c):"
printf '  SQLite:     '; "$work/claim" "$work/claim.db" 1000
if [ -n "$pgdir" ] || command -v /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	d=$(mktemp -u "${TMPDIR:-/tmp}/printkbot-pg.XXXXXX")
	printf '  PostgreSQL: '; "$work/claim" "$(bash tests/unit/pg-fixture.sh start "$d")" 1000
	bash tests/unit/pg-fixture.sh stop "$d"
fi

# --- 2. throughput ---
build_conf="[build]
ccache_dir = $labs/ccache"
echo "$build_conf" >"$work/warm.conf"
for i in 0 1 2; do
	if [ ! -e "$labs/lab$i/warm" ]; then
		echo "warming lab $i (setup and a base build: once)" >&2
		t0=$(date +%s)
		PRINTKBOT_CACHE=$labs/lab$i ./printkbot setup >/dev/null
		PRINTKBOT_CACHE=$labs/lab$i PRINTKBOT_DB=$work/warm.db ./printkbot test --config "$work/warm.conf" \
			tests/data/test/level-change.patch >/dev/null 2>&1 || true
		echo "  lab $i warmed in $(($(date +%s) - t0)) s" >&2
		touch "$labs/lab$i/warm"
	fi
done
mkdir -p "$work/md"
run_round() {  # N workers: prints the seconds from their start to the last job done
	local n=$1 db pids=() i k=0 s
	db=$(round_store)
	rm -rf "$work/md" && mkdir -p "$work/md"/{new,cur,tmp}
	cat >"$work/bench.conf" <<EOC
$build_conf
[store]
$([ "${STORE:-sqlite}" = pg ] && echo "url = $db" || echo "path = $db")
[daemon]
reply_on = never
series_wait = 600
worker_poll = 1
[source local]
type = maildir
start = all
path = $work/md
list = list@example.org
EOC
	for f in "${fixtures[@]}"; do
		k=$((k + 1))
		{
			echo "From: Jane Dev <jane@example.org>"
			echo "To: list@example.org"
			sed -n 's/^Subject: /Subject: /p' "tests/data/test/$f.patch"
			echo "Message-ID: <bench$k@example.org>"
			echo "Date: Tue, 1 Dec 2026 10:00:0$k +0000"
			echo
			sed -n '/^$/,$p' "tests/data/test/$f.patch" | tail -n +2
		} >"$work/md/new/$k.mail"
	done
	./printkbot daemon --config "$work/bench.conf" --queue-only 2>"$work/intake.log" &
	local intake=$!
	# every mail queued or skipped; a round's patches are its queued ones
	until [ "$(q "$db" "select count(*) from mails where state != 'pending'" 2>/dev/null)" = "$k" ]; do sleep 0.5; done
	kill "$intake"; wait "$intake" 2>/dev/null || true
	k=$(q "$db" "select count(*) from jobs where kind = 'series'")
	[ "$k" = "${#fixtures[@]}" ] || echo "  (round of $n: $k of ${#fixtures[@]} patches queued; see $work/intake.log)" >&2
	s=$(date +%s.%N)
	for ((i = 0; i < n; i++)); do
		PRINTKBOT_CACHE=$labs/lab$i ./printkbot worker --config "$work/bench.conf" 2>"$work/worker$i.log" &
		pids+=($!)
	done
	until [ "$(q "$db" "select count(*) from jobs where kind = 'series' and state in ('done', 'failed')")" = "$k" ]; do
		sleep 1
	done
	echo "$(date +%s.%N) - $s" | bc
	kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
	[ "$(q "$db" "select count(*) from jobs where kind = 'series' and state = 'done'")" = "$k" ] ||
		echo "  (round of $n: a job failed; see its worker's log)" >&2
}
echo "throughput, ${#fixtures[@]} patches a round, store ${STORE:-sqlite}, load $(cut -d' ' -f1-3 /proc/loadavg):"
declare -A total
for ((p = 1; p <= passes; p++)); do
	for n in ${WORKERS:-1 2 3}; do
		t=$(run_round "$n")
		total[$n]=$(echo "${total[$n]:-0} + $t" | bc)
		printf '  pass %d, %d worker%s: %.0f s, %.1f patches a minute\n' "$p" "$n" "$([ "$n" = 1 ] || echo s)" \
			"$t" "$(echo "${#fixtures[@]} * 60 / $t" | bc -l)"
	done
done
for n in ${WORKERS:-1 2 3}; do
	[ "$n" != 1 ] && [ -n "${total[1]:-}" ] || continue
	printf '%d workers against 1: %.2fx\n' "$n" "$(echo "${total[1]} / ${total[$n]}" | bc -l)"
done
