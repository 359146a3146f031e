/*
 * test-check.c - b4 check lines (report/check.h): static findings grouped
 * by cause and file as scan groups them, errors and warnings, one line each whatever a message
 * holds; a tested patch's verdict and changes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "report/check.h"
#include "pipeline/test.h"
#include "scan-fixture.h"

/* The lines of a one-hunk diff of drivers/x.c, each as b4 reads it, joined by "\n". */
static char *lines_of_diff(const char *body, bool only_silent)
{
	g_autofree char *diff = mkdiff(body);
	g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
	g_autoptr(pk_scan_result) s = pk_scan(p);
	g_autoptr(GPtrArray) lines = pk_check_lines_new();
	g_autoptr(GString) out = g_string_new(NULL);

	pk_check_group(lines, s->findings, only_silent);
	for (guint i = 0; i < lines->len; i++) {
		g_autofree char *l = pk_check_line_format(lines->pdata[i]);

		g_string_append_printf(out, "%s%s", i ? "\n" : "", l);
	}
	return g_strdup(out->str);
}

struct group_case {
	const char *name;
	const char *body;
	const char *lines;
};

static const struct group_case group_cases[] = {
	{ "one finding: its own sentence, at its line",
	  " \tx = 1;\n"
	  "-\tdev_err(dev, \"probe failed\\n\");\n"
	  "+\tdev_err(dev, \"probe failed: %d\\n\", ret);\n",
	  "ERROR: drivers/x.c:11: text-changed: the text \"probe failed\" becomes \"probe failed: %d\"" },
	{ "three added messages of two levels: one line, the calls and texts named",
	  " \tx = 1;\n"
	  "+\tdev_err(dev, \"no clock\\n\");\n"
	  "+\tdev_info(dev, \"clock at %lu\\n\", rate);\n"
	  "+\tdev_err(dev, \"no reset\\n\");\n",
	  "ERROR: drivers/x.c: message-added: 3 messages are added: dev_err() and dev_info() of \"no clock\", "
	  "\"clock at %lu\" and \"no reset\" (lines 11, 12 and 13)" },
	{ "levels changed alike: from and to said once",
	  " \tx = 1;\n"
	  "-\tdev_warn(dev, \"a\\n\");\n"
	  "-\tdev_warn(dev, \"b\\n\");\n"
	  "+\tdev_info(dev, \"a\\n\");\n"
	  "+\tdev_info(dev, \"b\\n\");\n",
	  "ERROR: drivers/x.c: level-changed: 2 messages move from warn to info level (lines 11 and 12)" },
	{ "advice is a warning; a change is an error, each its own line",
	  " \tx = 1;\n"
	  "-\tprintk(KERN_INFO \"x: a\\n\");\n"
	  "-\tprintk(KERN_INFO \"x: b\\n\");\n"
	  "+\tpr_info(\"x: a\\n\");\n"
	  "+\tpr_info(\"x: b\\n\");\n"
	  "+\tprintk(KERN_ERR \"x: c\\n\");\n",
	  "drivers/x.c: call-converted: 2 calls: printk() becomes pr_info() with the same level: no console change unless a pr_fmt() applies (lines 11 and 12)\n"
	  "ERROR: drivers/x.c:13: message-added: printk() of \"x: c\" is added\n"
	  "drivers/x.c:13: prefer-pr-level: printk(KERN_ERR ...) where pr_err() would do" },
	{ "a kernel message with a newline and an escape stays one line",
	  " \tx = 1;\n"
	  "+\tpr_err(\"two\\nlines \\x1b[31m red\\n\");\n",
	  "ERROR: drivers/x.c:11: message-added: pr_err() of \"two\\nlines \\x1b[31m red\" is added" },
	{ "nothing to say: no line",
	  " \tx = 1;\n"
	  "-\ty = 2;\n"
	  "+\ty = 3;\n",
	  "" },
};

static void test_grouping(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(group_cases); i++) {
		g_autofree char *got = lines_of_diff(group_cases[i].body, false);

		if (strcmp(got, group_cases[i].lines))
			fail_msg("%s:\n got: %s\nwant: %s", group_cases[i].name, got, group_cases[i].lines);
	}
}

/* With only_silent, the advice alone (a tested patch's changes are said by its build and boot). */
static void test_only_advice(void **state)
{
	g_autofree char *got = lines_of_diff(group_cases[3].body, true);

	assert_string_equal(got, "drivers/x.c: call-converted: 2 calls: printk() becomes pr_info() with the same level: no console change unless a pr_fmt() applies (lines 11 and 12)\n"
				 "drivers/x.c:13: prefer-pr-level: printk(KERN_ERR ...) where pr_err() would do");
}

/* A line's controls and newlines become spaces: b4 reads a line a finding. */
static void test_one_line(void **state)
{
	g_autoptr(GPtrArray) lines = pk_check_lines_new();
	g_autofree char *l = NULL;

	pk_check_add(lines, true, "a\nb\r\x1b[31mc\t%s", "d\ne");
	l = pk_check_line_format(lines->pdata[0]);
	assert_null(strchr(l, '\n'));
	assert_null(strchr(l, '\x1b'));
	assert_true(g_str_has_prefix(l, "ERROR: a b"));
}

/* A tested patch: the verdict's line, then its changes; does-not-apply is one warning and no more. */
static void test_tested_patch(void **state)
{
	g_autofree char *diff = mkdiff(group_cases[3].body);
	g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
	struct pk_test_result res = { 0 };
	struct pk_kdiff d = { 0 };
	struct pk_index_change c = { PK_CHANGE_LEVEL_CHANGED, 4, 6, "%s: sync pending\n", "%s: sync pending\n",
				     { "drivers/base/core.c", 1853, "sync_state", NULL } };
	g_autoptr(GPtrArray) lines = pk_check_lines_new();
	g_autoptr(GPtrArray) lines2 = pk_check_lines_new();
	g_autofree char *l0 = NULL, *l1 = NULL, *l2 = NULL, *w = NULL;

	res.scan = pk_scan(p);
	d.changes = g_ptr_array_new();
	d.index_changes = g_ptr_array_new();
	g_ptr_array_add(d.index_changes, &c);
	res.diff = &d;
	res.verdict = PK_VERDICT_CONSOLE_CHANGED;
	pk_check_test_lines(lines, &res, "debian:6.12");
	assert_int_equal(lines->len, 4);
	l0 = pk_check_line_format(lines->pdata[0]);
	l1 = pk_check_line_format(lines->pdata[1]);
	l2 = pk_check_line_format(lines->pdata[2]);
	assert_string_equal(l0, "ERROR: console-changed on debian:6.12: 0 boot-log changes, 1 printk index change");
	assert_string_equal(l1, "ERROR: printk index: drivers/base/core.c:1853 sync_state(): level-changed from warn to "
				"info: \"%s: sync pending\\n\"");
	/* the static advice stays, the static changes do not (the build said them) */
	assert_string_equal(l2, "drivers/x.c: call-converted: 2 calls: printk() becomes pr_info() with the same level: no console change unless a pr_fmt() applies (lines 11 and 12)");

	res.diff = NULL;
	res.verdict = PK_VERDICT_DOES_NOT_APPLY;
	res.reason = g_strdup("drivers/x.c: hunk 1 does not apply\nmore detail");
	pk_check_test_lines(lines2, &res, "debian:6.12");
	assert_int_equal(lines2->len, 1);
	w = pk_check_line_format(lines2->pdata[0]);
	assert_string_equal(w, "does-not-apply on debian:6.12: drivers/x.c: hunk 1 does not apply");

	g_ptr_array_unref(d.changes);
	g_ptr_array_unref(d.index_changes);
	pk_scan_free(res.scan);
	g_free(res.reason);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grouping),
		cmocka_unit_test(test_only_advice),
		cmocka_unit_test(test_one_line),
		cmocka_unit_test(test_tested_patch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
