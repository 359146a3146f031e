#!/usr/bin/env bash
# End to end: what the lists want mailed ([list NAME], doc/daemon.md "What
# is mailed"), with the real Postfix and Dovecot of tests/e2e/mailservers.sh
# and the lab's 6.12 base.  Three lists, each a mailbox the daemon reads
# over IMAP: serial ([list serial]: reply = changes, max_per_author_day =
# 1), quiet (no group) and embargo ([list embargo]: embargo_minutes = 2).
# Patch mails are sent through Postfix as their authors would:
#   1. to serial, Jane's e820 message change (console-changed), an
#      initramfs call conversion (no-visible-change), a patch no base takes
#      (does-not-apply); to quiet, with quiet's List-Id, a devtmpfs level
#      change (console-changed): Jane gets one mail, about the e820 patch,
#      Cc serial; quiet gets none; the log says the rule that held for each;
#   2. to serial, a resend of the e820 patch (same effect, a new
#      Message-ID and Date): not mailed, once per change; and the devtmpfs
#      patch: not mailed, the per-author brake holds (logged);
#   3. to embargo, Joe's e820 patch: tested, its mail waits out the
#      embargo (no mail, not in the outbox);
#   4. Joe's v2 inside the window: v1's mail is replaced (its job
#      cancelled, the row held), the v2 tested, its mail waiting in turn;
#   5. once the window passed, Joe has one mail, the v2's.
# Every mail the bot sent is under [daemon] max_reply_lines.
source "$(dirname "$0")/lib.sh"
source tests/e2e/mailservers.sh

mail_need
lab_setup
mail_users="serial quiet embargo joe" mail_start
echo "postfix smtp :$smtp_port, submission :$sub_port, dovecot imap :$imap_port"

echo pw >"$work/bot-password"
chmod 600 "$work/bot-password"
export PK_TEST_IMAP_PASSWORD=pw
{
	cat <<EOF
[test]
boot_timeout = 120

[daemon]
from = printkbot <bot@example.org>
series_wait = 600
retry_min = 1
retry_max = 1
outbox = $work/outbox
max_reply_lines = 120

$(mail_smtp_group)

[list serial]
address = serial@example.org
max_per_author_day = 1

[list embargo]
address = embargo@example.org
embargo_minutes = 2
EOF
	for l in serial quiet embargo; do
		cat <<EOF

[source $l]
type = imap
start = all
tls = required
ca_file = $work/tls.crt
url = imap://127.0.0.1:$imap_port/INBOX
user = $l
password_env = PK_TEST_IMAP_PASSWORD
EOF
	done
} >"$work/printkbot.conf"

# send ID FROM TO SUBJECT FIXTURE [SED] [HEADER: value]: a patch mail through
# Postfix, its commit message and diff those of tests/data/test/FIXTURE.patch
# (SED applied to the diff), dated now unless DATE is set.
send() {
	python3 - "$smtp_port" "$@" <<'PY'
import email.message, email.utils, os, re, smtplib, subprocess, sys
port, mid, frm, to, subject, fixture = sys.argv[1:7]
sed = sys.argv[7] if len(sys.argv) > 7 else ""
extra = sys.argv[8] if len(sys.argv) > 8 else ""
text = open("tests/data/test/%s.patch" % fixture).read()
body = text.split("\n\n", 1)[1]
if sed:
    head, diff = body.split("\ndiff --git", 1)
    body = head + "\ndiff --git" + subprocess.run(["sed", sed], input=diff, text=True, capture_output=True,
                                                  check=True).stdout
m = email.message.EmailMessage()
m["From"] = frm
m["To"] = to
m["Subject"] = subject
m["Date"] = os.environ.get("DATE") or email.utils.formatdate()
m["Message-ID"] = "<%s@example.org>" % mid
if extra:
    k, v = extra.split(": ", 1)
    m[k] = v
m.set_content(body)
with smtplib.SMTP("127.0.0.1", int(port)) as s:
    s.send_message(m)
PY
}

run() {  # run N: the daemon once, its log in run-N.log
	$bot daemon --config "$work/printkbot.conf" --once 2>"$work/run-$1.log" ||
		fail "run $1: daemon --once" "$work/run-$1.log"
}
logged() { grep -q -- "$2" "$work/run-$1.log"; }
bot_mails() {  # USER: the bot's mails in USER's mailbox
	grep -l '^X-Printkbot:' "$work/mail/$1/Maildir/new/"* "$work/mail/$1/Maildir/cur/"* 2>/dev/null | wc -l
}

jane="Jane Dev <jane@example.org>"
e820="[PATCH] x86/e820: say the PCI gap is free"
devtmpfs="[PATCH] devtmpfs: report initialization at notice level"

# 1. serial: one change, a no-visible-change, a patch no base takes; quiet: a change
send p1 "$jane" serial@example.org "$e820" text-change
send p2 "$jane" serial@example.org "[PATCH] initramfs: use pr_info for the unpacking message" pure-conversion
send p3 "$jane" serial@example.org "[PATCH] devtmpfs: a fixture that applies to no base" base-none
# the devtmpfs patch twice (quiet now, serial in 2), the same bytes: one build serves both
DATE="Tue, 1 Dec 2026 10:00:00 +0000" send p4 "$jane" quiet@example.org "$devtmpfs" level-change "" \
	"List-Id: Quiet list <quiet.example.org>"
wait_mail serial 3
wait_mail quiet 1
run 1
check "run 1: 4 patches tested" test "$(grep -c 'done: 1 patch: ' "$work/run-1.log")" = 4
check "run 1: the change to serial is mailed" logged 1 "<p1@example.org>: console-changed: mailed (console-changed:"
check "run 1: a no-visible-change is not" \
	logged 1 "<p2@example.org>: no-visible-change: no mail (no-visible-change): the kernel prints what it printed, and \[list serial\] (by its To/Cc) mails the author's changes only"
check "run 1: a patch no base takes is not: the bot's limit" \
	logged 1 "<p3@example.org>: does-not-apply: no mail (does-not-apply): no base the bot has takes it"
check "run 1: a list without a group gets nothing" \
	logged 1 "<p4@example.org>: console-changed: no mail (console-changed): a list with no \[list\] group (\[daemon\] reply_on = off): reply = off"
check "Jane has one mail" wait_mail jane 1
check "serial has it (Cc)" wait_mail serial 4
sleep 2
check "quiet has none of the bot's" test "$(bot_mails quiet)" = 0
check "Jane still has one" test "$(bot_mails jane)" = 1

# 2. a resend of p1 (the same effect) and the devtmpfs patch to serial: neither is mailed
send p1-resend "$jane" serial@example.org "[PATCH RESEND] x86/e820: say the PCI gap is free" text-change
DATE="Tue, 1 Dec 2026 10:00:00 +0000" send p5 "$jane" serial@example.org "$devtmpfs" level-change
wait_mail serial 6
run 2
check "run 2: the resend is not mailed: once per change" \
	logged 2 "<p1-resend@example.org>: console-changed: no mail (console-changed): the same effect as \"\[PATCH\] x86/e820: say the PCI gap is free\", mailed as <printkbot-"
check "run 2: the brake holds, and says so" \
	logged 2 "<p5@example.org>: console-changed: no mail (console-changed): max_per_author_day: \[list serial\] (by its To/Cc) had 1 mail to jane@example.org in the last 24 hours (at most 1)"
sleep 2
check "run 2: Jane still has one mail" test "$(bot_mails jane)" = 1

# 3. Joe's patch to embargo: tested, its mail waits
send v1 "Joe Other <joe@example.org>" embargo@example.org "$e820" text-change
wait_mail embargo 1
run 3
check "run 3: v1's mail waits out the embargo" logged 3 "<v1@example.org>: console-changed (review [0-9]*); reply <printkbot-.*> waits out the list's embargo"
v1_reply=$(sqlite3 "$PRINTKBOT_DB" "select r.message_id from replies r join mails m on m.id = r.mail_id where m.message_id = 'v1@example.org'")
check "run 3: not in the outbox while it waits" test ! -e "$work/outbox/new/$v1_reply"

# 4. Joe's v2 inside the window replaces it
send v2 "Joe Other <joe@example.org>" embargo@example.org "[PATCH v2] x86/e820: say the PCI gap is free" \
	text-change 's/free for PCI devices/unused, free for PCI devices/'
wait_mail embargo 2
run 4
check "run 4: v1's mail replaced by the v2" logged 4 "reply not sent: replaced by v2 (job [0-9]*), which came inside the list's embargo"
check "run 4: the v2 tested, its mail waiting" logged 4 "<v2@example.org>: console-changed (review [0-9]*); reply <printkbot-.*> waits out the list's embargo"
check "run 4: the row of v1's mail says so" \
	test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from replies where message_id = '$v1_reply' and held like 'replaced by v2%'")" = 1

# 5. once the window passed, the v2's mail alone goes out
joe_has() { sleep 10; run 5; [ "$(bot_mails joe)" -ge 1 ]; }
wait_for 400 "Joe's mail, after the embargo" joe_has
sleep 2
check "Joe has one mail" test "$(bot_mails joe)" = 1
check "the mails, checked one by one" python3 - "$work" <<'PY'
import email, email.policy, glob, os, sys
from e2elib import check, done
work = sys.argv[1]
def mails(user):
    return [email.message_from_binary_file(open(p, "rb"), policy=email.policy.default)
            for p in sorted(glob.glob(os.path.join(work, "mail", user, "Maildir", "*", "*")))]
jane = [m for m in mails("jane") if m["X-Printkbot"]]
joe = [m for m in mails("joe") if m["X-Printkbot"]]
check([m["In-Reply-To"] for m in jane] == ["<p1@example.org>"], "Jane's one mail is about p1")
check("serial@example.org" in (jane[0]["Cc"] or ""), "Cc the list")
check("verdict: console-changed" in jane[0].get_content(), "with its verdict")
check([m["In-Reply-To"] for m in joe] == ["<v2@example.org>"], "Joe's one mail is about v2")
for m in jane + joe:
    n = len(m.get_content().splitlines())
    check(n <= 120, "%s: %d lines, within max_reply_lines" % (m["Subject"], n))
done()
PY
check "no bot mail in quiet's mailbox, ever" test "$(bot_mails quiet)" = 0
check "the store: 8 tested patches, 2 mails sent" \
	test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) || ' ' || count(sent) from replies")" = "8 2"

checks_end "$work"/run-[1-4].log
passed
