/*
 * test-store.c - the store: schema and migrations, bad files,
 * captures stored and loaded back, shared records and index entries,
 * patches, transactions and reviews.  The queue is test-queue.c, history
 * test-history.c; all three share store-fixture.h.  What is not about
 * SQLite's files runs again on PostgreSQL (store-fixture.h's run_both()).
 *
 * This test includes sqlite3.h (through store-fixture.h), which bot/
 * modules other than the store never do: it has to write files the way an
 * older printkbot (or a stranger) would, and look at the schema from
 * outside the store.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "store-fixture.h"
#include "tinyfs.h"

/* A capture with a few records (one with a dictionary) and an index. */
static struct pk_capture *mkcapture(unsigned n_index, const char *changed_format)
{
	struct pk_capture *cap = g_new0(struct pk_capture, 1);
	static const char *const texts[] = {
		"Linux version 6.12.0 (printkbot@printkbot)", "Command line: console=ttyS0",
		"sched_clock: Marking stable", "caf\xc3\xa9 \x01 raw bytes \xff",
		"Command line: console=ttyS0",   /* a repeated line shares its row */
	};

	cap->records = g_ptr_array_new_with_free_func((GDestroyNotify)pk_record_free);
	cap->index = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	cap->problems = g_string_new("init: index truncated\n");
	cap->lost = 3;
	cap->complete = true;
	for (unsigned i = 0; i < G_N_ELEMENTS(texts); i++) {
		struct pk_record *r = g_new0(struct pk_record, 1);
		unsigned k = i == 4 ? 1 : i;   /* the repeat: all but seq and time */

		r->level = (int)(k % 8);
		r->facility = k == 2 ? 3 : 0;
		r->seq = 100 + i;
		r->ts_usec = 1000ull * i + 17;
		r->cont = k == 2;
		r->caller = k % 2 ? g_strdup_printf("T%u", k) : NULL;
		r->text = g_strdup(texts[i]);
		r->dict = g_ptr_array_new_with_free_func(g_free);
		if (k == 1) {
			g_ptr_array_add(r->dict, g_strdup("SUBSYSTEM=pci"));
			g_ptr_array_add(r->dict, g_strdup("DEVICE=+pci:0000:00:01.0"));
		}
		g_ptr_array_add(cap->records, r);
	}
	for (unsigned i = 0; i < n_index; i++) {
		struct pk_index_entry *e = g_new0(struct pk_index_entry, 1);

		e->level = i % 9 == 8 ? -1 : (int)(i % 8);
		e->cont = i % 5 == 0;
		e->file = g_strdup_printf("kernel/f%u.c", i / 10);
		e->line = (int)i;
		e->func = g_strdup_printf("func%u", i);
		e->format = g_strdup_printf(i == 7 && changed_format ? changed_format
					    : "message %u: %%d\n", i);
		g_ptr_array_add(cap->index, e);
	}
	return cap;
}

static void assert_captures_equal(const struct pk_capture *a, const struct pk_capture *b)
{
	assert_int_equal(a->records->len, b->records->len);
	assert_int_equal(a->index->len, b->index->len);
	assert_int_equal(a->lost, b->lost);
	assert_int_equal(a->complete, b->complete);
	assert_string_equal(a->problems->str, b->problems->str);
	for (guint i = 0; i < a->records->len; i++) {
		const struct pk_record *x = a->records->pdata[i], *y = b->records->pdata[i];

		assert_int_equal(x->level, y->level);
		assert_int_equal(x->facility, y->facility);
		assert_int_equal(x->seq, y->seq);
		assert_int_equal(x->ts_usec, y->ts_usec);
		assert_int_equal(x->cont, y->cont);
		assert_true(!g_strcmp0(x->caller, y->caller));
		assert_string_equal(x->text, y->text);
		assert_int_equal(x->dict->len, y->dict->len);
		for (guint k = 0; k < x->dict->len; k++)
			assert_string_equal(x->dict->pdata[k], y->dict->pdata[k]);
	}
	for (guint i = 0; i < a->index->len; i++) {
		const struct pk_index_entry *x = a->index->pdata[i], *y = b->index->pdata[i];

		assert_int_equal(x->level, y->level);
		assert_int_equal(x->cont, y->cont);
		assert_string_equal(x->file, y->file);
		assert_int_equal(x->line, y->line);
		assert_string_equal(x->func, y->func);
		assert_string_equal(x->format, y->format);
	}
}

static gint64 add_build(struct pk_store *s, const char *tree, const char *base, const char *cfg)
{
	struct pk_build_result b = { .ok = true, .seconds = 12.5 };
	g_autoptr(GError) err = NULL;
	gint64 id = 0;

	if (pk_store_add_build(s, &id, tree, base, cfg, "x86_64", &b, &err) < 0)
		fail_msg("add build: %s", err->message);
	return id;
}

static gint64 add_boot(struct pk_store *s, gint64 build, struct pk_capture *cap)
{
	struct pk_boot_result r = {
		.status = PK_BOOT_OK, .seconds = 3.25, .accel = "tcg",
		.cmdline = "console=ttyS0", .console = "[    0.000000] Linux version 6.12.0\n",
		.capture = cap,
	};
	g_autoptr(GError) err = NULL;
	gint64 id = 0;

	if (pk_store_add_boot(s, &id, build, &r, &err) < 0)
		fail_msg("add boot: %s", err->message);
	return id;
}

/* ---- schema, migrations, bad files ------------------------------------ */

static void test_create(void **state)
{
	g_autofree char *path = db_path("create.db");
	g_autoptr(pk_store) s = open_ok(path);
	struct pk_store_check check = { 0 };
	g_autoptr(GError) err = NULL;

	assert_string_equal(pk_store_path(s), path);
	assert_int_equal(count(s, "patches"), 0);
	pk_store_close(g_steal_pointer(&s));
	assert_int_equal(pk_store_check_file(&check, path, &err), 0);
	assert_int_equal(check.version, PK_STORE_SCHEMA_VERSION);
	assert_int_equal(check.problems->len, 0);
	pk_store_check_clear(&check);
	/* opening again is a no-op */
	s = open_ok(path);
}

static void test_default_path(void **state)
{
	g_autofree char *path = db_path("env.db");
	g_autofree char *got = NULL;

	g_setenv("PRINTKBOT_DB", path, TRUE);
	got = pk_store_default_path();
	assert_string_equal(got, path);
	{
		g_autoptr(pk_store) s = open_ok(NULL);

		assert_string_equal(pk_store_path(s), path);
	}
	g_unsetenv("PRINTKBOT_DB");
	assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
}

/*
 * A version-1 database with data, made from db/001-initial.sql alone, is
 * migrated on open: same shape as a new one, data intact, and the new
 * patches.verdict column filled from the stored test.
 */
static void test_migrate_v1(void **state)
{
	g_autofree char *old = db_path("v1.db");
	g_autofree char *fresh = db_path("v2.db");
	g_autofree char *v1 = migration_sql("001-initial.sql");
	g_autofree char *old_shape = NULL, *fresh_shape = NULL;
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_history_filter f = { .file = "kernel/sched/topology.c" };
	struct pk_history_row *r;

	raw_exec(old, v1);
	raw_exec(old, "PRAGMA user_version = 1;"
		 "INSERT INTO sources (id, kind, name, url) VALUES (1, 'mbox', 'lkml', "
		 " '/srv/mail/lkml.mbox');"
		 "INSERT INTO patches (id, source_id, message_id, subject, author, author_name, "
		 " author_email, time, scan_verdict, created) VALUES (1, 1, 'old@x', 'sched: old', "
		 " 'Jane Doe <jane@example.org>', 'Jane Doe', 'jane@example.org', 1700000000, "
		 " 'console-changed', 1700000000);"
		 "INSERT INTO builds (id, tree_commit, base_commit, config_hash, status, created) "
		 " VALUES (1, 'c0ffee', 'c0ffee', 'cfg', 'ok', 1700000000);"
		 "INSERT INTO tests (id, patch_id, before_build, verdict, created) VALUES "
		 " (1, 1, 1, 'no-visible-change', 1700000000);"
		 "INSERT INTO console_changes (test_id, seq, kind, old_text, new_text, file, line, func) "
		 " VALUES (1, 0, 'text-changed', 'old text', 'new text', 'kernel/sched/topology.c', "
		 " 42, 'build_sched_domains');");
	{
		g_autoptr(pk_store) s = open_ok(old);

		assert_int_equal(pk_store_history(s, &rows, &f, &err), 0);
		assert_int_equal(rows->len, 1);
		r = rows->pdata[0];
		assert_string_equal(r->subject, "sched: old");
		assert_string_equal(r->old_text, "old text");
		assert_string_equal(r->func, "build_sched_domains");
		assert_string_equal(r->verdict, "no-visible-change");
		assert_string_equal(r->link, "https://lore.kernel.org/r/old@x");
		assert_int_equal(count(s, "builds"), 1);
	}
	{
		g_autoptr(pk_store) s = open_ok(fresh);
	}
	old_shape = schema_shape(old);
	fresh_shape = schema_shape(fresh);
	assert_string_equal(old_shape, fresh_shape);
	/* the store filled the new column from the test, in the migration */
	{
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(db, "SELECT verdict FROM patches WHERE id = 1",
						    -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), "no-visible-change");
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
}

/*
 * A version-4 database with a queued series job: the migration to 5 reads
 * its series key and version from the payload, so a newer version of the
 * series supersedes it like a job queued since.
 */
static void test_migrate_v4_jobs(void **state)
{
	static const char *const steps[] = { "001-initial.sql", "002-history.sql",
					     "003-daemon.sql", "004-boot-records.sql" };
	g_autofree char *old = db_path("v4.db");
	g_autofree char *fresh = db_path("v5.db");
	g_autofree char *old_shape = NULL, *fresh_shape = NULL;
	g_autoptr(GArray) ids = NULL;
	g_autoptr(GError) err = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
		g_autofree char *sql = migration_sql(steps[i]);

		raw_exec(old, sql);
	}
	raw_exec(old, "PRAGMA user_version = 4;"
		 "INSERT INTO jobs (id, kind, payload, created, updated) VALUES (1, 'series', "
		 " '{\"key\":\"k\",\"version\":1,\"mails\":[1]}', 1, 1);"
		 "INSERT INTO jobs (id, kind, payload, created, updated) VALUES (2, 'series', "
		 " 'not json', 1, 1);"
		 "INSERT INTO jobs (id, kind, payload, created, updated) VALUES (3, 'reply', "
		 " '{\"reply\":1}', 1, 1);");
	{
		g_autoptr(pk_store) s = open_ok(old);

		assert_int_equal(pk_store_jobs_cancel_superseded(s, "k", 2, "superseded by v2", &ids,
								 &err), 0);
		assert_int_equal(ids->len, 1);
		assert_int_equal(g_array_index(ids, gint64, 0), 1);
	}
	{
		g_autoptr(pk_store) s = open_ok(fresh);
	}
	old_shape = schema_shape(old);
	fresh_shape = schema_shape(fresh);
	assert_string_equal(old_shape, fresh_shape);
}

/* One integer a query on the database file gives. */
static gint64 raw_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	gint64 v;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/*
 * A version-5 database with a test that changes, findings checked and a
 * review: the migration to 6 makes tests again (its CHECK takes
 * not-built) and every row that points at the test still does; then a
 * not-built test is stored with its coverage.
 */
static void test_migrate_v5_coverage(void **state)
{
	static const char *const steps[] = { "001-initial.sql", "002-history.sql", "003-daemon.sql",
					     "004-boot-records.sql", "005-job-series.sql" };
	g_autofree char *old = db_path("v5.db");
	g_autofree char *fresh = db_path("v6.db");
	g_autofree char *old_shape = NULL, *fresh_shape = NULL;
	g_autoptr(GPtrArray) cov = g_ptr_array_new_with_free_func(pk_file_coverage_free);
	g_autoptr(GError) err = NULL;
	struct pk_store_check check = { 0 };
	struct pk_store_test t = { .patch_id = 1, .verdict = PK_VERDICT_NOT_BUILT, .reason = "ahci.c is not built" };
	gint64 id;

	for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
		g_autofree char *sql = migration_sql(steps[i]);

		raw_exec(old, sql);
	}
	raw_exec(old, "PRAGMA user_version = 5;"
		 "INSERT INTO patches (id, subject, created) VALUES (1, 'ata: say less', 1);"
		 "INSERT INTO findings (id, patch_id, seq, file, line, kind) VALUES (1, 1, 0, 'a.c', 3, 'text-changed');"
		 "INSERT INTO tests (id, patch_id, verdict, created) VALUES (7, 1, 'console-changed', 1);"
		 "INSERT INTO console_changes (test_id, seq, kind) VALUES (7, 0, 'text-changed');"
		 "INSERT INTO index_changes (test_id, seq, kind) VALUES (7, 0, 'text-changed');"
		 "INSERT INTO finding_checks (test_id, finding_id, confirmation) VALUES (7, 1, 'seen-at-boot');"
		 "INSERT INTO reviews (id, test_id, model, body, created) VALUES (1, 7, '{}', 'x', 1);");
	{
		g_autoptr(pk_store) s = open_ok(old);

		g_ptr_array_add(cov, pk_file_coverage_new("drivers/ata/ahci.c", PK_COVERAGE_NOT_BUILT,
							  "CONFIG_ATA is not set", true));
		g_ptr_array_add(cov, pk_file_coverage_new("Documentation/ata.rst", PK_COVERAGE_NOT_BUILT,
							  "documentation", false));
		g_ptr_array_add(cov, pk_file_coverage_new("kernel/printk/printk.c", PK_COVERAGE_BOOTED, NULL, true));
		t.coverage = cov;
		assert_int_equal(pk_store_add_test(s, &id, &t, &err), 0);
		assert_int_equal(count(s, "test_coverage"), 3);
	}
	/* the old test and everything pointing at it came through */
	assert_int_equal(raw_int(old, "SELECT count(*) FROM tests WHERE id = 7 AND verdict = 'console-changed'"), 1);
	assert_int_equal(raw_int(old, "SELECT count(*) FROM console_changes WHERE test_id = 7"), 1);
	assert_int_equal(raw_int(old, "SELECT count(*) FROM index_changes WHERE test_id = 7"), 1);
	assert_int_equal(raw_int(old, "SELECT count(*) FROM finding_checks WHERE test_id = 7"), 1);
	assert_int_equal(raw_int(old, "SELECT test_id FROM reviews WHERE id = 1"), 7);
	assert_int_equal(raw_int(old, "SELECT count(*) FROM test_coverage c JOIN tests t ON t.id = c.test_id "
				 "WHERE t.verdict = 'not-built' AND c.state = 'not-built'"), 2);
	assert_int_equal(raw_int(old, "SELECT count(*) FROM patches WHERE verdict = 'not-built'"), 1);
	assert_int_equal(pk_store_check_file(&check, old, &err), 0);
	assert_int_equal(check.version, PK_STORE_SCHEMA_VERSION);
	assert_int_equal(check.problems->len, 0);
	pk_store_check_clear(&check);
	{
		g_autoptr(pk_store) s = open_ok(fresh);
	}
	old_shape = schema_shape(old);
	fresh_shape = schema_shape(fresh);
	assert_string_equal(old_shape, fresh_shape);
}

/*
 * A version-6 database with a job left running by a printkbot before
 * leases: the migration to 7 gives it an ended lease, so the first claim's
 * requeue puts it back in the queue, naming no worker; the shape is a
 * fresh database's.
 */
static void test_migrate_v6_leases(void **state)
{
	static const char *const steps[] = { "001-initial.sql", "002-history.sql", "003-daemon.sql",
					     "004-boot-records.sql", "005-job-series.sql", "006-coverage.sql" };
	g_autofree char *old = db_path("v6-jobs.db");
	g_autofree char *fresh = db_path("v7.db");
	g_autofree char *old_shape = NULL, *fresh_shape = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(GArray) ids = NULL;
	g_autoptr(GPtrArray) jobs = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
		g_autofree char *sql = migration_sql(steps[i]);

		raw_exec(old, sql);
	}
	raw_exec(old, "PRAGMA user_version = 6;"
		 "INSERT INTO jobs (id, kind, state, created, updated) VALUES (3, 'series', 'running', 1, 1);"
		 "INSERT INTO jobs (id, kind, state, created, updated) VALUES (4, 'reply', 'queued', 1, 1);");
	{
		g_autoptr(pk_store) s = open_ok(old);

		assert_int_equal(pk_store_jobs_requeue_expired(s, &ids, &err), 0);
		assert_int_equal(ids->len, 1);
		assert_int_equal(g_array_index(ids, gint64, 0), 3);
		assert_int_equal(pk_store_jobs(s, PK_JOB_QUEUED, &jobs, &err), 0);
		assert_int_equal(jobs->len, 2);
		assert_non_null(strstr(((struct pk_store_job *)jobs->pdata[0])->detail, "before leases"));
	}
	{
		g_autoptr(pk_store) s = open_ok(fresh);
	}
	old_shape = schema_shape(old);
	fresh_shape = schema_shape(fresh);
	assert_string_equal(old_shape, fresh_shape);
}

/*
 * A version-8 database with a reply: the migration to 9 makes replies
 * again (a pushed commit's mail has no mail_id), keeping the reply, its
 * id and its sent mark; the next reply gets the next id, and the shape
 * is a fresh database's.
 */
static void test_migrate_v8_replies(void **state)
{
	static const char *const steps[] = { "001-initial.sql", "002-history.sql", "003-daemon.sql",
					     "004-boot-records.sql", "005-job-series.sql", "006-coverage.sql",
					     "007-leases.sql", "008-secrets.sql" };
	g_autofree char *old = db_path("v8-replies.db");
	g_autofree char *fresh = db_path("v9.db");
	g_autofree char *old_shape = NULL, *fresh_shape = NULL;
	g_autoptr(GError) err = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
		g_autofree char *sql = migration_sql(steps[i]);

		raw_exec(old, sql);
	}
	raw_exec(old, "PRAGMA user_version = 8;"
		 "INSERT INTO mails (id, message_id, state, received) VALUES (1, 'm1@x', 'queued', 1);"
		 "INSERT INTO mails (id, message_id, state, received) VALUES (2, 'm2@x', 'queued', 1);"
		 "INSERT INTO replies (id, mail_id, message_id, text, sent) VALUES (7, 1, 'r7@bot', 'x', 5);");
	{
		g_autoptr(pk_store) s = open_ok(old);
		struct pk_store_reply *r = NULL;
		struct pk_store_reply next = { .mail_id = 2, .message_id = "r8@bot", .text = "y" };
		gint64 id = 0;

		assert_int_equal(pk_store_reply_by_message_id(s, "r7@bot", &r, &err), 1);
		assert_int_equal(r->id, 7);
		assert_int_equal(r->mail_id, 1);
		assert_int_equal(r->sent, 5);
		assert_int_equal(r->push_commit_id, 0);
		pk_store_reply_free(r);
		assert_int_equal(pk_store_reply_add(s, &id, &next, &err), 0);
		assert_int_equal(id, 8);
		/* neither a mail nor a commit: refused by the table */
		next.mail_id = 0;
		next.message_id = "r9@bot";
		assert_int_equal(pk_store_reply_add(s, &id, &next, &err), -1);
	}
	{
		g_autoptr(pk_store) s = open_ok(fresh);
	}
	old_shape = schema_shape(old);
	fresh_shape = schema_shape(fresh);
	assert_string_equal(old_shape, fresh_shape);
}

/*
 * The same migration on PostgreSQL, where its "-- pg:" line runs: a
 * fresh store has its replies put back as version 8 made them (ids by
 * identity) with a reply of id 7, then is opened: the reply is kept and
 * the next one gets id 8, not 1 (the identity moved past the copied ids).
 */
static void test_pg_migrate_v8_replies(void **state)
{
	g_autofree char *path = db_path("v8-replies");
	g_autoptr(GError) err = NULL;

	pk_store_close(open_ok(path));
	raw_exec(path, "DROP TABLE replies;"
		 "CREATE TABLE replies (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
		 "mail_id BIGINT NOT NULL UNIQUE REFERENCES mails(id), review_id BIGINT REFERENCES reviews(id), "
		 "job_id BIGINT REFERENCES jobs(id), after_commit TEXT, message_id TEXT UNIQUE, sender TEXT, "
		 "recipients TEXT, text TEXT, sent BIGINT);"
		 "DROP TABLE commands; DROP TABLE push_commits; DROP TABLE pushes;"
		 "ALTER TABLE builds DROP COLUMN config;"   /* version 12's */
		 "ALTER TABLE builds DROP COLUMN arch;"     /* version 13's */
		 "ALTER TABLE jobs DROP COLUMN arch; DROP TABLE workers;"   /* version 14's */
		 "INSERT INTO mails (id, message_id, state, received) VALUES (1, 'm1@x', 'queued', 1);"
		 "INSERT INTO mails (id, message_id, state, received) VALUES (2, 'm2@x', 'queued', 1);"
		 "INSERT INTO replies (id, mail_id, message_id, text, sent) VALUES (7, 1, 'r7@bot', 'x', 5);"
		 "UPDATE printkbot_schema SET version = 8");
	{
		g_autoptr(pk_store) s = open_ok(path);
		struct pk_store_reply *r = NULL;
		struct pk_store_reply next = { .mail_id = 2, .message_id = "r8@bot", .text = "y" };
		gint64 id = 0;

		assert_int_equal(pk_store_reply_by_message_id(s, "r7@bot", &r, &err), 1);
		assert_int_equal(r->id, 7);
		assert_int_equal(r->sent, 5);
		pk_store_reply_free(r);
		assert_int_equal(pk_store_reply_add(s, &id, &next, &err), 0);
		assert_int_equal(id, 8);
	}
}

/*
 * A version-9 database with mails: the migration to 10 adds commands
 * (what the rate limits of commands by mail count), the mails kept; a
 * command is one per mail, counted by sender and by thread since a time;
 * and the shape is a fresh database's.
 */
static void test_migrate_v9_commands(void **state)
{
	static const char *const steps[] = { "001-initial.sql", "002-history.sql", "003-daemon.sql",
					     "004-boot-records.sql", "005-job-series.sql", "006-coverage.sql",
					     "007-leases.sql", "008-secrets.sql", "009-pushes.sql" };
	g_autofree char *old = db_path("v9-commands.db");
	g_autofree char *fresh = db_path("v10.db");
	g_autofree char *old_shape = NULL, *fresh_shape = NULL;
	g_autoptr(GError) err = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
		g_autofree char *sql = migration_sql(steps[i]);

		raw_exec(old, sql);
	}
	raw_exec(old, "PRAGMA user_version = 9;"
		 "INSERT INTO mails (id, message_id, state, received) VALUES (1, 'c1@x', 'queued', 1);"
		 "INSERT INTO mails (id, message_id, state, received) VALUES (2, 'c2@x', 'queued', 1);");
	{
		g_autoptr(pk_store) s = open_ok(old);
		struct pk_store_command c = { .mail_id = 1, .sender = "max@example.org", .thread = "p1@x",
					      .command = "test", .arg = "debian:6.1", .created = 100 };
		gint64 id = 0, n = -1;

		assert_int_equal(pk_store_mail_find(s, "c2@x", &id, &err), 1);
		assert_int_equal(pk_store_command_add(s, &id, &c, &err), 0);
		assert_int_equal(pk_store_command_add(s, &id, &c, &err), -1);   /* one per mail */
		g_clear_error(&err);
		c.mail_id = 2;
		c.thread = "p2@x";
		c.created = 200;
		assert_int_equal(pk_store_command_add(s, &id, &c, &err), 0);
		assert_int_equal(pk_store_commands_since(s, "max@example.org", NULL, 100, &n, &err), 0);
		assert_int_equal(n, 2);
		assert_int_equal(pk_store_commands_since(s, "max@example.org", NULL, 101, &n, &err), 0);
		assert_int_equal(n, 1);
		assert_int_equal(pk_store_commands_since(s, NULL, "p1@x", 0, &n, &err), 0);
		assert_int_equal(n, 1);
		assert_int_equal(pk_store_commands_since(s, "jane@example.org", NULL, 0, &n, &err), 0);
		assert_int_equal(n, 0);
		/* all of them: the global limit */
		assert_int_equal(pk_store_commands_since(s, NULL, NULL, 0, &n, &err), 0);
		assert_int_equal(n, 2);
		assert_int_equal(pk_store_commands_since(s, NULL, NULL, 101, &n, &err), 0);
		assert_int_equal(n, 1);
	}
	{
		g_autoptr(pk_store) s = open_ok(fresh);
	}
	old_shape = schema_shape(old);
	fresh_shape = schema_shape(fresh);
	assert_string_equal(old_shape, fresh_shape);
}

static void test_newer_refused(void **state)
{
	g_autofree char *path = db_path("newer.db");
	g_autoptr(GError) err = NULL;
	struct pk_store *s = NULL;
	struct pk_store_check check = { 0 };

	pk_store_close(open_ok(path));
	raw_exec(path, pg_admin ? "UPDATE printkbot_schema SET version = 99" : "PRAGMA user_version = 99");
	assert_int_equal(pk_store_open(&s, path, &err), -1);
	assert_null(s);
	assert_non_null(strstr(err->message, "version 99"));
	{
		g_autofree char *ours = g_strdup_printf("(%d)", PK_STORE_SCHEMA_VERSION);
		assert_non_null(strstr(err->message, ours));
	}
	assert_int_equal(pk_store_check_file(&check, path, NULL), 0);
	assert_int_equal(check.version, 99);
	assert_int_equal(check.problems->len, 1);
	pk_store_check_clear(&check);
	/* the file was left as it was */
	assert_int_equal(pk_store_open(&s, path, NULL), -1);
}

/* A negative schema version is refused as it is, never stamped current without migrating. */
static void test_negative_version_refused(void **state)
{
	static const char *const versions[] = { "-1", "-3", "-2147483648" };

	for (size_t i = 0; i < G_N_ELEMENTS(versions); i++) {
		g_autofree char *path = db_path("negative.db");
		g_autofree char *pragma = g_strdup_printf("PRAGMA user_version = %s", versions[i]);
		g_autofree char *named = g_strdup_printf("version %s is no printkbot schema version", versions[i]);
		g_autoptr(GError) err = NULL;
		struct pk_store *s = NULL;
		struct pk_store_check check = { 0 };

		unlink(path);
		pk_store_close(open_ok(path));
		raw_exec(path, pragma);
		assert_int_equal(pk_store_open(&s, path, &err), -1);
		assert_null(s);
		print_message("%s\n", err->message);
		assert_non_null(strstr(err->message, named));
		assert_int_equal(pk_store_check_file(&check, path, NULL), 0);
		assert_int_equal(check.problems->len, 1);
		pk_store_check_clear(&check);
		/* left as it was: refused again */
		assert_int_equal(pk_store_open(&s, path, NULL), -1);
	}
}

/* In the child, the store's directory read-only: `db check` finds it sound (exit status 0). */
static int check_read_only(const char *dir, void *data)
{
	struct pk_store_check check = { 0 };
	g_autoptr(GError) err = NULL;

	if (pk_store_check_file(&check, data, &err) < 0) {
		fprintf(stderr, "check: %s\n", err->message);
		return 2;
	}
	for (guint i = 0; i < check.problems->len; i++)
		fprintf(stderr, "problem: %s\n", (char *)check.problems->pdata[i]);
	return check.problems->len ? 3 : check.version != PK_STORE_SCHEMA_VERSION ? 4 : 0;
}

/* A sound store on a read-only mount (no -shm can be made) is checked, not reported broken. */
static void test_check_read_only(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("pk-store-ro-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "ro.db", NULL);
	g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
	int rc;

	pk_store_close(open_ok(path));
	rc = tinyfs_run(dir, NULL, check_read_only, path);
	assert_int_equal(system(rm), 0);
	if (rc < 0)
		skip();   /* no mount namespace here */
	assert_int_equal(rc, 0);
}

/* In the child: the store read-only opens, reads, and refuses a write (exit status 0). */
static int read_read_only(const char *dir, void *data)
{
	g_autoptr(GError) err = NULL;
	struct pk_store *s = NULL;
	gint64 id = 0, n = -1;
	int rc = 0;

	if (pk_store_open_ext(&s, data, PK_STORE_OPEN_READONLY, &err) < 0) {
		fprintf(stderr, "open: %s\n", err->message);
		return 2;
	}
	if (pk_store_count(s, "sources", &n, &err) < 0 || n != 1)
		rc = 3;
	else if (pk_store_add_source(s, &id, "mbox", "other", NULL, NULL) == 0)
		rc = 4;
	pk_store_close(s);
	return rc;
}

/* Run check as another user (nobody when root, else with the directory read-only): its status. */
static int as_stranger(const char *dir, int (*check)(const char *, void *), void *data)
{
	bool root = geteuid() == 0;
	int status = 0;
	pid_t pid;

	if (!root)
		chmod(dir, 0555);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		if (root && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			     setresuid(65534, 65534, 65534) < 0))
			_exit(90);
		_exit(check(dir, data));
	}
	if (!root)
		chmod(dir, 0755);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1000;
	return WEXITSTATUS(status);
}

/*
 * A store the reader may not write (another user's file, a read-only
 * mount) serves the commands that only read; a read-only store writes
 * nothing, and one that needs migrating says so rather than migrating.
 */
static void test_open_read_only(void **state)
{
	g_autofree char *path = db_path("readonly.db");
	g_autoptr(GError) err = NULL;
	struct pk_store *s = open_ok(path);
	gint64 id = 0, version = 0;

	assert_int_equal(pk_store_add_source(s, &id, "mbox", "list", NULL, NULL), 0);
	pk_store_close(s);
	assert_int_equal(read_read_only(NULL, path), 0);
	if (pg_admin)
		return;
	{
		g_autofree char *dir = g_dir_make_tmp("pk-store-ro-XXXXXX", NULL);
		g_autofree char *theirs = g_build_filename(dir, "theirs.db", NULL);
		g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
		int rc;

		s = open_ok(theirs);
		assert_int_equal(pk_store_add_source(s, &id, "mbox", "list", NULL, NULL), 0);
		pk_store_close(s);
		chmod(dir, 0755);
		/* another user's file in their directory: no -shm can be made */
		assert_int_equal(as_stranger(dir, read_read_only, theirs), 0);
		/* and a read-only mount */
		rc = tinyfs_run(dir, NULL, read_read_only, theirs);
		assert_int_equal(system(rm), 0);
		assert_true(rc == 0 || rc == -1);
	}
	/* an older schema: refused, saying why, and left as it was */
	raw_exec(path, "PRAGMA user_version = 6");
	s = NULL;
	assert_int_equal(pk_store_open_ext(&s, path, PK_STORE_OPEN_READONLY, &err), -1);
	assert_null(s);
	assert_non_null(strstr(err->message, "needs migrating"));
	assert_non_null(strstr(err->message, "read-only"));
	{
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		version = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	assert_int_equal(version, 6);
	/* no file: not made */
	g_clear_error(&err);
	{
		g_autofree char *none = db_path("none.db");

		assert_int_equal(pk_store_open_ext(&s, none, PK_STORE_OPEN_READONLY, &err), -1);
		assert_non_null(strstr(err->message, "no database"));
		assert_false(g_file_test(none, G_FILE_TEST_EXISTS));
	}
}

/* `db check` of another user's store in their directory: sound, not "attempt to write". */
static void test_check_strangers(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("pk-store-ro-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "theirs.db", NULL);
	g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
	int rc;

	pk_store_close(open_ok(path));
	chmod(dir, 0755);
	rc = as_stranger(dir, check_read_only, path);
	assert_int_equal(system(rm), 0);
	assert_int_equal(rc, 0);
}

/* A secret is made once, kept, the same for every process on the store; another store has its own. */
static void test_secret(void **state)
{
	g_autofree char *path = db_path("secret.db"), *other_path = db_path("secret2.db");
	g_autofree char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	g_autoptr(GError) err = NULL;

	{
		g_autoptr(pk_store) s = open_ok(path);

		assert_int_equal(pk_store_secret(s, "reply-message-id", &a, &err), 0);
		assert_int_equal(strlen(a), 64);
		assert_true(strspn(a, "0123456789abcdef") == 64);
		assert_int_equal(pk_store_secret(s, "reply-message-id", &b, &err), 0);
		assert_string_equal(a, b);
	}
	{
		g_autoptr(pk_store) s = open_ok(path);
		g_autoptr(pk_store) other = open_ok(other_path);

		assert_int_equal(pk_store_secret(s, "reply-message-id", &c, &err), 0);
		assert_string_equal(a, c);
		assert_int_equal(pk_store_secret(other, "reply-message-id", &d, &err), 0);
		assert_string_not_equal(a, d);
	}
}

static void test_foreign_refused(void **state)
{
	g_autofree char *path = db_path("foreign.db");
	g_autoptr(GError) err = NULL;
	struct pk_store *s = NULL;

	raw_exec(path, pg_admin ? "CREATE TABLE mine (x int)" : "CREATE TABLE mine (x)");
	assert_int_equal(pk_store_open(&s, path, &err), -1);
	assert_non_null(strstr(err->message, "not a printkbot database"));
	/* and left alone: still in its own journal mode, no tables of ours */
	if (!pg_admin) {
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(db, "SELECT (SELECT journal_mode FROM "
						    "pragma_journal_mode), count(*) FROM sqlite_master",
						    -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), "delete");
		assert_int_equal(sqlite3_column_int(st, 1), 1);
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
}

/* PostgreSQL: a database whose text is UTF-8 would refuse a console's raw bytes, so it is refused. */
static void test_pg_encoding_refused(void **state)
{
	g_autofree char *path = db_path("utf8.db");
	g_autofree char *admin = g_strdup(pg_admin);
	const char *sql[] = { "DROP DATABASE IF EXISTS t_utf8_db",
			      "CREATE DATABASE t_utf8_db TEMPLATE template0 ENCODING 'UTF8'", NULL };
	g_autoptr(GError) err = NULL;
	struct pk_store *s = NULL;

	assert_true(pg_psql(admin, sql));
	assert_int_equal(pk_store_open(&s, path, &err), -1);
	assert_non_null(strstr(err->message, "not SQL_ASCII"));
}

/*
 * A password in the store's URL, in its userinfo or as password=, shows
 * in no message: not in the error of a failed open (libpq's own words
 * included, which quote a token of the URL they cannot decode), not in
 * pk_store_name() (what the daemon's start line and `db` print).  On
 * PostgreSQL, a database opened with one (the fixture trusts any).
 */
static void test_url_password_hidden(void **state)
{
	static const char *const unreachable[] = {
		"postgresql://bot:s3cretpw@/printkbot?host=/nonexistent-printkbot-test",
		"postgresql://bot@/printkbot?host=/nonexistent-printkbot-test&password=s3cretpw",
		"postgres:///printkbot?host=/nonexistent-printkbot-test&sslmode=disable&password=s3cretpw",
		"postgresql://bot:s3cretpw%zz@/printkbot?host=/nonexistent-printkbot-test",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(unreachable); i++) {
		g_autoptr(GError) err = NULL;
		struct pk_store *s = NULL;

		assert_int_equal(pk_store_open(&s, unreachable[i], &err), -1);
		print_message("%s\n", err->message);
		assert_null(strstr(err->message, "s3cret"));
		assert_non_null(strstr(err->message, "***"));
	}
	if (pg_admin) {
		g_autofree char *path = db_path("pw.db");
		g_autofree char *url = g_strconcat(path, "&password=s3cretpw", NULL);
		g_autoptr(pk_store) s = open_ok(url);

		assert_string_equal(pk_store_path(s), url);
		assert_null(strstr(pk_store_name(s), "s3cret"));
		assert_non_null(strstr(pk_store_name(s), "password=***"));
	}
}

/*
 * PostgreSQL: a connection the server dropped fails the statement with
 * PK_ERROR_TRANSIENT (a job retries it, as after SQLite's busy), and the
 * next statement outside a transaction connects again.
 */
static void test_pg_lost_connection(void **state)
{
	g_autofree char *path = db_path("lost.db");
	g_autoptr(pk_store) s = open_ok(path);
	const char *kill[] = { "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
			       "WHERE datname = 't_lost_db' AND pid <> pg_backend_pid()", NULL };
	g_autoptr(GError) err = NULL;
	gint64 id = 0;

	assert_true(pg_psql(pg_admin, kill));
	assert_int_equal(pk_store_add_source(s, &id, "mbox", "lost", NULL, &err), -1);
	assert_true(pk_error_transient(err));
	assert_int_equal(id, 0);
	g_clear_error(&err);
	if (pk_store_add_source(s, &id, "mbox", "lost", NULL, &err) < 0)
		fail_msg("after reconnecting: %s", err->message);
	assert_int_equal(count(s, "sources"), 1);
}

/*
 * One intake per database: on PostgreSQL a second store's lock is refused
 * while the first holds it, and taken once the first is closed; SQLite has
 * none (the daemon locks a file beside it).
 */
static void test_intake_lock(void **state)
{
	g_autofree char *path = db_path("intake.db");
	g_autoptr(GError) err = NULL;
	struct pk_store *first = open_ok(path);
	g_autoptr(pk_store) second = open_ok(path);
	bool pg = g_str_has_prefix(path, "postgresql://");

	assert_int_equal(pk_store_intake_lock(first, NULL), pg ? 1 : 0);
	if (!pg) {
		pk_store_close(first);
		return;
	}
	assert_int_equal(pk_store_intake_lock(second, &err), -1);
	assert_non_null(strstr(err->message, "another printkbot daemon's intake uses"));
	pk_store_close(first);
	/* the server frees a closed session's locks as its backend exits, a moment after the close */
	for (int i = 0; i < 50 && pk_store_intake_lock(second, NULL) != 1; i++)
		g_usleep(100000);
	assert_int_equal(pk_store_intake_lock(second, NULL), 1);
}

/*
 * PostgreSQL: the intake's lock is its session's, so a connection the
 * server dropped takes it again when it is made again; when another
 * intake took it in between, the store says the lock is lost.
 */
static void test_pg_intake_lock_reconnect(void **state)
{
	g_autofree char *path = db_path("relock.db");
	g_autoptr(pk_store) intake = open_ok(path);
	g_autoptr(pk_store) other = open_ok(path);
	g_autoptr(GError) err = NULL;
	gint64 id = 0;
	/* every session on the database but psql's own: both stores' */
	const char *kill_all[] = { "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
				   "WHERE datname = 't_relock_db' AND pid <> pg_backend_pid()", NULL };

	assert_int_equal(pk_store_intake_lock(intake, NULL), 1);
	assert_true(pg_psql(pg_admin, kill_all));
	assert_int_equal(pk_store_add_source(intake, &id, "mbox", "a", NULL, &err), -1);
	assert_true(pk_error_transient(err));
	g_clear_error(&err);
	if (pk_store_add_source(intake, &id, "mbox", "a", NULL, &err) < 0)
		fail_msg("after reconnecting: %s", err->message);
	assert_false(pk_store_intake_lost(intake));
	/* the lock is held again: the other store, reconnecting itself, is refused it */
	assert_int_equal(pk_store_add_source(other, &id, "mbox", "b", NULL, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_intake_lock(other, &err), -1);
	g_clear_error(&err);

	/* dropped again, and the other intake takes the lock before this one is back */
	assert_true(pg_psql(pg_admin, kill_all));
	assert_int_equal(pk_store_add_source(other, &id, "mbox", "c", NULL, &err), -1);
	g_clear_error(&err);
	for (int i = 0; i < 50 && pk_store_intake_lock(other, NULL) != 1; i++)
		g_usleep(100000);   /* until the killed session's backend has exited */
	assert_int_equal(pk_store_intake_lock(other, NULL), 1);
	assert_int_equal(pk_store_add_source(intake, &id, "mbox", "d", NULL, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_add_source(intake, &id, "mbox", "d", NULL, &err), 0);
	assert_true(pk_store_intake_lost(intake));
}

/*
 * Workers starting together on a new PostgreSQL database: each opens it,
 * one makes the schema.  (Not on SQLite: there a second process switching
 * a new file to WAL at the same moment gets "database is locked" at once,
 * as before the statement layer.)
 */
static void test_open_together(void **state)
{
	g_autofree char *path = db_path("together.db");
	pid_t pids[4];

	for (size_t i = 0; i < G_N_ELEMENTS(pids); i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct pk_store *s = NULL;
			g_autoptr(GError) err = NULL;

			if (pk_store_open(&s, path, &err) < 0) {
				fprintf(stderr, "open: %s\n", err->message);
				_exit(1);
			}
			pk_store_close(s);
			_exit(0);
		}
	}
	for (size_t i = 0; i < G_N_ELEMENTS(pids); i++) {
		int status = 0;

		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	{
		g_autoptr(pk_store) s = open_ok(path);

		assert_int_equal(count(s, "patches"), 0);
	}
}

static void test_random_bytes(void **state)
{
	g_autofree char *path = db_path("random.db");
	g_autoptr(GRand) rand = g_rand_new_with_seed(5);
	g_autoptr(GError) err = NULL;
	g_autoptr(GError) err2 = NULL;
	struct pk_store_check check = { 0 };
	struct pk_store *s = NULL;
	guint32 buf[16384];

	for (size_t i = 0; i < G_N_ELEMENTS(buf); i++)
		buf[i] = g_rand_int(rand);
	assert_int_equal(pk_write_file(path, (const char *)buf, sizeof(buf), NULL), 0);
	assert_int_equal(pk_store_open(&s, path, &err), -1);
	assert_null(s);
	assert_non_null(strstr(err->message, path));
	assert_non_null(strstr(err->message, "not a database"));
	assert_int_equal(pk_store_check_file(&check, path, &err2), 0);
	assert_int_equal(check.version, -1);
	assert_int_equal(check.problems->len, 1);
	assert_non_null(strstr(check.problems->pdata[0], "not a database"));
	pk_store_check_clear(&check);
	assert_int_equal(pk_store_check_file(&check, "/nonexistent/printkbot.db", &err2), -1);
	assert_non_null(strstr(err2->message, "no database at"));
}

/* Fill a database with enough rows to span many pages. */
static void fill(struct pk_store *s, unsigned n)
{
	g_autoptr(GError) err = NULL;

	assert_int_equal(pk_store_begin(s, &err), 0);
	for (unsigned i = 0; i < n; i++) {
		g_autofree char *mid = g_strdup_printf("fill%u@x", i);
		g_autofree char *subject = g_strdup_printf("[PATCH] fill %u with some words", i);
		struct pk_patch p = { .subject = subject, .message_id = mid,
				      .author = "A <a@x>", .diff = "diff --git a/x b/x\n" };
		gint64 id;

		if (pk_store_add_patch(s, &id, NULL, &p, NULL, &err) < 0)
			fail_msg("%s", err->message);
	}
	assert_int_equal(pk_store_commit(s, &err), 0);
}

/*
 * A database cut short: whatever part of the file survives, opening,
 * querying and checking it give an error message or a problem list, never
 * a crash.
 */
static void test_truncated(void **state)
{
	g_autofree char *path = db_path("truncated.db");
	g_autofree char *data = NULL;
	size_t len = 0;
	const size_t cuts[] = { 0, 50, 100, 4096, 3 * 4096 + 100 };

	{
		g_autoptr(pk_store) s = open_ok(path);

		fill(s, 2000);
	}
	assert_int_equal(pk_read_file(&data, &len, path, 0, NULL), 0);
	assert_true(len > 20 * 4096);
	for (size_t c = 0; c < G_N_ELEMENTS(cuts) + 1; c++) {
		size_t cut = c < G_N_ELEMENTS(cuts) ? cuts[c] : len / 2;
		g_autoptr(GError) err = NULL;
		g_autoptr(GPtrArray) rows = NULL;
		struct pk_history_filter f = { .author = "a@x" };
		struct pk_store_check check = { 0 };
		struct pk_store *s = NULL;
		int opened, checked;
		gboolean told = FALSE;

		assert_int_equal(pk_write_file(path, data, cut, NULL), 0);
		opened = pk_store_open(&s, path, &err);
		if (opened < 0) {
			assert_non_null(err);
			assert_non_null(strstr(err->message, path));
			told = TRUE;
		} else if (pk_store_history(s, &rows, &f, &err) < 0) {
			assert_non_null(strstr(err->message, path));
			told = TRUE;
		}
		pk_store_close(s);
		checked = pk_store_check_file(&check, path, NULL);
		if (checked == 0) {
			told |= check.problems->len > 0 || cut == 0;
			pk_store_check_clear(&check);
		} else {
			told = TRUE;
		}
		if (!told)
			fail_msg("a file cut at %zu of %zu bytes went unnoticed", cut, len);
	}
}

/* ---- captures and sharing --------------------------------------------- */

static void test_capture_roundtrip(void **state)
{
	g_autofree char *path = db_path("capture.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(pk_capture) cap = mkcapture(40, NULL);
	g_autoptr(pk_capture) back = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *console = NULL;
	gint64 build = add_build(s, "base", "base", "cfg1");
	gint64 boot = add_boot(s, build, cap), found = 0;

	assert_int_equal(pk_store_load_capture(s, boot, &back, &err), 0);
	assert_captures_equal(cap, back);
	assert_int_equal(pk_store_boot_console(s, boot, &console, &err), 0);
	assert_string_equal(console, "[    0.000000] Linux version 6.12.0\n");
	/* the cached before side is found by tree commit and config */
	assert_int_equal(pk_store_find_boot(s, "base", "cfg1", &found, &err), 1);
	assert_int_equal(found, boot);
	assert_int_equal(pk_store_find_build(s, "base", "cfg1", &found, &err), 1);
	assert_int_equal(found, build);
	found = 0;
	assert_int_equal(pk_store_find_boot(s, "base", "cfg2", &found, &err), 0);
	assert_int_equal(pk_store_find_boot(s, "other", "cfg1", &found, &err), 0);
	assert_int_equal(found, 0);
	assert_int_equal(pk_store_load_capture(s, 999, &back, &err), -1);
	assert_non_null(strstr(err->message, "no boot 999"));
}

/*
 * Records and index entries are stored once: two boots of the base share
 * every row, and a patched kernel whose index differs in one entry stores
 * one new entry and a short delta.
 */
static void test_dedupe(void **state)
{
	g_autofree char *path = db_path("dedupe.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(pk_capture) a = mkcapture(500, NULL);
	g_autoptr(pk_capture) b = mkcapture(500, NULL);
	g_autoptr(pk_capture) c = mkcapture(500, "changed %u\n");
	g_autoptr(pk_capture) back = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(GArray) boots = NULL;
	gint64 base = add_build(s, "base", "base", "cfg");
	gint64 boot1, boot2, boot3, boot4, patched;

	/* the second base boot printed its lines at other times */
	for (guint i = 0; i < b->records->len; i++)
		((struct pk_record *)b->records->pdata[i])->ts_usec += 5000;
	boot1 = add_boot(s, base, a);
	boot2 = add_boot(s, base, b);
	assert_int_equal(count(s, "index_entries"), 500);
	assert_int_equal(count(s, "index_sets"), 1);
	assert_int_equal(count(s, "index_set_items"), 500);
	assert_int_equal(count(s, "record_lines"), 4);     /* 5 records, one repeated */
	assert_int_equal(count(s, "boot_records"), 10);

	patched = add_build(s, "tip", "base", "cfg");
	boot3 = add_boot(s, patched, c);
	assert_int_equal(count(s, "index_entries"), 501);
	assert_int_equal(count(s, "index_sets"), 2);
	/* run [0,7), the changed entry, run [8,500) */
	assert_int_equal(count(s, "index_set_items"), 503);
	assert_int_equal(count(s, "record_lines"), 4);

	/* a record that differs only in its caller is a line of its own */
	{
		g_autoptr(pk_capture) d = mkcapture(500, NULL);
		struct pk_record *r = d->records->pdata[1];

		g_free(r->caller);
		r->caller = g_strdup("C1");
		boot4 = add_boot(s, base, d);
		assert_int_equal(count(s, "record_lines"), 5);
		assert_int_equal(pk_store_load_capture(s, boot4, &back, &err), 0);
		assert_captures_equal(d, back);
		g_clear_pointer(&back, pk_capture_free);
	}
	assert_int_equal(pk_store_load_capture(s, boot3, &back, &err), 0);
	assert_captures_equal(c, back);
	g_clear_pointer(&back, pk_capture_free);
	assert_int_equal(pk_store_load_capture(s, boot2, &back, &err), 0);
	assert_captures_equal(b, back);
	assert_int_equal(pk_store_build_boots(s, base, &boots, &err), 0);
	assert_int_equal(boots->len, 3);
	assert_int_equal(g_array_index(boots, gint64, 0), boot1);
	assert_int_equal(g_array_index(boots, gint64, 1), boot2);
	assert_int_equal(g_array_index(boots, gint64, 2), boot4);
}

/* A reordered index is still rebuilt exactly, whatever the delta costs. */
static void test_index_reordered(void **state)
{
	g_autofree char *path = db_path("reorder.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(pk_capture) a = mkcapture(60, NULL);
	g_autoptr(pk_capture) b = mkcapture(60, NULL);
	g_autoptr(pk_capture) back = NULL;
	g_autoptr(GError) err = NULL;
	gint64 base = add_build(s, "base", "base", "cfg");
	gint64 tip = add_build(s, "tip", "base", "cfg"), boot;

	add_boot(s, base, a);
	/* move entry 50 to the front and drop entry 10 */
	{
		gpointer e = g_ptr_array_steal_index(b->index, 50);

		g_ptr_array_insert(b->index, 0, e);
		g_ptr_array_remove_index(b->index, 11);
	}
	boot = add_boot(s, tip, b);
	assert_int_equal(pk_store_load_capture(s, boot, &back, &err), 0);
	assert_captures_equal(b, back);
}

static void test_noise(void **state)
{
	g_autofree char *path = db_path("noise.db");
	g_autoptr(pk_store) s = open_ok(path);
	const char *keys[] = { "6,0,0:clocksource: tsc: mask: 0x...", "6,0,0:random: crng init done", NULL };
	const char *none[] = { NULL };
	g_auto(GStrv) got = NULL;
	g_autoptr(GError) err = NULL;
	gint64 build = add_build(s, "base", "base", "cfg");

	assert_int_equal(pk_store_get_noise(s, build, &got, &err), 0);
	assert_int_equal(pk_store_set_noise(s, build, keys, 3, &err), 0);
	assert_int_equal(pk_store_get_noise(s, build, &got, &err), 1);
	assert_int_equal(g_strv_length(got), 2);
	assert_string_equal(got[0], keys[0]);
	g_clear_pointer(&got, g_strfreev);
	/* an empty mask learnt is a mask, and replaces the old one */
	assert_int_equal(pk_store_set_noise(s, build, none, 2, &err), 0);
	assert_int_equal(pk_store_get_noise(s, build, &got, &err), 1);
	assert_int_equal(g_strv_length(got), 0);
	g_clear_pointer(&got, g_strfreev);
	assert_int_equal(pk_store_set_noise(s, 777, keys, 2, &err), -1);
	g_clear_error(&err);
	/* confirmation boots grow a mask, keeping what it had */
	assert_int_equal(pk_store_set_noise(s, build, keys + 1, 3, &err), 0);
	assert_int_equal(pk_store_add_noise(s, build, keys, 1, &err), 0);
	assert_int_equal(pk_store_get_noise(s, build, &got, &err), 1);
	assert_int_equal(g_strv_length(got), 2);
	g_clear_pointer(&got, g_strfreev);
	/* and leave a build without a mask without one (an after side's boot is no mask) */
	{
		gint64 after = add_build(s, "after", "base", "cfg");

		assert_int_equal(pk_store_add_noise(s, after, keys, 1, &err), 0);
		assert_int_equal(pk_store_get_noise(s, after, &got, &err), 0);
	}
}

/* ---- intake, tests, reviews, jobs ------------------------------------- */

static void test_patches(void **state)
{
	g_autofree char *path = db_path("patches.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autofree char *raw = NULL;
	struct pk_patch p = {
		.subject = "[RFC PATCH net-next v3 02/10] net: say less",
		.message_id = "<m1@example.org>", .author = "Jane Doe <jane@example.org>",
		.description = "net: say less\n\nQuieter.\n", .diff = "diff --git a/a.c b/a.c\n",
	};
	struct pk_store_patch_opts o = PK_STORE_PATCH_OPTS_INIT;
	struct pk_store_series series = { .cover_message_id = "<c@example.org>", .total = 10, .version = 3 };
	gint64 id1, id2, id3, ser1, ser2, src;
	bool existed = true;

	assert_int_equal(pk_store_add_source(s, &src, "mbox", "netdev", NULL, &err), 0);
	assert_int_equal(pk_store_add_source(s, &id1, "mbox", "netdev", NULL, &err), 0);
	assert_int_equal(id1, src);
	assert_int_equal(pk_store_add_source(s, &id1, "nntp", "x", NULL, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_add_series(s, &ser1, &series, &err), 0);
	assert_int_equal(pk_store_add_series(s, &ser2, &series, &err), 0);
	assert_int_equal(ser1, ser2);
	o.source_id = src;
	o.series_id = ser1;
	assert_int_equal(pk_store_add_patch(s, &id1, &existed, &p, &o, &err), 0);
	assert_false(existed);
	p.message_id = "m1@example.org";   /* the same mail, brackets or not */
	assert_int_equal(pk_store_add_patch(s, &id2, &existed, &p, &o, &err), 0);
	assert_true(existed);
	assert_int_equal(id1, id2);
	assert_int_equal(pk_store_patch_raw(s, id1, &raw, &err), 0);
	assert_string_equal(raw, "net: say less\n\nQuieter.\n---\ndiff --git a/a.c b/a.c\n");
	/* a commit without a Message-ID is found by its commit id */
	p.message_id = NULL;
	o.commit = "0123abcd";
	o.keep_raw = false;
	assert_int_equal(pk_store_add_patch(s, &id3, &existed, &p, &o, &err), 0);
	assert_false(existed);
	assert_int_equal(pk_store_add_patch(s, &id2, &existed, &p, &o, &err), 0);
	assert_true(existed);
	assert_int_equal(id2, id3);
	assert_int_equal(pk_store_patch_raw(s, id3, &raw, &err), -1);
	assert_int_equal(count(s, "patches"), 2);
	/* the subject's [PATCH v3 02/10] when intake did not say (read from the SQLite file) */
	if (!pg_admin) {
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(db, "SELECT version, number, total FROM patches "
						    "WHERE id = ?1", -1, &st, NULL), SQLITE_OK);
		sqlite3_bind_int64(st, 1, id1);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(st, 0), 3);
		assert_int_equal(sqlite3_column_int(st, 1), 2);
		assert_int_equal(sqlite3_column_int(st, 2), 10);
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
}

static void test_transaction(void **state)
{
	g_autofree char *path = db_path("tx.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	struct pk_patch p = { .subject = "x", .message_id = "tx@x", .diff = "" };
	struct pk_store_test bad = { .verdict = PK_VERDICT_NONE };   /* stored as "", not a verdict */
	gint64 id;

	assert_int_equal(pk_store_begin(s, &err), 0);
	assert_int_equal(pk_store_add_patch(s, &id, NULL, &p, NULL, &err), 0);
	/* a failing write inside the transaction undoes only itself... */
	bad.patch_id = id;
	assert_int_equal(pk_store_add_test(s, &id, &bad, &err), -1);
	assert_true(strstr(err->message, "CHECK") || strstr(err->message, "check constraint"));
	g_clear_error(&err);
	assert_int_equal(count(s, "patches"), 1);
	/* ...and the caller's rollback undoes the job */
	pk_store_rollback(s);
	assert_int_equal(count(s, "patches"), 0);
	assert_int_equal(pk_store_commit(s, &err), -1);
}

static void test_reviews(void **state)
{
	g_autofree char *path = db_path("reviews.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autofree char *model = NULL, *body = NULL;
	gint64 id;

	assert_int_equal(pk_store_add_review(s, &id, 0, "{\"verdict\":\"no-churn\"}",
					     "No logging churn.\n", &err), 0);
	assert_int_equal(pk_store_review_posted(s, id, "linux-kernel@vger.kernel.org",
						"<reply@printkbot>", 0, &err), 0);
	assert_int_equal(pk_store_review_get(s, id, &model, &body, &err), 0);
	assert_string_equal(model, "{\"verdict\":\"no-churn\"}");
	assert_string_equal(body, "No logging churn.\n");
	assert_int_equal(pk_store_review_get(s, id + 1, &model, NULL, &err), -1);
	assert_non_null(strstr(err->message, "no review"));
	/* untouched on failure */
	assert_string_equal(model, "{\"verdict\":\"no-churn\"}");
}

/*
 * The database on a disk that fills up (a child's tiny tmpfs): the write
 * fails with PK_ERROR_TRANSIENT (a job retries it), and with room again
 * the same write succeeds.  The exit status names the step that failed.
 */
static int write_on_full_disk(const char *dir, void *data)
{
	g_autofree char *db = g_build_filename(dir, "full.db", NULL);
	g_autofree char *filler = g_build_filename(dir, "filler", NULL);
	g_autofree char *url = g_strnfill(256 * 1024, 'u');
	g_autoptr(pk_store) store = NULL;
	g_autoptr(GError) err = NULL;
	gint64 id = 0;

	if (pk_store_open(&store, db, &err) < 0) {
		fprintf(stderr, "open: %s\n", err->message);
		return 2;
	}
	tinyfs_fill(dir);
	if (pk_store_add_source(store, &id, "mbox", "big", url, &err) == 0)
		return 3;
	fprintf(stderr, "full disk: %s\n", err->message);
	if (!pk_error_transient(err))
		return 4;
	g_clear_error(&err);
	unlink(filler);
	if (pk_store_add_source(store, &id, "mbox", "big", url, &err) < 0) {
		fprintf(stderr, "with room: %s\n", err->message);
		return 5;
	}
	return 0;
}

static void test_full_disk_is_transient(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("pk-store-full-XXXXXX", NULL);
	g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
	int rc = tinyfs_run(dir, "2m", write_on_full_disk, NULL);

	assert_int_equal(system(rm), 0);
	if (rc < 0)
		skip();   /* no mount namespace here */
	assert_int_equal(rc, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_full_disk_is_transient),
		cmocka_unit_test(test_default_path),
		cmocka_unit_test(test_migrate_v1),
		cmocka_unit_test(test_migrate_v4_jobs),
		cmocka_unit_test(test_migrate_v5_coverage),
		cmocka_unit_test(test_migrate_v6_leases),
		cmocka_unit_test(test_migrate_v8_replies),
		cmocka_unit_test(test_migrate_v9_commands),
		cmocka_unit_test(test_newer_refused),
		cmocka_unit_test(test_negative_version_refused),
		cmocka_unit_test(test_check_read_only),
		cmocka_unit_test(test_open_read_only),
		cmocka_unit_test(test_check_strangers),
		cmocka_unit_test(test_secret),
		cmocka_unit_test(test_foreign_refused),
		cmocka_unit_test(test_intake_lock),
		cmocka_unit_test(test_url_password_hidden),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_capture_roundtrip),
		cmocka_unit_test(test_dedupe),
		cmocka_unit_test(test_index_reordered),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_patches),
		cmocka_unit_test(test_transaction),
		cmocka_unit_test(test_reviews),
	};
	/* the same on PostgreSQL, but for SQLite's files: migrations, pragmas, bad bytes, a full disk */
	const struct CMUnitTest pg_tests[] = {
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_newer_refused),
		cmocka_unit_test(test_open_read_only),
		cmocka_unit_test(test_secret),
		cmocka_unit_test(test_foreign_refused),
		cmocka_unit_test(test_pg_encoding_refused),
		cmocka_unit_test(test_pg_migrate_v8_replies),
		cmocka_unit_test(test_pg_lost_connection),
		cmocka_unit_test(test_intake_lock),
		cmocka_unit_test(test_pg_intake_lock_reconnect),
		cmocka_unit_test(test_url_password_hidden),
		cmocka_unit_test(test_open_together),
		cmocka_unit_test(test_capture_roundtrip),
		cmocka_unit_test(test_dedupe),
		cmocka_unit_test(test_index_reordered),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_patches),
		cmocka_unit_test(test_transaction),
		cmocka_unit_test(test_reviews),
	};

	return run_both(tests, pg_tests, setup, teardown);
}
