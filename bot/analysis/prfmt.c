/*
 * prfmt.c - the pr_fmt() findings of a file: its definition added,
 * removed or changed, the prefix before and after (with a tree), and how
 * many pr_*() calls the change moves (scan-private.h).
 */
#include "analysis/scan-private.h"

#include <string.h>

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

/* The prefix a pr_fmt() body gives in the file, or what applies without one. */
static char *prfmt_prefix(struct pk_scan_ctx *x, const struct prfmt *p, gboolean post)
{
	const struct pk_tree_file *d;

	pk_scan_ctx_describe(x);
	d = post ? (x->new_desc ? x->new_desc : x->old_desc) : x->old_desc;
	if (!d)
		return NULL;
	if (p)
		return pk_tree_eval_prefix(x->tree, d, p->body);
	/* without the file's own definition: a header's or the includer's, or none */
	if (post && !x->post_text)
		return NULL;
	return g_strdup(d->prefix);
}

static void add_prfmt(struct pk_scan_ctx *x, enum pk_finding_kind kind, const struct prfmt *o,
		      const struct prfmt *n)
{
	struct pk_finding *f = pk_scan_add_finding(x, kind, NULL, NULL, NULL);
	const char *what = !o ? "is added" : !n ? "is removed" : "changes";
	g_autofree char *calls = NULL;
	unsigned included = 0;

	f->line = n ? n->line : o->line;
	f->old_text = o ? g_strdup(o->body) : NULL;
	f->new_text = n ? g_strdup(n->body) : NULL;
	f->affected = prfmt_affected(x, &f->affected_whole_file, &included);
	if (x->tree) {
		f->old_prefix = prfmt_prefix(x, o, FALSE);
		f->new_prefix = prfmt_prefix(x, n, TRUE);
	}
	calls = included ? g_strdup_printf("%u pr_*() call(s) of the file (%u of them in the .c "
					   "files it #includes)", f->affected, included)
			 : g_strdup_printf("%u pr_*() call(s) of the file", f->affected);
	if (!f->affected_whole_file) {
		f->message = g_strdup_printf("pr_fmt() %s: every pr_*() in the file changes prefix "
					     "(%u in this patch)", what, f->affected);
	} else if (!f->old_prefix || !f->new_prefix) {
		f->message = g_strdup_printf("pr_fmt() %s: the prefix of the %s changes", what, calls);
	} else if (!strcmp(f->old_prefix, f->new_prefix)) {
		f->silent = TRUE;
		f->message = g_strdup_printf("pr_fmt() %s but the %s still print \"%s\" before "
					     "their text: no console change", what, calls, f->new_prefix);
	} else {
		f->message = g_strdup_printf("pr_fmt() %s: the %s print \"%s\" before their text "
					     "instead of \"%s\"", what, calls, f->new_prefix, f->old_prefix);
	}
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
