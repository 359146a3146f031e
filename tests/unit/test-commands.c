/*
 * test-commands.c - commands by mail, through the daemon itself (run once
 * a step, as cron would) on a lab whose tree is a small git repository.
 * The patch changes a pr_info() (churn: its series is queued) but is
 * over [policy] max_lines, so its test is a verdict without a build:
 * what is checked is the command around the test.  A #printkbot test
 * from an allowed sender, addressed to the bot, tests the series again
 * and is answered once, threaded under the command, To the sender, Cc
 * the list; on a tree's branch it names; an unknown base is answered
 * with the bases the bot knows; help is answered; a stranger's command
 * is refused with the reason, and so is a forged one (no server vouches
 * for its From), a quoted or unaddressed one is no command, the rate
 * limits per series, per sender and in all hold commands back (logged,
 * never answered); a command job left running by a worker that died is
 * taken over and answers once; a command answered before is not again.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "lab/lab.h"
#include "report/outbox.h"
#include "store/store.h"
#include "store/queue.h"
#include "base/proc.h"
#include "daemon-lab-fixture.h"

struct fixture {
	struct daemon_lab d;
	char *maildir;             /* the source */
};

/* The config; daemon (the keys that vouch for senders and the global limit) and source: more keys. */
static void write_config_with(struct fixture *f, const char *daemon, const char *source)
{
	g_autofree char *text = g_strdup_printf(
		"[store]\npath = %s/cmd.db\n"
		"[daemon]\noutbox = %s/outbox\nfrom = printkbot <bot@example.org>\nreply_on = always\n"
		"retry_min = 3600\nseries_wait = 0\n"
		"commands_from = max@example.org, @kernel.org\ncommands_per_hour = 4\n"
		"commands_per_thread_hour = 3\n%s"
		"[policy]\nmax_lines = 1\n"
		"[smtp]\nurl = smtp://127.0.0.1:9\n"
		"[tree lab]\npath = %s\nbranches = main\n"
		"[source list]\ntype = maildir\nstart = all\npath = %s\nlist = list@example.org\n%s",
		f->d.dir, f->d.dir, daemon, f->d.upstream, f->maildir, source);

	assert_true(g_file_set_contents(f->d.config, text, -1, NULL));
}

static void write_config(struct fixture *f)
{
	write_config_with(f, "commands_authserv_id = mx.example.org\n", "");
}

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);

	daemon_lab_init(&f->d, "pk-commands", "PK_TEST_COMMANDS",
			"int main(void)\n{\n\tpr_info(\"hello\\n\");\n\treturn 0;\n}\n");
	f->maildir = g_build_filename(f->d.dir, "maildir", NULL);
	for (const char *const *sub = (const char *const[]){ "new", "cur", "tmp", NULL }; *sub; sub++) {
		g_autofree char *p = g_build_filename(f->maildir, *sub, NULL);

		assert_int_equal(g_mkdir_with_parents(p, 0700), 0);
	}
	write_config(f);
	*state = f;
	return 0;
}

/* PK_TEST_COMMANDS_LOG=1 shows the daemon's log of each run, PK_TEST_COMMANDS_KEEP=1 keeps the dir */
static int teardown(void **state)
{
	struct fixture *f = *state;

	daemon_lab_clear(&f->d);
	g_free(f->maildir);
	g_free(f);
	return 0;
}

/* The daemon once (queue_only: the intake alone): its log (caller frees). */
static char *run_once(struct fixture *f, bool queue_only)
{
	return daemon_lab_run_once(&f->d, queue_only);
}

static struct pk_store *store_of(struct fixture *f)
{
	return daemon_lab_store(&f->d, "cmd.db");
}

/* A mail into the source's new/: headers (From, To, ... without Message-ID) and body. */
static void deliver(struct fixture *f, const char *id, const char *headers, const char *body)
{
	g_autofree char *path = g_strdup_printf("%s/new/%s", f->maildir, id);
	g_autofree char *mail = g_strdup_printf("%sDate: Tue, 1 Dec 2026 10:00:00 +0000\n"
						"Message-ID: <%s@example.org>\n\n%s", headers, id, body);

	assert_true(g_file_set_contents(path, mail, -1, NULL));
}

/*
 * A command with the headers trace (Authentication-Results and the like,
 * on top, or ""), from from (a mailbox), To to, In-Reply-To (and
 * References) parent's id, or none.
 */
static void deliver_traced(struct fixture *f, const char *id, const char *trace, const char *from, const char *to,
			   const char *parent, const char *body)
{
	g_autofree char *headers = g_strdup_printf(
		"%sFrom: %s\nTo: %s\nCc: list@example.org\nSubject: Re: [PATCH] init: say hello there\n"
		"%s%s%s%s%s", trace, from, to, parent ? "In-Reply-To: <" : "", parent ? parent : "",
		parent ? "@example.org>\nReferences: <" : "", parent ? parent : "", parent ? "@example.org>\n" : "");

	deliver(f, id, headers, body);
}

/* A command as deliver_traced(), which the bot's mail server (mx.example.org) found signed by its From's domain. */
static void deliver_command(struct fixture *f, const char *id, const char *from, const char *to,
			    const char *parent, const char *body)
{
	const char *at = strrchr(from, '@');
	g_autofree char *domain = g_strndup(at + 1, strcspn(at + 1, ">"));
	g_autofree char *trace = g_strdup_printf("Authentication-Results: mx.example.org;\n\tdkim=pass "
						 "(1024-bit key) header.d=%s header.s=test\n", domain);

	deliver_traced(f, id, trace, from, to, parent, body);
}

/* The stored answer to the mail id (*out new): 1, or 0 when none. */
static int answer_of(struct pk_store *s, const char *id, struct pk_store_reply **out)
{
	g_autofree char *mid = g_strdup_printf("%s@example.org", id);
	gint64 mail;

	assert_int_equal(pk_store_mail_find(s, mid, &mail, NULL), 1);
	return pk_store_reply_for_mail(s, mail, out, NULL);
}

/* The stored mail id: its state and reason. */
static void mail_state(struct pk_store *s, const char *id, const char *state, const char *reason)
{
	g_autofree char *mid = g_strdup_printf("%s@example.org", id);
	struct pk_store_mail *m = NULL;
	gint64 mail;

	assert_int_equal(pk_store_mail_find(s, mid, &mail, NULL), 1);
	assert_int_equal(pk_store_mail_get(s, mail, &m, NULL), 1);
	assert_string_equal(m->state, state);
	if (reason && (!m->reason || !strstr(m->reason, reason)))
		fail_msg("%s: reason '%s', not '%s'", id, m->reason ? m->reason : "(null)", reason);
	pk_store_mail_free(m);
}

static unsigned outbox_mails(struct fixture *f)
{
	g_autofree char *dir = g_build_filename(f->d.dir, "outbox", "new", NULL);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	unsigned n = 0;

	while (d && g_dir_read_name(d))
		n++;
	return n;
}

static void post_patch(struct fixture *f)
{
	g_autofree char *log = NULL;

	deliver(f, "p1", "From: Jane Dev <jane@example.org>\nTo: list@example.org\n"
		"Subject: [PATCH] init: say hello there\n",
		"Say more.\n\nSigned-off-by: Jane Dev <jane@example.org>\n---\n"
		"diff --git a/init.c b/init.c\n--- a/init.c\n+++ b/init.c\n"
		"@@ -1,5 +1,5 @@\n int main(void)\n {\n-\tpr_info(\"hello\\n\");\n"
		"+\tpr_info(\"hello there\\n\");\n \treturn 0;\n }\n");
	log = run_once(f, false);
	assert_non_null(strstr(log, "queued: [PATCH] init: say hello there"));
	assert_non_null(strstr(log, "refused (review"));
	assert_int_equal(outbox_mails(f), 1);
}

/* An allowed command: the series tested again, answered once, threaded, To the sender, Cc the list. */
static void test_command_answered_once(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL, *again = NULL;
	g_autoptr(pk_store) s = NULL;
	struct pk_store_reply *r = NULL;
	gint64 n = 0;

	post_patch(f);
	deliver_command(f, "c1", "Max Maint <max@example.org>", "printkbot <bot@example.org>", "p1",
			"Could you test this again?\n\n#printkbot test\n\nThanks\n");
	log = run_once(f, false);
	assert_non_null(strstr(log, "queued: '#printkbot test' from max@example.org, on the series of job"));
	assert_non_null(strstr(log, "; sender proven by dkim=pass header.d=example.org (mx.example.org)"));
	assert_non_null(strstr(log, "testing 1/1 again on printkbot-base"));
	assert_non_null(strstr(log, "tested again on printkbot-base: refused"));
	assert_int_equal(outbox_mails(f), 2);
	s = store_of(f);
	assert_int_equal(answer_of(s, "c1", &r), 1);
	assert_non_null(strstr(r->text, "\r\nIn-Reply-To: <c1@example.org>\r\n"));
	assert_non_null(strstr(r->text, "References: <p1@example.org> <c1@example.org>"));
	assert_non_null(strstr(r->text, "\r\nTo: Max Maint <max@example.org>\r\n"));
	assert_non_null(strstr(r->text, "\r\nCc: list@example.org\r\n"));
	assert_non_null(strstr(r->text, "Subject: Re: [PATCH] init: say hello there\r\n"));
	assert_non_null(strstr(r->text, "Hi Max,"));
	assert_non_null(strstr(r->text, "printkbot tested the series again, as you asked:"));
	assert_non_null(strstr(r->text, "\r\n> #printkbot test\r\n"));
	assert_non_null(strstr(r->text, "  refused: [PATCH] init: say hello there"));
	assert_non_null(strstr(r->text, "verdict: refused"));
	assert_string_equal(r->recipients, "max@example.org\nlist@example.org");
	pk_store_reply_free(r);
	/* two tests of the patch: the series' and the command's */
	assert_int_equal(pk_store_count(s, "tests", &n, NULL), 0);
	assert_int_equal(n, 2);
	mail_state(s, "c1", "queued", NULL);
	pk_store_close(g_steal_pointer(&s));

	/* again: the mail is known, nothing is done twice */
	g_autofree char *path = g_strdup_printf("%s/new/c1-again", f->maildir);
	g_autofree char *cur = g_strdup_printf("%s/cur", f->maildir);
	g_autoptr(GDir) d = g_dir_open(cur, 0, NULL);
	const char *name;
	while ((name = g_dir_read_name(d)))
		if (g_str_has_prefix(name, "c1")) {
			g_autofree char *from = g_build_filename(cur, name, NULL);
			g_autofree char *text = NULL;
			assert_true(g_file_get_contents(from, &text, NULL, NULL));
			assert_true(g_file_set_contents(path, text, -1, NULL));
		}
	again = run_once(f, false);
	assert_non_null(strstr(again, "this Message-ID was read before"));
	assert_null(strstr(again, "testing"));
	assert_int_equal(outbox_mails(f), 2);
}

/*
 * A tree's branch by name; an unknown base answered with the known ones;
 * help from a domain allowed, in a thread of its own; a stranger's command
 * refused; a quoted one and one not addressed to the bot are no commands;
 * commands off; the limits per thread and per sender.
 */
static void test_commands_checked(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL;
	g_autoptr(pk_store) s = NULL;
	struct pk_store_reply *r = NULL;
	const char *bot = "bot@example.org";

	post_patch(f);
	deliver_command(f, "c2", "max@example.org", bot, "p1", "#printkbot test lab/main\n");
	deliver_command(f, "c3", "max@example.org", bot, "p1", "#printkbot test debian:9.9\n");
	deliver_command(f, "c4", "Greg <greg@kernel.org>", bot, NULL, "#printkbot help\n");
	deliver_command(f, "c5", "Eve <eve@evil.example>", bot, "p1", "#printkbot test\n");
	deliver_command(f, "c6", "max@example.org", bot, "p1", "> #printkbot test\nNo.\n");
	deliver_command(f, "c7", "max@example.org", "list@example.org", "p1", "#printkbot test\n");
	deliver_command(f, "c8", "max@example.org", bot, "p1", "#printkbot frobnicate\n");
	/* a fourth in the thread of p1: over commands_per_thread_hour */
	deliver_command(f, "c9", "max@example.org", bot, "p1", "#printkbot test\n");
	log = run_once(f, false);
	s = store_of(f);

	assert_int_equal(answer_of(s, "c2", &r), 1);
	assert_non_null(strstr(r->text, "[tested on lab/main]"));
	pk_store_reply_free(r);
	assert_int_equal(answer_of(s, "c3", &r), 1);
	assert_non_null(strstr(r->text, "does not know the base 'debian:9.9'"));
	assert_non_null(strstr(r->text, "    printkbot-base\r\n"));
	assert_non_null(strstr(r->text, "    lab/main\r\n"));
	pk_store_reply_free(r);
	assert_int_equal(answer_of(s, "c4", &r), 1);
	assert_non_null(strstr(r->text, "    test BASE    test it again on BASE"));
	assert_non_null(strstr(r->text, "\r\nIn-Reply-To: <c4@example.org>\r\n"));
	pk_store_reply_free(r);
	assert_int_equal(answer_of(s, "c5", &r), 0);
	mail_state(s, "c5", "skipped", "eve@evil.example is not in [daemon] commands_from");
	assert_non_null(strstr(log, "a #printkbot command refused: eve@evil.example is not in"));
	mail_state(s, "c6", "skipped", "a reply");
	mail_state(s, "c7", "skipped", "a reply");
	assert_int_equal(answer_of(s, "c8", &r), 1);
	assert_non_null(strstr(r->text, "does not know the command 'frobnicate'"));
	pk_store_reply_free(r);
	/* c2, c3 and c8 in p1's thread: the fourth waits for the hour */
	assert_int_equal(answer_of(s, "c9", &r), 0);
	mail_state(s, "c9", "skipped", "commands_per_thread_hour = 3");
	assert_non_null(strstr(log, "over the rate: its thread (series "));
	pk_store_close(g_steal_pointer(&s));

	/* max gave 3; a fourth elsewhere is acted on (no series there), a fifth is over the hour */
	deliver_command(f, "c10", "max@example.org", bot, "nowhere", "#printkbot test\n");
	g_free(log);
	log = run_once(f, false);
	deliver_command(f, "c11", "max@example.org", bot, "elsewhere", "#printkbot help\n");
	g_free(log);
	log = run_once(f, false);
	s = store_of(f);
	assert_int_equal(answer_of(s, "c10", &r), 1);
	assert_non_null(strstr(r->text, "names no series printkbot tested"));
	pk_store_reply_free(r);
	mail_state(s, "c11", "skipped", "max@example.org gave 4 in the last hour ([daemon] commands_per_hour = 4)");
	pk_store_close(g_steal_pointer(&s));

	/* commands off: skipped, said so */
	{
		g_autofree char *text = NULL, *off = NULL;
		g_auto(GStrv) parts = NULL;

		assert_true(g_file_get_contents(f->d.config, &text, NULL, NULL));
		parts = g_strsplit(text, "commands_from", -1);
		off = g_strjoinv("#", parts);
		assert_true(g_file_set_contents(f->d.config, off, -1, NULL));
		deliver_command(f, "c12", "max@example.org", bot, NULL, "#printkbot help\n");
		g_free(log);
		log = run_once(f, false);
		s = store_of(f);
		mail_state(s, "c12", "skipped", "commands by mail are off");
	}
}

/*
 * Forged senders: a command whose From no Authentication-Results of the
 * bot's server (mx.example.org) vouches for is refused with the reason,
 * stored and logged, and never answered: none at all, another server's,
 * the server's own "none" over a forged pass, a pass for another domain,
 * a pass in a comment, two From: fields.  A source trusted_commands
 * needs none.
 */
static void test_commands_forged(void **state)
{
	static const struct {
		const char *id, *trace, *from, *why;
	} cases[] = {
		{ "f1", "", "Max Maint <max@example.org>",
		  "its From (max@example.org) is not proven: no Authentication-Results of mx.example.org" },
		{ "f2", "Authentication-Results: evil.example; dkim=pass header.d=example.org\n", "max@example.org",
		  "is not proven: no Authentication-Results of mx.example.org" },
		{ "f3", "Authentication-Results: mx.example.org; dkim=none\n"
			"Authentication-Results: mx.example.org; dkim=pass header.d=example.org\n", "max@example.org",
		  "is not proven: mx.example.org found dkim=none: no pass for example.org" },
		{ "f4", "Authentication-Results: mx.example.org; dkim=pass header.d=evil.example\n",
		  "Max <max@example.org>", "mx.example.org found dkim=pass header.d=evil.example: no pass for example.org" },
		{ "f5", "Authentication-Results: mx.example.org; dkim=fail (dkim=pass header.d=example.org) "
			"header.d=example.org\n", "max@example.org", "found dkim=fail header.d=example.org" },
		{ "f6", "From: max@example.org\n"
			"Authentication-Results: mx.example.org; dkim=pass header.d=example.org\n",
		  "eve@example.org", "its From: names 2 mailboxes, not one" },
		{ "f7", "Authentication-Results: mx.example.org; spf=pass smtp.mailfrom=\"x;dkim=pass "
			"header.d=kernel.org\"@evil.example\n", "greg@kernel.org",
		  "found spf=pass smtp.mailfrom=x;dkim=pass?header.d=kernel.org@evil.example: no pass for kernel.org" },
	};
	struct fixture *f = *state;
	g_autofree char *log = NULL;
	g_autoptr(pk_store) s = NULL;
	struct pk_store_reply *r = NULL;
	gint64 n = -1;

	post_patch(f);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
		deliver_traced(f, cases[i].id, cases[i].trace, cases[i].from, "bot@example.org", "p1",
			       "#printkbot test\n");
	log = run_once(f, false);
	s = store_of(f);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *line = g_strdup_printf("<%s@example.org>: skipped: a #printkbot command refused: ",
							cases[i].id);

		mail_state(s, cases[i].id, "skipped", cases[i].why);
		if (!strstr(log, line))
			fail_msg("%s: not in the log", cases[i].id);
		assert_int_equal(answer_of(s, cases[i].id, &r), 0);
	}
	assert_null(strstr(log, "testing"));
	assert_int_equal(pk_store_count(s, "commands", &n, NULL), 0);
	assert_int_equal(n, 0);
	assert_int_equal(outbox_mails(f), 1);
	pk_store_close(g_steal_pointer(&s));

	/* a source whose mail a list that checks its posters writes: its From is taken */
	write_config_with(f, "", "trusted_commands = true\n");
	deliver_traced(f, "t1", "", "Max Maint <max@example.org>", "bot@example.org", "p1", "#printkbot help\n");
	g_free(log);
	log = run_once(f, false);
	assert_non_null(strstr(log, "queued: '#printkbot help' from max@example.org; sender proven by "
			       "[source list] trusted_commands"));
	s = store_of(f);
	assert_int_equal(answer_of(s, "t1", &r), 1);
	pk_store_reply_free(r);
}

/*
 * The limits a forger's References cannot escape: the per-thread one
 * counts the series the command is about, however its References begin;
 * the global one every command of the hour.
 */
static void test_commands_limits(void **state)
{
	struct fixture *f = *state;
	const char *ar = "Authentication-Results: mx.example.org; dkim=pass header.d=kernel.org\n";
	g_autofree char *log = NULL;
	g_autoptr(pk_store) s = NULL;
	struct pk_store_reply *r = NULL;

	write_config_with(f, "commands_authserv_id = mx.example.org\ncommands_total_per_hour = 5\n", "");
	post_patch(f);
	for (int i = 1; i <= 4; i++) {
		g_autofree char *id = g_strdup_printf("k%d", i);
		g_autofree char *headers = g_strdup_printf(
			"%sFrom: greg@kernel.org\nTo: bot@example.org\nSubject: Re: [PATCH] init: say hello there\n"
			"In-Reply-To: <p1@example.org>\nReferences: <forged%d@example.org> <p1@example.org>\n", ar, i);

		deliver(f, id, headers, "#printkbot help\n");
	}
	log = run_once(f, false);
	s = store_of(f);
	for (int i = 1; i <= 3; i++) {
		g_autofree char *id = g_strdup_printf("k%d", i);

		assert_int_equal(answer_of(s, id, &r), 1);
		pk_store_reply_free(r);
	}
	assert_int_equal(answer_of(s, "k4", &r), 0);
	mail_state(s, "k4", "skipped", "its thread (series ");
	mail_state(s, "k4", "skipped", ") had 3 in the last hour ([daemon] commands_per_thread_hour = 3)");
	pk_store_close(g_steal_pointer(&s));

	/* two more elsewhere make five in the hour: the sixth waits, whoever sends it */
	deliver_traced(f, "g1", ar, "a@kernel.org", "bot@example.org", NULL, "#printkbot help\n");
	deliver_traced(f, "g2", ar, "b@kernel.org", "bot@example.org", NULL, "#printkbot help\n");
	deliver_traced(f, "g3", ar, "c@kernel.org", "bot@example.org", NULL, "#printkbot help\n");
	g_free(log);
	log = run_once(f, false);
	s = store_of(f);
	assert_int_equal(answer_of(s, "g2", &r), 1);
	pk_store_reply_free(r);
	assert_int_equal(answer_of(s, "g3", &r), 0);
	mail_state(s, "g3", "skipped", "5 were acted on in the last hour ([daemon] commands_total_per_hour = 5)");
	assert_non_null(strstr(log, "<g3@example.org>: skipped: a #printkbot command over the rate: 5 were acted on"));
}

/* A command job whose worker died is taken over and answers once; one answered before is not again. */
static void test_command_taken_over(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL, *boot = NULL, *ns = g_file_read_link("/proc/self/ns/pid", NULL);
	g_autofree char *machine = NULL, *payload = NULL;
	g_autoptr(pk_store) s = NULL;
	g_autoptr(pk_store_job) job = NULL;
	struct pk_store_worker gone = { "host:1", NULL, 0, 60 };
	struct pk_store_reply *r = NULL;
	gint64 mail, jid;
	pid_t child;

	post_patch(f);
	deliver_command(f, "k1", "max@example.org", "bot@example.org", "p1", "#printkbot test\n");
	log = run_once(f, true);
	assert_non_null(strstr(log, "queued: '#printkbot test'"));
	child = fork();
	if (child == 0)
		_exit(0);
	assert_true(child > 0 && waitpid(child, NULL, 0) == child);
	assert_true(g_file_get_contents("/proc/sys/kernel/random/boot_id", &boot, NULL, NULL));
	machine = g_strdup_printf("%s/%s", g_strstrip(boot), ns ? ns : "pid");
	gone.machine = machine;
	gone.pid = child;
	s = store_of(f);
	assert_int_equal(pk_store_job_claim(s, &gone, PK_JOB_COMMAND, 0, &job, NULL, NULL), 1);
	pk_store_close(g_steal_pointer(&s));
	g_free(log);
	log = run_once(f, false);
	assert_non_null(strstr(log, "was running when the daemon stopped: queued again"));
	assert_non_null(strstr(log, "tested again on printkbot-base: refused"));
	s = store_of(f);
	assert_int_equal(answer_of(s, "k1", &r), 1);
	pk_store_reply_free(r);
	assert_int_equal(outbox_mails(f), 2);

	/* the same command queued again by hand (a crash between the answer and the job's end) */
	assert_int_equal(pk_store_mail_find(s, "k1@example.org", &mail, NULL), 1);
	payload = g_strdup_printf("{\"command\":\"test\",\"mail\":%" G_GINT64_FORMAT "}", mail);
	assert_int_equal(pk_store_job_add(s, &jid, PK_JOB_COMMAND, payload, NULL), 0);
	pk_store_close(g_steal_pointer(&s));
	g_free(log);
	log = run_once(f, false);
	assert_non_null(strstr(log, "answered before (<printkbot-"));
	assert_null(strstr(log, "testing"));
	assert_int_equal(outbox_mails(f), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_command_answered_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commands_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_taken_over, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commands_forged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commands_limits, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
