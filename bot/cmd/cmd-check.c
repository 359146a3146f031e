/*
 * cmd-check.c - `printkbot check`: b4's per-patch check command
 * (report/check.h says the protocol).  The static check is here, small
 * enough for front.c; --test is cmd-check-test.c's.
 */
#include "cmd/cmd-check.h"
#include "analysis/scan.h"
#include "base/patch.h"
#include "base/util.h"
#include "report/check.h"

#include <stdio.h>
#include <string.h>

/* A patch mail is a few KiB; a whole mbox given by mistake is refused rather than read. */
#define CHECK_MAX_INPUT (64u << 20)

const char check_usage[] =
	"usage: printkbot check [FILE|-]\n"
	"   or: printkbot check --test [--base REV] [--timeout SECONDS] [--rules FILE]\n"
	"                       [--config FILE] [--db FILE | --no-store] [FILE|-]\n\n"
	"b4's per-patch check command (b4 0.14 and later): one patch mail on\n"
	"standard input (or FILE), a line per finding on standard output, as\n"
	"b4 am --check, b4 shazam --check and b4 prep --check read them:\n"
	"    git config b4.am-perpatch-check-cmd \"printkbot check\"\n"
	"    git config b4.prep-perpatch-check-cmd \"printkbot check\"\n"
	"Findings of one kind in one file are one line (\"3 calls in FILE lose the\n"
	"prefix ...\").  A line starts with \"ERROR: \" when it changes what the\n"
	"kernel prints (b4 shows it as a failure); advice, such as what\n"
	"checkpatch.pl would warn about, is a warning.  No line: b4 says the patch\n"
	"passed.  Without --test nothing is built and the kernel lab is not\n"
	"touched: the static findings of `scan`, in milliseconds.\n\n"
	"  --test            apply, build and boot the patch as `test` does (the lab's\n"
	"                    lock, the store, the config's bases, base-commit:) and\n"
	"                    say the verdict and the boot-log and printk index changes\n"
	"                    the same way; a patch that does not apply (one of a\n"
	"                    series checked alone) is one warning line.  The review\n"
	"                    is stored (printkbot report).  What printkbot logs on\n"
	"                    the way goes to no terminal: b4 takes a line on standard\n"
	"                    error for a failure\n"
	"  --base REV        with --test: the base, else the series' own choice\n"
	"  --timeout SECONDS with --test: per boot (default 60)\n"
	"  --rules FILE      with --test: log-monitor rules (default: [test] rules);\n"
	"                    a rule the patch breaks is an error line\n"
	"  --config FILE, --db FILE, --no-store   with --test, as for `test`\n\n"
	"exit status: 0 nothing found, 1 some line printed, 2 bad input (no patch\n"
	"in it) or usage, or --test could not work (said on standard error).\n";

const struct pk_option check_options[] = {
	PK_OPTION_FLAG("test", struct check_opts, test),
	PK_OPTION_STRING("base", struct check_opts, base),
	PK_OPTION_DURATION("timeout", struct check_opts, timeout),
	PK_OPTION_STRING("rules", struct check_opts, rules),
	PK_OPTION_CONFIG,
	PK_OPTION_DB,
	PK_OPTION_NO_STORE,
	{ NULL },
};

int check_validate(const struct pk_cmdline *cl, GError **err)
{
	const struct check_opts *o = cl->opts;
	const char *only_test = o->base ? "--base" : o->timeout ? "--timeout" : o->rules ? "--rules"
			      : cl->common.config_path ? "--config" : cl->common.db ? "--db"
			      : cl->common.no_store ? "--no-store" : NULL;

	if (!o->test && only_test) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "%s is for --test: the static check reads "
			    "no configuration, lab or store", only_test);
		return -1;
	}
	return 0;
}

int check_static(const char *path)
{
	g_autofree char *buf = NULL;
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GPtrArray) lines = pk_check_lines_new();
	g_autoptr(GError) err = NULL;
	unsigned skipped = 0;
	size_t len = 0;

	if (pk_read_file(&buf, &len, path, CHECK_MAX_INPUT, &err) < 0 ||
	    pk_patch_read_mails(&patches, &skipped, buf, len, &err) < 0) {
		fprintf(stderr, "printkbot check: %s\n", err->message);
		return 2;
	}
	if (!patches->len) {
		fprintf(stderr, "printkbot check: %s: no patch in it%s\n", strcmp(path, "-") ? path : "standard input",
			skipped ? " (a mail without a diff)" : "");
		return 2;
	}
	/* one mail: the JIT would cost more than it saves (util.h) */
	pk_regex_input_size(len);
	for (guint i = 0; i < patches->len; i++) {
		const struct pk_patch *p = patches->pdata[i];
		g_autoptr(pk_scan_result) s = pk_scan(p);
		guint from = lines->len;

		if (p->error)
			pk_check_add(lines, false, "the diff could be read only in part: %s", p->error);
		pk_check_group(lines, s->findings, false);
		/* several patches in one input (not b4's way): say whose line it is */
		for (guint j = from; patches->len > 1 && j < lines->len; j++) {
			struct pk_check_line *l = lines->pdata[j];
			char *t = g_strdup_printf("patch %u/%u: %s", i + 1, patches->len, l->text);

			g_free(l->text);
			l->text = t;
		}
	}
	for (guint i = 0; i < lines->len; i++) {
		g_autofree char *line = pk_check_line_format(lines->pdata[i]);

		puts(line);
	}
	return lines->len ? 1 : 0;
}

static int check_front(struct pk_cmd_ctx *ctx)
{
	const struct check_opts *o = ctx->cmdline.opts;

	/* front.c hands --test to printkbot-core; this is for a caller that did not */
	if (o->test) {
		fprintf(stderr, "printkbot check: --test runs in printkbot-core\n");
		return 2;
	}
	return check_static(ctx->cmdline.n_args ? ctx->cmdline.args[0] : "-");
}

const struct pk_cmd_spec cmd_check_front_spec = {
	.usage = check_usage,
	.options = check_options,
	.opts_size = sizeof(struct check_opts),
	.args_name = "FILE|-",
	.args_max = 1,
	.check = check_validate,
	.setup_status = 2,
	.run = check_front,
};
