/*
 * lab.c - what the lab hands the store: builds, boots with their consoles,
 * records and printk indexes (stored once and shared, see store.h), and
 * the noise masks learnt from base boots.  See store.h for the contracts.
 */
#include "store/private.h"

#include <string.h>

/* Index sets derived from a derived set: a bound that a corrupt file cannot loop past. */
#define STORE_MAX_SET_DEPTH 32

/* ---- digests ----------------------------------------------------------- */

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
 * statement ins (an INSERT ... RETURNING id: its parameter 1 is the digest,
 * the others bound by the caller); *out is its id.
 */
static int find_or_insert(struct pk_store *s, store_stmt *find, store_stmt *ins,
			  const guint8 d[DIGEST_LEN], gint64 *out, GError **err)
{
	int rc;

	bind_data(find, 1, d, DIGEST_LEN);
	rc = step(s, find, err);
	if (rc > 0)
		*out = col_int(find, 0);
	stmt_reset(find);
	if (rc)
		return rc < 0 ? -1 : 0;
	bind_data(ins, 1, d, DIGEST_LEN);
	return run_id(s, ins, out, err);
}

/* ---- builds ------------------------------------------------------------ */

int pk_store_add_build(struct pk_store *store, gint64 *out_id, const char *tree_commit,
		       const char *base_commit, const char *config_hash, const char *arch,
		       const struct pk_build_result *res, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "INSERT INTO builds (tree_commit, base_commit, "
					  "config_hash, status, seconds, errors, log_path, created, config, arch) "
					  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id", err);
	g_autoptr(GBytes) config = NULL;

	if (!st)
		return -1;
	if (res->config && !(config = store_gzip(res->config, strlen(res->config), err)))
		return -1;
	bind_text(st, 1, tree_commit);
	bind_text(st, 2, base_commit);
	bind_text(st, 3, config_hash);
	bind_text(st, 4, res->ok ? "ok" : "failed");
	bind_double(st, 5, res->seconds);
	bind_text(st, 6, res->errors);
	bind_text(st, 7, res->log_path);
	bind_int(st, 8, unix_now());
	bind_blob(st, 9, config);
	bind_text(st, 10, arch);
	if (run_id(store, st, out_id, err) < 0)
		return -1;
	return 0;
}

/* One id from a query with text parameters ?1 and ?2: 1 found, 0 not. */
static int lookup2(struct pk_store *s, const char *sql, const char *a, const char *b,
		   gint64 *out, GError **err)
{
	g_autoptr(store_stmt) st = prep(s, sql, err);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, a);
	bind_text(st, 2, b);
	if ((rc = step(s, st, err)) > 0)
		*out = col_int(st, 0);
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
	g_autoptr(store_stmt) st = prep(store, "SELECT id FROM boots WHERE build_id = ?1 AND "
					  "status = 'ok' ORDER BY id", err);
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, build_id);
	while ((rc = step(store, st, err)) > 0) {
		gint64 id = col_int(st, 0);

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
	g_autoptr(store_stmt) del = NULL;
	g_autoptr(store_stmt) ins = NULL;
	g_autoptr(store_stmt) upd = NULL;
	int rc = 0;

	if (tx_begin(store, err) < 0)
		return -1;
	if (!(del = prep(store, "DELETE FROM noise_keys WHERE build_id = ?1", err)) ||
	    !(ins = prep(store, "INSERT INTO noise_keys (build_id, key) VALUES (?1, ?2) "
			       "ON CONFLICT DO NOTHING", err)) ||
	    !(upd = prep(store, "UPDATE builds SET noise_boots = ?2 WHERE id = ?1", err)))
		rc = -1;
	if (!rc) {
		bind_int(del, 1, build_id);
		rc = run(store, del, err);
	}
	for (size_t i = 0; !rc && keys && keys[i]; i++) {
		bind_int(ins, 1, build_id);
		bind_text(ins, 2, keys[i]);
		rc = run(store, ins, err);
	}
	if (!rc) {
		bind_int(upd, 1, build_id);
		bind_int(upd, 2, (int)MAX(boots, 1));
		rc = run(store, upd, err);
		if (!rc && !store_changes(store))
			rc = pk_error(err, PK_ERROR_INPUT, "%s: no build %" G_GINT64_FORMAT,
				      store->path, build_id);
	}
	return tx_end(store, rc, err);
}

int pk_store_add_noise(struct pk_store *store, gint64 build_id, const char *const *keys,
		       unsigned boots, GError **err)
{
	g_autoptr(store_stmt) ins = NULL;
	g_autoptr(store_stmt) upd = NULL;
	bool has_mask = false;
	int rc = 0;

	if (tx_begin(store, err) < 0)
		return -1;
	/* only a build that has a mask grows it: an after side's boot is not a mask of one */
	if (!(upd = prep(store, "UPDATE builds SET noise_boots = noise_boots + ?2 "
			 "WHERE id = ?1 AND noise_boots > 0", err)) ||
	    !(ins = prep(store, "INSERT INTO noise_keys (build_id, key) VALUES (?1, ?2) "
			       "ON CONFLICT DO NOTHING", err)))
		rc = -1;
	if (!rc) {
		bind_int(upd, 1, build_id);
		bind_int(upd, 2, (int)boots);
		rc = run(store, upd, err);
		has_mask = !rc && store_changes(store) > 0;
	}
	for (size_t i = 0; !rc && has_mask && keys && keys[i]; i++) {
		bind_int(ins, 1, build_id);
		bind_text(ins, 2, keys[i]);
		rc = run(store, ins, err);
	}
	return tx_end(store, rc, err);
}

int pk_store_get_noise(struct pk_store *store, gint64 build_id, char ***out, GError **err)
{
	g_autoptr(store_stmt) b = prep(store, "SELECT noise_boots FROM builds WHERE id = ?1", err);
	g_autoptr(store_stmt) st = NULL;
	g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
	int rc;

	if (!b)
		return -1;
	bind_int(b, 1, build_id);
	if ((rc = step(store, b, err)) <= 0)
		return rc;
	if (col_int(b, 0) == 0)
		return 0;   /* no mask was learnt; an empty one is a mask */
	st = prep(store, "SELECT key FROM noise_keys WHERE build_id = ?1 ORDER BY key", err);
	if (!st)
		return -1;
	bind_int(st, 1, build_id);
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
	g_autoptr(store_stmt) head = prep(s, "SELECT parent_id, count FROM index_sets WHERE id = ?1", err);
	g_autoptr(store_stmt) items = NULL;
	g_autoptr(GArray) parent = NULL;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	gint64 parent_id, count;
	int rc;

	if (!head)
		return -1;
	if (depth > STORE_MAX_SET_DEPTH)
		return pk_error(err, PK_ERROR_INPUT, "%s: index set %" G_GINT64_FORMAT
				" derives from too many sets", s->path, set_id);
	bind_int(head, 1, set_id);
	if ((rc = step(s, head, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no index set %" G_GINT64_FORMAT,
					      s->path, set_id);
	parent_id = col_int(head, 0);
	count = col_int(head, 1);
	if (parent_id && load_set_ids(s, parent_id, depth + 1, &parent, err) < 0)
		return -1;
	items = prep(s, "SELECT entry_id, parent_from, parent_to FROM index_set_items "
		     "WHERE set_id = ?1 ORDER BY seq", err);
	if (!items)
		return -1;
	bind_int(items, 1, set_id);
	while ((rc = step(s, items, err)) > 0) {
		gint64 entry = col_int(items, 0);
		gint64 from = col_int(items, 1), to = col_int(items, 2);

		if (!col_null(items, 0)) {
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

/* Add the set of entry ids, as a delta from parent (its ids, or NULL) when that is smaller. */
static int store_set(struct pk_store *s, gint64 *out, const GArray *ids, const guint8 d[DIGEST_LEN],
		     gint64 parent_id, const GArray *parent, GError **err)
{
	g_autoptr(store_stmt) head = NULL;
	g_autoptr(store_stmt) ins = NULL;
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
	head = prep(s, "INSERT INTO index_sets (digest, parent_id, count) VALUES (?1, ?2, ?3) RETURNING id", err);
	ins = prep(s, "INSERT INTO index_set_items (set_id, seq, entry_id, parent_from, parent_to) "
		   "VALUES (?1, ?2, ?3, ?4, ?5)", err);
	if (!head || !ins)
		return -1;
	bind_data(head, 1, d, DIGEST_LEN);
	bind_id(head, 2, parent_id);
	bind_int(head, 3, ids->len);
	if (run_id(s, head, &set_id, err) < 0)
		return -1;
	for (guint i = 0; i < items->len; i++) {
		const struct set_item *it = &g_array_index(items, struct set_item, i);

		bind_int(ins, 1, set_id);
		bind_int(ins, 2, i);
		if (it->entry) {
			bind_int(ins, 3, it->entry);
		} else {
			bind_int(ins, 4, it->from);
			bind_int(ins, 5, it->to);
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

/* The cache for set_id, reading the set and its entries' digests when it is another. */
static int base_cache_get(struct pk_store *s, gint64 set_id, struct store_base_cache **out, GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	struct store_base_cache *c;
	const void *blob;
	size_t len;

	if (s->base && s->base->set_id == set_id) {
		*out = s->base;
		return 0;
	}
	c = g_new0(struct store_base_cache, 1);
	c->set_id = set_id;
	c->by_digest = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
					     (GDestroyNotify)g_bytes_unref, g_free);
	if (load_set_ids(s, set_id, 0, &c->ids, err) < 0 ||
	    !(st = prep(s, "SELECT digest FROM index_entries WHERE id = ?1", err))) {
		if (!c->ids)
			c->ids = g_array_new(FALSE, FALSE, sizeof(gint64));
		store_base_cache_free(c);
		return -1;
	}
	for (guint i = 0; i < c->ids->len; i++) {
		gint64 id = g_array_index(c->ids, gint64, i);

		bind_int(st, 1, id);
		if (step(s, st, err) <= 0) {
			store_base_cache_free(c);
			return pk_error(err, PK_ERROR_INPUT, "%s: index set %" G_GINT64_FORMAT
					" names a missing entry", s->path, set_id);
		}
		blob = col_blob(st, 0, &len);
		g_hash_table_insert(c->by_digest, g_bytes_new(blob, len), g_memdup2(&id, sizeof(id)));
		stmt_reset(st);
	}
	store_base_cache_free(s->base);
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
	g_autoptr(store_stmt) st = prep(s,
		"SELECT o.index_set_id FROM builds b JOIN builds base ON base.tree_commit = b.base_commit "
		"AND base.config_hash = b.config_hash AND base.id <> b.id "
		"JOIN boots o ON o.build_id = base.id AND o.index_set_id IS NOT NULL "
		"WHERE b.id = ?1 AND b.base_commit <> b.tree_commit ORDER BY base.id DESC, o.id DESC LIMIT 1", err);
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, build_id);
	if ((rc = step(s, st, err)) < 0)
		return -1;
	*out = rc ? col_int(st, 0) : 0;
	return 0;
}

/* The id of the set whose digest is d: 1 found, 0 not. */
static int find_set(struct pk_store *s, const guint8 d[DIGEST_LEN], gint64 *out, GError **err)
{
	g_autoptr(store_stmt) st = prep(s, "SELECT id FROM index_sets WHERE digest = ?1", err);
	int rc;

	if (!st)
		return -1;
	bind_data(st, 1, d, DIGEST_LEN);
	if ((rc = step(s, st, err)) > 0)
		*out = col_int(st, 0);
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
	g_autoptr(store_stmt) find = NULL;
	g_autoptr(store_stmt) ins = NULL;
	g_autoptr(GChecksum) whole = g_checksum_new(G_CHECKSUM_SHA256);
	g_autoptr(GChecksum) one = g_checksum_new(G_CHECKSUM_SHA256);
	g_autofree guint8 *digests = g_malloc((gsize)index->len * DIGEST_LEN + 1);
	g_autoptr(GArray) ids = g_array_sized_new(FALSE, FALSE, sizeof(gint64), index->len);
	struct store_base_cache *base = NULL;
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
		   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id", err);
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
		bind_int(ins, 2, e->level);
		bind_int(ins, 3, e->cont);
		bind_text(ins, 4, e->file ? e->file : "");
		bind_int(ins, 5, e->line);
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
	g_autoptr(store_stmt) find = prep(s, "SELECT id FROM record_lines WHERE digest = ?1", err);
	g_autoptr(store_stmt) line = prep(s, "INSERT INTO record_lines (digest, level, facility, "
					    "cont, caller, text, dict) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id", err);
	g_autoptr(store_stmt) rec = prep(s, "INSERT INTO boot_records (boot_id, pos, line_id, "
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
		bind_int(line, 2, r->level);
		bind_int(line, 3, r->facility);
		bind_int(line, 4, r->cont);
		bind_text(line, 5, r->caller);
		bind_text(line, 6, r->text ? r->text : "");
		bind_blob(line, 7, dict);
		if (find_or_insert(s, find, line, d, &line_id, err) < 0)
			return -1;
		bind_int(rec, 1, boot_id);
		bind_int(rec, 2, i);
		bind_int(rec, 3, line_id);
		bind_int(rec, 4, (gint64)r->seq);
		bind_int(rec, 5, (gint64)r->ts_usec);
		if (run(s, rec, err) < 0)
			return -1;
	}
	return 0;
}

static int insert_boot(struct pk_store *s, gint64 *out_id, gint64 build_id,
		       const struct pk_boot_result *res, GError **err)
{
	const struct pk_capture *cap = res->capture;
	g_autoptr(store_stmt) st = NULL;
	g_autoptr(store_stmt) upd = NULL;
	g_autoptr(GBytes) console = NULL;
	gint64 boot_id, set_id = 0;

	if (res->console && !(console = store_gzip(res->console, strlen(res->console), err)))
		return -1;
	st = prep(s, "INSERT INTO boots (build_id, status, seconds, accel, cmdline, console, "
		  "console_size, detail, record_count, lost, complete, problems, created) VALUES "
		  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING id", err);
	if (!st)
		return -1;
	bind_int(st, 1, build_id);
	bind_text(st, 2, pk_boot_status_name(res->status));
	bind_double(st, 3, res->seconds);
	bind_text(st, 4, res->accel);
	bind_text(st, 5, res->cmdline);
	bind_blob(st, 6, console);
	if (res->console)
		bind_int(st, 7, (gint64)strlen(res->console));
	bind_text(st, 8, res->detail);
	bind_int(st, 9, cap ? (int)cap->records->len : 0);
	bind_int(st, 10, cap ? (int)cap->lost : 0);
	bind_int(st, 11, cap && cap->complete);
	bind_text(st, 12, cap && cap->problems->len ? cap->problems->str : NULL);
	bind_int(st, 13, unix_now());
	if (run_id(s, st, &boot_id, err) < 0)
		return -1;
	if (cap) {
		if (store_records(s, boot_id, cap->records, err) < 0 ||
		    store_index(s, &set_id, build_id, cap->index, err) < 0)
			return -1;
		upd = prep(s, "UPDATE boots SET index_set_id = ?2 WHERE id = ?1", err);
		if (!upd)
			return -1;
		bind_int(upd, 1, boot_id);
		bind_int(upd, 2, set_id);
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
	g_autoptr(store_stmt) st = prep(s,
		"SELECT r.seq, r.ts_usec, l.level, l.facility, l.cont, l.caller, l.text, l.dict "
		"FROM boot_records r JOIN record_lines l ON l.id = r.line_id "
		"WHERE r.boot_id = ?1 ORDER BY r.pos", err);
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, boot_id);
	while ((rc = step(s, st, err)) > 0) {
		struct pk_record *r = g_new0(struct pk_record, 1);
		size_t dict_len;
		const char *dict = col_blob(st, 7, &dict_len);

		r->seq = (uint64_t)col_int(st, 0);
		r->ts_usec = (uint64_t)col_int(st, 1);
		r->level = col_int(st, 2);
		r->facility = col_int(st, 3);
		r->cont = col_int(st, 4) != 0;
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
	g_autoptr(store_stmt) st = NULL;

	if (load_set_ids(s, set_id, 0, &ids, err) < 0)
		return -1;
	st = prep(s, "SELECT level, cont, file, line, func, format FROM index_entries WHERE id = ?1", err);
	if (!st)
		return -1;
	for (guint i = 0; i < ids->len; i++) {
		struct pk_index_entry *e;
		int rc;

		bind_int(st, 1, g_array_index(ids, gint64, i));
		if ((rc = step(s, st, err)) <= 0)
			return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: index set %"
						      G_GINT64_FORMAT " names a missing entry",
						      s->path, set_id);
		e = g_new0(struct pk_index_entry, 1);
		e->level = col_int(st, 0);
		e->cont = col_int(st, 1) != 0;
		e->file = col_text(st, 2);
		e->line = col_int(st, 3);
		e->func = col_text(st, 4);
		e->format = col_text(st, 5);
		g_ptr_array_add(out, e);
		stmt_reset(st);
	}
	return 0;
}

int pk_store_load_capture(struct pk_store *store, gint64 boot_id,
			  struct pk_capture **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT index_set_id, lost, complete, problems "
					  "FROM boots WHERE id = ?1", err);
	g_autoptr(pk_capture) cap = g_new0(struct pk_capture, 1);
	gint64 set_id;
	int rc;

	cap->records = g_ptr_array_new_with_free_func((GDestroyNotify)pk_record_free);
	cap->index = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	cap->problems = g_string_new(NULL);
	if (!st)
		return -1;
	bind_int(st, 1, boot_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no boot %" G_GINT64_FORMAT,
					      store->path, boot_id);
	set_id = col_int(st, 0);
	cap->lost = (unsigned)col_int(st, 1);
	cap->complete = col_int(st, 2) != 0;
	if (!col_null(st, 3))
		g_string_append(cap->problems, col_str(st, 3));
	if (load_records(store, boot_id, cap->records, err) < 0 ||
	    (set_id && load_index(store, set_id, cap->index, err) < 0))
		return -1;
	*out = g_steal_pointer(&cap);
	return 0;
}

int pk_store_build_config(struct pk_store *store, gint64 build_id, char **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT config FROM builds WHERE id = ?1", err);
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, build_id);
	if ((rc = step(store, st, err)) <= 0 || col_null(st, 0))
		return rc < 0 ? -1 : 0;
	return (*out = col_gunzip(st, 0, err)) ? 1 : -1;
}

int pk_store_boot_console(struct pk_store *store, gint64 boot_id, char **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT console FROM boots WHERE id = ?1", err);
	char *text;
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, boot_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no boot %" G_GINT64_FORMAT,
					      store->path, boot_id);
	if (col_null(st, 0))
		text = g_strdup("");
	else if (!(text = col_gunzip(st, 0, err)))
		return -1;
	*out = text;
	return 0;
}
