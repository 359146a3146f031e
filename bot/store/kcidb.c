/*
 * kcidb.c - what a KCIDB export (report/kcidb.h) reads of a stored
 * review: its test, patch and series, and the builds and boots it
 * compared (store.h, "KCIDB").
 */
#include "store/private.h"

#include <string.h>

static void build_clear(struct pk_store_kcidb_build *b)
{
	g_free(b->tree_commit);
	g_free(b->config_hash);
	g_free(b->errors);
	g_free(b->log_path);
}

static void boot_clear(struct pk_store_kcidb_boot *b)
{
	g_free(b->status);
	g_free(b->accel);
	g_free(b->detail);
}

static void series_patch_free(gpointer p)
{
	struct pk_store_kcidb_patch *sp = p;

	g_free(sp->message_id);
	g_free(sp->raw);
	g_free(sp);
}

void pk_store_kcidb_free(struct pk_store_kcidb *k)
{
	if (!k)
		return;
	g_free(k->model_json);
	g_free(k->verdict);
	g_free(k->reason);
	g_free(k->message_id);
	g_free(k->subject);
	g_free(k->commit_id);
	g_free(k->cover_message_id);
	g_free(k->cover_subject);
	g_free(k->first_model);
	if (k->patches)
		g_ptr_array_unref(k->patches);
	build_clear(&k->before_build);
	build_clear(&k->after_build);
	boot_clear(&k->before_boot);
	boot_clear(&k->after_boot);
	g_free(k);
}

static int read_build(struct pk_store *s, gint64 id, struct pk_store_kcidb_build *out, GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	int rc;

	if (!id)
		return 0;
	st = prep(s, "SELECT tree_commit, config_hash, status, seconds, errors, log_path, created "
		     "FROM builds WHERE id = ?1", err);
	if (!st)
		return -1;
	bind_int(st, 1, id);
	if ((rc = step(s, st, err)) <= 0)
		return rc;
	out->id = id;
	out->tree_commit = col_text(st, 0);
	out->config_hash = col_text(st, 1);
	out->ok = !g_strcmp0(col_str(st, 2), "ok");
	out->seconds = col_null(st, 3) ? -1 : col_double(st, 3);
	out->errors = col_text(st, 4);
	out->log_path = col_text(st, 5);
	out->created = col_int(st, 6);
	return 0;
}

static int read_boot(struct pk_store *s, gint64 id, struct pk_store_kcidb_boot *out, GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	int rc;

	if (!id)
		return 0;
	st = prep(s, "SELECT status, seconds, accel, detail, created FROM boots WHERE id = ?1", err);
	if (!st)
		return -1;
	bind_int(st, 1, id);
	if ((rc = step(s, st, err)) <= 0)
		return rc;
	out->id = id;
	out->status = col_text(st, 0);
	out->seconds = col_null(st, 1) ? -1 : col_double(st, 1);
	out->accel = col_text(st, 2);
	out->detail = col_text(st, 3);
	out->created = col_int(st, 4);
	return 0;
}

/* The patches of the review's series in order (the patch alone without one), each raw. */
static int read_patches(struct pk_store *s, struct pk_store_kcidb *k, GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	int rc;

	k->patches = g_ptr_array_new_with_free_func(series_patch_free);
	st = k->series_id
		? prep(s, "SELECT id, number, message_id FROM patches WHERE series_id = ?1 ORDER BY number, id", err)
		: prep(s, "SELECT id, number, message_id FROM patches WHERE id = ?1", err);
	if (!st)
		return -1;
	bind_int(st, 1, k->series_id ? k->series_id : k->patch_id);
	while ((rc = step(s, st, err)) > 0) {
		struct pk_store_kcidb_patch *p = g_new0(struct pk_store_kcidb_patch, 1);

		p->patch_id = col_int(st, 0);
		p->number = (int)col_int(st, 1);
		p->message_id = col_text(st, 2);
		g_ptr_array_add(k->patches, p);
	}
	if (rc < 0)
		return -1;
	if (k->series_id) {
		g_autoptr(store_stmt) first = prep(s, "SELECT r.model FROM patches p JOIN tests t ON t.patch_id = p.id "
					       "JOIN reviews r ON r.test_id = t.id WHERE p.series_id = ?1 "
					       "ORDER BY p.number, r.id LIMIT 1", err);

		if (!first)
			return -1;
		bind_int(first, 1, k->series_id);
		if ((rc = step(s, first, err)) < 0)
			return -1;
		if (rc)
			k->first_model = col_text(first, 0);
	}
	for (guint i = 0; i < k->patches->len; i++) {
		struct pk_store_kcidb_patch *p = k->patches->pdata[i];
		g_autoptr(GError) e = NULL;

		/* a patch kept by reference only (raw_ref) has no text here: no hash for it */
		if (pk_store_patch_raw(s, p->patch_id, &p->raw, &e) < 0 && !g_error_matches(e, PK_ERROR, PK_ERROR_INPUT)) {
			g_propagate_error(err, g_steal_pointer(&e));
			return -1;
		}
	}
	return 0;
}

int pk_store_kcidb_review(struct pk_store *store, gint64 review_id, struct pk_store_kcidb **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store,
		"SELECT r.model, r.created, t.id, t.verdict, t.reason, t.seconds, t.created, "
		"t.before_build, t.after_build, t.before_boot, t.after_boot, "
		"p.id, p.message_id, p.subject, p.commit_id, p.number, p.total, p.version, "
		"s.id, s.cover_message_id, s.cover_subject "
		"FROM reviews r JOIN tests t ON t.id = r.test_id JOIN patches p ON p.id = t.patch_id "
		"LEFT JOIN series s ON s.id = p.series_id WHERE r.id = ?1", err);
	struct pk_store_kcidb *k;
	gint64 bb, ab, bt, at;
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, review_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no review %" G_GINT64_FORMAT " of a test",
					      store->path, review_id);
	k = g_new0(struct pk_store_kcidb, 1);
	k->review_id = review_id;
	k->model_json = col_text(st, 0);
	k->review_created = col_int(st, 1);
	k->test_id = col_int(st, 2);
	k->verdict = col_text(st, 3);
	k->reason = col_text(st, 4);
	k->seconds = col_null(st, 5) ? 0 : col_double(st, 5);
	k->test_created = col_int(st, 6);
	bb = col_null(st, 7) ? 0 : col_int(st, 7);
	ab = col_null(st, 8) ? 0 : col_int(st, 8);
	bt = col_null(st, 9) ? 0 : col_int(st, 9);
	at = col_null(st, 10) ? 0 : col_int(st, 10);
	k->patch_id = col_int(st, 11);
	k->message_id = col_text(st, 12);
	k->subject = col_text(st, 13);
	k->commit_id = col_text(st, 14);
	k->number = (int)col_int(st, 15);
	k->total = (int)col_int(st, 16);
	k->version = (int)col_int(st, 17);
	k->series_id = col_null(st, 18) ? 0 : col_int(st, 18);
	k->cover_message_id = col_text(st, 19);
	k->cover_subject = col_text(st, 20);
	g_clear_pointer(&st, stmt_free);
	if (read_build(store, bb, &k->before_build, err) < 0 || read_build(store, ab, &k->after_build, err) < 0 ||
	    read_boot(store, bt, &k->before_boot, err) < 0 || read_boot(store, at, &k->after_boot, err) < 0 ||
	    read_patches(store, k, err) < 0) {
		pk_store_kcidb_free(k);
		return -1;
	}
	*out = k;
	return 0;
}

int pk_store_review_of_test(struct pk_store *store, gint64 test_id, gint64 patch_id, gint64 *out_review_id,
			    GError **err)
{
	g_autoptr(store_stmt) st = test_id
		? prep(store, "SELECT id FROM reviews WHERE test_id = ?1 ORDER BY id DESC LIMIT 1", err)
		: prep(store, "SELECT r.id FROM reviews r JOIN tests t ON t.id = r.test_id WHERE t.patch_id = ?1 "
			      "ORDER BY r.id DESC LIMIT 1", err);
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, test_id ? test_id : patch_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out_review_id = col_int(st, 0);
	return 1;
}

int pk_store_review_last(struct pk_store *store, gint64 *out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT COALESCE(MAX(id), 0) FROM reviews", err);

	if (!st || step(store, st, err) < 0)
		return -1;
	*out = col_int(st, 0);
	return 0;
}

int pk_store_reviews_after(struct pk_store *store, gint64 after, GArray **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT r.id FROM reviews r WHERE r.id > ?1 AND r.test_id IS NOT NULL "
					"ORDER BY r.id", err);
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, after);
	while ((rc = step(store, st, err)) > 0) {
		gint64 id = col_int(st, 0);

		g_array_append_val(ids, id);
	}
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&ids);
	return 0;
}
