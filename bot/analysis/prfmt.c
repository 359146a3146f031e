/*
 * prfmt.c - the pr_fmt() findings of a file: its definition added,
 * removed or changed, the prefix before and after (with a tree), and how
 * many pr_*() calls the change moves (scan-private.h).
 */
#include "analysis/scan-private.h"

#include <string.h>

/* Ask the tree about the file once: pre-image, post-image, their prefixes. */
void pk_scan_ctx_describe(struct pk_scan_ctx *x)
{
	const struct pk_diff_file *f = x->dfile;
	const char *old_text;

	if (!x->tree || x->described)
		return;
	x->described = TRUE;
	old_text = f->old_path ? pk_tree_read(x->tree, f->old_path) : "";
	if (old_text && f->new_path)
		x->post_text = pk_diff_file_apply(f, old_text);
	if (f->old_path)
		x->old_desc = pk_tree_describe(x->tree, f->old_path, NULL);
	if (f->new_path)
		x->new_desc = pk_tree_describe(x->tree, f->new_path, x->post_text);
}

/* The pr_fmt()-prefixed calls of a whole file's text. */
static unsigned count_prefixed_calls(const char *text)
{
	g_auto(GStrv) lines = NULL;
	struct pk_hunk h = { 0 };
	g_autoptr(GPtrArray) calls = NULL;
	unsigned n = 0;

	if (!strstr(text, "pr_"))
		return 0;
	lines = g_strsplit(text, "\n", -1);
	h.lines = g_ptr_array_new_with_free_func(g_free);
	for (int i = 0; lines[i]; i++) {
		struct pk_diff_line *l = g_new0(struct pk_diff_line, 1);
		l->kind = ' ';
		l->old_no = l->new_no = i + 1;
		l->text = lines[i];     /* borrowed from lines */
		g_ptr_array_add(h.lines, l);
	}
	calls = pk_lexer_calls(&h, '+');
	for (guint i = 0; i < calls->len; i++)
		n += pk_call_uses_pr_fmt(calls->pdata[i]);
	g_ptr_array_unref(h.lines);
	return n;
}

/* A pr_fmt() definition: its body with the parameter renamed to "fmt". */
struct prfmt {
	int line;
	char *body;
};

static struct prfmt *parse_prfmt(const struct pk_diff_line *l)
{
	char *body = pk_tree_pr_fmt_body(l->text);
	struct prfmt *p;

	if (!body)
		return NULL;
	p = g_new0(struct prfmt, 1);
	p->line = l->kind == '-' ? l->old_no : l->new_no;
	p->body = body;
	return p;
}

static void prfmt_free(gpointer p)
{
	struct prfmt *f = p;

	g_free(f->body);
	g_free(f);
}

/*
 * How many pr_*() calls a pr_fmt() change moves: with the tree, those of
 * the post-image (or of the tree's file adjusted by the patch's additions
 * and removals, when the patch does not apply to it) and of the .c files it
 * #includes; else those the hunks show.
 */
static unsigned prfmt_affected(struct pk_scan_ctx *x, gboolean *whole_file, unsigned *included)
{
	const struct pk_tree_file *d;
	const char *text;
	unsigned n;

	pk_scan_ctx_describe(x);
	d = x->new_desc ? x->new_desc : x->old_desc;
	*whole_file = FALSE;
	*included = 0;
	if (!d)
		return x->pr_calls;
	if (x->post_text) {
		n = count_prefixed_calls(x->post_text);
	} else if (x->dfile->old_path && (text = pk_tree_read(x->tree, x->dfile->old_path))) {
		int adjusted = (int)count_prefixed_calls(text) + x->pr_delta;
		n = (unsigned)MAX(adjusted, 0);
	} else {
		return x->pr_calls;
	}
	for (guint i = 0; d->includes && i < d->includes->len; i++)
		if ((text = pk_tree_read(x->tree, d->includes->pdata[i])))
			*included += count_prefixed_calls(text);
	*whole_file = TRUE;
	return n + *included;
}

/* What the hunks show of the file, side which ('-' or '+') and context: where macros are looked up. */
static char *shown_text(const struct pk_diff_file *f, char which)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < f->hunks->len; i++) {
		const struct pk_hunk *h = f->hunks->pdata[i];
		for (guint j = 0; j < h->lines->len; j++) {
			const struct pk_diff_line *l = h->lines->pdata[j];
			if (l->kind == ' ' || l->kind == which)
				g_string_append_printf(s, "%s\n", l->text);
		}
	}
	return g_string_free(s, FALSE);
}

/* The tree's description of the file on one side (the other's when it has none), or NULL. */
static const struct pk_tree_file *side_desc(const struct pk_scan_ctx *x, gboolean post)
{
	return post ? (x->new_desc ? x->new_desc : x->old_desc) : (x->old_desc ? x->old_desc : x->new_desc);
}

/*
 * The prefix a pr_fmt() body prints in the file on one side, or NULL; the
 * arguments of its conversions known per call only in *args (tree.h).
 */
static char *body_prefix(struct pk_scan_ctx *x, const char *body, gboolean post, char ***args)
{
	const struct pk_tree_file *d = side_desc(x, post);
	g_autofree char *shown = NULL;
	char *prefix = d ? pk_tree_eval_prefix(x->tree, d, body, args) : NULL;

	/* the tree knows KBUILD_MODNAME unless no makefile builds the file (a new one) */
	if (prefix || (d && d->modname))
		return prefix;
	shown = shown_text(x->dfile, post ? '+' : '-');
	return pk_tree_guess_prefix(x->file, shown, body, args);
}

/* A tree's prefix of the file and its arguments. */
static char *desc_prefix(const struct pk_tree_file *d, char ***args)
{
	*args = g_strdupv(d->prefix_args);
	return g_strdup(d->prefix);
}

/* A pr_fmt() definition the hunks show as context, or NULL. */
static char *context_prfmt(const struct pk_diff_file *f)
{
	for (guint i = 0; i < f->hunks->len; i++) {
		const struct pk_hunk *h = f->hunks->pdata[i];
		for (guint j = 0; j < h->lines->len; j++) {
			const struct pk_diff_line *l = h->lines->pdata[j];
			char *body = l->kind == ' ' && strstr(l->text, "pr_fmt") ?
				     pk_tree_pr_fmt_body(l->text) : NULL;
			if (body)
				return body;
		}
	}
	return NULL;
}

/* The prefix before the patch and its arguments: see pk_scan_file_prefix(). */
static char *file_prefix_before(struct pk_scan_ctx *x, const char *context_body, char ***args)
{
	const GPtrArray *olds = x->prfmt_olds, *news = x->prfmt_news;

	if (olds && olds->len)
		return body_prefix(x, ((const struct prfmt *)olds->pdata[0])->body, FALSE, args);
	if (x->tree)
		return x->old_desc ? desc_prefix(x->old_desc, args) : x->dfile->old_path ? NULL : g_strdup("");
	if (context_body)
		return body_prefix(x, context_body, FALSE, args);
	/* the file gains its first pr_fmt(): printk.h's empty default applied */
	return news && news->len ? g_strdup("") : NULL;
}

/* The prefix after the patch and its arguments: see pk_scan_file_prefix(). */
static char *file_prefix_after(struct pk_scan_ctx *x, const char *context_body, char ***args)
{
	const GPtrArray *olds = x->prfmt_olds, *news = x->prfmt_news;

	if (x->tree && x->post_text && x->new_desc)
		return desc_prefix(x->new_desc, args);
	if (news && news->len)
		return body_prefix(x, ((const struct prfmt *)news->pdata[0])->body, TRUE, args);
	if (olds && olds->len)
		return g_strdup("");    /* removed, nothing in its place */
	if (x->tree)
		return x->new_desc ? desc_prefix(x->new_desc, args) : NULL;
	return context_body ? body_prefix(x, context_body, TRUE, args) : NULL;
}

const char *pk_scan_file_prefix(struct pk_scan_ctx *x, gboolean post)
{
	if (!x->prefixes_known) {
		g_autofree char *context_body = context_prfmt(x->dfile);

		x->prefixes_known = TRUE;
		pk_scan_ctx_describe(x);
		x->old_prefix = file_prefix_before(x, context_body, &x->old_prefix_args);
		x->new_prefix = file_prefix_after(x, context_body, &x->new_prefix_args);
	}
	return post ? x->new_prefix : x->old_prefix;
}

void pk_scan_file_env(struct pk_scan_ctx *x, gboolean post, struct pk_fold_env *env)
{
	const char *path = post ? x->dfile->new_path : x->dfile->old_path;
	char **modname = post ? &x->new_modname : &x->old_modname;
	char **basename = post ? &x->new_basename : &x->old_basename;

	if (!x->env_known[post]) {
		const struct pk_tree_file *d;

		x->env_known[post] = TRUE;
		pk_scan_ctx_describe(x);
		d = side_desc(x, post);
		if (!path)
			path = x->file;
		/* the tree knows KBUILD_MODNAME unless no makefile builds the file (a new one) */
		*modname = d && d->modname ? g_strdup(d->modname) : pk_tree_guess_modname(path);
		/* KBUILD_BASENAME: the unit's stem, name-fixed as a modname is */
		*basename = pk_tree_guess_modname(d && d->unit ? d->unit : path);
	}
	env->modname = *modname;
	env->basename = *basename;
}

/* A prefix for sentences: "\"x: \"", or "\"%s: \" with __func__" when it has arguments. */
static char *shown_prefix(const char *prefix, char **args)
{
	g_autofree char *joined = args ? g_strjoinv(", ", args) : NULL;

	return joined ? g_strdup_printf("\"%s\" with %s", prefix, joined) : g_strdup_printf("\"%s\"", prefix);
}

/* The prefixes clause of a pr_fmt-* message: ": ... print "b" ... instead of "a"". */
static char *prfmt_says(struct pk_scan_ctx *x, const struct pk_finding *f, const char *calls,
			gboolean *silent)
{
	g_autofree char *op = NULL, *np = NULL;

	*silent = FALSE;
	if (!f->old_prefix || !f->new_prefix)
		return g_strdup_printf("the prefix of %s changes", calls);
	op = shown_prefix(f->old_prefix, x->old_prefix_args);
	np = shown_prefix(f->new_prefix, x->new_prefix_args);
	if (!strcmp(op, np)) {
		*silent = TRUE;
		return g_strdup_printf("%s still print %s before their text: no console change", calls, np);
	}
	return g_strdup_printf("%s print %s before their text instead of %s", calls, np, op);
}

/*
 * The pr_fmt-* finding.  The calls the patch adds or rewrites are judged
 * each on its own (prefix and format as printed), so affected counts the
 * others, those whose text the patch does not show changing.
 */
static void add_prfmt(struct pk_scan_ctx *x, enum pk_finding_kind kind, const struct prfmt *o,
		      const struct prfmt *n)
{
	struct pk_finding *f = pk_finding_new(x->file, kind);
	const char *what = !o ? "is added" : !n ? "is removed" : "changes";
	g_autofree char *calls = NULL, *says = NULL, *own = NULL;
	unsigned included = 0, all;

	f->line = n ? n->line : o->line;
	f->old_text = o ? g_strdup(o->body) : NULL;
	f->new_text = n ? g_strdup(n->body) : NULL;
	all = prfmt_affected(x, &f->affected_whole_file, &included);
	f->affected = all > x->pr_touched ? all - x->pr_touched : 0;
	f->old_prefix = g_strdup(pk_scan_file_prefix(x, FALSE));
	f->new_prefix = g_strdup(pk_scan_file_prefix(x, TRUE));
	own = x->pr_touched ? g_strdup_printf(", besides the %u the patch adds or rewrites",
					      x->pr_touched) : g_strdup("");
	if (!f->affected_whole_file) {
		calls = g_strdup_printf("every other pr_*() call of the file (%u in this patch%s)",
					f->affected, own);
		says = prfmt_says(x, f, calls, &f->silent);
	} else if (!f->affected && x->pr_touched) {
		/* (a header's calls are not counted: with none rewritten, not silent) */
		f->silent = TRUE;
		says = g_strdup_printf("no pr_*() call of the file prints it%s", own);
	} else {
		calls = included ? g_strdup_printf("%u pr_*() call(s) of the file (%u of them in the .c "
						   "files it #includes%s)", f->affected, included, own)
				 : g_strdup_printf("%u pr_*() call(s) of the file%s", f->affected, own);
		says = prfmt_says(x, f, calls, &f->silent);
	}
	f->message = g_strdup_printf("pr_fmt() %s: %s", what, says);
	g_ptr_array_add(x->scan->findings, f);
}

void pk_scan_prfmt_lines(const struct pk_diff_file *file, GPtrArray **out_olds,
			 GPtrArray **out_news)
{
	GPtrArray *olds = g_ptr_array_new_with_free_func(prfmt_free);
	GPtrArray *news = g_ptr_array_new_with_free_func(prfmt_free);

	for (guint i = 0; i < file->hunks->len; i++) {
		const struct pk_hunk *h = file->hunks->pdata[i];
		for (guint j = 0; j < h->lines->len; j++) {
			const struct pk_diff_line *l = h->lines->pdata[j];
			struct prfmt *p = l->kind == ' ' || !strstr(l->text, "pr_fmt") ? NULL : parse_prfmt(l);
			if (p)
				g_ptr_array_add(l->kind == '-' ? olds : news, p);
		}
	}
	*out_olds = olds;
	*out_news = news;
}

/* A parameter rename alone is no change. */
void pk_scan_prfmt(struct pk_scan_ctx *x, const GPtrArray *olds, const GPtrArray *news)
{
	if (olds->len && news->len) {
		const struct prfmt *o = olds->pdata[0], *n = news->pdata[0];
		if (strcmp(o->body, n->body))
			add_prfmt(x, PK_FINDING_PR_FMT_CHANGED, o, n);
	} else if (olds->len) {
		add_prfmt(x, PK_FINDING_PR_FMT_REMOVED, olds->pdata[0], NULL);
	} else if (news->len) {
		add_prfmt(x, PK_FINDING_PR_FMT_ADDED, NULL, news->pdata[0]);
	}
}
