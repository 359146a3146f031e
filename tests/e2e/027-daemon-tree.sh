#!/usr/bin/env bash
# End to end: a kernel git repository made in the test (the lab's 6.12
# base, then a branch with a commit on top) configured as [tree net]; the
# running daemon fetches it at start and every fetch_interval (2 s), the
# series goes on net/main, and a commit pushed there afterwards is the
# base of the next series, with no restart.  Each series is a one-line
# level change (the daemon skips a patch without churn): what is checked
# is the base each reply names.  Then, the daemon stopped, a commit pushed
# after the last fetch is named by a series' base-commit: the tree is
# fetched again and the series goes there.
source "$(dirname "$0")/lib.sh"
lab_setup

# bare, borrowing the lab's objects (alternates): no 80,000-file copy or checkout
net=$work/net.git
git init -q --bare "$net"
echo "$tree/.git/objects" >"$net/objects/info/alternates"
lab_locked git -C "$net" fetch -q "$tree" "refs/tags/printkbot-base:refs/heads/main"
push() {  # one more commit on net's main (the operator's repository, as a push leaves it), its id
	local id
	id=$(git -C "$net" -c user.name=t -c user.email=t@t commit-tree "main^{tree}" -p main -m "$1")
	git -C "$net" update-ref refs/heads/main "$id"
	echo "$id"
}
tip1=$(push "net: first")

md=$work/Maildir
mkdir -p "$md"/{new,cur,tmp}
cat >"$work/printkbot.conf" <<EOF
[test]
bases = net/main

[daemon]
from = printkbot <bot@example.org>
reply_on = always
outbox = $work/outbox
fetch_interval = 2

[smtp]
url = smtp://127.0.0.1:9

[source local]
type = maildir
start = all
path = $md
list = list@example.org

[tree net]
path = $net
branches = main
EOF

mail() {  # n level: a one-patch series (devtmpfs's message at that level) into the Maildir
	# each take its own level: the same effect again would be held, once per change (doc/daemon.md)
	{
		echo "From: Jane Dev <jane@example.org>"
		echo "To: list@example.org"
		echo "Subject: [PATCH] devtmpfs: $2 level, take $1"
		echo "Message-ID: <tree$1@example.org>"
		echo "Date: Tue, 1 Dec 2026 10:00:0$1 +0000"
		echo
		sed -n '/^$/,$p' "$src/tests/data/test/level-change.patch" | tail -n +2 | sed "s/pr_notice(/pr_$2(/"
	} >"$md/tmp/$1.mail"
	mv "$md/tmp/$1.mail" "$md/new/100$1.mail"
}
replies() { grep -l "^base: " "$work"/outbox/new/* 2>/dev/null | wc -l; }
have_replies() { [ "$(replies)" -ge "$1" ]; }   # counted at each poll, not once

$bot daemon --config "$work/printkbot.conf" 2>"$work/daemon.log" &
d=$!
wait_for 60 "the tree fetched at start" grep -q "tree net fetched" "$work/daemon.log"
mail 1 notice
wait_for 900 "the first reply" have_replies 1
tip2=$(push "net: second")
wait_for 30 "the pushed commit fetched" grep -q "tree net fetched.*main ${tip2:0:12}" "$work/daemon.log"
mail 2 warn
wait_for 900 "the second reply" have_replies 2
kill -TERM "$d"
wait "$d" || true

r1=$(grep -l "tree1@example.org" "$work"/outbox/new/* | head -1)
r2=$(grep -l "tree2@example.org" "$work"/outbox/new/* | head -1)
check "reply 1 names net/main at the first tip (${tip1:0:12})" grep -q "^base: *net/main ${tip1:0:12} (" "$r1"
check "reply 2 names net/main at the pushed tip (${tip2:0:12}), no restart" grep -q "^base: *net/main ${tip2:0:12} (" "$r2"
check "one daemon throughout" test "$(grep -c 'started:' "$work/daemon.log")" = 1
tip3=$(push "net: third, pushed after the last fetch")
{ cat "$src/tests/data/test/level-change.patch"; echo; echo "base-commit: $tip3"; } >"$work/on-tip3.patch"
$bot test --config "$work/printkbot.conf" --no-store --which-base "$work/on-tip3.patch" \
	>"$work/which3.txt" 2>"$work/which3.err" || true
check "a base-commit pushed since the last fetch: the tree is fetched again and the series goes there" \
	grep -q "on-tip3.patch: base-commit ${tip3:0:12}" "$work/which3.txt"
check "... saying so" grep -q "base-commit ${tip3:0:12} is not in the lab: fetching tree net" "$work/which3.err"
checks_end "$work/daemon.log" "$r1" "$r2" "$work/which3.txt" "$work/which3.err"
passed
