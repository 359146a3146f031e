/*
 * scan-fixture.h - what the scanner's tests share (test-scan, test-lexer,
 * test-prfmt, test-cmd-scan): one-hunk diffs, the kinds of a scan, and a
 * table of cases run through pk_scan().  A test includes it once, after
 * cmocka.h; the helpers are static, for one test program each.
 */
#ifndef PK_TEST_SCAN_FIXTURE_H
#define PK_TEST_SCAN_FIXTURE_H

#include <string.h>

#include "analysis/scan.h"
#include "base/patch.h"

#define TREE "tests/data/scan/tree"

/*
 * A one-hunk diff of drivers/x.c from hunk body lines (each starting with
 * ' ', '-' or '+'); the hunk header counts are computed so cases stay short.
 */
G_GNUC_UNUSED static char *mkdiff(const char *body)
{
	int old = 0, new = 0;
	g_auto(GStrv) lines = g_strsplit(body, "\n", -1);

	for (int i = 0; lines[i] && *lines[i]; i++) {
		old += lines[i][0] != '+';
		new += lines[i][0] != '-';
	}
	return g_strdup_printf("diff --git a/drivers/x.c b/drivers/x.c\n"
			       "--- a/drivers/x.c\n+++ b/drivers/x.c\n"
			       "@@ -10,%d +10,%d @@ static int x_probe(struct device *dev)\n%s",
			       old, new, body);
}

static int kind_cmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The finding kinds of a scan, sorted and comma-joined: "" for none. */
G_GNUC_UNUSED static char *kinds(const struct pk_scan *s)
{
	g_autoptr(GPtrArray) k = g_ptr_array_new();

	for (guint i = 0; i < s->findings->len; i++)
		g_ptr_array_add(k, (gpointer)pk_finding_kind_name(((struct pk_finding *)s->findings->pdata[i])->kind));
	g_ptr_array_sort(k, kind_cmp);
	g_ptr_array_add(k, NULL);
	return g_strjoinv(",", (char **)k->pdata);
}

G_GNUC_UNUSED static void assert_str_or_null(const char *got, const char *want)
{
	if (!want) {
		assert_null(got);
	} else {
		assert_non_null(got);
		assert_string_equal(got, want);
	}
}

/* A one-hunk diff of drivers/x.c (mkdiff()) and what pk_scan() must find. */
struct scan_case {
	const char *name;
	const char *body;
	const char *kinds;      /* sorted, comma-joined */
	const char *verdict;
};

/* Run each of n cases through pk_scan(). */
G_GNUC_UNUSED static void run_scan_cases(const struct scan_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct scan_case *c = &cases[i];
		g_autofree char *diff = mkdiff(c->body);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		g_autoptr(pk_scan_result) s = pk_scan(p);
		g_autofree char *got = kinds(s);

		print_message("case: %s\n", c->name);
		assert_null(p->error);
		assert_string_equal(got, c->kinds);
		assert_string_equal(pk_verdict_name(s->verdict), c->verdict);
	}
}

#endif
