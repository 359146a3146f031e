/*
 * scan.c - static logging-churn scanner; see scan.h for the contract.
 *
 * For each file of a patch: the calls of each hunk's two sides (lexer.c),
 * those the hunk changes, paired removed with added by the likeness of
 * their text; a pair is a rewritten call, judged by family, prefix, level,
 * text and the lines it is written on; what is left was removed or added.
 * The file's pr_fmt() is judged last (prfmt.c).
 */
#include "analysis/scan-private.h"
#include "base/profile.h"
#include "base/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- findings */

void pk_scan_free(struct pk_scan *s)
{
	if (!s)
		return;
	g_ptr_array_unref(s->findings);
	g_free(s);
}

/* Format text for comparing: trailing "\n" dropped, blanks folded. */
static char *norm_text(const char *t)
{
	GString *s = g_string_new(NULL);
	size_t n = strlen(t);

	if (n >= 2 && !strcmp(t + n - 2, "\\n"))
		n -= 2;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isspace(t[i]) || (s->len && s->str[s->len - 1] != ' '))
			g_string_append_c(s, g_ascii_isspace(t[i]) ? ' ' : t[i]);
	return g_string_free(s, FALSE);
}

/* Texts compared by LCS are cut to this many bytes: a longer message is told by its start. */
#define SIMILARITY_CHARS 400

/*
 * 2 * LCS / (|a| + |b|): 1.0 for equal strings, near 0 for unrelated ones.
 * The cells computed are taken from *cells; 0 when it cannot pay for them.
 * Not instrumented for libFuzzer's coverage (clang): a call per compared
 * cell tells the fuzzer nothing and was much of fuzz-scan's time.
 */
#if defined(__clang__)
__attribute__((noinline, no_sanitize("coverage")))  /* inlined, it would be instrumented */
#endif
static double similarity(const char *a, const char *b, guint64 *cells)
{
	size_t la = MIN(strlen(a), SIMILARITY_CHARS), lb = MIN(strlen(b), SIMILARITY_CHARS);
	/* two rows on the stack: no allocation per compared pair */
	int rows[2][SIMILARITY_CHARS + 1] = { { 0 } };
	int *prev = rows[0], *cur = rows[1];

	if (!la && !lb)
		return 1.0;
	if ((guint64)la * lb > *cells) {
		*cells = 0;
		return 0;
	}
	*cells -= (guint64)la * lb;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++)
			cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : MAX(prev[j], cur[j - 1]);
		int *t = prev;
		prev = cur;
		cur = t;
	}
	return 2.0 * prev[lb] / (double)(la + lb);
}

static gboolean has_newline(const struct pk_call *c)
{
	return g_str_has_suffix(c->text->str, "\\n");
}

/* A call printing a prefix of its own: a device name, a subsystem wrapper's. */
static gboolean is_device(const struct pk_call *c)
{
	return c->fam == PK_FAM_DEV || c->fam == PK_FAM_NETDEV || c->fam == PK_FAM_SUBSYS;
}

/* The level a reader sees: "default" for printk() without KERN_. */
static const char *shown_level(const struct pk_call *c)
{
	if (c->cont)
		return "cont";
	return c->level ? c->level : "default";
}

static void ctx_clear(struct pk_scan_ctx *x)
{
	pk_tree_file_free(x->old_desc);
	pk_tree_file_free(x->new_desc);
	g_free(x->post_text);
	g_free(x->old_prefix);
	g_free(x->new_prefix);
	g_strfreev(x->old_prefix_args);
	g_strfreev(x->new_prefix_args);
	g_free(x->old_modname);
	g_free(x->new_modname);
	g_free(x->old_basename);
	g_free(x->new_basename);
	if (x->renamed)
		g_hash_table_unref(x->renamed);
}

/*
 * The functions a file's hunks rename: a hunk that removes the definition
 * of a() and adds the one of b() in its place (the n-th removed with the
 * n-th added).  git names a hunk's function from the pre-image, so a later
 * hunk of b() has a() in its header.
 */
static GHashTable *renamed_functions(const struct pk_diff_file *f)
{
	GHashTable *renamed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

	for (guint i = 0; i < f->hunks->len; i++) {
		const struct pk_hunk *h = f->hunks->pdata[i];
		g_autoptr(GPtrArray) olds = g_ptr_array_new_with_free_func(g_free);
		g_autoptr(GPtrArray) news = g_ptr_array_new_with_free_func(g_free);

		for (guint j = 0; j < h->lines->len; j++) {
			const struct pk_diff_line *l = h->lines->pdata[j];
			char *name = l->kind != ' ' && strchr(l->text, '(') ?
				     pk_lexer_function_defined(l->text) : NULL;
			if (name)
				g_ptr_array_add(l->kind == '-' ? olds : news, name);
		}
		for (guint k = 0; k < olds->len && k < news->len; k++)
			if (strcmp(olds->pdata[k], news->pdata[k]))
				g_hash_table_replace(renamed, g_strdup(olds->pdata[k]), g_strdup(news->pdata[k]));
	}
	return renamed;
}

/* The function a call is in on its side: after the patch, under its new name. */
static const char *call_function(const struct pk_scan_ctx *x, const struct pk_call *c, gboolean post)
{
	const char *renamed = post && c->func && c->func_from_header && x->renamed ?
			      g_hash_table_lookup(x->renamed, c->func) : NULL;

	return renamed ? renamed : c->func;
}

/* What the compiler knows where a call is (fold.h). */
static void call_env(struct pk_scan_ctx *x, const struct pk_call *c, gboolean post, struct pk_fold_env *env)
{
	pk_scan_file_env(x, post, env);
	env->func = call_function(x, c, post);
}

/*
 * The format a call prints, C escapes kept: its literals, the names fold.h
 * knows among its macros, and the "%s" of its known arguments folded in;
 * an unknown macro stays "{NAME}", an unknown argument's conversion stays.
 */
static char *printed_format(struct pk_scan_ctx *x, const struct pk_call *c, gboolean post)
{
	struct pk_fold_env env;
	g_autoptr(GString) fmt = g_string_new(NULL);

	call_env(x, c, post, &env);
	for (guint i = 0; i < c->toks->len; i++) {
		const struct pk_fmt_tok *t = &g_array_index(c->toks, struct pk_fmt_tok, i);
		const char *v = t->literal || t->len < 2 ? NULL :
				pk_fold_name(&env, c->text->str + t->start + 1, t->len - 2);
		if (v)
			g_string_append(fmt, v);
		else
			g_string_append_len(fmt, c->text->str + t->start, t->len);
	}
	return pk_fold_format(fmt->str, (const char *const *)c->args->pdata, c->args->len, &env, NULL);
}

/* What a call prints for comparing: printed_format(), then norm_text(). */
static char *printed_text(struct pk_scan_ctx *x, const struct pk_call *c, gboolean post)
{
	g_autofree char *f = printed_format(x, c, post);

	return norm_text(f);
}

/*
 * The prefix the file's pr_fmt() prints on one side for a pr_*() call at
 * c's place (its conversions folded with c's function), NULL when unknown.
 */
static char *pr_fmt_prefix_at(struct pk_scan_ctx *x, const struct pk_call *c, gboolean post)
{
	const char *prefix = pk_scan_file_prefix(x, post);
	char **args = post ? x->new_prefix_args : x->old_prefix_args;
	struct pk_fold_env env;

	if (!prefix || !args)
		return g_strdup(prefix);
	call_env(x, c, post, &env);
	return pk_fold_format(prefix, (const char *const *)args, g_strv_length(args), &env, NULL);
}

/*
 * The prefix a call prints on one side: NULL when unknown or per device.
 * Without a tree only what the patch shows of the file's pr_fmt() is known.
 */
static char *call_prefix(struct pk_scan_ctx *x, const struct pk_call *c, gboolean post)
{
	const char *file_prefix;

	if (is_device(c))
		return NULL;
	file_prefix = pk_scan_file_prefix(x, post);
	if (!x->tree && !file_prefix)
		return NULL;
	if (!pk_call_uses_pr_fmt(c))
		return g_strdup("");
	return pr_fmt_prefix_at(x, c, post);
}

struct pk_finding *pk_scan_add_finding(struct pk_scan_ctx *x, enum pk_finding_kind kind,
				       const struct pk_call *o, const struct pk_call *n,
				       char *message)
{
	struct pk_finding *f = pk_finding_new(x->file, kind);

	f->line = n ? n->line : o ? o->line : 0;
	if (o) {
		f->old_call = g_strdup(o->written);
		f->old_level = shown_level(o);
		f->old_text = g_strdup(o->text->str);
		f->old_prefix = call_prefix(x, o, FALSE);
	}
	if (n) {
		f->new_call = g_strdup(n->written);
		f->new_level = shown_level(n);
		f->new_text = g_strdup(n->text->str);
		f->new_prefix = call_prefix(x, n, TRUE);
	}
	f->message = message;
	g_ptr_array_add(x->scan->findings, f);
	return f;
}

/* A short quote of a message for sentences: what it prints (printed_text()). */
static char *quote(struct pk_scan_ctx *x, const struct pk_call *c, gboolean post)
{
	g_autofree char *t = printed_text(x, c, post);

	if (strlen(t) > 48)
		return g_strdup_printf("\"%.45s...\"", t);
	if (!*t && has_newline(c))
		return g_strdup("\"\\n\"");   /* printk("\n") ends a line: say so */
	return g_strdup_printf("\"%s\"", t);
}

/*
 * ", and gains the prefix "x: " of the file's pr_fmt()" (post) or ", and
 * loses the prefix "x: " pr_fmt() gave it" (the pre-image's), or "" when
 * no prefix comes or goes.
 */
static char *prefix_clause(const char *prefix, gboolean post)
{
	if (!prefix || !*prefix)
		return g_strdup("");
	if (post)
		return g_strdup_printf(", and gains the prefix \"%s\" of the file's pr_fmt()", prefix);
	return g_strdup_printf(", and loses the prefix \"%s\" pr_fmt() gave it", prefix);
}

/*
 * What a rewritten call prints, prefix and format together (trailing "\n"
 * dropped, blanks folded): the console shows the two as one text, so a
 * prefix written into the format and one moved into pr_fmt() print alike.
 */
struct printed {
	char *op, *np;          /* the prefixes, NULL when unknown */
	char *ot, *nt;          /* the formats, as printed_text() gives them */
	gboolean known;         /* both prefixes are known */
	gboolean same;          /* known, and prefix + format print the same */
	gboolean start_moved;   /* known, and only the prefix appears, vanishes or changes */
};

static void printed_init(struct printed *pr, struct pk_scan_ctx *x, const struct pk_call *o,
			 const struct pk_call *n)
{
	pr->op = call_prefix(x, o, FALSE);
	pr->np = call_prefix(x, n, TRUE);
	pr->ot = printed_text(x, o, FALSE);
	pr->nt = printed_text(x, n, TRUE);
	pr->known = pr->op && pr->np;
	if (pr->known) {
		g_autofree char *po = g_strconcat(pr->op, pr->ot, NULL);
		g_autofree char *pn = g_strconcat(pr->np, pr->nt, NULL);
		pr->same = !strcmp(po, pn);
		/*
		 * Only the prefix changes when the format prints the same: with
		 * the format rewritten too ("x: " moved into pr_fmt(), or the
		 * function of "%s: ", __func__ changing) the printed texts
		 * are compared whole (pair_text()).
		 */
		pr->start_moved = strcmp(pr->op, pr->np) && !strcmp(pr->ot, pr->nt);
	}
}

static void printed_clear(struct printed *pr)
{
	g_free(pr->op);
	g_free(pr->np);
	g_free(pr->ot);
	g_free(pr->nt);
}

/* The prefix-changed finding of a call whose printed start changes. */
static void add_prefix_changed(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n,
			       const struct printed *pr)
{
	g_autofree char *what = NULL;
	g_autofree char *call = strcmp(o->name, n->name) ?
				g_strdup_printf("%s() becomes %s(), and ", o->name, n->name) : g_strdup("");

	if (!*pr->np)
		what = g_strdup_printf("the message loses the prefix \"%s\" pr_fmt() gave it", pr->op);
	else if (!*pr->op)
		what = g_strdup_printf("the message gains the prefix \"%s\" of the file's pr_fmt()", pr->np);
	else
		what = g_strdup_printf("the message prints \"%s\" before its text instead of \"%s\" "
				       "(the file's pr_fmt() after the patch and before it)", pr->np, pr->op);
	pk_scan_add_finding(x, PK_FINDING_PREFIX_CHANGED, o, n, g_strdup_printf("%s%s", call, what));
}

/* A printk() <-> pr_*() conversion: silent unless what it prints changes at the start. */
static void pair_converted(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n,
			   const struct printed *pr)
{
	if (!pr->known)
		pk_scan_add_finding(x, PK_FINDING_CALL_CONVERTED, o, n, g_strdup_printf(
			"%s() becomes %s() with the same level: no console change unless a pr_fmt() "
			"applies", o->name, n->name));
	else if (pr->start_moved)
		add_prefix_changed(x, o, n, pr);
	else if (pr->same)
		pk_scan_add_finding(x, PK_FINDING_CALL_CONVERTED, o, n, g_strdup_printf(
			"%s() becomes %s() with the same level, and prints \"%s%s\" as before: "
			"no console change", o->name, n->name, pr->np, pr->nt));
	else
		pk_scan_add_finding(x, PK_FINDING_CALL_CONVERTED, o, n, g_strdup_printf(
			"%s() becomes %s() with the same level, printing \"%s\" before its text",
			o->name, n->name, pr->np));
}

/* WARN*() and panic() <-> another call; TRUE when it was one. */
static gboolean pair_stops(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n,
			   const char *q)
{
	if ((o->fam == PK_FAM_PANIC) != (n->fam == PK_FAM_PANIC)) {
		pk_scan_add_finding(x, PK_FINDING_WARN_CONVERTED, o, n, g_strdup_printf(
			o->fam == PK_FAM_PANIC ? "%s() becomes %s(): after %s the kernel no longer stops"
					       : "%s() becomes %s(): after %s the kernel now stops (panics)",
			o->name, n->name, q));
		return TRUE;
	}
	if ((o->fam == PK_FAM_WARN) == (n->fam == PK_FAM_WARN))
		return FALSE;
	if (o->fam == PK_FAM_WARN)
		pk_scan_add_finding(x, PK_FINDING_WARN_CONVERTED, o, n, g_strdup_printf(
			"%s() becomes %s(): %s stays, but the WARNING: line, the backtrace "
			"and the taint flag go", o->name, n->name, q));
	else
		pk_scan_add_finding(x, PK_FINDING_WARN_CONVERTED, o, n, g_strdup_printf(
			"%s() becomes %s(): %s now comes with a WARNING: line, a backtrace "
			"and the taint flag", o->name, n->name, q));
	return TRUE;
}

/* Whether two device-prefixed calls print the same kind of prefix (dev_*(), drm_*()...). */
static gboolean same_wrapper(const struct pk_call *o, const struct pk_call *n)
{
	if (o->fam != n->fam)
		return FALSE;
	return o->fam != PK_FAM_SUBSYS ||
	       (o->subsys_len == n->subsys_len && !strncmp(o->name, n->name, o->subsys_len));
}

/* Prefix and family findings of a rewritten call; TRUE when they said the prefix. */
static gboolean pair_family(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n,
			    const char *q, const struct printed *pr)
{
	gboolean stops = pair_stops(x, o, n, q);

	if (is_device(o) && !is_device(n)) {
		g_autofree char *gain = prefix_clause(pr->np, TRUE);
		pk_scan_add_finding(x, PK_FINDING_DEVICE_PREFIX_LOST, o, n, g_strdup_printf(
			"%s() becomes %s(): %s loses its device name prefix%s", o->name, n->name, q, gain));
		return TRUE;
	}
	if (!is_device(o) && is_device(n)) {
		g_autofree char *lose = prefix_clause(pr->op, FALSE);
		pk_scan_add_finding(x, PK_FINDING_DEVICE_PREFIX_ADDED, o, n, g_strdup_printf(
			"%s() becomes %s(): %s gains a device name prefix%s", o->name, n->name, q, lose));
		return TRUE;
	}
	if (stops)
		return FALSE;
	if (is_device(o) && !same_wrapper(o, n)) {
		pk_scan_add_finding(x, PK_FINDING_PREFIX_CHANGED, o, n, g_strdup_printf(
			"%s() becomes %s(): %s prints the prefix of %s() instead of the one of %s()",
			o->name, n->name, q, n->name, o->name));
		return TRUE;
	}
	if (o->fam != n->fam && !n->dynamic && !strcmp(shown_level(o), shown_level(n))) {
		pair_converted(x, o, n, pr);
		return TRUE;
	}
	return FALSE;
}

/* Level, continuation and dynamic-debug findings of a rewritten call. */
static void pair_level(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n,
		       const char *q)
{
	const char *ol = shown_level(o), *nl = shown_level(n);

	if (n->dynamic && !o->dynamic)
		pk_scan_add_finding(x, PK_FINDING_DEBUG_COMPILED_OUT, o, n, g_strdup_printf(
			"%s() becomes %s(): %s vanishes unless DEBUG or dynamic debug enables it",
			o->name, n->name, q));
	if (n->probe && !o->probe)
		pk_scan_add_finding(x, PK_FINDING_DEBUG_COMPILED_OUT, o, n, g_strdup_printf(
			"%s() becomes %s(): %s gets \"error %%pe: \" before it, and when the error is "
			"-EPROBE_DEFER it is printed at debug level only, so it vanishes unless DEBUG "
			"or dynamic debug enables it", o->name, n->name, q));
	else if (o->probe && !n->probe)
		pk_scan_add_finding(x, PK_FINDING_TEXT_CHANGED, o, n, g_strdup_printf(
			"%s() becomes %s(): %s loses the \"error %%pe: \" before it, and is printed "
			"on -EPROBE_DEFER too", o->name, n->name, q));
	if (o->cont && !n->cont) {
		pk_scan_add_finding(x, PK_FINDING_CONT_BROKEN, o, n, g_strdup_printf(
			"%s is no longer a continuation: it starts a new line", q));
		return;
	}
	if (!o->cont && n->cont) {
		pk_scan_add_finding(x, PK_FINDING_CONT_ADDED, o, n, g_strdup_printf(
			"%s becomes a continuation of the previous line", q));
		return;
	}
	if (!strcmp(ol, nl) || (n->dynamic && !strcmp(ol, "debug")))
		return;
	/* printk() without a level: scan_level_missing() */
	if (n->fam != PK_FAM_PRINTK || n->level)
		pk_scan_add_finding(x, PK_FINDING_LEVEL_CHANGED, o, n, g_strdup_printf(
			"%s moves from %s to %s level", q, ol, nl));
}

/*
 * The call before n on its side of the hunk, in the same function, when it
 * leaves its line open: printk() or pr_*() (dev_*() always end theirs)
 * without a trailing "\n".  NULL otherwise.
 */
static const struct pk_call *open_line_before(const struct pk_scan_ctx *x, const struct pk_call *n)
{
	const struct pk_call *p = n->prev;

	if (!p || (p->fam != PK_FAM_PRINTK && p->fam != PK_FAM_PR) || p->dynamic || has_newline(p) ||
	    g_strcmp0(call_function(x, p, TRUE), call_function(x, n, TRUE)))
		return NULL;
	return p;
}

/*
 * level-missing: n is printk() without a KERN_ level and without KERN_CONT,
 * so it starts a line of its own at the default level (only KERN_CONT
 * continues a line, since Linux 4.9).  o is the call it rewrites, or NULL
 * for an added call.  Silent when o printed at the default level on a line
 * of its own already; then only on an added line, as checkpatch's
 * PRINTK_WITHOUT_KERN_LEVEL.
 */
static void scan_level_missing(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n,
			       const char *q)
{
	const struct pk_call *open = open_line_before(x, n);
	g_autofree char *oq = open ? quote(x, open, TRUE) : NULL;
	g_autofree char *text = printed_text(x, n, TRUE);
	g_autofree char *what = NULL, *after = NULL;
	gboolean same = o && !o->cont && !strcmp(shown_level(o), "default");

	if (n->fam != PK_FAM_PRINTK || n->level || n->cont || (same && n->dl->kind != '+'))
		return;
	if (!*text)     /* printk("\n") */
		what = open ? g_strdup_printf("%s() of %s has no KERN_ level: without KERN_CONT it does not "
					      "end the line %s left open before it, but prints an empty line "
					      "at the default level", n->name, q, oq)
			    : g_strdup_printf("%s() of %s has no KERN_ level: it prints an empty line "
					      "at the default level", n->name, q);
	else if (same)
		what = g_strdup_printf("%s is still printed without a KERN_ level", q);
	else if (o && !o->cont)
		what = g_strdup_printf("%s loses its KERN_ level and prints at the default level", q);
	else
		what = g_strdup_printf("%s is printed without a KERN_ level, at the default level", q);
	if (open && *text)
		after = g_strdup_printf(": without KERN_CONT it does not continue the line %s left open "
					"before it, but starts a new one", oq);
	pk_scan_add_finding(x, PK_FINDING_LEVEL_MISSING, o, n,
			    g_strconcat(what, after ? after : "", NULL))->silent = same;
}

/*
 * Text and newline findings of a rewritten call.  With both prefixes known
 * and none appearing or vanishing, the texts compared are the printed ones:
 * "x: " moved from the format into pr_fmt() changes nothing.
 */
static void pair_text(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n,
		      const char *q, const struct printed *pr)
{
	if (has_newline(o) && !has_newline(n))
		pk_scan_add_finding(x, PK_FINDING_NEWLINE_LOST, o, n, g_strdup_printf(
			"%s lost its trailing \\n: the next message may join its line", q));
	else if (!has_newline(o) && has_newline(n))
		pk_scan_add_finding(x, PK_FINDING_NEWLINE_ADDED, o, n, g_strdup_printf(
			"%s gained a trailing \\n", q));
	if (pr->known && !pr->start_moved) {
		if (!pr->same)
			pk_scan_add_finding(x, PK_FINDING_TEXT_CHANGED, o, n, g_strdup_printf(
				"the printed text \"%s%s\" becomes \"%s%s\"", pr->op, pr->ot, pr->np, pr->nt));
	} else if (strcmp(pr->ot, pr->nt)) {
		pk_scan_add_finding(x, PK_FINDING_TEXT_CHANGED, o, n, g_strdup_printf(
			"the text \"%s\" becomes \"%s\"", pr->ot, pr->nt));
	}
}

/* Whether a literal ends in an escape after which checkpatch allows a split. */
static gboolean ends_in_escape(const char *lit, gsize len)
{
	static GRegex *re;
	static gsize once;
	g_autofree char *s = g_strndup(lit, len);

	pk_lexer_regex(&re, &once, "\\\\(?:[ntr]|[0-7]{1,3}|x[0-9a-fA-F]{1,2})$");
	return g_regex_match(re, s, 0, NULL);
}

/* Whether a literal spells the function's name (not just the name alone). */
static gboolean spells_function(const char *lit, gsize len, const char *func)
{
	size_t n = strlen(func);

	if (len == n && !strncmp(lit, func, n))
		return FALSE;
	for (const char *p = lit; p + n <= lit + len; p++) {
		if (strncmp(p, func, n))
			continue;
		gboolean start = p == lit || !(g_ascii_isalnum(p[-1]) || p[-1] == '_');
		gboolean end = p + n == lit + len || !(g_ascii_isalnum(p[n]) || p[n] == '_');
		if (start && end)
			return TRUE;
	}
	return FALSE;
}

/* Whether a literal has a blank right before a "\n" escape. */
static gboolean blank_before_newline(const char *lit, gsize len)
{
	for (gsize i = 1; i + 1 < len; i++)
		if (lit[i] == '\\' && lit[i + 1] == 'n' && (lit[i - 1] == ' ' || lit[i - 1] == '\t'))
			return TRUE;
	return FALSE;
}

/* A finding about one added line of a call, not about the call as a whole. */
static void add_line_finding(struct pk_scan_ctx *x, enum pk_finding_kind kind, const struct pk_call *o,
			     const struct pk_call *n, const struct pk_diff_line *dl, char *message)
{
	struct pk_finding *f = pk_scan_add_finding(x, kind, o, n, message);

	f->line = dl->new_no;
}

/*
 * The format's literals on added lines: split points, the enclosing
 * function's name, blanks before "\n" (checkpatch's SPLIT_STRING,
 * EMBEDDED_FUNCTION_NAME, QUOTED_WHITESPACE_BEFORE_NEWLINE).
 */
static void scan_literals(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n,
			  const char *q)
{
	const struct pk_diff_line *named = NULL, *blank = NULL;

	for (guint i = 0; i < n->toks->len; i++) {
		const struct pk_fmt_tok *t = &g_array_index(n->toks, struct pk_fmt_tok, i);
		const struct pk_fmt_tok *prev = i ? t - 1 : NULL;
		const char *lit = n->text->str + t->start;

		if (!t->literal || t->dl->kind != '+')
			continue;
		if (prev && prev->literal && prev->dl != t->dl &&
		    !ends_in_escape(n->text->str + prev->start, prev->len))
			add_line_finding(x, PK_FINDING_STRING_SPLIT, o, n, t->dl, g_strdup_printf(
				"%s is split across source lines here (%d in all) and cannot be "
				"grepped as a whole", q, n->fmt_lines));
		if (n->func && named != t->dl && spells_function(lit, t->len, n->func)) {
			named = t->dl;
			add_line_finding(x, PK_FINDING_EMBEDDED_FUNCTION_NAME, o, n, t->dl, g_strdup_printf(
				"%s spells the name of its function %s(): \"%%s\", __func__ "
				"would follow a rename", q, n->func));
		}
		if (blank != t->dl && blank_before_newline(lit, t->len)) {
			blank = t->dl;
			add_line_finding(x, PK_FINDING_WHITESPACE_BEFORE_NEWLINE, o, n, t->dl, g_strdup_printf(
				"%s has a blank before its \\n: invisible trailing whitespace", q));
		}
	}
}

/*
 * The prefer-pr-level sentence of printk(KERN_<LEVEL> ...): the pr_*() call
 * that would do, and what it would print before the text after the patch
 * (pr_cont() takes no prefix; an unknown prefix is not guessed at).
 */
static char *prefer_pr_level(struct pk_scan_ctx *x, const struct pk_call *n)
{
	const char *lvl = n->cont ? "cont" : n->level;
	const char *suffix = n->name + strlen("printk");        /* "", "_once", "_ratelimited" */
	g_autofree char *macro = g_ascii_strup(!strcmp(lvl, "warn") ? "warning" : lvl, -1);
	g_autofree char *prefix = NULL;

	if (!strcmp(lvl, "default"))
		return g_strdup_printf("%s(KERN_DEFAULT ...): checkpatch.pl asks for a pr_<level>() call",
				       n->name);
	if (n->cont || !(prefix = pr_fmt_prefix_at(x, n, TRUE)))
		return g_strdup_printf("%s(KERN_%s ...) where pr_%s%s() would do", n->name, macro, lvl, suffix);
	if (!*prefix)
		return g_strdup_printf("%s(KERN_%s ...) where pr_%s%s() would do, printing the same text "
				       "(no pr_fmt() prefix applies in this file)", n->name, macro, lvl, suffix);
	return g_strdup_printf("%s(KERN_%s ...) where pr_%s%s() would do, though that would print the "
			       "file's pr_fmt() prefix \"%s\" before the text", n->name, macro, lvl, suffix,
			       prefix);
}

/*
 * What checkpatch says about the call's own line: printk(KERN_<LEVEL>
 * where pr_<level>() exists, and continuations (printk() without a level:
 * scan_level_missing()).
 */
static void scan_call_line(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n,
			   const char *q, gboolean cont_reported)
{
	gboolean printk = !strcmp(n->name, "printk") || !strcmp(n->name, "printk_once") ||
			  !strcmp(n->name, "printk_ratelimited");

	if (n->dl->kind != '+')
		return;
	if (printk && n->kern_dl == n->dl && (n->level || n->cont))
		pk_scan_add_finding(x, PK_FINDING_PREFER_PR_LEVEL, o, n, prefer_pr_level(x, n));
	if (n->cont && !cont_reported && (n->fam == PK_FAM_PR || n->kern_dl == n->dl))
		pk_scan_add_finding(x, PK_FINDING_LOGGING_CONTINUATION, o, n, g_strdup_printf(
			"%s continues a line: another CPU's message can land in the middle of it", q));
}

/*
 * A call's format as written and the arguments it folds in (fold.h), for
 * sentences: "\"%s: port %d\\n\", __func__".
 */
static char *written_format(struct pk_scan_ctx *x, const struct pk_call *c, gboolean post)
{
	GString *s = g_string_new(NULL);
	struct pk_fold_env env;

	call_env(x, c, post, &env);
	g_string_append_printf(s, "\"%s\"", c->text->str);
	for (guint i = 0; i < c->args->len; i++) {
		g_autofree char *v = pk_fold_value(&env, c->args->pdata[i]);
		if (v)
			g_string_append_printf(s, ", %s", (const char *)c->args->pdata[i]);
	}
	return g_string_free(s, FALSE);
}

/*
 * A rewritten call that no finding has described so far, whose format as
 * written changed and which prints exactly the same text, prefix included
 * when known ("neo_parse_modem: ..." made "%s: ...", __func__ inside
 * neo_parse_modem()): call-converted, saying so.
 */
static void pair_same_text(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n,
			   const struct printed *pr)
{
	g_autofree char *of = NULL, *nf = NULL, *po = NULL, *pn = NULL, *shown = NULL;
	g_autofree char *ow = NULL, *nw = NULL;

	if (!strcmp(o->text->str, n->text->str))
		return;
	of = printed_format(x, o, FALSE);
	nf = printed_format(x, n, TRUE);
	po = g_strconcat(pr->known ? pr->op : "", of, NULL);
	pn = g_strconcat(pr->known ? pr->np : "", nf, NULL);
	if (strcmp(po, pn))
		return;
	shown = printed_text(x, n, TRUE);
	ow = written_format(x, o, FALSE);
	nw = written_format(x, n, TRUE);
	pk_scan_add_finding(x, PK_FINDING_CALL_CONVERTED, o, n, g_strdup_printf(
		"%s() prints the same text \"%s%s\" as before: its format %s becomes %s",
		n->name, pr->known ? pr->np : "", shown, ow, nw));
}

static void scan_pair(struct pk_scan_ctx *x, const struct pk_call *o, const struct pk_call *n)
{
	g_autofree char *q = quote(x, n, TRUE);
	guint before = x->scan->findings->len;
	gboolean cont_reported;
	struct printed pr = { 0 };

	printed_init(&pr, x, o, n);
	/* a prefix change no family finding has stated */
	if (!pair_family(x, o, n, q, &pr) && pr.start_moved)
		add_prefix_changed(x, o, n, &pr);
	pair_level(x, o, n, q);
	cont_reported = x->scan->findings->len > before &&
		((struct pk_finding *)g_ptr_array_index(x->scan->findings,
			x->scan->findings->len - 1))->kind == PK_FINDING_CONT_ADDED;
	pair_text(x, o, n, q, &pr);
	if (x->scan->findings->len == before)
		pair_same_text(x, o, n, &pr);
	printed_clear(&pr);
	/* one debug call rewritten as another: what changed is not printed by default either */
	for (guint i = before; o->dynamic && n->dynamic && i < x->scan->findings->len; i++)
		((struct pk_finding *)x->scan->findings->pdata[i])->silent = TRUE;
	scan_level_missing(x, o, n, q);
	scan_literals(x, o, n, q);
	scan_call_line(x, o, n, q, cont_reported);
}

/*
 * What a debug call's finding adds: pr_debug(), dev_dbg() and the like
 * print nothing unless DEBUG or dynamic debug enables them, so by
 * themselves they leave the console as it was (the printk index of such
 * a kernel does not hold them either: bench/scan-index.py).
 */
#define DEBUG_ONLY_NOTE "; it is a debug message, printed only when DEBUG or dynamic debug enables it"

static void scan_removed(struct pk_scan_ctx *x, const struct pk_call *o)
{
	g_autofree char *q = quote(x, o, FALSE);

	pk_scan_add_finding(x, PK_FINDING_MESSAGE_REMOVED, o, NULL, g_strdup_printf(
		"%s() of %s is removed%s", o->name, q, o->dynamic ? DEBUG_ONLY_NOTE : ""))->silent |= o->dynamic;
}

static void scan_added(struct pk_scan_ctx *x, const struct pk_call *n)
{
	g_autofree char *q = quote(x, n, TRUE);
	g_autofree char *prefix = call_prefix(x, n, TRUE);
	g_autofree char *text = printed_format(x, n, TRUE);

	const char *note = n->dynamic ? DEBUG_ONLY_NOTE : "";

	if (prefix && *prefix)
		pk_scan_add_finding(x, PK_FINDING_MESSAGE_ADDED, NULL, n, g_strdup_printf(
			"%s() of %s is added; it prints as \"%s%s\"%s", n->name, q, prefix, text,
			note))->silent |= n->dynamic;
	else
		pk_scan_add_finding(x, PK_FINDING_MESSAGE_ADDED, NULL, n, g_strdup_printf(
			"%s() of %s is added%s", n->name, q, note))->silent |= n->dynamic;
	scan_level_missing(x, NULL, n, q);
	scan_literals(x, NULL, n, q);
	scan_call_line(x, NULL, n, q, FALSE);
}

struct candidate {
	guint o, n;
	double sim;
};

static int candidate_cmp(gconstpointer a, gconstpointer b)
{
	const struct candidate *x = a, *y = b;

	if (x->sim != y->sim)
		return x->sim < y->sim ? 1 : -1;
	return abs((int)x->o - (int)x->n) - abs((int)y->o - (int)y->n);
}

/*
 * Pairing is bounded, since a patch is a stranger's input and the daemon
 * scans every mail it takes in.  Calls with the same text pair through a
 * hash (each with the nearest few of its equals); the others are compared
 * by LCS only with the added calls about as far into the hunk as they are
 * (a rewrite keeps the calls' order), and every scan has PAIR_CELLS cells
 * of LCS to spend (about 0.1 s): calls left when they are spent stay
 * unpaired, reported as removed and added, and a pairing-capped finding
 * says so.  Real patches use a small part of it: a 200-call conversion
 * with 60-character messages takes ~25 M cells.
 */
#define PAIR_WINDOW 16
#define PAIR_EQUALS 4
#define PAIR_CELLS (200ull * 1000 * 1000)

/* The candidates of old call i: its nearest equals, then the likely ones of its window. */
static void add_candidates(GArray *cands, guint i, char **otext, char **ntext, guint n_news,
			   GHashTable *by_text, guint n_olds, guint64 *cells)
{
	GArray *equals = g_hash_table_lookup(by_text, otext[i]);
	guint centre = n_olds ? (guint)((guint64)i * n_news / n_olds) : 0;
	guint from = centre > PAIR_WINDOW ? centre - PAIR_WINDOW : 0;
	guint to = MIN(n_news, centre + PAIR_WINDOW + 1);

	if (equals) {
		/* equals are in hunk order: the few around i's place, found by bisection */
		guint lo = 0, hi = equals->len;

		while (lo < hi) {
			guint mid = lo + (hi - lo) / 2;
			if (g_array_index(equals, guint, mid) + PAIR_EQUALS / 2 < centre)
				lo = mid + 1;
			else
				hi = mid;
		}
		lo = MIN(lo, equals->len > PAIR_EQUALS ? equals->len - PAIR_EQUALS : 0);
		for (guint k = lo; k < equals->len && k < lo + PAIR_EQUALS; k++) {
			struct candidate c = { i, g_array_index(equals, guint, k), 1.0 };
			g_array_append_val(cands, c);
		}
	}
	for (guint j = from; j < to && *cells; j++) {
		struct candidate c = { i, j, 0 };

		if (!strcmp(otext[i], ntext[j]))
			continue;   /* an equal: above */
		c.sim = similarity(otext[i], ntext[j], cells);
		if (c.sim >= 0.5)
			g_array_append_val(cands, c);
	}
}

/* Pair removed and added calls printing the same message, best match first. */
static void pair_calls(struct pk_scan_ctx *x, GPtrArray *olds, GPtrArray *news)
{
	g_auto(GStrv) otext = g_new0(char *, olds->len + 1);
	g_auto(GStrv) ntext = g_new0(char *, news->len + 1);
	/* after the texts, so freed before them: its keys are ntext's */
	g_autoptr(GHashTable) by_text = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
							      (GDestroyNotify)g_array_unref);
	g_autoptr(GArray) cands = g_array_new(FALSE, FALSE, sizeof(struct candidate));
	gboolean capped = FALSE;

	for (guint j = 0; j < news->len; j++) {
		GArray *equals;

		ntext[j] = printed_text(x, news->pdata[j], TRUE);
		if (!(equals = g_hash_table_lookup(by_text, ntext[j]))) {
			equals = g_array_new(FALSE, FALSE, sizeof(guint));
			g_hash_table_insert(by_text, ntext[j], equals);
		}
		g_array_append_val(equals, j);
	}
	for (guint i = 0; i < olds->len; i++)
		otext[i] = printed_text(x, olds->pdata[i], FALSE);
	for (guint i = 0; i < olds->len; i++) {
		add_candidates(cands, i, otext, ntext, news->len, by_text, olds->len, x->pair_cells);
		capped |= !*x->pair_cells;
	}
	g_array_sort(cands, candidate_cmp);
	for (guint k = 0; k < cands->len; k++) {
		struct candidate *c = &g_array_index(cands, struct candidate, k);
		struct pk_call *o = olds->pdata[c->o], *n = news->pdata[c->n];
		if (o->paired || n->paired)
			continue;
		o->paired = n->paired = TRUE;
		scan_pair(x, o, n);
	}
	if (capped && olds->len && news->len)
		pk_scan_add_finding(x, PK_FINDING_PAIRING_CAPPED, olds->pdata[0], news->pdata[0], g_strdup_printf(
			"%u removed and %u added calls in one hunk: too many to compare every text, "
			"so the ones left unpaired are reported as removed and added", olds->len, news->len));
}

/* Keep only the calls a hunk changes; count the pr_fmt()-prefixed ones. */
static GPtrArray *changed_only(struct pk_scan_ctx *x, GPtrArray *all, gboolean post)
{
	GPtrArray *out = g_ptr_array_new();

	for (guint i = 0; i < all->len; i++) {
		struct pk_call *c = all->pdata[i];
		if (post && pk_call_uses_pr_fmt(c))
			x->pr_calls++;
		if (pk_call_uses_pr_fmt(c) && c->changed) {
			x->pr_delta += post ? 1 : -1;
			x->pr_touched += post;
		}
		if (c->changed)
			g_ptr_array_add(out, c);
	}
	return out;
}

/*
 * Whether a line may be (part of) a printk-family call: the names of
 * lexer.c's classify(), loosely, as a cheap test before lexing.
 * Hand-written: the regex it replaces made a GMatchInfo per diff line, a
 * fifth of fuzz-scan's time.
 */
static gboolean line_may_log(const char *t)
{
	static const char *const levels[] = { "emerg", "alert", "crit", "err", "warn", "notice", "info",
					      "debug", "dbg", "vdbg", "devel", "cont" };

	if (strstr(t, "pr_") || strstr(t, "printk") || strstr(t, "WARN") || strstr(t, "panic"))
		return TRUE;
	for (const char *u = strchr(t, '_'); u; u = strchr(u + 1, '_'))
		for (size_t i = 0; i < G_N_ELEMENTS(levels) && u[1] && strchr("acdeinvw", u[1]); i++)
			if (!strncmp(u + 1, levels[i], strlen(levels[i])))
				return TRUE;
	return FALSE;
}

/* Whether a hunk has a line that may be (part of) a printk-family call. */
static gboolean hunk_may_log(const struct pk_hunk *h)
{
	for (guint i = 0; i < h->lines->len; i++)
		if (line_may_log(((const struct pk_diff_line *)h->lines->pdata[i])->text))
			return TRUE;
	return FALSE;
}

/*
 * The calls of context lines in a function the patch renames: their text
 * does not change, but what __func__ prints there does (or a pr_fmt()
 * prefix made of it).  Each whose printed text changes is a rewritten call.
 */
static void scan_renamed_context(struct pk_scan_ctx *x, GPtrArray *oall, GPtrArray *nall)
{
	g_autoptr(GHashTable) by_line = NULL;

	if (!x->renamed || !g_hash_table_size(x->renamed))
		return;
	by_line = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (guint i = 0; i < oall->len; i++) {
		struct pk_call *o = oall->pdata[i];
		if (!o->changed)
			g_hash_table_insert(by_line, (gpointer)o->dl, o);
	}
	for (guint j = 0; j < nall->len; j++) {
		struct pk_call *n = nall->pdata[j], *o = g_hash_table_lookup(by_line, n->dl);
		g_autofree char *of = NULL, *nf = NULL, *op = NULL, *np = NULL;

		if (n->changed || !o || !g_strcmp0(call_function(x, o, FALSE), call_function(x, n, TRUE)))
			continue;
		of = printed_format(x, o, FALSE);
		nf = printed_format(x, n, TRUE);
		op = call_prefix(x, o, FALSE);
		np = call_prefix(x, n, TRUE);
		if (!strcmp(of, nf) && !g_strcmp0(op, np))
			continue;
		o->paired = n->paired = TRUE;
		x->scan->calls_changed += 2;
		x->pr_touched += pk_call_uses_pr_fmt(n);
		scan_pair(x, o, n);
	}
}

static void scan_hunk(struct pk_scan_ctx *x, const struct pk_hunk *h)
{
	g_autoptr(GPtrArray) oall = NULL, nall = NULL, olds = NULL, news = NULL;

	if (!hunk_may_log(h))
		return;
	if (!x->renamed)
		x->renamed = renamed_functions(x->dfile);
	oall = pk_lexer_calls(h, '-');
	nall = pk_lexer_calls(h, '+');
	olds = changed_only(x, oall, FALSE);
	news = changed_only(x, nall, TRUE);
	x->scan->calls_changed += olds->len + news->len;
	scan_renamed_context(x, oall, nall);
	pair_calls(x, olds, news);
	for (guint i = 0; i < olds->len && !pk_proc_canceled(); i++)
		if (!((struct pk_call *)olds->pdata[i])->paired)
			scan_removed(x, olds->pdata[i]);
	for (guint i = 0; i < news->len && !pk_proc_canceled(); i++)
		if (!((struct pk_call *)news->pdata[i])->paired)
			scan_added(x, news->pdata[i]);
}

/* A repair of mailer damage (patch.h) as a patch-corrupt finding. */
static void add_damage_finding(struct pk_scan *s, const struct pk_patch *p, const struct pk_patch_damage *d)
{
	struct pk_finding *f = g_new0(struct pk_finding, 1);
	g_autofree char *what = pk_patch_damage_describe(p, d);

	f->file = g_strdup(d->path ? d->path : "");
	f->line = d->file_line;
	f->kind = PK_FINDING_PATCH_CORRUPT;
	f->silent = pk_finding_is_silent(f->kind);

	f->message = g_strdup_printf("this mail is corrupt: %s; git am will reject it", what);
	g_ptr_array_add(s->findings, f);
}

/* patch-corrupt findings (n_damage of them) are no churn by themselves. */
static enum pk_verdict verdict(const struct pk_scan *s, guint n_damage)
{
	if (!s->calls_changed && s->findings->len == n_damage)
		return PK_VERDICT_NO_CHURN;
	for (guint i = 0; i < s->findings->len; i++)
		if (!((struct pk_finding *)s->findings->pdata[i])->silent)
			return PK_VERDICT_CONSOLE_CHANGED;
	return PK_VERDICT_NO_VISIBLE_CHANGE;
}

struct pk_scan *pk_scan_tree(const struct pk_patch *patch, struct pk_tree *tree)
{
	PK_PROFILE_SCOPE("scan");
	struct pk_scan *s = g_new0(struct pk_scan, 1);
	guint64 pair_cells = PAIR_CELLS;

	s->findings = g_ptr_array_new_with_free_func(pk_finding_free);
	for (guint i = 0; patch && patch->damage && i < patch->damage->len; i++)
		add_damage_finding(s, patch, patch->damage->pdata[i]);
	for (guint i = 0; patch && i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];
		struct pk_scan_ctx x = { .scan = s, .dfile = f, .file = pk_diff_file_path(f), .tree = tree,
					 .pair_cells = &pair_cells };
		g_autoptr(GPtrArray) olds = NULL, news = NULL;

		pk_scan_prfmt_lines(f, &olds, &news);
		x.prfmt_olds = olds;
		x.prfmt_news = news;
		for (guint j = 0; j < f->hunks->len && !pk_proc_canceled(); j++)
			scan_hunk(&x, f->hunks->pdata[j]);
		pk_scan_prfmt(&x, olds, news);
		ctx_clear(&x);
		/* a stop asked for: what was found so far is no verdict */
		if ((s->canceled = pk_proc_canceled()))
			break;
	}
	s->verdict = s->canceled ? PK_VERDICT_NONE : verdict(s, patch && patch->damage ? patch->damage->len : 0);
	return s;
}

struct pk_scan *pk_scan(const struct pk_patch *patch)
{
	return pk_scan_tree(patch, NULL);
}
