#!/usr/bin/env bash
# Per patch, side by side in one run: `printkbot test` of a one-file
# patch on a warm base (the base's build and boots already in the store)
# against the bare work of the same change: `git apply`, the make command
# line the bot runs (its CC and KCPPFLAGS as the build dir's .cmd files
# record them, so that Kbuild rebuilds the same one file and relinks,
# nothing more) and one boot with the bot's QEMU line.  The bare side
# builds in a copy of the base's build dir beside it (its own, as root:
# the bot's stays its build user's), with no sandbox: what the bot adds
# is counted against it.
# Alternating bare, bot, bare, bot... ROUNDS times (default 3), each side
# starting from the base's build.  Prints each round, the median ratio,
# and the bot's time per stage (PRINTKBOT_PROFILE) beside the bare side's
# apply, make and boot, medians of the rounds.
#
# Needs `printkbot setup` (the lab's base built).  PATCH (default the
# e820 text change of tests/data/test) picks the patch.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
tree=$cache/linux
rounds=${ROUNDS:-3}
patch=$PWD/${PATCH:-tests/data/test/text-change.patch}
work=$(mktemp -d)
trap 'rm -rf "$work" "$cache/paired-build"; git -C "$tree" checkout -q -f --detach printkbot-base' EXIT
export PRINTKBOT_DB=$work/bench.db

# The lab config's build dir of the base's version (lab.h: HASH-MAJOR.MINOR).
version=$(awk '/^VERSION =/ { v = $3 } /^PATCHLEVEL =/ { p = $3 } END { print v "." p }' "$tree/Makefile")
lab_bdir=$cache/build/$(sha256sum qemu/kernel.config | cut -c1-12)-$version
[ -f "$lab_bdir/vmlinux" ] || { echo "paired.sh: no built base in $lab_bdir: run printkbot setup" >&2; exit 2; }

# Warm: the base built, booted (its noise boots) and stored once; not timed.
./printkbot test tests/data/test/pure-conversion.patch >/dev/null 2>&1 || true

# The bare side's build dir: a copy of the base's, on the same disk.
bdir=$cache/paired-build
rm -rf "$bdir"
cp -a "$lab_bdir" "$bdir"

# The bot's make line, as the build dir's .cmd files have it.
cmd=$bdir/init/.main.o.cmd
cc=$(sed -n '1s/^savedcmd_init\/main.o := \(.*\) -Wp,-MMD.*/\1/p' "$cmd")
map=$(grep -o -- '-fmacro-prefix-map=[^ ]*' "$cmd" | tail -1)   # kbuild's own comes first, then KCPPFLAGS'
[ -n "$cc" ] || { echo "paired.sh: no compiler in $cmd" >&2; exit 2; }
bare_make() {
	# build.c's BUILD_ENV; the ccache the bot reads is not written for an unpublished change
	env -i PATH="$PATH" HOME=/nonexistent LC_ALL=C LOCALVERSION= \
		KBUILD_BUILD_TIMESTAMP='2024-01-01 00:00:00 UTC' KBUILD_BUILD_USER=printkbot \
		KBUILD_BUILD_HOST=printkbot KBUILD_BUILD_VERSION=1 KCPPFLAGS="$map" \
		CCACHE_DIR="$cache/ccache" CCACHE_READONLY=1 \
		make -s -j"$(nproc)" -C "$tree" O="$bdir" CC="$cc" vmlinux >/dev/null
}
bare_qemu() {   # boot.c's line: the records on the second serial port
	timeout 120 qemu-system-x86_64 -accel tcg,thread=single -cpu qemu64 -machine q35 -m 256 -smp 2 \
		-nodefaults -no-user-config -display none -no-reboot -nic none -kernel "$bdir/vmlinux" \
		-initrd "$cache/guest/initrd.cpio" -append "console=ttyS0 ignore_loglevel panic=-1 sched_verbose" \
		-serial file:"$work/console" -serial file:"$work/capture" >/dev/null 2>&1
}
reset_base() { git -C "$tree" checkout -q -f --detach printkbot-base; bare_make; }
now() { date +%s.%N; }

: >"$work/rounds.tsv"
for r in $(seq "$rounds"); do
	reset_base
	t0=$(now); git -C "$tree" apply "$patch"
	t1=$(now); bare_make
	t2=$(now); bare_qemu
	t3=$(now)
	grep -q . "$work/capture" || { echo "paired.sh: the bare boot captured nothing" >&2; exit 1; }
	reset_base
	t4=$(now)
	PRINTKBOT_PROFILE=$work/profile.$r ./printkbot test "$patch" >/dev/null 2>&1 || true
	t5=$(now)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$t0" "$t1" "$t2" "$t3" "$t4" "$t5" >>"$work/rounds.tsv"
done

python3 - "$work" "$rounds" <<'PY'
import statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
rows = [l.split("\t") for l in open(work + "/rounds.tsv").read().split("\n") if l]
bare = {"apply": [], "make": [], "boot": []}
ratios, stages = [], {}
print("round  bare s  printkbot s  ratio")
for r in rows:
    t = [float(x) for x in r[1:]]
    b, p = t[3] - t[0], t[5] - t[4]
    bare["apply"].append(t[1] - t[0]); bare["make"].append(t[2] - t[1]); bare["boot"].append(t[3] - t[2])
    ratios.append(p / b)
    print("%5s  %6.1f  %11.1f  %5.2fx" % (r[0], b, p, p / b))
    for line in open("%s/profile.%s" % (work, r[0])):
        name, count, secs = line.rstrip("\n").split("\t")
        stages.setdefault(name, []).append(float(secs))
print("median ratio %.2fx (of %d alternating rounds)" % (statistics.median(ratios), rounds))
med = {k: statistics.median(v) for k, v in stages.items()}
total = med.pop("total", 0)
print("\nprintkbot stage   median s   bare side")
pair = {"apply": "apply", "make": "make", "boot": "boot"}
for name in sorted(med, key=lambda k: -med[k]):
    other = "%.2f" % statistics.median(bare[pair[name]]) if name in pair else ""
    print("%-16s  %8.2f   %s" % (name, med[name], other))
print("%-16s  %8.2f" % ("(the rest)", total - sum(med.values())))
print("%-16s  %8.2f   %.2f" % ("total", total, sum(statistics.median(v) for v in bare.values())))
PY
