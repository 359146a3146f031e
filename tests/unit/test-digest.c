/*
 * test-digest.c - findings grouped by cause and file (analysis/digest.h):
 * a revert that drops a pr_fmt() and makes every pr_*() a printk(KERN_*)
 * is one prefix-changed line and one advice line, however many calls;
 * different causes stay apart; a finding alone reads as scan always
 * printed it; advice comes after the changes, one group per kind over
 * every file; the confirmations are counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "analysis/digest.h"
#include "scan-fixture.h"

/*
 * The revert of a conversion: drivers/x.c loses its pr_fmt() and n of its
 * pr_*() calls become printk(KERN_*) (pr_warn and pr_info in turn).
 */
static char *revert(unsigned n)
{
	GString *body = g_string_new("-#define pr_fmt(fmt) \"xdrv: \" fmt\n \n");

	for (unsigned i = 0; i < n; i++) {
		const char *pr = i % 2 ? "pr_info" : "pr_warn", *kern = i % 2 ? "KERN_INFO" : "KERN_WARNING";

		g_string_append_printf(body, "-\t%s(\"message %u\\n\");\n+\tprintk(%s \"message %u\\n\");\n \tx++;\n",
				       pr, i, kern, i);
	}
	g_autofree char *b = g_string_free(body, FALSE);
	return mkdiff(b);
}

static GPtrArray *digest_of(const char *diff, struct pk_scan **out_scan)
{
	g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
	struct pk_scan *s = pk_scan(p);
	GPtrArray *groups = pk_digest(s->findings, NULL);

	*out_scan = s;
	return groups;
}

static void test_revert_is_two_lines(void **state)
{
	g_autofree char *diff = revert(19);
	struct pk_scan *s = NULL;
	g_autoptr(GPtrArray) groups = digest_of(diff, &s);
	const struct pk_digest_group *g;
	g_autofree char *line = NULL, *advice = NULL;
	unsigned prefix = 0;

	/* every finding is in the scan (and so in --json): 19 + 19 + the pr_fmt() one */
	for (guint i = 0; i < s->findings->len; i++)
		prefix += ((struct pk_finding *)s->findings->pdata[i])->kind == PK_FINDING_PREFIX_CHANGED;
	assert_int_equal(prefix, 19);
	assert_int_equal(s->findings->len, 39);
	assert_int_equal(groups->len, 3);
	g = groups->pdata[0];
	assert_int_equal(g->kind, PK_FINDING_PREFIX_CHANGED);
	assert_int_equal(g->count, 19);
	assert_false(g->advice);
	line = pk_digest_line(g);
	assert_string_equal(line, "drivers/x.c: prefix-changed: 19 calls lose the prefix \"xdrv: \" pr_fmt() gave "
			    "them: pr_warn() and pr_info() become printk() (lines 11, 13, 15 and 16 more)");
	g = groups->pdata[1];
	assert_int_equal(g->kind, PK_FINDING_PR_FMT_REMOVED);
	assert_int_equal(g->count, 1);
	assert_null(g->lines);
	/* the advice last, counted */
	g = groups->pdata[2];
	assert_true(g->advice);
	assert_int_equal(g->kind, PK_FINDING_PREFER_PR_LEVEL);
	advice = pk_digest_line(g);
	assert_string_equal(advice, "drivers/x.c: prefer-pr-level: 19 printk(KERN_<LEVEL> ...) calls where "
			    "pr_<level>() would do (lines 11, 13, 15 and 16 more)");
	pk_scan_free(s);
}

/* Four lines are all named: "and 1 more" would say no less. */
static void test_lines_named(void **state)
{
	g_autofree char *diff = revert(4);
	struct pk_scan *s = NULL;
	g_autoptr(GPtrArray) groups = digest_of(diff, &s);
	const struct pk_digest_group *g = groups->pdata[0];

	assert_string_equal(g->lines, "lines 11, 13, 15 and 17");
	pk_scan_free(s);
}

/* A finding alone reads as scan printed it before groups; other causes and files are other groups. */
static void test_causes_apart(void **state)
{
	const char *diff =
		"diff --git a/drivers/a.c b/drivers/a.c\n--- a/drivers/a.c\n+++ b/drivers/a.c\n"
		"@@ -10,3 +10,3 @@ static int a_probe(struct device *dev)\n"
		"-\tpr_err(\"a one\\n\");\n+\tpr_info(\"a one\\n\");\n"
		"-\tpr_err(\"a two\\n\");\n+\tpr_info(\"a two\\n\");\n"
		"-\tpr_err(\"a three\\n\");\n+\tpr_warn(\"a three\\n\");\n"
		"diff --git a/drivers/b.c b/drivers/b.c\n--- a/drivers/b.c\n+++ b/drivers/b.c\n"
		"@@ -10,2 +10,2 @@ static int b_probe(struct device *dev)\n"
		"-\tpr_err(\"b one\\n\");\n+\tpr_info(\"b one\\n\");\n"
		"-\tpr_info(\"b message text here\\n\");\n+\tpr_info(\"b message words here\\n\");\n";
	struct pk_scan *s = NULL;
	g_autoptr(GPtrArray) groups = digest_of(diff, &s);
	g_autofree char *l0 = NULL, *l1 = NULL, *l2 = NULL, *l3 = NULL;

	assert_int_equal(groups->len, 4);
	l0 = pk_digest_line(groups->pdata[0]);
	l1 = pk_digest_line(groups->pdata[1]);
	l2 = pk_digest_line(groups->pdata[2]);
	l3 = pk_digest_line(groups->pdata[3]);
	assert_string_equal(l0, "drivers/a.c: level-changed: 2 messages move from err to info level (lines 10 and 11)");
	assert_string_equal(l1, "drivers/a.c:12: level-changed: \"a three\" moves from err to warn level");
	assert_string_equal(l2, "drivers/b.c:10: level-changed: \"b one\" moves from err to info level");
	assert_non_null(strstr(l3, "drivers/b.c:11: text-changed: the text \"b message text here\" becomes \"b message words here\""));
	pk_scan_free(s);
}

/* Advice of several files is one group of its kind; confirmations counted. */
static void test_advice_and_notes(void **state)
{
	const char *diff =
		"diff --git a/drivers/a.c b/drivers/a.c\n--- a/drivers/a.c\n+++ b/drivers/a.c\n"
		"@@ -10,2 +10,2 @@ static int a_probe(struct device *dev)\n"
		"-\tpr_err(\"a one\\n\");\n+\tprintk(KERN_ERR \"a one!\\n\");\n"
		"-\tpr_err(\"a two\\n\");\n+\tprintk(KERN_ERR \"a two!\\n\");\n"
		"diff --git a/drivers/b.c b/drivers/b.c\n--- a/drivers/b.c\n+++ b/drivers/b.c\n"
		"@@ -10,1 +10,1 @@ static int b_probe(struct device *dev)\n"
		"-\tpr_err(\"b one\\n\");\n+\tprintk(KERN_ERR \"b one!\\n\");\n";
	g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
	g_autoptr(pk_scan_result) s = pk_scan(p);
	g_autoptr(GPtrArray) notes = g_ptr_array_new();
	g_autoptr(GPtrArray) groups = NULL;
	const struct pk_digest_group *last;
	unsigned texts = 0;

	for (guint i = 0; i < s->findings->len; i++) {
		const struct pk_finding *f = s->findings->pdata[i];

		/* two of the text changes seen at boot, one not */
		if (f->kind == PK_FINDING_TEXT_CHANGED)
			g_ptr_array_add(notes, texts++ < 2 ? "seen-at-boot" : "not-confirmed");
		else
			g_ptr_array_add(notes, NULL);
	}
	groups = pk_digest(s->findings, (const char *const *)notes->pdata);
	last = groups->pdata[groups->len - 1];
	assert_true(last->advice);
	assert_int_equal(last->kind, PK_FINDING_PREFER_PR_LEVEL);
	assert_int_equal(last->count, 3);
	assert_string_equal(last->where, "2 files");
	assert_string_equal(last->lines, "drivers/a.c:10, drivers/a.c:11 and drivers/b.c:10");
	for (guint i = 0; i + 1 < groups->len; i++) {
		const struct pk_digest_group *g = groups->pdata[i];

		assert_false(g->advice);
		if (g->kind == PK_FINDING_TEXT_CHANGED && !strcmp(g->where, "drivers/a.c:10"))
			assert_string_equal(g->note, " (seen-at-boot)");
		if (g->kind == PK_FINDING_TEXT_CHANGED && !strcmp(g->where, "drivers/b.c:10"))
			assert_string_equal(g->note, " (not-confirmed)");
	}
	/* no findings, no groups */
	g_ptr_array_unref(g_steal_pointer(&groups));
	groups = pk_digest(NULL, NULL);
	assert_int_equal(groups->len, 0);
}

/* A driver removed: its messages one cause, quoted up to three; its debug messages another. */
static void test_messages_removed(void **state)
{
	g_autofree char *diff = mkdiff("-\tprintk(KERN_ERR \"one\\n\");\n-\tprintk(KERN_ERR \"two\\n\");\n"
				       "-\tpr_info(\"three\\n\");\n-\tpr_info(\"four\\n\");\n"
				       "-\tpr_info(\"five\\n\");\n-\tpr_debug(\"d1\\n\");\n-\tpr_debug(\"d2\\n\");\n");
	struct pk_scan *s = NULL;
	g_autoptr(GPtrArray) groups = digest_of(diff, &s);
	g_autofree char *l0 = NULL, *l1 = NULL;

	assert_int_equal(groups->len, 2);
	l0 = pk_digest_line(groups->pdata[0]);
	l1 = pk_digest_line(groups->pdata[1]);
	assert_string_equal(l0, "drivers/x.c: message-removed: 5 messages are removed: printk() and pr_info() of "
			    "\"one\", \"two\", \"three\" and 2 more (lines 10, 11, 12 and 2 more)");
	assert_string_equal(l1, "drivers/x.c: message-removed: 2 messages are removed: pr_debug() of \"d1\" and "
			    "\"d2\"; they are debug messages, printed only when DEBUG or dynamic debug enables them "
			    "(lines 15 and 16)");
	pk_scan_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_revert_is_two_lines),
		cmocka_unit_test(test_lines_named),
		cmocka_unit_test(test_causes_apart),
		cmocka_unit_test(test_advice_and_notes),
		cmocka_unit_test(test_messages_removed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
