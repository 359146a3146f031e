/*
 * test-scan.c - the diff and mail parsers and the static churn scanner (the
 * family: test-lexer.c; prefixes: test-prfmt.c; the command: test-cmd-scan.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/patch.h"
#include "analysis/scan.h"
#include "analysis/tree.h"
#include "base/proc.h"
#include "base/util.h"
#include "scan-fixture.h"

#define CORPUS "../shared/corpus/patches/"
#define MBOX "../shared/corpus/linux-serial-1500.mbox.xz"

static const struct scan_case scan_cases[] = {
	{ "KERN_DEBUG to pr_debug",
	  "-\tprintk(KERN_DEBUG \"x: probing %d\\n\", id);\n"
	  "+\tpr_debug(\"x: probing %d\\n\", id);\n",
	  "debug-compiled-out", "console-changed" },
	{ "pr_cont to printk without KERN_CONT",
	  " \tpr_info(\"ports:\");\n"
	  "-\tpr_cont(\" %d\", port);\n"
	  "+\tprintk(\" %d\", port);\n",
	  "cont-broken,level-missing", "console-changed" },
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
	  /* a debug message: not printed unless DEBUG or dynamic debug, so the console is the same */
	  "message-removed", "no-visible-change" },
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
	/* the WARN family: a format at the default level, and a backtrace */
	{ "WARN to pr_err",
	  "-\tWARN(ret, \"x: reset failed %d\\n\", ret);\n"
	  "+\tpr_err(\"x: reset failed %d\\n\", ret);\n",
	  "level-changed,warn-converted", "console-changed" },
	{ "WARN_ONCE text changed",
	  "-\tWARN_ONCE(1, \"x: queue %d stalled\\n\", q);\n"
	  "+\tWARN_ONCE(1, \"x: queue %d is stalled\\n\", q);\n",
	  "text-changed", "console-changed" },
	{ "WARN_TAINT's format is its third argument",
	  "+\tWARN_TAINT(bad, TAINT_FIRMWARE_WORKAROUND, \"x: firmware bug\\n\");\n",
	  "message-added", "console-changed" },
	{ "WARN_ON has no format",
	  "+\tWARN_ON(!dev);\n",
	  "", "no-churn" },
	{ "pr_warn to WARN_RATELIMIT",
	  "-\tpr_warn(\"x: lost %d events\\n\", n);\n"
	  "+\tWARN_RATELIMIT(1, \"x: lost %d events\\n\", n);\n",
	  "level-changed,warn-converted", "console-changed" },
	/* what checkpatch.pl warns about on added lines */
	{ "added pr_cont",
	  " \tpr_info(\"ports:\");\n"
	  "+\tpr_cont(\" %d\", port);\n",
	  "logging-continuation,message-added", "console-changed" },
	{ "added printk KERN_CONT",
	  "+\tprintk(KERN_CONT \" %d\", port);\n",
	  "logging-continuation,message-added,prefer-pr-level", "console-changed" },
	{ "pr_info to pr_cont is cont-added only",
	  "-\tpr_info(\"x: done\\n\");\n"
	  "+\tpr_cont(\"x: done\\n\");\n",
	  "cont-added", "console-changed" },
	{ "printk with a level, text changed",
	  "-\tprintk(KERN_ERR \"x: bad cable\\n\");\n"
	  "+\tprintk(KERN_ERR \"x: bad cable detected\\n\");\n",
	  "prefer-pr-level,text-changed", "console-changed" },
	{ "printk without a level before and after: nothing visible",
	  "-\tprintk(\"x: ready %d\\n\", a);\n"
	  "+\tprintk(\"x: ready %d\\n\", b);\n",
	  "level-missing", "no-visible-change" },
	{ "the hunk's function spelt in the format",
	  "+\tpr_err(\"x_probe: no memory\\n\");\n",
	  "embedded-function-name,message-added", "console-changed" },
	{ "the function's name alone is an argument, not the format",
	  "+\tpr_err(\"%s: no memory\\n\", \"x_probe\");\n",
	  "message-added", "console-changed" },
	{ "a longer identifier is not the function's name",
	  "+\tpr_err(\"x_probe_one failed\\n\");\n",
	  "message-added", "console-changed" },
	{ "a function the hunk defines",
	  " }\n"
	  "+\n"
	  "+static void x_reset(struct x *x)\n"
	  "+{\n"
	  "+\tpr_info(\"x_reset: done\\n\");\n"
	  "+}\n",
	  "embedded-function-name,message-added", "console-changed" },
	{ "after a closing brace the hunk's function is over",
	  " }\n"
	  "+DEFINE_X(\"x_probe: table\");\n",
	  "", "no-churn" },
	{ "a blank before the newline",
	  "+\tdev_info(dev, \"x: link up \\n\");\n",
	  "message-added,whitespace-before-newline", "console-changed" },
	{ "a split after a \\n is not un-greppable",
	  "+\tpr_info(\"x: line one\\n\"\n"
	  "+\t\t\"x: line two\\n\");\n",
	  "message-added", "console-changed" },
	{ "a string split over three lines: two split points",
	  "+\tpr_info(\"x: a message that \"\n"
	  "+\t\t\"goes on and \"\n"
	  "+\t\t\"on\\n\");\n",
	  "message-added,string-split,string-split", "console-changed" },
	{ "an already split string whose second half changes",
	  " \tpr_err(\"x: could not map the \"\n"
	  "-\t       \"register region\\n\");\n"
	  "+\t       \"register regions\\n\");\n",
	  "string-split,text-changed", "console-changed" },
	{ "an already split string whose arguments change: still split, nothing visible",
	  "-\tpr_err(\"x: could not map the \"\n"
	  "-\t       \"register region %d\\n\", a);\n"
	  "+\tpr_err(\"x: could not map the \"\n"
	  "+\t       \"register region %d\\n\", b);\n",
	  "string-split", "no-visible-change" },
};

static void test_scan_cases(void **state)
{
	run_scan_cases(scan_cases, G_N_ELEMENTS(scan_cases));
}

/*
 * What scan says about a diff of one file: its kinds and verdict, and the
 * message of the first finding of kind, which holds says; no message of
 * the scan holds not_said.
 */
struct said_case {
	const char *name;
	const char *file;
	const char *hunks;
	const char *kinds, *verdict;
	const char *kind;
	const char *says;
	const char *not_said;   /* NULL: not checked */
};

static void run_said_cases(const struct said_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct said_case *c = &cases[i];
		g_autofree char *diff = g_strdup_printf("diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n%s",
							c->file, c->file, c->file, c->file, c->hunks);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		g_autoptr(pk_scan_result) s = pk_scan(p);
		g_autofree char *got = kinds(s);
		const struct pk_finding *f = NULL;

		print_message("case: %s\n", c->name);
		assert_null(p->error);
		for (guint j = 0; j < s->findings->len; j++) {
			const struct pk_finding *g = s->findings->pdata[j];
			print_message("  %s: %s\n", pk_finding_kind_name(g->kind), g->message);
			if (!f && !strcmp(pk_finding_kind_name(g->kind), c->kind))
				f = g;
			if (c->not_said)
				assert_null(strstr(g->message, c->not_said));
		}
		assert_string_equal(got, c->kinds);
		assert_string_equal(pk_verdict_name(s->verdict), c->verdict);
		assert_non_null(f);
		assert_non_null(strstr(f->message, c->says));
	}
}

/*
 * Format arguments the compiler knows (__func__, string literals for "%s")
 * are folded into the text before texts are compared (fold.h).
 */
static const struct said_case fold_cases[] = {
	{ "__func__ for the function's name: the same text (serial: jsm: fix style issues, 2023)",
	  "drivers/tty/serial/jsm/jsm_neo.c",
	  "@@ -560,8 +560,8 @@ static void neo_parse_modem(struct jsm_channel *ch, u8 signals)\n"
	  " \tu8 msignals = signals;\n"
	  " \n"
	  " \tjsm_dbg(MSIGS, &ch->ch_bd->pci_dev,\n"
	  "-\t\t\"neo_parse_modem: port: %d msignals: %x\\n\",\n"
	  "-\t\tch->ch_portnum, msignals);\n"
	  "+\t\"%s: port: %d msignals: %x\\n\",\n"
	  "+\t__func__, ch->ch_portnum, msignals);\n"
	  " \n"
	  " \t/* Scrub off lower bits. They signify delta's, which I don't care about */\n"
	  " \t/* Keep DDCD and DDSR though */\n"
	  "@@ -592,7 +592,7 @@ static void neo_parse_modem(struct jsm_channel *ch, u8 signals)\n"
	  " \t\tch->ch_mistat &= ~UART_MSR_CTS;\n"
	  " \n"
	  " \tjsm_dbg(MSIGS, &ch->ch_bd->pci_dev,\n"
	  "-\t\t\"Port: %d DTR: %d RTS: %d CTS: %d DSR: %d \" \"RI: %d CD: %d\\n\",\n"
	  "+\t\t\"Port: %d DTR: %d RTS: %d CTS: %d DSR: %d RI: %d CD: %d\\n\",\n"
	  " \t\tch->ch_portnum,\n"
	  " \t\t!!((ch->ch_mistat | ch->ch_mostat) & UART_MCR_DTR),\n"
	  " \t\t!!((ch->ch_mistat | ch->ch_mostat) & UART_MCR_RTS),\n",
	  "call-converted", "no-visible-change", "call-converted",
	  "prints the same text \"neo_parse_modem: port: %d msignals: %x\" as before", NULL },
	{ "the same conversion in another function: the folded texts differ",
	  "drivers/tty/serial/jsm/jsm_neo.c",
	  "@@ -1060,4 +1060,4 @@ static void neo_param(struct jsm_channel *ch)\n"
	  " \tjsm_dbg(MSIGS, &ch->ch_bd->pci_dev,\n"
	  "-\t\t\"neo_parse_modem: port: %d msignals: %x\\n\",\n"
	  "-\t\tch->ch_portnum, msignals);\n"
	  "+\t\t\"%s: port: %d msignals: %x\\n\",\n"
	  "+\t\t__func__, ch->ch_portnum, msignals);\n",
	  /* jsm_dbg() is dev_dbg(): the text changes, but is printed only with dynamic debug */
	  "text-changed", "no-visible-change", "text-changed",
	  "the text \"neo_parse_modem: port: %d msignals: %x\" becomes "
	  "\"neo_param: port: %d msignals: %x\"", NULL },
	{ "__FUNCTION__ and a string literal for %s",
	  "drivers/x.c",
	  "@@ -20,3 +20,3 @@ static int x_probe(struct device *dev)\n"
	  " {\n"
	  "-\tpr_err(\"x_probe: no memory\\n\");\n"
	  "+\tpr_err(\"%s: %s\\n\", __FUNCTION__, \"no memory\");\n"
	  " \treturn -ENOMEM;\n",
	  "call-converted", "no-visible-change", "call-converted",
	  "pr_err() prints the same text \"x_probe: no memory\" as before", NULL },
	{ "a renamed function: __func__ on an unchanged line prints the new name",
	  "drivers/x.c",
	  "@@ -10,4 +10,4 @@\n"
	  "-static void x_probe(struct device *dev)\n"
	  "+static void x_probe_one(struct device *dev)\n"
	  " {\n"
	  " \tdev_err(dev, \"%s: no memory\\n\", __func__);\n"
	  " }\n",
	  "text-changed", "console-changed", "text-changed",
	  "the text \"x_probe: no memory\" becomes \"x_probe_one: no memory\"", NULL },
	{ "renamed in an earlier hunk: git's later hunk header names the old function",
	  "drivers/x.c",
	  "@@ -10,3 +10,3 @@\n"
	  "-static int x_probe(struct device *dev)\n"
	  "+static int x_attach(struct device *dev)\n"
	  " {\n"
	  " \tint ret;\n"
	  "@@ -40,3 +40,3 @@ static int x_probe(struct device *dev)\n"
	  " \tret = x_reset(dev);\n"
	  "-\tdev_err(dev, \"x_probe: reset failed\\n\");\n"
	  "+\tdev_err(dev, \"%s: reset failed\\n\", __func__);\n"
	  " \treturn ret;\n",
	  "text-changed", "console-changed", "text-changed",
	  "the text \"x_probe: reset failed\" becomes \"x_attach: reset failed\"", NULL },
	{ "a pr_fmt() of __func__: a call converted in the function it names prints the same",
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
	  "call-converted,pr_fmt-added", "console-changed", "call-converted",
	  "prints \"x_probe: no memory\" as before: no console change", NULL },
	{ "the same in another function: the printed texts differ",
	  "drivers/x.c",
	  "@@ -1,2 +1,3 @@\n"
	  "+#define pr_fmt(fmt) \"%s: \" fmt, __func__\n"
	  " #include <linux/module.h>\n"
	  " \n"
	  "@@ -20,3 +21,3 @@ static int x_remove(struct device *dev)\n"
	  " {\n"
	  "-\tprintk(KERN_ERR \"x_probe: no memory\\n\");\n"
	  "+\tpr_err(\"no memory\\n\");\n"
	  " \treturn -ENOMEM;\n",
	  "call-converted,pr_fmt-added,text-changed", "console-changed", "text-changed",
	  "the printed text \"x_probe: no memory\" becomes \"x_remove: no memory\"", NULL },
};

static void test_fold_cases(void **state)
{
	run_said_cases(fold_cases, G_N_ELEMENTS(fold_cases));
}

/*
 * level-missing: an added printk() without a KERN_ level (nor KERN_CONT)
 * starts a line of its own at the default level; after a line left open,
 * it does not continue it (only KERN_CONT does, since Linux 4.9).
 */
static const struct said_case level_cases[] = {
	{ "the sched revert: pr_cont() made a bare printk() after an open line",
	  "kernel/sched.c",
	  "@@ -6646,8 +6646,8 @@ static int sched_domain_debug_one(struct sched_domain *sd, int cpu, int level,\n"
	  " \tcpumask_clear(groupmask);\n"
	  " \n"
	  " \tprintk(KERN_DEBUG \"%*s domain %d: \", level, \"\", level);\n"
	  " \n"
	  " \tif (!(sd->flags & SD_LOAD_BALANCE)) {\n"
	  "-\t\tpr_cont(\"does not load-balance\\n\");\n"
	  "+\t\tprintk(\"does not load-balance\\n\");\n"
	  " \t\tif (sd->parent)\n",
	  "cont-broken,level-missing", "console-changed", "level-missing",
	  "\"does not load-balance\" is printed without a KERN_ level, at the default level: without "
	  "KERN_CONT it does not continue the line \"%*s domain %d: \" left open before it", NULL },
	{ "pr_cont(\"\\n\") made printk(\"\\n\"): an empty line",
	  "kernel/sched.c",
	  "@@ -6690,4 +6690,4 @@ static int sched_domain_debug_one(struct sched_domain *sd, int cpu, int level,\n"
	  " \tdo {\n"
	  " \t\tif (!group) {\n"
	  "-\t\t\tpr_cont(\"\\n\");\n"
	  "+\t\t\tprintk(\"\\n\");\n",
	  "cont-broken,level-missing", "console-changed", "level-missing",
	  "printk() of \"\\n\" has no KERN_ level: it prints an empty line at the default level", NULL },
	{ "printk(\"\\n\") after a line left open in the hunk does not end it",
	  "kernel/sched.c",
	  "@@ -6680,4 +6680,5 @@ static int sched_domain_debug_one(struct sched_domain *sd, int cpu, int level,\n"
	  " \tprintk(KERN_DEBUG \"%*s groups:\", level + 1, \"\");\n"
	  " \tdo {\n"
	  " \t\tif (!group) {\n"
	  "+\t\t\tprintk(\"\\n\");\n"
	  " \t\t\tprintk(KERN_ERR \"ERROR: group is NULL\\n\");\n",
	  "level-missing,message-added", "console-changed", "level-missing",
	  "does not end the line \"%*s groups:\" left open before it, but prints an empty line", NULL },
	{ "an open line in another function is not continued either way, and not named",
	  "drivers/x.c",
	  "@@ -10,6 +10,7 @@\n"
	  " \tpr_info(\"ports:\");\n"
	  " }\n"
	  " \n"
	  " static void x_next(void)\n"
	  " {\n"
	  "+\tprintk(\"x: next\\n\");\n"
	  " }\n",
	  "level-missing,message-added", "console-changed", "level-missing",
	  "\"x: next\" is printed without a KERN_ level, at the default level", "left open" },
	{ "WARN() made a bare printk(): the default level as before, said on the added line",
	  "drivers/x.c",
	  "@@ -10,1 +10,1 @@ static int x_probe(struct device *dev)\n"
	  "-\tWARN(1, \"x: bad state\\n\");\n"
	  "+\tprintk(\"x: bad state\\n\");\n",
	  "level-missing,warn-converted", "console-changed", "level-missing",
	  "\"x: bad state\" is still printed without a KERN_ level", NULL },
};

static void test_level_cases(void **state)
{
	run_said_cases(level_cases, G_N_ELEMENTS(level_cases));
}

/*
 * Every sentence true after the patch: a prefix is named only when the
 * post-image file has it, pr_cont() and KERN_CONT get no prefix claim,
 * and pr_fmt() is the one of the side the sentence speaks of.
 */
static const struct said_case sentence_cases[] = {
	{ "printk(KERN_CONT ...): pr_cont() takes no pr_fmt() prefix",
	  "drivers/x.c",
	  "@@ -10,1 +10,2 @@ static int x_probe(struct device *dev)\n"
	  " \tpr_info(\"ports:\");\n"
	  "+\tprintk(KERN_CONT \" %d\", port);\n",
	  "logging-continuation,message-added,prefer-pr-level", "console-changed", "prefer-pr-level",
	  "printk(KERN_CONT ...) where pr_cont() would do", "prefix" },
	{ "printk(KERN_ERR ...) where no pr_fmt() is in sight: no prefix claimed",
	  "drivers/x.c",
	  "@@ -10,1 +10,2 @@ static int x_probe(struct device *dev)\n"
	  " \tint ret;\n"
	  "+\tprintk(KERN_ERR \"x: no memory\\n\");\n",
	  "message-added,prefer-pr-level", "console-changed", "prefer-pr-level",
	  "printk(KERN_ERR ...) where pr_err() would do", "prefix" },
	{ "printk_once(KERN_WARNING ...): pr_warn_once() would do, with the file's prefix named",
	  "drivers/tty/x.c",
	  "@@ -1,2 +1,3 @@\n"
	  " #define pr_fmt(fmt) \"xtty: \" fmt\n"
	  " \n"
	  "+\tprintk_once(KERN_WARNING \"no port\\n\");\n",
	  "message-added,prefer-pr-level", "console-changed", "prefer-pr-level",
	  "printk_once(KERN_WARNING ...) where pr_warn_once() would do, though that would print the "
	  "file's pr_fmt() prefix \"xtty: \" before the text", NULL },
	{ "the sched revert: pr_fmt() removed, so no sentence gives the file a prefix",
	  "kernel/sched.c",
	  "@@ -1,4 +1,2 @@\n"
	  "-#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  "-\n"
	  " #include <linux/mm.h>\n"
	  " #include <linux/module.h>\n"
	  "@@ -100,4 +98,4 @@ static int sched_domain_debug_one(struct sched_domain *sd, int cpu)\n"
	  " \tif (!cpumask_test_cpu(cpu, sched_domain_span(sd))) {\n"
	  "-\t\tpr_err(\"ERROR: domain->span does not contain CPU%d\\n\", cpu);\n"
	  "+\t\tprintk(KERN_ERR \"ERROR: domain->span does not contain CPU%d\\n\", cpu);\n"
	  " \t}\n",
	  "pr_fmt-removed,prefer-pr-level,prefix-changed", "console-changed", "prefer-pr-level",
	  "printk(KERN_ERR ...) where pr_err() would do, printing the same text (no pr_fmt() prefix "
	  "applies in this file)", "the file's pr_fmt() prefix" },
	{ "the same: the prefix lost is the one pr_fmt() gave before the patch",
	  "kernel/sched.c",
	  "@@ -1,4 +1,2 @@\n"
	  "-#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  "-\n"
	  " #include <linux/mm.h>\n"
	  " #include <linux/module.h>\n"
	  "@@ -100,4 +98,4 @@ static int sched_domain_debug_one(struct sched_domain *sd, int cpu)\n"
	  " \tif (!cpumask_test_cpu(cpu, sched_domain_span(sd))) {\n"
	  "-\t\tpr_err(\"ERROR: domain->span does not contain CPU%d\\n\", cpu);\n"
	  "+\t\tprintk(KERN_ERR \"ERROR: domain->span does not contain CPU%d\\n\", cpu);\n"
	  " \t}\n",
	  "pr_fmt-removed,prefer-pr-level,prefix-changed", "console-changed", "prefix-changed",
	  "pr_err() becomes printk(), and the message loses the prefix \"sched: \" pr_fmt() gave it",
	  "of pr_fmt()" },
	{ "printk(KERN_INFO to pr_info() gains the prefix of the file's pr_fmt()",
	  "drivers/tty/x.c",
	  "@@ -1,4 +1,4 @@\n"
	  " #define pr_fmt(fmt) \"xtty: \" fmt\n"
	  " \n"
	  "-\tprintk(KERN_INFO \"port up\\n\");\n"
	  "+\tpr_info(\"port up\\n\");\n",
	  "prefix-changed", "console-changed", "prefix-changed",
	  "the message gains the prefix \"xtty: \" of the file's pr_fmt()", NULL },
};

static void test_sentence_cases(void **state)
{
	run_said_cases(sentence_cases, G_N_ELEMENTS(sentence_cases));
}

/* Count the findings of kind k in s. */
static unsigned count_kind(const struct pk_scan *s, enum pk_finding_kind k)
{
	unsigned n = 0;

	for (guint i = 0; i < s->findings->len; i++)
		n += ((struct pk_finding *)s->findings->pdata[i])->kind == k;
	return n;
}

/*
 * Pairing is bounded (hostile mail): 600 + 600 distinct 400-character
 * messages are compared until the scan's budget is spent, then the rest
 * are added and removed with one pairing-capped finding, in well under a
 * second; 5,000 conversions of one same text all pair through the hash.
 */
static void test_pairing_bounded(void **state)
{
	g_autoptr(GString) body = g_string_new(NULL);
	double t0 = pk_now();

	for (int sign = 0; sign < 2; sign++)
		for (int i = 0; i < 600; i++) {
			g_string_append_printf(body, "%c\tpr_info(\"", sign ? '+' : '-');
			for (int k = 0; k < 400; k++)
				g_string_append_c(body, 'a' + (char)g_random_int_range(0, 26));
			g_string_append(body, "\\n\");\n");
		}
	{
		g_autofree char *diff = mkdiff(body->str);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		g_autoptr(pk_scan_result) s = pk_scan(p);

		assert_int_equal(count_kind(s, PK_FINDING_PAIRING_CAPPED), 1);
		assert_int_equal(count_kind(s, PK_FINDING_MESSAGE_ADDED), 600);
		assert_int_equal(count_kind(s, PK_FINDING_MESSAGE_REMOVED), 600);
	}
	print_message("600 + 600 distinct 400-character messages: %.2f s\n", pk_now() - t0);
	g_string_truncate(body, 0);
	for (int sign = 0; sign < 2; sign++)
		for (int i = 0; i < 5000; i++)
			g_string_append(body, sign ? "+\tpr_info(\"same\\n\");\n" : "-\tprintk(KERN_INFO \"same\\n\");\n");
	{
		g_autofree char *diff = mkdiff(body->str);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		g_autoptr(pk_scan_result) s = pk_scan(p);

		assert_int_equal(count_kind(s, PK_FINDING_CALL_CONVERTED), 5000);
		assert_int_equal(count_kind(s, PK_FINDING_PAIRING_CAPPED), 0);
		assert_int_equal(count_kind(s, PK_FINDING_MESSAGE_ADDED), 0);
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
	assert_string_equal(pk_finding_kind_name(f->kind), "level-changed");
	assert_string_equal(f->file, "drivers/x.c");
	assert_int_equal(f->line, 11);
	assert_string_equal(f->old_level, "warn");
	assert_string_equal(f->new_level, "err");
	assert_string_equal(f->old_call, "dev_warn(&pdev->dev, \"irq %d busy\\n\", irq)");
	assert_string_equal(f->new_call, "dev_err(&pdev->dev, \"irq %d busy\\n\", irq)");
	assert_string_equal(f->new_text, "irq %d busy\\n");
	assert_non_null(strstr(f->message, "warn to err"));
}

struct line_case {
	const char *name;
	const char *body;
	const char *kind;
	int line;               /* where checkpatch.pl would put its warning */
};

/* Hunks start at line 10: a split is found on the line that continues it. */
static const struct line_case line_cases[] = {
	{ "string-split on the continuation line",
	  " \tint ret;\n"
	  "+\tpr_info(\"x: a message that \"\n"
	  "+\t\t\"goes on\\n\");\n",
	  "string-split", 12 },
	{ "embedded-function-name on the literal's line",
	  "+\tdev_err(dev,\n"
	  "+\t\t\"x_probe failed\\n\");\n",
	  "embedded-function-name", 11 },
	{ "whitespace-before-newline on the literal's line",
	  "+\tpr_info(\"x: %d\",\n"
	  "+\t\tn); pr_cont(\"done \\n\");\n",
	  "whitespace-before-newline", 11 },
	{ "level-missing on the printk line",
	  " \tint ret;\n"
	  " \n"
	  "+\tprintk(\"x\\n\");\n",
	  "level-missing", 12 },
};

static void test_finding_lines(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(line_cases); i++) {
		const struct line_case *c = &line_cases[i];
		g_autofree char *diff = mkdiff(c->body);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		g_autoptr(pk_scan_result) s = pk_scan(p);
		int line = 0;

		print_message("case: %s\n", c->name);
		for (guint j = 0; j < s->findings->len; j++) {
			const struct pk_finding *f = s->findings->pdata[j];
			if (!strcmp(pk_finding_kind_name(f->kind), c->kind))
				line = f->line;
		}
		assert_int_equal(line, c->line);
	}
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
	  "message-removed,message-removed", "no-visible-change" },
	{ "initrd-remove-pr_cont-spinner.patch", "message-removed", "console-changed" },
	{ "driver-core-fw_devlink-dev_warn-to-dev_info.patch", "level-changed",
	  "console-changed" },
	{ "ata-ahci-printk-to-dev_info.patch",
	  "device-prefix-added,device-prefix-added,text-changed,text-changed",
	  "console-changed" },
	{ "clocksource-sync-durations-pr_info.patch", "level-changed", "console-changed" },
	{ "x86-fpu-xstate-print-features-loop.patch", "", "no-visible-change" },
	{ "sched-debug-need_resched-WARN-to-pr_err.patch", "level-changed,warn-converted",
	  "console-changed" },
	{ "NOAPPLY-x86-fpu-log-xsave-disablement.patch",
	  "message-added,text-changed,text-changed,text-changed", "console-changed" },
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
		assert_string_equal(pk_verdict_name(s->verdict), c->verdict);
	}
}

/* The whole linux-serial mbox, decompressed with xz(1). */
static char *read_mbox(size_t *len)
{
	const char *argv[] = { "xz", "-dc", MBOX, NULL };
	g_autoptr(GError) err = NULL;
	char *out = NULL;
	int status = 0;
	gsize n;

	assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
				 &out, NULL, &status, &err));
	assert_true(g_spawn_check_wait_status(status, NULL));
	n = strlen(out);
	*len = n;
	return out;
}

struct mbox_spot {
	const char *message_id;
	const char *kinds;      /* sorted, comma-joined */
	const char *verdict;
};

static const struct mbox_spot mbox_spots[] = {
	{ "<20251210063543.2185727-1-Wenhua.Lin@unisoc.com>", "debug-compiled-out,debug-compiled-out,"
	  "debug-compiled-out,level-changed,level-changed,level-changed",
	  "console-changed" },
	/* pr_debug() text: printed only when dynamic debug enables it */
	{ "<20260306015022.1940986-4-jim.cromie@gmail.com>", "text-changed", "no-visible-change" },
	/* dev_err() -> dev_err_probe(): "error %pe: " comes, and -EPROBE_DEFER is silent */
	{ "<20251216193726.55449-4-gerhard@engleder-embedded.com>", "debug-compiled-out",
	  "console-changed" },
	{ "<20260129075200.38060-1-enelsonmoore@gmail.com>", NULL, "console-changed" },
	{ "<20260309142836.95514-1-dev-Felipe.Jensen@duagon.com>", "", "no-churn" },
};

/*
 * The 1,500 mails of linux-serial: how many carry a diff, how many of those
 * touch printk-family lines, a few by Message-ID, and the mboxrd-quoted
 * "From " line of a patch quoted in a reply.
 */
static void test_mbox_corpus(void **state)
{
	size_t len = 0;
	g_autofree char *buf = read_mbox(&len);
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	unsigned skipped = 0, churn = 0, spotted = 0;
	gboolean quoted_from = FALSE;

	assert_int_equal(pk_patch_read_mails(&patches, &skipped, buf, len, &err), 0);
	assert_int_equal(patches->len + skipped, 1500);
	assert_int_equal(patches->len, 545);
	for (guint i = 0; i < patches->len; i++) {
		const struct pk_patch *p = patches->pdata[i];
		g_autoptr(pk_scan_result) s = pk_scan(p);

		assert_true(!p->description || g_utf8_validate(p->description, -1, NULL));
		churn += s->verdict != PK_VERDICT_NO_CHURN;
		if (p->message_id && !strcmp(p->message_id, "<aXDYEVlkFgxdSVSG@pathway.suse.cz>")) {
			assert_non_null(strstr(p->description, "\nFrom 0fc61b6877e9beb20429effc599bc4bc6ec3a475 Mon Sep"));
			assert_null(strstr(p->description, ">From 0fc61b"));
			quoted_from = TRUE;
		}
		for (size_t j = 0; p->message_id && j < G_N_ELEMENTS(mbox_spots); j++) {
			const struct mbox_spot *m = &mbox_spots[j];
			if (strcmp(p->message_id, m->message_id))
				continue;
			g_autofree char *got = kinds(s);
			print_message("spot: %s: %s\n", m->message_id, got);
			if (m->kinds)
				assert_string_equal(got, m->kinds);
			else
				assert_non_null(strstr(got, "message-removed"));
			assert_string_equal(pk_verdict_name(s->verdict), m->verdict);
			spotted++;
		}
	}
	print_message("%u patches, %u with printk churn, %u mails skipped\n", patches->len, churn, skipped);
	assert_int_equal(churn, 44);   /* 41 before panic() and dev_vdbg() were seen */
	assert_int_equal(spotted, G_N_ELEMENTS(mbox_spots));
	assert_true(quoted_from);
}

struct describe_case {
	const char *path;
	const char *unit, *modname, *pr_fmt_file, *prefix;
};

/* The miniature tree of tests/data/scan/tree, one rule of tree.h per row. */
static const struct describe_case describe_cases[] = {
	/* built inside the file that #includes it */
	{ "kernel/sched/topology.c", "kernel/sched/build_utility.c", "build_utility", NULL, "" },
	{ "kernel/sched/core.c", "kernel/sched/core.c", "core", NULL, "" },
	/* included by several units: none */
	{ "kernel/sched/sched.h", NULL, NULL, NULL, "" },
	/* the includer's pr_fmt(), defined before its #include */
	{ "kernel/rcu/tree_plugin.h", "kernel/rcu/tree.c", "tree", "kernel/rcu/tree.c", "rcu: " },
	/* composite objects, a continuation line, a string macro */
	{ "drivers/tty/serial/8250/8250_core.c", "drivers/tty/serial/8250/8250_core.c", "8250",
	  "drivers/tty/serial/8250/8250_core.c", "serial8250: " },
	{ "drivers/tty/serial/8250/8250_pnp.c", "drivers/tty/serial/8250/8250_pnp.c", "8250",
	  "drivers/tty/serial/8250/8250_pnp.c", "8250: " },
	{ "drivers/tty/serial/8250/8250_exar.c", "drivers/tty/serial/8250/8250_exar.c", "8250_exar",
	  NULL, "" },
	/* Kbuild before Makefile, -objs, '-' made '_', pr_fmt() from a local header */
	{ "drivers/foo/foo-main.c", "drivers/foo/foo-main.c", "foo", "drivers/foo/foo.h", "foo: " },
	{ "drivers/foo/foo-hw.c", "drivers/foo/foo-hw.c", "foo", NULL, "" },
	/* a list obj-y reuses is not a composite */
	{ "mm/memory.c", "mm/memory.c", "memory", NULL, "" },
	/* a macro the tree does not define */
	{ "mm/page_alloc.c", "mm/page_alloc.c", "page_alloc", "mm/page_alloc.c", NULL },
	/* $(BITS), and a conversion in the prefix kept as written */
	{ "arch/x86/kernel/head64.c", "arch/x86/kernel/head64.c", "head64",
	  "arch/x86/kernel/head64.c", "%s: " },
	/* named by the parent's makefile as cpu/bugs.o */
	{ "arch/x86/kernel/cpu/bugs.c", "arch/x86/kernel/cpu/bugs.c", "bugs",
	  "arch/x86/kernel/cpu/bugs.c", "bugs: " },
	{ "drivers/none/x.c", NULL, NULL, NULL, "" },
	/* folded to kernel/sched/topology.c */
	{ "./kernel/rcu/../sched/topology.c", "kernel/sched/build_utility.c", "build_utility", NULL, "" },
	/* outside the tree: nothing is known */
	{ "../outside.c", NULL, NULL, NULL, NULL },
	{ "/elsewhere/kernel/sched/topology.c", NULL, NULL, NULL, NULL },
};

static void test_tree_describe(void **state)
{
	g_autoptr(pk_tree) t = NULL;
	g_autoptr(GError) err = NULL;

	assert_int_equal(pk_tree_open(&t, "tests/data", &err), -1);   /* no Makefile, no scripts/ */
	g_clear_error(&err);
	assert_int_equal(pk_tree_open(&t, TREE, &err), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(describe_cases); i++) {
		const struct describe_case *c = &describe_cases[i];
		g_autoptr(pk_tree_file) f = pk_tree_describe(t, c->path, NULL);

		print_message("describe: %s\n", c->path);
		assert_str_or_null(f->unit, c->unit);
		assert_str_or_null(f->modname, c->modname);
		assert_str_or_null(f->pr_fmt_file, c->pr_fmt_file);
		assert_str_or_null(f->prefix, c->prefix);
	}
	/* an absolute path inside the tree is the same file */
	g_autofree char *abs = g_canonicalize_filename(TREE "/kernel/rcu/tree_plugin.h", NULL);
	g_autoptr(pk_tree_file) f = pk_tree_describe(t, abs, NULL);
	assert_string_equal(f->path, "kernel/rcu/tree_plugin.h");
	assert_string_equal(f->prefix, "rcu: ");
}

struct tree_case {
	const char *name;
	const char *file;       /* of the miniature tree */
	const char *hunks;      /* the diff's hunks */
	const char *kinds, *verdict;
	const char *kind;       /* the finding whose fields are checked */
	const char *old_prefix, *new_prefix;
	unsigned affected;      /* for pr_fmt-* */
	const char *verdict_without_tree;
};

static const struct tree_case tree_cases[] = {
	{ "the sched revert with a tree: pr_fmt() removed, pr_info() made printk(KERN_INFO)",
	  "kernel/rcu/tree.c",
	  "@@ -1,8 +1,6 @@\n"
	  "-#define pr_fmt(fmt) \"rcu: \" fmt\n"
	  "-\n"
	  " #include <linux/kernel.h>\n"
	  " \n"
	  " void rcu_init(void)\n"
	  " {\n"
	  "-\tpr_info(\"Hierarchical RCU implementation.\\n\");\n"
	  "+\tprintk(KERN_INFO \"Hierarchical RCU implementation.\\n\");\n"
	  " }\n",
	  "pr_fmt-removed,prefer-pr-level,prefix-changed", "console-changed", "prefix-changed", "rcu: ", "",
	  0, "console-changed" },
	{ "a hand-written prefix moved into a new pr_fmt(): every call prints the same",
	  "security/keys/encrypted-keys/encrypted.c",
	  "@@ -1,2 +1,4 @@\n"
	  " // SPDX-License-Identifier: GPL-2.0-only\n"
	  "+#define pr_fmt(fmt) \"encrypted_key: \" fmt\n"
	  "+\n"
	  " #include <linux/module.h>\n"
	  "@@ -6,8 +8,8 @@ static int valid_master_desc(const char *desc)\n"
	  " \tif (!desc) {\n"
	  "-\t\tpr_err(\"encrypted_key: key description missing\\n\");\n"
	  "+\t\tpr_err(\"key description missing\\n\");\n"
	  " \t\treturn -EINVAL;\n"
	  " \t}\n"
	  " \tif (strlen(desc) != 32) {\n"
	  "-\t\tprintk(KERN_ERR \"encrypted_key: key description must be 32 characters\\n\");\n"
	  "+\t\tpr_err(\"key description must be 32 characters\\n\");\n"
	  " \t\treturn -EINVAL;\n",
	  "call-converted,call-converted,pr_fmt-added", "no-visible-change", "pr_fmt-added", "",
	  "encrypted_key: ", 0, "console-changed" },
	{ "pr_fmt() added to a file built inside another: the includer's modname",
	  "kernel/sched/topology.c",
	  "@@ -1,3 +1,4 @@\n"
	  " // SPDX-License-Identifier: GPL-2.0\n"
	  "+#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  " /*\n"
	  "  * Scheduler topology setup/handling methods\n",
	  "pr_fmt-added", "console-changed", "pr_fmt-added", "", "build_utility: ", 3,
	  "console-changed" },
	{ "pr_fmt() added to the includer: its calls and the included file's",
	  "kernel/sched/build_utility.c",
	  "@@ -1,2 +1,3 @@\n"
	  " // SPDX-License-Identifier: GPL-2.0-only\n"
	  "+#define pr_fmt(fmt) \"sched: \" fmt\n"
	  " #include \"sched.h\"\n",
	  "pr_fmt-added", "console-changed", "pr_fmt-added", "", "sched: ", 4, "console-changed" },
	{ "pr_fmt() rewritten to the same prefix: nothing visible",
	  "drivers/tty/serial/8250/8250_pnp.c",
	  "@@ -1,3 +1,3 @@\n"
	  "-#define pr_fmt(fmt) \"8250: \" fmt\n"
	  "+#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  " \n"
	  " #include <linux/module.h>\n",
	  "pr_fmt-changed", "no-visible-change", "pr_fmt-changed", "8250: ", "8250: ", 1,
	  "console-changed" },
	{ "pr_fmt() changed through a macro to the modname",
	  "drivers/tty/serial/8250/8250_core.c",
	  "@@ -1,4 +1,4 @@\n"
	  " #define DRV_NAME \"serial8250\"\n"
	  "-#define pr_fmt(fmt) DRV_NAME \": \" fmt\n"
	  "+#define pr_fmt(fmt) KBUILD_MODNAME \": \" fmt\n"
	  " \n"
	  " #include <linux/module.h>\n",
	  "pr_fmt-changed", "console-changed", "pr_fmt-changed", "serial8250: ", "8250: ", 2,
	  "console-changed" },
	{ "pr_fmt() removed, and a patch that does not apply: the tree's count adjusted",
	  "drivers/tty/serial/8250/8250_core.c",
	  "@@ -1,4 +1,3 @@\n"
	  " #define DRV_NAME \"serial8250\"\n"
	  "-#define pr_fmt(fmt) DRV_NAME \": \" fmt\n"
	  " \n"
	  " #include <linux/modules.h>\n"
	  "@@ -8,2 +7,3 @@ static int serial8250_probe(void)\n"
	  " \tpr_info(\"probing\\n\");\n"
	  "+\tpr_info(\"probed\\n\");\n"
	  " \tpr_warn(\"no ports\\n\");\n",
	  "message-added,pr_fmt-removed", "console-changed", "pr_fmt-removed", "serial8250: ", "", 2,
	  "console-changed" },
	{ "printk(KERN_INFO to pr_info() where pr_fmt() applies: the prefix comes",
	  "drivers/tty/serial/8250/8250_core.c",
	  "@@ -9,4 +9,4 @@ static int serial8250_probe(void)\n"
	  " \tpr_warn(\"no ports\\n\");\n"
	  "-\tprintk(KERN_INFO \"registered\\n\");\n"
	  "+\tpr_info(\"registered\\n\");\n"
	  " \treturn 0;\n"
	  " }\n",
	  "prefix-changed", "console-changed", "prefix-changed", "", "serial8250: ", 0,
	  "no-visible-change" },
	{ "printk(KERN_DEBUG to pr_debug() without pr_fmt(): the prefix stays empty",
	  "kernel/sched/topology.c",
	  "@@ -10,3 +10,3 @@ static void sched_domain_debug(int cpu)\n"
	  " \tpr_err(\"ERROR: domain->span does not contain CPU%d\\n\", cpu);\n"
	  "-\tprintk(KERN_DEBUG \"CPU%d attaching sched-domain(s):\\n\", cpu);\n"
	  "+\tpr_debug(\"CPU%d attaching sched-domain(s):\\n\", cpu);\n",
	  "debug-compiled-out", "console-changed", "debug-compiled-out", "", "", 0, "console-changed" },
	{ "dev_info() to pr_info(): the device name goes, pr_fmt()'s prefix comes",
	  "drivers/foo/foo-main.c",
	  "@@ -4,3 +4,3 @@ static int foo_probe(void)\n"
	  " {\n"
	  "-\tdev_info(dev, \"foo up\\n\");\n"
	  "+\tpr_info(\"foo up\\n\");\n"
	  " \treturn 0;\n",
	  "device-prefix-lost", "console-changed", "device-prefix-lost", NULL, "foo: ", 0,
	  "console-changed" },
	{ "an added message says how it prints",
	  "kernel/rcu/tree_plugin.h",
	  "@@ -2,3 +2,4 @@ static void rcu_bootup_announce(void)\n"
	  " {\n"
	  " \tpr_info(\"Preemptible hierarchical RCU implementation.\\n\");\n"
	  "+\tpr_info(\"\\tRCU event tracing is enabled.\\n\");\n"
	  " }\n",
	  "message-added", "console-changed", "message-added", NULL, "rcu: ", 0, "console-changed" },
	{ "the tree's pr_fmt() of __func__: the prefix names the call's function",
	  "arch/x86/kernel/head64.c",
	  "@@ -1,1 +1,6 @@\n"
	  " #define pr_fmt(fmt) \"%s: \" fmt, __func__\n"
	  "+\n"
	  "+void __init x86_64_start_kernel(char *real_mode_data)\n"
	  "+{\n"
	  "+\tpr_info(\"starting\\n\");\n"
	  "+}\n",
	  "message-added", "console-changed", "message-added", NULL, "x86_64_start_kernel: ", 0,
	  "console-changed" },
};

static void test_tree_scan(void **state)
{
	g_autoptr(pk_tree) t = NULL;
	g_autoptr(GError) err = NULL;

	assert_int_equal(pk_tree_open(&t, TREE, &err), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(tree_cases); i++) {
		const struct tree_case *c = &tree_cases[i];
		g_autofree char *diff = g_strdup_printf("diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n%s",
							c->file, c->file, c->file, c->file, c->hunks);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		g_autoptr(pk_scan_result) s = pk_scan_tree(p, t);
		g_autoptr(pk_scan_result) plain = pk_scan(p);
		g_autofree char *got = kinds(s);
		const struct pk_finding *f = NULL;

		print_message("case: %s\n", c->name);
		assert_null(p->error);
		assert_string_equal(got, c->kinds);
		assert_string_equal(pk_verdict_name(s->verdict), c->verdict);
		assert_string_equal(pk_verdict_name(plain->verdict), c->verdict_without_tree);
		for (guint j = 0; j < s->findings->len && !f; j++)
			if (!strcmp(pk_finding_kind_name(((struct pk_finding *)s->findings->pdata[j])->kind), c->kind))
				f = s->findings->pdata[j];
		assert_non_null(f);
		print_message("  %s\n", f->message);
		assert_str_or_null(f->old_prefix, c->old_prefix);
		assert_str_or_null(f->new_prefix, c->new_prefix);
		if (g_str_has_prefix(c->kind, "pr_fmt-")) {
			assert_true(f->affected_whole_file);
			assert_int_equal(f->affected, c->affected);
		}
	}
}

static void test_free_null(void **state)
{
	pk_patch_free(NULL);
	pk_scan_free(NULL);
	g_autoptr(pk_scan_result) s = pk_scan(NULL);
	assert_string_equal(pk_verdict_name(s->verdict), "no-churn");
}

/*
 * A stop asked for (base/proc.h's cancel flag, which the daemon's
 * SIGTERM sets) cuts a scan short, in the hunk it is in: the scan says
 * so and has no verdict.  Without it, the same hunk's 2,000 calls.
 */
static void test_scan_canceled(void **state)
{
	g_autoptr(GString) diff = g_string_new("--- /dev/null\n+++ b/drivers/x.c\n@@ -0,0 +1,2000 @@\n");
	g_autoptr(pk_patch) p = NULL;
	g_autoptr(pk_scan_result) whole = NULL, cut = NULL;
	volatile sig_atomic_t stop = 1;

	for (int i = 0; i < 2000; i++)
		g_string_append_printf(diff, "+\tpr_info(\"x: %d\\n\");\n", i);
	p = pk_patch_parse_diff(diff->str, diff->len);
	whole = pk_scan(p);
	assert_false(whole->canceled);
	assert_int_equal(whole->calls_changed, 2000);
	pk_proc_set_cancel(&stop);
	cut = pk_scan(p);
	pk_proc_set_cancel(NULL);
	assert_true(cut->canceled);
	assert_int_equal(cut->verdict, PK_VERDICT_NONE);
	assert_true(cut->calls_changed < 2000);
	assert_true(cut->findings->len < whole->findings->len);
}

/* Lines longer than any mailer keeps, so the line after each is its wrapped rest. */
#define WRAPPED_HEADER "@@ -120,3 +120,3 @@ static int sched_domain_debug_one(struct sched_domain *sd, int cpu, int\nlevel,\n"
#define WRAPPED_ADDED "+\tpr_err(\"sched: the domain of this cpu does not span the cpu itself, which\nis a bug\\n\");\n"

struct corrupt_case {
	const char *name;
	const char *diff;
	const char *kinds;      /* sorted, comma-joined */
	const char *verdict;
	const char *message;    /* the first finding's message, NULL to skip */
	gboolean error;         /* the diff is only partly read */
};

static const struct corrupt_case corrupt_cases[] = {
	{ "wrapped hunk header and + line: repaired, read, reported",
	  "--- a/k.c\n+++ b/k.c\n" WRAPPED_HEADER " a\n-\tpr_info(\"x\\n\");\n" WRAPPED_ADDED " b\n",
	  "message-added,message-removed,patch-corrupt,patch-corrupt", "console-changed",
	  "this mail is corrupt: line 4 (the end of a hunk header) was wrapped by the mailer; "
	  "git am will reject it", FALSE },
	{ "damage alone is no churn",
	  "--- a/k.c\n+++ b/k.c\n" WRAPPED_HEADER " a\n-b\n+c\n b\n",
	  "patch-corrupt", "no-churn", NULL, FALSE },
	{ "unrepairable: the readable hunk keeps its findings",
	  "--- a/k.c\n+++ b/k.c\n@@ -1 +1 @@\n-\tpr_info(\"up\\n\");\n+\tpr_err(\"up\\n\");\n"
	  "@@ -10,3 +10,3 @@\n-a\n+b\n\nThanks\n",
	  "level-changed", "console-changed", NULL, TRUE },
};

static void test_scan_corrupt(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(corrupt_cases); i++) {
		const struct corrupt_case *c = &corrupt_cases[i];
		g_autoptr(pk_patch) p = pk_patch_parse_diff(c->diff, strlen(c->diff));
		g_autoptr(pk_scan_result) s = pk_scan(p);
		g_autofree char *got = kinds(s);

		print_message("case: %s: %s\n", c->name, got);
		assert_int_equal(p->error != NULL, c->error);
		assert_string_equal(got, c->kinds);
		assert_string_equal(pk_verdict_name(s->verdict), c->verdict);
		if (c->message)
			assert_string_equal(((struct pk_finding *)s->findings->pdata[0])->message, c->message);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_cases),
		cmocka_unit_test(test_fold_cases),
		cmocka_unit_test(test_level_cases),
		cmocka_unit_test(test_sentence_cases),
		cmocka_unit_test(test_finding_fields),
		cmocka_unit_test(test_pairing_bounded),
		cmocka_unit_test(test_finding_lines),
		cmocka_unit_test(test_diff_lines),
		cmocka_unit_test(test_diff_malformed),
		cmocka_unit_test(test_scan_corrupt),
		cmocka_unit_test(test_mbox),
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_mbox_corpus),
		cmocka_unit_test(test_tree_describe),
		cmocka_unit_test(test_tree_scan),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_scan_canceled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
