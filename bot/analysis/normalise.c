/*
 * normalise.c - what a record is compared as: its text with what varies
 * between boots masked, and the key that carries level, facility and the
 * continuation flag (kdiff.h, kdiff-private.h).
 */
#include "analysis/kdiff-private.h"

#include <string.h>

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
struct pk_normaliser {
	GPtrArray *rules;   /* GRegex*, parallel to norm_rules */
	GRegex *number;
};

struct pk_normaliser *pk_normaliser_new(void)
{
	struct pk_normaliser *n = g_new0(struct pk_normaliser, 1);

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

void pk_normaliser_free(struct pk_normaliser *n)
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
char *pk_normaliser_apply(const struct pk_normaliser *n, const char *text)
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
	struct pk_normaliser *n = pk_normaliser_new();
	char *s = pk_normaliser_apply(n, text);

	pk_normaliser_free(n);
	return s;
}

/*
 * The compared key: level, facility and continuation flag the way
 * /dev/kmsg writes them, then the normalised text on one line (control
 * bytes and '\' escaped as kmsg does), so that a level change, invisible
 * on a text console, still makes two records differ.
 */
char *pk_kdiff_record_key(const struct pk_record *r, const char *norm)
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
