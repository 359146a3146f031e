/*
 * test-mailtls.c - no login in clear: an SMTP and an IMAP server on
 * loopback that offer AUTH but no STARTTLS (a downgrading man in the
 * middle looks just like them), each a script of answers in a thread
 * that writes down every line it hears.  With tls = required, or try and
 * a login, printkbot hangs up after EHLO / CAPABILITY with an error that
 * names TLS, and the server never hears AUTH or LOGIN; with try and no
 * login the mail goes in clear; only tls = off sends the login in clear.
 * And a send that the caller stops while the server says nothing ends at
 * once, not after the timeout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "intake/intake.h"
#include "report/smtp.h"
#include "store/store.h"
#include "store/queue.h"

/* An answer: to a line whose command starts with prefix (NULL: any line). */
struct rule {
	const char *prefix;
	const char *reply;   /* for IMAP, "%s" is the line's tag */
};

struct fake {
	int fd;
	int port;
	bool imap;                  /* lines are "TAG COMMAND" */
	const char *greeting;
	const struct rule *rules;   /* ended by a NULL prefix, whose reply is the default */
	GString *heard;             /* every line received, each ending in \n */
	GThread *thread;
	gint stop;
};

static const struct rule smtp_rules[] = {
	{ "EHLO", "250-fake.example.org\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n" },
	{ "AUTH", "334 \r\n" },
	{ "AGJvdABwdw==", "235 2.7.0 ok\r\n" },   /* the answer to 334: base64 of "\0bot\0pw" */
	{ "MAIL", "250 ok\r\n" },
	{ "RCPT", "250 ok\r\n" },
	{ "DATA", "354 go on\r\n" },
	{ "QUIT", "221 bye\r\n" },
	{ NULL, "502 what\r\n" },
};

static const struct rule imap_rules[] = {
	{ "CAPABILITY", "* CAPABILITY IMAP4rev1\r\n%s OK done\r\n" },
	{ "LOGIN", "%s OK logged in\r\n" },
	{ "STATUS", "* STATUS INBOX (UIDVALIDITY 7 UIDNEXT 1)\r\n%s OK done\r\n" },
	{ "LOGOUT", "* BYE\r\n%s OK bye\r\n" },
	{ NULL, "%s BAD what\r\n" },
};

/* Answer one line; false when the conversation is over. */
static bool answer(struct fake *f, int c, const char *line, bool *in_data)
{
	g_autofree char *tag = NULL;
	g_autofree char *reply = NULL;
	const char *cmd = line;
	const struct rule *r;

	if (*in_data) {
		*in_data = strcmp(line, ".") != 0;
		/* the answer to the final dot: a rule "." (its reply NULL: none), else 250 */
		for (r = f->rules; !*in_data && r->prefix && strcmp(r->prefix, "."); r++)
			;
		if (!*in_data)
			reply = g_strdup(r->prefix ? r->reply : "250 queued\r\n");
	} else {
		if (f->imap && strchr(line, ' ')) {
			tag = g_strndup(line, (gsize)(strchr(line, ' ') - line));
			cmd = strchr(line, ' ') + 1;
		}
		for (r = f->rules; r->prefix && g_ascii_strncasecmp(cmd, r->prefix, strlen(r->prefix)); r++)
			;
		*in_data = r->prefix && !strcmp(r->prefix, "DATA");
		reply = f->imap ? g_strdup_printf(r->reply, tag ? tag : "*") : g_strdup(r->reply);
	}
	if (reply && write(c, reply, strlen(reply)) < 0)
		return false;
	/* a QUIT left unanswered keeps the line open, as a hung server does */
	return !reply || (g_ascii_strncasecmp(cmd, "QUIT", 4) && g_ascii_strncasecmp(cmd, "LOGOUT", 6));
}

/* One connection: the greeting, then a line, an answer, until QUIT or the client hangs up. */
static void serve(struct fake *f, int c)
{
	GString *buf = g_string_new(NULL);
	bool in_data = false, more = true;
	char chunk[4096];
	ssize_t n;

	if (write(c, f->greeting, strlen(f->greeting)) < 0)
		more = false;
	while (more && (n = read(c, chunk, sizeof chunk)) > 0) {
		char *nl;

		g_string_append_len(buf, chunk, n);
		while (more && (nl = strstr(buf->str, "\r\n"))) {
			g_autofree char *line = g_strndup(buf->str, (gsize)(nl - buf->str));

			g_string_erase(buf, 0, nl - buf->str + 2);
			if (!in_data)
				g_string_append_printf(f->heard, "%s\n", line);
			more = answer(f, c, line, &in_data);
		}
	}
	g_string_free(buf, TRUE);
	close(c);
}

static gpointer fake_thread(gpointer data)
{
	struct fake *f = data;

	while (!g_atomic_int_get(&f->stop)) {
		struct pollfd p = { f->fd, POLLIN, 0 };
		int c;

		if (poll(&p, 1, 50) <= 0)
			continue;
		if ((c = accept(f->fd, NULL, NULL)) >= 0)
			serve(f, c);
	}
	return NULL;
}

/* rules NULL: the default script of each protocol */
static void fake_start(struct fake *f, bool imap, const struct rule *rules)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;

	*f = (struct fake){ .imap = imap, .rules = rules ? rules : imap ? imap_rules : smtp_rules,
			    .greeting = imap ? "* OK fake IMAP ready\r\n" : "220 fake.example.org ESMTP\r\n",
			    .heard = g_string_new(NULL) };
	f->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->fd >= 0);
	assert_int_equal(bind(f->fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(f->fd, 4), 0);
	assert_int_equal(getsockname(f->fd, (struct sockaddr *)&a, &len), 0);
	f->port = ntohs(a.sin_port);
	f->thread = g_thread_new("fake", fake_thread, f);
}

/* Stop the server; what it heard stays in f->heard (the caller frees it). */
static void fake_stop(struct fake *f)
{
	g_atomic_int_set(&f->stop, 1);
	g_thread_join(f->thread);
	close(f->fd);
}

static bool heard(const struct fake *f, const char *what)
{
	return strstr(f->heard->str, what) != NULL;
}

struct smtp_case {
	enum pk_tls tls;
	const char *user;
	bool sent;          /* the mail got through */
	bool auth;          /* the server heard AUTH */
};

static void test_smtp_no_starttls(void **state)
{
	static const struct smtp_case cases[] = {
		{ PK_TLS_REQUIRED, "bot", false, false },
		{ PK_TLS_REQUIRED, NULL, false, false },
		{ PK_TLS_TRY, "bot", false, false },     /* a login makes try required */
		{ PK_TLS_TRY, NULL, true, false },       /* no secret to lose: in clear */
		{ PK_TLS_OFF, "bot", true, true },       /* said on purpose */
	};
	const char *const rcpt[] = { "jane@example.org", NULL };

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct fake f;
		g_autofree char *url = NULL;
		g_autoptr(GError) err = NULL;
		struct pk_smtp_config cfg = { .tls = cases[i].tls, .user = (char *)cases[i].user,
					      .password = "pw", .timeout = 10 };
		int rc;

		fake_start(&f, false, NULL);
		url = g_strdup_printf("smtp://127.0.0.1:%d", f.port);
		cfg.url = url;
		rc = pk_smtp_send(&cfg, "bot@example.org", rcpt, "Subject: x\r\n\r\nhi\r\n", NULL, NULL, NULL,
				  &err);
		fake_stop(&f);
		print_message("tls = %s, user %s: %s\n%s", pk_tls_name(cases[i].tls),
			      cases[i].user ? cases[i].user : "none", err ? err->message : "sent", f.heard->str);
		assert_int_equal(rc, cases[i].sent ? 0 : -1);
		assert_true(heard(&f, "EHLO"));
		assert_int_equal(heard(&f, "AUTH"), cases[i].auth);
		assert_int_equal(heard(&f, "AGJvdABwdw=="), cases[i].auth);
		assert_int_equal(heard(&f, "MAIL FROM"), cases[i].sent);
		if (!cases[i].sent) {
			assert_non_null(strstr(err->message, "no TLS"));
			assert_non_null(strstr(err->message, "STARTTLS"));
			assert_null(strstr(err->message, "pw"));
		}
		g_string_free(f.heard, TRUE);
	}
}

/*
 * A server that offers STARTTLS and then refuses it (454): said as a
 * refusal, with its answer, not as a server that offers no STARTTLS.
 */
static void test_smtp_starttls_refused(void **state)
{
	static const struct rule rules[] = {
		{ "EHLO", "250-fake.example.org\r\n250-STARTTLS\r\n250 AUTH PLAIN\r\n" },
		{ "STARTTLS", "454 4.7.0 TLS not available due to temporary reason\r\n" },
		{ "QUIT", "221 bye\r\n" },
		{ NULL, "502 what\r\n" },
	};
	const char *const rcpt[] = { "jane@example.org", NULL };
	struct pk_smtp_config cfg = { .tls = PK_TLS_REQUIRED, .user = "bot", .password = "pw", .timeout = 10 };
	g_autoptr(GError) err = NULL;
	g_autofree char *url = NULL;
	struct fake f;
	int rc;

	fake_start(&f, false, rules);
	url = g_strdup_printf("smtp://127.0.0.1:%d", f.port);
	cfg.url = url;
	rc = pk_smtp_send(&cfg, "bot@example.org", rcpt, "Subject: x\r\n\r\nhi\r\n", NULL, NULL, NULL,
			  &err);
	fake_stop(&f);
	print_message("%s\n%s", err ? err->message : "sent", f.heard->str);
	assert_int_equal(rc, -1);
	assert_true(heard(&f, "STARTTLS"));
	assert_false(heard(&f, "AUTH"));
	assert_false(heard(&f, "MAIL FROM"));
	assert_non_null(strstr(err->message, "refused STARTTLS"));
	assert_non_null(strstr(err->message, "454 4.7.0 TLS not available"));
	assert_null(strstr(err->message, "offers no STARTTLS"));
	g_string_free(f.heard, TRUE);
}

/*
 * A server that refuses some recipients (a stale Cc): the mail goes to
 * those it took and the refused are named; refused by all, nothing goes
 * and the refusal is for good.
 */
static void test_smtp_refused_recipient(void **state)
{
	static const struct rule rules[] = {
		{ "EHLO", "250-fake.example.org\r\n250 8BITMIME\r\n" },
		{ "MAIL", "250 ok\r\n" },
		{ "RCPT TO:<gone", "550-5.1.1 no such user\r\n550 5.1.1 gone for good\r\n" },
		{ "RCPT TO:<full", "452 4.2.2 mailbox full\r\n" },
		{ "RCPT", "250 ok\r\n" },
		{ "DATA", "354 go on\r\n" },
		{ "QUIT", "221 bye\r\n" },
		{ NULL, "502 what\r\n" },
	};
	static const struct {
		const char *rcpt[4];
		int rc;
		bool permanent;
		const char *refused;   /* all of them, "; "-joined */
	} cases[] = {
		{ { "jane@example.org", "gone@example.org", "joe@example.org", NULL }, 0, false,
		  "<gone@example.org> (550 5.1.1 gone for good)" },
		{ { "full@example.org", "jane@example.org", NULL }, 0, false,
		  "<full@example.org> (452 4.2.2 mailbox full)" },
		{ { "jane@example.org", NULL }, 0, false, "" },
		{ { "gone@example.org", NULL }, -1, true, NULL },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) refused = g_ptr_array_new_with_free_func(g_free);
		g_autoptr(GError) err = NULL;
		g_autofree char *url = NULL, *joined = NULL;
		struct pk_smtp_config cfg = { .tls = PK_TLS_TRY, .timeout = 10 };
		bool permanent = false;
		struct fake f;
		int rc;

		fake_start(&f, false, rules);
		url = g_strdup_printf("smtp://127.0.0.1:%d", f.port);
		cfg.url = url;
		rc = pk_smtp_send(&cfg, "bot@example.org", cases[i].rcpt, "Subject: x\r\n\r\nhi\r\n",
				  refused, NULL, &permanent, &err);
		fake_stop(&f);
		g_ptr_array_add(refused, NULL);
		joined = g_strjoinv("; ", (char **)refused->pdata);
		print_message("case %zu: %s; refused: %s\n%s", i, err ? err->message : "sent", joined,
			      f.heard->str);
		assert_int_equal(rc, cases[i].rc);
		assert_int_equal(heard(&f, "DATA"), rc == 0);
		if (rc == 0)
			assert_string_equal(joined, cases[i].refused);
		else
			assert_int_equal(permanent, cases[i].permanent);
		g_string_free(f.heard, TRUE);
	}
}

/*
 * A server that goes quiet: after the final dot (the try fails, not for
 * good), or at QUIT once the mail was taken (it was sent).  [smtp] timeout
 * ends the wait either way; curl waited 120 s more for an answer to QUIT.
 */
static void test_smtp_quiet_server(void **state)
{
	static const struct rule after_dot[] = {
		{ "EHLO", "250-fake.example.org\r\n250 8BITMIME\r\n" }, { "MAIL", "250 ok\r\n" },
		{ "RCPT", "250 ok\r\n" }, { "DATA", "354 go on\r\n" }, { ".", NULL },
		{ "QUIT", "221 bye\r\n" }, { NULL, "502 what\r\n" },
	};
	static const struct rule at_quit[] = {
		{ "EHLO", "250-fake.example.org\r\n250 8BITMIME\r\n" }, { "MAIL", "250 ok\r\n" },
		{ "RCPT", "250 ok\r\n" }, { "DATA", "354 go on\r\n" }, { "QUIT", NULL },
		{ NULL, "502 what\r\n" },
	};
	static const struct { const struct rule *rules; int rc; } cases[] = {
		{ after_dot, -1 }, { at_quit, 0 },
	};
	const char *const rcpt[] = { "jane@example.org", NULL };

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct pk_smtp_config cfg = { .tls = PK_TLS_TRY, .timeout = 2 };
		g_autoptr(GError) err = NULL;
		g_autofree char *url = NULL;
		bool permanent = true;
		gint64 took;
		struct fake f;
		int rc;

		fake_start(&f, false, cases[i].rules);
		url = g_strdup_printf("smtp://127.0.0.1:%d", f.port);
		cfg.url = url;
		took = g_get_monotonic_time();
		rc = pk_smtp_send(&cfg, "bot@example.org", rcpt, "Subject: x\r\n\r\nhi\r\n", NULL,
				  NULL, &permanent, &err);
		took = g_get_monotonic_time() - took;
		fake_stop(&f);
		print_message("case %zu: %.1f s: %s\n", i, took / 1e6, err ? err->message : "sent");
		assert_int_equal(rc, cases[i].rc);
		assert_false(rc < 0 && permanent);
		assert_true(took < 5 * G_USEC_PER_SEC);
		g_string_free(f.heard, TRUE);
	}
}

/* Set half a second after the send starts (test_smtp_stop()). */
static gint stop_asked;

static bool stop_now(void)
{
	return g_atomic_int_get(&stop_asked) != 0;
}

static gpointer stop_later(gpointer data)
{
	g_usleep(G_USEC_PER_SEC / 2);
	g_atomic_int_set(&stop_asked, 1);
	return NULL;
}

/*
 * A server that greets, then says nothing to MAIL FROM, with the minute's
 * timeout: the caller's stop, asked half a second in, ends the send
 * within a second or so, not sent and not refused for good.
 */
static void test_smtp_stop(void **state)
{
	static const struct rule stall[] = {
		{ "EHLO", "250-fake.example.org\r\n250 8BITMIME\r\n" }, { "MAIL", NULL },
		{ "QUIT", "221 bye\r\n" }, { NULL, "502 what\r\n" },
	};
	const char *const rcpt[] = { "jane@example.org", NULL };
	struct pk_smtp_config cfg = { .tls = PK_TLS_TRY, .timeout = 60 };
	g_autoptr(GError) err = NULL;
	g_autofree char *url = NULL;
	bool permanent = true;
	GThread *asker;
	gint64 took;
	struct fake f;
	int rc;

	fake_start(&f, false, stall);
	url = g_strdup_printf("smtp://127.0.0.1:%d", f.port);
	cfg.url = url;
	g_atomic_int_set(&stop_asked, 0);
	took = g_get_monotonic_time();
	asker = g_thread_new("stop", stop_later, NULL);
	rc = pk_smtp_send(&cfg, "bot@example.org", rcpt, "Subject: x\r\n\r\nhi\r\n", NULL, stop_now,
			  &permanent, &err);
	took = g_get_monotonic_time() - took;
	g_thread_join(asker);
	fake_stop(&f);
	print_message("%.1f s: %s\n%s", took / 1e6, err ? err->message : "sent", f.heard->str);
	assert_int_equal(rc, -1);
	assert_false(permanent);
	assert_non_null(strstr(err->message, "stopped before the server took the mail"));
	assert_true(heard(&f, "MAIL FROM"));
	assert_false(heard(&f, "DATA"));
	assert_true(took < 3 * G_USEC_PER_SEC);
	g_string_free(f.heard, TRUE);
}

/* The same for an IMAP source: no LOGIN unless tls = off. */
static void test_imap_no_starttls(void **state)
{
	static const struct { enum pk_tls tls; bool login; } cases[] = {
		{ PK_TLS_REQUIRED, false }, { PK_TLS_TRY, false }, { PK_TLS_OFF, true },
	};
	g_autofree char *dir = g_dir_make_tmp("pk-mailtls-XXXXXX", NULL);
	g_autofree char *db = g_build_filename(dir, "t.db", NULL);
	g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
	struct pk_store *store = NULL;

	assert_int_equal(pk_store_open(&store, db, NULL), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct fake f;
		g_autofree char *url = NULL;
		g_autofree char *name = g_strdup_printf("s%zu", i);
		g_autoptr(GError) err = NULL;
		struct pk_source_config cfg = { .name = name, .type = "imap", .user = "list",
						.password = "pw", .tls = cases[i].tls, .poll_interval = 1 };
		struct pk_intake *in = NULL;
		unsigned n = 0;
		int rc;

		fake_start(&f, true, NULL);
		url = g_strdup_printf("imap://127.0.0.1:%d/INBOX", f.port);
		cfg.url = url;
		assert_int_equal(pk_intake_open(&in, store, &cfg, NULL), 0);
		rc = pk_intake_fetch(in, NULL, NULL, &n, &err);
		pk_intake_close(in);
		fake_stop(&f);
		print_message("tls = %s: %s\n%s", pk_tls_name(cases[i].tls), err ? err->message : "read",
			      f.heard->str);
		assert_true(heard(&f, "CAPABILITY"));
		assert_int_equal(heard(&f, "LOGIN"), cases[i].login);
		assert_int_equal(heard(&f, "AUTHENTICATE"), false);
		assert_int_equal(rc, cases[i].login ? 0 : -1);
		if (!cases[i].login) {
			assert_non_null(strstr(err->message, "no TLS"));
			assert_non_null(strstr(err->message, "STARTTLS"));
			assert_non_null(strstr(err->message, name));
		}
		g_string_free(f.heard, TRUE);
	}
	pk_store_close(store);
	g_assert(system(rm) == 0);
}

/*
 * An IMAP server that offers STARTTLS and refuses it (NO), and one that
 * accepts it and then cannot do TLS (OK, then BYE in clear: what Dovecot
 * says with a certificate it cannot load): each said as it is, neither as
 * a server that offers no STARTTLS, and no login goes.
 */
static void test_imap_starttls_refused(void **state)
{
	static const struct rule refused[] = {
		{ "CAPABILITY", "* CAPABILITY IMAP4rev1 STARTTLS\r\n%s OK done\r\n" },
		{ "STARTTLS", "%s NO [UNAVAILABLE] TLS is down here\r\n" },
		{ "LOGOUT", "* BYE\r\n%s OK bye\r\n" },
		{ NULL, "%s BAD what\r\n" },
	};
	static const struct rule failed[] = {
		{ "CAPABILITY", "* CAPABILITY IMAP4rev1 STARTTLS\r\n%s OK done\r\n" },
		{ "STARTTLS", "%s OK Begin TLS negotiation now.\r\n* BYE [UNAVAILABLE] TLS initialization failed.\r\n" },
		{ NULL, "%s BAD what\r\n" },
	};
	static const struct { const struct rule *rules; const char *has; } cases[] = {
		{ refused, "refused STARTTLS (it said \"NO [UNAVAILABLE] TLS is down here\") and tls = required" },
		{ failed, "accepted STARTTLS, then TLS failed (" },
	};
	g_autofree char *dir = g_dir_make_tmp("pk-mailtls-XXXXXX", NULL);
	g_autofree char *db = g_build_filename(dir, "t.db", NULL);
	g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
	struct pk_store *store = NULL;

	assert_int_equal(pk_store_open(&store, db, NULL), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct fake f;
		g_autofree char *url = NULL;
		g_autofree char *name = g_strdup_printf("t%zu", i);
		g_autoptr(GError) err = NULL;
		struct pk_source_config cfg = { .name = name, .type = "imap", .user = "list",
						.password = "pw", .tls = PK_TLS_REQUIRED, .poll_interval = 1 };
		struct pk_intake *in = NULL;
		unsigned n = 0;

		fake_start(&f, true, cases[i].rules);
		url = g_strdup_printf("imap://127.0.0.1:%d/INBOX", f.port);
		cfg.url = url;
		assert_int_equal(pk_intake_open(&in, store, &cfg, NULL), 0);
		assert_int_equal(pk_intake_fetch(in, NULL, NULL, &n, &err), -1);
		pk_intake_close(in);
		fake_stop(&f);
		print_message("%s\n%s", err->message, f.heard->str);
		assert_true(heard(&f, "STARTTLS"));
		assert_false(heard(&f, "LOGIN"));
		assert_false(heard(&f, "AUTHENTICATE"));
		assert_non_null(strstr(err->message, cases[i].has));
		assert_null(strstr(err->message, "offers no STARTTLS"));
		g_string_free(f.heard, TRUE);
	}
	pk_store_close(store);
	g_assert(system(rm) == 0);
}

/*
 * UIDs, UIDVALIDITY and UIDNEXT are 32-bit (RFC 3501): an absurd one is an
 * error naming the source and the position stays where it was; a last UID
 * stored out of range (by a version that took any) is read again from
 * the start, not kept.
 */
static void test_imap_absurd_uid(void **state)
{
	static const struct {
		const char *status, *search;
		enum pk_source_start start;
		const char *stored_last;   /* last_uid before, with uidvalidity 7; NULL: none */
		const char *error_has;     /* NULL: no error */
		const char *last_after;    /* last_uid after; NULL: none stored */
	} cases[] = {
		{ "UIDVALIDITY 7 UIDNEXT 99999999999", "2", PK_START_ALL, NULL, "a UIDNEXT", NULL },
		{ "UIDVALIDITY 7 UIDNEXT 5", "2 18446744073709551621", PK_START_ALL, NULL, "a UID", "0" },
		{ "UIDVALIDITY 7 UIDNEXT 5", "2 4294967296", PK_START_ALL, NULL, "a UID", "0" },
		{ "UIDVALIDITY 7 UIDNEXT 5", "2 -3", PK_START_ALL, NULL, "a UID", "0" },
		{ "UIDVALIDITY 4294967296 UIDNEXT 5", "2", PK_START_ALL, NULL, "a UIDVALIDITY", NULL },
		{ "UIDVALIDITY 7 UIDNEXT 9223372036854775807", "2", PK_START_NOW, NULL, "a UIDNEXT", NULL },
		{ "UIDVALIDITY 7 UIDNEXT 1", "", PK_START_ALL, "9223372036854775807", NULL, "0" },
		{ "UIDVALIDITY 7 UIDNEXT 4294967295", "", PK_START_ALL, "4294967294", NULL, "4294967294" },
	};
	g_autofree char *dir = g_dir_make_tmp("pk-mailtls-XXXXXX", NULL);
	g_autofree char *db = g_build_filename(dir, "t.db", NULL);
	g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
	struct pk_store *store = NULL;

	assert_int_equal(pk_store_open(&store, db, NULL), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *status = g_strdup_printf("* STATUS INBOX (%s)\r\n%%s OK done\r\n", cases[i].status);
		g_autofree char *search = g_strdup_printf("* SEARCH %s\r\n%%s OK done\r\n", cases[i].search);
		const struct rule rules[] = {
			{ "CAPABILITY", "* CAPABILITY IMAP4rev1\r\n%s OK done\r\n" },
			{ "LOGIN", "%s OK logged in\r\n" },
			{ "STATUS", status },
			{ "SELECT", "* 3 EXISTS\r\n%s OK [READ-WRITE] done\r\n" },
			{ "EXAMINE", "* 3 EXISTS\r\n%s OK [READ-ONLY] done\r\n" },
			{ "UID SEARCH", search },
			{ "LOGOUT", "* BYE\r\n%s OK bye\r\n" },
			{ NULL, "%s BAD what\r\n" },
		};
		g_autofree char *name = g_strdup_printf("uid%zu", i);
		g_autofree char *url = NULL, *last = NULL;
		g_autoptr(GError) err = NULL;
		struct pk_source_config cfg = { .name = name, .type = "imap", .user = "list", .password = "pw",
						.tls = PK_TLS_OFF, .poll_interval = 1, .start = cases[i].start };
		struct pk_intake *in = NULL;
		struct fake f;
		gint64 id;
		unsigned n = 0;
		int rc;

		fake_start(&f, true, rules);
		url = g_strdup_printf("imap://127.0.0.1:%d/INBOX", f.port);
		cfg.url = url;
		assert_int_equal(pk_store_add_source(store, &id, "imap", name, url, NULL), 0);
		if (cases[i].stored_last) {
			assert_int_equal(pk_store_source_state_set(store, id, "uidvalidity", "7", NULL), 0);
			assert_int_equal(pk_store_source_state_set(store, id, "last_uid", cases[i].stored_last,
								   NULL), 0);
		}
		assert_int_equal(pk_intake_open(&in, store, &cfg, NULL), 0);
		rc = pk_intake_fetch(in, NULL, NULL, &n, &err);
		pk_intake_close(in);
		fake_stop(&f);
		print_message("case %zu: %s\n%s", i, err ? err->message : "read", f.heard->str);
		assert_int_equal(rc, cases[i].error_has ? -1 : 0);
		if (cases[i].error_has) {
			assert_non_null(strstr(err->message, cases[i].error_has));
			assert_non_null(strstr(err->message, "not a 32-bit number"));
			assert_non_null(strstr(err->message, name));
		}
		assert_int_equal(n, 0);
		if (pk_store_source_state_get(store, id, "last_uid", &last, NULL) <= 0)
			g_clear_pointer(&last, g_free);
		assert_string_equal(last ? last : "(none)", cases[i].last_after ? cases[i].last_after : "(none)");
		g_string_free(f.heard, TRUE);
	}
	pk_store_close(store);
	g_assert(system(rm) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smtp_no_starttls),
		cmocka_unit_test(test_imap_no_starttls),
		cmocka_unit_test(test_imap_starttls_refused),
		cmocka_unit_test(test_smtp_refused_recipient),
		cmocka_unit_test(test_smtp_starttls_refused),
		cmocka_unit_test(test_smtp_quiet_server),
		cmocka_unit_test(test_smtp_stop),
		cmocka_unit_test(test_imap_absurd_uid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
