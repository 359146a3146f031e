#!/usr/bin/env bash
# End to end: the mailing-list bot against a real Postfix and a real Dovecot
# on loopback, both started by this test (tests/e2e/mailservers.sh).
#
# A developer's 2-patch series (one patch changes a boot message, one is a
# pure printk -> pr_info conversion), made with git format-patch
# --cover-letter --base, is sent with git send-email through Postfix to the
# list's mailbox.  Then:
#   1. Postfix is stopped and `printkbot daemon --once` reads the list over
#      IMAP (STARTTLS, then the login), tests both patches and renders both
#      replies, which cannot be sent: they wait in the queue, each a file in
#      the outbox Maildir's new/;
#   2. Postfix is back and a second --once sends them (STARTTLS, AUTH) with
#      the Message-IDs they were rendered with, and moves both files to cur/;
#   3. the author's mailbox has exactly one reply per patch, threaded under
#      it (Subject, In-Reply-To, References), To the author and Cc the list,
#      Auto-Submitted, with the kernel test robot's head (base:, patch
#      link: in the source's archive, config:, compiler:, reproduce:), the
#      right verdict and the base-commit note; the reproduce commands of
#      patch 2/2's reply run as written, Debian's b4 reading the list's
#      mails from an mbox (b4 am -m) where it would fetch them from lore,
#      and `printkbot test -` tests both patches from b4's output;
#   4. a third --once, which now finds the bot's own replies in the list's
#      mailbox, sends nothing (loop guard, Message-IDs seen before); one
#      reply put back in new/ (a crash after the send was recorded, before
#      the move) is moved to cur/ again, not sent a second time.
source "$(dirname "$0")/lib.sh"
source tests/e2e/mailservers.sh

mail_need
# b4 runs the replies' reproduce commands (step 5)
command -v b4 >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q b4 >"$work/apt-b4.log" 2>&1 ||
	skip "cannot install b4 (apt-get failed: $(tail -1 "$work/apt-b4.log")); the reproduce commands need it"
lab_setup
mail_start
echo "postfix smtp :$smtp_port, submission :$sub_port, dovecot imap :$imap_port"

# The developer's tree: the two files from the bot's base, one commit per fixture.
dev=$work/dev
git init -q "$dev"
export GIT_AUTHOR_NAME="Jane Dev" GIT_AUTHOR_EMAIL=jane@example.org
export GIT_COMMITTER_NAME="Jane Dev" GIT_COMMITTER_EMAIL=jane@example.org
for f in arch/x86/kernel/e820.c init/initramfs.c; do
	mkdir -p "$dev/$(dirname "$f")"
	lab_git show "printkbot-base:$f" >"$dev/$f"
done
git -C "$dev" add -A
git -C "$dev" commit -qm "base"
for fix in text-change pure-conversion; do
	git -C "$dev" apply "$src/tests/data/test/$fix.patch"
	git -C "$dev" commit -qam "$(sed -n 's/^Subject: \[PATCH\] //p' "tests/data/test/$fix.patch")" \
		-m "A fixture of printkbot's tests." -m "Signed-off-by: Jane Dev <jane@example.org>"
done
git -C "$dev" format-patch -q --cover-letter --thread=shallow --base=HEAD~2 -o "$work/series" HEAD~2
sed -i -e 's/\*\*\* SUBJECT HERE \*\*\*/printk: two logging changes/' \
	-e 's/\*\*\* BLURB HERE \*\*\*/One message changes, one call is converted./' "$work/series/0000-cover-letter.patch"
mail_send_patches "$dev" "$work/series"/*.patch
wait_mail list 3

echo pw >"$work/bot-password"
chmod 600 "$work/bot-password"   # a password file others may read is refused
export PK_TEST_IMAP_PASSWORD=pw
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

$(mail_smtp_group)

[source linux-serial]
type = imap
# the series is in the mailbox before the bot first looks; STARTTLS as for SMTP
start = all
tls = required
ca_file = $work/tls.crt
url = imap://127.0.0.1:$imap_port/INBOX
user = list
password_env = PK_TEST_IMAP_PASSWORD
list = list@example.org
archive = https://lists.example.org/list/
EOF

# 1. SMTP down: both patches tested, both replies wait.
postfix_stop
$bot daemon --config "$work/printkbot.conf" --once 2>"$work/run1.log" || fail "run 1: daemon --once" "$work/run1.log"
$bot queue --config "$work/printkbot.conf" >"$work/queue1.txt"
check "run 1: the series was one job of 2 patches" grep -q "done: 2 patches: console-changed, no-visible-change" "$work/run1.log"
check "run 1: both replies wait in the queue (SMTP down)" \
	test "$(grep -c '^[0-9]* *reply *queued' "$work/queue1.txt")" = 2
check "run 1: and say why" grep -q "not sent (attempt 1)" "$work/queue1.txt"
check "run 1: the author got nothing" test -z "$(ls "$work/mail/jane/Maildir/new")"
check "run 1: both replies are files in outbox/new" test "$(ls "$work/outbox/new" | wc -l)" = 2
check "run 1: outbox/cur and tmp are empty" test -z "$(ls -A "$work/outbox/cur")$(ls -A "$work/outbox/tmp")"
check "run 1: the queue counts them" grep -q "^2 replies waiting in the outbox $work/outbox/new" "$work/queue1.txt"
for f in "$work/outbox/new"/*; do
	mid=$(sed -n 's/^Message-ID: <\(.*\)>\r\?$/\1/Ip' "$f" | head -1)
	check "run 1: $(basename "$f") is named after its Message-ID" test "$(basename "$f")" = "$mid"
	check "run 1: and the store has that reply" \
		test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from replies where message_id = '$mid' and sent is null")" = 1
done

# 2. SMTP back: the replies go out as rendered.
postfix_start
sleep 1.1   # retry_min
$bot daemon --config "$work/printkbot.conf" --once 2>"$work/run2.log" || fail "run 2: daemon --once" "$work/run2.log"
check "run 2: two replies sent" test "$(grep -c 'done: <printkbot-.*> sent to' "$work/run2.log")" = 2
check "run 2: outbox/new is empty" test -z "$(ls "$work/outbox/new")"
check "run 2: both files are in outbox/cur, flagged seen" \
	test "$(ls "$work/outbox/cur" | grep -c ':2,S$')" = 2
check "run 2: the queue counts none waiting" \
	sh -c "'$bot' queue --config '$work/printkbot.conf' | grep -q '^0 replies waiting in the outbox'"
check "the author's mailbox has the 2 replies" wait_mail jane 2
check "the list's mailbox has them too (Cc)" wait_mail list 5

# 3. One reply per patch, threaded, with the verdicts and the head.
base_short=$(lab_git rev-parse --short=12 printkbot-base)
gcc_line=$(gcc --version | head -1)
check "the replies, checked one by one (above)" python3 - "$work" "$base_short" "$gcc_line" <<'PY'
import email, email.policy, glob, os, re, sys
from e2elib import check, done
work, base_short, gcc_line = sys.argv[1:4]
def load(user):
    out = []
    for p in sorted(glob.glob(os.path.join(work, "mail", user, "Maildir", "new", "*")) +
                    glob.glob(os.path.join(work, "mail", user, "Maildir", "cur", "*"))):
        out.append(email.message_from_binary_file(open(p, "rb"), policy=email.policy.default))
    return out
posted = {m["Message-ID"].strip(): m for m in load("list") if not m["X-Printkbot"]}
cover = [m for m in posted.values() if "0/2" in m["Subject"]][0]
patches = {m["Message-ID"].strip(): m for m in posted.values() if "0/2" not in m["Subject"]}
replies = load("jane")
check(len(replies) == 2, "the author got exactly 2 replies (%d)" % len(replies))
byparent = {}
for r in replies:
    byparent.setdefault(r["In-Reply-To"].strip(), []).append(r)
check(sorted(byparent) == sorted(patches), "one reply In-Reply-To each patch")
for mid, p in patches.items():
    r = byparent.get(mid, [None])[0]
    if r is None:
        continue
    body = r.get_content()
    subj = p["Subject"]
    check(r["Subject"] == "Re: " + subj, "Subject: Re: %s (%s)" % (subj, r["Subject"]))
    refs = r["References"].split()
    check(refs[-1] == mid and cover["Message-ID"].strip() in refs, "References end with the patch, hold the cover")
    check("jane@example.org" in r["To"] and "list@example.org" in (r["Cc"] or ""), "To the author, Cc the list")
    check(r["From"].addresses[0].addr_spec == "bot@example.org" and r["X-Printkbot"], "From the bot, X-Printkbot set")
    check(r["Message-ID"].startswith("<printkbot-") and r.get_content_charset() == "utf-8" and
          r.get_content_type() == "text/plain", "a fixed printkbot Message-ID, plain UTF-8 text")
    want = "console-changed" if "PCI gap" in subj else "no-visible-change"
    check("verdict: " + want in body, "%s: verdict %s in the body" % (subj, want))
    check("base-commit" in body and "tested on printkbot-base instead" in " ".join(body.split()),
          "the unknown base-commit is named, and the base used instead")
    check(r["Auto-Submitted"] == "auto-generated", "Auto-Submitted: auto-generated (RFC 3834)")
    lines = body.splitlines()
    def head(key):
        return [l[len(key) + 1:].strip() for l in lines if l.startswith(key + ":")]
    version = re.search(r"Linux (6\.12\.\d+)", body)
    check(version is not None and len(head("base")) == 1 and
          re.fullmatch(r"Linux %s \(Debian linux-source-6\.12 %s[^ ()]*\)" % (re.escape(version.group(1)),
                                                                          re.escape(version.group(1))),
                       head("base")[0]),
          "base: the kernel as a person names it, with its Debian package version (%s)" % head("base"))
    check(head("patch link") == ["https://lists.example.org/list/%s/" % mid.strip("<>")],
          "patch link: the source's archive and the patch's Message-ID (%s)" % head("patch link"))
    check(head("patch subject") == [subj], "patch subject: the patch's")
    check(re.fullmatch(r"x86_64 tinyconfig \+ qemu/kernel\.config [0-9a-f]{12} \(below\)",
                       (head("config") or [""])[0]) is not None and "        CONFIG_PRINTK_INDEX=y" in lines,
          "config: tinyconfig + the fragment, whose lines end the mail (%s)" % head("config"))
    check(head("compiler") == [gcc_line], "compiler: gcc --version's first line (%s)" % head("compiler"))
    at = lines.index("reproduce:") if "reproduce:" in lines else len(lines)
    steps = []
    for l in lines[at + 1:]:
        if not l.startswith("        "):
            break
        steps.append(l.strip())
    n = 1 if "PCI gap" in subj else 2
    want = "b4 am -o - %s -- %s | printkbot test -" % ("-P 1" if n == 1 else "-P 1-2", mid.strip("<>"))
    check(steps == ["printkbot setup", want], "reproduce: printkbot setup, then %s (%s)" % (want, steps))
    with open(os.path.join(work, "reproduce-%d.sh" % n), "w") as f:
        f.write("\n".join(steps) + "\n")
    check("https://lore" not in body, "no lore link made up: the archive is the source's")
    check(body.rstrip().endswith("compares what they print.") and "\n-- \nprintkbot " in body,
          "the signature names printkbot")
    long = [l for l in lines if len(l) > 72 and not l.startswith(("    ", "| ", "patch link:", "patch subject:"))]
    check(not long, "prose within 72 columns (%s)" % long[:1])
    check(("Reported-by:" in body) == False, "no Reported-by: block: nothing to fix")
done()
PY

# 4. The bot's own replies are now in the list's mailbox: nothing happens.
# And one reply back in new/, as a crash between recording the send and the
# move would leave it: moved to cur/ at start-up, not sent again.
crashed=$(ls "$work/outbox/cur" | head -1)
mv "$work/outbox/cur/$crashed" "$work/outbox/new/${crashed%:2,S}"
before=$(sqlite3 "$PRINTKBOT_DB" "select count(*) from jobs")
$bot daemon --config "$work/printkbot.conf" --once 2>"$work/run3.log" || fail "run 3: daemon --once" "$work/run3.log"
check "run 3: the bot's replies are skipped by the loop guard" \
	test "$(grep -c 'skipped: our own mail (loop guard)' "$work/run3.log")" = 2
check "run 3: no job queued" test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from jobs")" = "$before"
check "run 3: the reply left in new/ by the crash is moved, not sent" \
	grep -q "<${crashed%:2,S}>: sent before the daemon stopped: moved to the outbox's cur/" "$work/run3.log"
check "run 3: outbox/new is empty, cur holds both" \
	test -z "$(ls "$work/outbox/new")" -a "$(ls "$work/outbox/cur" | wc -l)" = 2
sleep 2
check "run 3: the author still has 2 mails" test "$(ls "$work/mail/jane/Maildir/new" | wc -l)" = 2
check "IMAP position kept: run 3 read only the 2 new mails" grep -q "linux-serial: 2 new mail(s), 0 kept" "$work/run3.log"

# 5. The reproduce commands of patch 2/2's reply, as written, but for b4's -m:
# it reads the list's mails from an mbox (what lore would serve) instead of
# fetching them.  `printkbot` is this checkout's.
python3 - "$work/mail/list/Maildir" "$work/lore.mbox" <<'PY'
import mailbox, sys
out = mailbox.mbox(sys.argv[2])
for m in mailbox.Maildir(sys.argv[1], factory=None):
    if not m["X-Printkbot"]:
        out.add(m)
out.flush()
PY
mkdir -p "$work/bin"
ln -s "$bot" "$work/bin/printkbot"
sed -i "s|^b4 am |b4 am -m $work/lore.mbox |" "$work/reproduce-2.sh"
check "reproduce: the b4 line is there to run" grep -q "^b4 am -m $work/lore.mbox -o - -P 1-2 " "$work/reproduce-2.sh"
rc=0
PATH=$work/bin:$PATH bash -e "$work/reproduce-2.sh" >"$work/repro.out" 2>"$work/repro.err" || rc=$?
check "reproduce: ran as written, exit 1 (patch 1 changes the console)" test "$rc" = 1
check "reproduce: printkbot test - read both patches from b4" \
	grep -q "^printkbot: -: testing 2/2: " "$work/repro.err"
check "reproduce: the same verdicts as the replies" \
	test "$(grep '^verdict:' "$work/repro.out" | tr '\n' ' ')" = "verdict: console-changed verdict: no-visible-change "

checks_end "$work/run1.log" "$work/run2.log" "$work/run3.log" "$work/repro.err"
passed
