/* digest.c - a patch's findings grouped by cause and file; see digest.h. */
#include "analysis/digest.h"

#include <string.h>

void pk_digest_group_free(struct pk_digest_group *g)
{
	if (!g)
		return;
	g_free(g->where);
	g_free(g->lines);
	g_free(g->sentence);
	g_free(g->note);
	g_free(g);
}

/* The four kinds that mirror checkpatch.pl's warnings and print nothing different (scan.h). */
static bool is_advice(enum pk_finding_kind kind)
{
	return kind == PK_FINDING_LOGGING_CONTINUATION || kind == PK_FINDING_PREFER_PR_LEVEL ||
	       kind == PK_FINDING_EMBEDDED_FUNCTION_NAME || kind == PK_FINDING_WHITESPACE_BEFORE_NEWLINE;
}

/*
 * What makes two findings one cause, beside their kind (and their file,
 * unless advice): a prefix that goes or comes, a level that moves, the
 * kind alone for the kinds whose sentence says the same of every call,
 * else the whole sentence (the same words, the same cause).
 */
static char *cause_key(const struct pk_finding *f)
{
	switch (f->kind) {
	case PK_FINDING_PREFIX_CHANGED:
		if (f->old_prefix && f->new_prefix)
			return g_strdup_printf("%s\x1f%s", f->old_prefix, f->new_prefix);
		break;
	case PK_FINDING_LEVEL_CHANGED:
		if (f->old_level && f->new_level)
			return g_strdup_printf("%s\x1f%s", f->old_level, f->new_level);
		break;
	case PK_FINDING_LEVEL_MISSING:
	case PK_FINDING_STRING_SPLIT:
		return g_strdup("");
	case PK_FINDING_MESSAGE_ADDED:
	case PK_FINDING_MESSAGE_REMOVED:
		/* a driver removed or added whole: its messages one cause; its debug ones another */
		return g_strdup(f->message && strstr(f->message, "debug message") ? "debug" : "");
	default:
		if (is_advice(f->kind))
			return g_strdup("");
		break;
	}
	return g_strdup(f->message ? f->message : "");
}

/* The function a call as written names: "pr_warn(\"x\")" gives "pr_warn"; new. */
static char *call_name(const char *call)
{
	size_t n = call ? strcspn(call, "( \t") : 0;

	return n ? g_strndup(call, n) : NULL;
}

/* names (char*, distinct, in order) as "a() and b()", "a(), b() and c()"; new. */
static char *names_said(GPtrArray *names)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(s, "%s%s()", i == 0 ? "" : i + 1 == names->len ? " and " : ", ",
				       (char *)names->pdata[i]);
	return g_string_free(s, FALSE);
}

static void add_distinct(GPtrArray *names, const char *call)
{
	char *name = call_name(call);

	if (!name || g_ptr_array_find_with_equal_func(names, name, g_str_equal, NULL))
		g_free(name);
	else
		g_ptr_array_add(names, name);
}

/* ": pr_warn() and pr_info() become printk()" of the group's calls when they change name, else "". */
static char *conversion_said(const GPtrArray *members)
{
	g_autoptr(GPtrArray) olds = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) news = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *o = NULL, *n = NULL;

	for (guint i = 0; i < members->len; i++) {
		const struct pk_finding *f = members->pdata[i];

		add_distinct(olds, f->old_call);
		add_distinct(news, f->new_call);
	}
	if (!olds->len || !news->len)
		return g_strdup("");
	o = names_said(olds);
	n = names_said(news);
	if (!strcmp(o, n))
		return g_strdup("");
	return g_strdup_printf(": %s %s %s", o, olds->len == 1 ? "becomes" : "become", n);
}

/* At most this many texts of added or removed messages are quoted; the others are counted. */
#define TEXTS_QUOTED 3

/*
 * "5 messages are removed: printk() of "a", "b", "c" and 2 more" (the
 * formats as the findings quote them, each once; "; they are debug
 * messages, ..." when the cause is that).
 */
static char *messages_said(const GPtrArray *members, bool added)
{
	g_autoptr(GPtrArray) calls = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) texts = g_ptr_array_new();
	const struct pk_finding *first = members->pdata[0];
	g_autofree char *names = NULL;
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < members->len; i++) {
		const struct pk_finding *f = members->pdata[i];
		const char *text = added ? f->new_text : f->old_text;

		add_distinct(calls, added ? f->new_call : f->old_call);
		if (text && !g_ptr_array_find_with_equal_func(texts, text, g_str_equal, NULL))
			g_ptr_array_add(texts, (gpointer)text);
	}
	names = calls->len ? names_said(calls) : g_strdup("calls");
	g_string_append_printf(s, "%u messages are %s: %s of ", members->len, added ? "added" : "removed", names);
	for (guint i = 0; i < MIN(texts->len, TEXTS_QUOTED); i++) {
		const char *t = texts->pdata[i];
		/* as a finding's sentence quotes it: without the \n that ends the line */
		int n = g_str_has_suffix(t, "\\n") ? (int)strlen(t) - 2 : (int)strlen(t);

		g_string_append_printf(s, "%s\"%.*s\"", i == 0 ? "" : i + 1 == texts->len ? " and " : ", ", n, t);
	}
	if (texts->len > TEXTS_QUOTED) {
		/* the messages not quoted, so that the quoted and the more add up to the count */
		unsigned more = 0;

		for (guint i = 0; i < members->len; i++) {
			const struct pk_finding *f = members->pdata[i];
			const char *text = added ? f->new_text : f->old_text;
			bool quoted = false;

			for (guint q = 0; q < TEXTS_QUOTED; q++)
				quoted |= text && !strcmp(text, texts->pdata[q]);
			more += !quoted;
		}
		g_string_append_printf(s, " and %u more", more);
	}
	if (first->message && strstr(first->message, "debug message"))
		g_string_append(s, "; they are debug messages, printed only when DEBUG or dynamic debug enables them");
	return g_string_free(s, FALSE);
}

/* The cause of a group of several findings (members), said once. */
static char *group_sentence(const GPtrArray *members)
{
	const struct pk_finding *f = members->pdata[0];
	unsigned n = members->len;

	switch (f->kind) {
	case PK_FINDING_PREFIX_CHANGED:
		if (f->old_prefix && f->new_prefix) {
			g_autofree char *conv = conversion_said(members);

			if (!*f->new_prefix)
				return g_strdup_printf("%u calls lose the prefix \"%s\" pr_fmt() gave them%s", n,
						       f->old_prefix, conv);
			if (!*f->old_prefix)
				return g_strdup_printf("%u calls gain the prefix \"%s\" of the file's pr_fmt()%s", n,
						       f->new_prefix, conv);
			return g_strdup_printf("%u calls print \"%s\" before their text instead of \"%s\"%s", n,
					       f->new_prefix, f->old_prefix, conv);
		}
		break;
	case PK_FINDING_LEVEL_CHANGED:
		if (f->old_level && f->new_level)
			return g_strdup_printf("%u messages move from %s to %s level", n, f->old_level, f->new_level);
		break;
	case PK_FINDING_LEVEL_MISSING:
		return g_strdup_printf("%u printk() calls have no KERN_ level: each starts a line of its own at "
				       "the default level", n);
	case PK_FINDING_MESSAGE_ADDED:
	case PK_FINDING_MESSAGE_REMOVED:
		return messages_said(members, f->kind == PK_FINDING_MESSAGE_ADDED);
	case PK_FINDING_STRING_SPLIT:
		return g_strdup_printf("%u formats continue the string literal of the line above: a grep for the "
				       "message does not find them", n);
	case PK_FINDING_PREFER_PR_LEVEL:
		return g_strdup_printf("%u printk(KERN_<LEVEL> ...) calls where pr_<level>() would do", n);
	case PK_FINDING_LOGGING_CONTINUATION:
		return g_strdup_printf("%u calls continue a line (pr_cont() or printk(KERN_CONT ...)), which "
				       "another CPU's message can cut", n);
	case PK_FINDING_EMBEDDED_FUNCTION_NAME:
		return g_strdup_printf("%u formats spell their function's name; \"%%s\", __func__ survives a "
				       "rename", n);
	case PK_FINDING_WHITESPACE_BEFORE_NEWLINE:
		return g_strdup_printf("%u formats have a blank right before \"\\n\"", n);
	default:
		break;
	}
	return g_strdup_printf("%u calls: %s", n, f->message ? f->message : "");
}

/* A group as it is built: its findings and their notes, in scan order. */
struct building {
	GPtrArray *members;   /* const struct pk_finding* */
	GPtrArray *notes;     /* const char* (may be NULL each) */
};

static void building_free(struct building *b)
{
	g_ptr_array_unref(b->members);
	g_ptr_array_unref(b->notes);
	g_free(b);
}

/* " (seen-at-boot)" when every member says it, " (3 seen-at-boot, 2 not-confirmed)" when they differ. */
static char *notes_said(const GPtrArray *notes)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	g_autoptr(GArray) counts = g_array_new(FALSE, TRUE, sizeof(unsigned));
	GString *s;

	for (guint i = 0; i < notes->len; i++) {
		const char *n = notes->pdata[i];
		guint at;

		if (!n)
			continue;
		if (!g_ptr_array_find_with_equal_func(names, n, g_str_equal, &at)) {
			unsigned zero = 0;

			g_ptr_array_add(names, (gpointer)n);
			g_array_append_val(counts, zero);
			at = names->len - 1;
		}
		g_array_index(counts, unsigned, at)++;
	}
	if (!names->len)
		return g_strdup("");
	if (names->len == 1 && g_array_index(counts, unsigned, 0) == notes->len)
		return g_strdup_printf(" (%s)", (char *)names->pdata[0]);
	s = g_string_new(" (");
	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(s, "%s%u %s", i ? ", " : "", g_array_index(counts, unsigned, i),
				       (char *)names->pdata[i]);
	g_string_append_c(s, ')');
	return g_string_free(s, FALSE);
}

/* Whether every member is of one file. */
static bool one_file(const GPtrArray *members)
{
	const struct pk_finding *first = members->pdata[0];

	for (guint i = 1; i < members->len; i++)
		if (g_strcmp0(((const struct pk_finding *)members->pdata[i])->file, first->file))
			return false;
	return true;
}

/* The group made of b. */
static struct pk_digest_group *group_of(const struct building *b)
{
	struct pk_digest_group *g = g_new0(struct pk_digest_group, 1);
	const struct pk_finding *f = b->members->pdata[0];
	bool single_file = one_file(b->members);
	g_autoptr(GPtrArray) named = g_ptr_array_new_with_free_func(g_free);
	unsigned distinct = 0;

	g->kind = f->kind;
	g->advice = is_advice(f->kind);
	g->silent = true;
	for (guint i = 0; i < b->members->len; i++)
		g->silent &= ((const struct pk_finding *)b->members->pdata[i])->silent;
	g->count = b->members->len;
	g->note = notes_said(b->notes);
	/* the lines, each once (two findings of one call share theirs) */
	for (guint i = 0; i < b->members->len; i++) {
		const struct pk_finding *m = b->members->pdata[i];
		g_autofree char *at = single_file ? g_strdup_printf("%d", m->line)
				      : g_strdup_printf("%s:%d", m->file, m->line);

		if (g_ptr_array_find_with_equal_func(named, at, g_str_equal, NULL))
			continue;
		distinct++;
		if (named->len < PK_DIGEST_LINES_NAMED + 1)
			g_ptr_array_add(named, g_steal_pointer(&at));
	}
	if (g->count == 1) {
		g->where = g_strdup_printf("%s:%d", f->file, f->line);
		g->sentence = g_strdup(f->message ? f->message : "");
		return g;
	}
	g->sentence = group_sentence(b->members);
	if (single_file && distinct == 1) {
		g->where = g_strdup_printf("%s:%d", f->file, f->line);
		return g;
	}
	if (single_file) {
		g->where = g_strdup(f->file);
	} else {
		g_autoptr(GHashTable) files = g_hash_table_new(g_str_hash, g_str_equal);

		for (guint i = 0; i < b->members->len; i++)
			g_hash_table_add(files, ((const struct pk_finding *)b->members->pdata[i])->file);
		g->where = g_strdup_printf("%u files", g_hash_table_size(files));
	}
	{
		GString *s = g_string_new(single_file ? "lines " : "");
		/* all of them when one more would only be counted */
		guint shown = distinct <= PK_DIGEST_LINES_NAMED + 1 ? distinct : PK_DIGEST_LINES_NAMED;

		for (guint i = 0; i < shown; i++)
			g_string_append_printf(s, "%s%s", i == 0 ? "" : i + 1 == shown && shown == distinct ? " and " : ", ",
					       (char *)named->pdata[i]);
		if (distinct > shown)
			g_string_append_printf(s, " and %u more", distinct - shown);
		g->lines = g_string_free(s, FALSE);
	}
	return g;
}

GPtrArray *pk_digest(const GPtrArray *findings, const char *const *notes)
{
	GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)pk_digest_group_free);
	g_autoptr(GHashTable) by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func((GDestroyNotify)building_free);

	for (guint i = 0; findings && i < findings->len; i++) {
		const struct pk_finding *f = findings->pdata[i];
		g_autofree char *cause = cause_key(f);
		/* advice is one group per kind over every file; a change, per file too */
		char *key = g_strdup_printf("%d\x1e%s\x1e%s", (int)f->kind, is_advice(f->kind) ? "" : f->file ? f->file : "",
					    cause);
		struct building *b = g_hash_table_lookup(by_key, key);

		if (!b) {
			b = g_new0(struct building, 1);
			b->members = g_ptr_array_new();
			b->notes = g_ptr_array_new();
			g_hash_table_insert(by_key, key, b);
			g_ptr_array_add(order, b);
		} else {
			g_free(key);
		}
		g_ptr_array_add(b->members, (gpointer)f);
		g_ptr_array_add(b->notes, (gpointer)(notes ? notes[i] : NULL));
	}
	/* the changes in the order they come, then the advice */
	for (int pass = 0; pass < 2; pass++)
		for (guint i = 0; i < order->len; i++) {
			const struct building *b = order->pdata[i];

			if (is_advice(((const struct pk_finding *)b->members->pdata[0])->kind) == (pass == 1))
				g_ptr_array_add(out, group_of(b));
		}
	return out;
}

char *pk_digest_line(const struct pk_digest_group *g)
{
	if (!g->lines)
		return g_strdup_printf("%s: %s: %s%s", g->where, pk_finding_kind_name(g->kind), g->sentence, g->note);
	return g_strdup_printf("%s: %s: %s (%s)%s", g->where, pk_finding_kind_name(g->kind), g->sentence, g->lines,
			       g->note);
}
