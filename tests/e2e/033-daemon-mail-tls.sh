#!/usr/bin/env bash
# End to end: no login in clear, and an IMAP source that starts now.  A
# real Dovecot on loopback offers no STARTTLS (ssl = no), as a server or a
# man in the middle that strips it would; the list's mailbox holds 2 mails.
#   1. tls = required (said, on loopback): `daemon --once` fails to read the
#      source with an error naming TLS, and Dovecot's log shows the
#      connection with no auth attempt and no login;
#   2. no tls key (loopback: try) with a login: the same, try never sends a
#      login in clear;
#   3. a password_file others may read: the daemon does not start, the
#      error names the file and its mode;
#   4. tls = off (said on purpose): the login goes, and the control shows
#      what 1 and 2 would have logged; start = all reads both mails;
#   5. a second IMAP source on the same mailbox with the default start
#      (now) reads none of the mails there at its first look, then exactly
#      the one delivered after;
#   7. a second Dovecot that offers STARTTLS and cannot do TLS (its key is
#      another certificate's: it answers STARTTLS OK, then BYE in clear):
#      the error says it accepted STARTTLS and TLS failed, not that it
#      offers none, and its log shows the TLS failure and no login.
# No kernel is built: the daemon runs with --queue-only.
source "$(dirname "$0")/lib.sh"
source tests/e2e/mailservers.sh

mail_need
imap_tls=no
mail_start
echo "dovecot imap :$imap_port without STARTTLS, postfix smtp :$smtp_port"

send() {  # n: a mail to the list through Postfix
	python3 - "$smtp_port" "$1" <<'PY'
import smtplib, sys
from email.message import EmailMessage
m = EmailMessage()
m["From"], m["To"] = "jane@example.org", "list@example.org"
m["Subject"] = "hello %s" % sys.argv[2]
m["Message-ID"] = "<hello-%s@example.org>" % sys.argv[2]
m.set_content("just mail, no patch\n")
with smtplib.SMTP("127.0.0.1", int(sys.argv[1])) as s:
    s.send_message(m)
PY
}
send 1
send 2
wait_mail list 2

echo pw >"$work/list-password"
chmod 600 "$work/list-password"
config() {  # file, then the source's extra lines
	local f=$1
	shift
	{
		printf '[daemon]\nfrom = printkbot <bot@example.org>\nreply_on = never\noutbox = %s\n\n' "$work/outbox"
		printf '[source list]\ntype = imap\nurl = imap://127.0.0.1:%s/INBOX\nuser = list\n' "$imap_port"
		printf 'password_file = %s\nstart = all\n' "$work/list-password"
		printf '%s\n' "$@"
	} >"$f"
}
# Dovecot's log, counted: logins of list, and connections that ended without an auth attempt.
logins() { grep -c 'imap-login: .*Login: user=<list>' "$work/dovecot/log" || true; }
no_auth() { grep -c 'imap-login: .*Disconnected.*(no auth attempts' "$work/dovecot/log" || true; }
logins_reach() { [ "$(logins)" -ge "$1" ]; }
no_auth_reach() { [ "$(no_auth)" -ge "$1" ]; }

# 1. tls = required: nothing sent in clear.
config "$work/required.conf" "tls = required"
$bot daemon --config "$work/required.conf" --once --queue-only 2>"$work/run1.log" ||
	fail "run 1: daemon --once" "$work/run1.log"
check "run 1: the source fails, and says it is TLS" \
	grep -q "source list: no TLS: imap://127.0.0.1:$imap_port/ offers no STARTTLS and tls = required" "$work/run1.log"
check "run 1: no mail read" test "$(sqlite3 "$PRINTKBOT_DB" "select count(*) from mails")" = 0
check "run 1: Dovecot saw a connection end without an auth attempt" poll 5 no_auth_reach 1
check "run 1: and no login" test "$(logins)" = 0

# 2. The loopback default (try), with a login: the same.
config "$work/default.conf"
before=$(no_auth)
$bot daemon --config "$work/default.conf" --once --queue-only 2>"$work/run2.log" ||
	fail "run 2: daemon --once" "$work/run2.log"
check "run 2: try with a login refuses too" \
	grep -q "source list: no TLS: .* tls = try with a login, so no login was sent in clear" "$work/run2.log"
check "run 2: Dovecot saw no auth attempt again" poll 5 no_auth_reach $((before + 1))
check "run 2: and no login" test "$(logins)" = 0

# 3. A password file others may read.
chmod 644 "$work/list-password"
if $bot daemon --config "$work/default.conf" --once --queue-only 2>"$work/run3.log"; then
	check "run 3: the daemon refuses a password file others may read" false
else
	check "run 3: the daemon refuses a password file others may read, naming it and its mode" \
		grep -q "password_file: $work/list-password is readable by others (mode 0644): chmod 600 it" "$work/run3.log"
fi
chmod 600 "$work/list-password"

# 4. tls = off, said: the login goes in clear, as the control of 1 and 2.
config "$work/off.conf" "tls = off"
$bot daemon --config "$work/off.conf" --once --queue-only 2>"$work/run4.log" ||
	fail "run 4: daemon --once" "$work/run4.log"
check "run 4: tls = off logs in" poll 5 logins_reach 1
check "run 4: and start = all reads both mails" grep -q "source list: 2 new mail(s)" "$work/run4.log"

# 5. The same mailbox as a new source that starts now (the default).
cat >"$work/now.conf" <<EOF
[store]
path = $work/now.db

[daemon]
from = printkbot <bot@example.org>
reply_on = never
outbox = $work/outbox

[source list-now]
type = imap
url = imap://127.0.0.1:$imap_port/INBOX
user = list
password_file = $work/list-password
tls = off
EOF
$bot daemon --config "$work/now.conf" --once --queue-only 2>"$work/run5.log" ||
	fail "run 5: daemon --once" "$work/run5.log"
check "run 5: the first look is said" grep -q "source list-now: first look, start = now" "$work/run5.log"
check "run 5: and reads none of the 2 mails there" test "$(sqlite3 "$work/now.db" "select count(*) from mails")" = 0
send 3
wait_mail list 3
$bot daemon --config "$work/now.conf" --once --queue-only 2>"$work/run6.log" ||
	fail "run 6: daemon --once" "$work/run6.log"
check "run 6: exactly the mail delivered since" grep -q "source list-now: 1 new mail(s)" "$work/run6.log"
check "run 6: which is hello-3" \
	test "$(sqlite3 "$work/now.db" "select group_concat(message_id) from mails")" = hello-3@example.org

# 7. STARTTLS offered, TLS broken: the first Dovecot's config with ssl on, a
#    key that is not its certificate's, its own port, dirs and auth socket.
broken_port=$(free_port)
mkdir -p "$work/dovecot2/run" "$work/dovecot2/state"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	-keyout "$work/other.key" -out "$work/other.crt" >/dev/null 2>&1
chmod 644 "$work/other.key"
sed -e "s#$work/dovecot/\(run\|state\|log\|auth-postfix\)#$work/dovecot2/\1#" \
	-e "s|port = $imap_port|port = $broken_port|" \
	-e "s|^ssl = no\$|ssl = yes\nssl_cert = <$work/tls.crt\nssl_key = <$work/other.key|" \
	"$work/dovecot/dovecot.conf" >"$work/dovecot2.conf"
grep -q "port = $broken_port" "$work/dovecot2.conf" && grep -q '^ssl = yes' "$work/dovecot2.conf" ||
	fail "run 7: the second Dovecot's config" "$work/dovecot2.conf"
at_exit doveadm -c "$work/dovecot2.conf" stop
dovecot -c "$work/dovecot2.conf"
poll 10 port_open "$broken_port" || fail "run 7: the second Dovecot does not listen" "$work/dovecot2/log"
sed "s|imap://127.0.0.1:$imap_port/|imap://127.0.0.1:$broken_port/|" "$work/required.conf" >"$work/broken.conf"
$bot daemon --config "$work/broken.conf" --once --queue-only 2>"$work/run7.log" ||
	fail "run 7: daemon --once" "$work/run7.log"
check "run 7: the error says STARTTLS was accepted and TLS failed" \
	grep -q "source list: no TLS: imap://127.0.0.1:$broken_port/ accepted STARTTLS, then TLS failed (.*), so no login was sent" "$work/run7.log"
lacks() { ! grep -q "$1" "$2"; }
check "run 7: not that it offers no STARTTLS" lacks "offers no STARTTLS" "$work/run7.log"
check "run 7: Dovecot could not do TLS" grep -q "imap-login: .*TLS initialization failed" "$work/dovecot2/log"
check "run 7: and saw no login" lacks "Login: user=<list>" "$work/dovecot2/log"

checks_end "$work/run1.log" "$work/run2.log" "$work/run3.log" "$work/run4.log" "$work/run5.log" \
	"$work/run6.log" "$work/run7.log" "$work/dovecot/log" "$work/dovecot2/log"
passed
