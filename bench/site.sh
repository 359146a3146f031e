#!/usr/bin/env bash
# The static site at scale: fill a store with PATCHES reviewed patches of
# CHANGES stored changes each (default 100,000 x 10) through the store's
# API, with the review models `test` keeps (bench/store-fill.c "models"),
# then time `printkbot report --site`:
#
#   full         into an empty directory: every page rendered and written
#   unchanged    again, nothing new in the store: no page rendered
#   new          after NEW more reviews (store-fill over its first NEW
#                patches again: each gets a second review), the pages of
#                those series and of the files they name
#   full again   --full over the written site: every page rendered, none
#                whose bytes did not change written
#
# Each line is the command's own summary (pages rendered and written)
# with its wall and CPU seconds and the load average, which says how
# busy the shared machine was; then the site's size.
# Usage: bench/site.sh [PATCHES] [CHANGES] [NEW]  (`make bench-site`); set
# PRINTKBOT_BENCH_DB=FILE to keep (or reuse) the filled database and
# PRINTKBOT_BENCH_SITE=DIR to keep the site.
set -euo pipefail
cd "$(dirname "$0")/.."
patches=${1:-100000}
changes=${2:-10}
new=${3:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=${PRINTKBOT_BENCH_DB:-$work/bench.db}
site=${PRINTKBOT_BENCH_SITE:-$work/site}

# the Makefile's own CC, CFLAGS and LDLIBS, read from it rather than copied
flag() { make -s --no-print-directory -f Makefile -f - "print-$1" <<<'print-%: ; @echo $($*)'; }
make -s bot/libprintkbot.a printkbot
$(flag CC) $(flag CFLAGS) -Ibot -o bench/store-fill bench/store-fill.c bot/libprintkbot.a $(flag LDLIBS)

if [ ! -s "$db" ]; then
	s=$(date +%s%N)
	bench/store-fill "$db" "$patches" "$changes" models
	echo "filled $patches patches in $(( ($(date +%s%N) - s) / 1000000000 )) s"
fi

# one run of report --site: its summary, wall and CPU seconds, the load average
run() {
	local what=$1 out
	shift
	out=$( { /usr/bin/time -f '%e %U %S' ./printkbot report --db "$db" --site "$site" "$@" >"$work/out"; } 2>&1 )
	read -r wall user sys <<<"$(tail -1 <<<"$out")"
	printf '%-12s %6.1f s wall %6.1f s cpu  load %s | %s\n' "$what" "$wall" \
		"$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$(cut -d' ' -f1 /proc/loadavg)" \
		"$(sed 's/^site [^:]*: //' "$work/out")"
}

echo "site bench: $(sqlite3 "$db" 'select count(*) from reviews') reviews," \
     "$(sqlite3 "$db" 'select count(*) from patches') patches in the store; load average $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$site"
run full
run unchanged
bench/store-fill "$db" "$new" "$changes" models 2>/dev/null
run "new $new"
run "full again" --full
echo "site: $(du -sh "$site" | cut -f1), $(find "$site" -type f | wc -l) files"
