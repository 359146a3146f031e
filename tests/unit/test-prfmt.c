/*
 * test-prfmt.c - a patch read as a whole: the pr_fmt() it removes, adds or
 * shows meets the calls it rewrites, each judged as it prints.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/tree.h"
#include "scan-fixture.h"

/*
 * Patch-wide prefixes without a tree: the pr_fmt() the patch removes, adds
 * or shows meets the calls it rewrites, and each is judged as printed.
 */
struct prefix_case {
	const char *name;
	const char *file;
	const char *hunks;
	const char *kinds, *verdict;
	const char *kind;       /* every finding of this kind has these prefixes */
	unsigned n_kind;
	const char *old_prefix, *new_prefix;
};

static const struct prefix_case prefix_cases[] = {
	{ "pr_fmt() removed and pr_err() made printk(KERN_ERR): the prefix vanishes from each",
	  "kernel/sched.c",
	  "@@ -1,4 +1,2 @@\n"
	  "-#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  "-\n"
	  " #include <linux/mm.h>\n"
	  " #include <linux/module.h>\n"
	  "@@ -100,6 +98,6 @@ static int sched_domain_debug_one(struct sched_domain *sd, int cpu)\n"
	  " \tif (!cpumask_test_cpu(cpu, sched_domain_span(sd))) {\n"
	  "-\t\tpr_err(\"ERROR: domain->span does not contain CPU%d\\n\", cpu);\n"
	  "+\t\tprintk(KERN_ERR \"ERROR: domain->span does not contain CPU%d\\n\", cpu);\n"
	  " \t}\n"
	  " \tif (!cpumask_test_cpu(cpu, sched_group_cpus(group))) {\n"
	  "-\t\tpr_err(\"ERROR: domain->groups does not contain CPU%d\\n\", cpu);\n"
	  "+\t\tprintk(KERN_ERR \"ERROR: domain->groups does not contain CPU%d\\n\", cpu);\n"
	  " \t}\n",
	  "pr_fmt-removed,prefer-pr-level,prefer-pr-level,prefix-changed,prefix-changed",
	  "console-changed", "prefix-changed", 2, "sched: ", "" },
	{ "the same: the pr_fmt-removed finding has both prefixes too",
	  "kernel/sched.c",
	  "@@ -1,3 +1,2 @@\n"
	  "-#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  " #include <linux/mm.h>\n"
	  " \tpr_info(\"hello\\n\");\n",
	  "pr_fmt-removed", "console-changed", "pr_fmt-removed", 1, "sched: ", "" },
	{ "a hand-written prefix moved into a new pr_fmt(): the calls print the same",
	  "security/keys/encrypted-keys/encrypted.c",
	  "@@ -1,2 +1,3 @@\n"
	  "+#define pr_fmt(fmt) \"encrypted_key: \" fmt\n"
	  " // SPDX-License-Identifier: GPL-2.0-only\n"
	  " #include <linux/module.h>\n"
	  "@@ -6,5 +7,5 @@ static int valid_master_desc(const char *desc)\n"
	  " \tif (!desc) {\n"
	  "-\t\tpr_err(\"encrypted_key: key description missing\\n\");\n"
	  "+\t\tpr_err(\"key description missing\\n\");\n"
	  " \t\treturn -EINVAL;\n"
	  " \t}\n"
	  "-\tprintk(KERN_ERR \"encrypted_key: key description must be 32 characters\\n\");\n"
	  "+\tpr_err(\"key description must be 32 characters\\n\");\n",
	  /* without a tree the file's other calls are unknown: pr_fmt-added stays visible */
	  "call-converted,call-converted,pr_fmt-added", "console-changed", "call-converted", 2, "",
	  "encrypted_key: " },
	{ "moved into pr_fmt() and the text changed too: text-changed on the printed text",
	  "drivers/x.c",
	  "@@ -1,2 +1,3 @@\n"
	  "+#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  " #include <linux/module.h>\n"
	  " \n"
	  "@@ -6,1 +7,1 @@ static int x_probe(void)\n"
	  "-\tpr_err(\"x: no memory\\n\");\n"
	  "+\tpr_err(\"out of memory\\n\");\n",
	  "pr_fmt-added,text-changed", "console-changed", "text-changed", 1, "", "x: " },
	{ "a pr_fmt() change meets a rewritten call: prefix-changed on the call",
	  "drivers/x.c",
	  "@@ -1,2 +1,2 @@\n"
	  "-#define pr_fmt(fmt) \"xdrv: \" fmt\n"
	  "+#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  " #include <linux/module.h>\n"
	  "@@ -6,1 +6,1 @@ static int x_probe(void)\n"
	  "-\tpr_warn(\"no memory\\n\");\n"
	  "+\tpr_err(\"no memory\\n\");\n",
	  "level-changed,pr_fmt-changed,prefix-changed", "console-changed", "prefix-changed", 1,
	  "xdrv: ", "x: " },
	{ "a pr_fmt() the hunk shows as context: printk() to pr_err() gains it",
	  "drivers/tty/x.c",
	  "@@ -1,4 +1,4 @@\n"
	  " #define DRV_NAME \"xtty\"\n"
	  " #define pr_fmt(fmt) DRV_NAME \": \" fmt\n"
	  "-\tprintk(KERN_ERR \"no port\\n\");\n"
	  "+\tpr_err(\"no port\\n\");\n",
	  "prefix-changed", "console-changed", "prefix-changed", 1, "", "xtty: " },
	{ "a pr_fmt() of __func__: a call's prefix is its function's name",
	  "drivers/x.c",
	  "@@ -1,2 +1,3 @@\n"
	  "+#define pr_fmt(fmt) \"%s: \" fmt, __func__\n"
	  " #include <linux/module.h>\n"
	  " \n"
	  "@@ -20,3 +21,3 @@ static int x_probe(struct device *dev)\n"
	  " {\n"
	  "-\tprintk(KERN_ERR \"x_probe: no memory\\n\");\n"
	  "+\tpr_err(\"no memory\\n\");\n"
	  " \treturn -ENOMEM;\n",
	  "call-converted,pr_fmt-added", "console-changed", "call-converted", 1, "", "x_probe: " },
	{ "no pr_fmt() in sight: unknown, as before",
	  "drivers/x.c",
	  "@@ -6,1 +6,1 @@ static int x_probe(void)\n"
	  "-\tprintk(KERN_ERR \"no port\\n\");\n"
	  "+\tpr_err(\"no port\\n\");\n",
	  "call-converted", "no-visible-change", "call-converted", 1, NULL, NULL },
};

static void test_prefix_cases(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(prefix_cases); i++) {
		const struct prefix_case *c = &prefix_cases[i];
		g_autofree char *diff = g_strdup_printf("diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n%s",
							c->file, c->file, c->file, c->file, c->hunks);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		g_autoptr(pk_scan_result) s = pk_scan(p);
		g_autofree char *got = kinds(s);
		unsigned n = 0;

		print_message("case: %s\n", c->name);
		assert_null(p->error);
		assert_string_equal(got, c->kinds);
		assert_string_equal(pk_verdict_name(s->verdict), c->verdict);
		for (guint j = 0; j < s->findings->len; j++) {
			const struct pk_finding *f = s->findings->pdata[j];
			if (strcmp(pk_finding_kind_name(f->kind), c->kind))
				continue;
			print_message("  %s\n", f->message);
			assert_str_or_null(f->old_prefix, c->old_prefix);
			assert_str_or_null(f->new_prefix, c->new_prefix);
			n++;
		}
		assert_int_equal(n, c->n_kind);
	}
}

/*
 * Without a tree, KBUILD_MODNAME is the object's name: unknown for a header.
 * The prefix's own conversions are folded with the arguments after fmt
 * (fold.h), but for __func__, known per call only: those stay, with their
 * arguments.
 */
static void test_guess_prefix(void **state)
{
	static const struct { const char *path, *text, *body, *prefix, *args; } cases[] = {
		{ "kernel/foo.c", NULL, "KBUILD_MODNAME \": \" fmt", "foo: ", NULL },
		{ "drivers/net/foo-bar,x.c", NULL, "KBUILD_MODNAME \": \" fmt", "foo_bar_x: ", NULL },
		{ "kernel/foo.h", NULL, "KBUILD_MODNAME \": \" fmt", NULL, NULL },
		{ "kernel/foo.c", "#define DRV \"bar\"\n", "DRV \": \" fmt", "bar: ", NULL },
		{ "kernel/foo.c", NULL, "DRV \": \" fmt", NULL, NULL },
		{ "kernel/foo.c", NULL, "\"%s: \" fmt, __func__", "%s: ", "__func__" },
		{ "kernel/foo.c", NULL, "\"%s: \" fmt, KBUILD_MODNAME", "foo: ", NULL },
		{ "kernel/foo.c", NULL, "KBUILD_MODNAME \":%s:%s: \" fmt, \"x\", __func__", "foo:x:%s: ",
		  "__func__" },
		{ "kernel/foo.c", NULL, "\"%s: \" fmt \"\\n\"", "%s: ", NULL },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(GStrv) args = NULL;
		g_autofree char *got = pk_tree_guess_prefix(cases[i].path, cases[i].text, cases[i].body, &args);
		g_autofree char *joined = args ? g_strjoinv("|", args) : NULL;

		print_message("case: %s %s\n", cases[i].path, cases[i].body);
		assert_str_or_null(got, cases[i].prefix);
		assert_str_or_null(joined, cases[i].args);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_cases),
		cmocka_unit_test(test_guess_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
