/*
 * private.h - what the files of the store share, and nobody else sees:
 * the connection (struct pk_store), the statement helpers and the
 * transaction levels.  Only bot/store/ includes this header; only the
 * backends (sql-*.c) include their database's header (store.h is the
 * stage's face).  Conventions, as in store.h: -1 with err set on failure.
 */
#ifndef PK_STORE_PRIVATE_H
#define PK_STORE_PRIVATE_H

#include "store/store.h"
#include "store/queue.h"   /* store_jobs_move() takes its job state */
#include "base/util.h"

#include "store/sql.h"

/* Another process holding the write lock is waited for this long. */
#define STORE_BUSY_MS 10000
/* A stored blob that inflates past this is refused (a hostile database). */
#define STORE_MAX_INFLATE (512u * 1024 * 1024)

/*
 * The last base index set read (lab.c fills it, db.c frees it with the
 * store): its entry ids in order, and entry digest -> id for its entries.
 */
struct store_base_cache {
	gint64 set_id;
	GArray *ids;
	GHashTable *by_digest;  /* GBytes -> gint64* */
};

struct pk_store {
	const struct store_backend *be;
	void *conn;         /* the backend's connection */
	char *where;        /* a file or a URL, as opened (pk_store_path()) */
	char *path;         /* the same without a URL's password: for messages */
	bool readonly;      /* PK_STORE_OPEN_READONLY: no migration, no write */
	gint64 changes;     /* rows the last statement changed (PostgreSQL's; SQLite counts itself) */
	int depth;          /* open transaction levels: BEGIN, then SAVEPOINTs */
	/* the intake's lock (pk_store_intake_lock): 0 not taken, 1 held, -1 lost
	   when the connection was made again and another session had taken it */
	int intake;
	/*
	 * The last base index set read: every patch on a base is stored
	 * against it.  Sets never change once written, but a rollback may undo
	 * one (and its id be used again), so a rollback empties the cache.
	 */
	struct store_base_cache *base;
};

/* Free a base cache (db.c, as the store's part); NULL is fine. */
void store_base_cache_free(struct store_base_cache *c);

/* ---- statements: sql.h ----------------------------------------------- */

/* The time rows are stamped with: Unix seconds. */
static inline gint64 unix_now(void)
{
	return g_get_real_time() / G_USEC_PER_SEC;
}

/* ---- transactions ------------------------------------------------------ */

/*
 * The outermost level is the backend's BEGIN (SQLite's IMMEDIATE takes the
 * write lock at once); inner levels, including every pk_store_add_*()
 * inside a caller's transaction, are savepoints.
 */
static inline int tx_begin(struct pk_store *s, GError **err)
{
	if (exec1(s, s->depth ? "SAVEPOINT pk" : s->be->begin_sql, err) < 0)
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
/* Inflate the stored gzip blob of column i; caller frees. */
static inline char *col_gunzip(store_stmt *st, int i, GError **err)
{
	size_t len;
	const void *p = col_blob(st, i, &len);

	return store_gunzip(p, len, err);
}
/* A Message-ID without its angle brackets and blanks (NULL for NULL); caller frees. */
char *store_bare_msgid(const char *mid);

/* db check of a SQLite file (sql-sqlite.c): the version read (-1 unreadable) and the problems found. */
int store_sqlite_check(struct pk_store *s, gint64 *version, GPtrArray *problems, GError **err);
/* db check of a PostgreSQL database (sql-pg.c), the same way; url may hold a password. */
int store_pg_check(struct pk_store *s, const char *url, gint64 *version, GPtrArray *problems,
		   GError **err);
/*
 * Move every job the prepared query sel selects (its first column: ids)
 * to state to with detail, in one transaction (jobs.c); *out_ids (may be
 * NULL) gets them.  The one way besides jobs.c's own functions that
 * several jobs move at once (queue.c replaces waiting replies with it).
 */
int store_jobs_move(struct pk_store *s, store_stmt *sel, enum pk_job_state to, const char *detail,
		    GArray **out_ids, GError **err);
/* Whether where names a PostgreSQL database (a postgresql:// or postgres:// URL) rather than a file. */
bool store_is_url(const char *where);

#endif
