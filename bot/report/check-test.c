/* check-test.c - a patch tested as `test` tests it, as b4 check lines (check.h). */
#include "report/check.h"
#include "lab/coverage.h"
#include "pipeline/test.h"

#include <string.h>

/* The changes of one kind from one file (of the boot log or the index), in the diff's order. */
struct change_group {
	enum pk_change_kind kind;
	const char *file;
	GPtrArray *lines;    /* GINT_TO_POINTER(line) */
	const char *one;     /* the change's own sentence when there is one change */
};

static void change_group_free(gpointer p)
{
	struct change_group *g = p;

	g_ptr_array_unref(g->lines);
	g_free(g);
}

static void change_group_add(GPtrArray *groups, enum pk_change_kind kind, const char *file, int line)
{
	struct change_group *g = NULL;

	for (guint i = 0; i < groups->len && !g; i++) {
		struct change_group *o = groups->pdata[i];

		if (o->kind == kind && !g_strcmp0(o->file, file))
			g = o;
	}
	if (!g) {
		g = g_new0(struct change_group, 1);
		g->kind = kind;
		g->file = file;
		g->lines = g_ptr_array_new();
		g_ptr_array_add(groups, g);
	}
	g_ptr_array_add(g->lines, GINT_TO_POINTER(line));
}

static char *group_line_list(const struct change_group *g)
{
	GString *out = g_string_new(g->lines->len > 1 ? "lines " : "line ");

	for (guint i = 0; i < g->lines->len && i < 12; i++)
		g_string_append_printf(out, "%s%d", i == 0 ? "" : i + 1 == g->lines->len ? " and " : ", ",
				       GPOINTER_TO_INT(g->lines->pdata[i]));
	if (g->lines->len > 12)
		g_string_append_printf(out, " and %u more", g->lines->len - 12);
	return g_string_free(out, FALSE);
}

/* The boot log's changes, a line a kind and file: each a change of what the kernel printed. */
static void boot_log_lines(GPtrArray *lines, const struct pk_kdiff *d)
{
	g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func(change_group_free);

	for (guint i = 0; i < d->changes->len; i++) {
		const struct pk_change *c = d->changes->pdata[i];

		change_group_add(groups, c->kind, c->origin.file, c->origin.line);
		if (((struct change_group *)groups->pdata[groups->len - 1])->lines->len == 1)
			((struct change_group *)groups->pdata[groups->len - 1])->one = c->message;
	}
	for (guint i = 0; i < groups->len; i++) {
		const struct change_group *g = groups->pdata[i];
		g_autofree char *where = group_line_list(g);

		if (g->lines->len == 1 || !g->file)
			pk_check_add(lines, true, "boot log: %s", g->one);
		else
			pk_check_add(lines, true, "boot log: %u records of %s %s, %s", g->lines->len, g->file,
				     pk_change_kind_name(g->kind), where);
	}
}

/* The printk index's changes, a line a kind and file. */
static void index_lines(GPtrArray *lines, const struct pk_kdiff *d)
{
	g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func(change_group_free);
	g_autoptr(GPtrArray) firsts = g_ptr_array_new();

	for (guint i = 0; i < d->index_changes->len; i++) {
		const struct pk_index_change *c = d->index_changes->pdata[i];
		guint before = groups->len;

		change_group_add(groups, c->kind, c->origin.file, c->origin.line);
		if (groups->len > before)
			g_ptr_array_add(firsts, (gpointer)c);
	}
	for (guint i = 0; i < groups->len; i++) {
		const struct change_group *g = groups->pdata[i];
		const struct pk_index_change *c = firsts->pdata[i];
		g_autofree char *where = group_line_list(g);
		g_autofree char *o = c->old_format ? g_strescape(c->old_format, NULL) : NULL;
		g_autofree char *n = c->new_format ? g_strescape(c->new_format, NULL) : NULL;

		if (g->lines->len > 1)
			pk_check_add(lines, true, "printk index: %u messages of %s %s, %s", g->lines->len, g->file,
				     pk_change_kind_name(g->kind), where);
		else if (c->kind == PK_CHANGE_LEVEL_CHANGED)
			pk_check_add(lines, true, "printk index: %s:%d %s(): level-changed from %s to %s: \"%s\"",
				     c->origin.file, c->origin.line, c->origin.func ? c->origin.func : "?",
				     pk_level_name(c->old_level), pk_level_name(c->new_level), n ? n : o);
		else if (o && n)
			pk_check_add(lines, true, "printk index: %s:%d %s(): %s: \"%s\" -> \"%s\"", c->origin.file,
				     c->origin.line, c->origin.func ? c->origin.func : "?", pk_change_kind_name(c->kind), o, n);
		else
			pk_check_add(lines, true, "printk index: %s:%d %s(): %s: \"%s\"", c->origin.file, c->origin.line,
				     c->origin.func ? c->origin.func : "?", pk_change_kind_name(c->kind), o ? o : n);
	}
}

/* The first line of text, or "" (reasons and compiler errors run over several). */
static char *first_line(const char *text)
{
	const char *s = text ? text : "";
	const char *nl;

	while (*s == '\n' || *s == ' ')
		s++;
	nl = strchr(s, '\n');
	return nl ? g_strndup(s, (gsize)(nl - s)) : g_strdup(s);
}

void pk_check_test_lines(GPtrArray *lines, const struct pk_test_result *res, const char *base)
{
	const struct pk_test_result *shown = res->relinked ? res->relinked : res;
	g_autofree char *reason = first_line(res->reason);
	const struct pk_kdiff *d = shown->diff;

	switch (res->verdict) {
	case PK_VERDICT_CONSOLE_CHANGED:
		pk_check_add(lines, true, "console-changed on %s: %u boot-log change%s, %u printk index change%s",
			     base, d ? d->changes->len : 0, d && d->changes->len == 1 ? "" : "s",
			     d ? d->index_changes->len : 0, d && d->index_changes->len == 1 ? "" : "s");
		break;
	case PK_VERDICT_NOT_BUILT:
		for (guint i = 0; shown->coverage && i < shown->coverage->len; i++) {
			const struct pk_file_coverage *c = shown->coverage->pdata[i];

			if (c->source && c->state == PK_COVERAGE_NOT_BUILT)
				pk_check_add(lines, false, "not-built on %s: %s is not compiled in%s%s%s", base, c->file,
					     c->reason ? " (" : "", c->reason ? c->reason : "", c->reason ? ")" : "");
		}
		break;
	case PK_VERDICT_DOES_NOT_APPLY:
		/* a patch of a series tested alone, or written for another tree: the author's to say */
		pk_check_add(lines, false, "does-not-apply on %s: %s", base, reason);
		return;
	case PK_VERDICT_REFUSED:
		pk_check_add(lines, false, "refused (not built): %s", reason);
		return;
	case PK_VERDICT_BUILD_FAILED: {
		g_autofree char *error = first_line(shown->after.build.errors);

		pk_check_add(lines, true, "build-failed on %s: %s", base, *error ? error : reason);
		break;
	}
	case PK_VERDICT_BOOT_FAILED:
		pk_check_add(lines, true, "boot-failed on %s: %s", base, reason);
		break;
	default:
		break;
	}
	if (d) {
		boot_log_lines(lines, d);
		index_lines(lines, d);
	}
	for (guint i = 0; shown->monitor && i < shown->monitor->breaks->len; i++) {
		const struct pk_rule_break *b = shown->monitor->breaks->pdata[i];

		pk_check_add(lines, true, "monitor rule %s (%s of %s) loses %s:%d %s(): %s%s%s", b->rule, b->where,
			     shown->monitor->rules_path, b->file ? b->file : "?", b->line, b->func ? b->func : "?",
			     pk_rule_break_kind_name(b->kind), b->moved_to ? " to " : "", b->moved_to ? b->moved_to : "");
	}
	/* the build and boot said what changes the console; checkpatch.pl's kind of advice stays */
	pk_check_group(lines, res->scan->findings, true);
}
