#!/usr/bin/env bash
# check.sh NPROC UNIT-TARGETS -- COLD-E2E... -- BESIDE-E2E... -- OTHER-E2E...
# make check, once the C build is done (Makefile: check):
# 1. the e2e scripts that set up the lab cold (001: the first setup, the
#    base kernel built cold, most of a fresh machine's suite) start in the
#    background, their output kept in build/e2e-cold.log;
# 2. meanwhile the unit tests are built, then run plain and under the
#    sanitizers: measured beside a series bench, they take 336 s of wall
#    time for 184 s of CPU (daemons, timeouts, waits), time the cold kernel
#    build fills;
# 3. then, still beside the cold build, the e2e scripts that build no
#    kernel and mostly wait on their servers (031, 033, 037: about 3 s of
#    CPU in 12 s each);
# 4. the cold e2e scripts' output is printed once they end, then the other
#    e2e scripts run on the lab they left.
# Every part runs even when an earlier one failed; exit 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
# $MAKE from the environment, not an argument: a recipe line naming $(MAKE)
# runs even under `make -n`, and this one runs the tests
make=${MAKE:-make} nproc=$1 units=$2
shift 2
usage() { echo "check.sh: usage: NPROC UNIT-TARGETS -- COLD-E2E... -- BESIDE-E2E... -- OTHER-E2E..." >&2; exit 2; }
[ "${1:-}" = -- ] || usage
shift
cold=() beside=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do cold+=("$1"); shift; done
[ "${1:-}" = -- ] || usage
shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do beside+=("$1"); shift; done
[ "${1:-}" = -- ] || usage
shift
other=("$@")

mkdir -p build
log=build/e2e-cold.log
# a session of their own, so that an interrupted make check ends them, kernel build and all
setsid bash tests/e2e/run-all.sh "${cold[@]}" >"$log" 2>&1 &
cold_pid=$!
trap 'kill -TERM -- -$cold_pid 2>/dev/null; exit 130' INT TERM

fail=0
# shellcheck disable=SC2086 # a list of make targets
$make -j"$nproc" $units || fail=1
$make unit || fail=1
$make unit-asan || fail=1
if [ ${#beside[@]} -gt 0 ]; then
	echo "== beside ${cold[*]}: ${beside[*]}"
	bash tests/e2e/run-all.sh "${beside[@]}" || fail=1
fi

echo "== waiting for ${cold[*]}, started beside the unit tests"
wait "$cold_pid" || fail=1
cat "$log"
if [ ${#other[@]} -gt 0 ]; then
	bash tests/e2e/run-all.sh "${other[@]}" || fail=1
fi
exit $fail
