#!/usr/bin/env bash
# bench/layer.sh - what the throwaway layer (bot/lab/layer.c) costs a
# build, side by side in one run: a one-file rebuild (init/main.c gets a
# new message text each time, so make compiles one file and links
# vmlinux) with make writing the lab's build dir itself, and with make
# writing an overlayfs mounted on it, as the bot builds every unpublished
# commit; then the cost of making and dropping the layer alone.  The two
# alternate (bare, layered, layered, bare, ...) so that a machine that
# gets busier or quieter weighs on both alike.  Bare make, no sandbox:
# bench/sandbox.c measures that one.
#
# usage: bash bench/layer.sh            (ROUNDS=4; needs root, a set-up lab
#                                        with its base built: make demo)
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
tree=$cache/linux
rounds=${ROUNDS:-4}
export tree
build=$(ls -d "$cache"/build/*-6.12 2>/dev/null | grep -v '\.new$' | head -1)
export build
[ "$(id -u)" = 0 ] || { echo "bench/layer.sh: needs root (kernel overlayfs)" >&2; exit 2; }
[ -n "$build" ] && [ -f "$build/vmlinux" ] || { echo "bench/layer.sh: no built lab (make demo)" >&2; exit 2; }

exec 9>"$cache/lock"
flock 9   # the lab is ours while we change its tree
main_c=$tree/init/main.c
cp -p "$main_c" "$main_c.bench-orig"
layer=$cache/layers/bench.$$
trap 'mv -f "$main_c.bench-orig" "$main_c"; rm -rf "$layer"' EXIT

export KBUILD_BUILD_TIMESTAMP='2024-01-01 00:00:00 UTC' KBUILD_BUILD_USER=printkbot KBUILD_BUILD_HOST=printkbot \
	KBUILD_BUILD_VERSION=1 LOCALVERSION= LC_ALL=C PATH=/usr/local/bin:/usr/bin:/bin
# the bot's own CC= (build.c): another one would make Kbuild compile everything again, here and after
cc=gcc
command -v ccache >/dev/null && cc="ccache gcc"
export CCACHE_DISABLE=1 cc
make_it() { make -C "$tree" -s -j"$(nproc)" O="$build" CC="$cc" vmlinux >/dev/null; }
change() { sed -i "s/\"Run %s as init process\\\\n\"/\"Run %s as init process (bench $1)\\\\n\"/" "$main_c"; }

# the layered build: make in a mount namespace of its own, on an overlay of the build dir
layered() {
	rm -rf "$layer" && mkdir -p "$layer/upper" "$layer/work"
	unshare -m --propagation slave bash -c '
		mount -t overlay overlay -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/work" "$1" && shift 2 && "$@"' \
		_ "$build" "$layer" bash -c "$(declare -f make_it); make_it"
	rm -rf "$layer"
}

declare -a bare_s layer_s
for ((r = 0; r < 2 * rounds; r++)); do
	cp -p "$main_c.bench-orig" "$main_c"
	change "$r"
	on=$(( r % 4 == 1 || r % 4 == 2 ))
	start=$(date +%s.%N)
	if [ "$on" = 1 ]; then layered; else make_it; fi
	s=$(echo "$(date +%s.%N) - $start" | bc)
	if [ "$on" = 1 ]; then layer_s+=("$s"); else bare_s+=("$s"); fi
	printf '%-8s one-file rebuild %6.2f s\n' "$([ "$on" = 1 ] && echo layered || echo bare)" "$s"
done
# the layer alone: make it, mount it, unmount it, remove its upper dir
start=$(date +%s.%N)
for i in 1 2 3 4 5; do
	rm -rf "$layer" && mkdir -p "$layer/upper" "$layer/work"
	unshare -m --propagation slave mount -t overlay overlay \
		-o "lowerdir=$build,upperdir=$layer/upper,workdir=$layer/work" "$build"
	rm -rf "$layer"
done
alone=$(echo "($(date +%s.%N) - $start) / 5" | bc -l)
cp -p "$main_c.bench-orig" "$main_c"
make_it   # the build dir as the base left it

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
b=$(median "${bare_s[@]}"); l=$(median "${layer_s[@]}")
printf '\nmedian of %d each: one-file rebuild bare %.2f s, in a layer %.2f s (%.2fx); a layer made and dropped: %.3f s\n' \
	"$rounds" "$b" "$l" "$(echo "$l / $b" | bc -l)" "$alone"
