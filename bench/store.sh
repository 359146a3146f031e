#!/usr/bin/env bash
# The store at scale: fill a database with PATCHES patches of CHANGES
# stored changes each (default 10,000 x 10 = 100,000) through the store's
# API (bench/store-fill.c, built here with the Makefile's flags), then time
# the typical history queries, and report the database size per stored
# patch.  Target: every query under 50 ms.
#
# Each query is timed, best of five: the query alone in one process
# (pk_store_history(), what the target is about), as wall and as CPU time,
# and the whole command with its table and with --json (process start,
# open, output).  The target is checked on the query's CPU time, which
# other work on a shared machine does not inflate; the load average is
# printed so that wall times can be read.
# Usage: bench/store.sh [PATCHES] [CHANGES]  (`make bench-store`); set
# PRINTKBOT_BENCH_DB=FILE to keep (or reuse) the filled database.
set -euo pipefail
cd "$(dirname "$0")/.."
patches=${1:-10000}
changes=${2:-10}
target_ms=50
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=${PRINTKBOT_BENCH_DB:-$work/bench.db}

# the Makefile's own CC, CFLAGS and LDLIBS, read from it rather than copied
flag() { make -s --no-print-directory -f Makefile -f - "print-$1" <<<'print-%: ; @echo $($*)'; }
make -s bot/libprintkbot.a printkbot
$(flag CC) $(flag CFLAGS) -Ibot -o bench/store-fill bench/store-fill.c bot/libprintkbot.a $(flag LDLIBS)

fill_ms=0
if [ ! -s "$db" ]; then
	s=$(date +%s%N)
	bench/store-fill "$db" "$patches" "$changes"
	fill_ms=$(( ($(date +%s%N) - s) / 1000000 ))
fi

# best of five runs of a command, in ms
best() {
	local b=999999
	for _ in 1 2 3 4 5; do
		local s=$(date +%s%N)
		"$@" >/dev/null
		local ms=$(( ($(date +%s%N) - s) / 1000000 ))
		(( ms < b )) && b=$ms
	done
	echo "$b"
}

query() {
	local wall cpu rows table json verdict=ok
	read -r wall cpu rows < <(bench/store-fill --query "$db" "$@")
	table=$(best ./printkbot history --db "$db" "$@")
	json=$(best ./printkbot history --db "$db" --json "$@")
	awk -v q="$cpu" -v t="$target_ms" 'BEGIN { exit !(q < t) }' || verdict=SLOW
	printf '  %-52s %5.1f ms cpu %5.1f ms wall %5d rows | command: %3d ms table, %3d ms json  %s\n' \
		"history $*" "$cpu" "$wall" "$rows" "$table" "$json" "$verdict"
	[ "$verdict" = ok ]
}

n=$(bench/store-fill --query "$db" | cut -d' ' -f3)
size=$(stat -c %s "$db")
echo "store bench: $patches patches, $n stored changes, filled in $fill_ms ms; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  database: $size bytes, $(( size / patches )) bytes per stored patch" \
     "(patch, findings, build, boot with console/records/index, test, changes, review)"
echo "  process start alone: $(best ./printkbot --version) ms"
slow=0
query --file kernel/sched/topology.c || slow=1
query --grep 'scheduling while atomic' || slow=1
query --author 'Author Number42' || slow=1
query --since 2026-01-01 --verdict console-changed || slow=1
query --func function_77 --stage boot || slow=1
query --message-id 20260101.4242.bench@example.org || slow=1
./printkbot db check --db "$db" | tail -1
exit $slow
