/*
 * sql.c - what the statement layer (sql.h) does the same on every
 * backend: preparing through the store's backend, ids from RETURNING,
 * and the one-shot helpers.
 */
#include "store/private.h"

store_stmt *prep(struct pk_store *s, const char *sql, GError **err)
{
	return s->be->prep(s, sql, err);
}

void stmt_free(store_stmt *st)
{
	if (st)
		st->be->free(st);
}

int run_id(struct pk_store *s, store_stmt *st, gint64 *out, GError **err)
{
	int rc = step(s, st, err);
	gint64 id = rc > 0 ? col_int(st, 0) : 0;

	/*
	 * Stepped to the end: SQLite commits an autocommit statement there,
	 * and a full disk shows up only then (a reset would swallow it).
	 */
	if (rc > 0 && (rc = step(s, st, err)) > 0)
		rc = pk_error(err, PK_ERROR_FAILED, "%s: an insert returned more than one id", s->path);
	else if (rc == 0 && !id)   /* RETURNING always gives the row; none is a bug of ours */
		rc = pk_error(err, PK_ERROR_FAILED, "%s: an insert returned no id", s->path);
	stmt_backend(st)->clear(st);
	if (rc < 0)
		return -1;
	*out = id;
	return 0;
}

gint64 store_changes(struct pk_store *s)
{
	return s->be->changes(s);
}

int exec1(struct pk_store *s, const char *sql, GError **err)
{
	g_autoptr(store_stmt) st = prep(s, sql, err);

	if (!st)
		return -1;
	return step(s, st, err) < 0 ? -1 : 0;
}

int query_int(struct pk_store *s, const char *sql, gint64 *out, GError **err)
{
	g_autoptr(store_stmt) st = prep(s, sql, err);
	int rc;

	if (!st)
		return -1;
	rc = step(s, st, err);
	if (rc < 0)
		return -1;
	*out = rc ? col_int(st, 0) : 0;
	return 0;
}
