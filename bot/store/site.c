/*
 * site.c - what the static site (report/site.h) lists: every tested
 * patch with its newest review, and the files their stored changes
 * name.  Two reads of the whole store, no write.  See store.h.
 */
#include "store/private.h"

#include <string.h>

void pk_store_site_patch_free(struct pk_store_site_patch *p)
{
	if (!p)
		return;
	g_free(p->subject);
	g_free(p->author);
	g_free(p->message_id);
	g_free(p->commit);
	g_free(p->verdict);
	g_free(p->source);
	g_free(p->base_commit);
	g_free(p);
}

int pk_store_site_patches(struct pk_store *store, GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_site_patch_free);
	/* each patch's newest review and how many it has, then what the site shows of it */
	g_autoptr(store_stmt) st = prep(store,
		"SELECT p.id, x.rid, x.n, m.job_id, p.subject, coalesce(p.author_name, p.author), "
		"p.message_id, p.commit_id, t.verdict, s.name, b.tree_commit, p.time, p.number, p.total, "
		"p.version, p.series_id, t.before_boot, t.after_boot, t.before_build, t.after_build FROM (SELECT t.patch_id AS pid, max(r.id) AS rid, count(*) AS n "
		"FROM reviews r JOIN tests t ON t.id = r.test_id GROUP BY t.patch_id) x "
		"JOIN reviews r ON r.id = x.rid JOIN tests t ON t.id = r.test_id "
		"JOIN patches p ON p.id = x.pid LEFT JOIN sources s ON s.id = p.source_id "
		"LEFT JOIN mails m ON m.message_id = p.message_id "
		"LEFT JOIN builds b ON b.id = t.before_build ORDER BY p.id", err);
	int rc;

	if (!st)
		return -1;
	while ((rc = step(store, st, err)) > 0) {
		struct pk_store_site_patch *p = g_new0(struct pk_store_site_patch, 1);

		p->patch_id = col_int(st, 0);
		p->review_id = col_int(st, 1);
		p->reviews = col_int(st, 2);
		p->job_id = col_null(st, 3) ? 0 : col_int(st, 3);
		p->subject = col_text(st, 4);
		p->author = col_text(st, 5);
		p->message_id = col_text(st, 6);
		p->commit = col_text(st, 7);
		p->verdict = col_text(st, 8);
		p->source = col_text(st, 9);
		p->base_commit = col_text(st, 10);
		p->time = col_null(st, 11) ? 0 : col_int(st, 11);
		p->number = (int)col_int(st, 12);
		p->total = (int)col_int(st, 13);
		p->version = (int)col_int(st, 14);
		p->series_id = col_null(st, 15) ? 0 : col_int(st, 15);
		p->before_boot = col_null(st, 16) ? 0 : col_int(st, 16);
		p->after_boot = col_null(st, 17) ? 0 : col_int(st, 17);
		p->before_build = col_null(st, 18) ? 0 : col_int(st, 18);
		p->after_build = col_null(st, 19) ? 0 : col_int(st, 19);
		g_ptr_array_add(rows, p);
	}
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}

void pk_store_site_file_free(struct pk_store_site_file *f)
{
	if (!f)
		return;
	g_free(f->file);
	g_free(f);
}

static int file_pair_order(gconstpointer a, gconstpointer b)
{
	const struct pk_store_site_file *x = *(void *const *)a, *y = *(void *const *)b;
	int c = strcmp(x->file, y->file);

	if (c)
		return c;
	return x->patch_id < y->patch_id ? -1 : x->patch_id > y->patch_id;
}

int pk_store_site_files(struct pk_store *store, GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_site_file_free);
	g_autoptr(GPtrArray) once = NULL;
	/*
	 * The files history --file finds (its three arms), each with the
	 * patches whose changes name it.  Sorted and made unique here: UNION
	 * and ORDER BY over a million changes sort them in a temporary
	 * B-tree on disk, 30 times slower than sorting the rows in memory.
	 */
	g_autoptr(store_stmt) st = prep(store,
		"SELECT file, patch_id FROM findings WHERE file IS NOT NULL "
		"UNION ALL SELECT c.file, t.patch_id FROM console_changes c JOIN tests t ON t.id = c.test_id "
		"WHERE c.file IS NOT NULL UNION ALL SELECT c.file, t.patch_id FROM index_changes c "
		"JOIN tests t ON t.id = c.test_id WHERE c.file IS NOT NULL", err);
	int rc;

	if (!st)
		return -1;
	while ((rc = step(store, st, err)) > 0) {
		struct pk_store_site_file *f = g_new0(struct pk_store_site_file, 1);

		f->file = col_text(st, 0);
		f->patch_id = col_int(st, 1);
		g_ptr_array_add(rows, f);
	}
	if (rc < 0)
		return -1;
	g_ptr_array_sort(rows, file_pair_order);
	once = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_site_file_free);
	for (guint i = 0; i < rows->len; i++) {
		if (once->len && !file_pair_order(&rows->pdata[i], &once->pdata[once->len - 1]))
			continue;
		g_ptr_array_add(once, rows->pdata[i]);
		rows->pdata[i] = NULL;
	}
	*out = g_steal_pointer(&once);
	return 0;
}
