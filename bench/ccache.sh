#!/usr/bin/env bash
# bench/ccache.sh - what the bot's own ccache (bot/lab/build.c: the lab's
# ccache/, written by base builds) costs a cold build and what it saves
# when a build dir's sources are all rewritten under it, as checking out
# another base in the lab's one tree does (6.12, then a 6.1 series, then
# 6.12 again: every file differs, so Kbuild compiles everything again).
# Side by side in one run, per round (the cold builds in a rotating
# order, so that a host getting busier weighs on each alike):
#   cold, no ccache       make vmlinux in a new O= dir, CCACHE_DISABLE=1
#   cold, preprocessor    the same into a new, empty ccache in its default
#                         mode: a miss runs the preprocessor to hash its
#                         output, so a derived config's objects whose
#                         preprocessed text did not change are hits too
#   cold, depend mode     the same with CCACHE_DEPEND=1: no preprocessor
#                         run, the hash of the sources and of the headers
#                         the compiler's own -MD list names; hits only for
#                         the same headers with the same text
#   sources rewritten     (for each cache) every source touched, then make
#                         again in that dir from the cache, read only
#                         (without one this is the first figure again)
# Each round makes new dirs and a new cache, so every figure is cold where
# it says so.  Bare make, no sandbox, the lab's config and CC; the base is
# exported from the lab's repository (git archive), so the lab's tree and
# lock are not touched and a running printkbot is not held up.
#
# usage: bash bench/ccache.sh     (ROUNDS=2, BASE=printkbot-base; needs
#                                  `printkbot setup`: about 5 cold builds
#                                  a round)
#        TARGETS="kernel/ mm/" bash bench/ccache.sh   (those directories, not
#                                  vmlinux: a quicker look at the ratios)
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
rounds=${ROUNDS:-2}
base=${BASE:-printkbot-base}
read -r -a targets <<<"${TARGETS:-vmlinux}"
command -v ccache >/dev/null || { echo "bench/ccache.sh: ccache is not installed" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/var/tmp}/printkbot-ccache.XXXXXX")
trap 'rm -rf "$work"' EXIT

git -C "$cache/linux" archive "$base" | tar -x -C "$work" --one-top-level=src
series=$(awk '$1 == "VERSION" {v = $3} $1 == "PATCHLEVEL" {print v "." $3; exit}' "$work/src/Makefile")
config=$cache/build/$(sha256sum qemu/kernel.config | cut -c1-12)-$series/.config
[ -f "$config" ] || { echo "bench/ccache.sh: no lab config for $base ($series) at $config (printkbot setup)" >&2; exit 2; }

export KBUILD_BUILD_TIMESTAMP='2024-01-01 00:00:00 UTC' KBUILD_BUILD_USER=printkbot KBUILD_BUILD_HOST=printkbot \
	KBUILD_BUILD_VERSION=1 LOCALVERSION= LC_ALL=C CCACHE_BASEDIR=$work CCACHE_TEMPDIR=$work/tmp
t() { local s; s=$(date +%s.%N); "$@" >/dev/null; echo "$(date +%s.%N) - $s" | bc; }
make_in() { cp "$config" "$1/.config" && make -C "$work/src" -s -j"$(nproc)" O="$1" CC="ccache gcc" "${targets[@]}"; }
cold_plain() { mkdir -p "$1" && CCACHE_DISABLE=1 make_in "$1"; }
cold_cached() { mkdir -p "$1" && CCACHE_DIR=$2 make_in "$1"; }
rewritten() {
	find "$work/src" -type f -exec touch {} +
	CCACHE_DIR=$2 CCACHE_READONLY=1 make -C "$work/src" -s -j"$(nproc)" O="$1" CC="ccache gcc" "${targets[@]}"
}

hits() { CCACHE_DIR=$1 ccache --print-stats | awk '$1 ~ /_cache_hit$/ {h += $2} END {print h + 0}'; }
declare -A sum
names=(plain preprocessor depend)
for r in $(seq "$rounds"); do
	line="round $r:"
	for i in 0 1 2; do
		v=${names[$(((i + r) % 3))]}
		case $v in
		plain) secs=$(t cold_plain "$work/plain") ;;
		preprocessor) secs=$(t cold_cached "$work/preprocessor" "$work/ccache-preprocessor") ;;
		depend) secs=$(CCACHE_DEPEND=1 t cold_cached "$work/depend" "$work/ccache-depend") ;;
		esac
		sum[$v]+=" $secs"; line+=$(printf ' cold %s %.0f s;' "$v" "$secs")
	done
	for v in preprocessor depend; do
		secs=$(if [ $v = depend ]; then export CCACHE_DEPEND=1; fi; t rewritten "$work/$v" "$work/ccache-$v")
		sum[$v-again]+=" $secs"
		line+=$(printf ' rewritten %s %.0f s (%s hits);' "$v" "$secs" "$(hits "$work/ccache-$v")")
	done
	echo "$line"
	rm -rf "$work"/plain "$work"/preprocessor "$work"/depend "$work"/ccache-*
done
med() { printf '%s\n' $1 | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
p=$(med "${sum[plain]}")
row() { local m; m=$(med "$2"); printf '%-48s %6.0f s  %.2fx\n' "$1" "$m" "$(echo "$m / $p" | bc -l)"; }
row "cold build, no ccache (median)" "${sum[plain]}"
row "cold build writing the ccache, preprocessor" "${sum[preprocessor]}"
row "cold build writing the ccache, depend mode" "${sum[depend]}"
row "every source rewritten, preprocessor cache" "${sum[preprocessor-again]}"
row "every source rewritten, depend-mode cache" "${sum[depend-again]}"
