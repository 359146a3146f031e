/* range-bisect.c - the first commit of a range that changed each message (see range-bisect.h). */
#include "pipeline/range-bisect.h"
#include "pipeline/private.h"

#include <string.h>

#include "lab/repo.h"
#include "store/store.h"
#include "base/util.h"

static void tested_free(struct pk_bisect_tested *t)
{
	if (!t)
		return;
	pk_test_side_clear(&t->side);
	if (t->counts)
		g_hash_table_unref(t->counts);
	g_free(t);
}

static void target_free(gpointer p)
{
	struct pk_bisect_target *t = p;

	g_free(t->what);
	if (t->keys)
		g_ptr_array_unref(t->keys);
	g_free(t->base_profile);
	pk_bisect_result_clear(&t->result);
	g_free(t);
}

/* ---------------------------------------------------------------- profiles */

/*
 * Profile keys: a record as "R<level>|<normalised text>" and, for the
 * records of a change spanning several lines (whose levels the change
 * does not keep), "R*|<text>"; a printk index entry as
 * "I<level>|file|func|format".
 */
static char *record_key(int level, const char *text)
{
	g_autofree char *norm = pk_kdiff_normalise(text);

	return level == G_MININT ? g_strconcat("R*|", norm, NULL) : g_strdup_printf("R%d|%s", level, norm);
}

static char *index_key(int level, const char *file, const char *func, const char *format)
{
	return g_strdup_printf("I%d|%s|%s|%s", level, file ? file : "", func ? func : "", format ? format : "");
}

static void count_key(GHashTable *counts, char *key)
{
	gpointer old = g_hash_table_lookup(counts, key);

	g_hash_table_replace(counts, key, GINT_TO_POINTER(GPOINTER_TO_INT(old) + 1));
}

/* Every key of a capture, counted (noisy records left out). */
static GHashTable *capture_counts(const struct pk_capture *cap, const struct pk_noise *noise)
{
	GHashTable *counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < cap->records->len; i++) {
		const struct pk_record *r = cap->records->pdata[i];

		if (pk_noise_has(noise, r))
			continue;
		count_key(counts, record_key(r->level, r->text));
		count_key(counts, record_key(G_MININT, r->text));
	}
	for (guint i = 0; i < cap->index->len; i++) {
		const struct pk_index_entry *e = cap->index->pdata[i];
		count_key(counts, index_key(e->level, e->file, e->func, e->format));
	}
	return counts;
}

/* The keys of one side of a boot-log change. */
static void change_side_keys(GPtrArray *keys, int level, const char *text)
{
	g_auto(GStrv) lines = NULL;

	if (!text)
		return;
	lines = g_strsplit(text, "\n", -1);
	if (g_strv_length(lines) == 1) {
		g_ptr_array_add(keys, record_key(level, text));
		return;
	}
	for (char **l = lines; *l; l++)
		g_ptr_array_add(keys, record_key(G_MININT, *l));
}

static gint compare_strings(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A commit's profile for target t, as text: each key with its count, or,
 * for --message, every record and index entry matching the message, sorted.
 */
static char *profile(const struct pk_range_bisect *b, const struct pk_bisect_target *t, const struct pk_bisect_tested *x)
{
	GString *s = g_string_new(NULL);

	if (t->keys) {
		for (guint i = 0; i < t->keys->len; i++)
			g_string_append_printf(s, "%d\n", GPOINTER_TO_INT(g_hash_table_lookup(x->counts, t->keys->pdata[i])));
		return g_string_free(s, FALSE);
	}
	{
		const struct pk_capture *cap = x->side.boot.capture;
		g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);

		for (guint i = 0; i < cap->records->len; i++) {
			const struct pk_record *r = cap->records->pdata[i];
			if (strstr(r->text, b->message) && !pk_noise_has(b->noise, r))
				g_ptr_array_add(lines, record_key(r->level, r->text));
		}
		for (guint i = 0; i < cap->index->len; i++) {
			const struct pk_index_entry *e = cap->index->pdata[i];
			if (strstr(e->format, b->message))
				g_ptr_array_add(lines, index_key(e->level, e->file, e->func, e->format));
		}
		g_ptr_array_sort(lines, compare_strings);
		for (guint i = 0; i < lines->len; i++)
			g_string_append_printf(s, "%s\n", (char *)lines->pdata[i]);
	}
	return g_string_free(s, FALSE);
}

/* ---------------------------------------------------------------- testing commits */

static void bisect_progress(void *data, const char *stage)
{
	struct pk_range_bisect *b = data;
	g_autofree char *elapsed = g_strdup_printf("%.0f s", pk_now() - b->start);

	if (b->step)
		pk_progress("bisect step %u: %s  %s elapsed", b->step, stage, elapsed);
	else
		pk_progress("the ends: %s  %s elapsed", stage, elapsed);
}

/*
 * Line index i built and booted (from memory, the store, or now); with
 * out_noise, its noise mask when it has one (learnt now with learn_noise).
 */
static int ensure_tested(struct pk_range_bisect *b, unsigned i, bool learn_noise, struct pk_noise **out_noise,
			 GError **err)
{
	struct pk_bisect_tested *t;

	if (b->tested[i])
		return 0;
	t = g_new0(struct pk_bisect_tested, 1);
	if (pk_test_build_side(&t->side, out_noise, NULL, &b->lab, b->store, &b->opts,
			       b->line->pdata[i], learn_noise, err) < 0) {
		g_free(t);
		return -1;
	}
	if (t->side.cached)
		b->from_store++;
	else
		b->builds++;
	if (t->side.build.ok && t->side.boot.status == PK_BOOT_OK && t->side.boot.capture)
		t->counts = capture_counts(t->side.boot.capture, b->noise);
	b->tested[i] = t;
	return 0;
}

const char *pk_range_bisect_skip_reason(const struct pk_range_bisect *b, unsigned i)
{
	const struct pk_bisect_tested *t = b->tested[i];

	if (!t || t->counts)
		return NULL;
	return !t->side.build.ok ? "does not build" : "does not boot";
}

struct search {
	struct pk_range_bisect *b;
	struct pk_bisect_target *t;
};

static int judge(void *data, unsigned i, enum pk_bisect_state *out, GError **err)
{
	struct search *s = data;
	g_autofree char *p = NULL;

	s->b->step++;
	if (ensure_tested(s->b, i, false, NULL, err) < 0)
		return -1;
	if (!s->b->tested[i]->counts) {
		*out = PK_BISECT_SKIP;
		return 0;
	}
	p = profile(s->b, s->t, s->b->tested[i]);
	*out = strcmp(p, s->t->base_profile) ? PK_BISECT_BAD : PK_BISECT_GOOD;
	return 0;
}

/* Bisect one target; every commit already built or stored narrows it first, for free. */
static int search_target(struct pk_range_bisect *b, struct pk_bisect_target *t, GError **err)
{
	unsigned n = b->line->len - 1;
	g_autofree bool *free_ = g_new0(bool, n + 1);
	struct search s = { b, t };

	for (unsigned i = 0; i <= n; i++) {
		gint64 id;
		int found = 0;

		if (!b->tested[i] &&
		    (found = pk_store_find_boot(b->store, b->line->pdata[i], b->lab.config_hash, &id, err)) < 0)
			return -1;
		free_[i] = b->tested[i] || found;
	}
	if (pk_bisect_run(&t->result, n, free_, judge, &s, err) < 0)
		return -1;
	t->searched = true;
	return 0;
}

/* ---------------------------------------------------------------- targets */

static char *index_change_text(const struct pk_index_change *c)
{
	g_autofree char *where = c->origin.file
		? g_strdup_printf("%s:%d %s(): ", c->origin.file, c->origin.line, c->origin.func ? c->origin.func : "?")
		: g_strdup("");
	g_autofree char *old = c->old_format ? g_strescape(c->old_format, NULL) : NULL;
	g_autofree char *new = c->new_format ? g_strescape(c->new_format, NULL) : NULL;

	if (old && new)
		return g_strdup_printf("%sprintk index: %s: `%s` → `%s`", where, pk_change_kind_name(c->kind), old, new);
	return g_strdup_printf("%sprintk index: %s: `%s`", where, pk_change_kind_name(c->kind), old ? old : new ? new : "");
}

static bool same_function(const struct pk_origin *a, const struct pk_origin *b)
{
	return a->file && b->file && !strcmp(a->file, b->file) && !g_strcmp0(a->func, b->func);
}

/* Whether a boot-log change of d already stands for an index change at that function. */
static bool covered_by_boot(const struct pk_kdiff *d, const struct pk_index_change *c)
{
	for (guint i = 0; i < d->changes->len; i++) {
		const struct pk_change *bc = d->changes->pdata[i];
		if (same_function(&bc->origin, &c->origin))
			return true;
	}
	return false;
}

static struct pk_bisect_target *target_new(const char *stage, const char *kind, char *what, GPtrArray *keys)
{
	struct pk_bisect_target *t = g_new0(struct pk_bisect_target, 1);

	t->stage = stage;
	t->kind = kind;
	t->what = what;
	t->keys = keys;
	return t;
}

/*
 * The targets: each boot-log change between the ends, and each printk
 * index change at a function no boot-log change came from (what the
 * kernel can print but did not at boot); or, with --message, one.
 */
static void find_targets(struct pk_range_bisect *b, const struct pk_kdiff *d)
{
	if (b->message) {
		g_autoptr(GString) what = g_string_new(NULL);

		for (guint i = 0; i < d->changes->len; i++) {
			const struct pk_change *c = d->changes->pdata[i];
			if ((c->old_text && strstr(c->old_text, b->message)) || (c->new_text && strstr(c->new_text, b->message)))
				g_string_append_printf(what, "%s%s", what->len ? "\n" : "", c->message);
		}
		for (guint i = 0; i < d->index_changes->len; i++) {
			const struct pk_index_change *c = d->index_changes->pdata[i];
			if ((c->old_format && strstr(c->old_format, b->message)) ||
			    (c->new_format && strstr(c->new_format, b->message))) {
				g_autofree char *text = index_change_text(c);
				g_string_append_printf(what, "%s%s", what->len ? "\n" : "", text);
			}
		}
		if (!what->len)
			g_string_printf(what, "what the kernel prints matching `%s`", b->message);
		g_ptr_array_add(b->targets, target_new("message", "message", g_string_free(g_steal_pointer(&what), FALSE), NULL));
	} else {
		for (guint i = 0; i < d->changes->len; i++) {
			const struct pk_change *c = d->changes->pdata[i];
			GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);

			change_side_keys(keys, c->old_level, c->old_text);
			change_side_keys(keys, c->new_level, c->new_text);
			g_ptr_array_add(b->targets, target_new("boot", pk_change_kind_name(c->kind), g_strdup(c->message), keys));
		}
		for (guint i = 0; i < d->index_changes->len; i++) {
			const struct pk_index_change *c = d->index_changes->pdata[i];
			GPtrArray *keys;

			if (covered_by_boot(d, c))
				continue;
			keys = g_ptr_array_new_with_free_func(g_free);
			if (c->old_format)
				g_ptr_array_add(keys, index_key(c->old_level, c->origin.file, c->origin.func, c->old_format));
			if (c->new_format)
				g_ptr_array_add(keys, index_key(c->new_level, c->origin.file, c->origin.func, c->new_format));
			g_ptr_array_add(b->targets, target_new("index", pk_change_kind_name(c->kind), index_change_text(c), keys));
		}
	}
	for (guint i = 0; i < b->targets->len; i++) {
		struct pk_bisect_target *t = b->targets->pdata[i];
		t->base_profile = profile(b, t, b->tested[0]);
	}
}

/* ---------------------------------------------------------------- the ends and the line */

/* The line of commits: the base, then the range's first-parent commits, oldest first. */
static int make_line(struct pk_range_bisect *b, GError **err)
{
	const struct pk_range *r = b->range;

	if (!r->base)
		return pk_error(err, PK_ERROR_INPUT, "'%s' starts at a root commit: there is no base to compare with",
				r->spec);
	b->line = g_ptr_array_new();
	g_ptr_array_add(b->line, r->base);
	for (guint i = 0; i < r->commits->len; i++) {
		const struct pk_range_commit *c = r->commits->pdata[i];

		if (g_strcmp0(c->parent, b->line->pdata[b->line->len - 1]))
			return pk_error(err, PK_ERROR_INPUT, "'%s' is not one line of first parents (%.12s follows "
					"%.12s)", r->spec, c->id, (char *)b->line->pdata[b->line->len - 1]);
		g_ptr_array_add(b->line, c->id);
	}
	b->tested = g_new0(struct pk_bisect_tested *, b->line->len);
	return 0;
}

/* The stored noise mask of the lab's base, when the range's base has none of its own. */
static int lab_base_noise(struct pk_range_bisect *b, GError **err)
{
	g_autofree char *id = NULL;
	g_auto(GStrv) keys = NULL;
	gint64 build_id;
	int found;

	if (b->noise || !(id = pk_repo_resolve(&b->lab, PK_LAB_BASE_TAG, NULL)))
		return 0;
	if ((found = pk_store_find_build(b->store, id, b->lab.config_hash, &build_id, err)) <= 0 ||
	    (found = pk_store_get_noise(b->store, build_id, &keys, err)) <= 0)
		return found;
	b->noise = pk_noise_from_keys((const char *const *)keys);
	return 0;
}

/* Build and boot both ends; 1 when one of them cannot be compared (said in err). */
static int test_ends(struct pk_range_bisect *b, GError **err)
{
	unsigned n = b->line->len - 1;
	gint64 id;
	int stored;

	/* the base learns the noise mask, unless it was booted before */
	if ((stored = pk_store_find_boot(b->store, b->line->pdata[0], b->lab.config_hash, &id, err)) < 0 ||
	    ensure_tested(b, 0, !stored, &b->noise, err) < 0 || lab_base_noise(b, err) < 0 ||
	    ensure_tested(b, n, false, NULL, err) < 0)
		return -1;
	b->builds_ends = b->builds;
	/* counts of the base were taken before its mask was known: count again */
	if (b->tested[0]->counts) {
		g_hash_table_unref(b->tested[0]->counts);
		b->tested[0]->counts = capture_counts(b->tested[0]->side.boot.capture, b->noise);
	}
	for (unsigned e = 0; e <= n; e += n) {
		const char *why = pk_range_bisect_skip_reason(b, e);
		if (why) {
			pk_error(err, PK_ERROR_FAILED, "the %s %.12s %s: there is nothing to compare with",
				 e ? "tip" : "base", (char *)b->line->pdata[e], why);
			return 1;
		}
	}
	return 0;
}

/* The lab, from now on, on the config the range's diff needs (range-bisect.h). */
static int derive_for_range(struct pk_range_bisect *b, GError **err)
{
	const char *base = b->line->pdata[0], *tip = b->line->pdata[b->line->len - 1];
	struct pk_policy bytes_only = b->opts.policy;
	g_autoptr(pk_patch) diff = NULL;
	struct pk_lab derived = { .lock_fd = -1 };
	int found;

	/*
	 * Held to max_mail_mb alone, a range touching many files by nature;
	 * over it, the range's files come without their hunks, and the config
	 * is derived from their paths alone.
	 */
	bytes_only.max_files = bytes_only.max_lines = 0;
	diff = pk_repo_diff_patch(&b->lab, base, tip, &bytes_only, err);
	if (!diff || (found = pk_pipeline_config_for(&derived, &b->derived, &b->lab, &b->opts, diff, base,
						      NULL, NULL, "the range", err)) < 0)
		return -1;
	if (!found)
		return 0;
	/* the derived lab shares the tree and the lock, which stays held: it moves over with the lab */
	derived.lock_fd = b->lab.lock_fd;
	b->lab.lock_fd = -1;
	pk_lab_clear(&b->lab);
	b->lab = derived;
	return 0;
}

/* ---------------------------------------------------------------- the worker */

int pk_range_bisect_open(struct pk_range_bisect *b, struct pk_lab *lab, struct pk_store *store,
			 const struct pk_test_opts *opts, const char *repo, const char *const *spec,
			 const char *message, GError **err)
{
	memset(b, 0, sizeof(*b));
	b->lab = *lab;
	memset(lab, 0, sizeof(*lab));
	b->store = store;
	b->opts = *opts;
	b->opts.progress = bisect_progress;
	b->opts.progress_data = b;
	b->message = message;
	b->start = pk_now();
	b->targets = g_ptr_array_new_with_free_func(target_free);
	if (pk_range_load(&b->range, &b->lab, repo, spec, false, err) < 0 || make_line(b, err) < 0 ||
	    derive_for_range(b, err) < 0)
		return -1;
	return 0;
}

int pk_range_bisect_run(struct pk_range_bisect *b, GError **err)
{
	unsigned n = b->line->len - 1;
	g_autoptr(pk_kdiff) d = NULL;
	int rc;

	if ((rc = test_ends(b, err)) != 0)
		return rc;
	d = pk_kdiff_captures(b->tested[0]->side.boot.capture, b->tested[n]->side.boot.capture, b->noise);
	find_targets(b, d);
	for (guint k = 0; k < b->targets->len; k++) {
		struct pk_bisect_target *t = b->targets->pdata[k];
		g_autofree char *at_tip = profile(b, t, b->tested[n]);

		if (strcmp(at_tip, t->base_profile) && search_target(b, t, err) < 0)
			return -1;
	}
	pk_progress("%s", "");
	return 0;
}

void pk_range_bisect_clear(struct pk_range_bisect *b)
{
	for (guint i = 0; b->tested && i < b->line->len; i++)
		tested_free(b->tested[i]);
	g_clear_pointer(&b->tested, g_free);
	g_clear_pointer(&b->line, g_ptr_array_unref);
	g_clear_pointer(&b->targets, g_ptr_array_unref);
	g_clear_pointer(&b->noise, pk_noise_free);
	g_clear_pointer(&b->range, pk_range_free);
	g_clear_pointer(&b->store, pk_store_close);
	pk_derived_clear(&b->derived);
	pk_lab_clear(&b->lab);
}
