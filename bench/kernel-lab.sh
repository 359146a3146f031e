#!/usr/bin/env bash
# Side by side, in one run: bare make/qemu against printkbot for the same
# work -- a full base build, a rebuild after a one-file printk change, and
# one boot.  Prints each figure and the ratios.  Needs `printkbot setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
tree=$cache/linux
bdir=$cache/build/$(sha256sum qemu/kernel.config | cut -c1-12)   # the lab config's (lab.h); derived ones sit beside it
bare=$(mktemp -d)
trap 'rm -rf "$bare"; git -C "$tree" checkout -q -f --detach printkbot-base' EXIT
export KBUILD_BUILD_TIMESTAMP='2024-01-01 00:00:00 UTC' KBUILD_BUILD_USER=printkbot \
	KBUILD_BUILD_HOST=printkbot KBUILD_BUILD_VERSION=1
t() { local s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; echo "$(date +%s.%N) - $s" | bc; }
cc=gcc; command -v ccache >/dev/null && cc="ccache gcc"

git -C "$tree" checkout -q -f --detach printkbot-base
cp "$bdir/.config" "$bare/.config"
full_bare=$(t make -s -j"$(nproc)" -C "$tree" O="$bare" CC="$cc" vmlinux)

# the one-file change: a boot message's text, in init/main.c
sed -i 's/"Kernel command line: %s\\n"/"Kernel command line (bench): %s\\n"/' "$tree/init/main.c"
inc_bare=$(t make -s -j"$(nproc)" -C "$tree" O="$bare" CC="$cc" vmlinux)
git -C "$tree" -c user.name=b -c user.email=b@b commit -q -am bench
git -C "$tree" tag -f printkbot-bench >/dev/null
inc_bot_total=$(t ./printkbot boot --timeout 60 printkbot-bench)
boot_bare=$(t qemu-system-x86_64 -accel tcg -machine q35 -m 256 -smp 2 -nodefaults -no-user-config \
	-display none -no-reboot -nic none -kernel "$bare/vmlinux" -initrd "$cache/guest/initrd.cpio" \
	-append "console=ttyS0 ignore_loglevel panic=-1" -serial null -serial null)
boot_bot=$(./printkbot boot --json printkbot-bench | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["build"]["seconds"], d["boot"]["seconds"])')
read -r rebuild_bot_noop boot_bot_s <<<"$boot_bot"
printf '%-40s %8s\n' "what" "seconds"
printf '%-40s %8.2f\n' "full build, bare make" "$full_bare"
printf '%-40s %8.2f\n' "one-file rebuild, bare make" "$inc_bare"
printf '%-40s %8.2f\n' "one-file rebuild+boot, printkbot boot" "$inc_bot_total"
printf '%-40s %8.2f\n' "no-op rebuild, printkbot" "$rebuild_bot_noop"
printf '%-40s %8.2f\n' "one boot, bare qemu" "$boot_bare"
printf '%-40s %8.2f\n' "one boot, printkbot (capture+parse)" "$boot_bot_s"
echo "ratio one-file rebuild+boot, printkbot / bare: $(echo "scale=2; $inc_bot_total / ($inc_bare + $boot_bare)" | bc)"
