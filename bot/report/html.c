/* html.c - HTML pieces built in C: escaping, word-level differences, checked links; see html.h. */
#include "report/html.h"

#include <string.h>

char *pk_html_escape(const char *text)
{
	/* g_markup_escape_text() escapes ' and " too: the result is safe inside a quoted attribute */
	return g_markup_escape_text(text ? text : "", -1);
}

/* A word of a line: its start and length in the line. */
struct word {
	const char *at;
	size_t len;
};

static bool word_char(unsigned char c)
{
	return g_ascii_isalnum(c) || c == '_' || c >= 0x80;   /* UTF-8 bytes stay within their word */
}

/* text cut into words (html.h says what one is). */
static GArray *split_words(const char *text)
{
	GArray *words = g_array_new(FALSE, FALSE, sizeof(struct word));
	const char *p = text;

	while (*p) {
		struct word w = { p, 1 };

		if (word_char((unsigned char)*p))
			while (word_char((unsigned char)p[w.len]))
				w.len++;
		else if (g_ascii_isspace(*p))
			while (p[w.len] && g_ascii_isspace(p[w.len]))
				w.len++;
		g_array_append_val(words, w);
		p += w.len;
	}
	return words;
}

static bool word_eq(const struct word *a, const struct word *b)
{
	return a->len == b->len && !memcmp(a->at, b->at, a->len);
}

/* Append words [from, to) of ws, escaped; inside <tag> when marked. */
static void append_run(GString *out, const GArray *ws, guint from, guint to, const char *tag)
{
	g_autofree char *raw = NULL, *esc = NULL;
	const struct word *first, *last;

	if (from >= to)
		return;
	first = &g_array_index(ws, struct word, from);
	last = &g_array_index(ws, struct word, to - 1);
	raw = g_strndup(first->at, (size_t)(last->at + last->len - first->at));
	esc = pk_html_escape(raw);
	if (tag)
		g_string_append_printf(out, "<%s>%s</%s>", tag, esc, tag);
	else
		g_string_append(out, esc);
}

/*
 * Mark one side: keep[i] says whether word i is in the longest common
 * subsequence; runs of words outside it are wrapped in tag.
 */
static char *mark_side(const GArray *ws, const bool *keep, const char *tag)
{
	GString *out = g_string_new(NULL);
	guint i = 0;

	while (i < ws->len) {
		guint j = i;

		while (j < ws->len && keep[j] == keep[i])
			j++;
		append_run(out, ws, i, j, keep[i] ? NULL : tag);
		i = j;
	}
	return g_string_free(out, FALSE);
}

void pk_html_word_diff(const char *old_text, const char *new_text, char **out_old, char **out_new)
{
	g_autoptr(GArray) a = NULL, b = NULL;
	g_autofree guint16 *len = NULL;
	g_autofree bool *ka = NULL, *kb = NULL;
	guint n, m;

	if (!old_text || !new_text) {
		*out_old = pk_html_escape(old_text);
		*out_new = pk_html_escape(new_text);
		return;
	}
	a = split_words(old_text);
	b = split_words(new_text);
	n = a->len;
	m = b->len;
	ka = g_new0(bool, n + 1);
	kb = g_new0(bool, m + 1);
	if (n <= PK_HTML_DIFF_MAX_WORDS && m <= PK_HTML_DIFF_MAX_WORDS) {
		/* the longest common subsequence of words, by the table of suffixes' LCS lengths */
#define L(i, j) len[(gsize)(i) * (m + 1) + (j)]
		len = g_new0(guint16, (gsize)(n + 1) * (m + 1));
		for (guint i = n; i-- > 0;)
			for (guint j = m; j-- > 0;)
				L(i, j) = word_eq(&g_array_index(a, struct word, i), &g_array_index(b, struct word, j))
					  ? L(i + 1, j + 1) + 1 : MAX(L(i + 1, j), L(i, j + 1));
		for (guint i = 0, j = 0; i < n && j < m;) {
			if (word_eq(&g_array_index(a, struct word, i), &g_array_index(b, struct word, j))) {
				ka[i++] = kb[j++] = true;
			} else if (L(i + 1, j) >= L(i, j + 1)) {
				i++;
			} else {
				j++;
			}
		}
#undef L
	}
	*out_old = mark_side(a, ka, "del");
	*out_new = mark_side(b, kb, "ins");
}

bool pk_html_url_ok(const char *url)
{
	if (!url || !(g_str_has_prefix(url, "https://") || g_str_has_prefix(url, "http://")))
		return false;
	for (const unsigned char *p = (const unsigned char *)url; *p; p++)
		if (*p <= ' ' || *p == 0x7f || strchr("\"'<>\\`", *p))
			return false;
	return true;
}

char *pk_html_link(const char *url, const char *text)
{
	g_autofree char *t = pk_html_escape(text);
	g_autofree char *u = NULL;

	if (!pk_html_url_ok(url))
		return g_steal_pointer(&t);
	u = pk_html_escape(url);
	return g_strdup_printf("<a href=\"%s\">%s</a>", u, t);
}

char *pk_html_source_url(const char *pattern, const char *path, int line, const char *commit,
			 const char *base)
{
	g_autoptr(GString) out = NULL;
	const char *p;

	if (!pattern || !path || !*path)
		return NULL;
	out = g_string_new(NULL);
	for (p = pattern; *p;) {
		const char *close = *p == '{' ? strchr(p, '}') : NULL;
		g_autofree char *name = close ? g_strndup(p + 1, (gsize)(close - p - 1)) : NULL;

		if (!name) {
			g_string_append_c(out, *p++);
			continue;
		}
		if (!strcmp(name, "path")) {
			g_string_append_uri_escaped(out, path, "/", FALSE);
		} else if (!strcmp(name, "line")) {
			g_string_append_printf(out, "%d", line > 0 ? line : 1);
		} else if (!strcmp(name, "commit") || !strcmp(name, "base")) {
			const char *v = !strcmp(name, "commit") ? commit : base;

			if (!v || !*v)
				return NULL;
			g_string_append_uri_escaped(out, v, NULL, FALSE);
		} else {
			g_string_append_len(out, p, close - p + 1);   /* not ours: left as written */
		}
		p = close + 1;
	}
	if (!pk_html_url_ok(out->str))
		return NULL;
	return g_string_free(g_steal_pointer(&out), FALSE);
}
