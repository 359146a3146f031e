#!/usr/bin/env bash
# End to end: `printkbot scan` of an mbox larger than it may hold in
# memory (a list archive as mbox is a gigabyte; scan refused any file
# over 512 MiB).  The linux-serial corpus 20 times over (612 MiB,
# 63,780 mails) is scanned as one file: every patch of every copy is
# reported, as many as in one copy times 20, and the peak RSS stays under
# 100 MB (it is bounded by the largest mail, not by the file).
# Needs no kernel; /usr/bin/time for the RSS figure.
source "$(dirname "$0")/lib.sh"
corpus=../shared/corpus
copies=20

[ -x /usr/bin/time ] || skip "/usr/bin/time is not installed (GNU time gives the peak RSS)"
xz -dc "$corpus/linux-serial-1500.mbox.xz" "$corpus/linux-serial-2023q1.mbox.xz" >"$work/one.mbox"
for _ in $(seq "$copies"); do cat "$work/one.mbox"; done >"$work/big.mbox"
size=$(stat -c %s "$work/big.mbox")
keep one jsonl $bot scan --json "$work/one.mbox"
keep big jsonl /usr/bin/time -f 'maxrss_kb %M' $bot scan --json "$work/big.mbox"
rm -f "$work/big.mbox"   # 612 MiB of /tmp: not kept for a failure's files
one=$(wc -l <"$work/one.jsonl")
big=$(wc -l <"$work/big.jsonl")
rss=$(sed -n 's/^maxrss_kb //p' "$work/big.err")
echo "$name: $((size >> 20)) MiB, $big patches, peak RSS $((rss >> 10)) MB"
check "the mbox over 512 MiB is read, not refused" test "$(cat "$work/big.rc")" = "$(cat "$work/one.rc")"
check "every patch of every copy: $one x $copies" test "$big" -eq $((one * copies))
check "peak RSS under 100 MB" test "$rss" -lt 102400
checks_end "$work/big.err"
passed
