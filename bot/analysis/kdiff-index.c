/*
 * kdiff-index.c - the printk index diff: what the kernel can print,
 * before and after (struct pk_index_change in kdiff.h).
 */
#include "analysis/kdiff-private.h"

#include <stdlib.h>
#include <string.h>

#define INDEX_LINE_SLACK 20 /* lines a changed index entry may move beyond the patch's shift */

void pk_index_change_free(gpointer p)
{
	struct pk_index_change *c = p;

	g_free(c->old_format);
	g_free(c->new_format);
	pk_origin_clear(&c->origin);
	g_free(c);
}

static char *entry_key(const struct pk_index_entry *e)
{
	return g_strdup_printf("%s\x1f%s\x1f%s", e->file, e->func, e->format);
}

static char *entry_func_key(const struct pk_index_entry *e)
{
	return g_strdup_printf("%s\x1f%s", e->file, e->func);
}

static void add_index_change(GPtrArray *out, enum pk_change_kind kind, const struct pk_index_entry *o,
			     const struct pk_index_entry *n)
{
	struct pk_index_change *c = g_new0(struct pk_index_change, 1);

	c->kind = kind;
	c->old_level = o ? o->level : -1;
	c->new_level = n ? n->level : -1;
	c->old_format = o ? g_strdup(o->format) : NULL;
	c->new_format = n ? g_strdup(n->format) : NULL;
	pk_origin_set(&c->origin, n ? n : o);
	g_ptr_array_add(out, c);
}

/* How far the patch moved lines near this one: the shift of the nearest unchanged entry. */
struct shift {
	int line, by;
};

static int shift_at(GHashTable *shifts, const struct pk_index_entry *e)
{
	GArray *list = g_hash_table_lookup(shifts, e->file);
	int best = G_MAXINT, by = 0;

	for (guint i = 0; list && i < list->len; i++) {
		const struct shift *s = &g_array_index(list, struct shift, i);

		if (abs(s->line - e->line) < best) {
			best = abs(s->line - e->line);
			by = s->by;
		}
	}
	return by;
}

static void shift_note(GHashTable *shifts, const struct pk_index_entry *o, const struct pk_index_entry *n)
{
	GArray *list = g_hash_table_lookup(shifts, o->file);
	struct shift s = { o->line, n->line - o->line };

	if (!list)
		g_hash_table_insert(shifts, o->file, list = g_array_new(FALSE, FALSE, sizeof(struct shift)));
	g_array_append_val(list, s);
}

/*
 * Pair the entries of both indexes with the same file, function and
 * format, whatever their lines (a patch shifts them): an entry that only
 * moved is no change, one whose level or continuation flag differs is
 * level-changed.  What is not paired is returned in olds and news.
 */
static void index_pair_same(GPtrArray *out, const GPtrArray *before, const GPtrArray *after,
			    GPtrArray *olds, GPtrArray *news, GHashTable *shifts)
{
	g_autoptr(GHashTable) by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
							     (GDestroyNotify)g_ptr_array_unref);
	g_autoptr(GHashTable) paired = g_hash_table_new(NULL, NULL);

	for (guint i = 0; i < after->len; i++) {
		char *key = entry_key(after->pdata[i]);
		GPtrArray *list = g_hash_table_lookup(by_key, key);

		if (!list)
			g_hash_table_insert(by_key, g_strdup(key), list = g_ptr_array_new());
		g_ptr_array_add(list, after->pdata[i]);
		g_free(key);
	}
	for (guint i = 0; i < before->len; i++) {
		const struct pk_index_entry *o = before->pdata[i], *n = NULL;
		g_autofree char *key = entry_key(o);
		GPtrArray *list = g_hash_table_lookup(by_key, key);
		guint pick = 0;

		for (guint j = 0; list && j < list->len && !n; j++) {
			const struct pk_index_entry *e = list->pdata[j];

			if (e->level == o->level && e->cont == o->cont)
				n = e, pick = j;
		}
		if (!n && list && list->len)
			n = list->pdata[0];
		if (!n) {
			g_ptr_array_add(olds, (gpointer)o);
			continue;
		}
		g_ptr_array_remove_index(list, pick);
		g_hash_table_add(paired, (gpointer)n);
		shift_note(shifts, o, n);
		if (n->level != o->level || n->cont != o->cont)
			add_index_change(out, PK_CHANGE_LEVEL_CHANGED, o, n);
	}
	for (guint i = 0; i < after->len; i++)
		if (!g_hash_table_contains(paired, after->pdata[i]))
			g_ptr_array_add(news, after->pdata[i]);
}

struct index_candidate {
	int distance;
	guint o, n;
};

static int index_candidate_compare(const void *pa, const void *pb)
{
	const struct index_candidate *a = pa, *b = pb;

	if (a->distance != b->distance)
		return a->distance < b->distance ? -1 : 1;
	if (a->o != b->o)
		return a->o < b->o ? -1 : 1;
	return a->n < b->n ? -1 : a->n > b->n;
}

/*
 * Leftovers in the same file and function, at about the same line once
 * the patch's shift is accounted for, are one call whose format changed;
 * the closest pairs first.  The rest were added or removed.
 */
static void index_pair_near(GPtrArray *out, GPtrArray *olds, GPtrArray *news, GHashTable *shifts)
{
	g_autoptr(GArray) cands = g_array_new(FALSE, FALSE, sizeof(struct index_candidate));
	g_autoptr(GHashTable) by_func = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
							      (GDestroyNotify)g_array_unref);
	g_autofree bool *old_used = g_new0(bool, olds->len + 1);
	g_autofree bool *new_used = g_new0(bool, news->len + 1);

	/* the added entries by file and function, as indexes into news */
	for (guint j = 0; j < news->len; j++) {
		char *key = entry_func_key(news->pdata[j]);
		GArray *list = g_hash_table_lookup(by_func, key);

		if (!list)
			g_hash_table_insert(by_func, g_strdup(key), list = g_array_new(FALSE, FALSE, sizeof(guint)));
		g_array_append_val(list, j);
		g_free(key);
	}
	for (guint i = 0; i < olds->len; i++) {
		const struct pk_index_entry *o = olds->pdata[i];
		g_autofree char *key = entry_func_key(o);
		GArray *list = g_hash_table_lookup(by_func, key);
		int expect = o->line + shift_at(shifts, o);

		for (guint k = 0; list && k < list->len; k++) {
			guint j = g_array_index(list, guint, k);
			const struct pk_index_entry *n = news->pdata[j];
			struct index_candidate c = { abs(n->line - expect), i, j };

			if (c.distance <= INDEX_LINE_SLACK)
				g_array_append_val(cands, c);
		}
	}
	g_array_sort(cands, index_candidate_compare);
	for (guint k = 0; k < cands->len; k++) {
		const struct index_candidate *c = &g_array_index(cands, struct index_candidate, k);

		if (old_used[c->o] || new_used[c->n])
			continue;
		old_used[c->o] = new_used[c->n] = true;
		add_index_change(out, PK_CHANGE_TEXT_CHANGED, olds->pdata[c->o], news->pdata[c->n]);
	}
	for (guint i = 0; i < olds->len; i++)
		if (!old_used[i])
			add_index_change(out, PK_CHANGE_MESSAGE_REMOVED, olds->pdata[i], NULL);
	for (guint j = 0; j < news->len; j++)
		if (!new_used[j])
			add_index_change(out, PK_CHANGE_MESSAGE_ADDED, NULL, news->pdata[j]);
}

static int index_change_compare(gconstpointer pa, gconstpointer pb)
{
	const struct pk_index_change *a = *(const struct pk_index_change *const *)pa;
	const struct pk_index_change *b = *(const struct pk_index_change *const *)pb;
	int c = strcmp(a->origin.file, b->origin.file);

	if (c)
		return c;
	if (a->origin.line != b->origin.line)
		return a->origin.line < b->origin.line ? -1 : 1;
	/* by name, as when kinds were strings: the order is part of the output */
	return strcmp(pk_change_kind_name(a->kind), pk_change_kind_name(b->kind));
}

void pk_kdiff_index(GPtrArray *out, const GPtrArray *before, const GPtrArray *after)
{
	g_autoptr(GPtrArray) olds = g_ptr_array_new();
	g_autoptr(GPtrArray) news = g_ptr_array_new();
	g_autoptr(GHashTable) shifts = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
							     (GDestroyNotify)g_array_unref);

	index_pair_same(out, before, after, olds, news, shifts);
	index_pair_near(out, olds, news, shifts);
	g_ptr_array_sort(out, index_change_compare);
}

/* Whether index change ic explains boot-log change c (kdiff.h). */
static bool explains(const struct pk_index_change *ic, const struct pk_change *c)
{
	bool kind = ic->kind == c->kind ||
		    (ic->kind == PK_CHANGE_TEXT_CHANGED && c->kind == PK_CHANGE_PREFIX_CHANGED);
	const char *format = c->kind == PK_CHANGE_MESSAGE_REMOVED ? ic->old_format : ic->new_format;

	return kind && c->origin.file && ic->origin.file && !strcmp(c->origin.file, ic->origin.file) &&
	       c->origin.line == ic->origin.line && c->origin.format && format &&
	       !strcmp(c->origin.format, format);
}

bool pk_kdiff_explained_by_index(const struct pk_kdiff *d)
{
	if (!d || !d->changes->len)
		return false;
	for (guint i = 0; i < d->changes->len; i++) {
		const struct pk_change *c = d->changes->pdata[i];
		bool found = false;

		for (guint j = 0; j < d->index_changes->len && !found; j++)
			found = explains(d->index_changes->pdata[j], c);
		if (!found)
			return false;
	}
	return true;
}
