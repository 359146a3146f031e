/* check.c - static findings as b4 check lines, grouped by cause and file (check.h). */
#include "report/check.h"
#include "analysis/digest.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

void pk_check_group(GPtrArray *lines, const GPtrArray *findings, bool only_silent)
{
	g_autoptr(GPtrArray) picked = g_ptr_array_new();
	g_autoptr(GPtrArray) groups = NULL;

	for (guint i = 0; findings && i < findings->len; i++) {
		const struct pk_finding *f = findings->pdata[i];

		if (!only_silent || f->silent)
			g_ptr_array_add(picked, (gpointer)f);
	}
	/* the grouping scan and the review show (analysis/digest.h), a line a group */
	groups = pk_digest(picked, NULL);
	for (guint i = 0; i < groups->len; i++) {
		const struct pk_digest_group *g = groups->pdata[i];
		g_autofree char *line = pk_digest_line(g);

		pk_check_add(lines, !g->silent, "%s", line);
	}
}
