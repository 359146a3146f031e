/*
 * test-figures.c - the store's figures for monitoring (store/figures.c,
 * and the sources' last read of queue.c), on SQLite and PostgreSQL: jobs
 * by kind and state with the oldest queued one, histograms of mail to
 * review, mail to reply, builds and boots by status, each bucket counted
 * from rows whose seconds are known, and a source's last successful read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "store-fixture.h"

static const struct pk_store_worker worker = { "host:1", "machine", 1, 60 };

static gint64 add_job(struct pk_store *s, enum pk_job_kind kind)
{
	g_autoptr(GError) err = NULL;
	gint64 id = 0;

	if ((kind == PK_JOB_SERIES ? pk_store_job_add_series(s, &id, "k", 1, NULL, &err)
				   : pk_store_job_add(s, &id, kind, NULL, &err)) < 0)
		fail_msg("job: %s", err->message);
	return id;
}

static void test_queue_figures(void **state)
{
	g_autofree char *path = db_path("queue.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(pk_store_job) claimed = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_store_queue_figures f;
	gint64 a, b, c, r;

	/* an empty queue: all zeros, none queued */
	assert_int_equal(pk_store_queue_figures(s, &f, &err), 0);
	for (int k = 0; k < PK_JOB_KINDS; k++)
		for (int t = 0; t < PK_JOB_STATES; t++)
			assert_int_equal(f.jobs[k][t], 0);
	assert_int_equal(f.oldest_queued, 0);

	a = add_job(s, PK_JOB_SERIES);
	b = add_job(s, PK_JOB_SERIES);
	c = add_job(s, PK_JOB_SERIES);
	r = add_job(s, PK_JOB_REPLY);
	/* a claims the oldest (a) and fails it; b is cancelled; c and the reply wait */
	assert_int_equal(pk_store_job_claim(s, &worker, PK_JOB_ANY_KIND, 0, &claimed, NULL, &err), 1);
	assert_int_equal(claimed->id, a);
	assert_int_equal(pk_store_job_end(s, a, &worker, PK_JOB_FAILED, "no", 0, 0, &err), 1);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_CANCELLED, "newer", &err), 0);
	/* one of a kind this printkbot does not know, queued by a newer one */
	raw_exec(path, "INSERT INTO jobs (kind, created, updated) VALUES ('bisect', 1500, 1500)");
	{
		g_autofree char *sql = g_strdup_printf("UPDATE jobs SET created = 1000 WHERE id = %"
						       G_GINT64_FORMAT, c);
		g_autofree char *sql2 = g_strdup_printf("UPDATE jobs SET created = 2000 WHERE id = %"
							G_GINT64_FORMAT, r);
		raw_exec(path, sql);
		raw_exec(path, sql2);
	}
	assert_int_equal(pk_store_queue_figures(s, &f, &err), 0);
	assert_int_equal(f.jobs[PK_JOB_SERIES][PK_JOB_QUEUED], 1);
	assert_int_equal(f.jobs[PK_JOB_SERIES][PK_JOB_FAILED], 1);
	assert_int_equal(f.jobs[PK_JOB_SERIES][PK_JOB_CANCELLED], 1);
	assert_int_equal(f.jobs[PK_JOB_SERIES][PK_JOB_RUNNING], 0);
	assert_int_equal(f.jobs[PK_JOB_REPLY][PK_JOB_QUEUED], 1);
	assert_int_equal(f.jobs[PK_JOB_UNKNOWN][PK_JOB_QUEUED], 1);
	assert_int_equal(f.oldest_queued, 1000);

	/* a running job counts as running, and is not the oldest queued any more */
	pk_store_job_free(g_steal_pointer(&claimed));
	assert_int_equal(pk_store_job_claim(s, &worker, PK_JOB_SERIES, 0, &claimed, NULL, &err), 1);
	assert_int_equal(claimed->id, c);
	assert_int_equal(pk_store_queue_figures(s, &f, &err), 0);
	assert_int_equal(f.jobs[PK_JOB_SERIES][PK_JOB_QUEUED], 0);
	assert_int_equal(f.jobs[PK_JOB_SERIES][PK_JOB_RUNNING], 1);
	assert_int_equal(f.oldest_queued, 1500);
}

/* The one histogram of measure (it has no groups), checked against the wanted figures. */
static void check_one(struct pk_store *s, enum pk_store_measure measure, const double *bounds, guint n,
		      gint64 count, double sum, const gint64 *le)
{
	g_autoptr(GPtrArray) hs = NULL;
	g_autoptr(GError) err = NULL;
	const struct pk_store_histogram *h;

	if (pk_store_histogram(s, measure, bounds, n, &hs, &err) < 0)
		fail_msg("histogram %d: %s", (int)measure, err->message);
	assert_int_equal(hs->len, 1);
	h = hs->pdata[0];
	assert_null(h->group);
	assert_int_equal(h->count, count);
	assert_true(h->sum == sum);
	for (guint i = 0; i < n; i++)
		assert_int_equal(h->le[i], le[i]);
}

static gint64 add_mail(struct pk_store *s, const char *mid, gint64 received)
{
	struct pk_store_mail m = { .message_id = (char *)mid, .state = "queued", .received = received };
	g_autoptr(GError) err = NULL;
	gint64 id;

	if (pk_store_mail_add(s, &id, NULL, &m, NULL, 0, &err) < 0)
		fail_msg("mail: %s", err->message);
	return id;
}

static void test_mail_histograms(void **state)
{
	g_autofree char *path = db_path("mail.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	static const double bounds[] = { 60, 300, 1800 };
	const gint64 t0 = 1700000000;
	gint64 mail[3], reply[3];

	/* nothing tested yet: one histogram, empty */
	check_one(s, PK_MEASURE_MAIL_TO_REPLY, bounds, 3, 0, 0, (const gint64[]){ 0, 0, 0 });
	check_one(s, PK_MEASURE_MAIL_TO_REVIEW, bounds, 3, 0, 0, (const gint64[]){ 0, 0, 0 });

	/* three mails read 10 s apart, reviewed 100, 690 and 3980 s after */
	raw_exec(path, "INSERT INTO reviews (id, model, body, created) VALUES "
		 "(1, '{}', 'r', 1700000100), (2, '{}', 'r', 1700000700), (3, '{}', 'r', 1700004000)");
	for (int i = 0; i < 3; i++) {
		g_autofree char *mid = g_strdup_printf("m%d@x", i);
		struct pk_store_reply r = { .review_id = i + 1, .message_id = NULL, .text = "mail" };

		mail[i] = add_mail(s, mid, t0 + 10 * i);
		r.mail_id = mail[i];
		r.message_id = g_strdup_printf("reply%d@x", i);
		if (pk_store_reply_add(s, &reply[i], &r, &err) < 0)
			fail_msg("reply: %s", err->message);
		g_free(r.message_id);
	}
	/* the first two replies go out 200 and 990 s after their mails; the third waits */
	assert_int_equal(pk_store_reply_sent(s, reply[0], t0 + 200, &err), 0);
	assert_int_equal(pk_store_reply_sent(s, reply[1], t0 + 1000, &err), 0);
	check_one(s, PK_MEASURE_MAIL_TO_REPLY, bounds, 3, 2, 1190, (const gint64[]){ 0, 1, 2 });
	check_one(s, PK_MEASURE_MAIL_TO_REVIEW, bounds, 3, 3, 4770, (const gint64[]){ 0, 1, 2 });
	/* no bound: the count and the sum alone */
	check_one(s, PK_MEASURE_MAIL_TO_REPLY, NULL, 0, 2, 1190, NULL);
}

static void test_build_boot_histograms(void **state)
{
	g_autofree char *path = db_path("lab.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GPtrArray) builds = NULL, boots = NULL, none = NULL;
	g_autoptr(GError) err = NULL;
	static const double build_bounds[] = { 10, 60, 600 };
	static const double boot_bounds[] = { 5, 30 };
	const struct pk_store_histogram *h;
	double many[33] = { 0 };

	/* no build yet: no group */
	assert_int_equal(pk_store_histogram(s, PK_MEASURE_BUILD, build_bounds, 3, &none, &err), 0);
	assert_int_equal(none->len, 0);

	/* a build of unknown seconds counts as 0 s */
	raw_exec(path, "INSERT INTO builds (id, tree_commit, config_hash, status, seconds, created) VALUES "
		 "(1, 'a', 'h', 'ok', 30.5, 0), (2, 'b', 'h', 'ok', 200, 0), "
		 "(3, 'c', 'h', 'failed', 5, 0), (4, 'd', 'h', 'ok', NULL, 0)");
	raw_exec(path, "INSERT INTO boots (build_id, status, seconds, created) VALUES "
		 "(1, 'ok', 3.25, 0), (2, 'timeout', 60, 0)");
	assert_int_equal(pk_store_histogram(s, PK_MEASURE_BUILD, build_bounds, 3, &builds, &err), 0);
	assert_int_equal(builds->len, 2);
	h = builds->pdata[0];
	assert_string_equal(h->group, "failed");
	assert_int_equal(h->count, 1);
	assert_true(h->sum == 5);
	assert_int_equal(h->le[0], 1);
	assert_int_equal(h->le[2], 1);
	h = builds->pdata[1];
	assert_string_equal(h->group, "ok");
	assert_int_equal(h->count, 3);
	assert_true(h->sum == 230.5);
	assert_int_equal(h->le[0], 1);
	assert_int_equal(h->le[1], 2);
	assert_int_equal(h->le[2], 3);

	assert_int_equal(pk_store_histogram(s, PK_MEASURE_BOOT, boot_bounds, 2, &boots, &err), 0);
	assert_int_equal(boots->len, 2);
	h = boots->pdata[0];
	assert_string_equal(h->group, "ok");
	assert_int_equal(h->count, 1);
	assert_true(h->sum == 3.25);
	assert_int_equal(h->le[0], 1);
	h = boots->pdata[1];
	assert_string_equal(h->group, "timeout");
	assert_int_equal(h->le[1], 0);
	assert_int_equal(h->count, 1);

	/* what no caller asks: refused, not run */
	assert_int_equal(pk_store_histogram(s, PK_MEASURE_BOOT, many, 33, &none, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_histogram(s, (enum pk_store_measure)99, boot_bounds, 2, &none, &err), -1);
}

static void test_source_last_read(void **state)
{
	g_autofree char *path = db_path("sources.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GError) err = NULL;
	const struct pk_store_source *src;
	gint64 lore, box;

	assert_int_equal(pk_store_add_source(s, &lore, "public-inbox", "lore \"x\"", "/srv/pi", &err), 0);
	assert_int_equal(pk_store_add_source(s, &box, "maildir", "box", "/srv/box", &err), 0);
	assert_int_equal(pk_store_source_state_set(s, lore, "commit:0", "abc", &err), 0);
	assert_int_equal(pk_store_source_read(s, lore, 1700000000, &err), 0);
	assert_int_equal(pk_store_source_read(s, lore, 1700000100, &err), 0);
	assert_int_equal(pk_store_sources(s, &rows, &err), 0);
	assert_int_equal(rows->len, 2);
	src = rows->pdata[0];
	assert_int_equal(src->id, lore);
	assert_string_equal(src->kind, "public-inbox");
	assert_string_equal(src->name, "lore \"x\"");
	assert_int_equal(src->last_read, 1700000100);
	src = rows->pdata[1];
	assert_string_equal(src->name, "box");
	assert_int_equal(src->last_read, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_figures),
		cmocka_unit_test(test_mail_histograms),
		cmocka_unit_test(test_build_boot_histograms),
		cmocka_unit_test(test_source_last_read),
	};

	return run_both(tests, tests, setup, teardown);
}
