/*
 * kdiff.c - the diff stage; see kdiff.h.
 *
 * pk_kdiff_captures() in five steps: every record of both boots becomes a
 * struct rec (its normalised text and the key that is compared, see
 * normalise.c), minus what the noise mask names (noise.c); the two key
 * lists go through libgit2's buffer diff; records that merely moved are
 * set aside; each hunk is classified by pairing its removed and added
 * records, the most certain pairing first, and each change is attributed
 * to its printk index entry (attribute.c); and the two printk indexes are
 * diffed on their own (kdiff-index.c).  The names of the kinds of change
 * and a change's origin are change.c's, which both use.
 */
#include "analysis/kdiff-private.h"
#include "base/profile.h"

#include "base/gitutil.h"
#include <stdlib.h>
#include <string.h>

#define QUOTE_MAX 72        /* longest text quoted whole in a change message */
#define SIMILAR_MIN 0.5     /* word overlap (Dice) for two texts to be one message */

/* ---------------------------------------------------------------- records */

/* One record as it is compared. */
struct rec {
	const struct pk_record *kmsg;       /* borrowed from the capture */
	char *norm;                         /* pk_kdiff_normalise() of its text */
	char *key;                          /* pk_kdiff_record_key(): one diff line */
	guint pos;                          /* index among its side's compared records */
	const struct pk_index_entry *origin;
	bool attributed;                    /* origin was looked up (it may be NULL) */
	bool used;                          /* in a change already, or only moved */
};

static void rec_free(gpointer p)
{
	struct rec *r = p;

	g_free(r->norm);
	g_free(r->key);
	g_free(r);
}

/* One boot as compared: its records minus noise, its index as matchers. */
struct side {
	GPtrArray *recs;            /* struct rec*, owned */
	struct pk_attributor *attr;
	unsigned dropped;           /* records the noise mask left out */
};

static void side_init(struct side *s, const struct pk_capture *cap, const struct pk_normaliser *n,
		      const struct pk_noise *noise)
{
	s->recs = g_ptr_array_new_with_free_func(rec_free);
	s->attr = pk_attributor_new(cap->index);
	for (guint i = 0; i < cap->records->len; i++) {
		struct rec *r = g_new0(struct rec, 1);

		r->kmsg = cap->records->pdata[i];
		r->norm = pk_normaliser_apply(n, r->kmsg->text);
		r->key = pk_kdiff_record_key(r->kmsg, r->norm);
		if (pk_noise_drops(noise, r->norm, r->key)) {
			s->dropped++;
			rec_free(r);
			continue;
		}
		r->pos = s->recs->len;
		g_ptr_array_add(s->recs, r);
	}
}

static void side_clear(struct side *s)
{
	g_ptr_array_unref(s->recs);
	pk_attributor_free(s->attr);
}

/* A record's index entry, looked up once: only changed records need one. */
static const struct pk_index_entry *rec_origin(struct side *s, struct rec *r)
{
	if (!r->attributed) {
		r->origin = pk_attributor_match(s->attr, r->kmsg);
		r->attributed = true;
	}
	return r->origin;
}

/* ---------------------------------------------------------------- changes */

/* A region of the diff: removed and added records between equal ones. */
struct hunk {
	GPtrArray *olds, *news;     /* struct rec*, borrowed from the sides */
	guint at;                   /* after-side position where the hunk is */
};

static void hunk_free(gpointer p)
{
	struct hunk *h = p;

	g_ptr_array_unref(h->olds);
	g_ptr_array_unref(h->news);
	g_free(h);
}

/* A change and where it goes in after-boot order. */
struct placed {
	struct pk_change *change;
	guint new_pos;      /* its first after record, or where its records were removed */
	bool has_new;       /* a removal goes before the after record at new_pos */
	guint old_pos;
};

struct kdiff_ctx {
	struct side before, after;
	GPtrArray *hunks;   /* struct hunk*, owned */
	GArray *placed;     /* struct placed */
};

static void change_free(gpointer p)
{
	struct pk_change *c = p;

	g_free(c->old_text);
	g_free(c->new_text);
	pk_origin_clear(&c->origin);
	g_free(c->message);
	g_free(c);
}

/* A text the way a message quotes it: control bytes escaped, a long one cut. */
static void append_quoted(GString *m, const char *text)
{
	g_autoptr(GString) q = g_string_new(NULL);

	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '\n')
			g_string_append(q, "\\n");
		else if (*p == '\t')
			g_string_append(q, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			g_string_append_printf(q, "\\x%02x", *p);
		else
			g_string_append_c(q, (char)*p);
	}
	if (q->len > QUOTE_MAX) {
		gsize cut = QUOTE_MAX - 1;

		while (cut > 0 && ((unsigned char)q->str[cut] & 0xc0) == 0x80)
			cut--; /* not inside a UTF-8 sequence */
		g_string_truncate(q, cut);
		g_string_append(q, "…");
	}
	g_string_append_printf(m, "`%s`", q->str);
}

/* One side of a change; the records of a split or merge one by one. */
static void append_side(GString *m, const char *text, bool several)
{
	g_auto(GStrv) parts = NULL;

	if (!several) {
		append_quoted(m, text);
		return;
	}
	parts = g_strsplit(text, "\n", -1);
	for (char **p = parts; *p; p++) {
		if (p != parts)
			g_string_append(m, " + ");
		append_quoted(m, *p);
	}
}

/* The one sentence of a change: "file:line func(): what: `old` → `new`". */
static char *change_message(const struct pk_change *c)
{
	GString *m = g_string_new(NULL);
	bool split = c->kind == PK_CHANGE_LINE_SPLIT, merged = c->kind == PK_CHANGE_LINES_MERGED;

	if (c->origin.file)
		g_string_append_printf(m, "%s:%d %s(): ", c->origin.file, c->origin.line, c->origin.func);
	if (!c->old_text) {
		g_string_append(m, "message added: ");
		append_quoted(m, c->new_text);
	} else if (!c->new_text) {
		g_string_append(m, "message removed: ");
		append_quoted(m, c->old_text);
	} else if (c->kind == PK_CHANGE_LEVEL_CHANGED) {
		g_string_append_printf(m, "level changed from %s to %s: ", pk_level_name(c->old_level),
				       pk_level_name(c->new_level));
		append_quoted(m, c->new_text);
	} else if (strcmp(c->old_text, c->new_text) == 0) {
		g_string_append(m, "record flags changed: ");
		append_quoted(m, c->new_text);
	} else {
		g_autofree char *what = g_strdelimit(g_strdup(pk_change_kind_name(c->kind)), "-", ' ');

		g_string_append(m, what);
		if (c->old_level != c->new_level && !split && !merged)
			g_string_append_printf(m, " (%s → %s)", pk_level_name(c->old_level),
					       pk_level_name(c->new_level));
		g_string_append(m, ": ");
		append_side(m, c->old_text, merged);
		g_string_append(m, " → ");
		append_side(m, c->new_text, split);
	}
	return g_string_free(m, FALSE);
}

static char *join_texts(struct rec *const *recs, guint n)
{
	g_autoptr(GString) s = g_string_new(NULL);

	for (guint i = 0; i < n; i++) {
		if (i)
			g_string_append_c(s, '\n');
		g_string_append(s, recs[i]->kmsg->text);
	}
	return g_strdup(s->str);
}

/*
 * Record one change made of olds (before side) and news (after side), and
 * mark them used.  Its origin is the after side's, or the before side's
 * when the after records have none.
 */
static void emit(struct kdiff_ctx *x, const struct hunk *hk, enum pk_change_kind kind,
		 struct rec *const *olds, guint n_old, struct rec *const *news, guint n_new)
{
	struct pk_change *c = g_new0(struct pk_change, 1);
	const struct pk_index_entry *origin = NULL;
	struct placed pl = { .change = c };

	for (guint i = 0; i < n_old; i++)
		olds[i]->used = true;
	for (guint i = 0; i < n_new; i++)
		news[i]->used = true;
	c->kind = kind;
	c->old_level = n_old ? olds[0]->kmsg->level : -1;
	c->new_level = n_new ? news[0]->kmsg->level : -1;
	c->old_text = n_old ? join_texts(olds, n_old) : NULL;
	c->new_text = n_new ? join_texts(news, n_new) : NULL;
	if (n_new)
		origin = rec_origin(&x->after, news[0]);
	if (!origin && n_old)
		origin = rec_origin(&x->before, olds[0]);
	pk_origin_set(&c->origin, origin);
	c->message = change_message(c);
	pl.new_pos = n_new ? news[0]->pos : hk->at;
	pl.has_new = n_new > 0;
	pl.old_pos = n_old ? olds[0]->pos : 0;
	g_array_append_val(x->placed, pl);
}

static void emit_pair(struct kdiff_ctx *x, const struct hunk *hk, enum pk_change_kind kind,
		      struct rec *o, struct rec *n)
{
	emit(x, hk, kind, o ? &o : NULL, o ? 1 : 0, n ? &n : NULL, n ? 1 : 0);
}

/* ---------------------------------------------------------------- classifying */

/* Same text, other key: the level (or facility, or continuation flag) changed. */
static void pair_same_text(struct kdiff_ctx *x, struct hunk *hk)
{
	for (guint i = 0; i < hk->olds->len; i++) {
		struct rec *o = hk->olds->pdata[i];

		for (guint j = 0; j < hk->news->len && !o->used; j++) {
			struct rec *n = hk->news->pdata[j];

			if (!n->used && strcmp(o->norm, n->norm) == 0)
				emit_pair(x, hk, o->kmsg->level != n->kmsg->level ? PK_CHANGE_LEVEL_CHANGED : PK_CHANGE_TEXT_CHANGED,
					  o, n);
		}
	}
}

/* A normalised text without its whitespace: how split pieces are compared. */
static GString *squeezed(const char *s)
{
	GString *out = g_string_new(NULL);

	for (; *s; s++)
		if (!g_ascii_isspace(*s))
			g_string_append_c(out, *s);
	return out;
}

/*
 * One record on one side that is two or more consecutive records on the
 * other: continuation handling changed where records end.  Whitespace is
 * ignored, since the split usually moves a space or a newline.  split is
 * true when ones are the before side's records.
 */
static void find_joins(struct kdiff_ctx *x, struct hunk *hk, GPtrArray *ones, GPtrArray *manys, bool split)
{
	for (guint i = 0; i < ones->len; i++) {
		struct rec *one = ones->pdata[i];
		g_autoptr(GString) target = NULL;

		if (one->used)
			continue;
		target = squeezed(one->norm);
		for (guint s = 0; s < manys->len && !one->used && target->len; s++) {
			g_autoptr(GString) acc = g_string_new(NULL);
			guint e = s;

			for (; e < manys->len && acc->len < target->len; e++) {
				struct rec *m = manys->pdata[e];
				g_autoptr(GString) piece = NULL;

				if (m->used)
					break;
				piece = squeezed(m->norm);
				g_string_append_len(acc, piece->str, (gssize)piece->len);
			}
			if (e - s < 2 || !g_string_equal(acc, target))
				continue;
			if (split)
				emit(x, hk, PK_CHANGE_LINE_SPLIT, &one, 1, (struct rec **)manys->pdata + s, e - s);
			else
				emit(x, hk, PK_CHANGE_LINES_MERGED, (struct rec **)manys->pdata + s, e - s, &one, 1);
		}
	}
}

/* Where s goes on after one "prefix: " (one to three words), or NULL. */
static const char *after_prefix(const char *s)
{
	unsigned spaces = 0;

	for (const char *p = s; *p && p - s < 48; p++) {
		if (*p == ':')
			return p > s && p[1] == ' ' && p[-1] != ' ' ? p + 2 : NULL;
		if (*p == ' ' && (p == s || p[-1] == ' ' || ++spaces > 2))
			return NULL;
		if ((unsigned char)*p < 0x20)
			return NULL;
	}
	return NULL;
}

/*
 * Whether one text is the other with a "word: " prefix added, removed or
 * replaced (a pr_fmt() change): some tail left after cutting up to three
 * prefixes off one equals such a tail of the other.
 */
static bool prefix_changed(const char *a, const char *b)
{
	const char *ta[4] = { a }, *tb[4] = { b };
	unsigned na = 1, nb = 1;

	while (na < 4 && (ta[na] = after_prefix(ta[na - 1])))
		na++;
	while (nb < 4 && (tb[nb] = after_prefix(tb[nb - 1])))
		nb++;
	for (unsigned i = 0; i < na; i++)
		for (unsigned j = 0; j < nb; j++)
			if ((i || j) && *ta[i] && strcmp(ta[i], tb[j]) == 0)
				return true;
	return false;
}

static void pair_prefixed(struct kdiff_ctx *x, struct hunk *hk)
{
	for (guint i = 0; i < hk->olds->len; i++) {
		struct rec *o = hk->olds->pdata[i];

		for (guint j = 0; j < hk->news->len && !o->used; j++) {
			struct rec *n = hk->news->pdata[j];

			if (!o->used && !n->used && prefix_changed(o->norm, n->norm))
				emit_pair(x, hk, PK_CHANGE_PREFIX_CHANGED, o, n);
		}
	}
}

/*
 * Records printed by the same call before and after: same file and
 * function in each side's index; the same format first, then the nearest
 * line.
 */
static void pair_by_origin(struct kdiff_ctx *x, struct hunk *hk)
{
	for (guint i = 0; i < hk->olds->len; i++) {
		struct rec *o = hk->olds->pdata[i], *best = NULL;
		const struct pk_index_entry *oe;
		int best_score = G_MAXINT;

		if (o->used || !(oe = rec_origin(&x->before, o)))
			continue;
		for (guint j = 0; j < hk->news->len; j++) {
			struct rec *n = hk->news->pdata[j];
			const struct pk_index_entry *ne;
			int score;

			if (n->used || !(ne = rec_origin(&x->after, n)) || strcmp(oe->file, ne->file) ||
			    strcmp(oe->func, ne->func))
				continue;
			score = strcmp(oe->format, ne->format) == 0 ? 0 : 1 + abs(oe->line - ne->line);
			if (score < best_score) {
				best = n;
				best_score = score;
			}
		}
		if (best)
			emit_pair(x, hk, PK_CHANGE_TEXT_CHANGED, o, best);
	}
}

/* The words of a text, sorted, for a multiset overlap. */
static GPtrArray *text_words(const char *s)
{
	GPtrArray *words = g_ptr_array_new_with_free_func(g_free);

	while (*s) {
		const char *e = s;

		while (*e && (g_ascii_isalnum(*e) || *e == '_' || *e == '<' || *e == '>'))
			e++;
		if (e > s)
			g_ptr_array_add(words, g_strndup(s, (gsize)(e - s)));
		s = *e ? e + 1 : e;
	}
	g_ptr_array_sort(words, pk_kdiff_compare_strings);
	return words;
}

/* Dice's coefficient of two sorted word lists: 1 for the same words, 0 for none shared. */
static double similarity(const GPtrArray *a, const GPtrArray *b)
{
	guint i = 0, j = 0, common = 0;

	if (!a->len && !b->len)
		return 1;
	while (i < a->len && j < b->len) {
		int c = strcmp(a->pdata[i], b->pdata[j]);

		if (c == 0)
			common++;
		i += c <= 0;
		j += c >= 0;
	}
	return 2.0 * common / (a->len + b->len);
}

struct candidate {
	double score;
	guint o, n;
};

static int candidate_compare(const void *pa, const void *pb)
{
	const struct candidate *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->o != b->o)
		return a->o < b->o ? -1 : 1;
	return a->n < b->n ? -1 : a->n > b->n;
}

/* What is left pairs by shared words, the most similar pairs first. */
static void pair_similar(struct kdiff_ctx *x, struct hunk *hk)
{
	g_autoptr(GPtrArray) ow = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	g_autoptr(GPtrArray) nw = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	g_autoptr(GArray) cands = g_array_new(FALSE, FALSE, sizeof(struct candidate));

	for (guint i = 0; i < hk->olds->len; i++)
		g_ptr_array_add(ow, text_words(((struct rec *)hk->olds->pdata[i])->norm));
	for (guint j = 0; j < hk->news->len; j++)
		g_ptr_array_add(nw, text_words(((struct rec *)hk->news->pdata[j])->norm));
	for (guint i = 0; i < hk->olds->len; i++) {
		for (guint j = 0; j < hk->news->len; j++) {
			struct candidate c = { similarity(ow->pdata[i], nw->pdata[j]), i, j };

			if (!((struct rec *)hk->olds->pdata[i])->used &&
			    !((struct rec *)hk->news->pdata[j])->used && c.score >= SIMILAR_MIN)
				g_array_append_val(cands, c);
		}
	}
	g_array_sort(cands, candidate_compare);
	for (guint k = 0; k < cands->len; k++) {
		const struct candidate *c = &g_array_index(cands, struct candidate, k);
		struct rec *o = hk->olds->pdata[c->o], *n = hk->news->pdata[c->n];

		if (!o->used && !n->used)
			emit_pair(x, hk, PK_CHANGE_TEXT_CHANGED, o, n);
	}
}

static void add_leftovers(struct kdiff_ctx *x, struct hunk *hk)
{
	for (guint i = 0; i < hk->olds->len; i++)
		if (!((struct rec *)hk->olds->pdata[i])->used)
			emit_pair(x, hk, PK_CHANGE_MESSAGE_REMOVED, hk->olds->pdata[i], NULL);
	for (guint j = 0; j < hk->news->len; j++)
		if (!((struct rec *)hk->news->pdata[j])->used)
			emit_pair(x, hk, PK_CHANGE_MESSAGE_ADDED, NULL, hk->news->pdata[j]);
}

/*
 * Classify one hunk by pairing its removed and added records, the most
 * certain pairing first: same text, split or merged records, a changed
 * prefix, the same printk call, shared words; the rest are messages that
 * appeared or went.
 */
static void classify_hunk(struct kdiff_ctx *x, struct hunk *hk)
{
	pair_same_text(x, hk);
	find_joins(x, hk, hk->olds, hk->news, true);
	find_joins(x, hk, hk->news, hk->olds, false);
	pair_prefixed(x, hk);
	pair_by_origin(x, hk);
	pair_similar(x, hk);
	add_leftovers(x, hk);
}

/* ---------------------------------------------------------------- alignment */

static struct hunk *hunk_add(struct kdiff_ctx *x, guint at)
{
	struct hunk *h = g_new0(struct hunk, 1);

	h->olds = g_ptr_array_new();
	h->news = g_ptr_array_new();
	h->at = at;
	g_ptr_array_add(x->hunks, h);
	return h;
}

static int on_hunk(const git_diff_delta *delta, const git_diff_hunk *h, void *payload)
{
	/* with no context lines, a pure deletion's new_start is the line before it */
	hunk_add(payload, h->new_lines ? (guint)h->new_start - 1 : (guint)h->new_start);
	return 0;
}

static int on_line(const git_diff_delta *delta, const git_diff_hunk *h, const git_diff_line *l,
		   void *payload)
{
	struct kdiff_ctx *x = payload;
	struct hunk *hk = x->hunks->len ? x->hunks->pdata[x->hunks->len - 1] : NULL;

	if (!hk)
		return 0;
	if (l->origin == GIT_DIFF_LINE_DELETION && l->old_lineno > 0 &&
	    (guint)l->old_lineno <= x->before.recs->len)
		g_ptr_array_add(hk->olds, x->before.recs->pdata[l->old_lineno - 1]);
	else if (l->origin == GIT_DIFF_LINE_ADDITION && l->new_lineno > 0 &&
		 (guint)l->new_lineno <= x->after.recs->len)
		g_ptr_array_add(hk->news, x->after.recs->pdata[l->new_lineno - 1]);
	return 0;
}

/* One key per line: the text libgit2 diffs. */
static GString *keys_text(const struct side *s)
{
	GString *t = g_string_new(NULL);

	for (guint i = 0; i < s->recs->len; i++) {
		g_string_append(t, ((struct rec *)s->recs->pdata[i])->key);
		g_string_append_c(t, '\n');
	}
	return t;
}

/*
 * Align the two key lists with libgit2's diff (patience: boot logs are
 * mostly unique lines, which it anchors on) into hunks without context.
 * Should libgit2 fail (out of memory), everything is one hunk, which the
 * pairing still makes sense of.
 */
static void align(struct kdiff_ctx *x)
{
	git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
	g_autoptr(GString) a = keys_text(&x->before);
	g_autoptr(GString) b = keys_text(&x->after);
	int rc;

	opts.context_lines = 0;
	opts.interhunk_lines = 0;
	opts.flags = GIT_DIFF_FORCE_TEXT | GIT_DIFF_PATIENCE;
	pk_git_init();
	rc = git_diff_buffers(a->str, a->len, "before", b->str, b->len, "after", &opts, NULL, NULL,
			      on_hunk, on_line, x);
	if (rc < 0) {
		struct hunk *h;

		g_ptr_array_set_size(x->hunks, 0);
		h = hunk_add(x, 0);
		g_ptr_array_extend(h->olds, x->before.recs, NULL, NULL);
		g_ptr_array_extend(h->news, x->after.recs, NULL, NULL);
	}
}

/*
 * A removed and an added record with the same key, in different hunks,
 * only moved: concurrent initcalls and asynchronous probing reorder a
 * boot, and no dynamic kind is about order.  They are set aside.
 */
static void drop_moved(struct kdiff_ctx *x)
{
	g_autoptr(GHashTable) removed = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
							      (GDestroyNotify)g_ptr_array_unref);

	for (guint i = 0; i < x->hunks->len; i++) {
		struct hunk *hk = x->hunks->pdata[i];

		for (guint j = 0; j < hk->olds->len; j++) {
			struct rec *o = hk->olds->pdata[j];
			GPtrArray *list = g_hash_table_lookup(removed, o->key);

			if (!list)
				g_hash_table_insert(removed, o->key, list = g_ptr_array_new());
			g_ptr_array_add(list, o);
		}
	}
	for (guint i = 0; i < x->hunks->len; i++) {
		struct hunk *hk = x->hunks->pdata[i];

		for (guint j = 0; j < hk->news->len; j++) {
			struct rec *n = hk->news->pdata[j];
			GPtrArray *list = g_hash_table_lookup(removed, n->key);

			if (list && list->len) {
				((struct rec *)list->pdata[0])->used = true;
				n->used = true;
				g_ptr_array_remove_index(list, 0);
			}
		}
	}
}

static int placed_compare(const void *pa, const void *pb)
{
	const struct placed *a = pa, *b = pb;

	if (a->new_pos != b->new_pos)
		return a->new_pos < b->new_pos ? -1 : 1;
	if (a->has_new != b->has_new)
		return a->has_new ? 1 : -1;
	return a->old_pos < b->old_pos ? -1 : a->old_pos > b->old_pos;
}


/* ---------------------------------------------------------------- the diff */

struct pk_kdiff *pk_kdiff_captures(const struct pk_capture *before, const struct pk_capture *after,
				   const struct pk_noise *noise)
{
	PK_PROFILE_SCOPE("diff");
	struct pk_kdiff *d = g_new0(struct pk_kdiff, 1);
	struct pk_normaliser *n = pk_normaliser_new();
	struct kdiff_ctx x = { 0 };

	d->changes = g_ptr_array_new_with_free_func(change_free);
	d->index_changes = g_ptr_array_new_with_free_func(pk_index_change_free);
	d->records_before = before->records->len;
	d->records_after = after->records->len;
	side_init(&x.before, before, n, noise);
	side_init(&x.after, after, n, noise);
	pk_normaliser_free(n);
	d->noise_dropped = x.before.dropped + x.after.dropped;
	x.hunks = g_ptr_array_new_with_free_func(hunk_free);
	x.placed = g_array_new(FALSE, FALSE, sizeof(struct placed));

	align(&x);
	drop_moved(&x);
	for (guint i = 0; i < x.hunks->len; i++)
		classify_hunk(&x, x.hunks->pdata[i]);
	g_array_sort(x.placed, placed_compare);
	for (guint i = 0; i < x.placed->len; i++)
		g_ptr_array_add(d->changes, g_array_index(x.placed, struct placed, i).change);
	pk_kdiff_index(d->index_changes, before->index, after->index);

	g_array_unref(x.placed);
	g_ptr_array_unref(x.hunks);
	side_clear(&x.before);
	side_clear(&x.after);
	return d;
}

void pk_kdiff_free(struct pk_kdiff *d)
{
	if (!d)
		return;
	g_ptr_array_unref(d->changes);
	g_ptr_array_unref(d->index_changes);
	g_free(d);
}
