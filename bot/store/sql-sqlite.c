/*
 * sql-sqlite.c - the SQLite backend of the statement layer (sql.h), the
 * store's default: one file, WAL mode, the write lock waited for.  The
 * only file of the store that calls sqlite3_*().
 */
#include "store/private.h"

#include <sqlite3.h>

/* A statement: sql.h's head, then SQLite's own. */
struct lite_stmt {
	struct store_stmt head;
	sqlite3_stmt *st;
};

static sqlite3 *lite_db(struct pk_store *s)
{
	return s->conn;
}

static sqlite3_stmt *lite(store_stmt *st)
{
	return ((struct lite_stmt *)st)->st;
}

/* A full disk, an I/O error or a lock held too long passes: PK_ERROR_TRANSIENT, retried by jobs. */
static int lite_error(struct pk_store *s, GError **err, const char *what)
{
	int rc = sqlite3_errcode(lite_db(s)) & 0xff;
	bool passing = rc == SQLITE_FULL || rc == SQLITE_IOERR || rc == SQLITE_BUSY ||
		       rc == SQLITE_LOCKED || rc == SQLITE_NOMEM;

	return pk_error(err, passing ? PK_ERROR_TRANSIENT : PK_ERROR_FAILED, "%s: %s: %s", s->path, what,
			sqlite3_errmsg(lite_db(s)));
}

static int open_immutable(struct pk_store *s);

/*
 * Whether a read-only connection cannot read the file as it is: a WAL
 * database without a -shm it may make fails its first read (SQLite says
 * "attempt to write a readonly database" or "unable to open").
 */
static bool lite_needs_immutable(struct pk_store *s)
{
	gint64 version;
	int rc;

	if (query_int(s, "PRAGMA user_version", &version, NULL) == 0)
		return false;
	rc = sqlite3_errcode(lite_db(s)) & 0xff;
	return rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN;
}

/*
 * Read-only (PK_STORE_OPEN_READONLY): the file must exist (SQLite would
 * make it), and WAL mode, which a read-only opening cannot set, is the
 * writer's business.  A WAL database whose -shm cannot be made (another
 * user's directory, a read-only mount) is read as an immutable file: no
 * process has it open then, or its -shm would be there.
 */
static int lite_open(struct pk_store *s, const char *path, GError **err)
{
	sqlite3 *db = NULL;
	int flags = s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	int rc;

	if (s->readonly && !g_file_test(path, G_FILE_TEST_EXISTS))
		return pk_error(err, PK_ERROR_INPUT, "no database at %s (nothing is stored yet)", path);
	rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		pk_error(err, PK_ERROR_INPUT, "cannot open database %s: %s", path,
			 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_close_v2(db);
		return -1;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, STORE_BUSY_MS);
	s->conn = db;
	if (s->readonly && lite_needs_immutable(s) && open_immutable(s) < 0) {
		pk_error(err, PK_ERROR_INPUT, "cannot open database %s read-only: %s", path,
			 s->conn ? sqlite3_errmsg(s->conn) : "out of memory");
		return -1;
	}
	return 0;
}

static void lite_close(struct pk_store *s)
{
	sqlite3_close_v2(lite_db(s));
	s->conn = NULL;
}

static store_stmt *lite_prep(struct pk_store *s, const char *sql, GError **err)
{
	struct lite_stmt *st = g_new0(struct lite_stmt, 1);

	if (sqlite3_prepare_v2(lite_db(s), sql, -1, &st->st, NULL) != SQLITE_OK) {
		lite_error(s, err, "cannot prepare a statement");
		g_free(st);
		return NULL;
	}
	st->head = (struct store_stmt){ .be = &store_sqlite, .s = s };
	return &st->head;
}

static void lite_free(store_stmt *st)
{
	sqlite3_finalize(lite(st));
	g_free(st);
}

static int lite_index(store_stmt *st, const char *name)
{
	return sqlite3_bind_parameter_index(lite(st), name);
}

static void lite_bind_int(store_stmt *st, int i, gint64 v)
{
	sqlite3_bind_int64(lite(st), i, v);
}

static void lite_bind_double(store_stmt *st, int i, double v)
{
	sqlite3_bind_double(lite(st), i, v);
}

static void lite_bind_text(store_stmt *st, int i, const char *v)
{
	sqlite3_bind_text(lite(st), i, v, -1, SQLITE_TRANSIENT);
}

static void lite_bind_data(store_stmt *st, int i, const void *p, size_t len)
{
	sqlite3_bind_blob64(lite(st), i, p, len, SQLITE_TRANSIENT);
}

static void lite_bind_null(store_stmt *st, int i)
{
	sqlite3_bind_null(lite(st), i);
}

static int lite_step(store_stmt *st, GError **err)
{
	int rc = sqlite3_step(lite(st));

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return lite_error(st->s, err, "query failed");
}

static void lite_reset(store_stmt *st)
{
	sqlite3_reset(lite(st));
}

static void lite_clear(store_stmt *st)
{
	sqlite3_reset(lite(st));
	sqlite3_clear_bindings(lite(st));
}

static bool lite_is_null(store_stmt *st, int i)
{
	return sqlite3_column_type(lite(st), i) == SQLITE_NULL;
}

static gint64 lite_col_int(store_stmt *st, int i)
{
	return sqlite3_column_int64(lite(st), i);
}

static double lite_col_double(store_stmt *st, int i)
{
	return sqlite3_column_double(lite(st), i);
}

static const char *lite_col_str(store_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(lite(st), i);
}

static const void *lite_col_blob(store_stmt *st, int i, size_t *len)
{
	const void *p = sqlite3_column_blob(lite(st), i);

	*len = (size_t)sqlite3_column_bytes(lite(st), i);
	return p;
}

static int lite_col_count(store_stmt *st)
{
	return sqlite3_column_count(lite(st));
}

static gint64 lite_changes(struct pk_store *s)
{
	return sqlite3_changes64(lite_db(s));
}

/* Run every statement of a script (the embedded SQL), in order. */
static int lite_exec_script(struct pk_store *s, const char *sql, const char *name, GError **err)
{
	const char *tail = sql;

	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		int rc;

		if (sqlite3_prepare_v2(lite_db(s), tail, -1, &st, &tail) != SQLITE_OK)
			return pk_error(err, PK_ERROR_FAILED, "%s: %s: %s", s->path, name,
					sqlite3_errmsg(lite_db(s)));
		if (!st)    /* only comments or blanks were left */
			break;
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return pk_error(err, PK_ERROR_FAILED, "%s: %s: %s", s->path, name,
					sqlite3_errmsg(lite_db(s)));
	}
	return 0;
}

/* The first read of the file: "file is not a database" shows up here. */
static int lite_version(struct pk_store *s, gint64 *out, GError **err)
{
	if (query_int(s, "PRAGMA user_version", out, NULL) < 0)
		return pk_error(err, PK_ERROR_INPUT, "cannot open database %s: %s", s->path,
				sqlite3_errmsg(lite_db(s)));
	return 0;
}

static int lite_set_version(struct pk_store *s, int version, GError **err)
{
	/* a pragma takes no bound parameter; the value is our own constant */
	g_autofree char *sql = g_strdup_printf("PRAGMA user_version = %d", version);

	return exec1(s, sql, err);
}

/*
 * Migrations run with foreign keys off (a table made again, to change a
 * CHECK, is dropped without cascading), so what they leave is checked:
 * every reference must still find its row.
 */
static char *lite_dangling(struct pk_store *s, GError **err)
{
	g_autoptr(store_stmt) st = prep(s, "PRAGMA foreign_key_check", err);
	int rc;

	if (!st || (rc = step(s, st, err)) < 0)
		return NULL;
	if (!rc)
		return NULL;
	return g_strdup_printf("%s pointing at no row of %s", col_str(st, 0), col_str(st, 2));
}

/* foreign keys on after the migrations: see lite_dangling() */
static const char *const lite_setup[] = {
	"PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = OFF", NULL
};
static const char *const lite_ready[] = { "PRAGMA foreign_keys = ON", NULL };

const struct store_backend store_sqlite = {
	.name = "sqlite",
	.open = lite_open,
	.close = lite_close,
	.prep = lite_prep,
	.free = lite_free,
	.index = lite_index,
	.bind_int = lite_bind_int,
	.bind_double = lite_bind_double,
	.bind_text = lite_bind_text,
	.bind_data = lite_bind_data,
	.bind_null = lite_bind_null,
	.step = lite_step,
	.reset = lite_reset,
	.clear = lite_clear,
	.is_null = lite_is_null,
	.col_int = lite_col_int,
	.col_double = lite_col_double,
	.col_str = lite_col_str,
	.col_blob = lite_col_blob,
	.col_count = lite_col_count,
	.changes = lite_changes,
	.exec_script = lite_exec_script,
	.version = lite_version,
	.set_version = lite_set_version,
	.dangling = lite_dangling,
	/* the write lock at once, so a WAL reader never has to upgrade and fail */
	.readonly_sql = "PRAGMA query_only = ON",
	.begin_sql = "BEGIN IMMEDIATE",
	.schema_lock_sql = NULL,   /* BEGIN IMMEDIATE holds the write lock already */
	.skip_locked = "",         /* and so a claim is alone */
	.intake_lock_sql = NULL,   /* one machine: the daemon locks a file beside the database */
	.instr = "instr",
	/* SQLite's own clock; strftime('%s') rather than unixepoch(), which needs SQLite 3.38 */
	.now_sql = "CAST(strftime('%s', 'now') AS INTEGER)",
	.setup_sql = lite_setup,
	.ready_sql = lite_ready,
	.objects_sql = "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'",
	.table_sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
};

/* ---- db check: a file, read only ---------------------------------------- */

/* Each row of a check pragma that is not "ok" is a problem; a failing pragma too. */
static void check_pragma(sqlite3 *db, const char *sql, GPtrArray *problems)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		g_ptr_array_add(problems, g_strdup_printf("%s: %s", sql, sqlite3_errmsg(db)));
		return;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		g_autoptr(GString) line = g_string_new(NULL);

		if (sqlite3_column_count(st) == 1 &&
		    !g_strcmp0((const char *)sqlite3_column_text(st, 0), "ok"))
			continue;
		if (sqlite3_column_count(st) == 4)   /* foreign_key_check: table, rowid, parent, fkid */
			g_string_printf(line, "%s row %lld refers to a missing %s row",
					sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1),
					sqlite3_column_text(st, 2));
		else
			g_string_append(line, (const char *)sqlite3_column_text(st, 0));
		g_ptr_array_add(problems, g_string_free(g_steal_pointer(&line), FALSE));
	}
	if (rc != SQLITE_DONE)
		g_ptr_array_add(problems, g_strdup_printf("%s: %s", sql, sqlite3_errmsg(db)));
	sqlite3_finalize(st);
}

/*
 * Again as an immutable file: a WAL database where its -shm cannot be made
 * (a read-only directory or mount) opens no other way.  Nothing can write
 * it there, so nothing changes it under the check.
 */
static int open_immutable(struct pk_store *s)
{
	g_autofree char *abs = g_canonicalize_filename(s->where, NULL);
	g_autofree char *uri = g_filename_to_uri(abs, NULL, NULL);
	g_autofree char *immutable = uri ? g_strconcat(uri, "?immutable=1", NULL) : NULL;
	sqlite3 *db = NULL;

	if (!immutable)
		return -1;
	lite_close(s);
	if (sqlite3_open_v2(immutable, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		s->conn = db;
		return -1;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, STORE_BUSY_MS);
	s->conn = db;
	return 0;
}

int store_sqlite_check(struct pk_store *s, gint64 *version, GPtrArray *problems, GError **err)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(s->path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);

	if (rc != SQLITE_OK) {
		pk_error(err, PK_ERROR_INPUT, "cannot open database %s: %s", s->path,
			 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_close_v2(db);
		return -1;
	}
	sqlite3_busy_timeout(db, STORE_BUSY_MS);
	s->conn = db;
	rc = lite_needs_immutable(s) ? open_immutable(s) : 0;
	if (rc == 0)
		rc = query_int(s, "PRAGMA user_version", version, NULL);
	if (rc < 0) {
		/* not a database, or one too damaged to read its schema: the answer */
		g_ptr_array_add(problems, g_strdup(sqlite3_errmsg(s->conn)));
		*version = -1;
	} else if (*version < 0) {
		g_ptr_array_add(problems, g_strdup_printf("schema version %" G_GINT64_FORMAT " is no "
							  "printkbot schema version", *version));
	} else {
		check_pragma(s->conn, "PRAGMA integrity_check", problems);
		check_pragma(s->conn, "PRAGMA foreign_key_check", problems);
	}
	lite_close(s);
	return 0;
}
