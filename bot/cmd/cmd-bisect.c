/*
 * cmd-bisect.c - `printkbot bisect`: the first commit of a branch that
 * changed a message, for every console change between the branch's ends.
 */
#include "lab/apply.h"
#include "analysis/bisect.h"
#include "cmd/commands.h"
#include "base/config.h"
#include "base/jsonout.h"
#include "lab/lab.h"
#include "intake/range.h"
#include "store/store.h"
#include "pipeline/test.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

/* Index changes shown per commit in the text output; --json has them all. */
#define INDEX_SHOWN 3

static const char bisect_usage[] =
	"usage: printkbot bisect [--repo DIR] [--message TEXT] [--json] [--config FILE]\n"
	"                        [--timeout SECONDS] [--db FILE] [--allow-build-system] RANGE...\n\n"
	"Build and boot the two ends of RANGE (spelt as for `printkbot run`) and\n"
	"compare what they print; then, for each change between them (or only\n"
	"what matches --message), find the first commit that brought it, by\n"
	"bisection along the first parents: about log2(commits) builds, fewer\n"
	"when commits were built before (run and bisect store every build and\n"
	"boot).  A commit that does not build or boot is skipped, as `git bisect\n"
	"run` skips on exit status 125; when skipped commits could hold the change\n"
	"instead, the result says so and names them.  The result names the commit,\n"
	"its author and subject, and the change.  Your repository is only read.\n\n"
	"  --repo DIR            the repository to read the range from (default: the\n"
	"                        one the current directory is in)\n"
	"  --message TEXT        only what prints (or can print) a message containing\n"
	"                        TEXT: the first commit after which those records and\n"
	"                        printk index entries are no longer as at the base\n"
	"  --json                one JSON object: the ends, every change with its\n"
	"                        commit, and the builds it took\n"
	"  --config FILE         settings and policy (see config.example)\n"
	"  --timeout SECONDS     per boot (default 60); a unit may follow: 90s, 2m, 1h\n"
	"  --db FILE             the store (default $PRINTKBOT_DB or <cache>/printkbot.db)\n"
	"  --allow-build-system  accepted for symmetry with run; a commit is built as it is\n\n"
	"exit status: 0 every change found its first commit, 1 the ends print the\n"
	"same (or nothing matching TEXT changed), 2 bad range or usage, an end\n"
	"that does not build or boot, or the bot could not work, 3 some change's\n"
	"first commit is ambiguous because commits were skipped.\n";

/* A commit of the line, built and booted (or found not to build or boot). */
struct tested {
	struct pk_test_side side;
	GHashTable *counts;   /* profile key -> count, when it booted */
};

/* One change between the ends, and where it came from. */
struct target {
	const char *stage;    /* "boot" or "index" */
	const char *kind;     /* static */
	char *what;           /* the change in one sentence */
	GPtrArray *keys;      /* char*: the profile keys it is judged by; NULL: by the message */
	char *base_profile;   /* its profile at the base */
	struct pk_bisect_result result;
	bool searched;
};

struct bisect {
	struct pk_lab lab;
	struct pk_store *store;
	struct pk_test_opts opts;
	struct pk_range *range;
	const char *message;      /* --message */
	bool json;
	GPtrArray *line;          /* char*: 0 the base, 1..n the commits, n the tip */
	struct tested **tested;   /* n + 1 entries, NULL until tested */
	struct pk_noise *noise;
	GPtrArray *targets;       /* struct target* */
	unsigned builds, builds_ends, from_store;
	unsigned step;            /* tests asked so far, for the progress line */
	double start;
};

static void tested_free(struct tested *t)
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
	struct target *t = p;

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
static char *profile(const struct bisect *b, const struct target *t, const struct tested *x)
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
	struct bisect *b = data;
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
static int ensure_tested(struct bisect *b, unsigned i, bool learn_noise, struct pk_noise **out_noise,
			 GError **err)
{
	struct tested *t;

	if (b->tested[i])
		return 0;
	t = g_new0(struct tested, 1);
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

/* Why line index i cannot be judged, or NULL when it can. */
static const char *skip_reason(const struct bisect *b, unsigned i)
{
	const struct tested *t = b->tested[i];

	if (!t || t->counts)
		return NULL;
	return !t->side.build.ok ? "does not build" : "does not boot";
}

struct search {
	struct bisect *b;
	struct target *t;
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
static int search_target(struct bisect *b, struct target *t, GError **err)
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

static struct target *target_new(const char *stage, const char *kind, char *what, GPtrArray *keys)
{
	struct target *t = g_new0(struct target, 1);

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
static void find_targets(struct bisect *b, const struct pk_kdiff *d)
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
		struct target *t = b->targets->pdata[i];
		t->base_profile = profile(b, t, b->tested[0]);
	}
}

/* ---------------------------------------------------------------- the ends and the line */

/* The line of commits: the base, then the range's first-parent commits, oldest first. */
static int make_line(struct bisect *b, GError **err)
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
	b->tested = g_new0(struct tested *, b->line->len);
	return 0;
}

/* The stored noise mask of the lab's base, when the range's base has none of its own. */
static int lab_base_noise(struct bisect *b, GError **err)
{
	g_autofree char *id = NULL;
	g_auto(GStrv) keys = NULL;
	gint64 build_id;
	int found;

	if (b->noise || !(id = pk_apply_resolve(&b->lab, PK_LAB_BASE_TAG, NULL)))
		return 0;
	if ((found = pk_store_find_build(b->store, id, b->lab.config_hash, &build_id, err)) <= 0 ||
	    (found = pk_store_get_noise(b->store, build_id, &keys, err)) <= 0)
		return found;
	b->noise = pk_noise_from_keys((const char *const *)keys);
	return 0;
}

/* Build and boot both ends; 1 when one of them cannot be compared (said in err). */
static int test_ends(struct bisect *b, GError **err)
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
		const char *why = skip_reason(b, e);
		if (why) {
			pk_error(err, PK_ERROR_FAILED, "the %s %.12s %s: there is nothing to compare with",
				 e ? "tip" : "base", (char *)b->line->pdata[e], why);
			return 1;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- output */

static const struct pk_range_commit *line_commit(const struct bisect *b, unsigned i)
{
	return i ? b->range->commits->pdata[i - 1] : NULL;
}

static char *date_text(gint64 t)
{
	g_autoptr(GDateTime) d = g_date_time_new_from_unix_utc(t);
	return d ? g_date_time_format(d, "%Y-%m-%d") : g_strdup("?");
}

static void print_text(const struct bisect *b)
{
	unsigned n = b->line->len - 1;

	printf("%s: %u commit%s from %.12s to %.12s (%s)\n", b->range->spec, n, n == 1 ? "" : "s",
	       (char *)b->line->pdata[0], (char *)b->line->pdata[n], b->range->repo);
	/* one paragraph per first commit, in line order; index changes past a few are counted */
	for (unsigned i = 1; i <= n; i++) {
		const struct pk_range_commit *c = line_commit(b, i);
		bool header = false;
		unsigned index_shown = 0, index_more = 0;

		for (guint k = 0; k < b->targets->len; k++) {
			const struct target *t = b->targets->pdata[k];

			if (!t->searched || t->result.first != i)
				continue;
			if (!strcmp(t->stage, "index") && index_shown == INDEX_SHOWN && !pk_bisect_ambiguous(&t->result)) {
				index_more++;
				continue;
			}
			index_shown += !strcmp(t->stage, "index");
			if (!header) {
				g_autofree char *date = date_text(c->time);
				printf("\n%.12s %s\n  author: %s, %s%s\n", c->id, c->subject, c->author, date,
				       c->merge ? " (a merge: the change came with the branch it merged)" : "");
				header = true;
			}
			{
				g_autofree char *what = pk_wrap(t->what, 68, "    ");
				printf("  %s: %s\n", t->stage, what);
			}
			if (pk_bisect_ambiguous(&t->result)) {
				printf("    ambiguous: skipped commits before it could have brought it instead:");
				for (guint s = 0; s < t->result.skipped->len; s++) {
					unsigned j = g_array_index(t->result.skipped, unsigned, s);
					printf(" %.12s (%s)", line_commit(b, j)->id, skip_reason(b, j));
				}
				printf("\n");
			}
		}
		if (index_more)
			printf("  index: and %u more printk index change%s (--json lists them)\n", index_more,
			       index_more == 1 ? "" : "s");
	}
	for (guint k = 0; k < b->targets->len; k++) {
		const struct target *t = b->targets->pdata[k];
		if (!t->searched)
			printf("\nnot searched (its records print elsewhere too, unchanged): %s\n", t->what);
	}
	printf("\n%u change%s between the ends; %u build%s (%u for the ends, %u for the search), "
	       "%u commit%s taken from the store\n", b->targets->len, b->targets->len == 1 ? "" : "s",
	       b->builds, b->builds == 1 ? "" : "s", b->builds_ends, b->builds - b->builds_ends,
	       b->from_store, b->from_store == 1 ? "" : "s");
}

static void print_json(const struct bisect *b)
{
	g_autoptr(JsonBuilder) j = json_builder_new();
	unsigned n = b->line->len - 1;

	json_builder_begin_object(j);
	pk_json_str(j, "range", b->range->spec);
	pk_json_str(j, "repo", b->range->repo);
	pk_json_str(j, "base", b->line->pdata[0]);
	pk_json_str(j, "tip", b->line->pdata[n]);
	pk_json_int(j, "commits", n);
	pk_json_str(j, "message", b->message);
	pk_json_int(j, "builds", b->builds);
	pk_json_int(j, "builds_ends", b->builds_ends);
	pk_json_int(j, "builds_search", b->builds - b->builds_ends);
	pk_json_int(j, "from_store", b->from_store);
	json_builder_set_member_name(j, "changes");
	json_builder_begin_array(j);
	for (guint k = 0; k < b->targets->len; k++) {
		const struct target *t = b->targets->pdata[k];
		const struct pk_range_commit *c = t->searched ? line_commit(b, t->result.first) : NULL;

		json_builder_begin_object(j);
		pk_json_str(j, "stage", t->stage);
		pk_json_str(j, "kind", t->kind);
		pk_json_str(j, "change", t->what);
		pk_json_bool(j, "searched", t->searched);
		pk_json_str(j, "commit", c ? c->id : NULL);
		pk_json_str(j, "subject", c ? c->subject : NULL);
		pk_json_str(j, "author", c ? c->author : NULL);
		pk_json_int(j, "time", c ? c->time : 0);
		pk_json_bool(j, "merge", c && c->merge);
		pk_json_bool(j, "ambiguous", t->searched && pk_bisect_ambiguous(&t->result));
		json_builder_set_member_name(j, "skipped");
		json_builder_begin_array(j);
		for (guint s = 0; t->searched && s < t->result.skipped->len; s++)
			json_builder_add_string_value(j, line_commit(b, g_array_index(t->result.skipped, unsigned, s))->id);
		json_builder_end_array(j);
		pk_json_int(j, "tests", t->searched ? t->result.tests : 0);
		json_builder_end_object(j);
	}
	json_builder_end_array(j);
	json_builder_end_object(j);
	pk_json_print(j);
}

static int bisect_status(const struct bisect *b)
{
	int status = 0;

	for (guint k = 0; k < b->targets->len; k++) {
		const struct target *t = b->targets->pdata[k];
		if (t->searched && pk_bisect_ambiguous(&t->result))
			status = 3;
	}
	return status;
}

/* ---------------------------------------------------------------- the command */

/* The ends, their diff, the targets, and each one searched; returns the exit status. */
static int bisect_range(struct bisect *b, GError **err)
{
	unsigned n = b->line->len - 1;
	g_autoptr(pk_kdiff) d = NULL;
	int rc;

	if ((rc = test_ends(b, err)) != 0)
		return rc < 0 ? -1 : 2;
	d = pk_kdiff_captures(b->tested[0]->side.boot.capture, b->tested[n]->side.boot.capture, b->noise);
	find_targets(b, d);
	for (guint k = 0; k < b->targets->len; k++) {
		struct target *t = b->targets->pdata[k];
		g_autofree char *at_tip = profile(b, t, b->tested[n]);

		if (strcmp(at_tip, t->base_profile) && search_target(b, t, err) < 0)
			return -1;
	}
	pk_progress("%s", "");
	if (!b->targets->len || (b->message && !((struct target *)b->targets->pdata[0])->searched)) {
		if (b->message)
			pk_info("nothing printing `%s` changed between %.12s and %.12s", b->message,
				(char *)b->line->pdata[0], (char *)b->line->pdata[n]);
		else
			pk_info("%.12s and %.12s print the same: nothing to bisect", (char *)b->line->pdata[0],
				(char *)b->line->pdata[n]);
		if (b->json)
			print_json(b);
		return 1;
	}
	if (b->json)
		print_json(b);
	else
		print_text(b);
	return bisect_status(b);
}

/* The command line of bisect (--config and --db are main's). */
struct bisect_opts {
	const char *repo;
	const char *message;
	bool json;
	double timeout;          /* 0: the config's, else the default */
	bool allow_build;        /* accepted, not used: a commit is built as it is */
};

static const struct pk_option bisect_options[] = {
	PK_OPTION_STRING("repo", struct bisect_opts, repo),
	PK_OPTION_STRING("message", struct bisect_opts, message),
	PK_OPTION_FLAG("json", struct bisect_opts, json),
	PK_OPTION_CONFIG,
	PK_OPTION_DURATION("timeout", struct bisect_opts, timeout),
	PK_OPTION_DB,
	PK_OPTION_FLAG("allow-build-system", struct bisect_opts, allow_build),
	{ NULL },
};

static int bisect_check(const struct pk_cmdline *cl, GError **err)
{
	const struct bisect_opts *o = cl->opts;

	if (o->message && !*o->message) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--message wants a text, not ''");
		return -1;
	}
	return 0;
}

static int cmd_bisect(struct pk_cmd_ctx *ctx)
{
	const struct bisect_opts *o = ctx->cmdline.opts;
	struct bisect b = { 0 };
	g_autoptr(GError) err = NULL;
	int status = 2;

	b.message = o->message;
	b.json = o->json;
	b.start = pk_now();
	b.targets = g_ptr_array_new_with_free_func(target_free);
	/* struct bisect owns its lab and store, as its workers expect */
	pk_cmd_ctx_take_lab(ctx, &b.lab);
	b.store = pk_cmd_ctx_take_store(ctx);
	b.opts.policy = ctx->config.policy;
	b.opts.boot_timeout = o->timeout ? o->timeout : ctx->config.boot_timeout;
	b.opts.progress = bisect_progress;
	b.opts.progress_data = &b;
	if (pk_range_load(&b.range, &b.lab, o->repo, (const char *const *)ctx->cmdline.args, false, &err) < 0 ||
	    make_line(&b, &err) < 0)
		goto fail;
	if ((status = bisect_range(&b, &err)) < 0)
		goto fail;
	if (status == 2)
		fprintf(stderr, "printkbot bisect: %s\n", err->message);
	goto out;
fail:
	pk_progress("%s", "");
	fprintf(stderr, "printkbot bisect: %s\n", err->message);
	status = 2;
out:
	for (guint i = 0; b.tested && i < b.line->len; i++)
		tested_free(b.tested[i]);
	g_free(b.tested);
	if (b.line)
		g_ptr_array_unref(b.line);
	g_ptr_array_unref(b.targets);
	pk_noise_free(b.noise);
	pk_range_free(b.range);
	pk_store_close(b.store);
	pk_lab_clear(&b.lab);
	return status;
}

const struct pk_cmd_spec cmd_bisect_spec = {
	.usage = bisect_usage,
	.options = bisect_options,
	.opts_size = sizeof(struct bisect_opts),
	.args_name = "RANGE...",
	.args_min = 1, .args_max = G_MAXUINT,
	.check = bisect_check,
	.setup_status = 2,
	.run = cmd_bisect,
};
