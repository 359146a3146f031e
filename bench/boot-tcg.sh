#!/usr/bin/env bash
# QEMU's TCG with one host thread per guest CPU (thread=multi, QEMU's
# default for x86 on x86) against one thread for both (thread=single), on
# a busy host: N boots each of the kernel the lab's build dir holds (its
# base after `printkbot boot`), alternating A, B, A, B beside HOGS busy
# loops, then N/2 of each on the quiet host.  Each boot is the bot's own
# (2 guest CPUs, the capture port, its init); a boot is complete when
# the capture ends in its @E trailer.  Prints each mode's mean, median
# and slowest boot and how many did not complete within TIMEOUT.  Needs
# `printkbot setup` and a built base (`printkbot boot`).
#   N=20 HOGS=2 bench/boot-tcg.sh
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-20} hogs=${HOGS:-2} timeout=${TIMEOUT:-60}
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
vmlinux=$(ls -d "$cache"/build/*/vmlinux 2>/dev/null | head -1)
initrd=$cache/guest/initrd.cpio
[ -f "$vmlinux" ] && [ -f "$initrd" ] || { echo "boot-tcg.sh: no built lab in $cache (printkbot setup; printkbot boot)" >&2; exit 2; }
work=$(mktemp -d)
pids=()
cleanup() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

boot() {  # mode: one boot, its seconds appended to $work/<mode>.<load>, or a timeout counted
	local d=$work/boot t0 t1
	rm -rf "$d" && mkdir "$d"
	t0=$(date +%s.%N)
	timeout "$timeout" qemu-system-x86_64 -accel "tcg,thread=$1" -cpu qemu64 -machine q35 -m 256 -smp 2 \
		-nodefaults -no-user-config -display none -no-reboot -nic none \
		-kernel "$vmlinux" -initrd "$initrd" \
		-append "console=ttyS0 ignore_loglevel panic=-1 sched_verbose" \
		-serial "file:$d/console" -chardev "file,id=capture,path=$d/capture" -serial chardev:capture || true
	t1=$(date +%s.%N)
	if grep -qa '^@E ' "$d/capture"; then
		echo "$t1 - $t0" | bc >>"$work/$1.$load"
	else
		echo x >>"$work/$1.$load.timeouts"
	fi
}

summary() {  # load
	local m
	for m in multi single; do
		sort -n "$work/$m.$1" 2>/dev/null | awk -v m="$m" -v load="$1" \
			-v to="$(cat "$work/$m.$1.timeouts" 2>/dev/null | wc -l)" '
			{ v[NR] = $1; s += $1 }
			END { printf "%-6s thread=%-6s %3d boots: mean %5.1f s  median %5.1f s  slowest %5.1f s  timeouts %d\n",
				load, m, NR, NR ? s / NR : 0, NR ? v[int((NR + 1) / 2)] : 0, NR ? v[NR] : 0, to }'
	done
}

for ((h = 0; h < hogs; h++)); do (while :; do :; done) & pids+=($!); done
load=busy
for ((i = 0; i < n; i++)); do boot multi; boot single; done
kill "${pids[@]}" 2>/dev/null || true
pids=()
load=quiet
for ((i = 0; i < n / 2; i++)); do boot multi; boot single; done
echo "TCG threads, $hogs busy loops, ${timeout} s timeout:"
summary busy
summary quiet
