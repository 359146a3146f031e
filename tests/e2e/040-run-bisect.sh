#!/usr/bin/env bash
# End to end: `printkbot run` and `printkbot bisect` on a developer's branch.
# A scratch repository (a shared clone of the lab's tree, as a user's own
# checkout would be) gets a branch of four commits on the base: a pure
# printk -> pr_info conversion, a text change of a boot message (e820's
# "available for PCI devices"), an unrelated comment, and a pr_fmt()
# addition to init/main.c.  `run` must give each its verdict, leave the
# user's repository as it was, and a second run must build nothing; then
# `bisect --message` must name the text change's commit, in the builds the
# range allows, and `bisect` without --message every change to its commit.
source "$(dirname "$0")/lib.sh"
data=$src/tests/data/test

lab_setup

# The user's repository: its own clone, its own branch, commits of its own
# (made with a scratch index, so that no 1 GB worktree is checked out).
user=$work/linux
lab_locked git clone -q --shared --no-checkout "$tree" "$user"
export GIT_AUTHOR_NAME='Jane Developer' GIT_AUTHOR_EMAIL=jane@example.org
export GIT_COMMITTER_NAME='Jane Developer' GIT_COMMITTER_EMAIL=jane@example.org
export GIT_AUTHOR_DATE='2026-12-01T10:00:00Z' GIT_COMMITTER_DATE='2026-12-01T10:00:00Z'
GIT_INDEX_FILE=$work/scratch-index git -C "$user" read-tree printkbot-base
parent=$(git -C "$user" rev-parse printkbot-base)
commit() {  # fixture subject: a commit of the fixture's diff on the previous one
	GIT_INDEX_FILE=$work/scratch-index git -C "$user" apply --cached "$data/$1.patch"
	local tree; tree=$(GIT_INDEX_FILE=$work/scratch-index git -C "$user" write-tree)
	parent=$(git -C "$user" commit-tree "$tree" -p "$parent" -m "$2")
	echo "$parent"
}
c_conv=$(commit pure-conversion "initramfs: use pr_info for the unpacking message"); parent=$c_conv
c_text=$(commit text-change "x86/e820: say the PCI gap is free"); parent=$c_text
c_comment=$(commit comment-only "init: add a comment"); parent=$c_comment
c_prfmt=$(commit pr_fmt-added "init: add a pr_fmt prefix")
git -C "$user" update-ref refs/heads/cleanup "$c_prfmt"
git -C "$user" symbolic-ref HEAD refs/heads/cleanup
user_state() { git -C "$user" for-each-ref; git -C "$user" rev-parse HEAD; ls -A "$user"; }
state_before=$(user_state)

# run over the branch, from inside the user's repository
run_inside() ( cd "$user" && $bot run --json printkbot-base..cleanup )
keep run json run_inside
builds_after_run=$(sqlite3 "$PRINTKBOT_DB" "select count(*) from builds")
# again: everything comes from the store
keep run2 txt $bot run --repo "$user" cleanup
builds_after_run2=$(sqlite3 "$PRINTKBOT_DB" "select count(*) from builds")

# bisect the text change, on a fresh store so that the builds it needs are counted
PRINTKBOT_DB=$work/bisect.db keep bisect json $bot bisect --json --repo "$user" printkbot-base..cleanup \
	--message 'available for PCI devices'
# every change, on the store run filled: no build at all
keep bisect-all json $bot bisect --json --repo "$user" printkbot-base..cleanup
# a bad range and a repository that is not a kernel
keep bad out $bot run --repo "$user" nosuchbranch..cleanup
mkdir "$work/notkernel" && git -C "$work/notkernel" init -q && echo hi >"$work/notkernel/README" &&
	git -C "$work/notkernel" add README && git -C "$work/notkernel" commit -q -m readme
echo more >>"$work/notkernel/README" && git -C "$work/notkernel" commit -q -a -m more
keep notkernel out $bot run --repo "$work/notkernel" HEAD~1..HEAD

python3 - "$work" "$c_conv" "$c_text" "$c_comment" "$c_prfmt" "$builds_after_run" "$builds_after_run2" <<'PY'
import json, os, sys
from e2elib import check, done, rc, text
work, c_conv, c_text, c_comment, c_prfmt, b1, b2 = sys.argv[1:]

models = [json.loads(l) for l in text("run.json").splitlines() if l.strip()]
by = {m["commit"]: m for m in models}
check(len(models) == 4 and [m["commit"] for m in models] == [c_conv, c_text, c_comment, c_prfmt],
      "run: four commits, oldest first (%s)" % [m.get("commit", "?")[:12] for m in models])
check(rc("run") == 1, "run: exit 1, some commit changed the console (%d)" % rc("run"))
v = lambda c: by.get(c, {}).get("verdict")
check(v(c_conv) == "no-visible-change", "pure conversion: no-visible-change (%s)" % v(c_conv))
check(v(c_text) == "console-changed", "text change: console-changed (%s)" % v(c_text))
tc = [c for c in by.get(c_text, {}).get("console", []) if c["kind"] == "text-changed"]
check(len(tc) == 1 and tc[0]["file"] == "arch/x86/kernel/e820.c" and "free for PCI devices" in tc[0]["new_text"],
      "text change: the e820 message, attributed")
check(by.get(c_text, {}).get("author", "").startswith("Jane Developer"), "text change: the commit's author")
check(v(c_comment) == "no-churn" and by[c_comment]["after"]["build_seconds"] is None,
      "comment: no-churn, not built (%s)" % v(c_comment))
check(v(c_prfmt) == "console-changed" and any(c["kind"] == "prefix-changed" for c in by[c_prfmt]["console"]),
      "pr_fmt addition: console-changed with prefix-changed records (%s)" % v(c_prfmt))
check(by[c_text]["parent"] == c_conv and by[c_prfmt]["parent"] == c_comment, "each commit against its parent")
check(by[c_conv]["noise_boots"] >= 2, "the base learnt the noise (%s boots)" % by[c_conv]["noise_boots"])
# builds: the base, the conversion, the text change, the comment (as the pr_fmt commit's parent), the pr_fmt commit
check(int(b1) == 5, "run: 5 builds stored (base, 3 churning commits, the comment as a parent): %s" % b1)
check(int(b2) == int(b1), "second run: no build, everything from the store (%s -> %s)" % (b1, b2))
t2 = text("run2.txt")
check(rc("run2") == 1 and "console-changed" in t2 and "no-churn" in t2 and c_text[:12] in t2,
      "second run: the summary table names each commit and verdict")
check("e820__setup_pci_gap" in t2, "second run: the details of the console change")

b = json.loads(text("bisect.json"))
check(rc("bisect") == 0, "bisect --message: exit 0 (%d): %s" % (rc("bisect"), text("bisect.err")[-300:]))
ch = b["changes"]
check(len(ch) == 1 and ch[0]["commit"] == c_text and not ch[0]["ambiguous"],
      "bisect --message: the text change's commit (%s)" % [(c["commit"] or "?")[:12] for c in ch])
check(ch and ch[0]["subject"] == "x86/e820: say the PCI gap is free" and ch[0]["author"].startswith("Jane Developer"),
      "bisect: names the subject and the author")
check(ch and "available for PCI devices" in ch[0]["change"], "bisect: names the change")
# 4 commits: the ends, then at most ceil(log2(4)) = 2 commits between
check(b["builds_ends"] == 2 and b["builds_search"] <= 2,
      "bisect: %d builds for the ends, %d for the search (at most 2)" % (b["builds_ends"], b["builds_search"]))

a = json.loads(text("bisect-all.json"))
check(rc("bisect-all") == 0, "bisect: exit 0 (%d)" % rc("bisect-all"))
firsts = {c["commit"] for c in a["changes"] if c["searched"]}
check(firsts == {c_text, c_prfmt}, "bisect: every change to the text or the pr_fmt commit (%s)"
      % sorted(x[:12] for x in firsts if x))
check(a["builds"] == 0 and a["from_store"] >= 2, "bisect on a filled store: no build (%d)" % a["builds"])

check(rc("bad") == 2 and "'nosuchbranch' is not a revision" in text("bad.err"), "bad range: exit 2, says which word")
check(rc("notkernel") == 2 and "is not a Linux kernel tree" in text("notkernel.err"), "not a kernel: exit 2, says so")
done()
PY

# The user's repository is as it was: same refs and HEAD, nothing checked out.
[ "$(user_state)" = "$state_before" ] || fail "the user's repository changed"
ok "the user's repository is untouched"
passed
