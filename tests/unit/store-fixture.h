/*
 * store-fixture.h - what the store's tests share (test-store, test-queue,
 * test-history): a temporary directory for their databases, opening and
 * counting, and raw SQL from outside the store, as an older printkbot or
 * a stranger would write it.  A test includes it once, after cmocka.h;
 * the helpers are static, for one test program each.
 */
#ifndef PK_TEST_STORE_FIXTURE_H
#define PK_TEST_STORE_FIXTURE_H

#include <sqlite3.h>
#include <unistd.h>

#include "store/store.h"
#include "base/util.h"

static char *tmpdir;   /* the group's directory, made by setup() */

G_GNUC_UNUSED static char *db_path(const char *name)
{
	char *p = g_build_filename(tmpdir, name, NULL);
	g_autofree char *wal = g_strconcat(p, "-wal", NULL);
	g_autofree char *shm = g_strconcat(p, "-shm", NULL);

	unlink(p);
	unlink(wal);
	unlink(shm);
	return p;
}

G_GNUC_UNUSED static struct pk_store *open_ok(const char *path)
{
	g_autoptr(GError) err = NULL;
	struct pk_store *s = NULL;

	if (pk_store_open(&s, path, &err) < 0)
		fail_msg("open %s: %s", path, err->message);
	return s;
}

G_GNUC_UNUSED static gint64 count(struct pk_store *s, const char *table)
{
	g_autoptr(GError) err = NULL;
	gint64 n = -1;

	if (pk_store_count(s, table, &n, &err) < 0)
		fail_msg("count %s: %s", table, err->message);
	return n;
}

/* Run SQL on a file directly, as something other than the store. */
G_GNUC_UNUSED static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

G_GNUC_UNUSED static gint64 utc(int y, int m, int d, int h)
{
	g_autoptr(GDateTime) t = g_date_time_new_utc(y, m, d, h, 0, 0);

	return g_date_time_to_unix(t);
}

/* The shape of a database: every table's columns and every index's keys. */
G_GNUC_UNUSED static char *schema_shape(const char *path)
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

/* The text of a file of db/ (a migration), as the store embeds it. */
G_GNUC_UNUSED static char *migration_sql(const char *name)
{
	g_autofree char *src = pk_source_dir();
	g_autofree char *file = g_build_filename(src, "db", name, NULL);
	g_autoptr(GError) err = NULL;
	char *sql = NULL;

	if (!g_file_get_contents(file, &sql, NULL, &err))
		fail_msg("%s", err->message);
	return sql;
}

/* Group setup and teardown: the temporary directory. */
G_GNUC_UNUSED static int setup(void **state)
{
	tmpdir = g_dir_make_tmp("test-store-XXXXXX", NULL);
	return tmpdir ? 0 : -1;
}

G_GNUC_UNUSED static int teardown(void **state)
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

#endif
