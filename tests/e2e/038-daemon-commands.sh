#!/usr/bin/env bash
# End to end: commands by mail (#printkbot) against a real Postfix and a
# real Dovecot on loopback (tests/e2e/mailservers.sh), with real OpenDKIM:
# what a user submits is signed for example.org, as the sender's server
# signs it, and every mail the list's server receives is verified by it,
# which writes "Authentication-Results: mx.example.org; dkim=..." on top
# (mail_dkim=yes).  The daemon trusts that authserv-id alone.
#
# Jane's one-patch series is sent with git send-email to the list and
# answered by `printkbot daemon --once` reading the list over IMAP.  Then:
#   1. Max (in [daemon] commands_from) answers the patch, To the bot, Cc
#      the list and Jane: "#printkbot test".  A daemon takes it (its sender proven by dkim=pass for example.org)
#      and is killed -9 with the job running (waiting for the lab, whose
#      lock the test holds); `daemon --once` takes the job over, tests
#      the series again and answers: one mail in Max's mailbox, threaded
#      under his command (In-Reply-To it, References from the patch), To
#      Max, Cc the list (not Jane), quoting the command ("> "), with
#      the patch's verdict and review; another --once sends nothing more;
#   2. Eve (signed, but not in commands_from) sends the same: refused,
#      the reason in the log and in the store, no answer;
#   3. Eve forges Max's From on the unauthenticated port, with an
#      Authentication-Results of her own for mx.example.org (which the
#      server strips) and one of another authserv-id: the server's
#      field says dkim=none, and the command is refused with that reason
#      in the log and the store, never answered;
#   4. "#printkbot help" in a thread of its own, with words after it,
#      is answered with the commands, quoting the command alone;
#   5. a flood of four commands in the patch's thread, each with other
#      first References (which the sender writes): the limit counts the
#      series, one over commands_per_thread_hour = 3 with Max's first:
#      two acted on, two held back (logged, never answered).
source "$(dirname "$0")/lib.sh"
source tests/e2e/mailservers.sh

mail_dkim=yes
mail_need
lab_setup
mail_users="max eve" mail_start
echo "postfix smtp :$smtp_port, submission :$sub_port, signing :$sign_port, dovecot imap :$imap_port"

# Jane's tree: the one file of the fixture from the bot's base.
dev=$work/dev
git init -q "$dev"
export GIT_AUTHOR_NAME="Jane Dev" GIT_AUTHOR_EMAIL=jane@example.org
export GIT_COMMITTER_NAME="Jane Dev" GIT_COMMITTER_EMAIL=jane@example.org
f=arch/x86/kernel/e820.c
mkdir -p "$dev/$(dirname "$f")"
lab_git show "printkbot-base:$f" >"$dev/$f"
git -C "$dev" add -A
git -C "$dev" commit -qm "base"
git -C "$dev" apply "$src/tests/data/test/text-change.patch"
git -C "$dev" commit -qam "$(sed -n 's/^Subject: \[PATCH\] //p' tests/data/test/text-change.patch)" \
	-m "A fixture of printkbot's tests." -m "Signed-off-by: Jane Dev <jane@example.org>"
git -C "$dev" format-patch -q -o "$work/series" HEAD~1
mail_send_patches "$dev" "$work/series"/*.patch
wait_mail list 1 || fail "the patch did not reach the list"
patch_id=$(sed -n 's/^Message-I[Dd]: <\(.*\)>\r\?$/\1/p' "$work/mail/list/Maildir/new"/* | head -1)
subject=$(sed -n 's/^Subject: //p' "$work/mail/list/Maildir/new"/* | head -1)
echo "the patch: <$patch_id> $subject"

echo pw >"$work/bot-password"
chmod 600 "$work/bot-password"
cat >"$work/printkbot.conf" <<EOF
[test]
boot_timeout = 120

[daemon]
from = printkbot <bot@example.org>
reply_on = always
series_wait = 600
retry_min = 1
retry_max = 1
outbox = $work/outbox
commands_from = max@example.org
commands_per_hour = 10
commands_per_thread_hour = 3
commands_authserv_id = mx.example.org

$(mail_smtp_group)

[source list]
type = imap
start = all
tls = required
ca_file = $work/tls.crt
url = imap://127.0.0.1:$imap_port/INBOX
user = list
password = pw
list = list@example.org
EOF
chmod 600 "$work/printkbot.conf"

# A command mail through Postfix: via id from to parent(Message-ID or -) body [subject].
# via: a user's name, who submits it on the signing port (STARTTLS, AUTH),
# or "forged", sent to the list's server as anyone can.  $CMD_CC: its Cc
# (default the list); $CMD_REFS: its References (default the parent);
# $CMD_HEADERS: more header lines ("Name: value", newline-separated).
send_cmd() {
	python3 - "$sign_port" "$smtp_port" "$work/tls.crt" "$@" <<'PY'
import os, smtplib, ssl, sys
from email.message import EmailMessage
sign, plain, ca, via, mid, frm, to, parent, body = sys.argv[1:10]
m = EmailMessage()
for line in filter(None, os.environ.get("CMD_HEADERS", "").split("\n")):
    name, value = line.split(": ", 1)
    m[name] = value
m["From"], m["To"], m["Cc"] = frm, to, os.environ.get("CMD_CC", "list@example.org")
m["Subject"] = "Re: " + sys.argv[10] if len(sys.argv) > 10 else "printkbot"
m["Message-ID"] = "<%s>" % mid
if parent != "-":
    m["In-Reply-To"] = "<%s>" % parent
    m["References"] = os.environ.get("CMD_REFS", "<%s>" % parent)
m.set_content(body)
if via == "forged":
    with smtplib.SMTP("127.0.0.1", int(plain)) as s:
        s.send_message(m)
else:
    with smtplib.SMTP("127.0.0.1", int(sign)) as s:
        s.starttls(context=ssl.create_default_context(cafile=ca))
        s.login(via, "pw")
        s.send_message(m)
PY
}

# Whether user's Maildir holds the mail of Message-ID id.
has_mail() { grep -qs "^Message-I[Dd]: <$2>" "$work/mail/$1/Maildir"/new/* "$work/mail/$1/Maildir"/cur/*; }
# Its headers' block, as delivered.
mail_head() { sed -n '1,/^\r\?$/p' "$(grep -ls "^Message-I[Dd]: <$2>" "$work/mail/$1/Maildir"/new/* "$work/mail/$1/Maildir"/cur/*)"; }

# 0. The patch, answered.
$bot daemon --config "$work/printkbot.conf" --once 2>"$work/run0.log" || fail "run 0: daemon --once" "$work/run0.log"
check "run 0: the patch was tested" grep -q "done: 1 patch: console-changed" "$work/run0.log"
check "run 0: Jane got the reply" wait_mail jane 1

# 1. Max's command; the daemon killed -9 during the re-test, then taken over.
descendants() {  # pid: every process below it
	local c
	for c in $(ps -o pid= --ppid "$1"); do echo "$c"; descendants "$c"; done
}
CMD_CC="list@example.org, Jane Dev <jane@example.org>" \
send_cmd max max1@example.org "Max Maint <max@example.org>" "printkbot <bot@example.org>" "$patch_id" \
	"Could you test this once more?

#printkbot test

> #printkbot help
Thanks" "$subject"
wait_for 30 "the command reached the list" has_mail list max1@example.org
check "the command reached the list signed, and verified by the list's server" \
	grep -q "^Authentication-Results: mx.example.org;" <(mail_head list max1@example.org)
check "  dkim=pass for example.org" grep -q "dkim=pass .*header.d=example.org" <(mail_head list max1@example.org)
# The re-test of a one-patch series finds both kernels in the store and
# takes a second: the test holds the lab's lock, so that the daemon is
# killed with its job running (claimed, its lease held, nothing stored),
# never before it or after its end.  When the test's own daemon waits,
# another printkbot's can too: that is the lock.
lab_locked sleep 900 &
holder=$!
$bot daemon --config "$work/printkbot.conf" 2>"$work/run1.log" &
d=$!
wait_for 120 "run 1: the command job started" grep -q "#printkbot test from max@example.org" "$work/run1.log"
sleep 1
orphans=$(descendants "$d")
kill -9 "$d"
wait "$d" 2>/dev/null || true
for p in $orphans; do kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true; done
kill $(descendants "$holder") "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
check "run 1: the command was queued, on the patch's series, its sender proven" \
	grep -q "queued: '#printkbot test' from max@example.org, on the series of job [0-9]*; sender proven by dkim=pass header.d=example.org (mx.example.org)" "$work/run1.log"
check "kill -9: the command job is left running" \
	test "$(sqlite3 "$PRINTKBOT_DB" "select state from jobs where kind = 'command'")" = running
check "kill -9: no answer stored" test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from replies r join mails m on m.id = r.mail_id where m.message_id = 'max1@example.org'")" = 0
$bot daemon --config "$work/printkbot.conf" --once 2>"$work/run2.log" || fail "run 2: daemon --once" "$work/run2.log"
check "run 2: the command job was taken over" grep -q "was running when the daemon stopped: queued again" "$work/run2.log"
check "run 2: the series tested again" grep -q "done: tested again on .*: console-changed" "$work/run2.log"
check "run 2: Max got the answer" wait_mail max 1
$bot daemon --config "$work/printkbot.conf" --once 2>"$work/run3.log" || fail "run 3: daemon --once" "$work/run3.log"
check "run 3: the answer (now in the list) is the bot's own: skipped" grep -q "skipped: our own mail (loop guard)" "$work/run3.log"
check "run 3: no command job more" test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from jobs where kind = 'command'")" = 1
check "exactly one answer stored for the command" test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from replies r join mails m on m.id = r.mail_id where m.message_id = 'max1@example.org'")" = 1
check "the answer, checked" python3 - "$work" "$patch_id" "$subject" <<'PY'
import email, email.policy, glob, os, sys
from e2elib import check, done
work, patch_id, subject = sys.argv[1:4]
mails = [email.message_from_binary_file(open(p, "rb"), policy=email.policy.default)
         for p in glob.glob(os.path.join(work, "mail", "max", "Maildir", "*", "*"))]
check(len(mails) == 1, "Max has exactly one mail (%d)" % len(mails))
r = mails[0]
body = r.get_content()
check(r["In-Reply-To"].strip() == "<max1@example.org>", "In-Reply-To the command (%s)" % r["In-Reply-To"])
check(r["References"].split() == ["<%s>" % patch_id, "<max1@example.org>"], "References: the patch, the command")
check(r["Subject"] == "Re: " + subject, "Subject: Re: the patch's (%s)" % r["Subject"])
check([a.addr_spec for a in r["To"].addresses] == ["max@example.org"], "To Max (%s)" % r["To"])
check([a.addr_spec for a in r["Cc"].addresses] == ["list@example.org"], "Cc the list, not Jane (%s)" % r["Cc"])
check(r["Auto-Submitted"] == "auto-generated" and r["X-Printkbot"], "Auto-Submitted, X-Printkbot")
check("printkbot tested the series again, as you asked:" in body, "says it tested again")
check("  console-changed: " in body and "verdict: console-changed" in body, "the verdict and the review")
check("PCI" in body, "the changed message in the review")
check("\n> #printkbot test\n" in body, "the command quoted, as understood")
done()
PY

# 2. Eve is no maintainer here; 3. nor is she Max, whatever her From: says.
send_cmd eve eve1@example.org "Eve <eve@example.org>" "bot@example.org" "$patch_id" "#printkbot test" "$subject"
CMD_HEADERS="Authentication-Results: mx.example.org; dkim=pass header.d=example.org
Authentication-Results: evil.example; dkim=pass header.d=example.org" \
send_cmd forged forged1@example.org "Max Maint <max@example.org>" "bot@example.org" "$patch_id" "#printkbot test" "$subject"
wait_for 30 "eve's commands reached the list" has_mail list forged1@example.org
wait_for 30 "eve's commands reached the list" has_mail list eve1@example.org
mail_head list forged1@example.org >"$work/forged1.head"
check "the forged command: the server's own field on top says dkim=none" \
	test "$(grep -m1 "^Authentication-Results:" "$work/forged1.head")" = "Authentication-Results: mx.example.org; dkim=none; dkim-atps=neutral"
check "  the field of another authserv-id is left below it" grep -q "^Authentication-Results: evil.example; dkim=pass" "$work/forged1.head"
check "  the sender's own field of mx.example.org is gone" test "$(grep -c "^Authentication-Results: mx.example.org" "$work/forged1.head")" = 1
$bot daemon --config "$work/printkbot.conf" --once 2>"$work/run4.log" || fail "run 4: daemon --once" "$work/run4.log"
check "run 4: Eve's command refused, the reason in the log" \
	grep -q "<eve1@example.org>: skipped: a #printkbot command refused: eve@example.org is not in \[daemon\] commands_from" "$work/run4.log"
check "run 4: and in the store" test "$(sqlite3 "$PRINTKBOT_DB" "select state || ': ' || reason from mails where message_id = 'eve1@example.org'")" = \
	"skipped: a #printkbot command refused: eve@example.org is not in [daemon] commands_from"
forged_why="a #printkbot command refused: its From (max@example.org) is not proven: mx.example.org found dkim=none, dkim-atps=neutral: no pass for example.org"
check "run 4: the forged command refused, the reason in the log" grep -qF "<forged1@example.org>: skipped: $forged_why" "$work/run4.log"
check "run 4: and in the store" test "$(sqlite3 "$PRINTKBOT_DB" "select state || ': ' || reason from mails where message_id = 'forged1@example.org'")" = \
	"skipped: $forged_why"
check "run 4: no job for either" test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from jobs where kind = 'command'")" = 1

# 4. help, in a thread of its own; 5. a flood in the patch's thread, each
# with other first References.
send_cmd max help1@example.org "max@example.org" "bot@example.org" - \
	"#printkbot help me, and tell everyone about http://spam.example"
for i in 1 2 3 4; do
	CMD_REFS="<flood-root$i@example.org> <$patch_id>" \
	send_cmd max "flood$i@example.org" "max@example.org" "bot@example.org" "$patch_id" "#printkbot help" "$subject"
done
for i in 1 2 3 4; do
	wait_for 30 "the flood reached the list" has_mail list "flood$i@example.org"
done
$bot daemon --config "$work/printkbot.conf" --once 2>"$work/run5.log" || fail "run 5: daemon --once" "$work/run5.log"
check "run 5: help answered" grep -q "done: help: answered" "$work/run5.log"
check "run 5: two of the flood acted on (the series' limit is 3)" \
	test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from commands where mail_id in (select id from mails where message_id like 'flood%')")" = 2
check "run 5: two held back, logged" \
	test "$(grep -c "skipped: a #printkbot command over the rate: its thread (series [0-9]*) had 3 in the last hour" "$work/run5.log")" = 2
check "Max got the help and two answers of the flood: 4 mails" wait_mail max 4
sleep 2
check "and no more" test "$(ls "$work/mail/max/Maildir/new" "$work/mail/max/Maildir/cur" | grep -vc -e '^$' -e ':$')" = 4
check "the help lists the commands" grep -lq "test BASE    test it again on BASE" "$work/mail/max/Maildir/new"/*
check "the help quotes the command understood" grep -lq "^> #printkbot help.\?$" "$work/mail/max/Maildir/new"/*
check "  and nothing else of its line" test -z "$(grep -l "spam.example" "$work/mail/max/Maildir/new"/*)"
check "Eve got nothing" test -z "$(ls "$work/mail/eve/Maildir/new")"
check "Jane got the reply to her patch and Max's command, no answer" test "$(ls "$work/mail/jane/Maildir/new" "$work/mail/jane/Maildir/cur" | grep -vc -e '^$' -e ':$')" = 2
checks_end "$work/run0.log" "$work/run1.log" "$work/run2.log" "$work/run3.log" "$work/run4.log" "$work/run5.log"
passed
