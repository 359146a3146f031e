/*
 * test-replygate.c - which tested patches a list is mailed about, as the
 * daemon decides it (daemon/reply-gate.c), step by step with the
 * daemon-lab fixture: every patch here is refused by the policy
 * (max_lines = 1), an outcome that is the bot's limit, so nothing is
 * built.  A list without a group gets nothing; a list with reply =
 * changes gets no mail of the bot's limits; reply = always mails them,
 * until a brake holds (logged, stored with why); an embargoed mail waits
 * in its job, is replaced by a v2 that comes inside the window, and by a
 * resend whose series was queued before the mail was due.  The
 * console-changed half (a real kernel, real mail servers) is e2e 039.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "lab/lab.h"
#include "store/store.h"
#include "store/queue.h"
#include "base/proc.h"
#include "daemon-lab-fixture.h"

struct fixture {
	struct daemon_lab d;
	char *maildir;             /* the source */
};

/* The config: the daemon's keys, then lists (the [list] groups, or ""). */
static void write_config(struct fixture *f, const char *lists)
{
	g_autofree char *text = g_strdup_printf(
		"[store]\npath = %s/gate.db\n"
		"[daemon]\noutbox = %s/outbox\nfrom = printkbot <bot@example.org>\n"
		"retry_min = 3600\nseries_wait = 0\n"
		"[policy]\nmax_lines = 1\n"
		"[smtp]\nurl = smtp://127.0.0.1:9\n"
		"[source list]\ntype = maildir\nstart = all\npath = %s\n%s",
		f->d.dir, f->d.dir, f->maildir, lists);

	assert_true(g_file_set_contents(f->d.config, text, -1, NULL));
}

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);

	daemon_lab_init(&f->d, "pk-gate", "PK_TEST_GATE", "int main(void)\n{\n\tpr_info(\"hello\\n\");\n"
			"\tpr_info(\"two\\n\");\n\tpr_info(\"three\\n\");\n\tpr_info(\"four\\n\");\n\treturn 0;\n}\n");
	f->maildir = g_build_filename(f->d.dir, "maildir", NULL);
	for (const char *const *sub = (const char *const[]){ "new", "cur", "tmp", NULL }; *sub; sub++) {
		g_autofree char *p = g_build_filename(f->maildir, *sub, NULL);

		assert_int_equal(g_mkdir_with_parents(p, 0700), 0);
	}
	*state = f;
	return 0;
}

/* PK_TEST_GATE_LOG=1 shows the daemon's log of each run, PK_TEST_GATE_KEEP=1 keeps the dir */
static int teardown(void **state)
{
	struct fixture *f = *state;

	daemon_lab_clear(&f->d);
	g_free(f->maildir);
	g_free(f);
	return 0;
}

/*
 * A patch mail id@example.org from from, To list@example.org, with
 * subject, changing the message of line (1..4) of init.c; thread: its
 * In-Reply-To (NULL: a thread of its own).
 */
static void deliver_patch(struct fixture *f, const char *id, const char *from, const char *subject, int line,
			  const char *extra_headers)
{
	static const char *const msgs[] = { "hello", "two", "three", "four" };
	g_autofree char *path = g_strdup_printf("%s/new/%s", f->maildir, id);
	g_autofree char *mail = g_strdup_printf(
		"From: %s\nTo: list@example.org\nSubject: %s\n%sDate: Tue, 1 Dec 2026 10:00:00 +0000\n"
		"Message-ID: <%s@example.org>\n\nSay more.\n\nSigned-off-by: %s\n---\n"
		"diff --git a/init.c b/init.c\n--- a/init.c\n+++ b/init.c\n"
		"@@ -%d,1 +%d,1 @@ int main(void)\n-\tpr_info(\"%s\\n\");\n+\tpr_info(\"%s there\\n\");\n",
		from, subject, extra_headers ? extra_headers : "", id, from, line + 2, line + 2, msgs[line - 1],
		msgs[line - 1]);

	assert_true(g_file_set_contents(path, mail, -1, NULL));
}

static char *run_once(struct fixture *f)
{
	return daemon_lab_run_once(&f->d, false);
}

static struct pk_store *store_of(struct fixture *f)
{
	return daemon_lab_store(&f->d, "gate.db");
}

/* The reply row of mail id (*out new). */
static void reply_of(struct pk_store *s, const char *id, struct pk_store_reply **out)
{
	g_autofree char *mid = g_strdup_printf("%s@example.org", id);
	gint64 mail;

	assert_int_equal(pk_store_mail_find(s, mid, &mail, NULL), 1);
	assert_int_equal(pk_store_reply_for_mail(s, mail, out, NULL), 1);
}

static unsigned outbox_new(struct fixture *f)
{
	g_autofree char *dir = g_build_filename(f->d.dir, "outbox", "new", NULL);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	unsigned n = 0;

	while (d && g_dir_read_name(d))
		n++;
	return n;
}

static void must_have(const char *log, const char *what)
{
	if (!strstr(log, what))
		fail_msg("the log lacks \"%s\":\n%s", what, log);
}

/* No group, and [daemon] reply_on left off: tested, stored, nothing mailed, the row says why. */
static void test_no_group(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL;
	g_autoptr(pk_store) s = NULL;
	struct pk_store_reply *r = NULL;

	write_config(f, "");
	deliver_patch(f, "p1", "Jane Dev <jane@example.org>", "[PATCH] init: say hello there", 1, NULL);
	log = run_once(f);
	must_have(log, "refused: no mail (refused): a list with no [list] group ([daemon] reply_on = off): "
		  "reply = off");
	assert_int_equal(outbox_new(f), 0);
	s = store_of(f);
	reply_of(s, "p1", &r);
	assert_null(r->text);
	assert_null(r->list_name);
	assert_string_equal(r->rule, "refused");
	assert_string_equal(r->author, "jane@example.org");
	assert_non_null(strstr(r->held, "reply = off"));
	assert_int_equal(strlen(r->effect), 64);
	pk_store_reply_free(r);
}

/* reply = changes: the bot's limits are not mailed; the log and the row say which rule held. */
static void test_changes_holds_limits(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL;
	g_autoptr(pk_store) s = NULL;
	struct pk_store_reply *r = NULL;

	write_config(f, "[list l]\naddress = List@Example.org\n");
	deliver_patch(f, "p1", "Jane Dev <jane@example.org>", "[PATCH] init: say hello there", 1, NULL);
	log = run_once(f);
	must_have(log, "refused: no mail (refused): the bot's policy did not build it: ");
	must_have(log, "[list l] (by its To/Cc) mails the author's changes only");
	assert_int_equal(outbox_new(f), 0);
	s = store_of(f);
	reply_of(s, "p1", &r);
	assert_null(r->text);
	assert_string_equal(r->list_name, "list l");
	assert_string_equal(r->rule, "refused");
	pk_store_reply_free(r);
}

/* reply = always: mailed, until a brake: one a day to an author, two to the list. */
static void test_always_and_brakes(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL;
	g_autoptr(pk_store) s = NULL;
	struct pk_store_reply *r = NULL;

	write_config(f, "[list l]\naddress = list@example.org\nreply = always\nmax_per_day = 2\n"
		     "max_per_author_day = 1\n");
	deliver_patch(f, "p1", "Jane Dev <jane@example.org>", "[PATCH] init: say hello there", 1, NULL);
	log = run_once(f);
	must_have(log, "refused: mailed (refused: the bot's policy did not build it");
	assert_int_equal(outbox_new(f), 1);
	g_free(log);
	deliver_patch(f, "p2", "Jane Dev <jane@example.org>", "[PATCH] init: say two there", 2, NULL);
	log = run_once(f);
	must_have(log, "refused: no mail (refused): max_per_author_day: [list l] (by its To/Cc) had 1 mail to "
		  "jane@example.org in the last 24 hours (at most 1)");
	g_free(log);
	deliver_patch(f, "p3", "Joe Other <joe@example.org>", "[PATCH] init: say three there", 3, NULL);
	log = run_once(f);
	must_have(log, "<p3@example.org>: refused (review");
	assert_int_equal(outbox_new(f), 2);
	g_free(log);
	deliver_patch(f, "p4", "Bob Third <bob@example.org>", "[PATCH] init: say four there", 4, NULL);
	log = run_once(f);
	must_have(log, "no mail (refused): max_per_day: [list l] (by its To/Cc) had 2 mails in the last 24 hours "
		  "(at most 2)");
	assert_int_equal(outbox_new(f), 2);
	s = store_of(f);
	reply_of(s, "p2", &r);
	assert_null(r->text);
	assert_non_null(strstr(r->held, "max_per_author_day"));
	pk_store_reply_free(r);
	reply_of(s, "p3", &r);
	assert_non_null(r->text);
	assert_null(r->held);
	assert_non_null(strstr(r->text, "\r\nTo: Joe Other <joe@example.org>\r\n"));
	assert_non_null(strstr(r->text, "\r\nCc: list@example.org\r\n"));
	pk_store_reply_free(r);
}

/* subject_prefixes: a patch without one of the words in its tag is not mailed, and the log says so. */
static void test_subject_prefixes(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL;

	write_config(f, "[list l]\naddress = list@example.org\nreply = always\nsubject_prefixes = init-next\n");
	deliver_patch(f, "p1", "Jane Dev <jane@example.org>", "[PATCH] init: say hello there", 1, NULL);
	deliver_patch(f, "p2", "Joe Other <joe@example.org>", "[PATCH init-next] init: say two there", 2, NULL);
	log = run_once(f);
	must_have(log, "<p1@example.org>: refused: no mail (refused): the subject's [PATCH ...] tag has none of [list l] "
		  "(by its To/Cc)'s subject_prefixes (init-next)");
	must_have(log, "<p2@example.org>: refused: mailed (refused: ");
	assert_int_equal(outbox_new(f), 1);
}

/* Every job of kind with its state and series key, "id state key" lines (caller frees). */
static char *reply_jobs(struct pk_store *s)
{
	g_autoptr(GPtrArray) jobs = NULL;
	GString *out = g_string_new(NULL);

	assert_int_equal(pk_store_jobs(s, PK_JOB_ANY_STATE, &jobs, NULL), 0);
	for (guint i = 0; i < jobs->len; i++) {
		const struct pk_store_job *j = jobs->pdata[i];

		if (j->kind == PK_JOB_REPLY)
			g_string_append_printf(out, "%" G_GINT64_FORMAT " %s %s\n", j->id, pk_job_state_name(j->state),
					       j->series_key ? "keyed" : "-");
	}
	return g_string_free(out, FALSE);
}

/*
 * An embargo: the mail waits in its job (not due, not in the outbox);
 * a v2 of the series inside the window cancels that job, and the row
 * says it was replaced; the v2's own mail waits in turn.
 */
static void test_embargo_replaced_by_v2(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL, *jobs = NULL;
	g_autoptr(pk_store) s = NULL;
	struct pk_store_reply *r = NULL;

	write_config(f, "[list l]\naddress = list@example.org\nreply = always\nembargo_minutes = 60\n");
	deliver_patch(f, "v1", "Jane Dev <jane@example.org>", "[PATCH] init: say hello there", 1, NULL);
	log = run_once(f);
	must_have(log, "waits out the list's embargo");
	assert_int_equal(outbox_new(f), 0);
	s = store_of(f);
	jobs = reply_jobs(s);
	assert_non_null(strstr(jobs, " queued keyed\n"));
	pk_store_close(g_steal_pointer(&s));
	g_free(log);

	deliver_patch(f, "v2", "Jane Dev <jane@example.org>", "[PATCH v2] init: say hello there", 1, NULL);
	log = run_once(f);
	must_have(log, "reply not sent: replaced by v2 (job ");
	assert_int_equal(outbox_new(f), 0);
	s = store_of(f);
	reply_of(s, "v1", &r);
	assert_non_null(r->text);   /* rendered, kept, never sent */
	assert_non_null(strstr(r->held, "replaced by v2"));
	pk_store_reply_free(r);
	reply_of(s, "v2", &r);
	assert_null(r->held);
	pk_store_reply_free(r);
	g_free(jobs);
	jobs = reply_jobs(s);
	assert_non_null(strstr(jobs, " cancelled keyed\n"));
	assert_non_null(strstr(jobs, " queued keyed\n"));
}

/* Set every queued job's not_before to 0, as if the embargo had passed. */
static void embargo_passes(struct fixture *f)
{
	g_autofree char *db = g_build_filename(f->d.dir, "gate.db", NULL);
	const char *argv[] = { "sqlite3", db, "UPDATE jobs SET not_before = 0 WHERE state = 'queued'", NULL };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result res;

	assert_int_equal(pk_proc_run(&res, argv, &o, NULL), 0);
	assert_true(pk_proc_ok(&res));
}

/*
 * A resend (the same version, a thread of its own) queued while the
 * first post waited to be tested: the first post's mail, due, is not
 * sent (the resend replaced it inside the window); the resend's is.
 */
static void test_embargo_replaced_by_resend(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL;
	g_autoptr(pk_store) s = NULL;
	struct pk_store_reply *r = NULL;

	write_config(f, "[list l]\naddress = list@example.org\nreply = always\nembargo_minutes = 60\n");
	deliver_patch(f, "p1", "Jane Dev <jane@example.org>", "[PATCH] init: say hello there", 1, NULL);
	log = daemon_lab_run_once(&f->d, true);
	g_free(log);
	deliver_patch(f, "p1-resend", "Jane Dev <jane@example.org>", "[PATCH RESEND] init: say hello there", 1, NULL);
	log = daemon_lab_run_once(&f->d, true);
	must_have(log, "queued: [PATCH RESEND] init: say hello there");
	g_free(log);
	/* both tested; both mails wait */
	log = run_once(f);
	assert_int_equal(outbox_new(f), 0);
	g_free(log);
	embargo_passes(f);
	log = run_once(f);
	must_have(log, "not sent: replaced by a later version or a resend of its series (job ");
	/* the resend's is sent (the server is down here: it waits in the outbox, retried) */
	must_have(log, "not sent (attempt 1)");
	assert_int_equal(outbox_new(f), 1);
	s = store_of(f);
	reply_of(s, "p1", &r);
	assert_non_null(strstr(r->held, "replaced by a later version or a resend"));
	pk_store_reply_free(r);
	reply_of(s, "p1-resend", &r);
	assert_null(r->held);
	pk_store_reply_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changes_holds_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_always_and_brakes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_subject_prefixes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_embargo_replaced_by_v2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_embargo_replaced_by_resend, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
