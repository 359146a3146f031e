/*
 * db.c - the database itself: opening (creating or migrating), the
 * caller's transactions, `db check` and the blob helpers the other files
 * share.  See store.h for the contracts.
 */
#include "store/private.h"

#include <gio/gio.h>
#include <string.h>

#include "store-sql.inc"

/* Migrations are numbered 1..N without gaps, and N is the schema version. */
G_STATIC_ASSERT(G_N_ELEMENTS(pk_sql_migrations) == PK_STORE_SCHEMA_VERSION);

/* Run every statement of a script (the embedded SQL), in order. */
static int exec_script(struct pk_store *s, const char *sql, const char *name, GError **err)
{
	const char *tail = sql;

	while (tail && *tail) {
		g_autoptr(sqlite3_stmt) st = NULL;
		int rc;

		if (sqlite3_prepare_v2(s->db, tail, -1, &st, &tail) != SQLITE_OK)
			return pk_error(err, PK_ERROR_FAILED, "%s: %s: %s", s->path, name,
					sqlite3_errmsg(s->db));
		if (!st)    /* only comments or blanks were left */
			break;
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return pk_error(err, PK_ERROR_FAILED, "%s: %s: %s", s->path, name,
					sqlite3_errmsg(s->db));
	}
	return 0;
}

/* ---- transactions ------------------------------------------------------ */

int pk_store_begin(struct pk_store *store, GError **err)
{
	return tx_begin(store, err);
}

int pk_store_commit(struct pk_store *store, GError **err)
{
	return tx_commit(store, err);
}

void pk_store_rollback(struct pk_store *store)
{
	if (store)
		tx_rollback(store);
}

/* ---- opening and migrating --------------------------------------------- */

char *pk_store_default_path(void)
{
	const char *env = g_getenv("PRINTKBOT_DB");
	g_autofree char *cache = NULL;

	if (env && *env)
		return g_strdup(env);
	cache = pk_cache_dir();
	return g_build_filename(cache, "printkbot.db", NULL);
}

const char *pk_store_path(const struct pk_store *store)
{
	return store->path;
}

static int refuse_newer(struct pk_store *s, gint64 version, GError **err)
{
	return pk_error(err, PK_ERROR_INPUT,
			"%s: database schema version %" G_GINT64_FORMAT " is newer than this "
			"printkbot's (%d); use a newer printkbot", s->path, version,
			PK_STORE_SCHEMA_VERSION);
}

/* A negative version no printkbot wrote: migrating "from" it would skip every step. */
static int refuse_negative(struct pk_store *s, gint64 version, GError **err)
{
	return pk_error(err, PK_ERROR_INPUT, "%s: database schema version %" G_GINT64_FORMAT " is no "
			"printkbot schema version (1 to %d): not migrated, not used", s->path, version,
			PK_STORE_SCHEMA_VERSION);
}

/* A file without a schema version is ours only while it is empty. */
static int refuse_foreign(struct pk_store *s, GError **err)
{
	gint64 objects;

	if (query_int(s, "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'",
		      &objects, err) < 0)
		return -1;
	if (objects)
		return pk_error(err, PK_ERROR_INPUT, "%s: not a printkbot database (it has tables "
				"but no schema version)", s->path);
	return 0;
}

/*
 * Migrations run with foreign keys off (a table made again, to change a
 * CHECK, is dropped without cascading), so what they leave is checked
 * here, before the commit: every reference must still find its row.
 */
static int check_references(struct pk_store *s, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s, "PRAGMA foreign_key_check", err);
	int rc;

	if (!st || (rc = step(s, st, err)) < 0)
		return -1;
	if (rc > 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: the migration to schema version %d left a row of "
				"%s pointing at no row of %s", s->path, PK_STORE_SCHEMA_VERSION,
				sqlite3_column_text(st, 0), sqlite3_column_text(st, 2));
	return 0;
}

/* Bring the database to the current schema; runs inside the write lock. */
static int migrate_locked(struct pk_store *s, GError **err)
{
	g_autofree char *set_version = NULL;
	gint64 version;

	if (query_int(s, "PRAGMA user_version", &version, err) < 0)
		return -1;
	if (version == PK_STORE_SCHEMA_VERSION)
		return 0;   /* another process migrated it while we waited */
	if (version > PK_STORE_SCHEMA_VERSION)
		return refuse_newer(s, version, err);
	if (version < 0)
		return refuse_negative(s, version, err);
	if (version == 0) {
		if (refuse_foreign(s, err) < 0 ||
		    exec_script(s, pk_sql_schema, "schema.sql", err) < 0)
			return -1;
	} else {
		for (size_t i = (size_t)version; i < G_N_ELEMENTS(pk_sql_migrations); i++)
			if (exec_script(s, pk_sql_migrations[i].sql, pk_sql_migrations[i].name,
					err) < 0)
				return -1;
	}
	if (check_references(s, err) < 0)
		return -1;
	/* a pragma takes no bound parameter; the value is our own constant */
	set_version = g_strdup_printf("PRAGMA user_version = %d", PK_STORE_SCHEMA_VERSION);
	return exec1(s, set_version, err);
}

static int migrate(struct pk_store *s, GError **err)
{
	if (tx_begin(s, err) < 0)
		return -1;
	return tx_end(s, migrate_locked(s, err), err);
}

/* Connection settings and the schema; the store is usable after it. */
static int store_setup(struct pk_store *s, GError **err)
{
	g_autoptr(GError) local = NULL;
	gint64 version;

	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	/* the first read of the file: "file is not a database" shows up here */
	if (query_int(s, "PRAGMA user_version", &version, &local) < 0)
		return pk_error(err, PK_ERROR_INPUT, "cannot open database %s: %s", s->path,
				sqlite3_errmsg(s->db));
	/* refused before anything below changes the file (WAL is a change) */
	if (version > PK_STORE_SCHEMA_VERSION)
		return refuse_newer(s, version, err);
	if (version < 0)
		return refuse_negative(s, version, err);
	if (version == 0 && refuse_foreign(s, err) < 0)
		return -1;
	if (exec1(s, "PRAGMA journal_mode = WAL", err) < 0 ||
	    exec1(s, "PRAGMA synchronous = NORMAL", err) < 0)
		return -1;
	/* foreign keys on after the migrations: see check_references() */
	if (exec1(s, "PRAGMA foreign_keys = OFF", err) < 0 ||
	    (version < PK_STORE_SCHEMA_VERSION && migrate(s, err) < 0) ||
	    exec1(s, "PRAGMA foreign_keys = ON", err) < 0)
		return -1;
	return 0;
}

int pk_store_open(struct pk_store **out, const char *path, GError **err)
{
	struct pk_store *s = g_new0(struct pk_store, 1);
	int rc;

	s->path = path ? g_strdup(path) : pk_store_default_path();
	rc = sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		pk_error(err, PK_ERROR_INPUT, "cannot open database %s: %s", s->path,
			 s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		pk_store_close(s);
		return -1;
	}
	if (store_setup(s, err) < 0) {
		pk_store_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

void pk_store_close(struct pk_store *store)
{
	if (!store)
		return;
	while (store->depth)
		tx_rollback(store);
	sqlite3_close_v2(store->db);
	store_base_cache_free(store->base);
	g_free(store->path);
	g_free(store);
}

/* ---- blobs and Message-IDs --------------------------------------------- */

GBytes *store_gzip(const char *data, size_t len, GError **err)
{
	g_autoptr(GZlibCompressor) gz = g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6);
	g_autoptr(GOutputStream) mem = g_memory_output_stream_new_resizable();
	g_autoptr(GOutputStream) out = g_converter_output_stream_new(mem, G_CONVERTER(gz));
	GError *local = NULL;

	if (!g_output_stream_write_all(out, data, len, NULL, NULL, &local) ||
	    !g_output_stream_close(out, NULL, &local)) {
		pk_error(err, PK_ERROR_FAILED, "cannot compress: %s", local->message);
		g_error_free(local);
		return NULL;
	}
	return g_memory_output_stream_steal_as_bytes(G_MEMORY_OUTPUT_STREAM(mem));
}

char *store_gunzip(const void *data, size_t len, GError **err)
{
	g_autoptr(GZlibDecompressor) gz = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP);
	g_autoptr(GInputStream) mem = g_memory_input_stream_new_from_data(data, (gssize)len, NULL);
	g_autoptr(GInputStream) in = g_converter_input_stream_new(mem, G_CONVERTER(gz));
	g_autoptr(GString) buf = g_string_new(NULL);
	char chunk[65536];
	GError *local = NULL;

	for (;;) {
		gssize n = g_input_stream_read(in, chunk, sizeof(chunk), NULL, &local);

		if (n < 0) {
			pk_error(err, PK_ERROR_INPUT, "stored data does not inflate: %s",
				 local->message);
			g_error_free(local);
			return NULL;
		}
		if (n == 0)
			break;
		if (buf->len + (size_t)n > STORE_MAX_INFLATE) {
			pk_error(err, PK_ERROR_LIMIT, "stored data inflates past %u bytes",
				 STORE_MAX_INFLATE);
			return NULL;
		}
		g_string_append_len(buf, chunk, n);
	}
	return g_string_free(g_steal_pointer(&buf), FALSE);
}

char *store_bare_msgid(const char *mid)
{
	g_autofree char *t = NULL;
	size_t n;

	if (!mid)
		return NULL;
	t = g_strstrip(g_strdup(mid));
	n = strlen(t);
	if (n >= 2 && t[0] == '<' && t[n - 1] == '>')
		return g_strndup(t + 1, n - 2);
	return g_steal_pointer(&t);
}

/* ---- maintenance ------------------------------------------------------- */

void pk_store_check_clear(struct pk_store_check *check)
{
	if (check && check->problems)
		g_ptr_array_unref(check->problems);
}

/* Each row of a check pragma that is not "ok" is a problem; a failing pragma too. */
static void check_pragma(struct pk_store *s, const char *sql, GPtrArray *problems)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	int rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		g_ptr_array_add(problems, g_strdup_printf("%s: %s", sql, sqlite3_errmsg(s->db)));
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
		g_ptr_array_add(problems, g_strdup_printf("%s: %s", sql, sqlite3_errmsg(s->db)));
}

/*
 * Again as an immutable file: a WAL database where its -shm cannot be made
 * (a read-only directory or mount) opens no other way.  Nothing can write
 * it there, so nothing changes it under the check.
 */
static int open_immutable(struct pk_store *s)
{
	g_autofree char *abs = g_canonicalize_filename(s->path, NULL);
	g_autofree char *uri = g_filename_to_uri(abs, NULL, NULL);
	g_autofree char *immutable = uri ? g_strconcat(uri, "?immutable=1", NULL) : NULL;

	if (!immutable)
		return -1;
	sqlite3_close_v2(s->db);
	s->db = NULL;
	if (sqlite3_open_v2(immutable, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		return -1;
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	return 0;
}

int pk_store_check_file(struct pk_store_check *out, const char *path, GError **err)
{
	struct pk_store s = { .path = (char *)path };
	g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
	gint64 version = 0;
	int rc;

	if (!g_file_test(path, G_FILE_TEST_EXISTS))
		return pk_error(err, PK_ERROR_INPUT, "no database at %s", path);
	rc = sqlite3_open_v2(path, &s.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		pk_error(err, PK_ERROR_INPUT, "cannot open database %s: %s", path,
			 s.db ? sqlite3_errmsg(s.db) : sqlite3_errstr(rc));
		sqlite3_close_v2(s.db);
		return -1;
	}
	sqlite3_busy_timeout(s.db, STORE_BUSY_MS);
	rc = query_int(&s, "PRAGMA user_version", &version, NULL);
	if (rc < 0 && (sqlite3_errcode(s.db) & 0xff) == SQLITE_CANTOPEN && open_immutable(&s) == 0)
		rc = query_int(&s, "PRAGMA user_version", &version, NULL);
	if (rc < 0) {
		/* not a database, or one too damaged to read its schema: the answer */
		g_ptr_array_add(problems, g_strdup(sqlite3_errmsg(s.db)));
		version = -1;
	} else if (version < 0) {
		g_ptr_array_add(problems, g_strdup_printf("schema version %" G_GINT64_FORMAT " is no "
							  "printkbot schema version", version));
	} else {
		check_pragma(&s, "PRAGMA integrity_check", problems);
		check_pragma(&s, "PRAGMA foreign_key_check", problems);
	}
	sqlite3_close_v2(s.db);
	if (version == 0)
		g_ptr_array_add(problems, g_strdup("no schema version: not a printkbot database"));
	else if (version > PK_STORE_SCHEMA_VERSION)
		g_ptr_array_add(problems, g_strdup_printf("schema version %" G_GINT64_FORMAT
							  " is newer than this printkbot's (%d)",
							  version, PK_STORE_SCHEMA_VERSION));
	out->version = (int)version;
	out->problems = g_steal_pointer(&problems);
	return 0;
}

int pk_store_count(struct pk_store *store, const char *table, gint64 *out, GError **err)
{
	g_autoptr(sqlite3_stmt) known = prep(store, "SELECT 1 FROM sqlite_master WHERE type = 'table' "
					     "AND name = ?1", err);
	g_autofree char *sql = NULL;
	int rc;

	if (!known)
		return -1;
	bind_text(known, 1, table);
	if ((rc = step(store, known, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "no table %s", table);
	/* a table name cannot be a parameter; this one was just found in the schema */
	sql = g_strdup_printf("SELECT count(*) FROM \"%s\"", table);
	return query_int(store, sql, out, err);
}
