#!/usr/bin/env bash
# Side by side, in one run: the turnaround of `printkbot test` for a
# one-file patch on a warm base (apply + rebuild + boot + diff + store)
# against bare `git apply` + `make` + one `qemu` run for the same change;
# then a 5-patch series against five full base builds.  Needs `printkbot setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
tree=$cache/linux
data=tests/data/test
work=$(mktemp -d)
trap 'rm -rf "$work"; git -C "$tree" checkout -q -f --detach printkbot-base' EXIT
export PRINTKBOT_DB=$work/bench.db
export KBUILD_BUILD_TIMESTAMP='2024-01-01 00:00:00 UTC' KBUILD_BUILD_USER=printkbot \
	KBUILD_BUILD_HOST=printkbot KBUILD_BUILD_VERSION=1
cc=gcc; command -v ccache >/dev/null && cc="ccache gcc"
bdir=$cache/build/$(sha256sum qemu/kernel.config | cut -c1-12)   # the lab config's (lab.h); derived ones sit beside it
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
bare_make() { make -s -j"$(nproc)" -C "$tree" O="$bdir" CC="$cc" vmlinux >/dev/null 2>&1; }
reset_base() { git -C "$tree" checkout -q -f --detach printkbot-base; bare_make; }
bare_qemu() {
	qemu-system-x86_64 -accel tcg -machine q35 -m 256 -smp 2 -nodefaults -no-user-config \
		-display none -no-reboot -nic none -kernel "$bdir/vmlinux" -initrd "$cache/guest/initrd.cpio" \
		-append "console=ttyS0 ignore_loglevel panic=-1 sched_verbose" -serial null -serial null >/dev/null 2>&1
}

# Warm the base: built, booted (noise boots) and stored once.
./printkbot test "$data/pure-conversion.patch" >/dev/null 2>&1 || true

# Bare: apply, rebuild, boot.
reset_base
s=$(now)
git -C "$tree" apply "$PWD/$data/text-change.patch"
bare_make
bare_qemu
bare=$(since "$s")

# printkbot: the same patch, base from the store.
reset_base
s=$(now)
./printkbot test "$data/text-change.patch" >/dev/null 2>&1 || true
bot=$(since "$s")

# A 5-patch series (each on the previous one) against five full base builds.
cat "$data"/{text-change,level-change,pure-conversion,debug-compiled-out,pr_fmt-added}.patch >"$work/series.mbox"
reset_base
s=$(now)
./printkbot test "$work/series.mbox" >/dev/null 2>&1 || true
series=$(since "$s")
git -C "$tree" checkout -q -f --detach printkbot-base
cp "$bdir/.config" "$work/.config"
mkdir -p "$work/full" && cp "$bdir/.config" "$work/full/.config"
s=$(now)
make -s -j"$(nproc)" -C "$tree" O="$work/full" CC="$cc" vmlinux >/dev/null 2>&1
full=$(since "$s")

printf '%-52s %8s\n' "what" "seconds"
printf '%-52s %8.2f\n' "one-file patch, bare git apply + make + qemu" "$bare"
printf '%-52s %8.2f\n' "one-file patch, printkbot test (warm base)" "$bot"
printf '%-52s %8.2f\n' "5-patch series, printkbot test (warm base)" "$series"
printf '%-52s %8.2f\n' "one full base build, bare make (ccache warm)" "$full"
echo "ratio printkbot test / bare for one patch: $(echo "scale=2; $bot / $bare" | bc)"
echo "5-patch series in base builds' time: $(echo "scale=2; $series / $full" | bc) (target well under 5)"
