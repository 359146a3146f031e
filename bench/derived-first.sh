#!/usr/bin/env bash
# A patch's first test on a new derived config, two printkbot builds side
# by side in one run: OLD (a commit before the change measured, built in
# a worktree of this repository) against this checkout, alternating OLD,
# NEW, OLD, NEW... ROUNDS times (default 2).  Each round removes the
# derived config's build dir, so that it starts again as a copy of the
# nearest one built (lab/derive.h), and tests the patch with a store of its
# own (no build found there).  What it measured first: the copy's tools/
# build (objtool) recorded the source dir's path, so that a build in the
# copy linked objtool again and compiled every object with it
# (lab/relocate.h); OLD=1d4e4ee is the commit before that fix.
#
# Run: OLD=REV bash bench/derived-first.sh    PATCH (default the ahci fixture:
#      CONFIG_ATA and CONFIG_SATA_AHCI derived)   ROUNDS=N
#      COLD_CCACHE=1: each test with an empty ccache of its own ([build]
#      ccache_dir), as for a config no build has made yet (a new config
#      changes autoconf.h, which every compile's hash covers); by default
#      the lab's ccache, which may hold the config's objects already
# Needs `printkbot setup` (the lab's base built).  Prints each round's
# seconds and the median ratio NEW / OLD.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${OLD:-}" ] || { echo "OLD=REV: the printkbot commit to measure against" >&2; exit 2; }
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
rounds=${ROUNDS:-2}
patch=$PWD/${PATCH:-tests/data/test/derived-driver.patch}
work=$(mktemp -d /var/tmp/derived-first.XXXXXX)
# the work dir (each test's log) stays when the bench fails
trap 'rc=$?; git worktree remove --force "$work/old" >/dev/null 2>&1 || true; [ $rc != 0 ] || rm -rf "$work"' EXIT

git worktree add -q --detach "$work/old" "$OLD"
make -s -C "$work/old" -j"$(nproc)" printkbot printkbot-core >"$work/old-make.log" 2>&1 ||
	{ echo "derived-first.sh: $OLD does not build: $work/old-make.log" >&2; exit 2; }
make -s -j"$(nproc)" printkbot printkbot-core

# The derived config's name, from a first test (not timed): its log says it.
PRINTKBOT_DB=$work/warm.db ./printkbot test "$patch" >/dev/null 2>"$work/warm.err" || true
derived=$(sed -n 's/.*testing on a config derived for the patch (\([0-9a-f]*\)).*/\1/p' "$work/warm.err" | head -1)
[ -n "$derived" ] || { echo "derived-first.sh: the patch was not tested on a derived config ($work/warm.err)" >&2; exit 2; }
ddir=$(ls -d "$cache/build/$derived"-[0-9]* 2>/dev/null | grep -E -- '-[0-9]+\.[0-9]+$' | head -1 || true)
[ -n "$ddir" ] && [ -d "$ddir" ] || { echo "derived-first.sh: no build dir of $derived after the first test" >&2; exit 2; }

now() { date +%s.%N; }
user_conf=${PRINTKBOT_CONFIG:-/etc/printkbot.conf}   # each round's config starts from it
: >"$work/rounds.tsv"
for r in $(seq "$rounds"); do
	for side in old new; do
		bot=./printkbot
		[ "$side" = old ] && bot=$work/old/printkbot
		rm -rf "$ddir" "$ddir.state" "$ddir.published-only"
		conf=$user_conf
		if [ "${COLD_CCACHE:-0}" = 1 ]; then
			# the user's config with its [build] group's ccache_dir replaced (a group given twice is refused)
			python3 - "$conf" "$work/ccache.$side.$r" >"$work/$side.$r.conf" <<'PY'
import configparser, os, sys
c = configparser.ConfigParser(interpolation=None)
c.optionxform = str
if os.path.exists(sys.argv[1]):
    c.read(sys.argv[1])
if not c.has_section("build"):
    c.add_section("build")
c.set("build", "ccache_dir", sys.argv[2])
c.write(sys.stdout)
PY
			conf=$work/$side.$r.conf
		fi
		t0=$(now)
		if [ -f "$conf" ]; then export PRINTKBOT_CONFIG=$conf; fi
		PRINTKBOT_DB=$work/$side.$r.db "$bot" test "$patch" >"$work/$side.$r.out" 2>"$work/$side.$r.err" || true
		t1=$(now)
		grep -q "starts as a copy of" "$work/$side.$r.err" ||
			{ echo "derived-first.sh: round $r ($side) did not start from a copy: $work/$side.$r.err" >&2; exit 1; }
		printf '%s\t%s\t%s\n' "$r" "$side" "$(echo "$t1 - $t0" | bc)" >>"$work/rounds.tsv"
	done
done

python3 - "$work/rounds.tsv" "$OLD" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
by = {}
for r, side, secs in rows:
    by.setdefault(r, {})[side] = float(secs)
print("round  %s s  new s  new/old" % sys.argv[2][:7])
ratios = []
for r in sorted(by, key=int):
    o, n = by[r]["old"], by[r]["new"]
    ratios.append(n / o)
    print("%5s  %9.1f  %5.1f  %6.2fx" % (r, o, n, n / o))
print("median new/old %.2fx (of %d alternating rounds)" % (statistics.median(ratios), len(ratios)))
PY
