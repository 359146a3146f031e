#!/usr/bin/env bash
# `printkbot scan` against the tree's scripts/checkpatch.pl, in one run:
#  - the corpus patches (../shared/corpus/patches): checkpatch.pl limited to
#    its printk warning types (--types) against scan, both one process per
#    patch and both one process for all of them;
#  - scan's throughput on the 1,500-mail linux-serial mbox (decompressed to
#    a temporary file first, so xz is not timed), plain and with --tree.
# Each figure is the best of $BENCH_RUNS runs (default 5), as wall-clock
# seconds and as CPU seconds (user + system of the processes run).  The
# CPU figures are what to compare on a loaded machine: short processes
# wait for a CPU far longer, proportionally, than long ones.
# Targets: the mbox in under 2 s; scan at least 100x faster per patch than
# checkpatch.pl.  Standalone: bash bench/scan.sh (builds ./printkbot if
# missing); CHECKPATCH=path picks another checkpatch.pl; BENCH_BASELINE=path
# measures another printkbot binary (an older build) in the same run, for
# before/after figures side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
checkpatch=${CHECKPATCH:-$cache/linux/scripts/checkpatch.pl}
corpus=../shared/corpus
runs=${BENCH_RUNS:-5}
types=PRINTK_WITHOUT_KERN_LEVEL,LOGGING_CONTINUATION,SPLIT_STRING,EMBEDDED_FUNCTION_NAME,QUOTED_WHITESPACE_BEFORE_NEWLINE,PREFER_PR_LEVEL
bot=./printkbot
[ -x "$bot" ] || make -s printkbot
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
patches=("$corpus"/patches/*.patch)
n=${#patches[@]}

# "wall cpu": the best of $runs runs, in seconds of wall clock and of CPU
# (user + system of the processes run).  Output and exit status are
# dropped: both tools exit non-zero on findings.  Each process is started
# straight from here (no shell between), so that the CPU counted is the
# tool's own: a shell loop added ~0.4 ms of bash forking to every patch,
# a third of a scan.
#   measure CMD...                       one process
#   measure_each MODE CMD... -- PATCH... one process per patch (MODE arg:
#                                        the patch is the last argument;
#                                        stdin: it is standard input)
measure() { measure_each once "$@" --; }
measure_each() {
	python3 - "$runs" "$@" <<'PY'
import resource, subprocess, sys, time
runs, mode, rest = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
cut = rest.index('--')
cmd, patches = rest[:cut], rest[cut + 1:]
quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = cpu = None
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    if mode == 'once':
        subprocess.run(cmd, **quiet)
    for p in patches:
        if mode == 'stdin':
            with open(p, 'rb') as f:
                subprocess.run(cmd, stdin=f, **quiet)
        else:
            subprocess.run(cmd + [p], **quiet)
    w = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    c = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    wall = w if wall is None else min(wall, w)
    cpu = c if cpu is None else min(cpu, c)
print('%.4f %.4f' % (wall, cpu))
PY
}
row() {  # label patches "wall cpu"
	local wall cpu
	read -r wall cpu <<<"$3"
	printf '%-46s %7s %8.3f %8.3f %10.3f\n' "$1" "$2" "$wall" "$cpu" "$(echo "$cpu * 1000 / $2" | bc -l)"
}
ratio() { echo "scale=1; $1 / $2" | bc; }

xz -dc "$corpus/linux-serial-1500.mbox.xz" > "$work/serial.mbox"
mbox_patches=$("$bot" scan --json "$work/serial.mbox" 2>/dev/null | wc -l || true)
scan_each=$(measure_each arg "$bot" scan -- "${patches[@]}")
scan_all=$(measure "$bot" scan "${patches[@]}")
mbox=$(measure "$bot" scan --json "$work/serial.mbox")
base=${BENCH_BASELINE:-}
if [ -n "$base" ]; then
	base_each=$(measure_each arg "$base" scan -- "${patches[@]}")
	base_all=$(measure "$base" scan "${patches[@]}")
	base_mbox=$(measure "$base" scan --json "$work/serial.mbox")
fi
mbox_tree=
[ ! -d "$cache/linux/scripts" ] || mbox_tree=$(measure "$bot" scan --json --tree "$cache/linux" "$work/serial.mbox")
have_cp=
if [ -f "$checkpatch" ] && command -v perl >/dev/null; then
	have_cp=1
	# checkpatch.pl reads one patch from standard input per process
	cp_each=$(measure_each stdin perl "$checkpatch" --no-tree --terse --types "$types" - -- "${patches[@]}")
	cp_all=$(measure perl "$checkpatch" --no-tree --terse --types "$types" "${patches[@]}")
fi

printf '%-46s %7s %8s %8s %10s\n' "what" "patches" "wall s" "cpu s" "cpu ms/patch"
if [ -n "$have_cp" ]; then
	row "checkpatch.pl --types (printk), per patch" "$n" "$cp_each"
	row "checkpatch.pl --types (printk), one process" "$n" "$cp_all"
else
	echo "(no $checkpatch or no perl: run printkbot setup; checkpatch.pl rows skipped)"
fi
row "printkbot scan, per patch" "$n" "$scan_each"
row "printkbot scan, one process" "$n" "$scan_all"
row "printkbot scan --json, linux-serial mbox" "$mbox_patches" "$mbox"
[ -z "$mbox_tree" ] || row "printkbot scan --json --tree, linux-serial mbox" "$mbox_patches" "$mbox_tree"
if [ -n "$base" ]; then
	row "baseline scan, per patch" "$n" "$base_each"
	row "baseline scan, one process" "$n" "$base_all"
	row "baseline scan --json, linux-serial mbox" "$mbox_patches" "$base_mbox"
fi
echo
read -r mbox_wall mbox_cpu <<<"$mbox"
if [ -n "$have_cp" ]; then
	read -r cpe_w cpe_c <<<"$cp_each"; read -r cpa_w cpa_c <<<"$cp_all"
	read -r se_w se_c <<<"$scan_each"; read -r sa_w sa_c <<<"$scan_all"
	mbox_pp=$(echo "$mbox_cpu / $mbox_patches" | bc -l)
	printf '%-58s %8s %8s\n' "checkpatch.pl / scan, per patch" "wall" "cpu"
	printf '%-58s %7sx %7sx\n' "  a process each" "$(ratio "$cpe_w" "$se_w")" "$(ratio "$cpe_c" "$se_c")"
	printf '%-58s %7sx %7sx\n' "  one process for the $n patches" "$(ratio "$cpa_w" "$sa_w")" "$(ratio "$cpa_c" "$sa_c")"
	if [ -n "$base" ]; then
		read -r be_w be_c <<<"$base_each"; read -r ba_w ba_c <<<"$base_all"
		printf '%-58s %7sx %7sx\n' "  baseline, a process each" "$(ratio "$cpe_w" "$be_w")" "$(ratio "$cpe_c" "$be_c")"
		printf '%-58s %7sx %7sx\n' "  baseline, one process for the $n patches" "$(ratio "$cpa_w" "$ba_w")" \
			"$(ratio "$cpa_c" "$ba_c")"
	fi
	printf '%-58s %8s %7sx\n' "  checkpatch.pl one process vs scan's mbox rate" "" \
		"$(ratio "$(echo "$cpa_c / $n" | bc -l)" "$mbox_pp")"
	printf '%-58s %8s %7sx\n' "  checkpatch.pl a process each vs scan's mbox rate" "" \
		"$(ratio "$(echo "$cpe_c / $n" | bc -l)" "$mbox_pp")"
	echo "(scan's own start-up, about 1 ms of starting a process with GLib and GMime, is"
	echo " most of a one-patch run; in one process a patch costs it well under a millisecond)"
fi
printf 'mbox: 1,500 mails, %s patches in %.2f s wall, %.2f s cpu (target: under 2 s)\n' \
	"$mbox_patches" "$mbox_wall" "$mbox_cpu"
