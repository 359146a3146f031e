#!/usr/bin/env bash
# End to end: a watched branch.  A repository served by `git daemon` on
# loopback (bare, borrowing the lab's objects: the lab's 6.12 base as its
# main) is [tree lab] with watch = main; the daemon runs, fetching it every
# 2 s, with the real Postfix and Dovecot of tests/e2e/mailservers.sh.
#   1. first sight: main's tip is noted, nothing is tested;
#   2. a push of three commits by Jane Dev, committed by Max Maint: A
#      changes a boot message (e820's PCI gap line), B changes a comment
#      (no logging churn), C a message of drivers/ata/ahci.c, which the
#      lab's config does not build (tested on a config derived for it).
#      One job; A and C are stored as console-changed and mailed, B is
#      no-churn and is not: two mails, each To Jane, Cc Max and the list,
#      in the robot's form (tree:, head:, commit:, reproduce: naming the
#      tree and the commit).  The time from the push to the last mail is
#      printed: the figure doc/daemon.md quotes.
#   3. a force-push that rewrites the three: A and B reworded (the same
#      patch-id on the same parent tree: not tested again, not mailed), C
#      changed.  The daemon is killed (kill -9, with its make) in the
#      middle of C's build and started again: the job is taken over at
#      once, C is tested and mailed once, and no commit of push 1 (they
#      left the branch) is mailed again.
#   4. main deleted: dropped, with its log line, and no mail.
# At the end the store holds the two pushes and the deletion, history
# and report find a commit by its id, `report --push` shows each push, and the author's
# mailbox holds exactly three mails, each once.
source "$(dirname "$0")/lib.sh"
source tests/e2e/mailservers.sh

mail_need
command -v git >/dev/null || skip "git is needed (git daemon)"
lab_setup
mail_users=max mail_start
echo "postfix submission :$sub_port, dovecot imap :$imap_port"

# The tree: bare, borrowing the lab's objects (alternates), served by git daemon
up=$work/git/lab.git
mkdir -p "$work/git"
git init -q --bare "$up"
echo "$tree/.git/objects" >"$up/objects/info/alternates"
lab_locked git -C "$up" fetch -q "$tree" "refs/tags/printkbot-base:refs/heads/main"
base=$(git -C "$up" rev-parse main)
gport=$(free_port)
git daemon --reuseaddr --export-all --base-path="$work/git" --listen=127.0.0.1 --port="$gport" \
	--log-destination=stderr "$work/git" 2>"$work/git-daemon.log" &
wait_port "$gport"
# the lab keeps the fetched branch as a base: gone with the test
at_exit lab_git update-ref -d refs/printkbot/trees/lab/main

export GIT_AUTHOR_NAME="Jane Dev" GIT_AUTHOR_EMAIL=jane@example.org
export GIT_COMMITTER_NAME="Max Maint" GIT_COMMITTER_EMAIL=max@example.org
# commit PARENT FILE SED MESSAGE: PARENT with sed run on FILE, as a commit of the tree; its id
commit() {
	local parent=$1 file=$2 expr=$3 msg=$4 blob idx=$work/index
	blob=$(git -C "$up" cat-file blob "$parent:$file" | sed "$expr" | git -C "$up" hash-object -w --stdin)
	GIT_INDEX_FILE=$idx git -C "$up" read-tree "$parent"
	GIT_INDEX_FILE=$idx git -C "$up" update-index --cacheinfo "100644,$blob,$file"
	git -C "$up" commit-tree "$(GIT_INDEX_FILE=$idx git -C "$up" write-tree)" -p "$parent" -m "$msg"
}
# reword COMMIT PARENT MESSAGE: COMMIT's tree on PARENT, with another message
reword() { git -C "$up" commit-tree "$1^{tree}" -p "$2" -m "$3"; }

echo pw >"$work/bot-password"
chmod 600 "$work/bot-password"
cat >"$work/printkbot.conf" <<EOF
[test]
boot_timeout = 120

[daemon]
from = printkbot <bot@example.org>
reply_on = never
outbox = $work/outbox
fetch_interval = 2
retry_min = 1
retry_max = 2
lease = 30

$(mail_smtp_group)

[tree lab]
url = git://127.0.0.1:$gport/lab.git
watch = main
list = list@example.org
reply = changes
EOF

log_n=0
start_daemon() {
	log_n=$((log_n + 1))
	log=$work/daemon$log_n.log
	$bot daemon --config "$work/printkbot.conf" 2>"$log" &
	d=$!
}
logged() { grep -q -- "$1" "$log"; }
q() { sqlite3 "$PRINTKBOT_DB" "$1"; }
jane_mails() { ls "$work/mail/jane/Maildir/new" "$work/mail/jane/Maildir/cur" 2>/dev/null | grep -vc -e '^$' -e ':$' || true; }
jane_has() { [ "$(jane_mails)" -ge "$1" ]; }
descendants() {  # pid: every process below it
	local c
	for c in $(ps -o pid= --ppid "$1"); do echo "$c"; descendants "$c"; done
}
has_make() { descendants "$1" | xargs -r ps -o comm= -p 2>/dev/null | grep -q '^make$'; }

# 1. first sight
start_daemon
wait_for 60 "the branch seen for the first time" logged "tree lab: branch main seen for the first time, at ${base:0:12}"
check "first sight: nothing tested, no push stored" test "$(q "select count(*) from pushes")" = 0

# 2. a push of three commits
a=$(commit "$base" arch/x86/kernel/e820.c 's/available for PCI devices/free for PCI devices/' \
	"x86/e820: say the PCI gap is free")
b=$(commit "$a" init/main.c '1s|^|/* printkbot e2e 036: a comment, no logging churn */\n|' "init: a comment")
c=$(commit "$b" drivers/ata/ahci.c 's/enabling 64bit DMA/enabling 64-bit DMA/' "ata: ahci: write 64-bit with a hyphen")
t0=$(date +%s.%N)
git -C "$up" update-ref refs/heads/main "$c"
wait_for 60 "push 1 queued" logged "branch main pushed, ${base:0:12}..${c:0:12}: 3 new commits"
wait_for 1800 "the two mails of push 1" jane_has 2
t1=$(date +%s.%N)
push1_secs=$(python3 -c "print('%.0f' % ($t1 - $t0))")
wait_for 60 "push 1's job done" logged "done: push 1 of lab/main, 3 commits"
ok "push 1: 3 commits tested and their authors told, from the push to the last mail in $push1_secs s"
check "push 1: A console-changed, B no-churn, C console-changed (derived config)" \
	test "$(q "select group_concat(state || ':' || coalesce(verdict, '-'), ' ') from push_commits where push_id = 1 order by seq")" \
	= "tested:console-changed tested:no-churn tested:console-changed"
check "push 1: C was tested on a config derived for ahci.c (its mail says so)" \
	test "$(grep -l "lines for this commit" "$work"/mail/jane/Maildir/new/* | wc -l)" = 1
check "push 1: B no mail (reply = changes: no churn is nothing to say)" \
	logged "${b:0:12} no-churn: no mail (no-churn): it changes no logging call, and \[tree lab\] mails the author's"

# 3. a force-push: A and B reworded, C changed; the daemon killed in the middle of C's build
a2=$(reword "$a" "$base" "x86/e820: say that the PCI gap is free")
b2=$(reword "$b" "$a2" "init: a comment, reworded")
c2=$(commit "$b2" drivers/ata/ahci.c 's/enabling 64bit DMA/enabling 64 bit DMA/' "ata: ahci: write 64 bit with a blank")
git -C "$up" update-ref refs/heads/main "$c2"
wait_for 60 "push 2 queued" logged "branch main pushed, ${c:0:12}..${c2:0:12} (forced): 3 new commits"
wait_for 60 "A reworded: not tested again" logged "${a2:0:12}: the same patch-id on the same parent tree as ${a:0:12}"
wait_for 60 "B reworded: not tested again" logged "${b2:0:12}: the same patch-id on the same parent tree as ${b:0:12}"
wait_for 900 "C's build under way" has_make "$d"
orphans=$(descendants "$d")
kill -9 "$d"
wait "$d" 2>/dev/null || true
for p in $orphans; do kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true; done
job2=$(q "select job_id from pushes where id = 2")
check "kill -9 in the middle of push 2's job: it is left running" test "$(q "select state from jobs where id = $job2")" = running
start_daemon
wait_for 60 "push 2's job taken over at once" logged "job $job2: was running when the daemon stopped: queued again"
wait_for 1800 "push 2's job done" logged "job $job2: done: push 2 of lab/main, 3 commits: console-changed; 2 tested before"
wait_for 120 "the mail of push 2" jane_has 3
check "push 2: A and B tested before, C tested and console-changed" \
	test "$(q "select group_concat(state || ':' || coalesce(verdict, '-'), ' ') from push_commits where push_id = 2 order by seq")" \
	= "tested-before:console-changed tested-before:no-churn tested:console-changed"
check "push 2's job ran twice (taken over)" test "$(q "select attempts from jobs where id = $job2")" = 2

# 4. main deleted
git -C "$up" update-ref -d refs/heads/main
wait_for 60 "the deletion seen" logged "tree lab: branch main was deleted (its tip was ${c2:0:12}): dropped"
sleep 5   # a fetch or two more: nothing else comes of it
kill -TERM "$d"
wait "$d" || true

check "the store: two pushes and a deletion" \
	test "$(q "select group_concat(coalesce(new_tip, 'deleted') || ':' || forced, ' ') from pushes order by id")" \
	= "$c:0 $c2:1 deleted:0"
check "each mail sent once (outbox/new empty)" test -z "$(ls "$work/outbox/new")"
check "no reply job failed" test "$(q "select count(*) from jobs where kind = 'reply' and state <> 'done'")" = 0
$bot history --commit "$a" >"$work/history-a.txt" || true
check "history finds A by its commit (the e820 line)" grep -q "free for PCI devices" "$work/history-a.txt"
$bot report --commit "${c:0:12}" >"$work/report-c.txt" || fail "report --commit C" "$work/report-c.txt"
check "report --commit finds C's review (ahci's index line)" grep -q "enabling 64-bit DMA" "$work/report-c.txt"
$bot history --pushes >"$work/pushes.txt" || fail "history --pushes" "$work/pushes.txt"
check "history --pushes lists the three" test "$(grep -c '^push [0-9]*, lab/main' "$work/pushes.txt")" = 3
$bot report --push 2 >"$work/report-push2.txt" || fail "report --push 2" "$work/report-push2.txt"
check "report --push 2: the force-push and the review of C'" \
	sh -c "grep -q ', forced, job $job2 done' '$work/report-push2.txt' && grep -q 'tested-before' '$work/report-push2.txt' && grep -q '^commit $c2' '$work/report-push2.txt'"

check "the mails, checked one by one" python3 - "$work" "$a" "$c" "$c2" <<'PY'
import email, email.policy, glob, os, sys
from e2elib import check, done
work, a, c, c2 = sys.argv[1:5]
def load(user):
    return [email.message_from_binary_file(open(p, "rb"), policy=email.policy.default)
            for p in sorted(glob.glob(os.path.join(work, "mail", user, "Maildir", "*", "*")))]
jane, maxm, lst = load("jane"), load("max"), load("list")
check(len(jane) == 3, "the author got exactly 3 mails (%d)" % len(jane))
check(len(maxm) == 3 and len(lst) == 3, "the committer and the list got them too (%d, %d)" % (len(maxm), len(lst)))
ids = [m["Message-ID"] for m in jane]
check(len(set(ids)) == 3, "three Message-IDs, none twice")
about = {}
for m in jane:
    body = m.get_body(("plain",)).get_content()
    commit = [l.split()[1] for l in body.splitlines() if l.startswith("commit: ")]
    about[commit[0] if commit else "?"] = (m, body)
check(set(about) == {a, c, c2}, "one mail about A, C and C' each (%s)" % " ".join(x[:12] for x in about))
for cid, (m, body) in about.items():
    short = cid[:12]
    check(m["To"] == "Jane Dev <jane@example.org>", "%s: To the author (%s)" % (short, m["To"]))
    check("max@example.org" in m["Cc"] and "list@example.org" in m["Cc"], "%s: Cc the committer and the list" % short)
    check(m["Subject"].startswith("[lab:main ") and "console-changed" in m["Subject"], "%s: %s" % (short, m["Subject"]))
    check(m["In-Reply-To"] is None, "%s: a thread of its own" % short)
    check(m["Auto-Submitted"] == "auto-generated", "%s: Auto-Submitted" % short)
    check("\ntree:   git://127.0.0.1:" in body and "/lab.git main\n" in body, "%s: tree: names the tree and branch" % short)
    check("\nhead:   " in body, "%s: head:" % short)
    check("git fetch --no-tags git://127.0.0.1:" in body and "printkbot run %s^!" % short in body,
          "%s: reproduce: fetches the tree and runs the commit" % short)
    check("\nauthor: Jane Dev <jane@example.org>\n" in body, "%s: author:" % short)
_, abody = about.get(a, (None, ""))
check("free for PCI devices" in abody, "A's mail shows the changed boot line")
done()
PY

checks_end "$work"/daemon*.log
passed
