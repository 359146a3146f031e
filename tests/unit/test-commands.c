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
 * is refused with the reason, a quoted or unaddressed one is no command,
 * the rate limits per thread and per sender hold commands back (logged,
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
#include "base/proc.h"
#include "daemon-lab-fixture.h"

struct fixture {
	struct daemon_lab d;
	char *maildir;             /* the source */
};

static void write_config(struct fixture *f)
{
	g_autofree char *text = g_strdup_printf(
		"[store]\npath = %s/cmd.db\n"
		"[daemon]\noutbox = %s/outbox\nfrom = printkbot <bot@example.org>\nreply_on = always\n"
		"retry_min = 3600\nseries_wait = 0\n"
		"commands_from = max@example.org, @kernel.org\ncommands_per_hour = 4\n"
		"commands_per_thread_hour = 3\n"
		"[policy]\nmax_lines = 1\n"
		"[smtp]\nurl = smtp://127.0.0.1:9\n"
		"[tree lab]\npath = %s\nbranches = main\n"
		"[source list]\ntype = maildir\nstart = all\npath = %s\nlist = list@example.org\n",
		f->d.dir, f->d.dir, f->d.upstream, f->maildir);

	assert_true(g_file_set_contents(f->d.config, text, -1, NULL));
}

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);

	daemon_lab_init(&f->d, "pk-commands", "PK_TEST_COMMANDS",
			"int main(void)\n{\n\tpr_info(\"hello\\n\");\n\treturn 0;\n}\n");
	/* the lab's default base, as setup tags it */
	GIT(f->d.lab.tree, "tag", PK_LAB_BASE_TAG);
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

/* A command from from (a mailbox), To to, In-Reply-To (and References) parent's id, or none. */
static void deliver_command(struct fixture *f, const char *id, const char *from, const char *to,
			    const char *parent, const char *body)
{
	g_autofree char *headers = g_strdup_printf(
		"From: %s\nTo: %s\nCc: list@example.org\nSubject: Re: [PATCH] init: say hello there\n"
		"%s%s%s%s%s", from, to, parent ? "In-Reply-To: <" : "", parent ? parent : "", parent ? "@example.org>\n"
		"References: <" : "", parent ? parent : "", parent ? "@example.org>\n" : "");

	deliver(f, id, headers, body);
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
	assert_non_null(strstr(r->text, "    #printkbot test\r\n"));
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
	assert_non_null(strstr(r->text, "#printkbot test BASE"));
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
	assert_non_null(strstr(log, "over the rate: its thread <p1@example.org>"));
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
