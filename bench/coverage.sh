#!/usr/bin/env bash
# What the bot compiles of real patches, and what a config derived per
# patch costs (doc/coverage.md, "A config per patch").  Needs `printkbot setup` and
# ../shared/corpus.
#
# 1. The coverage table: every mail of the linux-serial corpus whose diff
#    touches a printk-family line (scan finds churn), and the corpus
#    patches/, tested on the lab's base: per touched file its state
#    (booted, built, not-built and why) and the patch's verdict, then the
#    totals.  Target: every touched C file x86_64 can compile is compiled.
# 2. With COST=1 (TABLE=0 skips the table), side by side in one run (the machine's load swings):
#    - the first patch that needs a new derived config (its build dir
#      removed first: copy of the lab's, incremental build, the base boots)
#      against one cold build of the lab's own config, as setup makes it
#      on a new machine (ccache off);
#    - a second patch on that config (the before side from the store)
#      against bare `git apply` + `make` in the same build dir + one QEMU
#      boot, alternating bot, bare, bot, bare.  Target: within 1.3x.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
tree=$cache/linux
corpus=../shared/corpus
data=tests/data/test
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PRINTKBOT_DB=$work/coverage.db
# every derived config of the table kept (about 150 MB each): pruning them
# between patches would make later patches on the same drivers build again;
# the lab's base only (a lab with the 6.1 base too would test there what
# does not apply to 6.12: the table is of the base)
printf '[test]\nbases = printkbot-base\nderived_builds = 40\n' >"$work/bench.conf"
export PRINTKBOT_CONFIG=$work/bench.conf
[ -x ./printkbot ] || make -s printkbot printkbot-core
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }

# --- 1. the table (TABLE=0: the cost alone) ---
if [ "${TABLE:-1}" = 1 ]; then
xz -dc "$corpus/linux-serial-1500.mbox.xz" >"$work/serial.mbox"
mkdir -p "$work/p"
./printkbot scan --json "$work/serial.mbox" >"$work/scan.json" 2>/dev/null || true   # 1: findings
python3 -c '
import json, mailbox, sys
ids = [o["message_id"] for o in map(json.loads, open(sys.argv[3]))
       if o["message_id"] and o["verdict"] not in ("no-churn",)]
n = 0
for m in mailbox.mbox(sys.argv[1]):
    if (m["Message-ID"] or "").strip() in ids:
        n += 1
        open("%s/p/serial-%03d.mbox" % (sys.argv[2], n), "w").write(m.as_string(unixfrom=True))
' "$work/serial.mbox" "$work" "$work/scan.json"
cp "$corpus"/patches/*.patch "$work/p/"
total=$(ls "$work"/p | wc -l); i=0
for p in "$work"/p/*; do
	i=$((i + 1)); s=$(now)
	./printkbot test --json "$p" >"$p.json" 2>"$p.err" || true
	printf '[%d/%d] %s: %s (%.0f s)\n' "$i" "$total" "$(basename "$p")" \
		"$(sed -n 's/.*"verdict": *"\([a-z-]*\)".*/\1/p' "$p.json" | head -1)" "$(since "$s")" >&2
done
python3 - "$work/p" <<'PY'
import glob, json, os, sys
rows, verdicts = [], {}
for path in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        m = json.loads(line)
        verdicts[m["verdict"]] = verdicts.get(m["verdict"], 0) + 1
        for c in m.get("coverage") or []:
            rows.append((os.path.basename(path)[:-5], c["file"], c["state"], c["reason"] or "",
                         m["verdict"], m.get("config_derived") is not None))
print("%-34s %-48s %-9s %-17s %s" % ("patch", "file", "state", "verdict", "derived"))
for r in rows:
    print("%-34s %-48s %-9s %-17s %s" % (r[0][:34], r[1][:48], r[2], r[4], "yes" if r[5] else ""))
    if r[2] == "not-built":
        print("%34s   why: %s" % ("", r[3]))
c_files = [r for r in rows if r[1].endswith((".c", ".h"))]
unbuilt = [r for r in c_files if r[2] == "not-built" and "another architecture" not in r[3]]
print("\npatches by verdict: %s" % ", ".join("%s %d" % kv for kv in sorted(verdicts.items())))
print("files of applied patches: %d (C sources and headers %d): booted %d, built %d, not-built %d"
      % (len(rows), len(c_files), sum(r[2] == "booted" for r in rows), sum(r[2] == "built" for r in rows),
         sum(r[2] == "not-built" for r in rows)))
print("C files x86_64 could compile that were not compiled: %d" % len(unbuilt))
for r in unbuilt:
    print("  %s: %s" % (r[1], r[3]))
PY
fi

[ "${COST:-0}" = 1 ] || exit 0

# --- 2. the cost ---
# the bot's build environment (lab/build.c's BUILD_ENV): with another, bare's
# make and the bot's next one each rebuild what the kernel's release string reaches
export KBUILD_BUILD_TIMESTAMP='2024-01-01 00:00:00 UTC' KBUILD_BUILD_USER=printkbot \
	KBUILD_BUILD_HOST=printkbot KBUILD_BUILD_VERSION=1 LOCALVERSION= LC_ALL=C
cc=gcc; command -v ccache >/dev/null && cc="ccache gcc"
export PRINTKBOT_DB=$work/cost.db

# the lab's own base built first, as any lab that has tested a patch has it:
# a derived build dir starts as a copy of it (with none, the copy is empty
# and the first patch measures a cold build of the derived config)
./printkbot boot >/dev/null 2>"$work/lab-base.err" || { cat "$work/lab-base.err"; exit 1; }
# the derived config of derived-driver.patch, named as the bot names it
./printkbot test --json "$data/derived-driver.patch" >/dev/null 2>"$work/first.err" || true
hash=$(sed -n 's/.*config derived for the patch (\([0-9a-f]*\)).*/\1/p;T;q' "$work/first.err")
[ -n "$hash" ] || { echo "derived-driver.patch got no derived config"; cat "$work/first.err"; exit 1; }
# build/<config>-<series>: the series of the base's Makefile (lab.h)
# (awk reads to the end: git show would die of SIGPIPE under pipefail)
series=$(git -C "$tree" show printkbot-base:Makefile |
	awk '$1 == "VERSION" {v = $3} $1 == "PATCHLEVEL" && !s {s = v "." $3} END {print s}')
ddir=$cache/build/$hash-$series
rm -rf "$ddir" "$PRINTKBOT_DB"
s=$(now)
./printkbot test "$data/derived-driver.patch" >/dev/null 2>&1 || true
first=$(since "$s")

# one cold build of the lab's config, as setup and the first test make it
# on a new machine: ccache off (a warm cache made the baseline 55 s, not cold)
cold=$work/cold-build
s=$(now)
CCACHE_DISABLE=1 flock "$cache/lock" sh -c "git -C '$tree' checkout -q -f --detach printkbot-base &&
	make -s -C '$tree' O='$cold' tinyconfig >/dev/null &&
	'$tree/scripts/kconfig/merge_config.sh' -m -O '$cold' '$cold/.config' qemu/kernel.config >/dev/null &&
	make -s -C '$tree' O='$cold' olddefconfig >/dev/null &&
	make -s -j$(nproc) -C '$tree' O='$cold' CC='$cc' vmlinux >/dev/null 2>&1"
base_build=$(since "$s")
rm -rf "$cold"

# second patch on the same config against bare apply + make + qemu
bare() {
	flock "$cache/lock" sh -c "git -C '$tree' checkout -q -f --detach printkbot-base &&
		git -C '$tree' apply '$PWD/$data/ahci-probe-line.patch' &&
		make -s -j$(nproc) -C '$tree' O='$ddir' CC='$cc' vmlinux >/dev/null 2>&1 &&
		qemu-system-x86_64 -accel tcg -machine q35 -m 256 -smp 2 -nodefaults -no-user-config \
			-display none -no-reboot -nic none -kernel '$ddir/vmlinux' -initrd '$cache/guest/initrd.cpio' \
			-append 'console=ttyS0 ignore_loglevel panic=-1 sched_verbose' -serial null -serial null \
			>/dev/null 2>&1; git -C '$tree' checkout -q -f --detach printkbot-base"
}
bot_times=() bare_times=()
for round in 1 2; do
	s=$(now); ./printkbot test "$data/ahci-probe-line.patch" >/dev/null 2>&1 || true; bot_times+=("$(since "$s")")
	s=$(now); bare; bare_times+=("$(since "$s")")
done
printf '\nfirst patch on a new derived config: %.1f s; one cold build of the lab config: %.1f s (%.2fx)\n' \
	"$first" "$base_build" "$(echo "$first / $base_build" | bc -l)"
for i in 0 1; do
	printf 'second patch, round %d: printkbot test %.1f s, bare apply+make+qemu %.1f s (%.2fx)\n' $((i + 1)) \
		"${bot_times[$i]}" "${bare_times[$i]}" "$(echo "${bot_times[$i]} / ${bare_times[$i]}" | bc -l)"
done
