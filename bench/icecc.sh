#!/usr/bin/env bash
# One cold base build of the lab's config with and without icecream, side
# by side on this machine (doc/workers.md, "Compilers"): `printkbot boot --json`
# on the base, its build dir removed before each, with `[build] cc = gcc`
# and with `cc = icecc`, alternating gcc, icecc, gcc, icecc (PASSES pairs,
# default 1).  Prints each build's seconds, as the bot measured them, and
# the ratio.  On one machine expect no gain: every job is a local job of
# iceccd, plus icecream's own preprocessing and scheduling; the point is
# that the sandboxed build works through it and what that costs.
#
# Needs Debian's icecc.  A scheduler and an iceccd on loopback are started
# here unless iceccd already runs (and stopped at the end).  The lab is
# its own ($PRINTKBOT_BENCH_ICECC, default ~/.cache/printkbot-bench-icecc,
# ~2.5 GB, set up on the first run), so the main lab's build is untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
lab=${PRINTKBOT_BENCH_ICECC:-$HOME/.cache/printkbot-bench-icecc}
passes=${PASSES:-1}
work=$(mktemp -d)
started=()
cleanup() {
	[ ${#started[@]} = 0 ] || kill "${started[@]}" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
for p in icecc iceccd icecc-scheduler; do
	command -v "$p" >/dev/null || PATH=$PATH:/usr/sbin command -v "$p" >/dev/null ||
		{ echo "bench/icecc.sh: $p is missing (Debian's icecc)" >&2; exit 1; }
done
export PATH=$PATH:/usr/sbin
make -s printkbot printkbot-core

if ! pgrep -x iceccd >/dev/null; then
	# the daemons drop to their own user, who must be able to write the logs
	mkdir -m 1777 "$work/logs" && chmod 755 "$work"
	icecc-scheduler -l "$work/logs/scheduler.log" & started+=($!)
	# -vvv: its log names each job done, which the end counts
	iceccd -s 127.0.0.1 -vvv -l "$work/logs/iceccd.log" & started+=($!)
	for _ in $(seq 50); do [ -S /var/run/icecc/iceccd.socket ] && break; sleep 0.2; done
fi

export PRINTKBOT_CACHE=$lab PRINTKBOT_DB=$work/bench.db
[ -d "$lab/linux" ] || { echo "setting up the bench's lab (once)" >&2; ./printkbot setup >/dev/null; }
printf '[build]\ncc = gcc\n' >"$work/gcc.conf"
printf '[build]\ncc = icecc\n' >"$work/icecc.conf"

cold_build() {  # cc: the build's seconds, everything of its build dir but .config removed first
	find "$lab"/build/*/ -mindepth 1 -maxdepth 1 ! -name .config -exec rm -rf {} +
	./printkbot boot --json --config "$work/$1.conf" >"$work/$1.json" 2>"$work/$1.err" ||
		{ echo "bench/icecc.sh: the $1 build or boot failed:" >&2; tail -20 "$work/$1.err" >&2; exit 1; }
	python3 -c 'import json, sys; print("%.1f" % json.load(open(sys.argv[1]))["build"]["seconds"])' "$work/$1.json"
}
echo "cold base build of the lab config, load $(cut -d' ' -f1-3 /proc/loadavg):"
for ((p = 1; p <= passes; p++)); do
	g=$(cold_build gcc)
	i=$(cold_build icecc)
	printf '  pass %d: gcc %s s, icecc %s s (%.2fx)\n' "$p" "$g" "$i" "$(echo "$i / $g" | bc -l)"
done
if [ ${#started[@]} -gt 0 ]; then
	# without a daemon the client compiles locally and says nothing: 0 here is that
	printf 'iceccd: %s jobs done\n' "$(grep -c 'handle_job_done' "$work/logs/iceccd.log" 2>/dev/null || true)"
fi
