/*
 * sql.h - the store's statement layer: every SQL statement of bot/store/
 * goes through it, so the rest of the store does not know whether SQLite
 * or PostgreSQL answers.  Private to bot/store/ (included by private.h).
 *
 * A statement is prepared from SQL with ?N (or :name) placeholders,
 * numbered from 1 as in SQLite; a backend rewrites them as it needs.
 * Values bound are copied.  Conventions, as in store.h: -1 with err set on
 * failure; a step returns 1 for a row, 0 when done.  What a column getter
 * returns is borrowed until the next step, reset or free of the statement.
 * A new row's id is read with `INSERT ... RETURNING id` (run_id()): both
 * backends take it, where last_insert_rowid is SQLite's alone.
 */
#ifndef PK_STORE_SQL_H
#define PK_STORE_SQL_H

#include <glib.h>
#include <stdbool.h>

struct pk_store;

/* a typedef only so that g_autoptr() can name it */
typedef struct store_stmt store_stmt;

/* What every backend's statement starts with (the backend's own fields follow). */
struct store_stmt {
	const struct store_backend *be;
	struct pk_store *s;
};

/*
 * A backend: one table of functions per database engine (sql-sqlite.c,
 * sql-pg.c), chosen when the store is opened.  Every slot is required.
 */
struct store_backend {
	const char *name;                                       /* "sqlite", "postgresql" */
	/* connect to where (a path or a URL); fills s's connection */
	int (*open)(struct pk_store *s, const char *where, GError **err);
	void (*close)(struct pk_store *s);
	store_stmt *(*prep)(struct pk_store *s, const char *sql, GError **err);
	void (*free)(store_stmt *st);
	/* the index of a :name placeholder, 0 when the statement has none */
	int (*index)(store_stmt *st, const char *name);
	void (*bind_int)(store_stmt *st, int i, gint64 v);
	void (*bind_double)(store_stmt *st, int i, double v);
	void (*bind_text)(store_stmt *st, int i, const char *v);
	void (*bind_data)(store_stmt *st, int i, const void *p, size_t len);
	void (*bind_null)(store_stmt *st, int i);
	int (*step)(store_stmt *st, GError **err);
	/* ready to step again; the bindings stay */
	void (*reset)(store_stmt *st);
	/* reset and forget the bindings */
	void (*clear)(store_stmt *st);
	bool (*is_null)(store_stmt *st, int i);
	gint64 (*col_int)(store_stmt *st, int i);
	double (*col_double)(store_stmt *st, int i);
	const char *(*col_str)(store_stmt *st, int i);
	const void *(*col_blob)(store_stmt *st, int i, size_t *len);
	int (*col_count)(store_stmt *st);
	/* rows the last INSERT, UPDATE or DELETE changed */
	gint64 (*changes)(struct pk_store *s);
	/* run every statement of a script (the embedded schema and migrations) */
	int (*exec_script)(struct pk_store *s, const char *sql, const char *name, GError **err);
	/* the schema version the database holds (0 for a new one), and writing it */
	int (*version)(struct pk_store *s, gint64 *out, GError **err);
	int (*set_version)(struct pk_store *s, int version, GError **err);
	/* a problem a migration left in the references, as a string; NULL when none */
	char *(*dangling)(struct pk_store *s, GError **err);
	/* run on a read-only store's connection: any write after it fails */
	const char *readonly_sql;
	const char *begin_sql;          /* the outermost BEGIN */
	const char *schema_lock_sql;    /* first in a migration's transaction, or NULL */
	const char *skip_locked;        /* after a job claim's SELECT: "" or FOR UPDATE SKIP LOCKED */
	const char *intake_lock_sql;    /* 1 when this session took the intake's lock, 0 when another
	                                   holds it; NULL: the database has none (store.h) */
	const char *instr;              /* the function (haystack, needle) giving a 1-based position */
	/*
	 * The database's clock as whole Unix seconds, an SQL expression: every
	 * lease is written and compared with it, never with a worker's own
	 * clock, so a worker whose clock runs ahead cannot end live leases.
	 */
	const char *now_sql;
	const char *const *setup_sql;   /* run after opening, before migrating */
	const char *const *ready_sql;   /* run after migrating */
	const char *objects_sql;        /* how many tables, views... the database holds */
	const char *table_sql;          /* 1 when table ?1 exists */
};

extern const struct store_backend store_sqlite;
extern const struct store_backend store_pg;

/* The statement's backend; every function below goes through it. */
static inline const struct store_backend *stmt_backend(store_stmt *st)
{
	return st->be;
}

store_stmt *prep(struct pk_store *s, const char *sql, GError **err);
void stmt_free(store_stmt *st);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(store_stmt, stmt_free)

static inline int bind_index(store_stmt *st, const char *name)
{
	return stmt_backend(st)->index(st, name);
}

static inline void bind_int(store_stmt *st, int i, gint64 v)
{
	stmt_backend(st)->bind_int(st, i, v);
}

static inline void bind_double(store_stmt *st, int i, double v)
{
	stmt_backend(st)->bind_double(st, i, v);
}

static inline void bind_null(store_stmt *st, int i)
{
	stmt_backend(st)->bind_null(st, i);
}

/* NULL binds NULL. */
static inline void bind_text(store_stmt *st, int i, const char *v)
{
	if (v)
		stmt_backend(st)->bind_text(st, i, v);
	else
		bind_null(st, i);
}

static inline void bind_data(store_stmt *st, int i, const void *p, size_t len)
{
	stmt_backend(st)->bind_data(st, i, p, len);
}

/* An id, with 0 meaning NULL (no such row). */
static inline void bind_id(store_stmt *st, int i, gint64 id)
{
	if (id)
		bind_int(st, i, id);
	else
		bind_null(st, i);
}

/* NULL binds NULL. */
static inline void bind_blob(store_stmt *st, int i, GBytes *b)
{
	if (b)
		bind_data(st, i, g_bytes_get_data(b, NULL), g_bytes_get_size(b));
	else
		bind_null(st, i);
}

/* Step: 1 a row, 0 done, -1 error.  s is the statement's store (kept for the callers' shape). */
static inline int step(struct pk_store *s, store_stmt *st, GError **err)
{
	return stmt_backend(st)->step(st, err);
}

static inline void stmt_reset(store_stmt *st)
{
	stmt_backend(st)->reset(st);
}

/* Step a statement that returns nothing, and reset it (bindings too) for the next use. */
static inline int run(struct pk_store *s, store_stmt *st, GError **err)
{
	int rc = step(s, st, err);

	stmt_backend(st)->clear(st);
	return rc < 0 ? -1 : 0;
}

/*
 * Step an INSERT ... RETURNING id: the new row's id in *out, and the
 * statement reset (bindings too) for the next use.
 */
int run_id(struct pk_store *s, store_stmt *st, gint64 *out, GError **err);

static inline bool col_null(store_stmt *st, int i)
{
	return stmt_backend(st)->is_null(st, i);
}

/* 0 for NULL. */
static inline gint64 col_int(store_stmt *st, int i)
{
	return stmt_backend(st)->col_int(st, i);
}

static inline double col_double(store_stmt *st, int i)
{
	return stmt_backend(st)->col_double(st, i);
}

/* Borrowed (see above); NULL for NULL. */
static inline const char *col_str(store_stmt *st, int i)
{
	return stmt_backend(st)->col_str(st, i);
}

/* A copy the caller frees; NULL for NULL. */
static inline char *col_text(store_stmt *st, int i)
{
	return g_strdup(col_str(st, i));
}

/* Borrowed bytes and their length in *len; NULL (and 0) for NULL. */
static inline const void *col_blob(store_stmt *st, int i, size_t *len)
{
	return stmt_backend(st)->col_blob(st, i, len);
}

static inline int col_count(store_stmt *st)
{
	return stmt_backend(st)->col_count(st);
}

/* Rows the store's last INSERT, UPDATE or DELETE changed. */
gint64 store_changes(struct pk_store *s);

/* One fixed statement (BEGIN, a pragma...): no parameters, no rows wanted. */
int exec1(struct pk_store *s, const char *sql, GError **err);

/* The integer a fixed query returns (count(*)); 0 when no row. */
int query_int(struct pk_store *s, const char *sql, gint64 *out, GError **err);

#endif
