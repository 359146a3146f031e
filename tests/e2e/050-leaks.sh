#!/usr/bin/env bash
# End to end: a whole `printkbot test` of a patch -- scan, policy, apply,
# the base built and booted three times, the patched kernel built and
# booted, the diff, the review -- under valgrind's memcheck: no definite
# leak and no memory error in the bot itself (its children, make and
# QEMU, are not traced).  GLib is told to use malloc for everything
# (G_SLICE) so that valgrind sees each block; tests/valgrind.supp names
# the leaks of libraries (template-glib), and PRINTKBOT_REGEX_JIT=0 keeps
# PCRE2 from JIT code valgrind cannot follow.  printkbot-core is run itself:
# printkbot would execute it, and valgrind follows no exec.
source "$(dirname "$0")/lib.sh"

lab_setup
rc=0
G_SLICE=always-malloc G_DEBUG=gc-friendly PRINTKBOT_REGEX_JIT=0 \
	valgrind --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --num-callers=50 \
	--suppressions=tests/valgrind.supp --error-exitcode=99 --log-file="$work/valgrind.log" \
	$bot-core test --no-store tests/data/test/pure-conversion.patch >"$work/review.txt" 2>"$work/err" || rc=$?
grep -E "definitely lost|ERROR SUMMARY|All heap blocks" "$work/valgrind.log" | sed 's/^==[0-9]*== */  /'
if [ "$rc" = 99 ]; then
	{ grep -A25 -E "definitely lost in|Invalid (read|write)|uninitialised|unaddressable" "$work/valgrind.log" ||
	  tail -60 "$work/valgrind.log"; } | head -80 >"$work/errors"
	fail "valgrind found errors or definite leaks" "$work/errors"
fi
grep -q "verdict: no-visible-change" "$work/review.txt" || fail "the test itself went wrong (exit $rc): its review and stderr" "$work/review.txt" "$work/err"
ok "no definite leak, no memory error in a whole test of a patch (exit $rc)"
passed
