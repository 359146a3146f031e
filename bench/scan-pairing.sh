#!/usr/bin/env bash
# The scan's worst cases for pairing removed with added calls (hostile
# mail, issue "hostile world"): one hunk with 500 removed and 500 added
# calls of distinct 400-character messages, and 10,000 + 10,000 and
# 20,000 + 20,000 short ones.  Prints wall seconds and peak memory of
# `printkbot scan` on each; with OLD=path/to/printkbot, that binary's too,
# side by side (an older one took minutes and gigabytes; LIMIT=300 seconds
# each).  No kernel needed.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import random, sys
random.seed(1)
def patch(n, length, name):
    letters = "abcdefghijklmnopqrstuvwxyz "
    lines = []
    for sign in "-+":
        for i in range(n):
            text = "".join(random.choice(letters) for _ in range(length))
            lines.append('%s\tpr_info("%s %d\\n");' % (sign, text, i))
    with open("%s/%s.patch" % (sys.argv[1], name), "w") as f:
        f.write("From: x <x@example.org>\nSubject: [PATCH] pairing\n\n---\n"
                "diff --git a/drivers/x.c b/drivers/x.c\n--- a/drivers/x.c\n+++ b/drivers/x.c\n"
                "@@ -1,%d +1,%d @@\n%s\n" % (n, n, "\n".join(lines)))
patch(500, 400, "500x400-chars")
patch(10000, 20, "10000x20-chars")
patch(20000, 20, "20000x20-chars")
PY
printf '%-16s %-10s %10s %10s  %s\n' case binary seconds peak_MB findings
for p in ${CASES:-500x400-chars 10000x20-chars 20000x20-chars}; do
	for b in ./printkbot ${OLD:-}; do
		rc=0
		/usr/bin/time -f '%e %M' -o "$work/time" timeout "${LIMIT:-300}" "$b" scan --json "$work/$p.patch" \
			>"$work/out" 2>/dev/null || rc=$?
		read -r secs kb < <(tail -1 "$work/time")
		[ $rc -le 1 ] || secs="$secs(exit $rc)"
		n=$( { grep -o '"kind":' "$work/out" || true; } | wc -l)
		printf '%-16s %-10s %10s %10d  %s\n' "$p" "$( [ "$b" = ./printkbot ] && echo new || echo old)" "$secs" $((kb / 1024)) "$n"
	done
done
