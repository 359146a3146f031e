/*
 * private.h - what the files of the store share, and nobody else sees:
 * the connection (struct pk_store), the statement helpers and the
 * transaction levels.  Only bot/store/ includes this header, and so only
 * bot/store/ includes sqlite3.h (store.h is the stage's face).
 *
 * The statement helpers are static inline: they are a few lines each,
 * and so they stay out of the library's global names.  Conventions, as in
 * store.h: -1 with err set on failure; a step returns 1 for a row, 0 when
 * done.
 */
#ifndef PK_STORE_PRIVATE_H
#define PK_STORE_PRIVATE_H

#include "store/store.h"
#include "base/util.h"

#include <sqlite3.h>

/* Another process holding the write lock is waited for this long. */
#define STORE_BUSY_MS 10000
/* A stored blob that inflates past this is refused (a hostile database). */
#define STORE_MAX_INFLATE (512u * 1024 * 1024)

G_DEFINE_AUTOPTR_CLEANUP_FUNC(sqlite3_stmt, sqlite3_finalize)

/* The last base index set read (lab.c). */
struct store_base_cache;

struct pk_store {
	sqlite3 *db;
	char *path;
	int depth;          /* open transaction levels: BEGIN, then SAVEPOINTs */
	/*
	 * The last base index set read: every patch on a base is stored
	 * against it.  Sets never change once written, but a rollback may undo
	 * one (and its id be used again), so a rollback empties the cache.
	 */
	struct store_base_cache *base;
};

/* Free a base cache (lab.c); NULL is fine. */
void store_base_cache_free(struct store_base_cache *c);

/* ---- statements -------------------------------------------------------- */

/* A full disk, an I/O error or a lock held too long passes: PK_ERROR_TRANSIENT, retried by jobs. */
static inline int db_error(struct pk_store *s, GError **err, const char *what)
{
	int rc = sqlite3_errcode(s->db) & 0xff;
	bool passing = rc == SQLITE_FULL || rc == SQLITE_IOERR || rc == SQLITE_BUSY ||
		       rc == SQLITE_LOCKED || rc == SQLITE_NOMEM;

	return pk_error(err, passing ? PK_ERROR_TRANSIENT : PK_ERROR_FAILED, "%s: %s: %s", s->path, what,
			sqlite3_errmsg(s->db));
}

static inline sqlite3_stmt *prep(struct pk_store *s, const char *sql, GError **err)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_error(s, err, "cannot prepare a statement");
		return NULL;
	}
	return st;
}

static inline void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* An id, with 0 meaning NULL (no such row). */
static inline void bind_id(sqlite3_stmt *st, int i, gint64 id)
{
	if (id)
		sqlite3_bind_int64(st, i, id);
	else
		sqlite3_bind_null(st, i);
}

static inline void bind_blob(sqlite3_stmt *st, int i, GBytes *b)
{
	if (b)
		sqlite3_bind_blob64(st, i, g_bytes_get_data(b, NULL), g_bytes_get_size(b),
				    SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Step: 1 a row, 0 done, -1 error. */
static inline int step(struct pk_store *s, sqlite3_stmt *st, GError **err)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return db_error(s, err, "query failed");
}

/* Step a statement that returns nothing, and reset it for the next use. */
static inline int run(struct pk_store *s, sqlite3_stmt *st, GError **err)
{
	int rc = step(s, st, err);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc < 0 ? -1 : 0;
}

static inline char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? g_strndup((const char *)t, sqlite3_column_bytes(st, i)) : NULL;
}

/* One fixed statement (a pragma, BEGIN...): no parameters, no rows wanted. */
static inline int exec1(struct pk_store *s, const char *sql, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s, sql, err);

	if (!st)
		return -1;
	return step(s, st, err) < 0 ? -1 : 0;
}

/* The integer a fixed query returns (PRAGMA user_version, count(*)). */
static inline int query_int(struct pk_store *s, const char *sql, gint64 *out, GError **err)
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

/* The time rows are stamped with: Unix seconds. */
static inline gint64 unix_now(void)
{
	return g_get_real_time() / G_USEC_PER_SEC;
}

/* ---- transactions ------------------------------------------------------ */

/*
 * The outermost level is BEGIN IMMEDIATE (the write lock is taken at once,
 * so a WAL reader never has to upgrade and fail); inner levels, including
 * every pk_store_add_*() inside a caller's transaction, are savepoints.
 */
static inline int tx_begin(struct pk_store *s, GError **err)
{
	if (exec1(s, s->depth ? "SAVEPOINT pk" : "BEGIN IMMEDIATE", err) < 0)
		return -1;
	s->depth++;
	return 0;
}

static inline int tx_commit(struct pk_store *s, GError **err)
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

static inline void tx_rollback(struct pk_store *s)
{
	if (!s->depth)
		return;
	g_clear_pointer(&s->base, store_base_cache_free);
	if (s->depth > 1) {
		exec1(s, "ROLLBACK TO pk", NULL);
		exec1(s, "RELEASE pk", NULL);
	} else {
		exec1(s, "ROLLBACK", NULL);
	}
	s->depth--;
}

/* End a tx_begin(): commit when rc is 0, roll back otherwise; returns rc. */
static inline int tx_end(struct pk_store *s, int rc, GError **err)
{
	if (rc < 0) {
		tx_rollback(s);
		return -1;
	}
	return tx_commit(s, err);
}

/* ---- shared by several files (db.c) ------------------------------------ */

/* data gzip-compressed, as raw patches, mails and consoles are kept. */
GBytes *store_gzip(const char *data, size_t len, GError **err);
/* Inflate a stored gzip blob, refusing more than STORE_MAX_INFLATE bytes; caller frees. */
char *store_gunzip(const void *data, size_t len, GError **err);
/* A Message-ID without its angle brackets and blanks (NULL for NULL); caller frees. */
char *store_bare_msgid(const char *mid);

#endif
