/*
 * store-fixture.h - what the store's tests share (test-store, test-queue,
 * test-history): a temporary directory for their databases, opening and
 * counting, and raw SQL from outside the store, as an older printkbot or
 * a stranger would write it.  A test includes it once, after cmocka.h;
 * the helpers are static, for one test program each.
 *
 * The same tests run again on PostgreSQL when pg_start() found a server:
 * $PRINTKBOT_TEST_PG_URL (a database whose user may create databases),
 * else a throwaway one that tests/unit/pg-fixture.sh starts and pg_stop()
 * removes.  Then db_path() names a fresh database rather than a file,
 * and raw_exec() goes through psql.
 */
#ifndef PK_TEST_STORE_FIXTURE_H
#define PK_TEST_STORE_FIXTURE_H

#include <sqlite3.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"
#include "store/queue.h"
#include "base/util.h"

static char *tmpdir;   /* the group's directory, made by setup() */
static char *pg_admin; /* while the PostgreSQL group runs: its server's "postgres" database */
static char *pg_dir;   /* the directory of the server pg_start() started, if it did */

/* Run psql on url with each command: whether it succeeded. */
G_GNUC_UNUSED static bool pg_psql(const char *url, const char *const *sql)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autofree char *errs = NULL;
	int status;

	g_ptr_array_add(argv, "psql");
	g_ptr_array_add(argv, "-X");
	g_ptr_array_add(argv, "-q");
	g_ptr_array_add(argv, "-v");
	g_ptr_array_add(argv, "ON_ERROR_STOP=1");
	g_ptr_array_add(argv, (char *)url);
	for (; *sql; sql++) {
		g_ptr_array_add(argv, "-c");
		g_ptr_array_add(argv, (char *)*sql);
	}
	g_ptr_array_add(argv, NULL);
	if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_SEARCH_PATH |
			  G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &errs, &status, NULL) ||
	    !g_spawn_check_wait_status(status, NULL)) {
		fprintf(stderr, "psql: %s", errs ? errs : "cannot run\n");
		return false;
	}
	return true;
}

/* A fresh database of the PostgreSQL server named after name ("a.db": a_db); its URL. */
G_GNUC_UNUSED static char *pg_db_url(const char *name)
{
	g_autofree char *db = g_strcanon(g_ascii_strdown(name, -1), "abcdefghijklmnopqrstuvwxyz0123456789", '_');
	g_autofree char *drop = g_strdup_printf("DROP DATABASE IF EXISTS t_%s WITH (FORCE)", db);
	g_autofree char *create = g_strdup_printf("CREATE DATABASE t_%s TEMPLATE template0 "
						  "ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C'", db);
	g_autofree char *path = g_strdup_printf("/t_%s", db);
	const char *sql[] = { drop, create, NULL };
	g_autoptr(GUri) admin = g_uri_parse(pg_admin, G_URI_FLAGS_ENCODED, NULL);
	g_autoptr(GUri) uri = NULL;

	if (!admin || !pg_psql(pg_admin, sql))
		fail_msg("cannot make database t_%s on %s", db, pg_admin);
	uri = g_uri_build(G_URI_FLAGS_ENCODED, g_uri_get_scheme(admin), g_uri_get_userinfo(admin),
			  g_uri_get_host(admin), g_uri_get_port(admin), path, g_uri_get_query(admin),
			  NULL);
	return g_uri_to_string(uri);
}

/*
 * A PostgreSQL server for the second run of the tests: 1 there is one, 0
 * none (PostgreSQL is not installed: said on stdout), -1 the fixture failed.
 */
G_GNUC_UNUSED static int pg_start(void)
{
	const char *env = g_getenv("PRINTKBOT_TEST_PG_URL");
	g_autofree char *src = pk_source_dir();
	g_autofree char *script = g_build_filename(src, "tests", "unit", "pg-fixture.sh", NULL);
	g_autofree char *out = NULL, *errs = NULL;
	char *argv[] = { "bash", script, "start", NULL, NULL };
	int status;

	if (env && *env) {
		pg_admin = g_strdup(env);
		return 1;
	}
	pg_dir = g_dir_make_tmp("test-pg-XXXXXX", NULL);
	argv[3] = pg_dir;
	if (!pg_dir || !g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &errs,
				     &status, NULL))
		return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("skipping the PostgreSQL run: %s", errs);
		rmdir(pg_dir);
		g_clear_pointer(&pg_dir, g_free);
		return 0;
	}
	if (!g_spawn_check_wait_status(status, NULL)) {
		fprintf(stderr, "pg-fixture.sh: %s", errs);
		return -1;
	}
	pg_admin = g_strdup(g_strstrip(out));
	return 1;
}

G_GNUC_UNUSED static void pg_stop(void)
{
	g_autofree char *src = pk_source_dir();
	g_autofree char *script = g_build_filename(src, "tests", "unit", "pg-fixture.sh", NULL);
	char *argv[] = { "bash", script, "stop", pg_dir, NULL };

	if (pg_dir)
		g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
	g_clear_pointer(&pg_dir, g_free);
	g_clear_pointer(&pg_admin, g_free);
}

/*
 * Run the group on SQLite, then on PostgreSQL when there is one: the
 * failures of both, or 1 when the PostgreSQL fixture itself failed.
 */
#define run_both(tests, pg_tests, setup, teardown)                                      \
	({                                                                              \
		int failed_ = cmocka_run_group_tests_name("sqlite", tests, setup, teardown);  \
		int pg_ = pg_start();                                                   \
		if (pg_ > 0 && printf("again on PostgreSQL: %s\n", pg_admin))          \
			failed_ += cmocka_run_group_tests_name("postgresql", pg_tests, setup, \
							       teardown);               \
		pg_stop();                                                              \
		failed_ + (pg_ < 0);                                                    \
	})

/* A new database named name: a file of tmpdir, or a fresh PostgreSQL database in that run. */
G_GNUC_UNUSED static char *db_path(const char *name)
{
	char *p;
	g_autofree char *wal = NULL, *shm = NULL;

	if (pg_admin)
		return pg_db_url(name);
	p = g_build_filename(tmpdir, name, NULL);
	wal = g_strconcat(p, "-wal", NULL);
	shm = g_strconcat(p, "-shm", NULL);
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

	if (g_str_has_prefix(path, "postgresql://")) {
		const char *cmds[] = { sql, NULL };

		if (!pg_psql(path, cmds))
			fail_msg("%s: failed on %s", sql, path);
		return;
	}

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
