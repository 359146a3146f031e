/* scan.c - static logging-churn scanner; see scan.h for the contract. */
#include "analysis/scan.h"
#include "analysis/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum family { FAM_PRINTK, FAM_PR, FAM_DEV, FAM_NETDEV, FAM_WARN };

/* One token of a call's format argument: a string literal or a macro. */
struct fmt_tok {
	const struct pk_diff_line *dl;  /* the diff line it is on */
	gboolean literal;
	gsize start, len;               /* where it is in call->text (a literal without quotes) */
};

/* One printk-family call found on one side (pre- or post-image) of a hunk. */
struct call {
	enum family fam;
	char *name;
	const char *level;      /* NULL: printk() without a KERN_ level */
	gboolean cont;          /* pr_cont() or KERN_CONT */
	gboolean dynamic;       /* pr_debug(), dev_dbg(): compiled out by default */
	const struct pk_diff_line *kern_dl;  /* the line of a KERN_* token, or NULL */
	GString *text;          /* the format, literals joined, C escapes kept */
	GArray *toks;           /* struct fmt_tok, in order */
	int fmt_lines;          /* distinct source lines holding format literals */
	gboolean changed;       /* one of its lines is '-' or '+' */
	const struct pk_diff_line *dl;  /* its first line */
	int line;               /* that line's number on its side */
	char *func;             /* the function it is in, as far as the hunk shows */
	char *written;
	gboolean paired;
};

static void call_free(gpointer p)
{
	struct call *c = p;

	g_free(c->name);
	g_string_free(c->text, TRUE);
	g_array_unref(c->toks);
	g_free(c->func);
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
	g_free(f->old_prefix);
	g_free(f->new_prefix);
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

static const struct {
	const char *name;
	gboolean silent;    /* by itself it changes nothing on the console */
} finding_kinds[] = {
	[PK_FINDING_PR_FMT_ADDED] = { "pr_fmt-added", FALSE },
	[PK_FINDING_PR_FMT_REMOVED] = { "pr_fmt-removed", FALSE },
	[PK_FINDING_PR_FMT_CHANGED] = { "pr_fmt-changed", FALSE },
	[PK_FINDING_CALL_CONVERTED] = { "call-converted", TRUE },
	[PK_FINDING_LEVEL_CHANGED] = { "level-changed", FALSE },
	[PK_FINDING_LEVEL_MISSING] = { "level-missing", FALSE },
	[PK_FINDING_DEBUG_COMPILED_OUT] = { "debug-compiled-out", FALSE },
	[PK_FINDING_NEWLINE_LOST] = { "newline-lost", FALSE },
	[PK_FINDING_NEWLINE_ADDED] = { "newline-added", FALSE },
	[PK_FINDING_CONT_BROKEN] = { "cont-broken", FALSE },
	[PK_FINDING_CONT_ADDED] = { "cont-added", FALSE },
	[PK_FINDING_STRING_SPLIT] = { "string-split", TRUE },
	[PK_FINDING_TEXT_CHANGED] = { "text-changed", FALSE },
	[PK_FINDING_DEVICE_PREFIX_LOST] = { "device-prefix-lost", FALSE },
	[PK_FINDING_DEVICE_PREFIX_ADDED] = { "device-prefix-added", FALSE },
	[PK_FINDING_MESSAGE_ADDED] = { "message-added", FALSE },
	[PK_FINDING_MESSAGE_REMOVED] = { "message-removed", FALSE },
	[PK_FINDING_WARN_CONVERTED] = { "warn-converted", FALSE },
	[PK_FINDING_PREFIX_CHANGED] = { "prefix-changed", FALSE },
	[PK_FINDING_LOGGING_CONTINUATION] = { "logging-continuation", TRUE },
	[PK_FINDING_PREFER_PR_LEVEL] = { "prefer-pr-level", TRUE },
	[PK_FINDING_EMBEDDED_FUNCTION_NAME] = { "embedded-function-name", TRUE },
	[PK_FINDING_WHITESPACE_BEFORE_NEWLINE] = { "whitespace-before-newline", TRUE },
};

const char *pk_finding_kind_name(enum pk_finding_kind kind)
{
	return (unsigned)kind < G_N_ELEMENTS(finding_kinds) ? finding_kinds[kind].name : "";
}

gboolean pk_finding_kind_parse(const char *name, enum pk_finding_kind *out)
{
	for (unsigned i = 0; name && i < G_N_ELEMENTS(finding_kinds); i++)
		if (!strcmp(name, finding_kinds[i].name)) {
			*out = i;
			return TRUE;
		}
	return FALSE;
}

gboolean pk_finding_is_silent(enum pk_finding_kind kind)
{
	return (unsigned)kind < G_N_ELEMENTS(finding_kinds) && finding_kinds[kind].silent;
}

gboolean pk_finding_is_pr_fmt(enum pk_finding_kind kind)
{
	return kind == PK_FINDING_PR_FMT_ADDED || kind == PK_FINDING_PR_FMT_REMOVED ||
	       kind == PK_FINDING_PR_FMT_CHANGED;
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

	static const struct { const char *name; int fmt_arg; } warns[] = {
		{ "WARN", 1 }, { "WARN_ONCE", 1 }, { "WARN_RATELIMIT", 1 },
		{ "WARN_TAINT", 2 }, { "WARN_TAINT_ONCE", 2 },
	};

	*dynamic = FALSE;
	*level = NULL;
	for (size_t i = 0; i < G_N_ELEMENTS(warns); i++)
		if (!strcmp(name, warns[i].name)) {
			*fam = FAM_WARN;
			*fmt_arg = warns[i].fmt_arg;
			return TRUE;
		}
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

/*
 * What the backward walk of enclosing_function() found from a hunk line:
 * the calls of a side come in line order, so each walk stops where the
 * last one started (a hunk of 100,000 pr_info() lines took 22 s walking
 * back to its top for every call).
 */
struct func_memo {
	int idx;                /* the walk started at this line; -1: none yet */
	int stop;               /* 0 nothing found, 1 a function, 2 a closing brace */
	char *func;             /* stop == 1: its name */
};

/* One side of a hunk as a single text, with the hunk line of each byte. */
struct side {
	GString *buf;
	GArray *line_of;        /* int: index into hunk->lines */
	const struct pk_hunk *hunk;
	char side;              /* '-' (pre-image) or '+' (post-image) */
	struct func_memo *memo;
};

static void side_build(struct side *s, const struct pk_hunk *h, char which)
{
	s->buf = g_string_new(NULL);
	s->line_of = g_array_new(FALSE, FALSE, sizeof(int));
	s->hunk = h;
	s->side = which;
	s->memo = g_new0(struct func_memo, 1);
	s->memo->idx = -1;
	for (guint i = 0; i < h->lines->len; i++) {
		const struct pk_diff_line *l = h->lines->pdata[i];
		int idx = (int)i;

		size_t n, at;

		if (l->kind != ' ' && l->kind != which)
			continue;
		n = strlen(l->text);
		g_string_append_len(s->buf, l->text, (gssize)n);
		g_string_append_c(s->buf, '\n');
		at = s->line_of->len;
		g_array_set_size(s->line_of, at + n + 1);
		for (size_t k = 0; k <= n; k++)
			g_array_index(s->line_of, int, at + k) = idx;
	}
}

static void side_clear(struct side *s)
{
	g_string_free(s->buf, TRUE);
	g_array_unref(s->line_of);
	g_free(s->memo->func);
	g_free(s->memo);
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
	struct fmt_tok tok = { side_line(s, p), b[p] == '"', c->text->len, 0 };

	if (b[p] == '"') {
		int line = g_array_index(s->line_of, int, p);
		g_string_append_len(c->text, b + p + 1, end - p - (b[end - 1] == '"' ? 2 : 1));
		if (line != *last_line)
			c->fmt_lines++;
		*last_line = line;
		tok.len = c->text->len - tok.start;
		g_array_append_val(c->toks, tok);
		return;
	}
	if (g_str_has_prefix(b + p, "KERN_")) {
		g_autofree char *w = g_strndup(b + p + 5, end - p - 5);
		const char *lvl = level_of_word(w);
		if (lvl && !strcmp(lvl, "cont"))
			c->cont = TRUE;
		else if (lvl)
			c->level = lvl;
		if (lvl)
			c->kern_dl = tok.dl;
		return;
	}
	/* a macro (PFX, DRV_NAME...) glued to the format: keep it visible */
	g_string_append_printf(c->text, "{%.*s}", (int)(end - p), b + p);
	tok.len = c->text->len - tok.start;
	g_array_append_val(c->toks, tok);
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

/*
 * A regular expression compiled once (GRegex matching is thread-safe).
 * Raw bytes, not UTF-8: a plain diff's lines need not be valid UTF-8, and
 * PCRE's JIT (G_REGEX_OPTIMIZE) crashes on invalid UTF-8 in UTF-8 mode.
 */
static GRegex *regex_once(GRegex **slot, gsize *once, const char *pattern)
{
	if (g_once_init_enter(once)) {
		*slot = g_regex_new(pattern, G_REGEX_OPTIMIZE | G_REGEX_RAW, 0, NULL);
		g_once_init_leave(once, 1);
	}
	return *slot;
}

/* The name of the function a line begins the definition of, or NULL. */
static char *function_defined(const char *line)
{
	static GRegex *re;
	static gsize once;
	g_autoptr(GMatchInfo) m = NULL;

	/* at column 0, not a statement: "static int __init foo_init(void)" */
	regex_once(&re, &once, "^(?!(?:if|for|while|switch|return|else|do|case|goto|sizeof|typedef)\\b)"
		   "[A-Za-z_][\\w\\s*]*?\\b([A-Za-z_]\\w*)\\s*\\([^;]*$");
	if (!g_ascii_isalpha(*line) && *line != '_')
		return NULL;
	return g_regex_match(re, line, 0, &m) ? g_match_info_fetch(m, 1) : NULL;
}

/*
 * The function hunk line idx is in: the nearest definition above it on
 * this side of the hunk, else the function git names in the hunk header,
 * as checkpatch takes it (its first "name(").  NULL after a closing brace
 * at column 0 or when the header names none.
 */
static char *enclosing_function(const struct side *s, int idx)
{
	static GRegex *re;
	static gsize once;
	g_autoptr(GMatchInfo) m = NULL;
	struct func_memo *memo = s->memo;
	int from = memo->idx >= 0 && memo->idx <= idx ? memo->idx : 0, stop = 0;
	char *name = NULL;

	for (int i = idx - 1; i >= from && !stop; i--) {
		const struct pk_diff_line *l = s->hunk->lines->pdata[i];

		if (l->kind != ' ' && l->kind != s->side)
			continue;
		if (l->text[0] == '}')
			stop = 2;
		else if ((name = function_defined(l->text)))
			stop = 1;
	}
	if (!stop && from > 0) {   /* nothing since the last walk: what it found */
		stop = memo->stop;
		name = g_strdup(memo->func);
	}
	g_free(memo->func);
	memo->idx = idx;
	memo->stop = stop;
	memo->func = g_strdup(name);
	if (stop)
		return name;
	regex_once(&re, &once, "\\b(\\w+)\\s*\\(");
	if (!s->hunk->section || !g_regex_match(re, s->hunk->section, 0, &m))
		return NULL;
	return g_match_info_fetch(m, 1);
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
	c.toks = g_array_new(FALSE, FALSE, sizeof(struct fmt_tok));
	if (c.level && !strcmp(c.level, "cont")) {
		c.cont = TRUE;
		c.level = NULL;
	}
	close = parse_args(&c, s, open, fmt_arg);
	for (size_t i = p; i < close && i < s->line_of->len; i++)
		if (side_line(s, i)->kind == s->side)
			c.changed = TRUE;
	c.dl = side_line(s, p);
	c.line = s->side == '-' ? c.dl->old_no : c.dl->new_no;
	c.func = enclosing_function(s, g_array_index(s->line_of, int, p));
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

/* What scanning one file of a patch knows and collects. */
struct scan_ctx {
	struct pk_scan *scan;
	const struct pk_diff_file *dfile;
	const char *file;
	unsigned pr_calls;      /* pr_*() calls (prefixed by pr_fmt) in the hunks' post-image */
	int pr_delta;           /* those the patch adds minus those it removes */
	gboolean prfmt_changed; /* a pr_fmt() line of the file changes */
	struct pk_tree *tree;   /* NULL without --tree */
	gboolean described;     /* the tree was asked about the file */
	struct pk_tree_file *old_desc, *new_desc;
	char *post_text;        /* the post-image file, NULL when the tree cannot give it */
};

/* Whether a call gets the pr_fmt() prefix: pr_*() except pr_cont(). */
static gboolean uses_pr_fmt(const struct call *c)
{
	return c->fam == FAM_PR && !c->cont;
}

/* Ask the tree about the file once: pre-image, post-image, their prefixes. */
static void ctx_describe(struct scan_ctx *x)
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

static void ctx_clear(struct scan_ctx *x)
{
	pk_tree_file_free(x->old_desc);
	pk_tree_file_free(x->new_desc);
	g_free(x->post_text);
}

/* The prefix a call prints with the tree: NULL when unknown or per device. */
static const char *call_prefix(struct scan_ctx *x, const struct call *c, gboolean post)
{
	const struct pk_tree_file *d;

	ctx_describe(x);
	d = post ? x->new_desc : x->old_desc;
	if (!x->tree)
		return NULL;
	if (c->fam == FAM_DEV || c->fam == FAM_NETDEV)
		return NULL;
	if (!uses_pr_fmt(c))
		return "";
	return d ? d->prefix : NULL;
}

static struct pk_finding *add_finding(struct scan_ctx *x, enum pk_finding_kind kind,
				      const struct call *o, const struct call *n,
				      char *message)
{
	struct pk_finding *f = g_new0(struct pk_finding, 1);

	f->file = g_strdup(x->file);
	f->kind = kind;
	f->silent = pk_finding_is_silent(kind);
	f->line = n ? n->line : o ? o->line : 0;
	if (o) {
		f->old_call = g_strdup(o->written);
		f->old_level = shown_level(o);
		f->old_text = g_strdup(o->text->str);
		f->old_prefix = g_strdup(call_prefix(x, o, FALSE));
	}
	if (n) {
		f->new_call = g_strdup(n->written);
		f->new_level = shown_level(n);
		f->new_text = g_strdup(n->text->str);
		f->new_prefix = g_strdup(call_prefix(x, n, TRUE));
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

/* ", and gains the prefix "x: " from pr_fmt()", or "" when no prefix comes. */
static char *prefix_clause(const char *verb, const char *prefix)
{
	if (!prefix || !*prefix)
		return g_strdup("");
	return g_strdup_printf(", and %s the prefix \"%s\" of pr_fmt()", verb, prefix);
}

/* A printk() <-> pr_*() conversion: silent unless the pr_fmt() prefix differs. */
static void pair_converted(struct scan_ctx *x, const struct call *o, const struct call *n)
{
	const char *op = call_prefix(x, o, FALSE), *np = call_prefix(x, n, TRUE);
	struct pk_finding *f;

	if (!op || !np) {
		add_finding(x, PK_FINDING_CALL_CONVERTED, o, n, g_strdup_printf(
			"%s() becomes %s() with the same text and level: no console change "
			"unless a pr_fmt() applies", o->name, n->name));
	} else if (!strcmp(op, np)) {
		add_finding(x, PK_FINDING_CALL_CONVERTED, o, n, g_strdup_printf(
			"%s() becomes %s() with the same text, level and prefix (\"%s\"): "
			"no console change", o->name, n->name, np));
	} else {
		f = add_finding(x, PK_FINDING_CALL_CONVERTED, o, n, g_strdup_printf(
			"%s() becomes %s() with the same text and level, but the message "
			"prints \"%s\" before it instead of \"%s\" (pr_fmt())", o->name, n->name, np, op));
		f->silent = FALSE;
	}
}

/* Prefix and family findings of a rewritten call; TRUE when they said the prefix. */
static gboolean pair_family(struct scan_ctx *x, const struct call *o, const struct call *n,
			    const char *q)
{
	if (is_device(o) && !is_device(n)) {
		g_autofree char *gain = prefix_clause("gains", call_prefix(x, n, TRUE));
		add_finding(x, PK_FINDING_DEVICE_PREFIX_LOST, o, n, g_strdup_printf(
			"%s() becomes %s(): %s loses its device name prefix%s", o->name, n->name, q, gain));
		return TRUE;
	}
	if (!is_device(o) && is_device(n)) {
		g_autofree char *lose = prefix_clause("loses", call_prefix(x, o, FALSE));
		add_finding(x, PK_FINDING_DEVICE_PREFIX_ADDED, o, n, g_strdup_printf(
			"%s() becomes %s(): %s gains a device name prefix%s", o->name, n->name, q, lose));
		return TRUE;
	}
	if ((o->fam == FAM_WARN) != (n->fam == FAM_WARN)) {
		if (o->fam == FAM_WARN)
			add_finding(x, PK_FINDING_WARN_CONVERTED, o, n, g_strdup_printf(
				"%s() becomes %s(): %s stays, but the WARNING: line, the backtrace "
				"and the taint flag go", o->name, n->name, q));
		else
			add_finding(x, PK_FINDING_WARN_CONVERTED, o, n, g_strdup_printf(
				"%s() becomes %s(): %s now comes with a WARNING: line, a backtrace "
				"and the taint flag", o->name, n->name, q));
		return FALSE;
	}
	if (o->fam != n->fam && !n->dynamic && !strcmp(shown_level(o), shown_level(n))) {
		pair_converted(x, o, n);
		return TRUE;
	}
	return FALSE;
}

/* Level, continuation and dynamic-debug findings of a rewritten call. */
static void pair_level(struct scan_ctx *x, const struct call *o, const struct call *n,
		       const char *q)
{
	const char *ol = shown_level(o), *nl = shown_level(n);

	if (n->dynamic && !o->dynamic)
		add_finding(x, PK_FINDING_DEBUG_COMPILED_OUT, o, n, g_strdup_printf(
			"%s() becomes %s(): %s vanishes unless DEBUG or dynamic debug enables it",
			o->name, n->name, q));
	if (o->cont && !n->cont) {
		add_finding(x, PK_FINDING_CONT_BROKEN, o, n, g_strdup_printf(
			"%s is no longer a continuation: it starts a new line", q));
		return;
	}
	if (!o->cont && n->cont) {
		add_finding(x, PK_FINDING_CONT_ADDED, o, n, g_strdup_printf(
			"%s becomes a continuation of the previous line", q));
		return;
	}
	if (!strcmp(ol, nl) || (n->dynamic && !strcmp(ol, "debug")))
		return;
	if (n->fam == FAM_PRINTK && !n->level)
		add_finding(x, PK_FINDING_LEVEL_MISSING, o, n, g_strdup_printf(
			"%s loses its KERN_ level and prints at the default level", q));
	else
		add_finding(x, PK_FINDING_LEVEL_CHANGED, o, n, g_strdup_printf(
			"%s moves from %s to %s level", q, ol, nl));
}

/* Text and newline findings of a rewritten call. */
static void pair_text(struct scan_ctx *x, const struct call *o, const struct call *n,
		      const char *q)
{
	g_autofree char *ot = norm_text(o), *nt = norm_text(n);

	if (has_newline(o) && !has_newline(n))
		add_finding(x, PK_FINDING_NEWLINE_LOST, o, n, g_strdup_printf(
			"%s lost its trailing \\n: the next message may join its line", q));
	else if (!has_newline(o) && has_newline(n))
		add_finding(x, PK_FINDING_NEWLINE_ADDED, o, n, g_strdup_printf(
			"%s gained a trailing \\n", q));
	if (strcmp(ot, nt))
		add_finding(x, PK_FINDING_TEXT_CHANGED, o, n, g_strdup_printf(
			"the text \"%s\" becomes \"%s\"", ot, nt));
}

/* Whether a literal ends in an escape after which checkpatch allows a split. */
static gboolean ends_in_escape(const char *lit, gsize len)
{
	static GRegex *re;
	static gsize once;
	g_autofree char *s = g_strndup(lit, len);

	regex_once(&re, &once, "\\\\(?:[ntr]|[0-7]{1,3}|x[0-9a-fA-F]{1,2})$");
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
static void add_line_finding(struct scan_ctx *x, enum pk_finding_kind kind, const struct call *o,
			     const struct call *n, const struct pk_diff_line *dl, char *message)
{
	struct pk_finding *f = add_finding(x, kind, o, n, message);

	f->line = dl->new_no;
}

/*
 * The format's literals on added lines: split points, the enclosing
 * function's name, blanks before "\n" (checkpatch's SPLIT_STRING,
 * EMBEDDED_FUNCTION_NAME, QUOTED_WHITESPACE_BEFORE_NEWLINE).
 */
static void scan_literals(struct scan_ctx *x, const struct call *o, const struct call *n,
			  const char *q)
{
	const struct pk_diff_line *named = NULL, *blank = NULL;

	for (guint i = 0; i < n->toks->len; i++) {
		const struct fmt_tok *t = &g_array_index(n->toks, struct fmt_tok, i);
		const struct fmt_tok *prev = i ? t - 1 : NULL;
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
 * What checkpatch says about the call's own line: printk() without a level
 * (for a rewritten call that had none either, which changes nothing),
 * printk(KERN_<LEVEL> where pr_<level>() exists, and continuations.
 */
static void scan_call_line(struct scan_ctx *x, const struct call *o, const struct call *n,
			   const char *q, gboolean cont_reported)
{
	gboolean printk = !strcmp(n->name, "printk") || !strcmp(n->name, "printk_once") ||
			  !strcmp(n->name, "printk_ratelimited");

	if (n->dl->kind != '+')
		return;
	if (o && n->fam == FAM_PRINTK && !n->level && !n->cont && o->fam == FAM_PRINTK && !o->level) {
		add_finding(x, PK_FINDING_LEVEL_MISSING, o, n, g_strdup_printf(
			"%s is still printed without a KERN_ level", q))->silent = TRUE;
	}
	if (printk && n->kern_dl == n->dl && (n->level || n->cont)) {
		const char *lvl = n->cont ? "cont" : n->level;
		g_autofree char *macro = g_ascii_strup(!strcmp(lvl, "warn") ? "warning" : lvl, -1);
		add_finding(x, PK_FINDING_PREFER_PR_LEVEL, o, n, g_strdup_printf(
			"%s(KERN_%s ...) where pr_%s() would do, and would get the file's "
			"pr_fmt() prefix", n->name, macro, lvl));
	}
	if (n->cont && !cont_reported && (n->fam == FAM_PR || n->kern_dl == n->dl))
		add_finding(x, PK_FINDING_LOGGING_CONTINUATION, o, n, g_strdup_printf(
			"%s continues a line: another CPU's message can land in the middle of it", q));
}

/* A prefix change of a rewritten call that no other finding has stated. */
static void pair_prefix(struct scan_ctx *x, const struct call *o, const struct call *n)
{
	const char *op = call_prefix(x, o, FALSE), *np = call_prefix(x, n, TRUE);

	if (op && np && strcmp(op, np) && !x->prfmt_changed)
		add_finding(x, PK_FINDING_PREFIX_CHANGED, o, n, g_strdup_printf(
			"the message prints \"%s\" before its text instead of \"%s\"", np, op));
}

static void scan_pair(struct scan_ctx *x, const struct call *o, const struct call *n)
{
	g_autofree char *q = quote(n);
	guint before = x->scan->findings->len;
	gboolean cont_reported;

	if (!pair_family(x, o, n, q))
		pair_prefix(x, o, n);
	pair_level(x, o, n, q);
	cont_reported = x->scan->findings->len > before &&
		((struct pk_finding *)g_ptr_array_index(x->scan->findings,
			x->scan->findings->len - 1))->kind == PK_FINDING_CONT_ADDED;
	pair_text(x, o, n, q);
	scan_literals(x, o, n, q);
	scan_call_line(x, o, n, q, cont_reported);
}

static void scan_removed(struct scan_ctx *x, const struct call *o)
{
	g_autofree char *q = quote(o);

	add_finding(x, PK_FINDING_MESSAGE_REMOVED, o, NULL, g_strdup_printf(
		"%s() of %s is removed", o->name, q));
}

static void scan_added(struct scan_ctx *x, const struct call *n)
{
	g_autofree char *q = quote(n);
	const char *prefix = call_prefix(x, n, TRUE);

	if (prefix && *prefix)
		add_finding(x, PK_FINDING_MESSAGE_ADDED, NULL, n, g_strdup_printf(
			"%s() of %s is added; it prints as \"%s%s\"", n->name, q, prefix,
			n->text->str));
	else
		add_finding(x, PK_FINDING_MESSAGE_ADDED, NULL, n, g_strdup_printf(
			"%s() of %s is added", n->name, q));
	if (n->fam == FAM_PRINTK && !n->level && !n->cont)
		add_finding(x, PK_FINDING_LEVEL_MISSING, NULL, n, g_strdup_printf(
			"%s is printed without a KERN_ level", q));
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

/* Keep only the calls a hunk changes; count the pr_fmt()-prefixed ones. */
static GPtrArray *changed_only(struct scan_ctx *x, GPtrArray *all, gboolean post)
{
	GPtrArray *out = g_ptr_array_new();

	for (guint i = 0; i < all->len; i++) {
		struct call *c = all->pdata[i];
		if (post && uses_pr_fmt(c))
			x->pr_calls++;
		if (uses_pr_fmt(c) && c->changed)
			x->pr_delta += post ? 1 : -1;
		if (c->changed)
			g_ptr_array_add(out, c);
	}
	return out;
}

/* Whether a hunk has a line that may be (part of) a printk-family call. */
static gboolean hunk_may_log(const struct pk_hunk *h)
{
	for (guint i = 0; i < h->lines->len; i++) {
		const char *t = ((const struct pk_diff_line *)h->lines->pdata[i])->text;
		if (strstr(t, "pr_") || strstr(t, "printk") || strstr(t, "dev_") || strstr(t, "WARN"))
			return TRUE;
	}
	return FALSE;
}

static void scan_hunk(struct scan_ctx *x, const struct pk_hunk *h)
{
	struct side o, n;
	g_autoptr(GPtrArray) oall = NULL, nall = NULL, olds = NULL, news = NULL;

	if (!hunk_may_log(h))
		return;
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

/* The pr_fmt()-prefixed calls of a whole file's text. */
static unsigned count_prefixed_calls(const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	struct pk_hunk h = { .lines = g_ptr_array_new_with_free_func(g_free) };
	struct side s;
	g_autoptr(GPtrArray) calls = NULL;
	unsigned n = 0;

	if (!strstr(text, "pr_"))
		return 0;
	for (int i = 0; lines[i]; i++) {
		struct pk_diff_line *l = g_new0(struct pk_diff_line, 1);
		l->kind = ' ';
		l->old_no = l->new_no = i + 1;
		l->text = lines[i];     /* borrowed from lines */
		g_ptr_array_add(h.lines, l);
	}
	side_build(&s, &h, '+');
	calls = side_calls(&s);
	for (guint i = 0; i < calls->len; i++)
		n += uses_pr_fmt(calls->pdata[i]);
	side_clear(&s);
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
static unsigned prfmt_affected(struct scan_ctx *x, gboolean *whole_file, unsigned *included)
{
	const struct pk_tree_file *d;
	const char *text;
	unsigned n;

	ctx_describe(x);
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
static char *prfmt_prefix(struct scan_ctx *x, const struct prfmt *p, gboolean post)
{
	const struct pk_tree_file *d;

	ctx_describe(x);
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

static void add_prfmt(struct scan_ctx *x, enum pk_finding_kind kind, const struct prfmt *o,
		      const struct prfmt *n)
{
	struct pk_finding *f = add_finding(x, kind, NULL, NULL, NULL);
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

/* The pr_fmt() definitions a file's hunks remove and add. */
static void prfmt_lines(const struct pk_diff_file *file, GPtrArray *olds, GPtrArray *news)
{
	for (guint i = 0; i < file->hunks->len; i++) {
		const struct pk_hunk *h = file->hunks->pdata[i];
		for (guint j = 0; j < h->lines->len; j++) {
			const struct pk_diff_line *l = h->lines->pdata[j];
			struct prfmt *p = l->kind == ' ' || !strstr(l->text, "pr_fmt") ? NULL : parse_prfmt(l);
			if (p)
				g_ptr_array_add(l->kind == '-' ? olds : news, p);
		}
	}
}

/* pr_fmt() findings of one file: a parameter rename alone is no change. */
static void scan_prfmt(struct scan_ctx *x, GPtrArray *olds, GPtrArray *news)
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

static enum pk_verdict verdict(const struct pk_scan *s)
{
	if (!s->calls_changed && !s->findings->len)
		return PK_VERDICT_NO_CHURN;
	for (guint i = 0; i < s->findings->len; i++)
		if (!((struct pk_finding *)s->findings->pdata[i])->silent)
			return PK_VERDICT_CONSOLE_CHANGED;
	return PK_VERDICT_NO_VISIBLE_CHANGE;
}

struct pk_scan *pk_scan_tree(const struct pk_patch *patch, struct pk_tree *tree)
{
	struct pk_scan *s = g_new0(struct pk_scan, 1);

	s->findings = g_ptr_array_new_with_free_func(finding_free);
	for (guint i = 0; patch && i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];
		struct scan_ctx x = { .scan = s, .dfile = f, .file = pk_diff_file_path(f), .tree = tree };
		g_autoptr(GPtrArray) olds = g_ptr_array_new_with_free_func(prfmt_free);
		g_autoptr(GPtrArray) news = g_ptr_array_new_with_free_func(prfmt_free);

		prfmt_lines(f, olds, news);
		x.prfmt_changed = olds->len || news->len;
		for (guint j = 0; j < f->hunks->len; j++)
			scan_hunk(&x, f->hunks->pdata[j]);
		scan_prfmt(&x, olds, news);
		ctx_clear(&x);
	}
	s->verdict = verdict(s);
	return s;
}

struct pk_scan *pk_scan(const struct pk_patch *patch)
{
	return pk_scan_tree(patch, NULL);
}
