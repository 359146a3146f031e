/*
 * db.c - the database itself: opening (creating or migrating), the
 * caller's transactions, `db check` and the blob helpers the other files
 * share.  See store.h for the contracts.
 */
#include "store/private.h"

#include <errno.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/random.h>

#include "store-sql.inc"

/* Migrations are numbered 1..N without gaps, and N is the schema version. */
G_STATIC_ASSERT(G_N_ELEMENTS(pk_sql_migrations) == PK_STORE_SCHEMA_VERSION);

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

int pk_store_intake_lock(struct pk_store *store, GError **err)
{
	gint64 taken = 0;

	if (!store->be->intake_lock_sql)
		return 0;
	if (query_int(store, store->be->intake_lock_sql, &taken, err) < 0)
		return -1;
	if (!taken)
		return pk_error(err, PK_ERROR_FAILED, "another printkbot daemon's intake uses %s",
				pk_store_name(store));
	store->intake = 1;
	return 1;
}

bool pk_store_intake_lost(const struct pk_store *store)
{
	return store->intake < 0;
}

const char *pk_store_path(const struct pk_store *store)
{
	return store->where;
}

bool store_is_url(const char *where)
{
	return g_str_has_prefix(where, "postgresql://") || g_str_has_prefix(where, "postgres://");
}

const char *pk_store_name(const struct pk_store *store)
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

	if (query_int(s, s->be->objects_sql, &objects, err) < 0)
		return -1;
	if (objects)
		return pk_error(err, PK_ERROR_INPUT, "%s: not a printkbot database (it has tables "
				"but no schema version)", s->path);
	return 0;
}

/* Migrations may leave a reference without its row (SQLite runs them with foreign keys off). */
static int check_references(struct pk_store *s, GError **err)
{
	g_autoptr(GError) local = NULL;
	g_autofree char *dangling = s->be->dangling(s, &local);

	if (local) {
		g_propagate_error(err, g_steal_pointer(&local));
		return -1;
	}
	if (dangling)
		return pk_error(err, PK_ERROR_FAILED, "%s: the migration to schema version %d left a row of "
				"%s", s->path, PK_STORE_SCHEMA_VERSION, dangling);
	return 0;
}

static int run_script(struct pk_store *s, const struct pk_sql_migration *m, GError **err)
{
	return s->be->exec_script(s, m->sql, m->name, err);
}

/* Bring the database to the current schema; runs inside the write lock. */
static int migrate_locked(struct pk_store *s, GError **err)
{
	static const struct pk_sql_migration schema = { PK_STORE_SCHEMA_VERSION, "schema.sql",
							pk_sql_schema };
	gint64 version;

	if (s->be->version(s, &version, err) < 0)
		return -1;
	if (version == PK_STORE_SCHEMA_VERSION)
		return 0;   /* another process migrated it while we waited */
	if (version > PK_STORE_SCHEMA_VERSION)
		return refuse_newer(s, version, err);
	if (version < 0)
		return refuse_negative(s, version, err);
	if (version == 0) {
		if (refuse_foreign(s, err) < 0 || run_script(s, &schema, err) < 0)
			return -1;
	} else {
		for (size_t i = (size_t)version; i < G_N_ELEMENTS(pk_sql_migrations); i++)
			if (run_script(s, &pk_sql_migrations[i], err) < 0)
				return -1;
	}
	if (check_references(s, err) < 0)
		return -1;
	return s->be->set_version(s, PK_STORE_SCHEMA_VERSION, err);
}

static int migrate(struct pk_store *s, GError **err)
{
	int rc;

	if (tx_begin(s, err) < 0)
		return -1;
	rc = s->be->schema_lock_sql ? exec1(s, s->be->schema_lock_sql, err) : 0;
	return tx_end(s, rc < 0 ? -1 : migrate_locked(s, err), err);
}

static int exec_all(struct pk_store *s, const char *const *sql, GError **err)
{
	for (; sql && *sql; sql++)
		if (exec1(s, *sql, err) < 0)
			return -1;
	return 0;
}

/*
 * A database without a version must be empty, unless another process
 * made the schema since the version was read (workers starting together
 * on a new PostgreSQL database): then *version is the one it wrote.
 */
static int check_empty(struct pk_store *s, gint64 *version, GError **err)
{
	g_autoptr(GError) local = NULL;

	if (refuse_foreign(s, &local) == 0)
		return 0;
	if (s->be->version(s, version, NULL) == 0 && *version > 0)
		return 0;
	g_propagate_error(err, g_steal_pointer(&local));
	return -1;
}

/*
 * A read-only store is read as it is: a database without our schema, or
 * with an older one, would need a write first, so it is refused saying so.
 */
static int readonly_setup(struct pk_store *s, gint64 version, GError **err)
{
	if (version == 0 && refuse_foreign(s, err) < 0)
		return -1;
	if (version == 0)
		return pk_error(err, PK_ERROR_INPUT, "%s: an empty database, opened read-only: nothing "
				"is stored in it yet", s->path);
	if (version < PK_STORE_SCHEMA_VERSION)
		return pk_error(err, PK_ERROR_INPUT, "%s: database schema version %" G_GINT64_FORMAT
				" needs migrating to %d, and it is opened read-only: run `printkbot db "
				"migrate` as a user who may write it", s->path, version,
				PK_STORE_SCHEMA_VERSION);
	return exec1(s, s->be->readonly_sql, err) < 0 || exec_all(s, s->be->ready_sql, err) < 0 ? -1 : 0;
}

/* Connection settings and the schema; the store is usable after it. */
static int store_setup(struct pk_store *s, GError **err)
{
	gint64 version;

	if (s->be->version(s, &version, err) < 0)
		return -1;
	/* refused before anything below changes the database (WAL is a change) */
	if (version > PK_STORE_SCHEMA_VERSION)
		return refuse_newer(s, version, err);
	if (version < 0)
		return refuse_negative(s, version, err);
	if (s->readonly)
		return readonly_setup(s, version, err);
	if (version == 0 && check_empty(s, &version, err) < 0)
		return -1;
	if (exec_all(s, s->be->setup_sql, err) < 0 ||
	    (version < PK_STORE_SCHEMA_VERSION && migrate(s, err) < 0) ||
	    exec_all(s, s->be->ready_sql, err) < 0)
		return -1;
	return 0;
}

int pk_store_open(struct pk_store **out, const char *path, GError **err)
{
	return pk_store_open_ext(out, path, 0, err);
}

int pk_store_open_ext(struct pk_store **out, const char *path, unsigned flags, GError **err)
{
	struct pk_store *s = g_new0(struct pk_store, 1);

	s->where = path ? g_strdup(path) : pk_store_default_path();
	s->path = pk_url_redact(s->where);
	s->readonly = flags & PK_STORE_OPEN_READONLY;
	s->be = store_is_url(s->where) ? &store_pg : &store_sqlite;
	if (s->be->open(s, s->where, err) < 0 || store_setup(s, err) < 0) {
		pk_store_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

void store_base_cache_free(struct store_base_cache *c)
{
	if (!c)
		return;
	g_array_unref(c->ids);
	g_hash_table_unref(c->by_digest);
	g_free(c);
}

void pk_store_close(struct pk_store *store)
{
	if (!store)
		return;
	while (store->depth)
		tx_rollback(store);
	if (store->conn)
		store->be->close(store);
	store_base_cache_free(store->base);
	g_free(store->path);
	g_free(store->where);
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

int pk_store_check_file(struct pk_store_check *out, const char *path, GError **err)
{
	g_autofree char *shown = pk_url_redact(path);
	bool url = store_is_url(path);
	struct pk_store s = { .be = url ? &store_pg : &store_sqlite, .where = (char *)path, .path = shown };
	g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
	gint64 version = 0;

	if (!url && !g_file_test(path, G_FILE_TEST_EXISTS))
		return pk_error(err, PK_ERROR_INPUT, "no database at %s", path);
	if ((url ? store_pg_check(&s, path, &version, problems, err)
		 : store_sqlite_check(&s, &version, problems, err)) < 0)
		return -1;
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

/* 32 bytes from the kernel's random source, as hex; caller frees. */
static char *random_hex(GError **err)
{
	guint8 bytes[32];
	GString *hex;

	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
		pk_error(err, PK_ERROR_FAILED, "cannot read random bytes for a secret: %s", g_strerror(errno));
		return NULL;
	}
	hex = g_string_sized_new(2 * sizeof(bytes) + 1);
	for (size_t i = 0; i < sizeof(bytes); i++)
		g_string_append_printf(hex, "%02x", bytes[i]);
	return g_string_free(hex, FALSE);
}

int pk_store_secret(struct pk_store *store, const char *name, char **out, GError **err)
{
	g_autofree char *made = NULL;
	g_autoptr(store_stmt) ins = NULL, sel = NULL;
	int rc;

	/* made and kept only if no process kept one first: then that one is everybody's */
	if (!(made = random_hex(err)) ||
	    !(ins = prep(store, "INSERT INTO secrets (name, value) VALUES (?1, ?2) "
			 "ON CONFLICT (name) DO NOTHING", err)) ||
	    !(sel = prep(store, "SELECT value FROM secrets WHERE name = ?1", err)))
		return -1;
	bind_text(ins, 1, name);
	bind_text(ins, 2, made);
	if (run(store, ins, err) < 0)
		return -1;
	bind_text(sel, 1, name);
	if ((rc = step(store, sel, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_FAILED, "%s: secret %s was not kept",
					      store->path, name);
	*out = col_text(sel, 0);
	return 0;
}

int pk_store_count(struct pk_store *store, const char *table, gint64 *out, GError **err)
{
	g_autoptr(store_stmt) known = prep(store, store->be->table_sql, err);
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
