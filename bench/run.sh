#!/usr/bin/env bash
# `printkbot run` and `printkbot bisect` on branches made here, side by side
# with the bare cost in one run:
#   - run over a 10-commit branch (each commit changes one boot-time
#     message's text in another file) against bare git checkout + make +
#     qemu for the base and each commit: one base build, ten incremental
#     rebuilds, eleven boots (target: run within 1.3x);
#   - run again over the same range (everything from the store);
#   - bisect --message over a 32-commit branch (31 comment changes in
#     compiled files and one e820 text change, 21st) (target: at most 6
#     builds beyond the two ends), then bisect of every change on the
#     filled store.
# Bare and run are timed in turns, ROUNDS times (default 2), the fastest of
# each kept: other people's builds on a shared machine swing one timing by
# a third.
# Needs `printkbot setup`.  Uses its own store; the lab's tree is left at the base.
set -euo pipefail
cd "$(dirname "$0")/.."
bot=$PWD/printkbot
cache=${PRINTKBOT_CACHE:-$HOME/.cache/printkbot}
tree=$cache/linux
work=$(mktemp -d)
trap 'rm -rf "$work"; git -C "$tree" checkout -q -f --detach printkbot-base' EXIT
export PRINTKBOT_DB=$work/bench.db
export KBUILD_BUILD_TIMESTAMP='2024-01-01 00:00:00 UTC' KBUILD_BUILD_USER=printkbot \
	KBUILD_BUILD_HOST=printkbot KBUILD_BUILD_VERSION=1
cc=gcc; command -v ccache >/dev/null && cc="ccache gcc"
$bot setup >/dev/null
bdir=$cache/build/$(sha256sum qemu/kernel.config | cut -c1-12)   # the lab config's (lab.h); derived ones sit beside it
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
bare_make() { make -s -j"$(nproc)" -C "$tree" O="$bdir" CC="$cc" vmlinux >/dev/null 2>&1; }
bare_qemu() {
	qemu-system-x86_64 -accel tcg -machine q35 -m 256 -smp 2 -nodefaults -no-user-config \
		-display none -no-reboot -nic none -kernel "$bdir/vmlinux" -initrd "$cache/guest/initrd.cpio" \
		-append "console=ttyS0 ignore_loglevel panic=-1 sched_verbose" -serial null -serial null >/dev/null 2>&1
}
reset_base() { git -C "$tree" checkout -q -f --detach printkbot-base; bare_make; }

# The user's repository: a shared clone of the lab's tree, branches made with a scratch index.
user=$work/linux
git clone -q --shared --no-checkout "$tree" "$user"
export GIT_AUTHOR_NAME='Bench Developer' GIT_AUTHOR_EMAIL=bench@example.org
export GIT_COMMITTER_NAME='Bench Developer' GIT_COMMITTER_EMAIL=bench@example.org
export GIT_AUTHOR_DATE='2026-12-01T10:00:00Z' GIT_COMMITTER_DATE='2026-12-01T10:00:00Z'
# compiled C files of the base config, sorted (the build dir has their objects)
reset_base
(cd "$bdir" && find . -name '*.o' | sed 's|^\./||; s|\.o$|.c|' | grep -Ev '^(tools|scripts|usr)/' | sort) |
	while read -r f; do if [ -f "$tree/$f" ]; then echo "$f"; fi; done >"$work/compiled"

# make_branch NAME KIND...: one commit per KIND on the base, KIND being
# "text" (a pr_info text of the next compiled file gets " (bench)"),
# "comment" (a comment at the end of the next compiled file) or "e820".
make_branch() {
	python3 - "$user" "$work/compiled" "$work/index-$1" "$@" <<'PY'
import re, subprocess, sys
user, compiled, index, name, kinds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
env = dict(__import__("os").environ, GIT_INDEX_FILE=index)
def git(*a, input=None):
    return subprocess.run(["git", "-C", user, *a], input=input, capture_output=True, check=True, env=env).stdout
files = [f for f in open(compiled).read().split() if f != "arch/x86/kernel/e820.c"]
git("read-tree", "printkbot-base")
parent = git("rev-parse", "printkbot-base").decode().strip()
used, n = set(), 0
pat = re.compile(rb'(pr_info\("[^"\n]*?)(\\n"\s*[,)])')
for kind in kinds:
    if kind == "e820":
        path = "arch/x86/kernel/e820.c"
        text = git("show", "printkbot-base:" + path).replace(b"available for PCI devices", b"free for PCI devices")
    else:
        while True:
            path = files[n]; n += 1
            text = git("show", "printkbot-base:" + path)
            if kind == "comment":
                text += b"/* bench: a comment */\n"; break
            if pat.search(text) and path not in used:
                text = pat.sub(lambda m: m.group(1) + b" (bench)" + m.group(2), text, count=1); break
    used.add(path)
    blob = git("hash-object", "-w", "--stdin", input=text).decode().strip()
    git("update-index", "--cacheinfo", "100644,%s,%s" % (blob, path))
    tree = git("write-tree").decode().strip()
    parent = git("commit-tree", tree, "-p", parent, "-m", "bench: %s in %s" % (kind, path)).decode().strip()
git("update-ref", "refs/heads/" + name, parent)
PY
}
make_branch ten text text text text text text text text text text
kinds=(); for i in $(seq 1 32); do if [ "$i" = 21 ]; then kinds+=(e820); else kinds+=(comment); fi; done
make_branch thirtytwo "${kinds[@]}"
git -C "$tree" fetch -q "$user" ten:refs/bench/ten

# Bare: the base and each of the ten commits checked out, built, booted once.
bare_once() {
	reset_base
	local s; s=$(now)
	bare_make; bare_qemu
	for c in $(git -C "$tree" rev-list --reverse printkbot-base..refs/bench/ten); do
		git -C "$tree" checkout -q -f --detach "$c"
		bare_make; bare_qemu
	done
	since "$s"
}
# printkbot run: the same commits, a fresh store ($1).
run_once() {
	reset_base
	local s; s=$(now)
	PRINTKBOT_DB=$1 $bot run --repo "$user" printkbot-base..ten >"$work/run.txt" 2>"$work/run.err" || true
	since "$s"
}
# Others' builds on a shared machine swing single timings by a third:
# the two are measured in turns, $rounds times, and the fastest of each kept.
rounds=${ROUNDS:-2} bare= run=
for r in $(seq 1 "$rounds"); do
	b=$(bare_once); x=$(run_once "$work/run-$r.db")
	echo "round $r: bare $b s, run $x s" >&2
	if [ -z "$bare" ] || [ "$(echo "$b < $bare" | bc)" = 1 ]; then bare=$b; fi
	if [ -z "$run" ] || [ "$(echo "$x < $run" | bc)" = 1 ]; then run=$x; fi
done
export PRINTKBOT_DB=$work/run-1.db
run_builds=$(sqlite3 "$PRINTKBOT_DB" "select count(*) from builds")
verdicts=$(awk 'length($1) == 12 && $1 ~ /^[0-9a-f]+$/ && NF > 2 { print $2 }' "$work/run.txt" | sort | uniq -c |
	awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }')
s=$(now)
$bot run --repo "$user" printkbot-base..ten >/dev/null 2>&1 || true
run2=$(since "$s")
run2_builds=$(( $(sqlite3 "$PRINTKBOT_DB" "select count(*) from builds") - run_builds ))

# bisect over 32 commits, on a store of its own.
reset_base
s=$(now)
PRINTKBOT_DB=$work/bisect.db $bot bisect --json --repo "$user" printkbot-base..thirtytwo \
	--message 'available for PCI devices' >"$work/bisect.json" 2>"$work/bisect.err" || true
bisect=$(since "$s")
s=$(now)
PRINTKBOT_DB=$work/bisect.db $bot bisect --json --repo "$user" printkbot-base..thirtytwo \
	>"$work/bisect-all.json" 2>"$work/bisect-all.err" || true
bisect_all=$(since "$s")
read -r b_ends b_search b_first b_ok < <(python3 - "$work/bisect.json" "$user" <<'PY'
import json, subprocess, sys
b = json.load(open(sys.argv[1]))
want = subprocess.run(["git", "-C", sys.argv[2], "rev-list", "--reverse", "printkbot-base..thirtytwo"],
                      capture_output=True, text=True).stdout.split()[20]
c = b["changes"][0]["commit"] if b["changes"] else ""
print(b["builds_ends"], b["builds_search"], (c or "none")[:12], "yes" if c == want else "NO")
PY
) || true
all_builds=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["builds"])' "$work/bisect-all.json" ||
	echo "?: $(tail -1 "$work/bisect-all.err")")

printf '%-60s %8s %7s\n' "what" "seconds" "builds"
printf '%-60s %8.1f %7s\n' "bare: base + 10 commits, git checkout + make + one qemu each" "$bare" 11
printf '%-60s %8.1f %7s\n' "printkbot run over the 10 commits (fresh store)" "$run" "$run_builds"
printf '%-60s %8.1f %7s\n' "printkbot run again (everything from the store)" "$run2" "$run2_builds"
printf '%-60s %8.1f %7s\n' "printkbot bisect --message, 32 commits (fresh store)" "$bisect" "$b_ends+$b_search"
printf '%-60s %8.1f %7s\n' "printkbot bisect, every change, 32 commits (stored)" "$bisect_all" "$all_builds"
echo "run verdicts: $verdicts"
echo "ratio run / bare over 10 commits: $(echo "scale=2; $run / $bare" | bc) (target at most 1.3; fastest of $rounds rounds each)"
echo "bisect: first commit $b_first, the 21st: $b_ok; builds beyond the ends: $b_search (target at most 6)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
