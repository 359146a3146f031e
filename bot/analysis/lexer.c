/*
 * lexer.c - the printk-family calls of one side of a hunk; see lexer.h.
 *
 * A side (the context lines and the '-' or the '+' lines) is joined into
 * one text with the hunk line of each byte, so that a call spread over
 * several lines reads as one; identifiers followed by '(' are looked up
 * in the family, and a call's arguments are read with C's literals,
 * comments and brackets in mind, keeping the format argument's tokens.
 */
#include "analysis/lexer.h"

#include <string.h>

#include "base/proc.h"
#include "base/util.h"

static void call_free(gpointer p)
{
	struct pk_call *c = p;

	g_free(c->name);
	g_string_free(c->text, TRUE);
	g_array_unref(c->toks);
	g_ptr_array_unref(c->args);
	g_free(c->func);
	g_free(c->written);
	g_free(c);
}

/* Level words of the <prefix>_<level>() names, and KERN_* macros. */
static const struct { const char *word; const char *level; } level_words[] = {
	{ "emerg", "emerg" }, { "alert", "alert" }, { "crit", "crit" },
	{ "err", "err" }, { "warn", "warn" }, { "warning", "warn" },
	{ "notice", "notice" }, { "info", "info" }, { "cont", "cont" },
	{ "debug", "debug" }, { "devel", "debug" }, { "dbg", "debug" },
	{ "vdbg", "debug" }, { "default", "default" },
};

/* The level a word of n bytes names (case-insensitive for KERN_*), or NULL. */
static const char *level_of_word(const char *w, size_t n, gboolean any_case)
{
	for (size_t i = 0; i < G_N_ELEMENTS(level_words); i++)
		if (strlen(level_words[i].word) == n &&
		    !(any_case ? g_ascii_strncasecmp : strncmp)(w, level_words[i].word, n))
			return level_words[i].level;
	return NULL;
}

/* The length of name without its rate-limit suffixes ("err_once" -> "err"). */
static size_t strip_suffixes(const char *name, size_t n)
{
	static const char *const suffixes[] = { "_once", "_ratelimited", "_deferred", "_ONCE" };

	for (gboolean again = TRUE; again;) {
		again = FALSE;
		for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
			size_t k = strlen(suffixes[i]);
			if (n > k && !strncmp(name + n - k, suffixes[i], k)) {
				n -= k;
				again = TRUE;
			}
		}
	}
	return n;
}

/* What a printk-family name says about its calls. */
struct call_kind {
	enum pk_call_family fam;
	const char *level;      /* from the name; NULL when in the format (KERN_*) */
	gboolean dynamic;
	gboolean probe;
	int fmt_arg;            /* -1: the first argument holding a string literal */
	int subsys_len;
};

/* The names that follow no <prefix>_<level> pattern. */
static gboolean classify_fixed(const char *name, struct call_kind *k)
{
	static const struct {
		const char *name;
		enum pk_call_family fam;
		const char *level;
		int fmt_arg;
		gboolean probe;
	} fixed[] = {
		{ "WARN", PK_FAM_WARN, NULL, 1, FALSE }, { "WARN_ONCE", PK_FAM_WARN, NULL, 1, FALSE },
		{ "WARN_RATELIMIT", PK_FAM_WARN, NULL, 1, FALSE },
		{ "WARN_TAINT", PK_FAM_WARN, NULL, 2, FALSE },
		{ "WARN_TAINT_ONCE", PK_FAM_WARN, NULL, 2, FALSE },
		{ "printk", PK_FAM_PRINTK, NULL, 0, FALSE }, { "printk_once", PK_FAM_PRINTK, NULL, 0, FALSE },
		{ "printk_ratelimited", PK_FAM_PRINTK, NULL, 0, FALSE },
		{ "printk_deferred", PK_FAM_PRINTK, NULL, 0, FALSE },
		{ "printk_deferred_once", PK_FAM_PRINTK, NULL, 0, FALSE },
		{ "_printk", PK_FAM_PRINTK, NULL, 0, FALSE },
		{ "panic", PK_FAM_PANIC, "emerg", 0, FALSE },
		/* dev_err_probe(dev, err, fmt): dev_dbg() instead on -EPROBE_DEFER */
		{ "dev_err_probe", PK_FAM_DEV, "err", 2, TRUE },
		{ "dev_warn_probe", PK_FAM_DEV, "warn", 2, TRUE },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
		if (!strcmp(name, fixed[i].name)) {
			k->fam = fixed[i].fam;
			k->level = fixed[i].level;
			k->fmt_arg = fixed[i].fmt_arg;
			k->probe = fixed[i].probe;
			return TRUE;
		}
	return FALSE;
}

/* Whether [s, s + n) is one or two lower-case words: "drm", "bt_dev". */
static gboolean subsys_words(const char *s, size_t n)
{
	unsigned words = 1;

	if (!n || s[0] == '_' || s[n - 1] == '_')
		return FALSE;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '_' && (s[i - 1] == '_' || ++words > 2))
			return FALSE;
		if (s[i] != '_' && !g_ascii_islower(s[i]) && !g_ascii_isdigit(s[i]))
			return FALSE;
	}
	return TRUE;
}

/*
 * Whether name is a printk-family call, and what kind: checkpatch.pl's
 * $logFunctions (printk*, <one or two words>_<level>() with _once and
 * _ratelimited, <words>_printk(), WARN*(), panic()) but for MODULE_*(),
 * TP_printk() and seq_*(), which print nothing to the console, plus
 * dev_err_probe() and dev_warn_probe().  pr_, dev_ and netdev_ are their
 * own families; every other prefix is a subsystem wrapper, whose format is
 * found as its first string literal (read_call() drops one without any,
 * which is how get_info(x) or set_err(y) are told from logging calls).
 */
static gboolean classify(const char *name, struct call_kind *k)
{
	size_t n, cut, plen;
	const char *word;
	gboolean printk, warn;

	memset(k, 0, sizeof(*k));
	if (classify_fixed(name, k))
		return TRUE;
	n = strip_suffixes(name, strlen(name));
	for (cut = n; cut > 0 && name[cut - 1] != '_'; cut--)
		;
	if (cut < 2 || cut == n || !subsys_words(name, plen = cut - 1))
		return FALSE;
	word = name + cut;
	printk = n - cut == 6 && !strncmp(word, "printk", 6);
	warn = n - cut == 4 && !strncmp(word, "WARN", 4);
	if (!printk && !warn && (!(k->level = level_of_word(word, n - cut, FALSE)) ||
				 !strcmp(k->level, "default")))
		return FALSE;
	if (plen == 2 && !strncmp(name, "pr", 2)) {
		/* pr_debug() and pr_devel(), but no pr_dbg() or pr_printk() */
		if (printk || warn || !strncmp(word, "dbg", 3) || !strncmp(word, "vdbg", 4))
			return FALSE;
		k->fam = PK_FAM_PR;
	} else if ((plen == 3 && !strncmp(name, "dev", 3)) || (plen == 6 && !strncmp(name, "netdev", 6))) {
		if (warn || (n - cut == 5 && !strncmp(word, "debug", 5)))
			return FALSE;   /* no dev_debug(): dev_dbg() */
		k->fam = plen == 3 ? PK_FAM_DEV : PK_FAM_NETDEV;
		k->fmt_arg = printk ? 2 : 1;   /* dev_printk(KERN_X, dev, fmt) */
	} else {
		k->fam = warn ? PK_FAM_WARN : PK_FAM_SUBSYS;
		k->fmt_arg = -1;
		k->subsys_len = (int)plen;
	}
	k->dynamic = k->level && !strcmp(k->level, "debug");
	return TRUE;
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

/*
 * One side of a hunk as a single text, with where each of its lines
 * starts (a byte's line is found by a binary search: an entry per byte
 * made building the side the lexer's costliest loop).
 */
struct side {
	GString *buf;
	GArray *starts;         /* gsize: offset in buf of each line of the side */
	GArray *lines;          /* int: the index into hunk->lines of each */
	const struct pk_hunk *hunk;
	char side;              /* '-' (pre-image) or '+' (post-image) */
	struct func_memo *memo;
};

static void side_build(struct side *s, const struct pk_hunk *h, char which)
{
	s->buf = g_string_new(NULL);
	s->starts = g_array_new(FALSE, FALSE, sizeof(gsize));
	s->lines = g_array_new(FALSE, FALSE, sizeof(int));
	s->hunk = h;
	s->side = which;
	s->memo = g_new0(struct func_memo, 1);
	s->memo->idx = -1;
	for (guint i = 0; i < h->lines->len; i++) {
		const struct pk_diff_line *l = h->lines->pdata[i];
		int idx = (int)i;
		gsize at = s->buf->len;

		if (l->kind != ' ' && l->kind != which)
			continue;
		g_array_append_val(s->starts, at);
		g_array_append_val(s->lines, idx);
		g_string_append(s->buf, l->text);
		g_string_append_c(s->buf, '\n');
	}
}

/* The index into hunk->lines of the line that holds byte pos of the side's text. */
static int side_line_index(const struct side *s, size_t pos)
{
	guint lo = 0, hi = s->starts->len;

	/* the last line starting at or before pos; the first when none does */
	while (hi - lo > 1) {
		guint mid = lo + (hi - lo) / 2;

		if (g_array_index(s->starts, gsize, mid) <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return g_array_index(s->lines, int, lo);
}

static void side_clear(struct side *s)
{
	g_string_free(s->buf, TRUE);
	g_array_unref(s->starts);
	g_array_unref(s->lines);
	g_free(s->memo->func);
	g_free(s->memo);
}

static const struct pk_diff_line *side_line(const struct side *s, size_t pos)
{
	return s->hunk->lines->pdata[side_line_index(s, pos)];
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
static void format_token(struct pk_call *c, const struct side *s, const char *b, size_t p,
			 size_t end, int *last_line)
{
	struct pk_fmt_tok tok = { side_line(s, p), b[p] == '"', c->text->len, 0 };

	if (b[p] == '"') {
		int line = side_line_index(s, p);
		g_string_append_len(c->text, b + p + 1, end - p - (b[end - 1] == '"' ? 2 : 1));
		if (line != *last_line)
			c->fmt_lines++;
		*last_line = line;
		tok.len = c->text->len - tok.start;
		g_array_append_val(c->toks, tok);
		return;
	}
	if (g_str_has_prefix(b + p, "KERN_")) {
		const char *lvl = level_of_word(b + p + 5, end - p - 5, TRUE);
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

/* Keep argument number arg, [from, to) of b, when it comes after the format (fmt_arg). */
static void add_arg(struct pk_call *c, const char *b, size_t from, size_t to, int arg, int fmt_arg)
{
	if (fmt_arg < 0 || arg <= fmt_arg || to <= from)
		return;
	g_ptr_array_add(c->args, g_strstrip(fold_written(b, from, to)));
}

/*
 * Parse the argument list of a call whose '(' is at p; fills the format
 * fields and returns the position after the closing ')'.  fmt_arg -1 takes
 * the first argument where a string literal or a KERN_* level comes at its
 * top level.
 */
static size_t parse_args(struct pk_call *c, const struct side *s, size_t p, int fmt_arg)
{
	const char *b = s->buf->str;
	size_t len = s->buf->len, arg_start = p + 1;
	int depth = 0, arg = 0, last_line = -1;

	for (p++; (p = skip_space(b, p, len)) < len;) {
		size_t end = p + 1;
		char ch = b[p];

		if (ch == '"' || ch == '\'')
			end = skip_literal(b, p, len);
		else if (g_ascii_isalnum(ch) || ch == '_')
			for (end = p; end < len && (g_ascii_isalnum(b[end]) || b[end] == '_'); end++)
				;
		if (ch == '(' || ch == '[' || ch == '{') {
			depth++;
		} else if ((ch == ')' || ch == ']' || ch == '}') && depth-- == 0) {
			add_arg(c, b, arg_start, p, arg, fmt_arg);
			return p + 1;
		} else if (ch == ',' && depth == 0) {
			add_arg(c, b, arg_start, p, arg++, fmt_arg);
			arg_start = p + 1;
		} else if (fmt_arg < 0 && depth == 0 && (ch == '"' || g_str_has_prefix(b + p, "KERN_"))) {
			fmt_arg = arg;
			format_token(c, s, b, p, end, &last_line);
		} else if (arg == fmt_arg && depth == 0 && ch != '\'' &&
			 (ch == '"' || g_ascii_isalpha(ch) || ch == '_'))
			format_token(c, s, b, p, end, &last_line);
		else if (arg == 0 && fmt_arg == 2 && g_str_has_prefix(b + p, "KERN_"))
			format_token(c, s, b, p, end, &last_line);  /* dev_printk's level */
		p = end;
	}
	add_arg(c, b, arg_start, len, arg, fmt_arg);   /* the hunk ends inside the call */
	return len;
}

/*
 * A regular expression compiled once (GRegex matching is thread-safe).
 * Raw bytes, not UTF-8: a plain diff's lines need not be valid UTF-8, and
 * PCRE's JIT (G_REGEX_OPTIMIZE) crashes on invalid UTF-8 in UTF-8 mode.
 */
GRegex *pk_lexer_regex(GRegex **slot, gsize *once, const char *pattern)
{
	if (g_once_init_enter(once)) {
		*slot = g_regex_new(pattern, pk_regex_optimize() | G_REGEX_RAW, 0, NULL);
		g_once_init_leave(once, 1);
	}
	return *slot;
}

char *pk_lexer_function_defined(const char *line)
{
	static GRegex *re;
	static gsize once;
	g_autoptr(GMatchInfo) m = NULL;

	/* at column 0, not a statement: "static int __init foo_init(void)" */
	pk_lexer_regex(&re, &once, "^(?!(?:if|for|while|switch|return|else|do|case|goto|sizeof|typedef)\\b)"
		   "[A-Za-z_][\\w\\s*]*?\\b([A-Za-z_]\\w*)\\s*\\([^;]*$");
	if (!g_ascii_isalpha(*line) && *line != '_')
		return NULL;
	return g_regex_match(re, line, 0, &m) ? g_match_info_fetch(m, 1) : NULL;
}

/*
 * The function hunk line idx is in: the nearest definition above it on
 * this side of the hunk, else the function git names in the hunk header,
 * as checkpatch takes it (its first "name("; *from_header set).  NULL after
 * a closing brace at column 0 or when the header names none.
 */
static char *enclosing_function(const struct side *s, int idx, gboolean *from_header)
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
		else if ((name = pk_lexer_function_defined(l->text)))
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
	pk_lexer_regex(&re, &once, "\\b(\\w+)\\s*\\(");
	if (!s->hunk->section || !g_regex_match(re, s->hunk->section, 0, &m))
		return NULL;
	*from_header = TRUE;
	return g_match_info_fetch(m, 1);
}

/* Try to read a call at identifier [p, end); NULL when it is not one. */
static struct pk_call *read_call(const struct side *s, size_t p, size_t end, size_t *next)
{
	const char *b = s->buf->str;
	g_autofree char *name = NULL;
	struct pk_call c = { 0 }, *out;
	size_t open = skip_space(b, end, s->buf->len), close;
	struct call_kind k;
	gboolean literal = FALSE;

	/* most identifiers are not called: no copy of their name */
	if (open >= s->buf->len || b[open] != '(')
		return NULL;
	name = g_strndup(b + p, end - p);
	if (!classify(name, &k))
		return NULL;
	c.fam = k.fam;
	c.level = k.level;
	c.dynamic = k.dynamic;
	c.probe = k.probe;
	c.subsys_len = k.subsys_len;
	c.text = g_string_new(NULL);
	c.toks = g_array_new(FALSE, FALSE, sizeof(struct pk_fmt_tok));
	c.args = g_ptr_array_new_with_free_func(g_free);
	if (c.level && !strcmp(c.level, "cont")) {
		c.cont = TRUE;
		c.level = NULL;
	}
	close = parse_args(&c, s, open, k.fmt_arg);
	for (guint i = 0; i < c.toks->len; i++)
		literal |= g_array_index(c.toks, struct pk_fmt_tok, i).literal;
	if (k.fmt_arg < 0 && !literal) {
		/* a wrapper without a literal format: most likely no logging call at all */
		g_string_free(c.text, TRUE);
		g_array_unref(c.toks);
		g_ptr_array_unref(c.args);
		return NULL;
	}
	/* changed when a line of its span is this side's own: the other side's lines between are neither */
	if (close > p && s->buf->len) {
		int last = side_line_index(s, MIN(close, s->buf->len) - 1);

		for (int li = side_line_index(s, p); li <= last && !c.changed; li++)
			c.changed = ((const struct pk_diff_line *)s->hunk->lines->pdata[li])->kind == s->side;
	}
	c.dl = side_line(s, p);
	c.line = s->side == '-' ? c.dl->old_no : c.dl->new_no;
	c.func = enclosing_function(s, side_line_index(s, p), &c.func_from_header);
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

	/* a stop asked for (base/proc.h) ends it early: the scan then says it was canceled */
	while ((p = skip_space(b, p, len)) < len && !pk_proc_canceled()) {
		size_t end = p + 1;
		struct pk_call *c;

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
		if ((c = read_call(s, p, end, &p))) {
			c->prev = calls->len ? calls->pdata[calls->len - 1] : NULL;
			g_ptr_array_add(calls, c);
		}
		else
			p = end;
	}
	return calls;
}

GPtrArray *pk_lexer_calls(const struct pk_hunk *h, char which)
{
	struct side s;
	GPtrArray *calls;

	side_build(&s, h, which);
	calls = side_calls(&s);
	side_clear(&s);
	return calls;
}

gboolean pk_call_uses_pr_fmt(const struct pk_call *c)
{
	return c->fam == PK_FAM_PR && !c->cont;
}
