/* scan.c - static logging-churn scanner; see scan.h for the contract. */
#include "scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum family { FAM_PRINTK, FAM_PR, FAM_DEV, FAM_NETDEV };

/* One printk-family call found on one side (pre- or post-image) of a hunk. */
struct call {
	enum family fam;
	char *name;
	const char *level;      /* NULL: printk() without a KERN_ level */
	gboolean cont;          /* pr_cont() or KERN_CONT */
	gboolean dynamic;       /* pr_debug(), dev_dbg(): compiled out by default */
	GString *text;          /* the format, literals joined, C escapes kept */
	int fmt_lines;          /* distinct source lines holding format literals */
	gboolean changed;       /* one of its lines is '-' or '+' */
	int line;               /* its first line's number on its side */
	char *written;
	gboolean paired;
};

static void call_free(gpointer p)
{
	struct call *c = p;

	g_free(c->name);
	g_string_free(c->text, TRUE);
	g_free(c->written);
	g_free(c);
}

static void finding_free(gpointer p)
{
	struct pk_finding *f = p;

	g_free(f->file);
	g_free(f->old_call);
	g_free(f->new_call);
	g_free(f->old_text);
	g_free(f->new_text);
	g_free(f->message);
	g_free(f);
}

void pk_scan_free(struct pk_scan *s)
{
	if (!s)
		return;
	g_ptr_array_unref(s->findings);
	g_free(s);
}

gboolean pk_finding_is_silent(const char *kind)
{
	return !strcmp(kind, "call-converted") || !strcmp(kind, "string-split");
}

/* Level words of pr_*(), dev_*(), netdev_*() names, and KERN_* macros. */
static const struct { const char *word; const char *level; } level_words[] = {
	{ "emerg", "emerg" }, { "alert", "alert" }, { "crit", "crit" },
	{ "err", "err" }, { "warn", "warn" }, { "warning", "warn" },
	{ "notice", "notice" }, { "info", "info" }, { "cont", "cont" },
	{ "debug", "debug" }, { "devel", "debug" }, { "dbg", "debug" },
	{ "default", "default" },
};

static const char *level_of_word(const char *w)
{
	for (size_t i = 0; i < G_N_ELEMENTS(level_words); i++)
		if (!g_ascii_strcasecmp(w, level_words[i].word))
			return level_words[i].level;
	return NULL;
}

/* "err_once" -> "err": the rate-limit suffixes do not change the level. */
static char *strip_suffix(const char *base)
{
	static const char *const suffixes[] = { "_once", "_ratelimited", "_deferred" };
	char *s = g_strdup(base);

	for (gboolean again = TRUE; again;) {
		again = FALSE;
		for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++)
			if (g_str_has_suffix(s, suffixes[i])) {
				s[strlen(s) - strlen(suffixes[i])] = '\0';
				again = TRUE;
			}
	}
	return s;
}

/*
 * Whether name is a printk-family call; if so fill its family, its level
 * from the name (NULL when the level is in the format), whether dynamic
 * debug controls it, and which argument is the format.
 */
static gboolean classify(const char *name, enum family *fam, const char **level,
			 gboolean *dynamic, int *fmt_arg)
{
	static const struct { const char *prefix; enum family fam; int skip; } fams[] = {
		{ "pr_", FAM_PR, 0 }, { "dev_", FAM_DEV, 1 }, { "netdev_", FAM_NETDEV, 1 },
	};
	g_autofree char *base = NULL;

	*dynamic = FALSE;
	*level = NULL;
	if (!strcmp(name, "printk") || !strcmp(name, "printk_once") ||
	    !strcmp(name, "printk_ratelimited") || !strcmp(name, "printk_deferred") ||
	    !strcmp(name, "printk_deferred_once")) {
		*fam = FAM_PRINTK;
		*fmt_arg = 0;
		return TRUE;
	}
	for (size_t i = 0; i < G_N_ELEMENTS(fams); i++) {
		if (!g_str_has_prefix(name, fams[i].prefix))
			continue;
		base = strip_suffix(name + strlen(fams[i].prefix));
		*fam = fams[i].fam;
		*fmt_arg = fams[i].skip;
		if (fams[i].fam != FAM_PR && !strcmp(base, "printk")) {
			*fmt_arg = 2;    /* dev_printk(KERN_X, dev, fmt) */
			return TRUE;
		}
		if (fams[i].fam == FAM_DEV && !strcmp(base, "err_probe")) {
			*level = "err";
			*fmt_arg = 2;
			return TRUE;
		}
		if (!(*level = level_of_word(base)) || !strcmp(base, "default"))
			return FALSE;
		if (fams[i].fam == FAM_PR ? !strcmp(base, "dbg") : !strcmp(base, "debug"))
			return FALSE;
		*dynamic = !strcmp(*level, "debug");
		return TRUE;
	}
	return FALSE;
}

/* One side of a hunk as a single text, with the hunk line of each byte. */
struct side {
	GString *buf;
	GArray *line_of;        /* int: index into hunk->lines */
	const struct pk_hunk *hunk;
	char side;              /* '-' (pre-image) or '+' (post-image) */
};

static void side_build(struct side *s, const struct pk_hunk *h, char which)
{
	s->buf = g_string_new(NULL);
	s->line_of = g_array_new(FALSE, FALSE, sizeof(int));
	s->hunk = h;
	s->side = which;
	for (guint i = 0; i < h->lines->len; i++) {
		const struct pk_diff_line *l = h->lines->pdata[i];
		int idx = (int)i;

		if (l->kind != ' ' && l->kind != which)
			continue;
		g_string_append(s->buf, l->text);
		g_string_append_c(s->buf, '\n');
		for (size_t k = 0; k <= strlen(l->text); k++)
			g_array_append_val(s->line_of, idx);
	}
}

static void side_clear(struct side *s)
{
	g_string_free(s->buf, TRUE);
	g_array_unref(s->line_of);
}

static const struct pk_diff_line *side_line(const struct side *s, size_t pos)
{
	return s->hunk->lines->pdata[g_array_index(s->line_of, int, pos)];
}

/* Skip a string or char literal starting at p (the quote); returns past it. */
static size_t skip_literal(const char *b, size_t p, size_t len)
{
	char q = b[p++];

	while (p < len && b[p] != q && b[p] != '\n') {
		if (b[p] == '\\' && p + 1 < len)
			p++;
		p++;
	}
	return p < len ? p + 1 : p;
}

/* Skip blanks and comments; returns the next significant position. */
static size_t skip_space(const char *b, size_t p, size_t len)
{
	for (;;) {
		while (p < len && g_ascii_isspace(b[p]))
			p++;
		if (p + 1 < len && b[p] == '/' && b[p + 1] == '/') {
			while (p < len && b[p] != '\n')
				p++;
		} else if (p + 1 < len && b[p] == '/' && b[p + 1] == '*') {
			const char *end = strstr(b + p + 2, "*/");
			p = end ? (size_t)(end - b) + 2 : len;
		} else {
			return p;
		}
	}
}

/* Fold each newline and the indentation after it into one space. */
static char *fold_written(const char *b, size_t from, size_t to)
{
	GString *s = g_string_new(NULL);

	for (size_t i = from; i < to; i++) {
		if (b[i] != '\n') {
			g_string_append_c(s, b[i]);
			continue;
		}
		while (i + 1 < to && (b[i + 1] == ' ' || b[i + 1] == '\t'))
			i++;
		if (s->len && s->str[s->len - 1] != ' ')
			g_string_append_c(s, ' ');
	}
	return g_string_free(s, FALSE);
}

/* Add one token of the format argument to the call. */
static void format_token(struct call *c, const struct side *s, const char *b, size_t p,
			 size_t end, int *last_line)
{
	if (b[p] == '"') {
		int line = g_array_index(s->line_of, int, p);
		g_string_append_len(c->text, b + p + 1, end - p - (b[end - 1] == '"' ? 2 : 1));
		if (line != *last_line)
			c->fmt_lines++;
		*last_line = line;
		return;
	}
	if (g_str_has_prefix(b + p, "KERN_")) {
		g_autofree char *w = g_strndup(b + p + 5, end - p - 5);
		const char *lvl = level_of_word(w);
		if (lvl && !strcmp(lvl, "cont"))
			c->cont = TRUE;
		else if (lvl)
			c->level = lvl;
		return;
	}
	/* a macro (PFX, DRV_NAME...) glued to the format: keep it visible */
	g_string_append_printf(c->text, "{%.*s}", (int)(end - p), b + p);
}

/*
 * Parse the argument list of a call whose '(' is at p; fills the format
 * fields and returns the position after the closing ')'.
 */
static size_t parse_args(struct call *c, const struct side *s, size_t p, int fmt_arg)
{
	const char *b = s->buf->str;
	size_t len = s->buf->len;
	int depth = 0, arg = 0, last_line = -1;

	for (p++; (p = skip_space(b, p, len)) < len;) {
		size_t end = p + 1;
		char ch = b[p];

		if (ch == '"' || ch == '\'')
			end = skip_literal(b, p, len);
		else if (g_ascii_isalnum(ch) || ch == '_')
			for (end = p; end < len && (g_ascii_isalnum(b[end]) || b[end] == '_'); end++)
				;
		if (ch == '(' || ch == '[' || ch == '{')
			depth++;
		else if ((ch == ')' || ch == ']' || ch == '}') && depth-- == 0)
			return p + 1;
		else if (ch == ',' && depth == 0)
			arg++;
		else if (arg == fmt_arg && depth == 0 && ch != '\'' &&
			 (ch == '"' || g_ascii_isalpha(ch) || ch == '_'))
			format_token(c, s, b, p, end, &last_line);
		else if (arg == 0 && fmt_arg == 2 && g_str_has_prefix(b + p, "KERN_"))
			format_token(c, s, b, p, end, &last_line);  /* dev_printk's level */
		p = end;
	}
	return len;
}

/* Try to read a call at identifier [p, end); NULL when it is not one. */
static struct call *read_call(const struct side *s, size_t p, size_t end, size_t *next)
{
	const char *b = s->buf->str;
	g_autofree char *name = g_strndup(b + p, end - p);
	struct call c = { 0 }, *out;
	size_t open = skip_space(b, end, s->buf->len), close;
	int fmt_arg;

	if (open >= s->buf->len || b[open] != '(' ||
	    !classify(name, &c.fam, &c.level, &c.dynamic, &fmt_arg))
		return NULL;
	c.text = g_string_new(NULL);
	if (c.level && !strcmp(c.level, "cont")) {
		c.cont = TRUE;
		c.level = NULL;
	}
	close = parse_args(&c, s, open, fmt_arg);
	for (size_t i = p; i < close && i < s->line_of->len; i++)
		if (side_line(s, i)->kind == s->side)
			c.changed = TRUE;
	c.line = s->side == '-' ? side_line(s, p)->old_no : side_line(s, p)->new_no;
	c.written = fold_written(b, p, close);
	c.name = g_steal_pointer(&name);
	*next = close;
	out = g_memdup2(&c, sizeof(c));
	return out;
}

/* Every printk-family call on one side of a hunk. */
static GPtrArray *side_calls(const struct side *s)
{
	GPtrArray *calls = g_ptr_array_new_with_free_func(call_free);
	const char *b = s->buf->str;
	size_t len = s->buf->len, p = 0;

	while ((p = skip_space(b, p, len)) < len) {
		size_t end = p + 1;
		struct call *c;

		if (b[p] == '"' || b[p] == '\'') {
			p = skip_literal(b, p, len);
			continue;
		}
		if (!g_ascii_isalpha(b[p]) && b[p] != '_') {
			p++;
			continue;
		}
		for (end = p; end < len && (g_ascii_isalnum(b[end]) || b[end] == '_'); end++)
			;
		if ((c = read_call(s, p, end, &p)))
			g_ptr_array_add(calls, c);
		else
			p = end;
	}
	return calls;
}

/* Format text for comparing: trailing "\n" dropped, blanks folded. */
static char *norm_text(const struct call *c)
{
	GString *s = g_string_new(NULL);
	const char *t = c->text->str;
	size_t n = c->text->len;

	if (n >= 2 && !strcmp(t + n - 2, "\\n"))
		n -= 2;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isspace(t[i]) || (s->len && s->str[s->len - 1] != ' '))
			g_string_append_c(s, g_ascii_isspace(t[i]) ? ' ' : t[i]);
	return g_string_free(s, FALSE);
}

/* 2 * LCS / (|a| + |b|): 1.0 for equal strings, near 0 for unrelated ones. */
static double similarity(const char *a, const char *b)
{
	size_t la = MIN(strlen(a), 400), lb = MIN(strlen(b), 400);
	g_autofree int *prev = g_new0(int, lb + 1), *cur = g_new0(int, lb + 1);

	if (!la && !lb)
		return 1.0;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++)
			cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : MAX(prev[j], cur[j - 1]);
		int *t = prev;
		prev = cur;
		cur = t;
	}
	return 2.0 * prev[lb] / (double)(la + lb);
}

static gboolean has_newline(const struct call *c)
{
	return g_str_has_suffix(c->text->str, "\\n");
}

/* The level a reader sees: "default" for printk() without KERN_. */
static const char *shown_level(const struct call *c)
{
	if (c->cont)
		return "cont";
	return c->level ? c->level : "default";
}

struct scan_ctx {
	struct pk_scan *scan;
	const char *file;
	unsigned pr_calls;      /* pr_*() calls seen in this file's post-image */
};

static struct pk_finding *add_finding(struct scan_ctx *x, const char *kind,
				      const struct call *o, const struct call *n,
				      char *message)
{
	struct pk_finding *f = g_new0(struct pk_finding, 1);

	f->file = g_strdup(x->file);
	f->kind = kind;
	f->line = n ? n->line : o ? o->line : 0;
	if (o) {
		f->old_call = g_strdup(o->written);
		f->old_level = shown_level(o);
		f->old_text = g_strdup(o->text->str);
	}
	if (n) {
		f->new_call = g_strdup(n->written);
		f->new_level = shown_level(n);
		f->new_text = g_strdup(n->text->str);
	}
	f->message = message;
	g_ptr_array_add(x->scan->findings, f);
	return f;
}

/* A short quote of a message for sentences. */
static char *quote(const struct call *c)
{
	g_autofree char *t = norm_text(c);

	if (strlen(t) > 48)
		return g_strdup_printf("\"%.45s...\"", t);
	return g_strdup_printf("\"%s\"", t);
}

static gboolean is_device(const struct call *c)
{
	return c->fam == FAM_DEV || c->fam == FAM_NETDEV;
}

/* Prefix and family findings of a rewritten call. */
static void pair_family(struct scan_ctx *x, const struct call *o, const struct call *n,
			const char *q)
{
	if (is_device(o) && !is_device(n))
		add_finding(x, "device-prefix-lost", o, n, g_strdup_printf(
			"%s() becomes %s(): %s loses its device name prefix", o->name, n->name, q));
	else if (!is_device(o) && is_device(n))
		add_finding(x, "device-prefix-added", o, n, g_strdup_printf(
			"%s() becomes %s(): %s gains a device name prefix", o->name, n->name, q));
	else if (o->fam != n->fam && !n->dynamic && !strcmp(shown_level(o), shown_level(n)))
		add_finding(x, "call-converted", o, n, g_strdup_printf(
			"%s() becomes %s() with the same text and level: no console change "
			"unless a pr_fmt() applies", o->name, n->name));
}

/* Level, continuation and dynamic-debug findings of a rewritten call. */
static void pair_level(struct scan_ctx *x, const struct call *o, const struct call *n,
		       const char *q)
{
	const char *ol = shown_level(o), *nl = shown_level(n);

	if (n->dynamic && !o->dynamic)
		add_finding(x, "debug-compiled-out", o, n, g_strdup_printf(
			"%s() becomes %s(): %s vanishes unless DEBUG or dynamic debug enables it",
			o->name, n->name, q));
	if (o->cont && !n->cont) {
		add_finding(x, "cont-broken", o, n, g_strdup_printf(
			"%s is no longer a continuation: it starts a new line", q));
		return;
	}
	if (!o->cont && n->cont) {
		add_finding(x, "cont-added", o, n, g_strdup_printf(
			"%s becomes a continuation of the previous line", q));
		return;
	}
	if (!strcmp(ol, nl) || (n->dynamic && !strcmp(ol, "debug")))
		return;
	if (n->fam == FAM_PRINTK && !n->level)
		add_finding(x, "level-missing", o, n, g_strdup_printf(
			"%s loses its KERN_ level and prints at the default level", q));
	else
		add_finding(x, "level-changed", o, n, g_strdup_printf(
			"%s moves from %s to %s level", q, ol, nl));
}

/* Text, newline and layout findings of a rewritten call. */
static void pair_text(struct scan_ctx *x, const struct call *o, const struct call *n,
		      const char *q)
{
	g_autofree char *ot = norm_text(o), *nt = norm_text(n);

	if (has_newline(o) && !has_newline(n))
		add_finding(x, "newline-lost", o, n, g_strdup_printf(
			"%s lost its trailing \\n: the next message may join its line", q));
	else if (!has_newline(o) && has_newline(n))
		add_finding(x, "newline-added", o, n, g_strdup_printf(
			"%s gained a trailing \\n", q));
	if (strcmp(ot, nt))
		add_finding(x, "text-changed", o, n, g_strdup_printf(
			"the text \"%s\" becomes \"%s\"", ot, nt));
	if (n->fmt_lines > 1 && o->fmt_lines <= 1)
		add_finding(x, "string-split", o, n, g_strdup_printf(
			"%s is split across %d source lines and can no longer be grepped",
			q, n->fmt_lines));
}

static void scan_pair(struct scan_ctx *x, const struct call *o, const struct call *n)
{
	g_autofree char *q = quote(n);

	pair_family(x, o, n, q);
	pair_level(x, o, n, q);
	pair_text(x, o, n, q);
}

static void scan_removed(struct scan_ctx *x, const struct call *o)
{
	g_autofree char *q = quote(o);

	add_finding(x, "message-removed", o, NULL, g_strdup_printf(
		"%s() of %s is removed", o->name, q));
}

static void scan_added(struct scan_ctx *x, const struct call *n)
{
	g_autofree char *q = quote(n);

	add_finding(x, "message-added", NULL, n, g_strdup_printf(
		"%s() of %s is added", n->name, q));
	if (n->fam == FAM_PRINTK && !n->level && !n->cont)
		add_finding(x, "level-missing", NULL, n, g_strdup_printf(
			"%s is printed without a KERN_ level", q));
	if (n->fmt_lines > 1)
		add_finding(x, "string-split", NULL, n, g_strdup_printf(
			"%s is split across %d source lines and cannot be grepped",
			q, n->fmt_lines));
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

/* Pair removed and added calls printing the same message, best match first. */
static void pair_calls(struct scan_ctx *x, GPtrArray *olds, GPtrArray *news)
{
	g_autoptr(GArray) cands = g_array_new(FALSE, FALSE, sizeof(struct candidate));

	for (guint i = 0; i < olds->len; i++)
		for (guint j = 0; j < news->len; j++) {
			g_autofree char *a = norm_text(olds->pdata[i]), *b = norm_text(news->pdata[j]);
			struct candidate c = { i, j, similarity(a, b) };
			if (c.sim >= 0.5)
				g_array_append_val(cands, c);
		}
	g_array_sort(cands, candidate_cmp);
	for (guint k = 0; k < cands->len; k++) {
		struct candidate *c = &g_array_index(cands, struct candidate, k);
		struct call *o = olds->pdata[c->o], *n = news->pdata[c->n];
		if (o->paired || n->paired)
			continue;
		o->paired = n->paired = TRUE;
		scan_pair(x, o, n);
	}
}

/* Keep only the calls a hunk changes; count the post-image pr_*() calls. */
static GPtrArray *changed_only(struct scan_ctx *x, GPtrArray *all, gboolean post)
{
	GPtrArray *out = g_ptr_array_new();

	for (guint i = 0; i < all->len; i++) {
		struct call *c = all->pdata[i];
		if (post && c->fam == FAM_PR)
			x->pr_calls++;
		if (c->changed)
			g_ptr_array_add(out, c);
	}
	return out;
}

static void scan_hunk(struct scan_ctx *x, const struct pk_hunk *h)
{
	struct side o, n;
	g_autoptr(GPtrArray) oall = NULL, nall = NULL, olds = NULL, news = NULL;

	side_build(&o, h, '-');
	side_build(&n, h, '+');
	oall = side_calls(&o);
	nall = side_calls(&n);
	olds = changed_only(x, oall, FALSE);
	news = changed_only(x, nall, TRUE);
	x->scan->calls_changed += olds->len + news->len;
	pair_calls(x, olds, news);
	for (guint i = 0; i < olds->len; i++)
		if (!((struct call *)olds->pdata[i])->paired)
			scan_removed(x, olds->pdata[i]);
	for (guint i = 0; i < news->len; i++)
		if (!((struct call *)news->pdata[i])->paired)
			scan_added(x, news->pdata[i]);
	side_clear(&o);
	side_clear(&n);
}

/* A pr_fmt() definition: its body with the parameter renamed to "fmt". */
struct prfmt {
	int line;
	char *body;
};

static struct prfmt *parse_prfmt(const struct pk_diff_line *l)
{
	g_autoptr(GRegex) re = g_regex_new(
		"^\\s*#\\s*define\\s+pr_fmt\\s*\\(\\s*(\\w+)\\s*\\)\\s*(.*?)\\s*$", 0, 0, NULL);
	g_autoptr(GMatchInfo) m = NULL;
	struct prfmt *p;

	if (!g_regex_match(re, l->text, 0, &m))
		return NULL;
	g_autofree char *param = g_match_info_fetch(m, 1), *body = g_match_info_fetch(m, 2);
	g_autofree char *pat = g_strdup_printf("\\b%s\\b", param);
	g_autoptr(GRegex) pre = g_regex_new(pat, 0, 0, NULL);
	p = g_new0(struct prfmt, 1);
	p->line = l->kind == '-' ? l->old_no : l->new_no;
	p->body = g_regex_replace_literal(pre, body, -1, 0, "fmt", 0, NULL);
	return p;
}

static void prfmt_free(gpointer p)
{
	struct prfmt *f = p;

	g_free(f->body);
	g_free(f);
}

static void add_prfmt(struct scan_ctx *x, const char *kind, const struct prfmt *o,
		      const struct prfmt *n)
{
	struct pk_finding *f = add_finding(x, kind, NULL, NULL, NULL);

	f->line = n ? n->line : o->line;
	f->old_text = o ? g_strdup(o->body) : NULL;
	f->new_text = n ? g_strdup(n->body) : NULL;
	f->message = g_strdup_printf(
		"pr_fmt() %s: every pr_*() in the file changes prefix (%u in this patch)",
		!o ? "is added" : !n ? "is removed" : "changes", x->pr_calls);
}

/* pr_fmt() findings of one file: a parameter rename alone is no change. */
static void scan_prfmt(struct scan_ctx *x, const struct pk_diff_file *file)
{
	g_autoptr(GPtrArray) olds = g_ptr_array_new_with_free_func(prfmt_free);
	g_autoptr(GPtrArray) news = g_ptr_array_new_with_free_func(prfmt_free);

	for (guint i = 0; i < file->hunks->len; i++) {
		const struct pk_hunk *h = file->hunks->pdata[i];
		for (guint j = 0; j < h->lines->len; j++) {
			const struct pk_diff_line *l = h->lines->pdata[j];
			struct prfmt *p = l->kind == ' ' ? NULL : parse_prfmt(l);
			if (p)
				g_ptr_array_add(l->kind == '-' ? olds : news, p);
		}
	}
	if (olds->len && news->len) {
		const struct prfmt *o = olds->pdata[0], *n = news->pdata[0];
		if (strcmp(o->body, n->body))
			add_prfmt(x, "pr_fmt-changed", o, n);
	} else if (olds->len) {
		add_prfmt(x, "pr_fmt-removed", olds->pdata[0], NULL);
	} else if (news->len) {
		add_prfmt(x, "pr_fmt-added", NULL, news->pdata[0]);
	}
}

static const char *verdict(const struct pk_scan *s)
{
	if (!s->calls_changed && !s->findings->len)
		return "no-churn";
	for (guint i = 0; i < s->findings->len; i++)
		if (!pk_finding_is_silent(((struct pk_finding *)s->findings->pdata[i])->kind))
			return "console-changed";
	return "no-visible-change";
}

struct pk_scan *pk_scan(const struct pk_patch *patch)
{
	struct pk_scan *s = g_new0(struct pk_scan, 1);

	s->findings = g_ptr_array_new_with_free_func(finding_free);
	for (guint i = 0; patch && i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];
		struct scan_ctx x = { .scan = s, .file = pk_diff_file_path(f) };

		for (guint j = 0; j < f->hunks->len; j++)
			scan_hunk(&x, f->hunks->pdata[j]);
		scan_prfmt(&x, f);
	}
	s->verdict = verdict(s);
	return s;
}
