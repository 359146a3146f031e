#!/usr/bin/env bash
# Each architecture of the lab side by side, in one run (doc/bases.md,
# "Architectures"): per round, the same one-file printk change (a boot
# message's text in init/main.c, new each round) built and booted by
# `printkbot boot --arch A` for x86_64 then arm64, so that a busy host
# weighs on both alike; then a boot of each base kernel alone (QEMU's q35
# and virt).  Prints each round's build and boot seconds, the medians and
# the arm64/x86_64 ratio of a one-file rebuild + boot (the target: 1.3 at
# most).  A round 0 brings both build dirs to the same tree first and is
# not counted.
#
# Needs both labs set up in $PRINTKBOT_CACHE (`printkbot setup` and
# `printkbot setup --arch arm64`); it commits on the lab's tree (tags
# printkbot-bench-arch-N) and puts the tree back on printkbot-base.
# Run: bash bench/arch.sh    ROUNDS=N (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
tree=$cache/linux
rounds=${ROUNDS:-3}
archs=(x86_64 arm64)
out=$(mktemp -d)
trap 'rm -rf "$out"; git -C "$tree" checkout -q -f --detach printkbot-base' EXIT

# The round's commit: init/main.c's command-line message, worded for round $1.
commit_round() {
	git -C "$tree" checkout -q -f --detach printkbot-base
	sed -i "s/\"Kernel command line: %s\\\\n\"/\"Kernel command line (bench $1): %s\\\\n\"/" "$tree/init/main.c"
	grep -q "bench $1" "$tree/init/main.c" || { echo "init/main.c has no command-line message to change" >&2; exit 1; }
	git -C "$tree" -c user.name=bench -c user.email=bench@example.org commit -q -am "bench round $1"
	git -C "$tree" tag -f "printkbot-bench-arch-$1" >/dev/null
}

# `printkbot boot --json` of $2 on arch $1: "build-seconds boot-seconds records", or "fail".
boot_json() {
	./printkbot boot --json --arch "$1" --timeout 120 "$2" 2>"$out/err" >"$out/boot.json" || true
	python3 - "$out/boot.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    b, o = d.get("build") or {}, d.get("boot") or {}
    ok = b.get("ok") and o.get("status") == "ok"
    print("%s %s %d" % (b["seconds"], o["seconds"], len(d.get("records", []))) if ok else "fail")
except Exception:
    print("fail")
PY
}

for a in "${archs[@]}"; do
	./printkbot boot --arch "$a" --timeout 120 printkbot-base >/dev/null 2>&1 ||
		{ echo "the $a lab cannot boot its base: run 'printkbot setup --arch $a'" >&2; exit 2; }
done

printf '%-6s %-7s %9s %9s %8s\n' round arch build_s boot_s records
for r in $(seq 0 "$rounds"); do
	commit_round "$r"
	for a in "${archs[@]}"; do
		read -r build boot records <<<"$(boot_json "$a" "printkbot-bench-arch-$r")"
		[ "$build" != fail ] || { echo "round $r, $a: the build or boot failed: $(tail -3 "$out/err")" >&2; exit 1; }
		printf '%-6s %-7s %9.1f %9.2f %8s\n' "$r" "$a" "$build" "$boot" "$records"
		[ "$r" = 0 ] || echo "$a $build $boot" >>"$out/rounds"
	done
done
# the bases' kernels booted alone, alternating: the machine's boot, no build
for r in $(seq 1 "$rounds"); do
	for a in "${archs[@]}"; do
		read -r build boot records <<<"$(boot_json "$a" printkbot-base)"
		[ "$build" = fail ] || echo "$a $boot" >>"$out/boots"
	done
done

python3 - "$out/rounds" "$out/boots" <<'PY'
import statistics, sys
rounds, boots = {}, {}
for line in open(sys.argv[1]):
    a, build, boot = line.split()
    rounds.setdefault(a, []).append((float(build), float(boot)))
for line in open(sys.argv[2]):
    a, boot = line.split()
    boots.setdefault(a, []).append(float(boot))
med = {}
for a, rs in rounds.items():
    b = statistics.median(x for x, _ in rs)
    o = statistics.median(y for _, y in rs)
    t = statistics.median(x + y for x, y in rs)
    med[a] = t
    print("%-7s one-file rebuild %6.1f s, its boot %5.2f s, both %6.1f s (median of %d); base boot alone %5.2f s"
          % (a, b, o, t, len(rs), statistics.median(boots.get(a, [0]))))
if "x86_64" in med and "arm64" in med:
    ratio = med["arm64"] / med["x86_64"]
    print("arm64 / x86_64, one-file rebuild + boot: %.2f (target: 1.3 at most): %s"
          % (ratio, "met" if ratio <= 1.3 else "missed"))
PY
