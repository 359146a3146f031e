/*
 * attribute.c - which printk index entry printed a record (kdiff.h says
 * how a format becomes a matcher; kdiff-private.h has the interface).
 */
#include "analysis/kdiff-private.h"

#include <string.h>

/* One printk index entry as a regex over record texts. */
struct matcher {
	const struct pk_index_entry *entry; /* borrowed from the capture */
	guint order;        /* position in the index: the tie-breaker */
	char *pattern;
	GRegex *re;         /* compiled when first tried: most never are */
	bool broken;        /* the pattern did not compile */
	gsize literal;      /* literal bytes of the format: how specific it is */
	bool has_word;      /* some letter or digit among them */
};

static void matcher_free(gpointer p)
{
	struct matcher *m = p;

	g_free(m->pattern);
	if (m->re)
		g_regex_unref(m->re);
	g_free(m);
}

/*
 * Every index entry of one capture as a matcher, and a word index over
 * them: each matcher is filed under the longest word of its format that
 * any record it matches must contain whole, so a record only tries the
 * matchers filed under its own words (plus the few with no such word).
 */
struct pk_attributor {
	GPtrArray *matchers;    /* struct matcher*, owned */
	GHashTable *by_word;    /* char* word -> GPtrArray of struct matcher*, borrowed */
	GPtrArray *wordless;    /* struct matcher*, borrowed */
};

static void append_literal(GString *re, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (g_ascii_isalnum(c) || c == ' ' || c == '_')
			g_string_append_c(re, (char)c);
		else if (c < 0x80 && c >= 0x20)
			g_string_append_printf(re, "\\%c", c);
		else
			g_string_append_printf(re, "\\x%02x", c);
	}
}

/*
 * What a %p extension prints, by its first letter (vsprintf.c's pointer()).
 * Anything not listed prints some text: a lazy match of anything.
 */
static const char *pointer_pattern(const char *ext)
{
	static const struct {
		char ext;
		const char *re;
	} kinds[] = {
		{ '\0', "(?:[0-9a-fA-F]+|\\(_*ptrval_*\\)|\\(null\\)|\\(efault\\))" }, /* %p hashed */
		{ 'K', "(?:[0-9a-fA-F]+|\\(_*ptrval_*\\)|\\(null\\))" },  /* %pK restricted */
		{ 'x', "[0-9a-fA-F]+" },                                  /* %px raw */
		{ 'a', "(?:0x)?[0-9a-fA-F]+" },                           /* %pa %pap %pad */
		{ 'R', "\\[.*?\\]" },                                     /* %pR %pr resources */
		{ 'r', "\\[.*?\\]" },
		{ 'b', "[0-9a-fA-F,-]*" },                                /* %*pb %*pbl bitmaps */
		{ 'e', "-?[A-Za-z0-9]+" },                                /* %pe error names */
	};

	for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
		if (kinds[i].ext == ext[0])
			return kinds[i].re;
	return ".*?"; /* %pS %ps %pB %pOF %pV %pI4 %pM %pU %pd %pt ... */
}

/*
 * One conversion of a kernel format (p just after the '%'): append the
 * regex for what it prints, and return where the format goes on.  Flags,
 * widths, precisions ('*' included) and length modifiers are read; a
 * width may pad with spaces on either side.
 */
static const char *append_conversion(GString *re, const char *p)
{
	bool minus = false, hash = false, width = false;
	const char *core;

	for (; *p && strchr("-+ #0", *p); p++) {
		minus |= *p == '-';
		hash |= *p == '#';
	}
	if (*p == '*')
		width = (p++, true);
	for (; g_ascii_isdigit(*p); p++)
		width = true;
	if (*p == '.')
		for (p++; *p == '*' || g_ascii_isdigit(*p); p++)
			;
	for (; *p && strchr("hlLqjzZt", *p); p++)
		;
	switch (*p) {
	case '\0': g_string_append(re, "%"); return p;
	case '%': g_string_append(re, "%"); return p + 1;
	case 'n': return p + 1;
	case 'd': case 'i': core = "[-+ ]?\\d+"; break;
	case 'u': core = "\\d+"; break;
	case 'x': case 'X': core = hash ? "(?:0[xX])?[0-9a-fA-F]+" : "[0-9a-fA-F]+"; break;
	case 'o': core = "[0-7]+"; break;
	case 'c': core = "."; break;
	case 'p': {
		/* the kernel takes every alphanumeric after %p as the extension */
		g_autofree char *ext = NULL;
		const char *e = p + 1;

		while (g_ascii_isalnum(*e))
			e++;
		ext = g_strndup(p + 1, (gsize)(e - p - 1));
		g_string_append_printf(re, "(?:%s)", pointer_pattern(ext));
		return e;
	}
	default: core = ".*?"; break; /* %s, and anything unknown prints some text */
	}
	if (width && !minus)
		g_string_append(re, " *");
	g_string_append(re, core);
	if (width && minus)
		g_string_append(re, " *");
	return p + 1;
}

/*
 * The words of one literal run of a format that a matching record holds
 * whole: a word touching a conversion may be glued to what it prints, so
 * only the ends of the format itself count as boundaries (the start is
 * preceded by nothing or a "prefix: ", the end by nothing when the format
 * ends its line).
 */
static void literal_words(GPtrArray *words, const char *s, size_t len, bool at_start, bool at_end)
{
	size_t i = 0;

	while (i < len) {
		size_t j = i;

		if (!g_ascii_isalnum(s[i]) && s[i] != '_') {
			i++;
			continue;
		}
		while (j < len && (g_ascii_isalnum(s[j]) || s[j] == '_'))
			j++;
		if ((i > 0 || at_start) && (j < len || at_end))
			g_ptr_array_add(words, g_strndup(s + i, j - i));
		i = j;
	}
}

static const char *longest(GPtrArray *words)
{
	const char *best = NULL;

	for (guint i = 0; i < words->len; i++)
		if (!best || strlen(words->pdata[i]) > strlen(best))
			best = words->pdata[i];
	return best;
}

/*
 * Turn an index format into an anchored regex, counting its literal bytes
 * and collecting its whole words.  The pr_fmt() prefix is part of the
 * index format, but a wrapper may still print an unknown "prefix: " first
 * (one without a colon inside, so that a "name: value" text is not taken
 * for a prefix); a format that does not end its line may be followed by
 * pr_cont() text.
 */
static struct matcher *matcher_new(const struct pk_index_entry *e, guint order, GPtrArray *words)
{
	struct matcher *m = g_new0(struct matcher, 1);
	GString *re = g_string_new("\\A(?:[^\\s:][^:\\n]*?: )?");
	size_t flen = strlen(e->format);
	bool closed = flen && e->format[flen - 1] == '\n';
	const char *p = e->format, *end = e->format + flen - (closed ? 1 : 0);

	while (p < end) {
		const char *pct = memchr(p, '%', (size_t)(end - p));
		const char *lit_end = pct ? pct : end;

		append_literal(re, p, (size_t)(lit_end - p));
		literal_words(words, p, (size_t)(lit_end - p), p == e->format, !pct && closed);
		m->literal += (size_t)(lit_end - p);
		for (const char *q = p; q < lit_end && !m->has_word; q++)
			m->has_word = g_ascii_isalnum(*q);
		if (!pct)
			break;
		p = append_conversion(re, pct + 1);
	}
	g_string_append(re, closed ? "\\z" : ".*\\z");
	m->entry = e;
	m->order = order;
	m->pattern = g_string_free(re, FALSE);
	return m;
}

struct pk_attributor *pk_attributor_new(const GPtrArray *index)
{
	struct pk_attributor *a = g_new0(struct pk_attributor, 1);

	a->matchers = g_ptr_array_new_with_free_func(matcher_free);
	a->by_word = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					   (GDestroyNotify)g_ptr_array_unref);
	a->wordless = g_ptr_array_new();
	for (guint i = 0; index && i < index->len; i++) {
		g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func(g_free);
		struct matcher *m = matcher_new(index->pdata[i], i, words);
		const char *word = longest(words);
		GPtrArray *list;

		g_ptr_array_add(a->matchers, m);
		if (!m->has_word)
			continue; /* "%s\n", "%s %s: %s\n": they would match any text */
		if (!word) {
			g_ptr_array_add(a->wordless, m);
			continue;
		}
		list = g_hash_table_lookup(a->by_word, word);
		if (!list) {
			list = g_ptr_array_new();
			g_hash_table_insert(a->by_word, g_strdup(word), list);
		}
		g_ptr_array_add(list, m);
	}
	return a;
}

void pk_attributor_free(struct pk_attributor *a)
{
	if (!a)
		return;
	g_ptr_array_unref(a->wordless);
	g_hash_table_unref(a->by_word);
	g_ptr_array_unref(a->matchers);
	g_free(a);
}

/*
 * Try one matcher on a record unless the best so far is already more
 * specific.  A KERN_CONT fragment's entry is only a candidate for a record
 * that is itself a continuation.
 */
static void matcher_try(struct matcher *m, const struct pk_record *r, struct matcher **best)
{
	if (m->entry->cont && !r->cont)
		return;
	if (*best && (m->literal < (*best)->literal ||
		      (m->literal == (*best)->literal && m->order > (*best)->order)))
		return;
	if (!m->re && !m->broken) {
		m->re = g_regex_new(m->pattern, G_REGEX_RAW | G_REGEX_DOTALL, 0, NULL);
		m->broken = !m->re;
	}
	if (m->re && g_regex_match(m->re, r->text, 0, NULL))
		*best = m;
}

const struct pk_index_entry *pk_attributor_match(struct pk_attributor *a, const struct pk_record *r)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	size_t len = strlen(r->text);
	g_autofree char *words = g_strdup(r->text);
	struct matcher *best = NULL;

	/* cut the copy into its words: every other byte becomes a NUL */
	for (size_t i = 0; i < len; i++)
		if (!g_ascii_isalnum(words[i]) && words[i] != '_')
			words[i] = '\0';
	for (size_t i = 0; i < len; i += strlen(words + i) + 1) {
		GPtrArray *list;

		if (!words[i] || !g_hash_table_add(seen, words + i))
			continue;
		list = g_hash_table_lookup(a->by_word, words + i);
		for (guint j = 0; list && j < list->len; j++)
			matcher_try(list->pdata[j], r, &best);
	}
	for (guint i = 0; i < a->wordless->len; i++)
		matcher_try(a->wordless->pdata[i], r, &best);
	return best ? best->entry : NULL;
}

GHashTable *pk_kdiff_records_by_file(const struct pk_capture *cap)
{
	GHashTable *files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	struct pk_attributor *a;

	if (!cap)
		return files;
	a = pk_attributor_new(cap->index);
	for (guint i = 0; i < cap->records->len; i++) {
		const struct pk_index_entry *e = pk_attributor_match(a, cap->records->pdata[i]);
		gpointer n;

		if (!e || !e->file)
			continue;
		n = g_hash_table_lookup(files, e->file);
		g_hash_table_replace(files, g_strdup(e->file), GUINT_TO_POINTER(GPOINTER_TO_UINT(n) + 1));
	}
	pk_attributor_free(a);
	return files;
}
