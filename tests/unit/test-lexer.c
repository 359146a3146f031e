/* test-lexer.c - the printk family as the lexer knows it: checkpatch's $logFunctions. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/lexer.h"
#include "scan-fixture.h"

struct family_case {
	const char *line;       /* one added line */
	const char *name;       /* the call found, NULL for none */
	enum pk_call_family fam;
	const char *level;      /* "err"..., "cont" for a continuation, NULL for none */
	const char *text;       /* the format */
	gboolean dynamic, probe;
};

static const struct family_case family_cases[] = {
	{ "pr_err(\"a\\n\");", "pr_err", PK_FAM_PR, "err", "a\\n", FALSE, FALSE },
	{ "pr_warn_ratelimited(\"a\\n\");", "pr_warn_ratelimited", PK_FAM_PR, "warn", "a\\n", FALSE, FALSE },
	{ "pr_cont(\"a\");", "pr_cont", PK_FAM_PR, "cont", "a", FALSE, FALSE },
	{ "dev_vdbg(dev, \"a\\n\");", "dev_vdbg", PK_FAM_DEV, "debug", "a\\n", TRUE, FALSE },
	{ "dev_printk(KERN_NOTICE, dev, \"a\\n\");", "dev_printk", PK_FAM_DEV, "notice", "a\\n", FALSE, FALSE },
	{ "netdev_info_once(ndev, \"a\\n\");", "netdev_info_once", PK_FAM_NETDEV, "info", "a\\n", FALSE, FALSE },
	/* <subsys>_<level>(): the format is the first literal */
	{ "drm_err(drm, \"a\\n\");", "drm_err", PK_FAM_SUBSYS, "err", "a\\n", FALSE, FALSE },
	{ "drm_dbg(drm, \"a\\n\");", "drm_dbg", PK_FAM_SUBSYS, "debug", "a\\n", TRUE, FALSE },
	{ "pci_info(pdev, \"a %d\\n\", n);", "pci_info", PK_FAM_SUBSYS, "info", "a %d\\n", FALSE, FALSE },
	{ "netif_warn(p, tx_err, dev, \"a\\n\");", "netif_warn", PK_FAM_SUBSYS, "warn", "a\\n", FALSE, FALSE },
	{ "wiphy_err(wiphy, \"a\\n\");", "wiphy_err", PK_FAM_SUBSYS, "err", "a\\n", FALSE, FALSE },
	{ "ath10k_warn(ar, \"a\\n\");", "ath10k_warn", PK_FAM_SUBSYS, "warn", "a\\n", FALSE, FALSE },
	{ "btrfs_err(fs_info, \"a\\n\");", "btrfs_err", PK_FAM_SUBSYS, "err", "a\\n", FALSE, FALSE },
	{ "bt_dev_warning(hdev, \"a\\n\");", "bt_dev_warning", PK_FAM_SUBSYS, "warn", "a\\n", FALSE, FALSE },
	{ "hid_emerg_ratelimited(hdev, \"a\\n\");", "hid_emerg_ratelimited", PK_FAM_SUBSYS, "emerg", "a\\n",
	  FALSE, FALSE },
	{ "xfs_alert(mp, \"a\\n\");", "xfs_alert", PK_FAM_SUBSYS, "alert", "a\\n", FALSE, FALSE },
	{ "ubi_crit(ubi, \"a\\n\");", "ubi_crit", PK_FAM_SUBSYS, "crit", "a\\n", FALSE, FALSE },
	{ "snd_printk(KERN_ERR \"a\\n\");", "snd_printk", PK_FAM_SUBSYS, "err", "a\\n", FALSE, FALSE },
	{ "drm_WARN(drm, bad, \"a\\n\");", "drm_WARN", PK_FAM_WARN, NULL, "a\\n", FALSE, FALSE },
	/* the fixed names */
	{ "_printk(KERN_INFO \"a\\n\");", "_printk", PK_FAM_PRINTK, "info", "a\\n", FALSE, FALSE },
	{ "printk_deferred_once(\"a\\n\");", "printk_deferred_once", PK_FAM_PRINTK, NULL, "a\\n", FALSE, FALSE },
	{ "panic(\"a\\n\");", "panic", PK_FAM_PANIC, "emerg", "a\\n", FALSE, FALSE },
	{ "return dev_err_probe(dev, ret, \"a\\n\");", "dev_err_probe", PK_FAM_DEV, "err", "a\\n", FALSE, TRUE },
	{ "return dev_warn_probe(dev, ret, \"a\\n\");", "dev_warn_probe", PK_FAM_DEV, "warn", "a\\n", FALSE, TRUE },
	/* not the family */
	{ "ret = get_info(dev, &info);", NULL },
	{ "seq_printf(m, \"a\\n\");", NULL },
	{ "MODULE_PARM_DESC(x, \"a\");", NULL },
	{ "pr_dbg(\"a\\n\");", NULL },
	{ "dev_debug(dev, \"a\\n\");", NULL },
	{ "a_b_c_err(x, \"a\\n\");", NULL },
	{ "drm_dbg_kms(drm, \"a\\n\");", NULL },
};

/* Each name of the family found with its family, level and format. */
static void test_family(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(family_cases); i++) {
		const struct family_case *c = &family_cases[i];
		g_autofree char *body = g_strdup_printf("+\t%s\n", c->line);
		g_autofree char *diff = mkdiff(body);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		const struct pk_diff_file *f = p->files->pdata[0];
		g_autoptr(GPtrArray) calls = pk_lexer_calls(f->hunks->pdata[0], '+');
		const struct pk_call *call;

		print_message("case: %s\n", c->line);
		if (!c->name) {
			assert_int_equal(calls->len, 0);
			continue;
		}
		assert_int_equal(calls->len, 1);
		call = calls->pdata[0];
		assert_string_equal(call->name, c->name);
		assert_int_equal(call->fam, c->fam);
		assert_str_or_null(call->cont ? "cont" : call->level, c->level);
		assert_string_equal(call->text->str, c->text);
		assert_int_equal(call->dynamic, c->dynamic);
		assert_int_equal(call->probe, c->probe);
	}
}

/*
 * The arguments after the format, as written (the scanner folds those the
 * compiler knows into the text, fold.h), and the call before each.
 */
static void test_args(void **state)
{
	static const struct { const char *line, *args; } cases[] = {
		{ "pr_info(\"%s: %d\\n\", __func__, f(a, b));", "__func__|f(a, b)" },
		{ "dev_printk(KERN_INFO, dev, \"%s\", \"x\");", "\"x\"" },
		{ "jsm_dbg(MSIGS, &ch->dev, \"a %s\", name);", "name" },
		{ "WARN(cond, \"a %s\\n\", KBUILD_MODNAME);", "KBUILD_MODNAME" },
		{ "pr_err(\"none\\n\");", "" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *body = g_strdup_printf("+\t%s\n+\tpr_cont(\"after\");\n", cases[i].line);
		g_autofree char *diff = mkdiff(body);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		const struct pk_diff_file *f = p->files->pdata[0];
		g_autoptr(GPtrArray) calls = pk_lexer_calls(f->hunks->pdata[0], '+');
		const struct pk_call *c, *next;
		g_autoptr(GString) joined = g_string_new(NULL);

		print_message("case: %s\n", cases[i].line);
		assert_int_equal(calls->len, 2);
		c = calls->pdata[0];
		next = calls->pdata[1];
		for (guint k = 0; k < c->args->len; k++)
			g_string_append_printf(joined, "%s%s", k ? "|" : "", (const char *)c->args->pdata[k]);
		assert_string_equal(joined->str, cases[i].args);
		assert_null(c->prev);
		assert_ptr_equal(next->prev, c);
		assert_string_equal(c->func, "x_probe");
		assert_true(c->func_from_header);
	}
}

/* What the scanner makes of the family's calls. */
static const struct scan_case family_scan_cases[] = {
	{ "drm_err added",
	  "+\tdrm_err(drm, \"x: no vblank\\n\");\n",
	  "message-added", "console-changed" },
	{ "a split string in drm_err()",
	  "+\tdrm_err(&priv->drm, \"x: could not \"\n"
	  "+\t\t\"enable the crtc\\n\");\n",
	  "message-added,string-split", "console-changed" },
	{ "pci_info to pci_warn",
	  "-\tpci_info(pdev, \"x: link is slow\\n\");\n"
	  "+\tpci_warn(pdev, \"x: link is slow\\n\");\n",
	  "level-changed", "console-changed" },
	{ "netif_warn: the format is the first literal argument",
	  "-\tnetif_warn(priv, tx_err, dev, \"x: tx hang\\n\");\n"
	  "+\tnetif_warn(priv, tx_err, dev, \"x: tx hung\\n\");\n",
	  "text-changed", "console-changed" },
	{ "wiphy_err to dev_err: another prefix",
	  "-\twiphy_err(wiphy, \"x: no channel\\n\");\n"
	  "+\tdev_err(dev, \"x: no channel\\n\");\n",
	  "prefix-changed", "console-changed" },
	{ "ath10k_warn to pr_warn loses the driver's prefix",
	  "-\tath10k_warn(ar, \"x: failed %d\\n\", ret);\n"
	  "+\tpr_warn(\"x: failed %d\\n\", ret);\n",
	  "device-prefix-lost", "console-changed" },
	{ "btrfs_err_rl, a two-word bt_dev_err, btrfs_debug",
	  "+\tbtrfs_err(fs_info, \"x: bad tree %llu\\n\", nr);\n"
	  "+\tbt_dev_err(hdev, \"x: reset failed\\n\");\n"
	  "+\tbtrfs_debug(fs_info, \"x: tree %llu\\n\", nr);\n",
	  "message-added,message-added,message-added", "console-changed" },
	{ "a wrapper without a literal is no logging call",
	  "-\tret = get_info(dev, &info);\n"
	  "+\tret = get_info(dev, &info, 0);\n",
	  "", "no-churn" },
	{ "snd_printk's level is its KERN_ token",
	  "-\tsnd_printk(KERN_ERR \"x: no codec\\n\");\n"
	  "+\tsnd_printk(KERN_WARNING \"x: no codec\\n\");\n",
	  "level-changed", "console-changed" },
	{ "_printk is printk",
	  "-\t_printk(KERN_INFO \"x: up\\n\");\n"
	  "+\t_printk(\"x: up\\n\");\n",
	  "level-missing", "console-changed" },
	{ "dev_err to dev_err_probe: silent on -EPROBE_DEFER",
	  "-\t\tdev_err(dev, \"x: no clock\\n\");\n"
	  "+\t\treturn dev_err_probe(dev, ret, \"x: no clock\\n\");\n",
	  "debug-compiled-out", "console-changed" },
	{ "dev_warn_probe at warn level",
	  "-\t\tdev_err_probe(dev, ret, \"x: no clock\\n\");\n"
	  "+\t\tdev_warn_probe(dev, ret, \"x: no clock\\n\");\n",
	  "level-changed", "console-changed" },
	{ "pr_err to panic",
	  "-\tpr_emerg(\"x: no memory\\n\");\n"
	  "+\tpanic(\"x: no memory\\n\");\n",
	  "warn-converted", "console-changed" },
	{ "drm_WARN to drm_err",
	  "-\tdrm_WARN(drm, bad, \"x: bad plane\\n\");\n"
	  "+\tdrm_err(drm, \"x: bad plane\\n\");\n",
	  "device-prefix-added,level-changed,warn-converted", "console-changed" },
};

static void test_family_scan(void **state)
{
	run_scan_cases(family_scan_cases, G_N_ELEMENTS(family_scan_cases));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_family_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
