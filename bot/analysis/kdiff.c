/*
 * kdiff.c - the diff stage; see kdiff.h.
 *
 * pk_kdiff_captures() in five steps: every record of both boots becomes a
 * struct rec (its normalised text and the key that is compared), minus
 * what the noise mask names; the two key lists go through libgit2's
 * buffer diff; records that merely moved are set aside; each hunk is
 * classified by pairing its removed and added records, the most certain
 * pairing first; and the two printk indexes are diffed on their own.
 */
#include "analysis/kdiff.h"

#include <git2.h>
#include <stdlib.h>
#include <string.h>

#define QUOTE_MAX 72        /* longest text quoted whole in a change message */
#define SIMILAR_MIN 0.5     /* word overlap (Dice) for two texts to be one message */
#define INDEX_LINE_SLACK 20 /* lines a changed index entry may move beyond the patch's shift */
#define CONFIRM_NEAR 3      /* lines between a finding and an origin that still confirm it */

/* ---------------------------------------------------------------- kind names */

static const char *const change_kind_names[] = {
	[PK_CHANGE_MESSAGE_ADDED] = "message-added",
	[PK_CHANGE_MESSAGE_REMOVED] = "message-removed",
	[PK_CHANGE_TEXT_CHANGED] = "text-changed",
	[PK_CHANGE_PREFIX_CHANGED] = "prefix-changed",
	[PK_CHANGE_LEVEL_CHANGED] = "level-changed",
	[PK_CHANGE_LINE_SPLIT] = "line-split",
	[PK_CHANGE_LINES_MERGED] = "lines-merged",
};

const char *pk_change_kind_name(enum pk_change_kind kind)
{
	return (unsigned)kind < G_N_ELEMENTS(change_kind_names) ? change_kind_names[kind] : "";
}

bool pk_change_kind_parse(const char *name, enum pk_change_kind *out)
{
	for (unsigned i = 0; name && i < G_N_ELEMENTS(change_kind_names); i++)
		if (!strcmp(name, change_kind_names[i])) {
			*out = i;
			return true;
		}
	return false;
}

/* ---------------------------------------------------------------- normalising */

/*
 * Rewrites applied in order to a record's text before it is compared.  Each
 * masks something that differs between two boots of one kernel, or between
 * two builds that differ only in an unrelated printk, and that no logging
 * patch means to change.  Numbers are then masked by mask_number().
 */
static const struct norm_rule {
	const char *pattern;
	const char *replacement;
} norm_rules[] = {
	/* build stamps and RTC times: "2024-01-01 00:00:00 UTC" */
	{ "\\b\\d{4}-\\d\\d-\\d\\d[ T]\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?(?: ?(?:UTC|[A-Z]{3,4}|[+-]\\d{4})\\b)?",
	  "<date>" },
	/* `date` output, KBUILD_BUILD_TIMESTAMP's default: "Mon Jan  1 00:00:00 UTC 2024" */
	{ "\\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
	  " +\\d+ \\d\\d:\\d\\d:\\d\\d(?: [A-Z]{3,4})? \\d{4}\\b",
	  "<date>" },
	/* the build counter of "Linux version ... #12 SMP": every build bumps it
	 * (not anchored: a pr_fmt() may put a prefix before the banner) */
	{ "\\b(Linux version .*? #)\\d+", "\\1<N>" },
	/* clock and BogoMIPS figures: measured at boot, they race the host under TCG */
	{ "\\b\\d+(?:\\.\\d+)?(?= ?(?:[kKMG]Hz|BogoMIPS)\\b)", "<N>" },
	{ "\\b(lpj=|max_cycles: (?:0x)?|max_idle_ns: )[0-9a-fA-F]+\\b", "\\1<N>" },
	/* durations are wall-clock measurements */
	{ "\\b\\d+(?:\\.\\d+)?(?= ?(?:ns|us|usecs?|ms|msecs?)\\b)", "<N>" },
	/* sched_clock's raw and adjusted clock pairs */
	{ "\\b(sched_clock: Marking (?:un)?stable) .*", "\\1 <N>" },
	/*
	 * Memory sizes ("Memory: 239476K/261624K available (4096K kernel code,
	 * ...", "Freeing unused kernel image ... memory: 744K"): the image
	 * grows with every added string, so they differ before and after.
	 */
	{ "\\b\\d+(?=[KkMG]\\b)", "<N>" },
};

/*
 * A number token: hex digits, maybe "0x", not glued to a word.  What it
 * masks is decided in mask_number().
 */
#define NUMBER_PATTERN "(?<![0-9A-Za-z_])(0[xX])?([0-9a-fA-F]+)(?![0-9A-Za-z_])"

/* The compiled rules; one per diff, so no regex is compiled per record. */
struct normaliser {
	GPtrArray *rules;   /* GRegex*, parallel to norm_rules */
	GRegex *number;
};

static struct normaliser *normaliser_new(void)
{
	struct normaliser *n = g_new0(struct normaliser, 1);

	n->rules = g_ptr_array_new_with_free_func((GDestroyNotify)g_regex_unref);
	for (size_t i = 0; i < G_N_ELEMENTS(norm_rules); i++) {
		GRegex *re = g_regex_new(norm_rules[i].pattern, G_REGEX_RAW, 0, NULL);

		g_assert(re); /* the table is constant: a bad pattern is a bug */
		g_ptr_array_add(n->rules, re);
	}
	n->number = g_regex_new(NUMBER_PATTERN, G_REGEX_RAW, 0, NULL);
	g_assert(n->number);
	return n;
}

static void normaliser_free(struct normaliser *n)
{
	if (!n)
		return;
	g_ptr_array_unref(n->rules);
	g_regex_unref(n->number);
	g_free(n);
}

/*
 * Mask a number that is an address, a hashed pointer or a counter: hex of
 * 8 digits or more (with "0x", or bare with a decimal digit among them, as
 * %p prints), and decimals of 7 digits or more.  That is the width of
 * pointers and of physical addresses ("[mem 0x000a0000-0x000fffff]"),
 * which vary with KASLR, the hash key or the VM's memory, and of cycle and
 * nanosecond counts.  Shorter numbers (ports, IRQs, vectors, CPU counts,
 * "0x3f8") are what the kernel decided, stay, and are compared.  A format
 * whose only change is a field width is still seen, in the index diff.
 */
static gboolean mask_number(const GMatchInfo *m, GString *out, gpointer data)
{
	g_autofree char *prefix = g_match_info_fetch(m, 1);
	g_autofree char *digits = g_match_info_fetch(m, 2);
	size_t len = digits ? strlen(digits) : 0;
	bool decimal = len && strspn(digits, "0123456789") == len;
	bool some_decimal = digits && strpbrk(digits, "0123456789");

	if (prefix && *prefix && len >= 8) {
		g_string_append_printf(out, "%s<N>", prefix);
	} else if ((len >= 8 && some_decimal) || (decimal && len >= 7)) {
		g_string_append(out, "<N>");
	} else {
		g_autofree char *all = g_match_info_fetch(m, 0);

		g_string_append(out, all);
	}
	return FALSE;
}

/* The normalised text of one record: rules in table order, then numbers. */
static char *normaliser_apply(const struct normaliser *n, const char *text)
{
	g_autofree char *s = g_strdup(text);

	for (guint i = 0; i < n->rules->len; i++) {
		char *t = g_regex_replace(n->rules->pdata[i], s, -1, 0, norm_rules[i].replacement, 0, NULL);

		if (t) {
			g_free(s);
			s = t;
		}
	}
	{
		char *t = g_regex_replace_eval(n->number, s, -1, 0, 0, mask_number, NULL, NULL);

		if (t) {
			g_free(s);
			s = t;
		}
	}
	return g_steal_pointer(&s);
}

char *pk_kdiff_normalise(const char *text)
{
	struct normaliser *n = normaliser_new();
	char *s = normaliser_apply(n, text);

	normaliser_free(n);
	return s;
}

/*
 * The compared key: level, facility and continuation flag the way
 * /dev/kmsg writes them, then the normalised text on one line (control
 * bytes and '\' escaped as kmsg does), so that a level change, invisible
 * on a text console, still makes two records differ.
 */
static char *record_key(const struct pk_record *r, const char *norm)
{
	GString *k = g_string_new(NULL);

	g_string_append_printf(k, "%d,%d,%c;", r->level, r->facility, r->cont ? 'c' : '-');
	for (const unsigned char *p = (const unsigned char *)norm; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			g_string_append_printf(k, "\\x%02x", *p);
		else
			g_string_append_c(k, (char)*p);
	}
	return g_string_free(k, FALSE);
}

/* ---------------------------------------------------------------- noise */

struct pk_noise {
	GHashTable *keys;   /* char* key -> NULL: a set, keys owned */
};

static struct pk_noise *noise_new(void)
{
	struct pk_noise *noise = g_new0(struct pk_noise, 1);

	noise->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return noise;
}

void pk_noise_free(struct pk_noise *noise)
{
	if (!noise)
		return;
	g_hash_table_unref(noise->keys);
	g_free(noise);
}

/* How many times each key occurs in one boot. */
static GHashTable *count_keys(const struct pk_capture *cap, const struct normaliser *n)
{
	GHashTable *counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < cap->records->len; i++) {
		const struct pk_record *r = cap->records->pdata[i];
		g_autofree char *norm = normaliser_apply(n, r->text);
		char *key = record_key(r, norm);
		guint c = GPOINTER_TO_UINT(g_hash_table_lookup(counts, key));

		g_hash_table_replace(counts, key, GUINT_TO_POINTER(c + 1));
	}
	return counts;
}

/*
 * A key is noise when some boot has it a different number of times than
 * another (zero included): comparing boots key by key, any count that is
 * not the same everywhere marks the key.
 */
struct pk_noise *pk_noise_learn(const struct pk_capture *const *boots, unsigned n)
{
	struct pk_noise *noise = noise_new();
	struct normaliser *norm = normaliser_new();
	g_autoptr(GPtrArray) counts = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);

	for (unsigned i = 0; i < n; i++)
		g_ptr_array_add(counts, count_keys(boots[i], norm));
	for (guint i = 0; i < counts->len; i++) {
		GHashTableIter it;
		gpointer key, value;

		g_hash_table_iter_init(&it, counts->pdata[i]);
		while (g_hash_table_iter_next(&it, &key, &value)) {
			for (guint j = 0; j < counts->len; j++) {
				if (g_hash_table_lookup(counts->pdata[j], key) != value) {
					g_hash_table_add(noise->keys, g_strdup(key));
					break;
				}
			}
		}
	}
	normaliser_free(norm);
	return noise;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **pk_noise_keys(const struct pk_noise *noise)
{
	guint n = 0;
	char **keys, **out;

	if (!noise)
		return g_new0(char *, 1);
	keys = (char **)g_hash_table_get_keys_as_array(noise->keys, &n);
	out = g_new0(char *, n + 1);

	qsort(keys, n, sizeof(*keys), compare_strings);
	for (guint i = 0; i < n; i++)
		out[i] = g_strdup(keys[i]);
	g_free(keys);
	return out;
}

struct pk_noise *pk_noise_from_keys(const char *const *keys)
{
	struct pk_noise *noise = noise_new();

	for (; keys && *keys; keys++)
		g_hash_table_add(noise->keys, g_strdup(*keys));
	return noise;
}

bool pk_noise_has(const struct pk_noise *noise, const struct pk_record *r)
{
	g_autofree char *norm = NULL, *key = NULL;

	if (!noise || !g_hash_table_size(noise->keys))
		return false;
	norm = pk_kdiff_normalise(r->text);
	key = record_key(r, norm);
	return g_hash_table_contains(noise->keys, key);
}

/* ---------------------------------------------------------------- attribution */

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
struct attributor {
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

static struct attributor *attributor_new(const GPtrArray *index)
{
	struct attributor *a = g_new0(struct attributor, 1);

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

static void attributor_free(struct attributor *a)
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

/* The most specific index entry whose format prints this record, or NULL. */
static const struct pk_index_entry *attributor_match(struct attributor *a, const struct pk_record *r)
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

/* ---------------------------------------------------------------- records */

/* One record as it is compared. */
struct rec {
	const struct pk_record *kmsg;       /* borrowed from the capture */
	char *norm;                         /* pk_kdiff_normalise() of its text */
	char *key;                          /* record_key(): one diff line */
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

/*
 * Messages whose presence, not just figures, follows the host's timing
 * under TCG: whether the PIT calibration of the TSC succeeds decides which
 * tsc: and clocksource: lines a boot prints, and what the delay loop and
 * sched_clock report.  No number of base boots is sure to have seen every
 * variant (a busy host brings out new ones), so with a noise mask they
 * are never compared in the boot log.  The same goes for the APIC timer
 * check, which fails when the host stalls the guest during calibration.  A patch that changes one of them still shows in the
 * printk index diff.
 */
static const char *const timing_noise[] = {
	"tsc: ", "clocksource: ", "sched_clock: ", "Calibrating delay loop",
	"APIC timer disabled due to verification failure",
};

static bool is_timing_noise(const char *norm)
{
	for (guint i = 0; i < G_N_ELEMENTS(timing_noise); i++)
		if (g_str_has_prefix(norm, timing_noise[i]))
			return true;
	return false;
}

/* One boot as compared: its records minus noise, its index as matchers. */
struct side {
	GPtrArray *recs;            /* struct rec*, owned */
	struct attributor *attr;
	unsigned dropped;           /* records the noise mask left out */
};

static void side_init(struct side *s, const struct pk_capture *cap, const struct normaliser *n,
		      const struct pk_noise *noise)
{
	s->recs = g_ptr_array_new_with_free_func(rec_free);
	s->attr = attributor_new(cap->index);
	for (guint i = 0; i < cap->records->len; i++) {
		struct rec *r = g_new0(struct rec, 1);

		r->kmsg = cap->records->pdata[i];
		r->norm = normaliser_apply(n, r->kmsg->text);
		r->key = record_key(r->kmsg, r->norm);
		if (noise && (is_timing_noise(r->norm) || g_hash_table_contains(noise->keys, r->key))) {
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
	attributor_free(s->attr);
}

/* A record's index entry, looked up once: only changed records need one. */
static const struct pk_index_entry *rec_origin(struct side *s, struct rec *r)
{
	if (!r->attributed) {
		r->origin = attributor_match(s->attr, r->kmsg);
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

static void origin_set(struct pk_origin *o, const struct pk_index_entry *e)
{
	if (!e)
		return;
	o->file = g_strdup(e->file);
	o->line = e->line;
	o->func = g_strdup(e->func);
	o->format = g_strdup(e->format);
}

static void origin_clear(struct pk_origin *o)
{
	g_free(o->file);
	g_free(o->func);
	g_free(o->format);
}

static void change_free(gpointer p)
{
	struct pk_change *c = p;

	g_free(c->old_text);
	g_free(c->new_text);
	origin_clear(&c->origin);
	g_free(c->message);
	g_free(c);
}

static void index_change_free(gpointer p)
{
	struct pk_index_change *c = p;

	g_free(c->old_format);
	g_free(c->new_format);
	origin_clear(&c->origin);
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
	origin_set(&c->origin, origin);
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
	g_ptr_array_sort(words, compare_strings);
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
	git_libgit2_init();
	rc = git_diff_buffers(a->str, a->len, "before", b->str, b->len, "after", &opts, NULL, NULL,
			      on_hunk, on_line, x);
	git_libgit2_shutdown();
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

/* ---------------------------------------------------------------- index diff */

static char *entry_key(const struct pk_index_entry *e)
{
	return g_strdup_printf("%s\x1f%s\x1f%s", e->file, e->func, e->format);
}

static char *entry_func_key(const struct pk_index_entry *e)
{
	return g_strdup_printf("%s\x1f%s", e->file, e->func);
}

static void add_index_change(GPtrArray *out, enum pk_change_kind kind, const struct pk_index_entry *o,
			     const struct pk_index_entry *n)
{
	struct pk_index_change *c = g_new0(struct pk_index_change, 1);

	c->kind = kind;
	c->old_level = o ? o->level : -1;
	c->new_level = n ? n->level : -1;
	c->old_format = o ? g_strdup(o->format) : NULL;
	c->new_format = n ? g_strdup(n->format) : NULL;
	origin_set(&c->origin, n ? n : o);
	g_ptr_array_add(out, c);
}

/* How far the patch moved lines near this one: the shift of the nearest unchanged entry. */
struct shift {
	int line, by;
};

static int shift_at(GHashTable *shifts, const struct pk_index_entry *e)
{
	GArray *list = g_hash_table_lookup(shifts, e->file);
	int best = G_MAXINT, by = 0;

	for (guint i = 0; list && i < list->len; i++) {
		const struct shift *s = &g_array_index(list, struct shift, i);

		if (abs(s->line - e->line) < best) {
			best = abs(s->line - e->line);
			by = s->by;
		}
	}
	return by;
}

static void shift_note(GHashTable *shifts, const struct pk_index_entry *o, const struct pk_index_entry *n)
{
	GArray *list = g_hash_table_lookup(shifts, o->file);
	struct shift s = { o->line, n->line - o->line };

	if (!list)
		g_hash_table_insert(shifts, o->file, list = g_array_new(FALSE, FALSE, sizeof(struct shift)));
	g_array_append_val(list, s);
}

/*
 * Pair the entries of both indexes with the same file, function and
 * format, whatever their lines (a patch shifts them): an entry that only
 * moved is no change, one whose level or continuation flag differs is
 * level-changed.  What is not paired is returned in olds and news.
 */
static void index_pair_same(GPtrArray *out, const GPtrArray *before, const GPtrArray *after,
			    GPtrArray *olds, GPtrArray *news, GHashTable *shifts)
{
	g_autoptr(GHashTable) by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
							     (GDestroyNotify)g_ptr_array_unref);
	g_autoptr(GHashTable) paired = g_hash_table_new(NULL, NULL);

	for (guint i = 0; i < after->len; i++) {
		char *key = entry_key(after->pdata[i]);
		GPtrArray *list = g_hash_table_lookup(by_key, key);

		if (!list)
			g_hash_table_insert(by_key, g_strdup(key), list = g_ptr_array_new());
		g_ptr_array_add(list, after->pdata[i]);
		g_free(key);
	}
	for (guint i = 0; i < before->len; i++) {
		const struct pk_index_entry *o = before->pdata[i], *n = NULL;
		g_autofree char *key = entry_key(o);
		GPtrArray *list = g_hash_table_lookup(by_key, key);
		guint pick = 0;

		for (guint j = 0; list && j < list->len && !n; j++) {
			const struct pk_index_entry *e = list->pdata[j];

			if (e->level == o->level && e->cont == o->cont)
				n = e, pick = j;
		}
		if (!n && list && list->len)
			n = list->pdata[0];
		if (!n) {
			g_ptr_array_add(olds, (gpointer)o);
			continue;
		}
		g_ptr_array_remove_index(list, pick);
		g_hash_table_add(paired, (gpointer)n);
		shift_note(shifts, o, n);
		if (n->level != o->level || n->cont != o->cont)
			add_index_change(out, PK_CHANGE_LEVEL_CHANGED, o, n);
	}
	for (guint i = 0; i < after->len; i++)
		if (!g_hash_table_contains(paired, after->pdata[i]))
			g_ptr_array_add(news, after->pdata[i]);
}

struct index_candidate {
	int distance;
	guint o, n;
};

static int index_candidate_compare(const void *pa, const void *pb)
{
	const struct index_candidate *a = pa, *b = pb;

	if (a->distance != b->distance)
		return a->distance < b->distance ? -1 : 1;
	if (a->o != b->o)
		return a->o < b->o ? -1 : 1;
	return a->n < b->n ? -1 : a->n > b->n;
}

/*
 * Leftovers in the same file and function, at about the same line once
 * the patch's shift is accounted for, are one call whose format changed;
 * the closest pairs first.  The rest were added or removed.
 */
static void index_pair_near(GPtrArray *out, GPtrArray *olds, GPtrArray *news, GHashTable *shifts)
{
	g_autoptr(GArray) cands = g_array_new(FALSE, FALSE, sizeof(struct index_candidate));
	g_autoptr(GHashTable) by_func = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
							      (GDestroyNotify)g_array_unref);
	g_autofree bool *old_used = g_new0(bool, olds->len + 1);
	g_autofree bool *new_used = g_new0(bool, news->len + 1);

	/* the added entries by file and function, as indexes into news */
	for (guint j = 0; j < news->len; j++) {
		char *key = entry_func_key(news->pdata[j]);
		GArray *list = g_hash_table_lookup(by_func, key);

		if (!list)
			g_hash_table_insert(by_func, g_strdup(key), list = g_array_new(FALSE, FALSE, sizeof(guint)));
		g_array_append_val(list, j);
		g_free(key);
	}
	for (guint i = 0; i < olds->len; i++) {
		const struct pk_index_entry *o = olds->pdata[i];
		g_autofree char *key = entry_func_key(o);
		GArray *list = g_hash_table_lookup(by_func, key);
		int expect = o->line + shift_at(shifts, o);

		for (guint k = 0; list && k < list->len; k++) {
			guint j = g_array_index(list, guint, k);
			const struct pk_index_entry *n = news->pdata[j];
			struct index_candidate c = { abs(n->line - expect), i, j };

			if (c.distance <= INDEX_LINE_SLACK)
				g_array_append_val(cands, c);
		}
	}
	g_array_sort(cands, index_candidate_compare);
	for (guint k = 0; k < cands->len; k++) {
		const struct index_candidate *c = &g_array_index(cands, struct index_candidate, k);

		if (old_used[c->o] || new_used[c->n])
			continue;
		old_used[c->o] = new_used[c->n] = true;
		add_index_change(out, PK_CHANGE_TEXT_CHANGED, olds->pdata[c->o], news->pdata[c->n]);
	}
	for (guint i = 0; i < olds->len; i++)
		if (!old_used[i])
			add_index_change(out, PK_CHANGE_MESSAGE_REMOVED, olds->pdata[i], NULL);
	for (guint j = 0; j < news->len; j++)
		if (!new_used[j])
			add_index_change(out, PK_CHANGE_MESSAGE_ADDED, NULL, news->pdata[j]);
}

static int index_change_compare(gconstpointer pa, gconstpointer pb)
{
	const struct pk_index_change *a = *(const struct pk_index_change *const *)pa;
	const struct pk_index_change *b = *(const struct pk_index_change *const *)pb;
	int c = strcmp(a->origin.file, b->origin.file);

	if (c)
		return c;
	if (a->origin.line != b->origin.line)
		return a->origin.line < b->origin.line ? -1 : 1;
	/* by name, as when kinds were strings: the order is part of the output */
	return strcmp(pk_change_kind_name(a->kind), pk_change_kind_name(b->kind));
}

/* What the kernel can print, before and after: the printk index diff. */
static void diff_index(GPtrArray *out, const GPtrArray *before, const GPtrArray *after)
{
	g_autoptr(GPtrArray) olds = g_ptr_array_new();
	g_autoptr(GPtrArray) news = g_ptr_array_new();
	g_autoptr(GHashTable) shifts = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
							     (GDestroyNotify)g_array_unref);

	index_pair_same(out, before, after, olds, news, shifts);
	index_pair_near(out, olds, news, shifts);
	g_ptr_array_sort(out, index_change_compare);
}

/* ---------------------------------------------------------------- the diff */

struct pk_kdiff *pk_kdiff_captures(const struct pk_capture *before, const struct pk_capture *after,
				   const struct pk_noise *noise)
{
	struct pk_kdiff *d = g_new0(struct pk_kdiff, 1);
	struct normaliser *n = normaliser_new();
	struct kdiff_ctx x = { 0 };

	d->changes = g_ptr_array_new_with_free_func(change_free);
	d->index_changes = g_ptr_array_new_with_free_func(index_change_free);
	d->records_before = before->records->len;
	d->records_after = after->records->len;
	side_init(&x.before, before, n, noise);
	side_init(&x.after, after, n, noise);
	normaliser_free(n);
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
	diff_index(d->index_changes, before->index, after->index);

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

/* ---------------------------------------------------------------- confirming */

/*
 * Whether an index format is what a finding's C-escaped text says: the
 * same text once unescaped, maybe after a prefix (the index holds the
 * expanded pr_fmt(), the source does not), trailing newlines aside.
 */
static bool format_is(const char *format, const char *c_text)
{
	g_autofree char *text = NULL;
	size_t fl, tl;

	if (!format || !c_text)
		return false;
	text = g_strcompress(c_text);
	fl = strlen(format);
	tl = strlen(text);
	while (fl && format[fl - 1] == '\n')
		fl--;
	while (tl && text[tl - 1] == '\n')
		tl--;
	if (tl == fl)
		return memcmp(format, text, fl) == 0;
	return tl >= 4 && tl < fl && memcmp(format + fl - tl, text, tl) == 0;
}

/*
 * Whether an origin is the finding's: same file, and the format is the
 * finding's old or new text or the line is within a few of its line.  A
 * pr_fmt() finding is about every message of its file.
 */
static bool origin_is(const struct pk_origin *o, const char *old_format, const char *new_format,
		      const struct pk_finding *f)
{
	if (!o->file || strcmp(o->file, f->file))
		return false;
	if (pk_finding_is_pr_fmt(f->kind))
		return true;
	if (abs(o->line - f->line) <= CONFIRM_NEAR)
		return true;
	return format_is(old_format, f->old_text) || format_is(old_format, f->new_text) ||
	       format_is(new_format, f->old_text) || format_is(new_format, f->new_text);
}

enum pk_confirmation pk_kdiff_confirm(const struct pk_kdiff *d, const struct pk_finding *f)
{
	if (!d || !f || !f->file)
		return PK_NOT_CONFIRMED;
	for (guint i = 0; i < d->changes->len; i++) {
		const struct pk_change *c = d->changes->pdata[i];

		if (origin_is(&c->origin, c->origin.format, NULL, f))
			return PK_SEEN_AT_BOOT;
	}
	for (guint i = 0; i < d->index_changes->len; i++) {
		const struct pk_index_change *c = d->index_changes->pdata[i];

		if (origin_is(&c->origin, c->old_format, c->new_format, f))
			return PK_IN_INDEX_ONLY;
	}
	return PK_NOT_CONFIRMED;
}

static const char *const confirmation_names[] = {
	[PK_SEEN_AT_BOOT] = "seen-at-boot",
	[PK_IN_INDEX_ONLY] = "in-index-only",
	[PK_NOT_CONFIRMED] = "not-confirmed",
};

const char *pk_confirmation_name(enum pk_confirmation c)
{
	return (unsigned)c < G_N_ELEMENTS(confirmation_names) ? confirmation_names[c] : "not-confirmed";
}
