/* check.c - static findings as b4 check lines, grouped by kind and file (check.h). */
#include "report/check.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_LINES_SHOWN 12   /* line numbers named in a group's line; the rest counted */

static void line_free(gpointer p)
{
	struct pk_check_line *l = p;

	g_free(l->text);
	g_free(l);
}

GPtrArray *pk_check_lines_new(void)
{
	return g_ptr_array_new_with_free_func(line_free);
}

void pk_check_add(GPtrArray *lines, bool error, const char *fmt, ...)
{
	struct pk_check_line *l = g_new0(struct pk_check_line, 1);
	g_autofree char *raw = NULL;
	va_list ap;

	va_start(ap, fmt);
	raw = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	/* b4 reads a line a finding: a newline in a kernel message must not make two */
	l->text = pk_text_for_terminal(raw);
	l->error = error;
	g_ptr_array_add(lines, l);
}

char *pk_check_line_format(const struct pk_check_line *line)
{
	return g_strdup_printf("%s%s", line->error ? "ERROR: " : "", line->text);
}

/* What a group of n > 1 findings of a kind says: "%u" is n, "%s" the file. */
static const struct {
	enum pk_finding_kind kind;
	const char *many;
} group_sentences[] = {
	{ PK_FINDING_MESSAGE_ADDED, "%u messages added to %s" },
	{ PK_FINDING_MESSAGE_REMOVED, "%u messages removed from %s" },
	{ PK_FINDING_TEXT_CHANGED, "%u messages of %s reworded" },
	{ PK_FINDING_LEVEL_CHANGED, "%u messages of %s change level" },
	{ PK_FINDING_LEVEL_MISSING, "%u printk() calls in %s without a KERN_ level print at the default level" },
	{ PK_FINDING_DEBUG_COMPILED_OUT, "%u messages of %s may print at debug level, compiled out by default" },
	{ PK_FINDING_NEWLINE_LOST, "%u messages of %s lose their trailing newline" },
	{ PK_FINDING_NEWLINE_ADDED, "%u messages of %s gain a trailing newline" },
	{ PK_FINDING_CONT_BROKEN, "%u continued lines of %s are broken" },
	{ PK_FINDING_CONT_ADDED, "%u calls in %s now continue a line" },
	{ PK_FINDING_STRING_SPLIT, "%u format strings of %s are split across source lines" },
	{ PK_FINDING_DEVICE_PREFIX_LOST, "%u messages of %s lose their device prefix" },
	{ PK_FINDING_DEVICE_PREFIX_ADDED, "%u messages of %s gain a device prefix" },
	{ PK_FINDING_WARN_CONVERTED, "%u calls in %s change between WARN()/panic() and a plain message" },
	{ PK_FINDING_PREFIX_CHANGED, "%u calls in %s print another prefix" },
	{ PK_FINDING_CALL_CONVERTED, "%u calls in %s are converted and print the same" },
	{ PK_FINDING_LOGGING_CONTINUATION, "%u lines of %s continue a line (pr_cont() or KERN_CONT)" },
	{ PK_FINDING_PREFER_PR_LEVEL, "%u printk(KERN_<LEVEL>) calls in %s where pr_<level>() would do" },
	{ PK_FINDING_EMBEDDED_FUNCTION_NAME,
	  "%u formats of %s spell their function's name (\"%%s\", __func__ survives a rename)" },
	{ PK_FINDING_WHITESPACE_BEFORE_NEWLINE, "%u formats of %s have a blank before their newline" },
};

static const char *group_sentence(enum pk_finding_kind kind)
{
	for (size_t i = 0; i < G_N_ELEMENTS(group_sentences); i++)
		if (group_sentences[i].kind == kind)
			return group_sentences[i].many;
	return NULL;   /* pr_fmt-*, pairing-capped, patch-corrupt: each finding says it best */
}

/* One group: the findings of one kind in one file, in the patch's order. */
struct group {
	enum pk_finding_kind kind;
	const char *file;
	GPtrArray *findings;   /* const struct pk_finding*, borrowed */
};

static void group_free(gpointer p)
{
	struct group *g = p;

	g_ptr_array_unref(g->findings);
	g_free(g);
}

static int int_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* "lines 221, 233 and 429", each once, the first few when there are many. */
static char *group_lines(const struct group *g)
{
	g_autofree int *lines = g_new(int, g->findings->len);
	GString *out = g_string_new("line");
	guint n = 0;

	for (guint i = 0; i < g->findings->len; i++)
		lines[i] = ((const struct pk_finding *)g->findings->pdata[i])->line;
	qsort(lines, g->findings->len, sizeof(int), int_compare);
	for (guint i = 0; i < g->findings->len; i++)
		if (!n || lines[n - 1] != lines[i])
			lines[n++] = lines[i];
	g_string_append(out, n > 1 ? "s " : " ");
	for (guint i = 0; i < n && i < CHECK_LINES_SHOWN; i++)
		g_string_append_printf(out, "%s%d", i == 0 ? "" : i + 1 == n ? " and " : ", ", lines[i]);
	if (n > CHECK_LINES_SHOWN)
		g_string_append_printf(out, " and %u more", n - CHECK_LINES_SHOWN);
	return g_string_free(out, FALSE);
}

/* " (9 err, 2 info)": the levels of a group's messages, when more than one. */
static char *group_levels(const struct group *g, bool old_side)
{
	g_autoptr(GHashTable) counts = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GPtrArray) order = g_ptr_array_new();
	GString *out;

	for (guint i = 0; i < g->findings->len; i++) {
		const struct pk_finding *f = g->findings->pdata[i];
		const char *level = old_side ? f->old_level : f->new_level;

		if (!level)
			return g_strdup("");
		if (!g_hash_table_contains(counts, level))
			g_ptr_array_add(order, (gpointer)level);
		g_hash_table_insert(counts, (gpointer)level,
				    GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(counts, level)) + 1));
	}
	if (order->len < 2)
		return order->len ? g_strdup_printf(", all %s", (const char *)order->pdata[0]) : g_strdup("");
	out = g_string_new(" (");
	for (guint i = 0; i < order->len; i++)
		g_string_append_printf(out, "%s%u %s", i ? ", " : "",
				       GPOINTER_TO_UINT(g_hash_table_lookup(counts, order->pdata[i])),
				       (const char *)order->pdata[i]);
	g_string_append_c(out, ')');
	return g_string_free(out, FALSE);
}

/* Whether every finding of g has the same value in the member at offset (a string, NULL counting). */
static bool group_same(const struct group *g, size_t offset)
{
	const char *first = G_STRUCT_MEMBER(const char *, g->findings->pdata[0], offset);

	for (guint i = 1; i < g->findings->len; i++)
		if (g_strcmp0(first, G_STRUCT_MEMBER(const char *, g->findings->pdata[i], offset)))
			return false;
	return true;
}

/* The sentence of a group of more than one: the values all its findings share are said too. */
static char *group_text(const struct group *g)
{
	const struct pk_finding *f = g->findings->pdata[0];
	guint n = g->findings->len;
	g_autofree char *where = group_lines(g);
	g_autofree char *levels = NULL;
	g_autofree char *head = NULL;
	bool same_prefix = group_same(g, G_STRUCT_OFFSET(struct pk_finding, old_prefix)) &&
			   group_same(g, G_STRUCT_OFFSET(struct pk_finding, new_prefix)) && f->old_prefix &&
			   f->new_prefix;
	bool same_level = group_same(g, G_STRUCT_OFFSET(struct pk_finding, old_level)) &&
			  group_same(g, G_STRUCT_OFFSET(struct pk_finding, new_level)) && f->old_level &&
			  f->new_level;

	if (g->kind == PK_FINDING_PREFIX_CHANGED && same_prefix) {
		if (!*f->new_prefix)
			return g_strdup_printf("%u calls in %s lose the prefix \"%s\", %s", n, g->file, f->old_prefix,
					       where);
		if (!*f->old_prefix)
			return g_strdup_printf("%u calls in %s gain the prefix \"%s\", %s", n, g->file, f->new_prefix,
					       where);
		return g_strdup_printf("%u calls in %s print the prefix \"%s\" instead of \"%s\", %s", n, g->file,
				       f->new_prefix, f->old_prefix, where);
	}
	if (g->kind == PK_FINDING_LEVEL_CHANGED && same_level)
		return g_strdup_printf("%u messages of %s move from %s to %s level, %s", n, g->file, f->old_level,
				       f->new_level, where);
	if (g->kind == PK_FINDING_MESSAGE_ADDED || g->kind == PK_FINDING_MESSAGE_REMOVED)
		levels = group_levels(g, g->kind == PK_FINDING_MESSAGE_REMOVED);
	head = g_strdup_printf(group_sentence(g->kind), n, g->file);
	return g_strdup_printf("%s%s, %s", head, levels ? levels : "", where);
}

void pk_check_group(GPtrArray *lines, const GPtrArray *findings, bool only_silent)
{
	g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func(group_free);

	for (guint i = 0; findings && i < findings->len; i++) {
		const struct pk_finding *f = findings->pdata[i];
		struct group *g = NULL;

		if (only_silent && !f->silent)
			continue;
		/* the kinds without a group sentence stay one line each */
		for (guint j = 0; group_sentence(f->kind) && j < groups->len && !g; j++) {
			struct group *o = groups->pdata[j];

			if (o->kind == f->kind && !strcmp(o->file, f->file))
				g = o;
		}
		if (!g) {
			g = g_new0(struct group, 1);
			g->kind = f->kind;
			g->file = f->file;
			g->findings = g_ptr_array_new();
			g_ptr_array_add(groups, g);
		}
		g_ptr_array_add(g->findings, (gpointer)f);
	}
	for (guint j = 0; j < groups->len; j++) {
		const struct group *g = groups->pdata[j];
		const struct pk_finding *f = g->findings->pdata[0];

		if (g->findings->len == 1) {
			pk_check_add(lines, !f->silent, "%s:%d: %s: %s", f->file, f->line, pk_finding_kind_name(f->kind),
				     f->message);
		} else {
			g_autofree char *text = group_text(g);

			pk_check_add(lines, !f->silent, "%s", text);
		}
	}
}
