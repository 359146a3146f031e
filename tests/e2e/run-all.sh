#!/usr/bin/env bash
# run-all.sh SCRIPT... - the e2e scripts one after the other (make e2e,
# make e2e-long): all of them even when one fails, then each one's result,
# wall time and CPU time (its processes' user and system time, as far as
# they were waited for: what running it beside another would not get
# back), and the total.  Two scripts sharing a number are refused
# before anything runs: the number names a test in every report.
set -uo pipefail
dup=$(cd "$(dirname "$0")" && ls [0-9]*.sh | sed 's/-.*//' | sort | uniq -d)
if [ -n "$dup" ]; then
	for n in $dup; do echo "make e2e: tests/e2e: scripts share the number $n" >&2; done
	exit 2
fi
[ $# -gt 0 ] || { echo "make e2e: no script chosen" >&2; exit 2; }
# CPU seconds of the children waited for so far: bash's times, run in
# this shell (a pipe or $(...) would ask a new process, which has none)
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
children_cpu() {   # into $cpu
	times >"$times_file"
	cpu=$(sed -n 2p "$times_file" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] }
		printf "%d", t }')
}
fail=0 summary= start=$SECONDS
for t in "$@"; do
	echo "== $t"
	children_cpu
	t0=$SECONDS c0=$cpu
	if bash "$t"; then r=passed; else r=FAILED; fail=1; fi
	children_cpu
	summary+=$(printf '%-34s %-7s %5d s  cpu %5d s' "$(basename "$t" .sh)" "$r" $((SECONDS - t0)) \
		$((cpu - c0)))$'\n'
done
echo "== e2e summary"
printf '%s' "$summary"
echo "total $((SECONDS - start)) s"
exit $fail
