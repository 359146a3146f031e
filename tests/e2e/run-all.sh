#!/usr/bin/env bash
# run-all.sh SCRIPT... - the e2e scripts one after the other (make e2e,
# make e2e-long): all of them even when one fails, then each one's result
# and wall time, and the total.  Two scripts sharing a number are refused
# before anything runs: the number names a test in every report.
set -uo pipefail
dup=$(cd "$(dirname "$0")" && ls [0-9]*.sh | sed 's/-.*//' | sort | uniq -d)
if [ -n "$dup" ]; then
	for n in $dup; do echo "make e2e: tests/e2e: scripts share the number $n" >&2; done
	exit 2
fi
[ $# -gt 0 ] || { echo "make e2e: no script chosen" >&2; exit 2; }
fail=0 summary= start=$SECONDS
for t in "$@"; do
	echo "== $t"
	t0=$SECONDS
	if bash "$t"; then r=passed; else r=FAILED; fail=1; fi
	summary+=$(printf '%-34s %-7s %5d s' "$(basename "$t" .sh)" "$r" $((SECONDS - t0)))$'\n'
done
echo "== e2e summary"
printf '%s' "$summary"
echo "total $((SECONDS - start)) s"
exit $fail
