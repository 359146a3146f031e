/*
 * test-store.c - the SQLite store: schema and migrations, bad files,
 * captures stored and loaded back, shared records and index entries,
 * history filters, reviews and the job queue.
 *
 * This test includes sqlite3.h, which bot/ modules other than the store
 * never do: it has to write files the way an older printkbot (or a
 * stranger) would, and look at the schema from outside the store.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "cmd/commands.h"
#include "report/review.h"
#include "store/store.h"
#include "pipeline/test.h"
#include "base/util.h"

/* ---- helpers ----------------------------------------------------------- */

static char *tmpdir;

static char *db_path(const char *name)
{
	char *p = g_build_filename(tmpdir, name, NULL);
	g_autofree char *wal = g_strconcat(p, "-wal", NULL);
	g_autofree char *shm = g_strconcat(p, "-shm", NULL);

	unlink(p);
	unlink(wal);
	unlink(shm);
	return p;
}

static struct pk_store *open_ok(const char *path)
{
	g_autoptr(GError) err = NULL;
	struct pk_store *s = NULL;

	if (pk_store_open(&s, path, &err) < 0)
		fail_msg("open %s: %s", path, err->message);
	return s;
}

static gint64 count(struct pk_store *s, const char *table)
{
	g_autoptr(GError) err = NULL;
	gint64 n = -1;

	if (pk_store_count(s, table, &n, &err) < 0)
		fail_msg("count %s: %s", table, err->message);
	return n;
}

/* Run SQL on a file directly, as something other than the store. */
static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

static gint64 utc(int y, int m, int d, int h)
{
	g_autoptr(GDateTime) t = g_date_time_new_utc(y, m, d, h, 0, 0);

	return g_date_time_to_unix(t);
}

/* The shape of a database: every table's columns and every index's keys. */
static char *schema_shape(const char *path)
{
	g_autoptr(GString) out = g_string_new(NULL);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
		"SELECT m.type, m.name, m.tbl_name, p.cid, p.name, p.type, p.\"notnull\", "
		"p.dflt_value, p.pk FROM sqlite_master m JOIN pragma_table_xinfo(m.name) p "
		"WHERE m.type = 'table' UNION ALL "
		"SELECT m.type, m.name, m.tbl_name, p.seqno, p.name, NULL, NULL, NULL, NULL "
		"FROM sqlite_master m JOIN pragma_index_info(m.name) p WHERE m.type = 'index' "
		"ORDER BY 1, 2, 4", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int i = 0; i < 9; i++)
			g_string_append_printf(out, "%s|", sqlite3_column_text(st, i) ?
					       (const char *)sqlite3_column_text(st, i) : "-");
		g_string_append_c(out, '\n');
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return g_string_free(g_steal_pointer(&out), FALSE);
}

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

	if (pk_store_add_build(s, &id, tree, base, cfg, &b, &err) < 0)
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

static char *migration_sql(const char *name)
{
	g_autofree char *src = pk_source_dir();
	g_autofree char *file = g_build_filename(src, "db", name, NULL);
	g_autoptr(GError) err = NULL;
	char *sql = NULL;

	if (!g_file_get_contents(file, &sql, NULL, &err))
		fail_msg("%s", err->message);
	return sql;
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
		 "INSERT INTO sources (id, kind, name) VALUES (1, 'mbox', 'lkml');"
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

static void test_newer_refused(void **state)
{
	g_autofree char *path = db_path("newer.db");
	g_autoptr(GError) err = NULL;
	struct pk_store *s = NULL;
	struct pk_store_check check = { 0 };

	pk_store_close(open_ok(path));
	raw_exec(path, "PRAGMA user_version = 99");
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

static void test_foreign_refused(void **state)
{
	g_autofree char *path = db_path("foreign.db");
	g_autoptr(GError) err = NULL;
	struct pk_store *s = NULL;

	raw_exec(path, "CREATE TABLE mine (x)");
	assert_int_equal(pk_store_open(&s, path, &err), -1);
	assert_non_null(strstr(err->message, "not a printkbot database"));
	/* and left alone: still in its own journal mode, no tables of ours */
	{
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
	assert_int_equal(pk_store_set_noise(s, 777, keys, 2, &err), -1);
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
	/* the subject's [PATCH v3 02/10] when intake did not say */
	{
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
	assert_non_null(strstr(err->message, "CHECK"));
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

static void test_jobs(void **state)
{
	g_autofree char *path = db_path("jobs.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_store_job) next = NULL;
	enum pk_job_state st = PK_JOB_QUEUED;
	gint64 a, b;

	assert_int_equal(pk_store_job_add(s, &a, PK_JOB_SERIES, "{\"patch\":1}", &err), 0);
	assert_int_equal(pk_store_job_add(s, &b, PK_JOB_SERIES, NULL, &err), 0);
	assert_int_equal(pk_store_job_next(s, &next, &err), 1);
	assert_int_equal(next->id, a);
	assert_string_equal(next->payload, "{\"patch\":1}");
	assert_int_equal(pk_store_job_set_state(s, a, PK_JOB_RUNNING, NULL, &err), 0);
	assert_int_equal(pk_store_job_state(s, a, &st, &err), 1);
	assert_int_equal(st, PK_JOB_RUNNING);
	g_clear_pointer(&next, pk_store_job_free);
	assert_int_equal(pk_store_job_next(s, &next, &err), 1);
	assert_int_equal(next->id, b);
	assert_int_equal(pk_store_job_set_state(s, a, PK_JOB_DONE, "review 3", &err), 0);
	/* done is final */
	assert_int_equal(pk_store_job_set_state(s, a, PK_JOB_QUEUED, NULL, &err), -1);
	assert_non_null(strstr(err->message, "cannot go from done to queued"));
	g_clear_error(&err);
	/* a state that is none of the table's ("sleeping") is refused */
	assert_false(pk_job_state_parse("sleeping", &st));
	assert_int_equal(pk_store_job_set_state(s, b, (enum pk_job_state)42, NULL, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_ANY_STATE, NULL, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_job_set_state(s, 99, PK_JOB_RUNNING, NULL, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_RUNNING, NULL, &err), 0);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_FAILED, "boot timed out", &err), 0);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_QUEUED, NULL, &err), 0);
	assert_int_equal(pk_store_job_state(s, 99, &st, &err), 0);
}

/* The names of states and kinds: each enum value and its word, both ways. */
static void test_job_names(void **state)
{
	static const struct { enum pk_job_state state; const char *name; } states[] = {
		{ PK_JOB_QUEUED, "queued" }, { PK_JOB_RUNNING, "running" }, { PK_JOB_DONE, "done" },
		{ PK_JOB_FAILED, "failed" }, { PK_JOB_CANCELLED, "cancelled" },
	};
	static const struct { enum pk_job_kind kind; const char *name; } kinds[] = {
		{ PK_JOB_SERIES, "series" }, { PK_JOB_REPLY, "reply" },
	};
	enum pk_job_state st;
	enum pk_job_kind kind;

	for (size_t i = 0; i < G_N_ELEMENTS(states); i++) {
		assert_string_equal(pk_job_state_name(states[i].state), states[i].name);
		assert_true(pk_job_state_parse(states[i].name, &st));
		assert_int_equal(st, states[i].state);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
		assert_string_equal(pk_job_kind_name(kinds[i].kind), kinds[i].name);
		assert_true(pk_job_kind_parse(kinds[i].name, &kind));
		assert_int_equal(kind, kinds[i].kind);
	}
	assert_string_equal(pk_job_state_name(PK_JOB_ANY_STATE), "");
	assert_string_equal(pk_job_kind_name(PK_JOB_ANY_KIND), "");
	assert_string_equal(pk_job_kind_name(PK_JOB_UNKNOWN), "unknown");
	kind = PK_JOB_REPLY;
	assert_false(pk_job_kind_parse("unknown", &kind));
	assert_false(pk_job_kind_parse(NULL, &kind));
	assert_int_equal(kind, PK_JOB_REPLY);   /* untouched */
}

/*
 * The questions the daemon asks in one call: the series jobs a newer
 * version supersedes (only queued ones of that series, only older
 * versions), the jobs a dead daemon left running, the next due job with
 * its attempts; a kind the store does not know reads as unknown.
 */
static void test_job_questions(void **state)
{
	g_autofree char *path = db_path("job-questions.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(GArray) ids = NULL;
	g_autoptr(GPtrArray) jobs = NULL;
	g_autoptr(pk_store_job) job = NULL;
	enum pk_job_state st;
	gint64 v1, v2, other, v3, running, reply, wait = -2, stray;

	assert_int_equal(pk_store_job_add_series(s, &v1, "key-a", 1, "{}", &err), 0);
	assert_int_equal(pk_store_job_add_series(s, &v2, "key-a", 2, "{}", &err), 0);
	assert_int_equal(pk_store_job_add_series(s, &other, "key-b", 1, "{}", &err), 0);
	assert_int_equal(pk_store_job_add_series(s, &running, "key-a", 1, "{}", &err), 0);
	assert_int_equal(pk_store_job_set_state(s, running, PK_JOB_RUNNING, NULL, &err), 0);
	assert_int_equal(pk_store_job_add_series(s, &v3, "key-a", 3, "{}", &err), 0);
	assert_int_equal(pk_store_job_add_series(s, &stray, NULL, 1, "{}", &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_job_add(s, &stray, PK_JOB_UNKNOWN, "{}", &err), -1);
	g_clear_error(&err);

	assert_int_equal(pk_store_jobs_cancel_superseded(s, "key-a", 3, "superseded by v3", &ids, &err), 0);
	assert_int_equal(ids->len, 2);
	assert_int_equal(g_array_index(ids, gint64, 0), v1);
	assert_int_equal(g_array_index(ids, gint64, 1), v2);
	assert_int_equal(pk_store_job_state(s, v1, &st, &err), 1);
	assert_int_equal(st, PK_JOB_CANCELLED);
	assert_int_equal(pk_store_job_state(s, other, &st, &err), 1);
	assert_int_equal(st, PK_JOB_QUEUED);     /* another series */
	assert_int_equal(pk_store_job_state(s, running, &st, &err), 1);
	assert_int_equal(st, PK_JOB_RUNNING);    /* not waiting: not cancelled */
	assert_int_equal(pk_store_job_state(s, v3, &st, &err), 1);
	assert_int_equal(st, PK_JOB_QUEUED);     /* the newest itself */
	g_clear_pointer(&ids, g_array_unref);
	assert_int_equal(pk_store_jobs_cancel_superseded(s, "key-a", 3, "again", &ids, &err), 0);
	assert_int_equal(ids->len, 0);
	g_clear_pointer(&ids, g_array_unref);

	assert_int_equal(pk_store_jobs_requeue_running(s, "requeued", &ids, &err), 0);
	assert_int_equal(ids->len, 1);
	assert_int_equal(g_array_index(ids, gint64, 0), running);
	assert_int_equal(pk_store_jobs(s, PK_JOB_CANCELLED, &jobs, &err), 0);
	assert_int_equal(jobs->len, 2);
	assert_int_equal(((struct pk_store_job *)jobs->pdata[0])->kind, PK_JOB_SERIES);
	assert_string_equal(((struct pk_store_job *)jobs->pdata[0])->series_key, "key-a");
	assert_string_equal(((struct pk_store_job *)jobs->pdata[1])->detail, "superseded by v3");
	assert_int_equal(((struct pk_store_job *)jobs->pdata[1])->series_version, 2);
	g_clear_pointer(&jobs, g_ptr_array_unref);

	/* the next due job carries the attempts it had so far */
	assert_int_equal(pk_store_job_next_due(s, PK_JOB_SERIES, 1000, &job, &wait, &err), 1);
	assert_int_equal(job->id, other);
	assert_int_equal(wait, 0);
	g_clear_pointer(&job, pk_store_job_free);
	assert_int_equal(pk_store_job_add(s, &reply, PK_JOB_REPLY, "{\"reply\":1}", &err), 0);
	assert_int_equal(pk_store_job_set_state(s, reply, PK_JOB_RUNNING, NULL, &err), 0);
	assert_int_equal(pk_store_job_retry_at(s, reply, 900, "server down", &err), 0);
	assert_int_equal(pk_store_job_next_due(s, PK_JOB_REPLY, 1000, &job, NULL, &err), 1);
	assert_int_equal(job->id, reply);
	assert_int_equal(job->attempts, 1);
	assert_int_equal(job->state, PK_JOB_QUEUED);
	g_clear_pointer(&job, pk_store_job_free);
	assert_int_equal(pk_store_job_next_due(s, PK_JOB_UNKNOWN, 1000, &job, NULL, &err), -1);
	g_clear_error(&err);

	/* a kind written by something else is listed, as unknown */
	raw_exec(path, "INSERT INTO jobs (kind, created, updated) VALUES ('test', 1, 1)");
	assert_int_equal(pk_store_jobs(s, PK_JOB_ANY_STATE, &jobs, &err), 0);
	assert_int_equal(jobs->len, 7);
	assert_int_equal(((struct pk_store_job *)jobs->pdata[6])->kind, PK_JOB_UNKNOWN);
	assert_null(((struct pk_store_job *)jobs->pdata[6])->series_key);
}

/* ---- history ------------------------------------------------------------ */

/*
 * The history fixture: four patches; each row's old text starts with a tag
 * (S static, B boot, I index; then the patch number) that cases name.
 *   P1 2025-12-15 Jane, lkml, tested console-changed: S1 B1 I1 (topology.c)
 *   P2 2026-01-10 John, lkml, tested no-visible-change: S2 I2 (drivers/net/x.c)
 *   P3 2026-02-01 Jane, git commit abcdef123456, console-changed: S3 B3 (core.c)
 *   P4 2026-03-01 Zoë, no source, never tested (scan: no-visible-change): S4 (topology.c)
 */
struct fx_finding { const char *file, *kind, *old, *new; };
struct fx_change { const char *stage, *file, *func, *kind, *old, *new; };
struct fx_patch {
	const char *subject, *mid, *commit, *author, *name, *email, *source, *source_kind;
	gint64 time;
	const char *scan_verdict, *test_verdict;   /* NULL: not tested */
	struct fx_finding finding;
	struct fx_change changes[2];
};

/* The verdict named name (NULL: none). */
static enum pk_verdict verdict_of(const char *name)
{
	enum pk_verdict v = PK_VERDICT_NONE;

	if (name)
		assert_true(pk_verdict_parse(name, &v));
	return v;
}

static struct pk_store *history_fixture(const char *name)
{
	const struct fx_patch fx[] = {
		{ "[PATCH v2 1/3] sched: tidy topology messages", "p1@x", NULL,
		  "Jane Doe <jane@example.org>", "Jane Doe", "jane@example.org", "lkml", "mbox",
		  utc(2025, 12, 15, 9), "console-changed", "console-changed",
		  { "kernel/sched/topology.c", "text-changed", "S1 scheduling while atomic", "S1 new" },
		  { { "boot", "kernel/sched/topology.c", "build_sched_domains", "text-changed",
		      "B1 old", "B1 scheduling while atomic" },
		    { "index", "kernel/sched/topology.c", "build_sched_domains", "text-changed",
		      "I1 old %d\n", "I1 new %d\n" } } },
		{ "[PATCH] net: pr_fmt for x", "p2@x", NULL,
		  "John Smith <john@example.com>", "John Smith", "john@example.com", "lkml", "mbox",
		  utc(2026, 1, 10, 12), "console-changed", "no-visible-change",
		  { "drivers/net/x.c", "level-changed", "S2 link up", "S2 link up" },
		  { { "index", "drivers/net/x.c", "x_probe", "level-changed", "I2 link up\n",
		      "I2 link up\n" } } },
		{ "sched: debug atomic scheduling", NULL, "abcdef1234567890",
		  "Jane Doe <jane@example.org>", "Jane Doe", "jane@example.org",
		  "linux.git master", "git", utc(2026, 2, 1, 12), "console-changed", "console-changed",
		  { "kernel/sched/core.c", "debug-compiled-out", "S3 scheduling while atomic", NULL },
		  { { "boot", "kernel/sched/core.c", "schedule_debug", "message-removed",
		      "B3 BUG: scheduling while atomic", NULL } } },
		{ "[PATCH 2/2] sched: pr_info", "p4@x", NULL,
		  "Zo\xc3\xab \xc3\x9cnicode <zoe@example.net>", "Zo\xc3\xab \xc3\x9cnicode",
		  "zoe@example.net", NULL, NULL, utc(2026, 3, 1, 8), "no-visible-change", NULL,
		  { "kernel/sched/topology.c", "call-converted", "S4 domain", "S4 domain" },
		  { { NULL } } },
	};
	g_autofree char *path = db_path(name);
	struct pk_store *s = open_ok(path);
	g_autoptr(GError) err = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS(fx); i++) {
		const struct fx_patch *x = &fx[i];
		struct pk_patch p = { .subject = (char *)x->subject, .message_id = (char *)x->mid,
				      .author = (char *)x->author, .author_name = (char *)x->name,
				      .author_email = (char *)x->email, .time = x->time,
				      .diff = "diff --git a/x b/x\n" };
		struct pk_store_patch_opts o = PK_STORE_PATCH_OPTS_INIT;
		struct pk_finding f = { .file = (char *)x->finding.file, .line = 10,
					.kind = x->finding.kind, .old_text = (char *)x->finding.old,
					.new_text = (char *)x->finding.new, .message = "m" };
		g_autoptr(GPtrArray) findings = g_ptr_array_new();
		struct pk_scan scan = { .verdict = verdict_of(x->scan_verdict), .calls_changed = 1,
					.findings = findings };
		g_autoptr(GPtrArray) changes = g_ptr_array_new_with_free_func(g_free);
		g_autoptr(GPtrArray) index_changes = g_ptr_array_new_with_free_func(g_free);
		struct pk_kdiff diff = { .changes = changes, .index_changes = index_changes };
		const char *confirm[] = { "seen-at-boot" };
		struct pk_store_test t = { .verdict = verdict_of(x->test_verdict), .diff = &diff,
					   .confirmations = confirm, .n_confirmations = 1 };
		gint64 patch, test;

		o.commit = x->commit;
		if (x->source && pk_store_add_source(s, &o.source_id, x->source_kind, x->source,
						     NULL, &err) < 0)
			fail_msg("%s", err->message);
		g_ptr_array_add(findings, &f);
		if (pk_store_add_patch(s, &patch, NULL, &p, &o, &err) < 0 ||
		    pk_store_add_findings(s, patch, &scan, &err) < 0)
			fail_msg("%s", err->message);
		if (!x->test_verdict)
			continue;
		for (size_t k = 0; k < G_N_ELEMENTS(x->changes) && x->changes[k].stage; k++) {
			const struct fx_change *c = &x->changes[k];
			struct pk_origin o = { .file = (char *)c->file, .line = 20 + (int)k,
					       .func = (char *)c->func, .format = (char *)c->old };

			if (!strcmp(c->stage, "boot")) {
				struct pk_change *ch = g_new0(struct pk_change, 1);

				*ch = (struct pk_change){ .kind = c->kind, .old_level = 6,
					.new_level = c->new ? 6 : -1, .old_text = (char *)c->old,
					.new_text = (char *)c->new, .origin = o, .message = "m" };
				g_ptr_array_add(changes, ch);
			} else {
				struct pk_index_change *ch = g_new0(struct pk_index_change, 1);

				*ch = (struct pk_index_change){ .kind = c->kind, .old_level = 6,
					.new_level = 4, .old_format = (char *)c->old,
					.new_format = (char *)c->new, .origin = o };
				g_ptr_array_add(index_changes, ch);
			}
		}
		t.patch_id = patch;
		if (pk_store_add_test(s, &test, &t, &err) < 0)
			fail_msg("%s", err->message);
	}
	return s;
}

/* The tags (first word of the old text) of the rows, in order, comma-joined. */
static char *history_tags(struct pk_store *s, const struct pk_history_filter *f)
{
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GError) err = NULL;

	if (pk_store_history(s, &rows, f, &err) < 0)
		fail_msg("history: %s", err->message);
	for (guint i = 0; i < rows->len; i++) {
		const struct pk_history_row *r = rows->pdata[i];

		g_string_append_printf(out, "%s%.2s", i ? "," : "", r->old_text);
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}

struct history_case {
	const char *name;
	struct pk_history_filter filter;
	const char *tags;
};

static void test_history_filters(void **state)
{
	g_autoptr(pk_store) s = history_fixture("history.db");
	const struct history_case cases[] = {
		{ "no filter, newest first", { 0 }, "S4,S3,B3,S2,I2,S1,B1,I1" },
		{ "file", { .file = "kernel/sched/topology.c" }, "S4,S1,B1,I1" },
		{ "file nothing", { .file = "kernel/sched" }, "" },
		{ "file is exact", { .file = "Kernel/sched/topology.c" }, "" },
		{ "func", { .func = "build_sched_domains" }, "B1,I1" },
		{ "grep old or new text", { .grep = "scheduling while atomic" }, "S3,B3,S1,B1" },
		{ "grep is case-sensitive", { .grep = "Scheduling While" }, "" },
		{ "grep a format", { .grep = "new %d" }, "I1" },
		{ "kind", { .kind = "level-changed" }, "S2,I2" },
		{ "verdict", { .verdict = "console-changed" }, "S3,B3,S1,B1,I1" },
		{ "verdict of an untested patch is the scan's", { .verdict = "no-visible-change" },
		  "S4,S2,I2" },
		{ "author name", { .author = "jane doe" }, "S3,B3,S1,B1,I1" },
		{ "author address", { .author = "JOHN@example.com" }, "S2,I2" },
		{ "author non-ASCII", { .author = "Zo\xc3\xab" }, "S4" },
		{ "since", { .since = utc(2026, 1, 1, 0) }, "S4,S3,B3,S2,I2" },
		{ "until", { .until = utc(2026, 1, 1, 0) }, "S1,B1,I1" },
		{ "since and until", { .since = utc(2026, 1, 1, 0), .until = utc(2026, 2, 1, 0) },
		  "S2,I2" },
		{ "source name", { .source = "lkml" }, "S2,I2,S1,B1,I1" },
		{ "source kind", { .source = "git" }, "S3,B3" },
		{ "commit prefix", { .commit = "ABCDEF1" }, "S3,B3" },
		{ "commit not a prefix", { .commit = "bcdef" }, "" },
		{ "message-id", { .message_id = "<p2@x>" }, "S2,I2" },
		{ "message-id bare", { .message_id = "p2@x" }, "S2,I2" },
		{ "stage boot", { .stage = "boot" }, "B3,B1" },
		{ "stage index", { .stage = "index" }, "I2,I1" },
		{ "stage static", { .stage = "static" }, "S4,S3,S2,S1" },
		{ "file and verdict", { .file = "kernel/sched/topology.c", .verdict = "console-changed" },
		  "S1,B1,I1" },
		{ "grep, author and since", { .grep = "scheduling while atomic", .author = "jane",
					      .since = utc(2026, 1, 1, 0) }, "S3,B3" },
		{ "func and stage", { .func = "build_sched_domains", .stage = "index" }, "I1" },
		{ "func excludes static findings", { .func = "x_probe", .file = "drivers/net/x.c" }, "I2" },
		{ "kind and file, nothing", { .kind = "text-changed", .file = "drivers/net/x.c" }, "" },
		{ "source and since", { .source = "lkml", .since = utc(2026, 1, 1, 0) }, "S2,I2" },
		{ "limit", { .limit = 2 }, "S4,S3" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = history_tags(s, &cases[i].filter);

		if (strcmp(got, cases[i].tags))
			fail_msg("%s: got '%s', want '%s'", cases[i].name, got, cases[i].tags);
	}
}

static void test_history_rows(void **state)
{
	g_autoptr(pk_store) s = history_fixture("rows.db");
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_history_filter f = { .grep = "scheduling while atomic" };
	struct pk_history_filter bad = { .stage = "mail" };
	const struct pk_history_row *r;

	assert_int_equal(pk_store_history(s, &rows, &f, &err), 0);
	assert_int_equal(rows->len, 4);
	r = rows->pdata[1];      /* B3: the git patch's console change */
	assert_string_equal(r->stage, "boot");
	assert_string_equal(r->kind, "message-removed");
	assert_string_equal(r->file, "kernel/sched/core.c");
	assert_int_equal(r->line, 20);
	assert_string_equal(r->func, "schedule_debug");
	assert_null(r->new_text);
	assert_null(r->message_id);
	assert_string_equal(r->link, "abcdef1234567890");
	assert_string_equal(r->source, "linux.git master");
	assert_true(r->test_id > 0);
	r = rows->pdata[2];      /* S1: a static finding of a mail */
	assert_string_equal(r->stage, "static");
	assert_null(r->func);
	assert_int_equal(r->test_id, 0);
	assert_string_equal(r->subject, "[PATCH v2 1/3] sched: tidy topology messages");
	assert_string_equal(r->author, "Jane Doe <jane@example.org>");
	assert_string_equal(r->link, "https://lore.kernel.org/r/p1@x");
	assert_int_equal(r->time, utc(2025, 12, 15, 9));
	assert_int_equal(count(s, "finding_checks"), 3);
	assert_int_equal(pk_store_history(s, &rows, &bad, &err), -1);
	assert_non_null(strstr(err->message, "unknown stage"));
}

/* A test whose confirmations do not match the stored findings is refused whole. */
static void test_confirmation_mismatch(void **state)
{
	g_autoptr(pk_store) s = history_fixture("mismatch.db");
	g_autoptr(GError) err = NULL;
	const char *two[] = { "seen-at-boot", "not-confirmed" };
	struct pk_store_test t = { .patch_id = 1, .verdict = PK_VERDICT_CONSOLE_CHANGED,
				   .confirmations = two, .n_confirmations = 2 };
	gint64 tests = count(s, "tests"), id = 0;

	assert_int_equal(pk_store_add_test(s, &id, &t, &err), -1);
	assert_non_null(strstr(err->message, "1 stored findings but the test confirms 2"));
	assert_int_equal(id, 0);
	assert_int_equal(count(s, "tests"), tests);
}

/* Run a command with its standard output in a file; returns its exit status. */
static int run_captured(int (*cmd)(int, char **), int argc, char **argv, char **out)
{
	g_autofree char *file = g_build_filename(tmpdir, "stdout", NULL);
	int saved, fd, rc;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	rc = cmd(argc, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_int_equal(pk_read_file(out, NULL, file, 0, NULL), 0);
	return rc;
}

static const char report_mail[] =
	"From: Jane Doe <jane@example.org>\n"
	"Subject: [PATCH] sched: convert printk to pr_err\n"
	"Message-ID: <report@example.org>\n"
	"Date: Tue, 1 Dec 2026 10:00:00 +0000\n"
	"\n"
	"Convert.\n"
	"---\n"
	"diff --git a/kernel/sched/core.c b/kernel/sched/core.c\n"
	"--- a/kernel/sched/core.c\n"
	"+++ b/kernel/sched/core.c\n"
	"@@ -10,3 +10,3 @@ void f(void)\n"
	" {\n"
	"-\tprintk(KERN_ERR \"BUG: scheduling while atomic: %s\\n\", comm);\n"
	"+\tpr_err(\"BUG: scheduling while atomic: %s\", comm);\n"
	" }\n";

/*
 * `report ID` renders the stored model again: the same bytes as the body
 * rendered when the review was made, and the stored review is found by id.
 */
static void test_report(void **state)
{
	g_autofree char *path = db_path("report.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *model_json = NULL, *body = NULL, *out = NULL, *id = NULL;
	const struct pk_review_info info = { "report.mbox", 1, 2, "printkbot-base", "427fcf303d87" };
	struct pk_test_result res = { 0 };
	struct pk_store_test t = { .verdict = PK_VERDICT_DOES_NOT_APPLY };
	const struct pk_patch *p;
	unsigned skipped;
	gint64 review, stale;

	assert_int_equal(pk_patch_read_mails(&patches, &skipped, report_mail, strlen(report_mail), NULL), 0);
	p = patches->pdata[0];
	res.scan = pk_scan(p);
	res.verdict = PK_VERDICT_DOES_NOT_APPLY;
	res.reason = g_strdup("kernel/sched/core.c: hunk 1 does not apply");
	res.before.commit = g_strdup("514c34e2f1d7a9b0c3e4f5a6b7c8d9e0f1a2b3c4");
	model = pk_review_model(p, &res, &info);
	model_json = json_to_string(model, FALSE);
	body = pk_review_render(model, "review.txt", &err);
	if (!body)
		fail_msg("render: %s", err->message);
	assert_int_equal(pk_store_add_patch(s, &t.patch_id, NULL, p, NULL, &err), 0);
	assert_int_equal(pk_store_add_findings(s, t.patch_id, res.scan, &err), 0);
	assert_int_equal(pk_store_add_test(s, &t.patch_id, &t, &err), 0);
	assert_int_equal(pk_store_add_review(s, &review, t.patch_id, model_json, body, &err), 0);
	/* a review whose stored body is stale: report renders the model, not the body */
	assert_int_equal(pk_store_add_review(s, &stale, t.patch_id, model_json, "stale body\n", &err), 0);
	pk_store_close(g_steal_pointer(&s));

	id = g_strdup_printf("%" G_GINT64_FORMAT, review);
	{
		char *argv[] = { "report", "--db", path, id, NULL };

		assert_int_equal(run_captured(cmd_report, 4, argv, &out), 0);
		assert_string_equal(out, body);
		assert_non_null(strstr(out, "does-not-apply"));
	}
	g_clear_pointer(&out, g_free);
	g_free(id);
	id = g_strdup_printf("%" G_GINT64_FORMAT, stale);
	{
		char *argv[] = { "report", "--db", path, id, NULL };

		assert_int_equal(run_captured(cmd_report, 4, argv, &out), 0);
		assert_string_equal(out, body);
	}
	g_clear_pointer(&out, g_free);
	{
		char *argv[] = { "report", "--db", path, "99", NULL };

		assert_int_equal(run_captured(cmd_report, 4, argv, &out), 1);
		assert_string_equal(out, "");
	}
	pk_test_result_clear(&res);
}

/* history and db check through the commands: exit codes and output forms. */
static void test_commands(void **state)
{
	g_autoptr(pk_store) s = history_fixture("commands.db");
	g_autofree char *path = g_strdup(pk_store_path(s));
	g_autofree char *out = NULL;
	g_auto(GStrv) lines = NULL;

	pk_store_close(g_steal_pointer(&s));
	{
		char *argv[] = { "history", "--db", path, "--json", "--file=kernel/sched/topology.c", NULL };
		g_autoptr(JsonParser) parser = json_parser_new();

		assert_int_equal(run_captured(cmd_history, 5, argv, &out), 0);
		lines = g_strsplit(out, "\n", -1);
		assert_int_equal(g_strv_length(lines), 5);   /* 4 rows and the last newline */
		assert_true(json_parser_load_from_data(parser, lines[1], -1, NULL));
		assert_string_equal(json_object_get_string_member(
			json_node_get_object(json_parser_get_root(parser)), "link"),
			"https://lore.kernel.org/r/p1@x");
	}
	g_clear_pointer(&out, g_free);
	{
		char *argv[] = { "history", "--db", path, "--grep", "scheduling while atomic",
				 "--until", "2025-12-15", NULL };

		/* --until includes the day it names */
		assert_int_equal(run_captured(cmd_history, 7, argv, &out), 0);
		assert_non_null(strstr(out, "PATCH"));
		assert_non_null(strstr(out, "S1 scheduling while atomic → S1 new"));
		assert_non_null(strstr(out, "[PATCH v2 1/3] sched: tidy topology messages"));
		assert_null(strstr(out, "B3"));
	}
	g_clear_pointer(&out, g_free);
	{
		char *argv[] = { "history", "--db", path, "--author", "nobody", NULL };

		assert_int_equal(run_captured(cmd_history, 5, argv, &out), 1);
	}
	g_clear_pointer(&out, g_free);
	{
		char *argv[] = { "history", "--db", path, "--since", "last week", NULL };

		assert_int_equal(run_captured(cmd_history, 5, argv, &out), 2);
	}
	g_clear_pointer(&out, g_free);
	{
		char *argv[] = { "db", "check", "--db", path, NULL };

		assert_int_equal(run_captured(cmd_db, 4, argv, &out), 0);
		assert_non_null(strstr(out, "integrity ok, foreign keys ok"));
	}
	g_clear_pointer(&out, g_free);
	{
		g_autofree char *bad = db_path("bad.db");
		char *argv[] = { "db", "check", "--db", bad, NULL };

		assert_int_equal(pk_write_file(bad, "SQLite format 3\0garbage", 24, NULL), 0);
		assert_int_equal(run_captured(cmd_db, 4, argv, &out), 1);
		assert_non_null(strstr(out, "problem"));
	}
}

static int setup(void **state)
{
	tmpdir = g_dir_make_tmp("test-store-XXXXXX", NULL);
	return tmpdir ? 0 : -1;
}

static int teardown(void **state)
{
	g_autoptr(GDir) dir = g_dir_open(tmpdir, 0, NULL);
	const char *name;

	while (dir && (name = g_dir_read_name(dir))) {
		g_autofree char *p = g_build_filename(tmpdir, name, NULL);

		unlink(p);
	}
	rmdir(tmpdir);
	g_free(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_default_path),
		cmocka_unit_test(test_migrate_v1),
		cmocka_unit_test(test_migrate_v4_jobs),
		cmocka_unit_test(test_newer_refused),
		cmocka_unit_test(test_foreign_refused),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_capture_roundtrip),
		cmocka_unit_test(test_dedupe),
		cmocka_unit_test(test_index_reordered),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_patches),
		cmocka_unit_test(test_transaction),
		cmocka_unit_test(test_reviews),
		cmocka_unit_test(test_jobs),
		cmocka_unit_test(test_job_names),
		cmocka_unit_test(test_job_questions),
		cmocka_unit_test(test_history_filters),
		cmocka_unit_test(test_history_rows),
		cmocka_unit_test(test_confirmation_mismatch),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_commands),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
