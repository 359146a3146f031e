# mailservers.sh - sourced by the daemon's end-to-end tests after lib.sh: a
# real Postfix and a real Dovecot on loopback, configured under $work and
# started by the test itself (no system configuration is touched; the
# daemons run as the test's own instances and are stopped by mail_stop,
# which mail_start registers with at_exit).
#
#   mail_need          install postfix, dovecot-imapd and git-email, or exit 0 with SKIP
#                      (with mail_dkim=yes, opendkim and opendkim-tools too)
#   mail_start         Postfix SMTP on $smtp_port (plain, for git send-email),
#                      submission on $sub_port (STARTTLS + AUTH, for the bot),
#                      Dovecot IMAP on $imap_port (STARTTLS offered; imap_tls=no
#                      before mail_start: none, as a server or a man in the middle
#                      that strips it); users list, jane, bot and those of
#                      $mail_users (password pw) in the domain example.org,
#                      mail in $work/mail/<user>/Maildir;
#                      $work/tls.crt is the certificate of both.
#                      mail_dkim=yes before mail_start: two OpenDKIM milters as
#                      well.  One signs (d=example.org, selector test) what is
#                      submitted on $sign_port (STARTTLS + AUTH as a user), which
#                      Postfix then relays to $smtp_port, as the sender's own
#                      server would; the other verifies every mail $smtp_port
#                      receives and adds "Authentication-Results: mx.example.org;
#                      dkim=..." on top of it, none too (the bot's own server).
#                      There is no DNS here: the verifier reads the public key
#                      from a file (OpenDKIM's TestPublicKeys).
#   postfix_stop / postfix_start   the SMTP server down and up again
#   mail_stop          both down (at the test's exit)
#   wait_mail USER N   until USER's Maildir holds N mails (else 1, saying so)
#   mail_send_patches REPO FILE...   git send-email of the files from REPO, as
#                      Jane Dev to the list, through Postfix (a failure fails
#                      the test)

mail_need() {
	local missing=
	for p in postfix dovecot-imapd git-email openssl sqlite3 ${mail_dkim:+opendkim opendkim-tools}; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "installing:$missing"
	echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections 2>/dev/null || true
	if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing; } >"$work/apt.log" 2>&1; then
		tail -5 "$work/apt.log"
		skip "cannot install$missing (apt-get failed, see above); the mail servers are needed"
	fi
}

# The two OpenDKIM milters of mail_dkim=yes (see above), each on a socket
# in $dkim_dir.  OpenDKIM reads no file under a directory others may
# write, as /tmp (and so $work) is: their own is made in /run, root's,
# and removed at the test's exit.
dkim_start() {
	local d
	d=$(mktemp -d /run/printkbot-dkim.XXXXXX)
	dkim_dir=$d
	at_exit rm -rf "$d"
	chmod 755 "$d"   # Postfix's smtpd reaches the sockets as user postfix
	opendkim-genkey -b 2048 -d example.org -s test -D "$d" >"$work/dkim-genkey.log" 2>&1 ||
		fail "opendkim-genkey" "$work/dkim-genkey.log"
	# the TXT record as DNS would serve it: the quoted strings of test.txt, joined
	printf 'test._domainkey.example.org %s\n' "$(grep -o '"[^"]*"' "$d/test.txt" | tr -d '"\n')" >"$d/keys"
	cat >"$d/sign.conf" <<EOF
Mode s
Domain example.org
Selector test
KeyFile $d/test.private
Canonicalization relaxed/relaxed
Socket local:$d/sign.sock
UMask 000
PidFile $d/sign.pid
Syslog no
EOF
	# 127.0.0.1 is no internal host of the verifier: it checks all it receives
	cat >"$d/verify.conf" <<EOF
Mode v
AuthservID mx.example.org
AlwaysAddARHeader yes
TestPublicKeys $d/keys
InternalHosts 192.0.2.1
Socket local:$d/verify.sock
UMask 000
PidFile $d/verify.pid
Syslog no
EOF
	opendkim -x "$d/sign.conf" >"$work/dkim-sign.log" 2>&1 ||
		fail "opendkim (signer) does not start" "$work/dkim-sign.log"
	opendkim -x "$d/verify.conf" >"$work/dkim-verify.log" 2>&1 ||
		fail "opendkim (verifier) does not start" "$work/dkim-verify.log"
	wait_for 15 "the OpenDKIM sockets" test -S "$d/sign.sock" -a -S "$d/verify.sock"
}

dkim_stop() {
	local p
	for p in "$dkim_dir/sign.pid" "$dkim_dir/verify.pid"; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
	done
}

mail_start() {
	smtp_port=$(free_port); sub_port=$(free_port); imap_port=$(free_port)
	[ -z "${mail_dkim:-}" ] || sign_port=$(free_port)
	mail_uid=$(id -u nobody); mail_gid=$(id -g nobody)
	chmod 755 "$work"
	mkdir -p "$work/mail" "$work/postfix" "$work/pfq" "$work/pfdata" "$work/dovecot/run" "$work/dovecot/state"
	for u in list jane bot ${mail_users:-}; do
		mkdir -p "$work/mail/$u/Maildir/"{new,cur,tmp}
	done
	chown -R "$mail_uid:$mail_gid" "$work/mail"
	chown postfix "$work/pfdata"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
		-keyout "$work/tls.key" -out "$work/tls.crt" >/dev/null 2>&1
	chmod 644 "$work/tls.key"

	for u in list jane bot ${mail_users:-}; do
		echo "$u:{PLAIN}pw"
	done >"$work/dovecot/passwd"
	cat >"$work/dovecot/dovecot.conf" <<EOF
base_dir = $work/dovecot/run
state_dir = $work/dovecot/state
log_path = $work/dovecot/log
protocols = imap
listen = 127.0.0.1
$(if [ "${imap_tls:-yes}" = yes ]; then
	printf 'ssl = yes\nssl_cert = <%s\nssl_key = <%s\n' "$work/tls.crt" "$work/tls.key"
else
	echo "ssl = no"
fi)
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:$work/mail/%n/Maildir
first_valid_uid = 1
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%n $work/dovecot/passwd
}
userdb {
  driver = static
  args = uid=$mail_uid gid=$mail_gid home=$work/mail/%n
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $imap_port
  }
  inet_listener imaps {
    port = 0
  }
}
service auth {
  unix_listener $work/dovecot/auth-postfix {
    mode = 0666
  }
}
EOF
	mail_started=1
	at_exit mail_stop
	dovecot -c "$work/dovecot/dovecot.conf"

	cat >"$work/postfix/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $work/pfq
data_directory = $work/pfdata
mail_owner = postfix
setgid_group = postdrop
maillog_file = $work/postfix.log
maillog_file_prefixes = $work
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
myhostname = mail.example.org
mydomain = example.org
myorigin = example.org
mydestination =
mynetworks = 127.0.0.0/8
alias_maps =
alias_database =
local_recipient_maps =
virtual_mailbox_domains = example.org
virtual_mailbox_base = $work/mail
virtual_mailbox_maps = texthash:$work/postfix/vmailbox
virtual_uid_maps = static:$mail_uid
virtual_gid_maps = static:$mail_gid
virtual_minimum_uid = 1
smtpd_recipient_restrictions = permit_mynetworks, permit_sasl_authenticated, reject_unauth_destination
smtpd_tls_cert_file = $work/tls.crt
smtpd_tls_key_file = $work/tls.key
smtpd_tls_security_level = may
smtpd_sasl_type = dovecot
smtpd_sasl_path = $work/dovecot/auth-postfix
smtpd_banner = mail.example.org ESMTP printkbot test
message_size_limit = 20000000
EOF
	for u in list jane bot ${mail_users:-}; do
		echo "$u@example.org $u/Maildir/"
	done >"$work/postfix/vmailbox"
	if [ -n "${mail_dkim:-}" ]; then
		dkim_start
		at_exit dkim_stop
	fi
	cat >"$work/postfix/master.cf" <<EOF
127.0.0.1:$smtp_port inet n - n - - smtpd
$([ -z "${mail_dkim:-}" ] || echo "  -o smtpd_milters=unix:$dkim_dir/verify.sock")
$([ -z "${mail_dkim:-}" ] || dkim_services)
127.0.0.1:$sub_port inet n - n - - smtpd
  -o smtpd_tls_security_level=encrypt
  -o smtpd_sasl_auth_enable=yes
  -o smtpd_tls_auth_only=yes
  -o smtpd_client_restrictions=permit_sasl_authenticated,reject
  -o smtpd_recipient_restrictions=permit_sasl_authenticated,reject
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
virtual   unix  -       n       n       -       -       virtual
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
EOF
	postfix_start
	[ -z "${mail_dkim:-}" ] || wait_port "$sign_port"
}

# master.cf's lines of mail_dkim=yes: the signing submission port and the
# transport that relays what it signed to $smtp_port.
dkim_services() {
	cat <<EOF
127.0.0.1:$sign_port inet n - n - - smtpd
  -o smtpd_tls_security_level=encrypt
  -o smtpd_sasl_auth_enable=yes
  -o smtpd_tls_auth_only=yes
  -o smtpd_client_restrictions=permit_sasl_authenticated,reject
  -o smtpd_recipient_restrictions=permit_sasl_authenticated,reject
  -o smtpd_milters=unix:$dkim_dir/sign.sock
  -o content_filter=tomx:[127.0.0.1]:$smtp_port
tomx      unix  -       -       n       -       -       smtp
  -o myhostname=out.example.org
EOF
}

postfix_start() {
	postfix -c "$work/postfix" start >>"$work/postfix-ctl.log" 2>&1 ||
		fail "postfix does not start" "$work/postfix-ctl.log"
	wait_port "$smtp_port"
	wait_port "$sub_port"
}

postfix_stop() {
	postfix -c "$work/postfix" stop >>"$work/postfix-ctl.log" 2>&1 || true
	# stop returns before the master is gone: wait until the port is closed
	poll 10 port_closed "$sub_port" || true
}

port_closed() { ! port_open "$1"; }

# The bot's [smtp] group for the Postfix mail_start() runs: submission with
# STARTTLS required and AUTH as user bot, trusting the run's own certificate.
mail_smtp_group() {
	printf '[smtp]\nurl = smtp://127.0.0.1:%s\nuser = bot\npassword_file = %s/bot-password\ntls = required\nca_file = %s/tls.crt\n' \
		"$sub_port" "$work" "$work"
}

mail_stop() {
	[ -n "${mail_started:-}" ] || return 0
	postfix_stop
	doveadm -c "$work/dovecot/dovecot.conf" stop >/dev/null 2>&1 ||
		kill "$(cat "$work/dovecot/run/master.pid" 2>/dev/null)" 2>/dev/null || true
}

mails_at_least() {  # user n
	[ "$(ls "$work/mail/$1/Maildir/new" "$work/mail/$1/Maildir/cur" | grep -vc -e '^$' -e ':$')" -ge "$2" ]
}

# Wait until user's Maildir holds n mails (Postfix delivers asynchronously).
wait_mail() {
	local user=$1 n=$2
	poll 30 mails_at_least "$user" "$n" && return 0
	echo "FAIL $user has $(ls "$work/mail/$user/Maildir/new" | wc -l) mail(s), not $n"
	tail -20 "$work/postfix.log"
	return 1
}

mail_send_patches() {
	local repo=$1
	shift
	git -C "$repo" send-email --quiet --confirm=never --suppress-cc=all --no-validate \
		--smtp-server=127.0.0.1 --smtp-server-port="$smtp_port" \
		--from="Jane Dev <jane@example.org>" --to=list@example.org "$@" >"$work/send-email.log" 2>&1 ||
		fail "git send-email" "$work/send-email.log"
}
