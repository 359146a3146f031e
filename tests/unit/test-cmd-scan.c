/* test-cmd-scan.c - `printkbot scan` as main runs it: exit status and output. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd/commands.h"
#include "base/patch.h"
#include "base/util.h"
#include "scan-fixture.h"

/* Write text to a temporary file; the caller unlinks and frees the path. */
static char *tmp_file(const char *text)
{
	g_autoptr(GError) err = NULL;
	char *path = NULL;
	int fd = g_file_open_tmp("test-scan-XXXXXX.patch", &path, &err);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pk_write_file(path, text, strlen(text), &err), 0);
	return path;
}

/* scan as main runs it (parse, set up, run). */
static int cmd_scan(int argc, char **argv) { return pk_command_main(pk_command_find("scan"), argc, argv); }

/* The exit codes scripts rely on: 0 clean, 1 findings, 2 bad input. */
static void test_cmd_scan_exit(void **state)
{
	g_autofree char *clean = mkdiff(" \tint ret;\n-\tret = 1;\n+\tret = 2;\n");
	g_autofree char *churn = mkdiff("-\tpr_warn(\"x\\n\");\n+\tpr_info(\"x\\n\");\n");
	g_autofree char *clean_path = tmp_file(clean), *churn_path = tmp_file(churn);
	g_autofree char *bad_path = tmp_file("--- a/a.c\n+++ b/a.c\n@@ -1,3 +1,3 @@\n-a\n");
	char *argv_clean[] = { "scan", clean_path, NULL };
	char *argv_churn[] = { "scan", "--json", clean_path, churn_path, NULL };
	char *argv_bad[] = { "scan", bad_path, NULL };
	char *argv_missing[] = { "scan", "/nonexistent/x.patch", NULL };
	char *argv_opt[] = { "scan", "--frobnicate", NULL };
	char *argv_notree[] = { "scan", "--tree", "tests/data", clean_path, NULL };
	char *argv_describe[] = { "scan", "--describe", "kernel/sched/topology.c", NULL };
	char *argv_tree[] = { "scan", "--tree", TREE, "--json", churn_path, NULL };

	assert_int_equal(cmd_scan(2, argv_clean), 0);
	assert_int_equal(cmd_scan(4, argv_churn), 1);
	assert_int_equal(cmd_scan(2, argv_bad), 2);
	assert_int_equal(cmd_scan(2, argv_missing), 2);
	assert_int_equal(cmd_scan(2, argv_opt), 2);
	assert_int_equal(cmd_scan(4, argv_notree), 2);
	assert_int_equal(cmd_scan(3, argv_describe), 2);
	assert_int_equal(cmd_scan(5, argv_tree), 1);
	unlink(clean_path);
	unlink(churn_path);
	unlink(bad_path);
}

/* An empty file and a note are no patch: bad input, never "no findings". */
static void test_cmd_scan_no_patch(void **state)
{
	g_autofree char *empty = tmp_file(""), *note = tmp_file("hello\nnot a patch\n");
	char *argv_empty[] = { "scan", empty, NULL };
	char *argv_note[] = { "scan", note, NULL };
	g_autoptr(GPtrArray) patches = NULL;
	unsigned skipped = 7;

	assert_int_equal(cmd_scan(2, argv_empty), 2);
	assert_int_equal(cmd_scan(2, argv_note), 2);
	assert_int_equal(pk_patch_read_mails(&patches, &skipped, "hello\n", 6, NULL), 0);
	assert_int_equal(patches->len, 0);
	assert_int_equal(skipped, 0);
	unlink(empty);
	unlink(note);
}

/* A mail of an mbox: headers, then a body. */
#define MAIL(id, body) "From x@y Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: " id \
	"\nMessage-Id: <" id "@x>\n\n" body "\n"
#define CLEAN_DIFF "diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1,1 +1,1 @@\n-a\n+b\n"
#define DAMAGED_DIFF "diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1,3 +1,3 @@\n-a\n"

/* Exit status over mboxes: mails without a diff, damaged patches among readable ones. */
static void test_cmd_scan_mbox_exit(void **state)
{
	static const struct { const char *name, *mbox; int rc; } cases[] = {
		{ "mails without a diff are no bad input",
		  MAIL("talk", "just talk") MAIL("ok", CLEAN_DIFF) MAIL("more", "more talk"), 0 },
		{ "only mails without a diff", MAIL("talk", "just talk") MAIL("more", "more talk"), 0 },
		{ "a damaged patch among readable ones is that patch's problem",
		  MAIL("ok", CLEAN_DIFF) MAIL("bad", DAMAGED_DIFF), 1 },
		{ "no patch could be read whole", MAIL("talk", "just talk") MAIL("bad", DAMAGED_DIFF), 2 },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *path = tmp_file(cases[i].mbox);
		char *argv[] = { "scan", "--json", path, NULL };

		print_message("case: %s\n", cases[i].name);
		assert_int_equal(cmd_scan(3, argv), cases[i].rc);
		unlink(path);
	}
}

/* The JSON of scan over text (stdout taken into a file), a new string. */
static char *scan_json(const char *text)
{
	g_autofree char *in = tmp_file(text), *out = tmp_file(""), *json = NULL;
	char *argv[] = { "scan", "--json", in, NULL };
	int saved = dup(STDOUT_FILENO), fd = open(out, O_WRONLY | O_TRUNC);

	assert_true(saved >= 0 && fd >= 0);
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	cmd_scan(3, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_true(g_file_get_contents(out, &json, NULL, NULL));
	unlink(in);
	unlink(out);
	return g_steal_pointer(&json);
}

/* scan's output for argv (stdout taken into a file) and its exit status, a new string. */
static char *scan_output(int argc, char **argv, int *rc)
{
	g_autofree char *out = tmp_file(""), *text = NULL;
	int saved = dup(STDOUT_FILENO), fd = open(out, O_WRONLY | O_TRUNC);

	assert_true(saved >= 0 && fd >= 0);
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	*rc = cmd_scan(argc, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_true(g_file_get_contents(out, &text, NULL, NULL));
	unlink(out);
	return g_steal_pointer(&text);
}

/* path compressed by program (xz or gzip) into a new file beside it; the caller unlinks and frees. */
static char *compressed(const char *path, const char *program, const char *suffix)
{
	g_autofree char *cmd = g_strdup_printf("%s -c %s > %s%s", program, path, path, suffix);

	assert_int_equal(system(cmd), 0);
	return g_strconcat(path, suffix, NULL);
}

/*
 * The exit status says what test's would (1: what the kernel prints
 * changes), --churn-only leaves out the mails that touch no printk call,
 * a damaged patch's header says how far it was read, and a list's archive
 * is read as xz or gzip left it; a cut archive is bad input.
 */
static void test_cmd_scan_verdicts_and_archives(void **state)
{
	g_autofree char *mbox = tmp_file(
		MAIL("clean", CLEAN_DIFF)
		MAIL("converted", "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,1 +1,1 @@\n"
			"-\tprintk(KERN_INFO \"x\\n\");\n+\tpr_info(\"x\\n\");\n"));
	g_autofree char *churn = mkdiff("-\tpr_warn(\"x\\n\");\n+\tpr_info(\"x\\n\");\n");
	g_autofree char *churn_path = tmp_file(churn);
	g_autofree char *xz = compressed(mbox, "xz", ".xz"), *gz = compressed(churn_path, "gzip", ".gz");
	g_autofree char *cut = g_strconcat(xz, ".cut", NULL), *cmd = g_strdup_printf("head -c 60 %s > %s", xz, cut);
	g_autofree char *damaged = tmp_file(DAMAGED_DIFF);
	char *argv_plain[] = { "scan", mbox, NULL };
	char *argv_only[] = { "scan", "--churn-only", xz, NULL };
	char *argv_gz[] = { "scan", gz, NULL };
	char *argv_cut[] = { "scan", cut, NULL };
	char *argv_damaged[] = { "scan", damaged, NULL };
	g_autofree char *plain = NULL, *only = NULL, *gzipped = NULL, *cut_out = NULL, *dmg = NULL;
	int rc;

	assert_int_equal(system(cmd), 0);
	plain = scan_output(2, argv_plain, &rc);
	assert_int_equal(rc, 0);   /* no-churn and no-visible-change: as test, 0 */
	assert_non_null(strstr(plain, "# clean: no-churn\n"));
	assert_non_null(strstr(plain, "# converted: no-visible-change\n"));
	only = scan_output(3, argv_only, &rc);
	assert_int_equal(rc, 0);
	assert_null(strstr(only, "# clean"));
	assert_non_null(strstr(only, "# converted: no-visible-change\n"));
	gzipped = scan_output(2, argv_gz, &rc);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(gzipped, ": console-changed\n"));
	cut_out = scan_output(2, argv_cut, &rc);
	assert_int_equal(rc, 2);
	dmg = scan_output(2, argv_damaged, &rc);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(dmg, "(read only in part: line "));
	for (const char *p = mbox; p; p = p == mbox ? xz : p == xz ? gz : p == gz ? cut : p == cut ? churn_path
						  : p == churn_path ? damaged : NULL)
		unlink(p);
}

/* Header values come without the blanks an encoded word leaves in them. */
static void test_cmd_scan_headers_trimmed(void **state)
{
	g_autofree char *json = scan_json(
		"From x@y Mon Sep 17 00:00:00 2001\nFrom: =?UTF-8?Q?=20A?= <a@b>\n"
		"Subject: =?UTF-8?Q?=20sched:_restore_sanity?=\nMessage-Id: <1@x>\n\n" CLEAN_DIFF);

	assert_non_null(strstr(json, "\"subject\":\"sched: restore sanity\""));
	assert_non_null(strstr(json, "\"author\":\"A <a@b>\""));
}

/*
 * A patch over [policy]'s default max_lines (20,000) is not scanned:
 * refused, the limit in the JSON's reason, exit 2 when it is the only
 * patch; --no-limits scans it (and finds its 20,001 calls).
 */
static void test_cmd_scan_limits(void **state)
{
	g_autoptr(GString) diff = g_string_new("--- /dev/null\n+++ b/drivers/x.c\n@@ -0,0 +1,20001 @@\n");
	g_autofree char *path = NULL, *json = NULL;
	char *argv[] = { "scan", NULL, NULL, NULL };

	for (int i = 0; i < 20001; i++)
		g_string_append_printf(diff, "+\tpr_info(\"x %d\\n\");\n", i);
	json = scan_json(diff->str);
	assert_non_null(strstr(json, "\"verdict\":\"refused\""));
	assert_non_null(strstr(json, "\"reason\":\"the diff has 20001 lines, more than the limit of 20000 "
				     "([policy] max_lines)\""));
	assert_non_null(strstr(json, "\"findings\":[]"));
	path = tmp_file(diff->str);
	argv[1] = path;
	assert_int_equal(cmd_scan(2, argv), 2);
	argv[1] = "--no-limits";
	argv[2] = path;
	assert_int_equal(cmd_scan(3, argv), 1);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmd_scan_exit),
		cmocka_unit_test(test_cmd_scan_no_patch),
		cmocka_unit_test(test_cmd_scan_mbox_exit),
		cmocka_unit_test(test_cmd_scan_headers_trimmed),
		cmocka_unit_test(test_cmd_scan_limits),
		cmocka_unit_test(test_cmd_scan_verdicts_and_archives),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
