#!/usr/bin/env bash
# False alarms under load: N comment-only patches (each a new kernel,
# tested with --all so it is built and booted) while HOGS busy loops keep
# the host's CPUs busy.  Such a patch cannot change what the kernel prints,
# so every console-changed verdict is a false alarm.  The base is built
# and its noise learnt on a quiet host first, as a long-running daemon's
# would have been, which is what makes load-dependent records show up.
# Counts verdicts, the tests that needed confirmation boots, the changes
# those boots found unstable (each a false alarm without them) and the
# seconds per test with and without a recheck.  Needs `printkbot setup`.
#   N=30 HOGS=2 bench/noise.sh
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-30}
hogs=${HOGS:-2}
work=$(mktemp -d)
pids=()
cleanup() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
export PRINTKBOT_DB=$work/noise.db

patch_with_comment() {  # i: a comment-only patch whose comment is its own
	cat <<EOF
From: Printk Bot Bench <bench@printkbot.invalid>
Subject: [PATCH] init: noise bench comment $1
Message-ID: <noise-bench-$1@printkbot.invalid>

A comment only: the kernel prints what it printed before.
---
diff --git a/init/version.c b/init/version.c
--- a/init/version.c
+++ b/init/version.c
@@ -55,3 +55,4 @@ const char linux_banner[] __weak;
 #include "version-timestamp.c"
 
 EXPORT_SYMBOL_GPL(init_uts_ns);
+/* printkbot noise bench: comment $1 */
EOF
}

# the base on a quiet host: built, booted and its noise learnt
./printkbot test tests/data/test/pure-conversion.patch >/dev/null 2>&1 || true
for ((h = 0; h < hogs; h++)); do
	(while :; do :; done) &
	pids+=($!)
done
for ((i = 1; i <= n; i++)); do
	patch_with_comment "$i" >"$work/p$i.patch"
	rc=0
	./printkbot test --all --json "$work/p$i.patch" >"$work/r$i.json" 2>"$work/r$i.err" || rc=$?
	[ "$rc" -le 1 ] || { echo "test $i failed (exit $rc):"; cat "$work/r$i.err"; }
	printf '.' >&2
done
echo >&2
python3 - "$work" "$n" "$hogs" <<'PY'
import json, os, sys, collections
work, n, hogs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
verdicts = collections.Counter()
rechecked, unstable, saved = [], 0, 0
plain = []
for i in range(1, n + 1):
    try:
        m = json.load(open(os.path.join(work, "r%d.json" % i)))
    except (OSError, ValueError):
        verdicts["(no result)"] += 1
        continue
    verdicts[m["verdict"]] += 1
    secs = float(m.get("seconds") or 0)
    if m["recheck_rounds"]:
        rechecked.append(secs)
        unstable += len(m["unstable"])
        if m["verdict"] != "console-changed":
            saved += 1
    else:
        plain.append(secs)
avg = lambda xs: sum(xs) / len(xs) if xs else 0
print("%d comment-only patches, %d CPU hogs on %d CPUs" % (n, hogs, os.cpu_count()))
for v, c in sorted(verdicts.items()):
    print("  %-20s %3d" % (v, c))
print("false console-changed: %d of %d" % (verdicts["console-changed"], n))
print("tests with confirmation boots: %d (%d unstable changes; %d tests a false alarm without them)"
      % (len(rechecked), unstable, saved))
print("seconds per test: %.1f without a recheck (%d), %.1f with one (%d)"
      % (avg(plain), len(plain), avg(rechecked), len(rechecked)))
PY
