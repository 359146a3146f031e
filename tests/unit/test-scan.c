/* test-scan.c - the diff and mail parsers and the static churn scanner. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "patch.h"
#include "commands.h"
#include "scan.h"
#include "util.h"

#define CORPUS "../shared/corpus/patches/"

/*
 * A one-hunk diff of drivers/x.c from hunk body lines (each starting with
 * ' ', '-' or '+'); the hunk header counts are computed so cases stay short.
 */
static char *mkdiff(const char *body)
{
	int old = 0, new = 0;
	g_auto(GStrv) lines = g_strsplit(body, "\n", -1);

	for (int i = 0; lines[i] && *lines[i]; i++) {
		old += lines[i][0] != '+';
		new += lines[i][0] != '-';
	}
	return g_strdup_printf("diff --git a/drivers/x.c b/drivers/x.c\n"
			       "--- a/drivers/x.c\n+++ b/drivers/x.c\n"
			       "@@ -10,%d +10,%d @@ static int probe(void)\n%s", old, new, body);
}

static int kind_cmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The finding kinds of a scan, sorted and comma-joined: "" for none. */
static char *kinds(const struct pk_scan *s)
{
	g_autoptr(GPtrArray) k = g_ptr_array_new();

	for (guint i = 0; i < s->findings->len; i++)
		g_ptr_array_add(k, (gpointer)((struct pk_finding *)s->findings->pdata[i])->kind);
	g_ptr_array_sort(k, kind_cmp);
	g_ptr_array_add(k, NULL);
	return g_strjoinv(",", (char **)k->pdata);
}

struct scan_case {
	const char *name;
	const char *body;
	const char *kinds;      /* sorted, comma-joined */
	const char *verdict;
};

static const struct scan_case scan_cases[] = {
	{ "KERN_DEBUG to pr_debug",
	  "-\tprintk(KERN_DEBUG \"x: probing %d\\n\", id);\n"
	  "+\tpr_debug(\"x: probing %d\\n\", id);\n",
	  "debug-compiled-out", "console-changed" },
	{ "pr_cont to printk without KERN_CONT",
	  " \tpr_info(\"ports:\");\n"
	  "-\tpr_cont(\" %d\", port);\n"
	  "+\tprintk(\" %d\", port);\n",
	  "cont-broken", "console-changed" },
	{ "pr_info to pr_cont",
	  "-\tpr_info(\"done\\n\");\n"
	  "+\tpr_cont(\"done\\n\");\n",
	  "cont-added", "console-changed" },
	{ "newline lost while split across two literals",
	  "-\tpr_err(\"could not map the register region\\n\");\n"
	  "+\tpr_err(\"could not map the \"\n"
	  "+\t       \"register region\");\n",
	  "newline-lost,string-split", "console-changed" },
	{ "newline added",
	  "-\tpr_warn(\"link down\");\n"
	  "+\tpr_warn(\"link down\\n\");\n",
	  "newline-added", "console-changed" },
	{ "pr_fmt parameter rename only",
	  "-#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  "+#define pr_fmt(f) KBUILD_MODNAME \": \" f\n",
	  "", "no-churn" },
	{ "pr_fmt changed",
	  "-#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  "+#define pr_fmt(fmt) \"xdrv: \" fmt\n"
	  " \tpr_info(\"hello\\n\");\n",
	  "pr_fmt-changed", "console-changed" },
	{ "pr_fmt added",
	  "+#define pr_fmt(fmt) \"xdrv: \" fmt\n"
	  " #include <linux/module.h>\n",
	  "pr_fmt-added", "console-changed" },
	{ "pr_fmt removed",
	  "-#define pr_fmt(fmt) \"xdrv: \" fmt\n"
	  " #include <linux/module.h>\n",
	  "pr_fmt-removed", "console-changed" },
	{ "dev_err to pr_err",
	  "-\t\tdev_err(&pdev->dev, \"no irq\\n\");\n"
	  "+\t\tpr_err(\"no irq\\n\");\n",
	  "device-prefix-lost", "console-changed" },
	{ "pr_info to dev_info",
	  "-\tpr_info(\"reset done\\n\");\n"
	  "+\tdev_info(dev, \"reset done\\n\");\n",
	  "device-prefix-added", "console-changed" },
	{ "printk KERN_ERR to pr_err over two lines",
	  "-\tprintk(KERN_ERR \"bad state %d on %s\\n\",\n"
	  "+\tpr_err(\"bad state %d on %s\\n\",\n"
	  " \t\tstate, name);\n",
	  "call-converted", "no-visible-change" },
	{ "level changed",
	  "-\tnetdev_warn(ndev, \"tx timeout\\n\");\n"
	  "+\tnetdev_info(ndev, \"tx timeout\\n\");\n",
	  "level-changed", "console-changed" },
	{ "printk loses its level",
	  "-\tprintk(KERN_INFO \"x: ready\\n\");\n"
	  "+\tprintk(\"x: ready\\n\");\n",
	  "level-missing", "console-changed" },
	{ "added printk without level",
	  " \tint ret;\n"
	  "+\tprintk(\"x: entering probe\\n\");\n",
	  "level-missing,message-added", "console-changed" },
	{ "text changed",
	  "-\tpr_err(\"failed to allocate rx buffer\\n\");\n"
	  "+\tpr_err(\"failed to allocate rx buffers\\n\");\n",
	  "text-changed", "console-changed" },
	{ "message removed",
	  " \tspin_lock(&lock);\n"
	  "-\tpr_debug(\"%s: start\\n\", __func__);\n",
	  "message-removed", "console-changed" },
	{ "unrelated messages are not paired",
	  "-\tpr_err(\"timeout waiting for firmware\\n\");\n"
	  "+\tpr_info(\"%d ports\\n\", n);\n",
	  "message-added,message-removed", "console-changed" },
	{ "arguments only",
	  "-\tpr_info(\"speed %d\\n\", speed);\n"
	  "+\tpr_info(\"speed %d\\n\", new_speed);\n",
	  "", "no-visible-change" },
	{ "no printk at all",
	  " \tint ret;\n"
	  "-\tret = probe_one(dev);\n"
	  "+\tret = probe_one(dev, 0);\n",
	  "", "no-churn" },
	{ "printk in a comment is not a call",
	  "-\t/* printk(KERN_ERR \"old\\n\"); */\n"
	  "+\t/* see below */\n",
	  "", "no-churn" },
};

static void test_scan_cases(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(scan_cases); i++) {
		const struct scan_case *c = &scan_cases[i];
		g_autofree char *diff = mkdiff(c->body);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		g_autoptr(pk_scan_result) s = pk_scan(p);
		g_autofree char *got = kinds(s);

		print_message("case: %s\n", c->name);
		assert_null(p->error);
		assert_string_equal(got, c->kinds);
		assert_string_equal(s->verdict, c->verdict);
	}
}

/* The fields of one finding: levels, texts, calls as written, line. */
static void test_finding_fields(void **state)
{
	const char *body = " \tif (!irq) {\n"
			   "-\t\tdev_warn(&pdev->dev, \"irq %d busy\\n\",\n"
			   "-\t\t\t irq);\n"
			   "+\t\tdev_err(&pdev->dev, \"irq %d busy\\n\", irq);\n";
	g_autofree char *diff = mkdiff(body);
	g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
	g_autoptr(pk_scan_result) s = pk_scan(p);
	const struct pk_finding *f;

	assert_int_equal(s->findings->len, 1);
	f = s->findings->pdata[0];
	assert_string_equal(f->kind, "level-changed");
	assert_string_equal(f->file, "drivers/x.c");
	assert_int_equal(f->line, 11);
	assert_string_equal(f->old_level, "warn");
	assert_string_equal(f->new_level, "err");
	assert_string_equal(f->old_call, "dev_warn(&pdev->dev, \"irq %d busy\\n\", irq)");
	assert_string_equal(f->new_call, "dev_err(&pdev->dev, \"irq %d busy\\n\", irq)");
	assert_string_equal(f->new_text, "irq %d busy\\n");
	assert_non_null(strstr(f->message, "warn to err"));
}

static void test_diff_lines(void **state)
{
	const char *diff = "commit message\n\n--- a/a.c\n+++ b/a.c\n"
			   "@@ -3,3 +3,4 @@\n a\n-b\n+c\n+d\n\n"
			   "--- /dev/null\n+++ b/new.c\n@@ -0,0 +1 @@\n+x\n";
	g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
	const struct pk_diff_file *f;
	const struct pk_hunk *h;
	const struct pk_diff_line *l;

	assert_null(p->error);
	assert_int_equal(p->files->len, 2);
	f = p->files->pdata[0];
	assert_string_equal(f->old_path, "a.c");
	h = f->hunks->pdata[0];
	assert_int_equal(h->lines->len, 5);   /* the empty line is context */
	l = h->lines->pdata[2];
	assert_int_equal(l->kind, '+');
	assert_int_equal(l->new_no, 4);
	assert_int_equal(l->old_no, 0);
	l = h->lines->pdata[4];
	assert_int_equal(l->old_no, 5);
	assert_int_equal(l->new_no, 6);
	f = p->files->pdata[1];
	assert_null(f->old_path);
	assert_string_equal(pk_diff_file_path(f), "new.c");
}

struct bad_case {
	const char *diff;
	const char *error;      /* expected start of patch->error */
	guint hunks;            /* hunks kept in the first file */
};

static const struct bad_case bad_cases[] = {
	{ "--- a/a.c\n+++ b/a.c\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n@@ -x,1 +y @@\n c\n",
	  "line 7: bad hunk header", 1 },
	{ "--- a/a.c\n+++ b/a.c\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n@@ -9,3 +9,3 @@\n c\n",
	  "line 8: input ends inside a hunk", 2 },
	{ "--- a/a.c\n+++ b/a.c\n@@ -1,4 +1,4 @@\n-a\n+b\ndiff --git a/b.c b/b.c\n",
	  "line 6: hunk ends before its header says", 1 },
};

static void test_diff_malformed(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		g_autoptr(pk_patch) p = pk_patch_parse_diff(c->diff, strlen(c->diff));
		const struct pk_diff_file *f;

		assert_non_null(p->error);
		print_message("error: %s\n", p->error);
		assert_true(g_str_has_prefix(p->error, c->error));
		f = p->files->pdata[0];
		assert_int_equal(f->hunks->len, c->hunks);
	}
}

/* An mbox: a patch in quoted-printable, a reply without a diff, a base64 attachment. */
static void test_mbox(void **state)
{
	const char *mbox =
		"From a@x Mon Jan  1 00:00:00 2024\n"
		"From: A <a@x>\nSubject: [PATCH] x: lower level\nMessage-Id: <1@x>\n"
		"MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n"
		"Content-Transfer-Encoding: quoted-printable\n\n"
		"---\n--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n"
		"-\tpr_warn(\"a long message that goes past the mail line limit of =\n"
		"seventy six\\n\");\n+\tpr_info(\"a long message that goes past the mail =\n"
		"line limit of seventy six\\n\");\n\n"
		"From b@x Mon Jan  1 00:00:00 2024\n"
		"From: B <b@x>\nSubject: Re: [PATCH] x: lower level\nMessage-Id: <2@x>\n\n"
		"Looks good.\n\n"
		"From c@x Mon Jan  1 00:00:00 2024\n"
		"From: C <c@x>\nSubject: [PATCH] y\nMessage-Id: <3@x>\nMIME-Version: 1.0\n"
		"Content-Type: multipart/mixed; boundary=\"BB\"\n\n"
		"--BB\nContent-Type: text/plain\n\nsee attachment\n"
		"--BB\nContent-Type: text/x-patch; name=\"y.patch\"\n"
		"Content-Transfer-Encoding: base64\n"
		"Content-Disposition: attachment; filename=\"y.patch\"\n\n";
	g_autofree char *att = g_base64_encode((const guchar *)
		"--- a/y.c\n+++ b/y.c\n@@ -1 +1 @@\n-\tpr_err(\"y\\n\");\n+\tpr_err(\"y\");\n", 67);
	g_autofree char *all = g_strconcat(mbox, att, "\n--BB--\n", NULL);
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	unsigned skipped = 9;
	const struct pk_patch *p;

	assert_int_equal(pk_patch_read_mails(&patches, &skipped, all, strlen(all), &err), 0);
	assert_int_equal(patches->len, 2);
	assert_int_equal(skipped, 1);
	p = patches->pdata[0];
	assert_string_equal(p->subject, "[PATCH] x: lower level");
	assert_string_equal(p->author, "A <a@x>");
	assert_non_null(strstr(p->message_id, "1@x"));
	{
		g_autoptr(pk_scan_result) s = pk_scan(p);
		g_autofree char *got = kinds(s);
		assert_string_equal(got, "level-changed");
	}
	p = patches->pdata[1];
	{
		g_autoptr(pk_scan_result) s = pk_scan(p);
		g_autofree char *got = kinds(s);
		assert_string_equal(got, "newline-lost");
	}
}

struct corpus_case {
	const char *file;
	const char *kinds;
	const char *verdict;
};

static const struct corpus_case corpus_cases[] = {
	{ "sched-core-printk-KERN-to-pr_level.patch",
	  "call-converted,call-converted,call-converted,call-converted,"
	  "level-changed,level-changed", "console-changed" },
	{ "module-signing-pr_notice-to-pr_err.patch", "level-changed", "console-changed" },
	{ "usb-not-authorized-dev_err-to-dev_info.patch",
	  "level-changed,level-changed,level-changed", "console-changed" },
	{ "serial-8250-remove-isr-pr_debug.patch",
	  "message-removed,message-removed", "console-changed" },
	{ "initrd-remove-pr_cont-spinner.patch", "message-removed", "console-changed" },
	{ "driver-core-fw_devlink-dev_warn-to-dev_info.patch", "level-changed",
	  "console-changed" },
	{ "ata-ahci-printk-to-dev_info.patch",
	  "device-prefix-added,device-prefix-added,text-changed,text-changed",
	  "console-changed" },
	{ "clocksource-sync-durations-pr_info.patch", "level-changed", "console-changed" },
	{ "x86-fpu-xstate-print-features-loop.patch", "", "no-visible-change" },
};

static void test_corpus(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(corpus_cases); i++) {
		const struct corpus_case *c = &corpus_cases[i];
		g_autofree char *path = g_strconcat(CORPUS, c->file, NULL);
		g_autofree char *buf = NULL;
		g_autoptr(GPtrArray) patches = NULL;
		g_autoptr(GError) err = NULL;
		size_t len;
		unsigned skipped;

		print_message("corpus: %s\n", c->file);
		assert_int_equal(pk_read_file(&buf, &len, path, 0, &err), 0);
		assert_int_equal(pk_patch_read_mails(&patches, &skipped, buf, len, &err), 0);
		assert_int_equal(patches->len, 1);
		assert_int_equal(skipped, 0);
		assert_null(((struct pk_patch *)patches->pdata[0])->error);
		assert_non_null(((struct pk_patch *)patches->pdata[0])->subject);
		g_autoptr(pk_scan_result) s = pk_scan(patches->pdata[0]);
		g_autofree char *got = kinds(s);
		assert_string_equal(got, c->kinds);
		assert_string_equal(s->verdict, c->verdict);
	}
}

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

	assert_int_equal(cmd_scan(2, argv_clean), 0);
	assert_int_equal(cmd_scan(4, argv_churn), 1);
	assert_int_equal(cmd_scan(2, argv_bad), 2);
	assert_int_equal(cmd_scan(2, argv_missing), 2);
	assert_int_equal(cmd_scan(2, argv_opt), 2);
	unlink(clean_path);
	unlink(churn_path);
	unlink(bad_path);
}

static void test_free_null(void **state)
{
	pk_patch_free(NULL);
	pk_scan_free(NULL);
	g_autoptr(pk_scan_result) s = pk_scan(NULL);
	assert_string_equal(s->verdict, "no-churn");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_cases),
		cmocka_unit_test(test_finding_fields),
		cmocka_unit_test(test_diff_lines),
		cmocka_unit_test(test_diff_malformed),
		cmocka_unit_test(test_mbox),
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_cmd_scan_exit),
		cmocka_unit_test(test_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
