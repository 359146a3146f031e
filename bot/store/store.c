/* store.c - the SQLite store; see store.h for the contracts. */
#include "store/store.h"
#include "base/util.h"

#include <gio/gio.h>
#include <sqlite3.h>
#include <string.h>

#include "store-sql.inc"

/* Migrations are numbered 1..N without gaps, and N is the schema version. */
G_STATIC_ASSERT(G_N_ELEMENTS(pk_sql_migrations) == PK_STORE_SCHEMA_VERSION);

/* Another process holding the write lock is waited for this long. */
#define STORE_BUSY_MS 10000
/* A stored blob that inflates past this is refused (a hostile database). */
#define STORE_MAX_INFLATE (512u * 1024 * 1024)
/* Index sets derived from a derived set: a bound that a corrupt file cannot loop past. */
#define STORE_MAX_SET_DEPTH 32

G_DEFINE_AUTOPTR_CLEANUP_FUNC(sqlite3_stmt, sqlite3_finalize)

struct base_cache;

struct pk_store {
	sqlite3 *db;
	char *path;
	int depth;          /* open transaction levels: BEGIN, then SAVEPOINTs */
	/*
	 * The last base index set read: every patch on a base is stored
	 * against it.  Sets never change once written, but a rollback may undo
	 * one (and its id be used again), so a rollback empties the cache.
	 */
	struct base_cache *base;
};

/* ---- SQL plumbing ------------------------------------------------------ */

static int db_error(struct pk_store *s, GError **err, const char *what)
{
	return pk_error(err, PK_ERROR_FAILED, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

static sqlite3_stmt *prep(struct pk_store *s, const char *sql, GError **err)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_error(s, err, "cannot prepare a statement");
		return NULL;
	}
	return st;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* An id, with 0 meaning NULL (no such row). */
static void bind_id(sqlite3_stmt *st, int i, gint64 id)
{
	if (id)
		sqlite3_bind_int64(st, i, id);
	else
		sqlite3_bind_null(st, i);
}

static void bind_blob(sqlite3_stmt *st, int i, GBytes *b)
{
	if (b)
		sqlite3_bind_blob64(st, i, g_bytes_get_data(b, NULL), g_bytes_get_size(b),
				    SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Step: 1 a row, 0 done, -1 error. */
static int step(struct pk_store *s, sqlite3_stmt *st, GError **err)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return db_error(s, err, "query failed");
}

/* Step a statement that returns nothing, and reset it for the next use. */
static int run(struct pk_store *s, sqlite3_stmt *st, GError **err)
{
	int rc = step(s, st, err);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc < 0 ? -1 : 0;
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? g_strndup((const char *)t, sqlite3_column_bytes(st, i)) : NULL;
}

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

/* One fixed statement (a pragma, BEGIN...): no parameters, no rows wanted. */
static int exec1(struct pk_store *s, const char *sql, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s, sql, err);

	if (!st)
		return -1;
	return step(s, st, err) < 0 ? -1 : 0;
}

/* The integer a fixed query returns (PRAGMA user_version, count(*)). */
static int query_int(struct pk_store *s, const char *sql, gint64 *out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s, sql, err);
	int rc;

	if (!st)
		return -1;
	rc = step(s, st, err);
	if (rc < 0)
		return -1;
	*out = rc ? sqlite3_column_int64(st, 0) : 0;
	return 0;
}

/* ---- transactions ------------------------------------------------------ */

static void base_cache_free(struct base_cache *c);

/*
 * The outermost level is BEGIN IMMEDIATE (the write lock is taken at once,
 * so a WAL reader never has to upgrade and fail); inner levels, including
 * every pk_store_add_*() inside a caller's transaction, are savepoints.
 */
static int tx_begin(struct pk_store *s, GError **err)
{
	if (exec1(s, s->depth ? "SAVEPOINT pk" : "BEGIN IMMEDIATE", err) < 0)
		return -1;
	s->depth++;
	return 0;
}

static int tx_commit(struct pk_store *s, GError **err)
{
	if (!s->depth)
		return pk_error(err, PK_ERROR_FAILED, "%s: commit without a transaction", s->path);
	if (exec1(s, s->depth > 1 ? "RELEASE pk" : "COMMIT", err) < 0) {
		if (s->depth == 1)
			exec1(s, "ROLLBACK", NULL);
		s->depth--;
		return -1;
	}
	s->depth--;
	return 0;
}

static void tx_rollback(struct pk_store *s)
{
	if (!s->depth)
		return;
	g_clear_pointer(&s->base, base_cache_free);
	if (s->depth > 1) {
		exec1(s, "ROLLBACK TO pk", NULL);
		exec1(s, "RELEASE pk", NULL);
	} else {
		exec1(s, "ROLLBACK", NULL);
	}
	s->depth--;
}

/* End a tx_begin(): commit when rc is 0, roll back otherwise; returns rc. */
static int tx_end(struct pk_store *s, int rc, GError **err)
{
	if (rc < 0) {
		tx_rollback(s);
		return -1;
	}
	return tx_commit(s, err);
}

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

/* ---- opening and migrating -------------------------------------------- */

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
	if (version == 0 && refuse_foreign(s, err) < 0)
		return -1;
	if (exec1(s, "PRAGMA foreign_keys = ON", err) < 0 ||
	    exec1(s, "PRAGMA journal_mode = WAL", err) < 0 ||
	    exec1(s, "PRAGMA synchronous = NORMAL", err) < 0)
		return -1;
	if (version < PK_STORE_SCHEMA_VERSION && migrate(s, err) < 0)
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
	base_cache_free(store->base);
	g_free(store->path);
	g_free(store);
}

/* ---- blobs and digests ------------------------------------------------- */

static GBytes *gzip_bytes(const char *data, size_t len, GError **err)
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

/* Inflate a stored gzip blob, refusing more than STORE_MAX_INFLATE bytes. */
static char *gunzip(const void *data, size_t len, GError **err)
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

/* Digests tell NULL from "" and never run two fields together. */
static void digest_str(GChecksum *c, const char *v)
{
	if (!v) {
		g_checksum_update(c, (const guchar *)"N", 1);
		return;
	}
	g_checksum_update(c, (const guchar *)"S", 1);
	g_checksum_update(c, (const guchar *)v, (gssize)strlen(v) + 1);
}

static void digest_int(GChecksum *c, gint64 v)
{
	guint8 b[9] = { 'I' };

	for (int i = 0; i < 8; i++)     /* little-endian, whatever the host */
		b[1 + i] = (guint8)((guint64)v >> (8 * i));
	g_checksum_update(c, b, sizeof(b));
}

#define DIGEST_LEN 16   /* the first 128 bits of SHA-256 */

static void digest_end(GChecksum *c, guint8 out[DIGEST_LEN])
{
	guint8 full[32];
	gsize len = sizeof(full);

	g_checksum_get_digest(c, full, &len);
	memcpy(out, full, DIGEST_LEN);
}

/*
 * Find the row of table whose digest column is d, or insert it with the
 * statement ins (its parameter 1 is the digest, the others bound by the
 * caller); *out is its id.
 */
static int find_or_insert(struct pk_store *s, sqlite3_stmt *find, sqlite3_stmt *ins,
			  const guint8 d[DIGEST_LEN], gint64 *out, GError **err)
{
	int rc;

	sqlite3_bind_blob(find, 1, d, DIGEST_LEN, SQLITE_STATIC);
	rc = step(s, find, err);
	if (rc > 0)
		*out = sqlite3_column_int64(find, 0);
	sqlite3_reset(find);
	if (rc)
		return rc < 0 ? -1 : 0;
	sqlite3_bind_blob(ins, 1, d, DIGEST_LEN, SQLITE_STATIC);
	if (step(s, ins, err) < 0) {
		sqlite3_reset(ins);
		return -1;
	}
	sqlite3_reset(ins);
	*out = sqlite3_last_insert_rowid(s->db);
	return 0;
}

/* ---- intake ------------------------------------------------------------ */

static gint64 now(void)
{
	return g_get_real_time() / G_USEC_PER_SEC;
}

/* A Message-ID without its angle brackets and blanks; caller frees. */
static char *bare_msgid(const char *mid)
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

int pk_store_add_source(struct pk_store *store, gint64 *out_id, const char *kind,
			const char *name, const char *url, GError **err)
{
	g_autoptr(sqlite3_stmt) find = prep(store, "SELECT id FROM sources WHERE kind = ?1 AND name = ?2", err);
	g_autoptr(sqlite3_stmt) ins = NULL;
	int rc;

	if (!find)
		return -1;
	bind_text(find, 1, kind);
	bind_text(find, 2, name);
	if ((rc = step(store, find, err)) < 0)
		return -1;
	if (rc) {
		*out_id = sqlite3_column_int64(find, 0);
		return 0;
	}
	ins = prep(store, "INSERT INTO sources (kind, name, url) VALUES (?1, ?2, ?3)", err);
	if (!ins)
		return -1;
	bind_text(ins, 1, kind);
	bind_text(ins, 2, name);
	bind_text(ins, 3, url);
	if (run(store, ins, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

int pk_store_add_series(struct pk_store *store, gint64 *out_id,
			const struct pk_store_series *series, GError **err)
{
	g_autofree char *mid = bare_msgid(series->cover_message_id);
	g_autoptr(sqlite3_stmt) find = NULL;
	g_autoptr(sqlite3_stmt) ins = NULL;
	int rc;

	if (mid) {
		find = prep(store, "SELECT id FROM series WHERE cover_message_id = ?1", err);
		if (!find)
			return -1;
		bind_text(find, 1, mid);
		if ((rc = step(store, find, err)) < 0)
			return -1;
		if (rc) {
			*out_id = sqlite3_column_int64(find, 0);
			return 0;
		}
	}
	ins = prep(store, "INSERT INTO series (source_id, cover_message_id, cover_subject, "
		   "version, total, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", err);
	if (!ins)
		return -1;
	bind_id(ins, 1, series->source_id);
	bind_text(ins, 2, mid);
	bind_text(ins, 3, series->cover_subject);
	sqlite3_bind_int(ins, 4, MAX(series->version, 1));
	sqlite3_bind_int(ins, 5, MAX(series->total, 1));
	sqlite3_bind_int64(ins, 6, now());
	if (run(store, ins, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

/*
 * [PATCH v2 3/7] from the first bracketed group of a subject.  Intake knows
 * these best and passes them; this reads them when it did not.
 */
static void subject_numbers(const char *subject, int *version, int *number, int *total)
{
	const char *open = subject ? strchr(subject, '[') : NULL;
	const char *close = open ? strchr(open, ']') : NULL;
	g_autofree char *tag = NULL;
	g_auto(GStrv) words = NULL;

	if (!close)
		return;
	tag = g_strndup(open + 1, (gsize)(close - open - 1));
	words = g_strsplit_set(tag, " \t", -1);
	for (int i = 0; words[i]; i++) {
		const char *w = words[i];
		char *end;
		gint64 a, b;

		if ((w[0] == 'v' || w[0] == 'V') && g_ascii_isdigit(w[1])) {
			a = g_ascii_strtoll(w + 1, &end, 10);
			if (!*end && a > 0 && a < 1000)
				*version = (int)a;
		} else if (g_ascii_isdigit(w[0])) {
			a = g_ascii_strtoll(w, &end, 10);
			if (*end != '/')
				continue;
			b = g_ascii_strtoll(end + 1, &end, 10);
			if (!*end && a >= 0 && b > 0 && a <= b && b < 100000) {
				*number = (int)a;
				*total = (int)b;
			}
		}
	}
}

/* Find a stored patch by Message-ID, or by commit when it has none: 1 found. */
static int find_patch(struct pk_store *s, const char *mid, const char *commit, gint64 *out,
		      GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	int rc;

	if (!mid && !commit)
		return 0;
	st = prep(s, mid ? "SELECT id FROM patches WHERE message_id = ?1"
			 : "SELECT id FROM patches WHERE message_id IS NULL AND commit_id = ?1 "
			   "ORDER BY id LIMIT 1", err);
	if (!st)
		return -1;
	bind_text(st, 1, mid ? mid : commit);
	if ((rc = step(s, st, err)) > 0)
		*out = sqlite3_column_int64(st, 0);
	return rc;
}

/* The raw patch as kept: the commit message, "---" and the diff, as in a mail body. */
static GBytes *raw_patch(const struct pk_patch *p, size_t *out_size, GError **err)
{
	g_autoptr(GString) raw = g_string_new(NULL);

	if (p->description) {
		g_string_append(raw, p->description);
		if (raw->len && raw->str[raw->len - 1] != '\n')
			g_string_append_c(raw, '\n');
		g_string_append(raw, "---\n");
	}
	if (p->diff)
		g_string_append(raw, p->diff);
	*out_size = raw->len;
	return gzip_bytes(raw->str, raw->len, err);
}

static int insert_patch(struct pk_store *s, gint64 *out_id, const struct pk_patch *p,
			const struct pk_store_patch_opts *o, const char *mid, GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	g_autoptr(GBytes) raw = NULL;
	int version = o->version, number = o->number, total = o->total;
	size_t raw_size = 0;

	if (!version && !number && !total) {
		version = number = total = 1;
		subject_numbers(p->subject, &version, &number, &total);
	}
	if (o->keep_raw && !(raw = raw_patch(p, &raw_size, err)))
		return -1;
	st = prep(s, "INSERT INTO patches (source_id, series_id, message_id, commit_id, subject, "
		  "author, author_name, author_email, date, time, tz_minutes, version, number, "
		  "total, raw, raw_size, raw_ref, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
		  "?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)", err);
	if (!st)
		return -1;
	bind_id(st, 1, o->source_id);
	bind_id(st, 2, o->series_id);
	bind_text(st, 3, mid);
	bind_text(st, 4, o->commit);
	bind_text(st, 5, p->subject);
	bind_text(st, 6, p->author);
	bind_text(st, 7, p->author_name);
	bind_text(st, 8, p->author_email);
	bind_text(st, 9, p->date);
	if (p->time)
		sqlite3_bind_int64(st, 10, p->time);
	sqlite3_bind_int(st, 11, p->tz_minutes);
	sqlite3_bind_int(st, 12, MAX(version, 1));
	sqlite3_bind_int(st, 13, MAX(number, 0));
	sqlite3_bind_int(st, 14, MAX(total, 1));
	bind_blob(st, 15, raw);
	if (raw)
		sqlite3_bind_int64(st, 16, (gint64)raw_size);
	bind_text(st, 17, o->raw_ref);
	sqlite3_bind_int64(st, 18, now());
	if (run(s, st, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int pk_store_add_patch(struct pk_store *store, gint64 *out_id, bool *out_existed,
		       const struct pk_patch *patch, const struct pk_store_patch_opts *opts,
		       GError **err)
{
	static const struct pk_store_patch_opts defaults = PK_STORE_PATCH_OPTS_INIT;
	const struct pk_store_patch_opts *o = opts ? opts : &defaults;
	g_autofree char *mid = bare_msgid(patch->message_id);
	gint64 id = 0;
	int rc;

	if (tx_begin(store, err) < 0)
		return -1;
	rc = find_patch(store, mid, o->commit, &id, err);
	if (rc == 0)
		rc = insert_patch(store, &id, patch, o, mid, err);
	else if (rc > 0)
		rc = 1;
	if (tx_end(store, rc < 0 ? -1 : 0, err) < 0)
		return -1;
	*out_id = id;
	if (out_existed)
		*out_existed = rc == 1;
	return 0;
}

int pk_store_patch_raw(struct pk_store *store, gint64 patch_id, char **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT raw FROM patches WHERE id = ?1", err);
	char *raw;
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, patch_id);
	if ((rc = step(store, st, err)) < 0)
		return -1;
	if (!rc || sqlite3_column_type(st, 0) == SQLITE_NULL)
		return pk_error(err, PK_ERROR_INPUT, "%s: patch %" G_GINT64_FORMAT
				" has no stored raw patch", store->path, patch_id);
	raw = gunzip(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), err);
	if (!raw)
		return -1;
	*out = raw;
	return 0;
}

static int insert_findings(struct pk_store *s, gint64 patch_id, const struct pk_scan *scan,
			   GError **err)
{
	g_autoptr(sqlite3_stmt) have = prep(s, "SELECT 1 FROM findings WHERE patch_id = ?1 LIMIT 1", err);
	g_autoptr(sqlite3_stmt) ins = NULL;
	g_autoptr(sqlite3_stmt) upd = NULL;
	int rc;

	if (!have)
		return -1;
	sqlite3_bind_int64(have, 1, patch_id);
	if ((rc = step(s, have, err)) < 0)
		return -1;
	ins = prep(s, "INSERT INTO findings (patch_id, seq, file, line, kind, old_call, new_call, "
		   "old_level, new_level, old_text, new_text, message) VALUES (?1, ?2, ?3, ?4, "
		   "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", err);
	if (!ins)
		return -1;
	for (guint i = 0; !rc && i < scan->findings->len; i++) {
		const struct pk_finding *f = scan->findings->pdata[i];

		sqlite3_bind_int64(ins, 1, patch_id);
		sqlite3_bind_int(ins, 2, (int)i);
		bind_text(ins, 3, f->file);
		sqlite3_bind_int(ins, 4, f->line);
		bind_text(ins, 5, pk_finding_kind_name(f->kind));
		bind_text(ins, 6, f->old_call);
		bind_text(ins, 7, f->new_call);
		bind_text(ins, 8, f->old_level);
		bind_text(ins, 9, f->new_level);
		bind_text(ins, 10, f->old_text);
		bind_text(ins, 11, f->new_text);
		bind_text(ins, 12, f->message);
		if (run(s, ins, err) < 0)
			return -1;
	}
	/* an untested patch's verdict is the scan's */
	upd = prep(s, "UPDATE patches SET scan_verdict = ?2, calls_changed = ?3, verdict = "
		   "COALESCE((SELECT t.verdict FROM tests t WHERE t.patch_id = ?1 ORDER BY t.id "
		   "DESC LIMIT 1), ?2) WHERE id = ?1", err);
	if (!upd)
		return -1;
	sqlite3_bind_int64(upd, 1, patch_id);
	bind_text(upd, 2, pk_verdict_name(scan->verdict));
	sqlite3_bind_int(upd, 3, (int)scan->calls_changed);
	if (run(s, upd, err) < 0)
		return -1;
	if (!sqlite3_changes(s->db))
		return pk_error(err, PK_ERROR_INPUT, "%s: no patch %" G_GINT64_FORMAT,
				s->path, patch_id);
	return 0;
}

int pk_store_add_findings(struct pk_store *store, gint64 patch_id,
			  const struct pk_scan *scan, GError **err)
{
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, insert_findings(store, patch_id, scan, err), err);
}

/* ---- builds ------------------------------------------------------------ */

int pk_store_add_build(struct pk_store *store, gint64 *out_id, const char *tree_commit,
		       const char *base_commit, const char *config_hash,
		       const struct pk_build_result *res, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "INSERT INTO builds (tree_commit, base_commit, "
					  "config_hash, status, seconds, errors, log_path, created) "
					  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", err);

	if (!st)
		return -1;
	bind_text(st, 1, tree_commit);
	bind_text(st, 2, base_commit);
	bind_text(st, 3, config_hash);
	bind_text(st, 4, res->ok ? "ok" : "failed");
	sqlite3_bind_double(st, 5, res->seconds);
	bind_text(st, 6, res->errors);
	bind_text(st, 7, res->log_path);
	sqlite3_bind_int64(st, 8, now());
	if (run(store, st, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

/* One id from a query with text parameters ?1 and ?2: 1 found, 0 not. */
static int lookup2(struct pk_store *s, const char *sql, const char *a, const char *b,
		   gint64 *out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s, sql, err);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, a);
	bind_text(st, 2, b);
	if ((rc = step(s, st, err)) > 0)
		*out = sqlite3_column_int64(st, 0);
	return rc;
}

int pk_store_find_build(struct pk_store *store, const char *tree_commit,
			const char *config_hash, gint64 *out_id, GError **err)
{
	return lookup2(store, "SELECT id FROM builds WHERE tree_commit = ?1 AND config_hash = ?2 "
		       "AND status = 'ok' ORDER BY id DESC LIMIT 1", tree_commit, config_hash,
		       out_id, err);
}

int pk_store_find_boot(struct pk_store *store, const char *tree_commit,
		       const char *config_hash, gint64 *out_boot_id, GError **err)
{
	return lookup2(store, "SELECT o.id FROM boots o JOIN builds b ON b.id = o.build_id "
		       "WHERE b.tree_commit = ?1 AND b.config_hash = ?2 AND b.status = 'ok' "
		       "AND o.status = 'ok' ORDER BY b.id DESC, o.id DESC LIMIT 1",
		       tree_commit, config_hash, out_boot_id, err);
}

int pk_store_build_boots(struct pk_store *store, gint64 build_id, GArray **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT id FROM boots WHERE build_id = ?1 AND "
					  "status = 'ok' ORDER BY id", err);
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, build_id);
	while ((rc = step(store, st, err)) > 0) {
		gint64 id = sqlite3_column_int64(st, 0);

		g_array_append_val(ids, id);
	}
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&ids);
	return 0;
}

int pk_store_set_noise(struct pk_store *store, gint64 build_id, const char *const *keys,
		       unsigned boots, GError **err)
{
	g_autoptr(sqlite3_stmt) del = NULL;
	g_autoptr(sqlite3_stmt) ins = NULL;
	g_autoptr(sqlite3_stmt) upd = NULL;
	int rc = 0;

	if (tx_begin(store, err) < 0)
		return -1;
	if (!(del = prep(store, "DELETE FROM noise_keys WHERE build_id = ?1", err)) ||
	    !(ins = prep(store, "INSERT OR IGNORE INTO noise_keys (build_id, key) VALUES (?1, ?2)", err)) ||
	    !(upd = prep(store, "UPDATE builds SET noise_boots = ?2 WHERE id = ?1", err)))
		rc = -1;
	if (!rc) {
		sqlite3_bind_int64(del, 1, build_id);
		rc = run(store, del, err);
	}
	for (size_t i = 0; !rc && keys && keys[i]; i++) {
		sqlite3_bind_int64(ins, 1, build_id);
		bind_text(ins, 2, keys[i]);
		rc = run(store, ins, err);
	}
	if (!rc) {
		sqlite3_bind_int64(upd, 1, build_id);
		sqlite3_bind_int(upd, 2, (int)MAX(boots, 1));
		rc = run(store, upd, err);
		if (!rc && !sqlite3_changes(store->db))
			rc = pk_error(err, PK_ERROR_INPUT, "%s: no build %" G_GINT64_FORMAT,
				      store->path, build_id);
	}
	return tx_end(store, rc, err);
}

int pk_store_get_noise(struct pk_store *store, gint64 build_id, char ***out, GError **err)
{
	g_autoptr(sqlite3_stmt) b = prep(store, "SELECT noise_boots FROM builds WHERE id = ?1", err);
	g_autoptr(sqlite3_stmt) st = NULL;
	g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
	int rc;

	if (!b)
		return -1;
	sqlite3_bind_int64(b, 1, build_id);
	if ((rc = step(store, b, err)) <= 0)
		return rc;
	if (sqlite3_column_int(b, 0) == 0)
		return 0;   /* no mask was learnt; an empty one is a mask */
	st = prep(store, "SELECT key FROM noise_keys WHERE build_id = ?1 ORDER BY key", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, build_id);
	while ((rc = step(store, st, err)) > 0)
		g_ptr_array_add(keys, col_text(st, 0));
	if (rc < 0)
		return -1;
	g_ptr_array_add(keys, NULL);
	*out = (char **)g_ptr_array_free(g_steal_pointer(&keys), FALSE);
	return 1;
}

/* ---- printk index sets ------------------------------------------------- */

/* One item of a set: an entry, or the run [from, to) of the parent's list. */
struct set_item {
	gint64 entry;   /* 0 for a run */
	gint64 from, to;
};

/* The entry ids of a set, in order (parents resolved); caller frees. */
static int load_set_ids(struct pk_store *s, gint64 set_id, int depth, GArray **out,
			GError **err)
{
	g_autoptr(sqlite3_stmt) head = prep(s, "SELECT parent_id, count FROM index_sets WHERE id = ?1", err);
	g_autoptr(sqlite3_stmt) items = NULL;
	g_autoptr(GArray) parent = NULL;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	gint64 parent_id, count;
	int rc;

	if (!head)
		return -1;
	if (depth > STORE_MAX_SET_DEPTH)
		return pk_error(err, PK_ERROR_INPUT, "%s: index set %" G_GINT64_FORMAT
				" derives from too many sets", s->path, set_id);
	sqlite3_bind_int64(head, 1, set_id);
	if ((rc = step(s, head, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no index set %" G_GINT64_FORMAT,
					      s->path, set_id);
	parent_id = sqlite3_column_int64(head, 0);
	count = sqlite3_column_int64(head, 1);
	if (parent_id && load_set_ids(s, parent_id, depth + 1, &parent, err) < 0)
		return -1;
	items = prep(s, "SELECT entry_id, parent_from, parent_to FROM index_set_items "
		     "WHERE set_id = ?1 ORDER BY seq", err);
	if (!items)
		return -1;
	sqlite3_bind_int64(items, 1, set_id);
	while ((rc = step(s, items, err)) > 0) {
		gint64 entry = sqlite3_column_int64(items, 0);
		gint64 from = sqlite3_column_int64(items, 1), to = sqlite3_column_int64(items, 2);

		if (sqlite3_column_type(items, 0) != SQLITE_NULL) {
			g_array_append_val(ids, entry);
			continue;
		}
		if (!parent || from < 0 || to < from || to > (gint64)parent->len)
			return pk_error(err, PK_ERROR_INPUT, "%s: index set %" G_GINT64_FORMAT
					" has a run outside its parent", s->path, set_id);
		g_array_append_vals(ids, &g_array_index(parent, gint64, from), (guint)(to - from));
	}
	if (rc < 0)
		return -1;
	if ((gint64)ids->len != count)
		return pk_error(err, PK_ERROR_INPUT, "%s: index set %" G_GINT64_FORMAT " has %u "
				"entries, not %" G_GINT64_FORMAT, s->path, set_id, ids->len, count);
	*out = g_steal_pointer(&ids);
	return 0;
}

/*
 * The items that make child from parent: walk the child, taking each entry
 * from the parent when it appears there after the last one taken (runs of
 * consecutive parent positions become one item), else as itself.  Greedy,
 * not a minimal diff: a moved entry costs a little more, never correctness.
 */
static GArray *set_delta(const GArray *parent, const GArray *child)
{
	g_autoptr(GHashTable) where = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL,
							    (GDestroyNotify)g_array_unref);
	GArray *items = g_array_new(FALSE, FALSE, sizeof(struct set_item));
	gint64 last = -1;

	/* entry id -> its positions in the parent, ascending */
	for (guint i = 0; i < parent->len; i++) {
		gint64 *key = &g_array_index(parent, gint64, i);
		GArray *pos = g_hash_table_lookup(where, key);
		gint64 p = i;

		if (!pos) {
			pos = g_array_new(FALSE, FALSE, sizeof(gint64));
			g_hash_table_insert(where, key, pos);
		}
		g_array_append_val(pos, p);
	}
	for (guint i = 0; i < child->len; i++) {
		gint64 id = g_array_index(child, gint64, i);
		GArray *pos = g_hash_table_lookup(where, &id);
		struct set_item *tail = items->len ? &g_array_index(items, struct set_item, items->len - 1) : NULL;
		gint64 p = -1;

		for (guint k = 0; pos && k < pos->len; k++)
			if (g_array_index(pos, gint64, k) > last) {
				p = g_array_index(pos, gint64, k);
				break;
			}
		if (p < 0) {
			struct set_item it = { .entry = id };

			g_array_append_val(items, it);
		} else if (tail && !tail->entry && tail->to == p) {
			tail->to = p + 1;
			last = p;
		} else {
			struct set_item it = { .from = p, .to = p + 1 };

			g_array_append_val(items, it);
			last = p;
		}
	}
	return items;
}

/* Store the set of entry ids (found by digest, or added, possibly as a delta). */
/* Add the set of entry ids, as a delta from parent (its ids, or NULL) when that is smaller. */
static int store_set(struct pk_store *s, gint64 *out, const GArray *ids, const guint8 d[DIGEST_LEN],
		     gint64 parent_id, const GArray *parent, GError **err)
{
	g_autoptr(sqlite3_stmt) head = NULL;
	g_autoptr(sqlite3_stmt) ins = NULL;
	g_autoptr(GArray) items = NULL;
	gint64 set_id;

	if (parent)
		items = set_delta(parent, ids);
	if (items && items->len * 2 > ids->len) {
		/* a delta no smaller than half the list is not worth the indirection */
		g_clear_pointer(&items, g_array_unref);
	}
	if (!items) {
		parent_id = 0;
		items = g_array_sized_new(FALSE, FALSE, sizeof(struct set_item), ids->len);
		for (guint i = 0; i < ids->len; i++) {
			struct set_item it = { .entry = g_array_index(ids, gint64, i) };

			g_array_append_val(items, it);
		}
	}
	head = prep(s, "INSERT INTO index_sets (digest, parent_id, count) VALUES (?1, ?2, ?3)", err);
	ins = prep(s, "INSERT INTO index_set_items (set_id, seq, entry_id, parent_from, parent_to) "
		   "VALUES (?1, ?2, ?3, ?4, ?5)", err);
	if (!head || !ins)
		return -1;
	sqlite3_bind_blob(head, 1, d, DIGEST_LEN, SQLITE_STATIC);
	bind_id(head, 2, parent_id);
	sqlite3_bind_int64(head, 3, ids->len);
	if (run(s, head, err) < 0)
		return -1;
	set_id = sqlite3_last_insert_rowid(s->db);
	for (guint i = 0; i < items->len; i++) {
		const struct set_item *it = &g_array_index(items, struct set_item, i);

		sqlite3_bind_int64(ins, 1, set_id);
		sqlite3_bind_int64(ins, 2, i);
		if (it->entry) {
			sqlite3_bind_int64(ins, 3, it->entry);
		} else {
			sqlite3_bind_int64(ins, 4, it->from);
			sqlite3_bind_int64(ins, 5, it->to);
		}
		if (run(s, ins, err) < 0)
			return -1;
	}
	*out = set_id;
	return 0;
}

static void index_entry_digest(const struct pk_index_entry *e, GChecksum *c, guint8 d[DIGEST_LEN])
{
	g_checksum_reset(c);
	digest_int(c, e->level);
	digest_int(c, e->cont);
	digest_str(c, e->file);
	digest_int(c, e->line);
	digest_str(c, e->func);
	digest_str(c, e->format);
	digest_end(c, d);
}

/* A base set's entry ids in order, and entry digest -> id for its entries. */
struct base_cache {
	gint64 set_id;
	GArray *ids;
	GHashTable *by_digest;  /* GBytes -> gint64* */
};

static void base_cache_free(struct base_cache *c)
{
	if (!c)
		return;
	g_array_unref(c->ids);
	g_hash_table_unref(c->by_digest);
	g_free(c);
}

/* The cache for set_id, reading the set and its entries' digests when it is another. */
static int base_cache_get(struct pk_store *s, gint64 set_id, struct base_cache **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	struct base_cache *c;

	if (s->base && s->base->set_id == set_id) {
		*out = s->base;
		return 0;
	}
	c = g_new0(struct base_cache, 1);
	c->set_id = set_id;
	c->by_digest = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
					     (GDestroyNotify)g_bytes_unref, g_free);
	if (load_set_ids(s, set_id, 0, &c->ids, err) < 0 ||
	    !(st = prep(s, "SELECT digest FROM index_entries WHERE id = ?1", err))) {
		if (!c->ids)
			c->ids = g_array_new(FALSE, FALSE, sizeof(gint64));
		base_cache_free(c);
		return -1;
	}
	for (guint i = 0; i < c->ids->len; i++) {
		gint64 id = g_array_index(c->ids, gint64, i);

		sqlite3_bind_int64(st, 1, id);
		if (step(s, st, err) <= 0) {
			base_cache_free(c);
			return pk_error(err, PK_ERROR_INPUT, "%s: index set %" G_GINT64_FORMAT
					" names a missing entry", s->path, set_id);
		}
		g_hash_table_insert(c->by_digest,
				    g_bytes_new(sqlite3_column_blob(st, 0), (gsize)sqlite3_column_bytes(st, 0)),
				    g_memdup2(&id, sizeof(id)));
		sqlite3_reset(st);
	}
	base_cache_free(s->base);
	s->base = c;
	*out = c;
	return 0;
}

/*
 * The index set of the build's base (the latest boot of the build of
 * base_commit with the same config), which a patched build's set is
 * stored against; 0 when the build is a base or its base was not stored.
 */
static int base_set(struct pk_store *s, gint64 build_id, gint64 *out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s,
		"SELECT o.index_set_id FROM builds b JOIN builds base ON base.tree_commit = b.base_commit "
		"AND base.config_hash = b.config_hash AND base.id <> b.id "
		"JOIN boots o ON o.build_id = base.id AND o.index_set_id IS NOT NULL "
		"WHERE b.id = ?1 AND b.base_commit <> b.tree_commit ORDER BY base.id DESC, o.id DESC LIMIT 1", err);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, build_id);
	if ((rc = step(s, st, err)) < 0)
		return -1;
	*out = rc ? sqlite3_column_int64(st, 0) : 0;
	return 0;
}

/* The id of the set whose digest is d: 1 found, 0 not. */
static int find_set(struct pk_store *s, const guint8 d[DIGEST_LEN], gint64 *out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s, "SELECT id FROM index_sets WHERE digest = ?1", err);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_blob(st, 1, d, DIGEST_LEN, SQLITE_STATIC);
	if ((rc = step(s, st, err)) > 0)
		*out = sqlite3_column_int64(st, 0);
	return rc;
}

/*
 * Store a boot's index: digests first, so an index already stored (the
 * same kernel booted again) costs one lookup; then entry ids, from the
 * base's cache where the entry is the base's and from the table otherwise.
 */
static int store_index(struct pk_store *s, gint64 *out_set, gint64 build_id,
		       const GPtrArray *index, GError **err)
{
	g_autoptr(sqlite3_stmt) find = NULL;
	g_autoptr(sqlite3_stmt) ins = NULL;
	g_autoptr(GChecksum) whole = g_checksum_new(G_CHECKSUM_SHA256);
	g_autoptr(GChecksum) one = g_checksum_new(G_CHECKSUM_SHA256);
	g_autofree guint8 *digests = g_malloc((gsize)index->len * DIGEST_LEN + 1);
	g_autoptr(GArray) ids = g_array_sized_new(FALSE, FALSE, sizeof(gint64), index->len);
	struct base_cache *base = NULL;
	guint8 d[DIGEST_LEN];
	gint64 parent = 0;
	int rc;

	for (guint i = 0; i < index->len; i++) {
		index_entry_digest(index->pdata[i], one, digests + (gsize)i * DIGEST_LEN);
		g_checksum_update(whole, digests + (gsize)i * DIGEST_LEN, DIGEST_LEN);
	}
	digest_end(whole, d);
	if ((rc = find_set(s, d, out_set, err)) != 0)
		return rc < 0 ? -1 : 0;
	if (base_set(s, build_id, &parent, err) < 0 ||
	    (parent && base_cache_get(s, parent, &base, err) < 0))
		return -1;
	find = prep(s, "SELECT id FROM index_entries WHERE digest = ?1", err);
	ins = prep(s, "INSERT INTO index_entries (digest, level, cont, file, line, func, format) "
		   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", err);
	if (!find || !ins)
		return -1;
	for (guint i = 0; i < index->len; i++) {
		const struct pk_index_entry *e = index->pdata[i];
		const guint8 *ed = digests + (gsize)i * DIGEST_LEN;
		gint64 id, *known = NULL;

		if (base) {
			g_autoptr(GBytes) key = g_bytes_new_static(ed, DIGEST_LEN);

			known = g_hash_table_lookup(base->by_digest, key);
		}
		if (known) {
			g_array_append_val(ids, *known);
			continue;
		}
		sqlite3_bind_int(ins, 2, e->level);
		sqlite3_bind_int(ins, 3, e->cont);
		bind_text(ins, 4, e->file ? e->file : "");
		sqlite3_bind_int(ins, 5, e->line);
		bind_text(ins, 6, e->func ? e->func : "");
		bind_text(ins, 7, e->format ? e->format : "");
		if (find_or_insert(s, find, ins, ed, &id, err) < 0)
			return -1;
		g_array_append_val(ids, id);
	}
	return store_set(s, out_set, ids, d, parent, base ? base->ids : NULL, err);
}

/* ---- boots and records ------------------------------------------------- */

static void record_digest(const struct pk_record *r, GChecksum *c, guint8 d[DIGEST_LEN])
{
	g_checksum_reset(c);
	digest_int(c, r->level);
	digest_int(c, r->facility);
	digest_int(c, r->cont);
	digest_str(c, r->caller);
	digest_str(c, r->text);
	for (guint i = 0; r->dict && i < r->dict->len; i++)
		digest_str(c, r->dict->pdata[i]);
	digest_end(c, d);
}

/* The dictionary as stored: each "KEY=value" NUL-terminated; NULL when empty. */
static GBytes *dict_blob(const GPtrArray *dict)
{
	GByteArray *b;

	if (!dict || !dict->len)
		return NULL;
	b = g_byte_array_new();
	for (guint i = 0; i < dict->len; i++)
		g_byte_array_append(b, dict->pdata[i], (guint)strlen(dict->pdata[i]) + 1);
	return g_byte_array_free_to_bytes(b);
}

static int store_records(struct pk_store *s, gint64 boot_id, const GPtrArray *records,
			 GError **err)
{
	g_autoptr(sqlite3_stmt) find = prep(s, "SELECT id FROM record_lines WHERE digest = ?1", err);
	g_autoptr(sqlite3_stmt) line = prep(s, "INSERT INTO record_lines (digest, level, facility, "
					    "cont, caller, text, dict) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", err);
	g_autoptr(sqlite3_stmt) rec = prep(s, "INSERT INTO boot_records (boot_id, pos, line_id, "
					   "seq, ts_usec) VALUES (?1, ?2, ?3, ?4, ?5)", err);
	g_autoptr(GChecksum) c = g_checksum_new(G_CHECKSUM_SHA256);
	guint8 d[DIGEST_LEN];

	if (!find || !line || !rec)
		return -1;
	for (guint i = 0; i < records->len; i++) {
		const struct pk_record *r = records->pdata[i];
		g_autoptr(GBytes) dict = dict_blob(r->dict);
		gint64 line_id;

		record_digest(r, c, d);
		sqlite3_bind_int(line, 2, r->level);
		sqlite3_bind_int(line, 3, r->facility);
		sqlite3_bind_int(line, 4, r->cont);
		bind_text(line, 5, r->caller);
		bind_text(line, 6, r->text ? r->text : "");
		bind_blob(line, 7, dict);
		if (find_or_insert(s, find, line, d, &line_id, err) < 0)
			return -1;
		sqlite3_bind_int64(rec, 1, boot_id);
		sqlite3_bind_int64(rec, 2, i);
		sqlite3_bind_int64(rec, 3, line_id);
		sqlite3_bind_int64(rec, 4, (gint64)r->seq);
		sqlite3_bind_int64(rec, 5, (gint64)r->ts_usec);
		if (run(s, rec, err) < 0)
			return -1;
	}
	return 0;
}

static int insert_boot(struct pk_store *s, gint64 *out_id, gint64 build_id,
		       const struct pk_boot_result *res, GError **err)
{
	const struct pk_capture *cap = res->capture;
	g_autoptr(sqlite3_stmt) st = NULL;
	g_autoptr(sqlite3_stmt) upd = NULL;
	g_autoptr(GBytes) console = NULL;
	gint64 boot_id, set_id = 0;

	if (res->console && !(console = gzip_bytes(res->console, strlen(res->console), err)))
		return -1;
	st = prep(s, "INSERT INTO boots (build_id, status, seconds, accel, cmdline, console, "
		  "console_size, detail, record_count, lost, complete, problems, created) VALUES "
		  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, build_id);
	bind_text(st, 2, pk_boot_status_name(res->status));
	sqlite3_bind_double(st, 3, res->seconds);
	bind_text(st, 4, res->accel);
	bind_text(st, 5, res->cmdline);
	bind_blob(st, 6, console);
	if (res->console)
		sqlite3_bind_int64(st, 7, (gint64)strlen(res->console));
	bind_text(st, 8, res->detail);
	sqlite3_bind_int(st, 9, cap ? (int)cap->records->len : 0);
	sqlite3_bind_int(st, 10, cap ? (int)cap->lost : 0);
	sqlite3_bind_int(st, 11, cap && cap->complete);
	bind_text(st, 12, cap && cap->problems->len ? cap->problems->str : NULL);
	sqlite3_bind_int64(st, 13, now());
	if (run(s, st, err) < 0)
		return -1;
	boot_id = sqlite3_last_insert_rowid(s->db);
	if (cap) {
		if (store_records(s, boot_id, cap->records, err) < 0 ||
		    store_index(s, &set_id, build_id, cap->index, err) < 0)
			return -1;
		upd = prep(s, "UPDATE boots SET index_set_id = ?2 WHERE id = ?1", err);
		if (!upd)
			return -1;
		sqlite3_bind_int64(upd, 1, boot_id);
		sqlite3_bind_int64(upd, 2, set_id);
		if (run(s, upd, err) < 0)
			return -1;
	}
	*out_id = boot_id;
	return 0;
}

int pk_store_add_boot(struct pk_store *store, gint64 *out_id, gint64 build_id,
		      const struct pk_boot_result *res, GError **err)
{
	gint64 id = 0;
	int rc;

	if (tx_begin(store, err) < 0)
		return -1;
	rc = tx_end(store, insert_boot(store, &id, build_id, res, err), err);
	if (rc == 0)
		*out_id = id;
	return rc;
}

static int load_records(struct pk_store *s, gint64 boot_id, GPtrArray *out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s,
		"SELECT r.seq, r.ts_usec, l.level, l.facility, l.cont, l.caller, l.text, l.dict "
		"FROM boot_records r JOIN record_lines l ON l.id = r.line_id "
		"WHERE r.boot_id = ?1 ORDER BY r.pos", err);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, boot_id);
	while ((rc = step(s, st, err)) > 0) {
		struct pk_record *r = g_new0(struct pk_record, 1);
		const char *dict = sqlite3_column_blob(st, 7);
		size_t dict_len = (size_t)sqlite3_column_bytes(st, 7);

		r->seq = (uint64_t)sqlite3_column_int64(st, 0);
		r->ts_usec = (uint64_t)sqlite3_column_int64(st, 1);
		r->level = sqlite3_column_int(st, 2);
		r->facility = sqlite3_column_int(st, 3);
		r->cont = sqlite3_column_int(st, 4) != 0;
		r->caller = col_text(st, 5);
		r->text = col_text(st, 6);
		r->dict = g_ptr_array_new_with_free_func(g_free);
		for (size_t at = 0; dict && at < dict_len;) {
			const char *end = memchr(dict + at, '\0', dict_len - at);
			size_t n = end ? (size_t)(end - (dict + at)) : dict_len - at;

			g_ptr_array_add(r->dict, g_strndup(dict + at, n));
			at += n + 1;
		}
		g_ptr_array_add(out, r);
	}
	return rc < 0 ? -1 : 0;
}

static int load_index(struct pk_store *s, gint64 set_id, GPtrArray *out, GError **err)
{
	g_autoptr(GArray) ids = NULL;
	g_autoptr(sqlite3_stmt) st = NULL;

	if (load_set_ids(s, set_id, 0, &ids, err) < 0)
		return -1;
	st = prep(s, "SELECT level, cont, file, line, func, format FROM index_entries WHERE id = ?1", err);
	if (!st)
		return -1;
	for (guint i = 0; i < ids->len; i++) {
		struct pk_index_entry *e;
		int rc;

		sqlite3_bind_int64(st, 1, g_array_index(ids, gint64, i));
		if ((rc = step(s, st, err)) <= 0)
			return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: index set %"
						      G_GINT64_FORMAT " names a missing entry",
						      s->path, set_id);
		e = g_new0(struct pk_index_entry, 1);
		e->level = sqlite3_column_int(st, 0);
		e->cont = sqlite3_column_int(st, 1) != 0;
		e->file = col_text(st, 2);
		e->line = sqlite3_column_int(st, 3);
		e->func = col_text(st, 4);
		e->format = col_text(st, 5);
		g_ptr_array_add(out, e);
		sqlite3_reset(st);
	}
	return 0;
}

int pk_store_load_capture(struct pk_store *store, gint64 boot_id,
			  struct pk_capture **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT index_set_id, lost, complete, problems "
					  "FROM boots WHERE id = ?1", err);
	g_autoptr(pk_capture) cap = g_new0(struct pk_capture, 1);
	gint64 set_id;
	int rc;

	cap->records = g_ptr_array_new_with_free_func((GDestroyNotify)pk_record_free);
	cap->index = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	cap->problems = g_string_new(NULL);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, boot_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no boot %" G_GINT64_FORMAT,
					      store->path, boot_id);
	set_id = sqlite3_column_int64(st, 0);
	cap->lost = (unsigned)sqlite3_column_int(st, 1);
	cap->complete = sqlite3_column_int(st, 2) != 0;
	if (sqlite3_column_type(st, 3) != SQLITE_NULL)
		g_string_append(cap->problems, (const char *)sqlite3_column_text(st, 3));
	if (load_records(store, boot_id, cap->records, err) < 0 ||
	    (set_id && load_index(store, set_id, cap->index, err) < 0))
		return -1;
	*out = g_steal_pointer(&cap);
	return 0;
}

int pk_store_boot_console(struct pk_store *store, gint64 boot_id, char **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT console FROM boots WHERE id = ?1", err);
	char *text;
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, boot_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no boot %" G_GINT64_FORMAT,
					      store->path, boot_id);
	if (sqlite3_column_type(st, 0) == SQLITE_NULL)
		text = g_strdup("");
	else if (!(text = gunzip(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), err)))
		return -1;
	*out = text;
	return 0;
}

/* ---- tests and reviews ------------------------------------------------- */

static void bind_level(sqlite3_stmt *st, int i, int level)
{
	if (level >= 0)
		sqlite3_bind_int(st, i, level);
	else
		sqlite3_bind_null(st, i);
}

static void bind_origin(sqlite3_stmt *st, int first, const struct pk_origin *o)
{
	bind_text(st, first, o->file);
	if (o->file)
		sqlite3_bind_int(st, first + 1, o->line);
	bind_text(st, first + 2, o->func);
	bind_text(st, first + 3, o->format);
}

static int insert_changes(struct pk_store *s, gint64 test_id, const struct pk_kdiff *d,
			  GError **err)
{
	g_autoptr(sqlite3_stmt) c = prep(s, "INSERT INTO console_changes (test_id, seq, kind, "
					 "old_level, new_level, old_text, new_text, file, line, func, "
					 "format, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
					 "?10, ?11, ?12)", err);
	g_autoptr(sqlite3_stmt) x = prep(s, "INSERT INTO index_changes (test_id, seq, kind, "
					 "old_level, new_level, old_format, new_format, file, line, "
					 "func, format) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
					 "?10, ?11)", err);

	if (!c || !x)
		return -1;
	for (guint i = 0; i < d->changes->len; i++) {
		const struct pk_change *ch = d->changes->pdata[i];

		sqlite3_bind_int64(c, 1, test_id);
		sqlite3_bind_int(c, 2, (int)i);
		bind_text(c, 3, pk_change_kind_name(ch->kind));
		bind_level(c, 4, ch->old_level);
		bind_level(c, 5, ch->new_level);
		bind_text(c, 6, ch->old_text);
		bind_text(c, 7, ch->new_text);
		bind_origin(c, 8, &ch->origin);
		bind_text(c, 12, ch->message);
		if (run(s, c, err) < 0)
			return -1;
	}
	for (guint i = 0; i < d->index_changes->len; i++) {
		const struct pk_index_change *ch = d->index_changes->pdata[i];

		sqlite3_bind_int64(x, 1, test_id);
		sqlite3_bind_int(x, 2, (int)i);
		bind_text(x, 3, pk_change_kind_name(ch->kind));
		bind_level(x, 4, ch->old_level);
		bind_level(x, 5, ch->new_level);
		bind_text(x, 6, ch->old_format);
		bind_text(x, 7, ch->new_format);
		bind_origin(x, 8, &ch->origin);
		if (run(s, x, err) < 0)
			return -1;
	}
	return 0;
}

/* Pair each stored finding of the patch (scan order) with its confirmation. */
static int insert_confirmations(struct pk_store *s, gint64 test_id, const struct pk_store_test *t,
				GError **err)
{
	g_autoptr(sqlite3_stmt) f = prep(s, "SELECT id FROM findings WHERE patch_id = ?1 ORDER BY seq", err);
	g_autoptr(sqlite3_stmt) ins = prep(s, "INSERT INTO finding_checks (test_id, finding_id, "
					   "confirmation) VALUES (?1, ?2, ?3)", err);
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	int rc;

	if (!f || !ins)
		return -1;
	sqlite3_bind_int64(f, 1, t->patch_id);
	while ((rc = step(s, f, err)) > 0) {
		gint64 id = sqlite3_column_int64(f, 0);

		g_array_append_val(ids, id);
	}
	if (rc < 0)
		return -1;
	if (ids->len != t->n_confirmations)
		return pk_error(err, PK_ERROR_INPUT, "%s: patch %" G_GINT64_FORMAT " has %u stored "
				"findings but the test confirms %u", s->path, t->patch_id,
				ids->len, t->n_confirmations);
	for (guint i = 0; i < ids->len; i++) {
		sqlite3_bind_int64(ins, 1, test_id);
		sqlite3_bind_int64(ins, 2, g_array_index(ids, gint64, i));
		bind_text(ins, 3, t->confirmations[i]);
		if (run(s, ins, err) < 0)
			return -1;
	}
	return 0;
}

static int insert_test(struct pk_store *s, gint64 *out_id, const struct pk_store_test *t,
		       GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s, "INSERT INTO tests (patch_id, before_build, after_build, "
					  "before_boot, after_boot, verdict, reason, seconds, "
					  "records_before, records_after, noise_dropped, created) VALUES "
					  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", err);
	g_autoptr(sqlite3_stmt) upd = prep(s, "UPDATE patches SET verdict = ?2 WHERE id = ?1", err);
	gint64 test_id;

	if (!st || !upd)
		return -1;
	sqlite3_bind_int64(st, 1, t->patch_id);
	bind_id(st, 2, t->before_build);
	bind_id(st, 3, t->after_build);
	bind_id(st, 4, t->before_boot);
	bind_id(st, 5, t->after_boot);
	bind_text(st, 6, pk_verdict_name(t->verdict));
	bind_text(st, 7, t->reason);
	sqlite3_bind_double(st, 8, t->seconds);
	if (t->diff) {
		sqlite3_bind_int(st, 9, (int)t->diff->records_before);
		sqlite3_bind_int(st, 10, (int)t->diff->records_after);
		sqlite3_bind_int(st, 11, (int)t->diff->noise_dropped);
	}
	sqlite3_bind_int64(st, 12, now());
	if (run(s, st, err) < 0)
		return -1;
	test_id = sqlite3_last_insert_rowid(s->db);
	if (t->diff && insert_changes(s, test_id, t->diff, err) < 0)
		return -1;
	if (t->confirmations && insert_confirmations(s, test_id, t, err) < 0)
		return -1;
	sqlite3_bind_int64(upd, 1, t->patch_id);
	bind_text(upd, 2, pk_verdict_name(t->verdict));
	if (run(s, upd, err) < 0)
		return -1;
	*out_id = test_id;
	return 0;
}

int pk_store_add_test(struct pk_store *store, gint64 *out_id,
		      const struct pk_store_test *test, GError **err)
{
	gint64 id = 0;
	int rc;

	if (tx_begin(store, err) < 0)
		return -1;
	rc = tx_end(store, insert_test(store, &id, test, err), err);
	if (rc == 0)
		*out_id = id;
	return rc;
}

int pk_store_add_review(struct pk_store *store, gint64 *out_id, gint64 test_id,
			const char *model_json, const char *body, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "INSERT INTO reviews (test_id, model, body, created) "
					  "VALUES (?1, ?2, ?3, ?4)", err);

	if (!st)
		return -1;
	bind_id(st, 1, test_id);
	bind_text(st, 2, model_json);
	bind_text(st, 3, body);
	sqlite3_bind_int64(st, 4, now());
	if (run(store, st, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

int pk_store_review_posted(struct pk_store *store, gint64 review_id, const char *posted_to,
			   const char *reply_message_id, gint64 time, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "UPDATE reviews SET posted_to = ?2, "
					  "reply_message_id = ?3, posted_at = ?4 WHERE id = ?1", err);
	g_autofree char *mid = bare_msgid(reply_message_id);

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, review_id);
	bind_text(st, 2, posted_to);
	bind_text(st, 3, mid);
	sqlite3_bind_int64(st, 4, time ? time : now());
	if (run(store, st, err) < 0)
		return -1;
	if (!sqlite3_changes(store->db))
		return pk_error(err, PK_ERROR_INPUT, "%s: no review %" G_GINT64_FORMAT,
				store->path, review_id);
	return 0;
}

int pk_store_review_get(struct pk_store *store, gint64 review_id, char **out_model_json,
			char **out_body, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT model, body FROM reviews WHERE id = ?1", err);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, review_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no review %" G_GINT64_FORMAT,
					      store->path, review_id);
	if (out_model_json)
		*out_model_json = col_text(st, 0);
	if (out_body)
		*out_body = col_text(st, 1);
	return 0;
}

/* ---- history ----------------------------------------------------------- */

void pk_history_row_free(struct pk_history_row *row)
{
	if (!row)
		return;
	g_free(row->subject);
	g_free(row->message_id);
	g_free(row->commit);
	g_free(row->author);
	g_free(row->verdict);
	g_free(row->stage);
	g_free(row->kind);
	g_free(row->file);
	g_free(row->func);
	g_free(row->old_text);
	g_free(row->new_text);
	g_free(row->source);
	g_free(row->link);
	g_free(row);
}

/*
 * The three places a change is stored, as arms of one UNION ALL: what each
 * calls its columns, so one set of filter clauses serves them all.
 */
struct history_arm {
	const char *stage;
	const char *from;       /* joins the change table c to patches p */
	const char *test_id;
	const char *verdict;
	const char *func;       /* NULL: the arm has no function (the filter skips it) */
	const char *old_text, *new_text;
};

static const struct history_arm history_arms[] = {
	{ "static", "findings c JOIN patches p ON p.id = c.patch_id",
	  "0", "p.verdict", NULL, "c.old_text", "c.new_text" },
	{ "boot", "console_changes c JOIN tests t ON t.id = c.test_id JOIN patches p ON p.id = t.patch_id",
	  "t.id", "t.verdict", "c.func", "c.old_text", "c.new_text" },
	{ "index", "index_changes c JOIN tests t ON t.id = c.test_id JOIN patches p ON p.id = t.patch_id",
	  "t.id", "t.verdict", "c.func", "c.old_format", "c.new_format" },
};

/*
 * One arm's SELECT.  Only the clauses of the filters that are set are
 * written; every value is a named parameter bound later, never text.
 */
static gboolean history_has_patch_filter(const struct pk_history_filter *f);

static void history_arm_sql(GString *q, const struct history_arm *a, int order,
			    const struct pk_history_filter *f)
{
	g_string_append_printf(q, "SELECT p.id, %s, p.subject, p.message_id, p.commit_id, p.author, "
			       "p.time, %s, '%s', c.kind, c.file, c.line, %s, %s, %s, s.name, "
			       "%d AS stage_order, c.seq FROM %s LEFT JOIN sources s ON "
			       "s.id = p.source_id WHERE 1", a->test_id, a->verdict, a->stage,
			       a->func ? a->func : "NULL", a->old_text, a->new_text, order, a->from);
	if (f->file)
		g_string_append(q, " AND c.file = :file");
	if (f->func)
		g_string_append_printf(q, " AND %s = :func", a->func);
	if (f->grep)
		g_string_append_printf(q, " AND (instr(%s, :grep) > 0 OR instr(%s, :grep) > 0)",
				       a->old_text, a->new_text);
	if (f->kind)
		g_string_append(q, " AND c.kind = :kind");
	if (f->verdict)
		g_string_append_printf(q, " AND %s = :verdict", a->verdict);
	if (history_has_patch_filter(f))
		g_string_append(q, " AND p.id IN sel");
}

/*
 * The filters on the patch rather than the change select the patches once,
 * in a CTE that each arm then walks by index, instead of each arm testing
 * every one of its changes' patches.
 */
static gboolean history_has_patch_filter(const struct pk_history_filter *f)
{
	return f->author || f->source || f->commit || f->message_id || f->since || f->until;
}

static void history_patch_sql(GString *q, const struct pk_history_filter *f)
{
	g_string_append(q, "WITH sel(id) AS MATERIALIZED (SELECT p.id FROM patches p LEFT JOIN "
			"sources s ON s.id = p.source_id WHERE 1");
	if (f->author)
		g_string_append(q, " AND instr(lower(ifnull(p.author, '') || ' ' || "
				"ifnull(p.author_name, '') || ' ' || ifnull(p.author_email, '')), "
				":author) > 0");
	if (f->source)
		g_string_append(q, " AND (s.name = :source OR s.url = :source OR s.kind = :source)");
	if (f->commit)
		g_string_append(q, " AND substr(p.commit_id, 1, length(:commit)) = :commit");
	if (f->message_id)
		g_string_append(q, " AND p.message_id = :mid");
	if (f->since)
		g_string_append(q, " AND p.time >= :since");
	if (f->until)
		g_string_append(q, " AND p.time < :until");
	g_string_append(q, ") ");
}

static void bind_named(sqlite3_stmt *st, const char *name, const char *value)
{
	int i = sqlite3_bind_parameter_index(st, name);

	if (i && value)
		sqlite3_bind_text(st, i, value, -1, SQLITE_TRANSIENT);
}

static char *history_link(const char *mid, const char *commit)
{
	g_autofree char *esc = NULL;

	if (mid) {
		esc = g_uri_escape_string(mid, "@!$&'()*+,;=:", FALSE);
		return g_strconcat("https://lore.kernel.org/r/", esc, NULL);
	}
	return g_strdup(commit);
}

static struct pk_history_row *history_row(sqlite3_stmt *st)
{
	struct pk_history_row *r = g_new0(struct pk_history_row, 1);

	r->patch_id = sqlite3_column_int64(st, 0);
	r->test_id = sqlite3_column_int64(st, 1);
	r->subject = col_text(st, 2);
	r->message_id = col_text(st, 3);
	r->commit = col_text(st, 4);
	r->author = col_text(st, 5);
	r->time = sqlite3_column_int64(st, 6);
	r->verdict = col_text(st, 7);
	r->stage = col_text(st, 8);
	r->kind = col_text(st, 9);
	r->file = col_text(st, 10);
	r->line = sqlite3_column_int(st, 11);
	r->func = col_text(st, 12);
	r->old_text = col_text(st, 13);
	r->new_text = col_text(st, 14);
	r->source = col_text(st, 15);
	r->link = history_link(r->message_id, r->commit);
	return r;
}

int pk_store_history(struct pk_store *store, GPtrArray **out,
		     const struct pk_history_filter *f, GError **err)
{
	g_autoptr(GString) q = g_string_new(NULL);
	g_autoptr(sqlite3_stmt) st = NULL;
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_history_row_free);
	g_autofree char *mid = bare_msgid(f->message_id);
	g_autofree char *author = f->author ? g_ascii_strdown(f->author, -1) : NULL;
	g_autofree char *commit = f->commit ? g_ascii_strdown(f->commit, -1) : NULL;
	int arms = 0, rc;

	if (history_has_patch_filter(f))
		history_patch_sql(q, f);
	g_string_append(q, "SELECT * FROM (");
	for (size_t i = 0; i < G_N_ELEMENTS(history_arms); i++) {
		const struct history_arm *a = &history_arms[i];

		if ((f->stage && strcmp(f->stage, a->stage)) || (f->func && !a->func))
			continue;
		if (arms++)
			g_string_append(q, " UNION ALL ");
		history_arm_sql(q, a, (int)i, f);
	}
	if (!arms) {
		if (f->stage && strcmp(f->stage, "static") && strcmp(f->stage, "boot") &&
		    strcmp(f->stage, "index"))
			return pk_error(err, PK_ERROR_INPUT, "unknown stage '%s' (static, boot, index)",
					f->stage);
		*out = g_steal_pointer(&rows);
		return 0;
	}
	g_string_append(q, ") ORDER BY 7 DESC, 1 DESC, stage_order, 2, seq");
	if (f->limit)
		g_string_append(q, " LIMIT :limit");
	if (!(st = prep(store, q->str, err)))
		return -1;
	bind_named(st, ":file", f->file);
	bind_named(st, ":func", f->func);
	bind_named(st, ":grep", f->grep);
	bind_named(st, ":kind", f->kind);
	bind_named(st, ":verdict", f->verdict);
	bind_named(st, ":author", author);
	bind_named(st, ":source", f->source);
	bind_named(st, ":commit", commit);
	bind_named(st, ":mid", mid);
	if (f->since)
		sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":since"), f->since);
	if (f->until)
		sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":until"), f->until);
	if (f->limit)
		sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":limit"), f->limit);
	while ((rc = step(store, st, err)) > 0)
		g_ptr_array_add(rows, history_row(st));
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}

/* ---- the job queue ------------------------------------------------------ */

static const char *const job_states[] = { "queued", "running", "done", "failed", "cancelled" };

/* The static name of a state, or NULL for an unknown one. */
static const char *job_state_name(const char *state)
{
	for (size_t i = 0; state && i < G_N_ELEMENTS(job_states); i++)
		if (!strcmp(state, job_states[i]))
			return job_states[i];
	return NULL;
}

static gboolean job_move_allowed(const char *from, const char *to)
{
	static const struct { const char *from, *to; } moves[] = {
		{ "queued", "running" }, { "queued", "cancelled" },
		{ "running", "done" }, { "running", "failed" },
		{ "running", "queued" },   /* the daemon died mid-job: run it again */
		{ "failed", "queued" },    /* retry */
	};

	for (size_t i = 0; i < G_N_ELEMENTS(moves); i++)
		if (!strcmp(from, moves[i].from) && !strcmp(to, moves[i].to))
			return TRUE;
	return FALSE;
}

int pk_store_job_add(struct pk_store *store, gint64 *out_id, const char *kind,
		     const char *payload, GError **err)
{
	/* state is left to its default: only pk_store_job_set_state() writes it */
	g_autoptr(sqlite3_stmt) st = prep(store, "INSERT INTO jobs (kind, payload, created, updated) "
					  "VALUES (?1, ?2, ?3, ?3)", err);

	if (!st)
		return -1;
	bind_text(st, 1, kind);
	bind_text(st, 2, payload);
	sqlite3_bind_int64(st, 3, now());
	if (run(store, st, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

int pk_store_job_state(struct pk_store *store, gint64 job_id, const char **out_state,
		       GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT state FROM jobs WHERE id = ?1", err);
	const char *name;
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	name = job_state_name((const char *)sqlite3_column_text(st, 0));
	if (!name)
		return pk_error(err, PK_ERROR_INPUT, "%s: job %" G_GINT64_FORMAT " has an unknown state",
				store->path, job_id);
	*out_state = name;
	return 1;
}

static int job_set_state_locked(struct pk_store *s, gint64 job_id, const char *to,
				const char *detail, GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	const char *from = NULL;
	int rc;

	if ((rc = pk_store_job_state(s, job_id, &from, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no job %" G_GINT64_FORMAT,
					      s->path, job_id);
	if (!job_move_allowed(from, to))
		return pk_error(err, PK_ERROR_INPUT, "job %" G_GINT64_FORMAT ": cannot go from %s to %s",
				job_id, from, to);
	st = prep(s, "UPDATE jobs SET state = ?2, detail = ?3, updated = ?4, "
		  "attempts = attempts + (?2 = 'running') WHERE id = ?1", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	bind_text(st, 2, to);
	bind_text(st, 3, detail);
	sqlite3_bind_int64(st, 4, now());
	return run(s, st, err);
}

int pk_store_job_set_state(struct pk_store *store, gint64 job_id, const char *state,
			   const char *detail, GError **err)
{
	const char *to = job_state_name(state);

	if (!to)
		return pk_error(err, PK_ERROR_INPUT, "unknown job state '%s'", state ? state : "(null)");
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, job_set_state_locked(store, job_id, to, detail, err), err);
}

int pk_store_job_next(struct pk_store *store, gint64 *out_id, char **out_kind,
		      char **out_payload, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT id, kind, payload FROM jobs WHERE state = "
					  "'queued' ORDER BY id LIMIT 1", err);
	int rc;

	if (!st)
		return -1;
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out_id = sqlite3_column_int64(st, 0);
	*out_kind = col_text(st, 1);
	*out_payload = col_text(st, 2);
	return 1;
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
	if (query_int(&s, "PRAGMA user_version", &version, NULL) < 0) {
		/* not a database, or one too damaged to read its schema: the answer */
		g_ptr_array_add(problems, g_strdup(sqlite3_errmsg(s.db)));
		version = -1;
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

/* ---- the daemon: sources, mails, replies, the queue ------------------ */

int pk_store_source_state_get(struct pk_store *store, gint64 source_id, const char *key,
			      char **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT value FROM source_state "
					  "WHERE source_id = ?1 AND key = ?2", err);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, source_id);
	bind_text(st, 2, key);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out = col_text(st, 0);
	return 1;
}

int pk_store_source_state_set(struct pk_store *store, gint64 source_id, const char *key,
			      const char *value, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "INSERT INTO source_state (source_id, key, value) "
					  "VALUES (?1, ?2, ?3) ON CONFLICT (source_id, key) "
					  "DO UPDATE SET value = excluded.value", err);

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, source_id);
	bind_text(st, 2, key);
	bind_text(st, 3, value);
	return run(store, st, err);
}

void pk_store_mail_free(struct pk_store_mail *m)
{
	if (!m)
		return;
	g_free(m->message_id);
	g_free(m->in_reply_to);
	g_free(m->refs);
	g_free(m->subject);
	g_free(m->author_email);
	g_free(m->state);
	g_free(m->reason);
	g_free(m);
}

static const char *const mail_states[] = { "pending", "queued", "skipped" };

static gboolean mail_state_known(const char *state)
{
	for (size_t i = 0; state && i < G_N_ELEMENTS(mail_states); i++)
		if (!strcmp(state, mail_states[i]))
			return TRUE;
	return FALSE;
}

int pk_store_mail_find(struct pk_store *store, const char *message_id, gint64 *out_id,
		       GError **err)
{
	g_autofree char *mid = bare_msgid(message_id);
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT id FROM mails WHERE message_id = ?1", err);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, mid);
	if ((rc = step(store, st, err)) > 0)
		*out_id = sqlite3_column_int64(st, 0);
	return rc;
}

static int insert_mail(struct pk_store *s, gint64 *out_id, const struct pk_store_mail *m,
		       const char *mid, const char *raw, size_t len, GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	g_autoptr(GBytes) blob = NULL;

	if (raw && !(blob = gzip_bytes(raw, len, err)))
		return -1;
	st = prep(s, "INSERT INTO mails (source_id, message_id, in_reply_to, refs, subject, "
		  "author_email, version, number, total, state, reason, raw, job_id, received, churn) "
		  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)", err);
	if (!st)
		return -1;
	bind_id(st, 1, m->source_id);
	bind_text(st, 2, mid);
	bind_text(st, 3, m->in_reply_to);
	bind_text(st, 4, m->refs);
	bind_text(st, 5, m->subject);
	bind_text(st, 6, m->author_email);
	sqlite3_bind_int(st, 7, MAX(m->version, 1));
	sqlite3_bind_int(st, 8, MAX(m->number, 0));
	sqlite3_bind_int(st, 9, MAX(m->total, 1));
	bind_text(st, 10, m->state);
	bind_text(st, 11, m->reason);
	bind_blob(st, 12, blob);
	bind_id(st, 13, m->job_id);
	sqlite3_bind_int64(st, 14, m->received ? m->received : now());
	sqlite3_bind_int(st, 15, m->churn);
	if (run(s, st, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int pk_store_mail_add(struct pk_store *store, gint64 *out_id, bool *out_existed,
		      const struct pk_store_mail *mail, const char *raw, size_t len,
		      GError **err)
{
	g_autofree char *mid = bare_msgid(mail->message_id);
	gint64 id = 0;
	int rc;

	if (!mid || !*mid)
		return pk_error(err, PK_ERROR_INPUT, "a mail without a Message-ID cannot be stored");
	if (!mail_state_known(mail->state))
		return pk_error(err, PK_ERROR_INPUT, "unknown mail state '%s'",
				mail->state ? mail->state : "(null)");
	if (tx_begin(store, err) < 0)
		return -1;
	rc = pk_store_mail_find(store, mid, &id, err);
	if (rc == 0)
		rc = insert_mail(store, &id, mail, mid, raw, len, err);
	if (tx_end(store, rc < 0 ? -1 : 0, err) < 0)
		return -1;
	*out_id = id;
	if (out_existed)
		*out_existed = rc == 1;
	return 0;
}

#define MAIL_COLUMNS "id, source_id, job_id, message_id, in_reply_to, refs, subject, " \
		     "author_email, version, number, total, state, reason, received, churn"

static struct pk_store_mail *mail_row(sqlite3_stmt *st)
{
	struct pk_store_mail *m = g_new0(struct pk_store_mail, 1);

	m->id = sqlite3_column_int64(st, 0);
	m->source_id = sqlite3_column_int64(st, 1);
	m->job_id = sqlite3_column_int64(st, 2);
	m->message_id = col_text(st, 3);
	m->in_reply_to = col_text(st, 4);
	m->refs = col_text(st, 5);
	m->subject = col_text(st, 6);
	m->author_email = col_text(st, 7);
	m->version = sqlite3_column_int(st, 8);
	m->number = sqlite3_column_int(st, 9);
	m->total = sqlite3_column_int(st, 10);
	m->state = col_text(st, 11);
	m->reason = col_text(st, 12);
	m->received = sqlite3_column_int64(st, 13);
	m->churn = sqlite3_column_int(st, 14);
	return m;
}

int pk_store_mails(struct pk_store *store, const char *state, GPtrArray **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT " MAIL_COLUMNS " FROM mails WHERE "
					  "?1 IS NULL OR state = ?1 ORDER BY id", err);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_mail_free);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, state);
	while ((rc = step(store, st, err)) > 0)
		g_ptr_array_add(rows, mail_row(st));
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}

int pk_store_mail_get(struct pk_store *store, gint64 mail_id, struct pk_store_mail **out,
		      GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT " MAIL_COLUMNS " FROM mails WHERE id = ?1", err);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, mail_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out = mail_row(st);
	return 1;
}

int pk_store_mail_raw(struct pk_store *store, gint64 mail_id, char **out, size_t *out_len,
		      GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT raw FROM mails WHERE id = ?1 AND raw IS NOT NULL", err);
	char *text;
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, mail_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	if (!(text = gunzip(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), err)))
		return -1;
	*out_len = strlen(text);
	*out = text;
	return 1;
}

int pk_store_mail_set_state(struct pk_store *store, gint64 mail_id, const char *state,
			    const char *reason, gint64 job_id, GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;

	if (!mail_state_known(state))
		return pk_error(err, PK_ERROR_INPUT, "unknown mail state '%s'", state ? state : "(null)");
	/* a skipped mail no longer needs its bytes */
	st = prep(store, "UPDATE mails SET state = ?2, reason = ?3, job_id = ?4, "
		  "raw = CASE WHEN ?2 = 'skipped' THEN NULL ELSE raw END WHERE id = ?1", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, mail_id);
	bind_text(st, 2, state);
	bind_text(st, 3, reason);
	bind_id(st, 4, job_id);
	if (run(store, st, err) < 0)
		return -1;
	if (!sqlite3_changes(store->db))
		return pk_error(err, PK_ERROR_INPUT, "%s: no mail %" G_GINT64_FORMAT, store->path, mail_id);
	return 0;
}

void pk_store_reply_free(struct pk_store_reply *r)
{
	if (!r)
		return;
	g_free(r->after_commit);
	g_free(r->message_id);
	g_free(r->sender);
	g_free(r->recipients);
	g_free(r->text);
	g_free(r);
}

int pk_store_reply_add(struct pk_store *store, gint64 *out_id, const struct pk_store_reply *r,
		       GError **err)
{
	g_autofree char *mid = bare_msgid(r->message_id);
	g_autoptr(sqlite3_stmt) st = prep(store, "INSERT INTO replies (mail_id, review_id, job_id, "
					  "after_commit, message_id, sender, recipients, text, sent) "
					  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", err);

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, r->mail_id);
	bind_id(st, 2, r->review_id);
	bind_id(st, 3, r->job_id);
	bind_text(st, 4, r->after_commit);
	bind_text(st, 5, mid);
	bind_text(st, 6, r->sender);
	bind_text(st, 7, r->recipients);
	bind_text(st, 8, r->text);
	if (r->sent)
		sqlite3_bind_int64(st, 9, r->sent);
	if (run(store, st, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

/* key is bound as text when given, else id. */
static int reply_query(struct pk_store *store, const char *where, gint64 id, const char *key,
		       struct pk_store_reply **out, GError **err)
{
	g_autofree char *sql = g_strdup_printf("SELECT id, mail_id, review_id, job_id, after_commit, "
					       "message_id, sender, recipients, text, sent FROM "
					       "replies WHERE %s = ?1", where);
	g_autoptr(sqlite3_stmt) st = prep(store, sql, err);
	struct pk_store_reply *r;
	int rc;

	if (!st)
		return -1;
	if (key)
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_int64(st, 1, id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	r = g_new0(struct pk_store_reply, 1);
	r->id = sqlite3_column_int64(st, 0);
	r->mail_id = sqlite3_column_int64(st, 1);
	r->review_id = sqlite3_column_int64(st, 2);
	r->job_id = sqlite3_column_int64(st, 3);
	r->after_commit = col_text(st, 4);
	r->message_id = col_text(st, 5);
	r->sender = col_text(st, 6);
	r->recipients = col_text(st, 7);
	r->text = col_text(st, 8);
	r->sent = sqlite3_column_int64(st, 9);
	*out = r;
	return 1;
}

int pk_store_reply_get(struct pk_store *store, gint64 reply_id, struct pk_store_reply **out,
		       GError **err)
{
	return reply_query(store, "id", reply_id, NULL, out, err);
}

int pk_store_reply_for_mail(struct pk_store *store, gint64 mail_id, struct pk_store_reply **out,
			    GError **err)
{
	return reply_query(store, "mail_id", mail_id, NULL, out, err);
}

int pk_store_reply_by_message_id(struct pk_store *store, const char *message_id,
				 struct pk_store_reply **out, GError **err)
{
	return reply_query(store, "message_id", 0, message_id, out, err);
}

static int reply_sent_locked(struct pk_store *s, gint64 reply_id, gint64 when, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s, "UPDATE replies SET sent = ?2 WHERE id = ?1", err);
	g_autoptr(sqlite3_stmt) rv = NULL;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, reply_id);
	sqlite3_bind_int64(st, 2, when);
	if (run(s, st, err) < 0)
		return -1;
	rv = prep(s, "UPDATE reviews SET posted_to = (SELECT recipients FROM replies WHERE id = ?1), "
		  "posted_at = ?2, reply_message_id = (SELECT message_id FROM replies WHERE id = ?1) "
		  "WHERE id = (SELECT review_id FROM replies WHERE id = ?1)", err);
	if (!rv)
		return -1;
	sqlite3_bind_int64(rv, 1, reply_id);
	sqlite3_bind_int64(rv, 2, when);
	return run(s, rv, err);
}

int pk_store_reply_sent(struct pk_store *store, gint64 reply_id, gint64 time, GError **err)
{
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, reply_sent_locked(store, reply_id, time ? time : now(), err), err);
}

void pk_store_job_free(struct pk_store_job *job)
{
	if (!job)
		return;
	g_free(job->kind);
	g_free(job->payload);
	g_free(job->state);
	g_free(job->detail);
	g_free(job);
}

int pk_store_jobs(struct pk_store *store, const char *state, GPtrArray **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT id, kind, payload, state, detail, attempts, "
					  "created, updated, not_before FROM jobs WHERE ?1 IS NULL "
					  "OR state = ?1 ORDER BY id", err);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_job_free);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, state);
	while ((rc = step(store, st, err)) > 0) {
		struct pk_store_job *j = g_new0(struct pk_store_job, 1);

		j->id = sqlite3_column_int64(st, 0);
		j->kind = col_text(st, 1);
		j->payload = col_text(st, 2);
		j->state = col_text(st, 3);
		j->detail = col_text(st, 4);
		j->attempts = sqlite3_column_int(st, 5);
		j->created = sqlite3_column_int64(st, 6);
		j->updated = sqlite3_column_int64(st, 7);
		j->not_before = sqlite3_column_int64(st, 8);
		g_ptr_array_add(rows, j);
	}
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}

int pk_store_job_next_due(struct pk_store *store, const char *kind, gint64 now_s, gint64 *out_id,
			  char **out_kind, char **out_payload, gint64 *out_wait, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT id, kind, payload, not_before FROM jobs "
					  "WHERE state = 'queued' AND (?1 IS NULL OR kind = ?1) "
					  "ORDER BY not_before > ?2, id LIMIT 1", err);
	g_autoptr(sqlite3_stmt) soon = NULL;
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, kind);
	sqlite3_bind_int64(st, 2, now_s);
	if ((rc = step(store, st, err)) < 0)
		return -1;
	if (rc > 0 && sqlite3_column_int64(st, 3) <= now_s) {
		*out_id = sqlite3_column_int64(st, 0);
		*out_kind = col_text(st, 1);
		*out_payload = col_text(st, 2);
		if (out_wait)
			*out_wait = 0;
		return 1;
	}
	if (!out_wait)
		return 0;
	/* nothing due: how long until the first queued job is */
	if (!(soon = prep(store, "SELECT min(not_before) FROM jobs WHERE state = 'queued' AND "
			  "(?1 IS NULL OR kind = ?1)", err)))
		return -1;
	bind_text(soon, 1, kind);
	if (step(store, soon, err) < 0)
		return -1;
	*out_wait = sqlite3_column_type(soon, 0) == SQLITE_NULL ? -1
		  : MAX(sqlite3_column_int64(soon, 0) - now_s, 0);
	return 0;
}

static int job_retry_locked(struct pk_store *s, gint64 job_id, gint64 not_before,
			    const char *detail, GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;

	if (job_set_state_locked(s, job_id, "queued", detail, err) < 0)
		return -1;
	if (!(st = prep(s, "UPDATE jobs SET not_before = ?2 WHERE id = ?1", err)))
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, not_before);
	return run(s, st, err);
}

int pk_store_job_retry_at(struct pk_store *store, gint64 job_id, gint64 not_before,
			  const char *detail, GError **err)
{
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, job_retry_locked(store, job_id, not_before, detail, err), err);
}
