/*
 * test-intake.c - the mbox and Maildir backends and the store's queue:
 * mail appended to an mbox is read from where the last fetch stopped (and
 * once only, across a reopen, as after a restart), a Maildir's new mail is
 * seen through inotify and moved to cur/, a failing deliver leaves the
 * position where it was, and a reply job that is retried waits its turn.
 * And where a source starts: now (what it holds is not read, what comes
 * after is; a file replaced later is read again without its past), a
 * date, or a position kept from before.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/time.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "intake/intake.h"
#include "store/store.h"

#define MAIL(id) "From x@y Mon Jan  1 00:00:00 2024\nFrom: a@b\nSubject: m\nMessage-ID: <" id ">\n\nbody\n>From quoted\n\n"

/* A mail with a Date (NULL: none). */
#define DATED(id, date) "From x@y Mon Jan  1 00:00:00 2024\nFrom: a@b\nSubject: m\n" \
	"Date: " date "\nMessage-ID: <" id ">\n\nbody\n\n"
#define OLD "Mon, 6 Jan 2020 10:00:00 +0000"
#define NEW "Fri, 1 Jan 2099 10:00:00 +0000"

struct fixture {
	char *dir;
	struct pk_store *store;
};

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autofree char *db = NULL;

	f->dir = g_dir_make_tmp("pk-intake-XXXXXX", NULL);
	db = g_build_filename(f->dir, "t.db", NULL);
	assert_int_equal(pk_store_open(&f->store, db, NULL), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->dir);

	pk_store_close(f->store);
	g_assert(system(cmd) == 0);
	g_free(f->dir);
	g_free(f);
	return 0;
}

struct got {
	GPtrArray *mails;
	int fail_at;          /* deliver fails on this mail (1-based), 0 never */
};

static int collect(void *data, const char *raw, size_t len, GError **err)
{
	struct got *g = data;

	if (g->fail_at && (int)g->mails->len + 1 == g->fail_at) {
		g_set_error(err, g_quark_from_static_string("test"), 1, "deliver failed");
		return -1;
	}
	g_ptr_array_add(g->mails, g_strndup(raw, len));
	return 0;
}

/* Date path's last write `ago` seconds back (a writer done with it that long ago). */
static void written_ago(const char *path, int ago)
{
	struct timeval t[2];

	gettimeofday(&t[0], NULL);
	t[0].tv_sec -= ago;
	t[1] = t[0];
	assert_int_equal(utimes(path, t), 0);
}

/* Append in place, as a delivery agent does (same inode), but not done yet. */
static void append_now(const char *path, const char *text)
{
	FILE *fp = fopen(path, "a");

	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

/* Append, as a delivery agent that is done with the file (its last mail is read at once). */
static void append(const char *path, const char *text)
{
	append_now(path, text);
	written_ago(path, 10);
}

/* Write a whole new file (another inode: written beside, renamed over), done with. */
static void replace(const char *path, const char *text)
{
	assert_true(g_file_set_contents(path, text, -1, NULL));
	written_ago(path, 10);
}

static unsigned fetch(struct pk_intake *in, struct got *g, int rc_want)
{
	g_autoptr(GError) err = NULL;
	unsigned n = 0;

	assert_int_equal(in->ops->fetch(in->state, collect, g, &n, &err), rc_want);
	return n;
}

/* As the daemon fetches: through pk_intake_fetch(), with the start rules. */
static unsigned fetch_started(struct pk_intake *in, struct got *g)
{
	g_autoptr(GError) err = NULL;
	unsigned n = 0;

	if (pk_intake_fetch(in, collect, g, &n, &err) < 0)
		fail_msg("fetch: %s", err->message);
	return n;
}

static bool got_id(struct got *g, guint i, const char *id)
{
	g_autofree char *want = g_strdup_printf("Message-ID: <%s>", id);

	return i < g->mails->len && strstr(g->mails->pdata[i], want);
}

static void test_mbox(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, "list.mbox", NULL);
	struct pk_source_config cfg = { .name = "t", .type = "mbox", .path = path, .poll_interval = 1 };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;
	struct pollfd p;

	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch(in, &g, 0), 0);          /* no file yet */
	append(path, MAIL("1@x") MAIL("2@x"));
	p = (struct pollfd){ in->ops->watch_fd(in->state), POLLIN, 0 };
	assert_int_equal(poll(&p, 1, 1000), 1);         /* the writer closed it: inotify says so */
	assert_int_equal(fetch(in, &g, 0), 2);
	assert_non_null(strstr(g.mails->pdata[0], "Message-ID: <1@x>"));
	assert_non_null(strstr(g.mails->pdata[1], "Message-ID: <2@x>"));
	assert_int_equal(fetch(in, &g, 0), 0);          /* nothing new */
	append(path, MAIL("3@x") MAIL("4@x"));
	g.fail_at = 4;                                   /* the second new one fails */
	assert_int_equal(fetch(in, &g, -1), 1);         /* counts what was handed over before */
	assert_int_equal(g.mails->len, 3);
	pk_intake_close(in);
	/* reopened, as after a restart: the failed mail comes again, nothing else */
	g.fail_at = 0;
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch(in, &g, 0), 1);
	assert_non_null(strstr(g.mails->pdata[3], "Message-ID: <4@x>"));
	/* a file replaced by a shorter one is read from its start */
	g_unlink(path);
	append(path, MAIL("5@x"));
	assert_int_equal(fetch(in, &g, 0), 1);
	assert_non_null(strstr(g.mails->pdata[4], "Message-ID: <5@x>"));
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

static void test_maildir(void **state)
{
	struct fixture *f = *state;
	g_autofree char *md = g_build_filename(f->dir, "Maildir", NULL);
	g_autofree char *tmp = g_build_filename(md, "tmp", "1.x", NULL);
	g_autofree char *newp = g_build_filename(md, "new", "1.x", NULL);
	g_autofree char *cur = g_build_filename(md, "cur", NULL);
	struct pk_source_config cfg = { .name = "m", .type = "maildir", .path = md, .poll_interval = 1 };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;
	struct pollfd p;
	g_autoptr(GDir) dir = NULL;

	for (const char *const *s = (const char *const[]){ "tmp", "new", "cur", NULL }; *s; s++) {
		g_autofree char *d = g_build_filename(md, *s, NULL);
		g_mkdir_with_parents(d, 0755);
	}
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch(in, &g, 0), 0);
	/* a delivery: written in tmp/, renamed into new/ */
	assert_true(g_file_set_contents(tmp, "From: a@b\nMessage-ID: <md@x>\n\nhi\n", -1, NULL));
	assert_int_equal(g_rename(tmp, newp), 0);
	p = (struct pollfd){ in->ops->watch_fd(in->state), POLLIN, 0 };
	assert_int_equal(poll(&p, 1, 1000), 1);
	assert_int_equal(fetch(in, &g, 0), 1);
	assert_non_null(strstr(g.mails->pdata[0], "<md@x>"));
	assert_false(g_file_test(newp, G_FILE_TEST_EXISTS));
	dir = g_dir_open(cur, 0, NULL);
	assert_string_equal(g_dir_read_name(dir), "1.x:2,S");
	assert_int_equal(fetch(in, &g, 0), 0);
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/*
 * An mbox with start = now: what it holds at the first look is not read,
 * what is appended after is, also after a reopen.  Replaced by another
 * file, it is read again without what is dated before the start; once
 * that read got to the end, mail is read by position again, whatever its
 * date.
 */
static void test_mbox_start_now(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, "list.mbox", NULL);
	struct pk_source_config cfg = { .name = "now", .type = "mbox", .path = path,
					.start = PK_START_NOW };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;

	append(path, DATED("old1@x", OLD) DATED("new0@x", NEW));
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch_started(in, &g), 0);
	assert_true(in->started_now);
	append(path, DATED("old2@x", OLD));   /* dated long ago, appended now: new to the source */
	assert_int_equal(fetch_started(in, &g), 1);
	assert_false(in->started_now);
	assert_true(got_id(&g, 0, "old2@x"));
	pk_intake_close(in);
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch_started(in, &g), 0);
	/* replaced (another inode: written beside, renamed over): read again, not its past */
	replace(path, DATED("old1@x", OLD) DATED("undated@x", "") DATED("new1@x", NEW));
	assert_int_equal(fetch_started(in, &g), 1);
	assert_true(got_id(&g, 1, "new1@x"));
	append(path, DATED("old3@x", OLD));
	assert_int_equal(fetch_started(in, &g), 1);
	assert_true(got_id(&g, 2, "old3@x"));
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/* start = <date>: only mails dated on or after it, always; start = now keeps a position kept before. */
static void test_mbox_start_date(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, "list.mbox", NULL);
	struct pk_source_config cfg = { .name = "date", .type = "mbox", .path = path,
					.start = PK_START_DATE, .start_date = 1709251200 /* 2024-03-01 */ };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;

	append(path, DATED("feb@x", "Thu, 29 Feb 2024 23:59:59 +0000")
	       DATED("mar@x", "Fri, 1 Mar 2024 00:00:00 +0000")
	       DATED("east@x", "Fri, 1 Mar 2024 08:30:00 +0900")   /* 2024-02-29T23:30Z */
	       DATED("none@x", "") DATED("later@x", NEW));
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch_started(in, &g), 2);
	assert_true(got_id(&g, 0, "mar@x"));
	assert_true(got_id(&g, 1, "later@x"));
	append(path, DATED("feb2@x", "Thu, 29 Feb 2024 10:00:00 +0000") DATED("apr@x", NEW));
	assert_int_equal(fetch_started(in, &g), 1);
	assert_true(got_id(&g, 2, "apr@x"));
	pk_intake_close(in);
	/* the same source, now start = now: it was read before, so it goes on from there */
	cfg.start = PK_START_NOW;
	append(path, DATED("next@x", OLD));
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch_started(in, &g), 1);
	assert_true(got_id(&g, 3, "next@x"));
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/* A Maildir with start = now: new/ is moved to cur/ unread, and what is delivered after is read. */
static void test_maildir_start_now(void **state)
{
	struct fixture *f = *state;
	g_autofree char *md = g_build_filename(f->dir, "Maildir", NULL);
	g_autofree char *old = g_build_filename(md, "new", "1.old", NULL);
	g_autofree char *newp = g_build_filename(md, "new", "2.new", NULL);
	g_autofree char *was = g_build_filename(md, "cur", "1.old:2,", NULL);
	struct pk_source_config cfg = { .name = "mnow", .type = "maildir", .path = md,
					.start = PK_START_NOW };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;

	for (const char *const *s = (const char *const[]){ "tmp", "new", "cur", NULL }; *s; s++) {
		g_autofree char *d = g_build_filename(md, *s, NULL);
		g_mkdir_with_parents(d, 0755);
	}
	assert_true(g_file_set_contents(old, DATED("backlog@x", NEW), -1, NULL));
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch_started(in, &g), 0);
	assert_true(g_file_test(was, G_FILE_TEST_EXISTS));   /* noticed, not Seen */
	assert_true(g_file_set_contents(newp, DATED("fresh@x", OLD), -1, NULL));
	assert_int_equal(fetch_started(in, &g), 1);
	assert_true(got_id(&g, 0, "fresh@x"));
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/* Mails by Message-ID, and the queue: next due job by kind, retries waiting. */
static void test_queue(void **state)
{
	struct fixture *f = *state;
	struct pk_store_mail m = { .message_id = "<a@x>", .subject = "[PATCH] a", .state = "pending",
				   .version = 1, .number = 1, .total = 1, .churn = 2 };
	g_autoptr(GPtrArray) pending = NULL;
	g_autoptr(pk_store_job) next = NULL;
	g_autofree char *raw = NULL;
	gint64 id, again, job_s, job_r, wait;
	bool existed;
	size_t len;

	assert_int_equal(pk_store_mail_add(f->store, &id, &existed, &m, "raw mail", 8, NULL), 0);
	assert_false(existed);
	m.message_id = "a@x";      /* the same mail without <>: found, not added */
	assert_int_equal(pk_store_mail_add(f->store, &again, &existed, &m, "other", 5, NULL), 0);
	assert_true(existed);
	assert_int_equal(again, id);
	assert_int_equal(pk_store_mail_raw(f->store, id, &raw, &len, NULL), 1);
	assert_string_equal(raw, "raw mail");
	assert_int_equal(pk_store_mails(f->store, "pending", &pending, NULL), 0);
	assert_int_equal(pending->len, 1);
	assert_int_equal(((struct pk_store_mail *)pending->pdata[0])->churn, 2);

	assert_int_equal(pk_store_job_add(f->store, &job_s, PK_JOB_SERIES, "{}", NULL), 0);
	assert_int_equal(pk_store_job_add(f->store, &job_r, PK_JOB_REPLY, "{\"reply\":1}", NULL), 0);
	assert_int_equal(pk_store_job_next_due(f->store, PK_JOB_REPLY, 1000, &next, &wait, NULL), 1);
	assert_int_equal(next->id, job_r);
	g_clear_pointer(&next, pk_store_job_free);
	/* the reply could not be sent: back in the queue until t=2000 */
	assert_int_equal(pk_store_job_set_state(f->store, job_r, PK_JOB_RUNNING, NULL, NULL), 0);
	assert_int_equal(pk_store_job_retry_at(f->store, job_r, 2000, "server down", NULL), 0);
	assert_int_equal(pk_store_job_next_due(f->store, PK_JOB_REPLY, 1000, &next, &wait, NULL), 0);
	assert_int_equal(wait, 1000);
	assert_int_equal(pk_store_job_next_due(f->store, PK_JOB_ANY_KIND, 1000, &next, &wait, NULL), 1);
	assert_int_equal(next->id, job_s);    /* the other job is due meanwhile */
	g_clear_pointer(&next, pk_store_job_free);
	assert_int_equal(pk_store_job_next_due(f->store, PK_JOB_REPLY, 2000, &next, &wait, NULL), 1);
	assert_int_equal(next->id, job_r);
	assert_int_equal(next->attempts, 1);
	g_clear_pointer(&next, pk_store_job_free);
	/* a retry is only a move the state machine allows: a queued job is not running */
	assert_int_equal(pk_store_job_retry_at(f->store, job_r, 3000, "x", NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mbox, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maildir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_start_now, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_start_date, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maildir_start_now, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
