#!/usr/bin/env bash
# Run each libFuzzer target for SECONDS, or with --runs for RUNS executions
# (libFuzzer's -runs=, the seeds' own included), as many at a time as
# the machine has CPUs (FUZZ_JOBS to say otherwise: each is one process),
# seeded at run time from tests/data and ../shared/corpus (nothing of a
# corpus is committed), then print each target's executions and findings
# and the totals.  A finding (crash, leak, timeout, out of memory) is kept in
# build/fuzz/findings/ and makes the exit status 1: fix it and add the
# input to tests/data/fuzz-regressions/<target>/, which
# test-fuzz-regressions replays.  With --runs, a target that ran fewer
# executions than asked fails too.
#
# usage: tests/fuzz/run.sh SECONDS build/fuzz/fuzz-NAME...
#        tests/fuzz/run.sh --runs RUNS build/fuzz/fuzz-NAME...
set -uo pipefail
cd "$(dirname "$0")/../.."
want_runs=
if [ "$1" = --runs ]; then
	want_runs=$2
	shift 2
	case $want_runs in
	'' | *[!0-9]*) echo "run.sh: --runs takes a number of executions, not '$want_runs'" >&2; exit 2 ;;
	esac
	limit=-runs=$want_runs
else
	limit=-max_total_time=$1
	shift
fi
top=$PWD
shared=${PRINTKBOT_SHARED:-$top/../shared}
work=$(mktemp -d)
findings=$top/build/fuzz/findings
trap 'rm -rf "$work"' EXIT
mkdir -p "$findings"

# Seeds, made once: patches and mails, single mails of the corpus mbox,
# captures, their kmsg records, the printk index, config files.
mkdir -p "$work/seeds"/{mail,scan,capture,record,index,config,policy-apply,authres}
cp tests/data/test/*.patch tests/data/hostile/*.patch tests/data/scan/checkpatch/*.patch \
	"$work/seeds/mail/" 2>/dev/null
cp "$shared"/corpus/patches/*.patch "$work/seeds/mail/" 2>/dev/null
if [ -f "$shared/corpus/linux-serial-1500.mbox.xz" ]; then
	xz -dc "$shared/corpus/linux-serial-1500.mbox.xz" | python3 -c '
import sys, os
out, n, cur = sys.argv[1], 0, []
def flush():
    global n
    if cur and n < 300 and sum(map(len, cur)) < 65536:
        open(os.path.join(out, "mbox-%03d" % n), "wb").write(b"".join(cur)); n += 1
for line in sys.stdin.buffer:
    if line.startswith(b"From ") and cur:
        flush(); cur = []
    cur.append(line)
flush()' "$work/seeds/mail"
fi
cp "$work"/seeds/mail/* "$work/seeds/scan/"
cp tests/data/test/*.patch tests/data/hostile/*.patch "$work/seeds/policy-apply/"
cp tests/data/kdiff/*.capture "$work/seeds/capture/"
python3 - "$work/seeds" tests/data/kdiff/*.capture <<'PY'
import sys, os, re
out = sys.argv[1]
n = 0
for path in sys.argv[2:]:
    data = open(path, "rb").read()
    for m in re.finditer(rb"@K (\d+)\n", data):
        if n >= 200: break
        rec = data[m.end():m.end() + int(m.group(1))]
        open(os.path.join(out, "record", "rec-%03d" % n), "wb").write(rec); n += 1
    idx = b"".join(data[m.end():m.end() + int(m.group(1))] for m in re.finditer(rb"@I (\d+)\n", data))
    if idx:
        open(os.path.join(out, "index", os.path.basename(path) + ".index"), "wb").write(idx)
PY
cp tests/data/kdiff/index-excerpt.txt "$work/seeds/index/"
cp config.example "$work/seeds/config/"
printf '[policy]\nsandbox = off\nmax_files = 3\nbuild_memory_mb = 64\n' >"$work/seeds/config/policy"
printf '[source a]\ntype = imap\nurl = imaps://h/INBOX\npassword_env = X\n[smtp]\nurl = smtp://h\n' \
	>"$work/seeds/config/source"
printf ' mx.example.org;\n\tdkim=pass (2048-bit key) header.d=example.org header.i=@example.org header.s=test' \
	>"$work/seeds/authres/opendkim"
printf 'mx.example.org; none\n\nspf.example.org 1; spf=pass smtp.mailfrom="a;b"@example.org reason="x (y)"' \
	>"$work/seeds/authres/two"
printf 'Hi,\n\n  #printkbot test debian:6.1\r\nOn Tue, Max wrote:\n> #printkbot help\n-- \n' \
	>"$work/seeds/authres/command"
for d in "$top"/tests/data/fuzz-regressions/*/; do
	[ -d "$d" ] && cp "$d"/* "$work/seeds/$(basename "$d")/" 2>/dev/null
done

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}

# One target, into $work/<name>.result: exit code, executions, exec/s,
# corpus units and findings.
fuzz_one() {
	local bin=$1 name kind log max_len rc runs rate units found
	name=$(basename "$bin")
	kind=${name#fuzz-}
	mkdir -p "$work/corpus/$kind" "$work/empty-$kind"
	log=$work/$name.log
	# mails and diffs up to 16 KB: a 40 KB seed took ~2.5 ms a run, and
	# with 64 KB inputs fuzz-scan ran at ~1,300 exec/s, too slow for 10^6
	# executions in 10 minutes (~2,000 with 16 KB, with the same coverage);
	# longer seeds are cut there, which leaves their headers and first hunks
	case $kind in
	mail|scan|policy-apply) max_len=16384 ;;
	*) max_len=65536 ;;
	esac
	# in an empty dir: a config naming a relative file finds nothing
	(cd "$work/empty-$kind" && "$top/$bin" "$limit" -timeout=10 -rss_limit_mb=2048 \
		-max_len=$max_len -print_final_stats=1 -artifact_prefix="$findings/$name-" \
		"$work/corpus/$kind" "$work/seeds/$kind") >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	units=$(ls "$work/corpus/$kind" | wc -l)
	found=$(grep -cE '^==[0-9]+==ERROR|^SUMMARY: (Address|Undefined|Leak)Sanitizer|deadly signal|ERROR: libFuzzer' "$log")
	echo "$rc ${runs:-0} ${rate:-0} $units $found" >"$work/$name.result"
}

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for bin in "$@"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	fuzz_one "$bin" &
done
wait

status=0
total=0
printf '%-14s %12s %8s %8s  %s\n' target executions exec/s corpus findings >"$work/table"
for bin in "$@"; do
	name=$(basename "$bin")
	log=$work/$name.log
	read -r rc runs rate units found <"$work/$name.result" || { rc=1 runs=0 rate=0 units=0 found=1; }
	if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
		status=1
		echo "== $name: finding (exit $rc); log: $findings/$name.log"
		cp "$log" "$findings/$name.log"
		grep -E 'ERROR|SUMMARY|#[0-9]+ 0x' "$log" | head -20
	elif [ -n "$want_runs" ] && [ "$runs" -lt "$want_runs" ]; then
		status=1
		echo "== $name: $runs executions, fewer than the $want_runs asked; log: $findings/$name.log"
		cp "$log" "$findings/$name.log"
	fi
	total=$((total + runs))
	printf '%-14s %12s %8s %8s  %s\n' "${name#fuzz-}" "$runs" "$rate" "$units" "$found" >>"$work/table"
done
cat "$work/table"
echo "fuzz: $total executions in all, $( [ $status = 0 ] && echo 'no findings' || echo "failed: see $findings")"
exit $status
