/* cmd-test.c - `printkbot test`: a patch or a series through the whole pipeline. */
#include "cmd/commands.h"
#include "config/config.h"
#include "intake/mail.h"
#include "intake/series.h"
#include "lab/bases.h"
#include "lab/describe.h"
#include "lab/lab.h"
#include "lab/repo.h"
#include "pipeline/monitor.h"
#include "pipeline/sequence.h"
#include "report/review.h"
#include "store/store.h"
#include "pipeline/test.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char test_usage[] =
	"usage: printkbot test [--json] [--config FILE] [--base REV] [--timeout SECONDS]\n"
	"                      [--db FILE | --no-store] [--allow-build-system] [--all]\n"
	"                      [--which-base] [--rules FILE] [--arch ARCH]\n"
	"                      PATCH|MBOX|-...\n\n"
	"Apply each patch on the base in the bot's kernel tree (a series: each patch\n"
	"on top of the previous one, every patch applied, each built and booted only\n"
	"when it has logging churn), build and boot the kernel before and after in\n"
	"QEMU, and review what changed in what the kernel prints: the boot log, the\n"
	"printk index, and the static findings of `scan`, each confirmed or not.\n"
	"The before side is built and booted once per base and config and kept in\n"
	"the store; everything is stored (see `printkbot history`, `report`).\n"
	"A cover letter (\"[PATCH 0/7]\") is left out, as b4 leaves it: a diff in\n"
	"one is against another version of the series.\n"
	"With -, the patches come from standard input, as from b4:\n"
	"    b4 am -o - MSGID | printkbot test -\n\n"
	"  --json                one JSON object per patch (the review's data)\n"
	"  --config FILE         settings and policy (see config.example; default\n"
	"                        $PRINTKBOT_CONFIG, else /etc/printkbot.conf if present);\n"
	"                        options given here override it\n"
	"  --base REV            the revision patches apply to (default: printkbot-base)\n"
	"  --timeout SECONDS     per boot (default 60); a unit may follow: 90s, 2m, 1h\n"
	"  --db FILE             the store (default $PRINTKBOT_DB or <cache>/printkbot.db)\n"
	"  --no-store            keep nothing, cache nothing\n"
	"  --allow-build-system  build patches that change Makefile, Kconfig, scripts/...\n"
	"                        even where no throwaway layer can take the build's\n"
	"                        writes (not root) or with sandbox = off; with them,\n"
	"                        such patches are built by default\n"
	"  --which-base          only say which base each input's series would go on,\n"
	"                        and why the bases before it were passed over: nothing\n"
	"                        is built (exit 1 when no base takes a series)\n"
	"  --all                 build and boot patches without logging churn too\n"
	"                        (without it they are applied, not built)\n"
	"  --rules FILE          log-monitor rules (node-problem-detector's JSON rule\n"
	"                        file, or RE2 patterns one a line; default: the\n"
	"                        config's [test] rules): the review says which rules\n"
	"                        lose a message the patch rewords, removes or moves\n"
	"  --arch ARCH           build and boot for ARCH alone: x86_64 (the default)\n"
	"                        or arm64 (QEMU's virt machine; `setup --arch arm64`).\n"
	"                        Without it, a patch to a driver whose hardware a\n"
	"                        board of qemu/boards has (the PL011: virt; the\n"
	"                        BCM2835 mini UART: raspi3b) boots on that board,\n"
	"                        and one whose files no config of the default builds\n"
	"                        goes to another architecture whose lab is set up;\n"
	"                        the review says why\n\n"
	"verdicts: no-churn, no-visible-change, console-changed, not-built (nothing\n"
	"changed, but a C file or header the patch touches is not compiled in, so\n"
	"nothing is vouched for it), does-not-apply, build-failed (a kernel that\n"
	"did not link for an option the patch does not select is tested again with\n"
	"it on, and the review shows what those kernels print), boot-failed,\n"
	"refused.  The review lists every touched file as booted (it printed at\n"
	"boot), built (compiled in: in the printk index) or not-built, with why.\n"
	"exit status: 0 when every patch is no-churn or no-visible-change, 1 when\n"
	"some patch changed the console, was not built or failed, 2 on bad input\n"
	"or when the bot could not work.\n";

/* The command line of test (--config, --db and --no-store are main's: commands.h). */
struct test_opts {
	bool json;
	const char *base;
	double timeout;          /* 0: the config's, else the default */
	bool allow_build;
	bool all;
	bool which_base;
	const char *rules;
};

static const struct pk_option test_options[] = {
	PK_OPTION_FLAG("json", struct test_opts, json),
	PK_OPTION_CONFIG,
	PK_OPTION_STRING("base", struct test_opts, base),
	PK_OPTION_DURATION("timeout", struct test_opts, timeout),
	PK_OPTION_DB,
	PK_OPTION_NO_STORE,
	PK_OPTION_FLAG("allow-build-system", struct test_opts, allow_build),
	PK_OPTION_FLAG("all", struct test_opts, all),
	PK_OPTION_FLAG("which-base", struct test_opts, which_base),
	PK_OPTION_STRING("rules", struct test_opts, rules),
	PK_OPTION_ARCH,
	{ NULL },
};

/* One test command at work; lab and store are the context's. */
struct test_run {
	const struct pk_lab *lab;
	struct pk_store *store;   /* NULL with --no-store */
	struct pk_test_opts opts;
	const char *base;         /* --base (the only base then), or NULL */
	char **bases;             /* the bases a series may go on, in order (bases.h) */
	const GPtrArray *trees;   /* the config's [tree NAME]s, fetched again for a base-commit the lab lacks */
	struct pk_bases_refetch refetch;  /* at most once per fetch_interval, however many inputs */
	char *compiler;           /* gcc's first line, or NULL */
	bool json;
	bool which_base;          /* --which-base: choose, say, test nothing */
	unsigned printed;
};

/* Render, print and store the review of one tested patch. */
static int review_one(struct test_run *run, const struct pk_patch *patch, gint64 source_id,
		      const struct pk_test_result *res, const struct pk_review_info *info, GError **err)
{
	struct pk_review_doc doc;
	gint64 review_id;
	int rc = 0;

	if (pk_review_doc_make(&doc, patch, res, info, err) < 0)
		return -1;
	if (run->json)
		printf("%s\n", doc.model_json);
	else
		pk_print_text("%s%s", run->printed++ ? "\n========================================================================\n\n" : "",
			      doc.text);
	fflush(stdout);
	if (run->store) {
		struct pk_test_record_info rec = { patch, source_id, run->lab->config_hash, doc.model_json, doc.text };

		rc = pk_test_record(run->store, &review_id, res, &rec, err);
		if (rc == 0)
			pk_info("stored as review %" G_GINT64_FORMAT " (printkbot report %" G_GINT64_FORMAT ")",
				review_id, review_id);
	}
	pk_review_doc_clear(&doc);
	return rc;
}

/*
 * The base of one input's series (pipeline/sequence.h): its base-commit,
 * else the first base on which it applies whole, and that base as a
 * person names it.
 */
static int choose_base(struct test_run *run, struct pk_sequence *seq, char **out_kernel, const char *buf,
		       size_t len, GError **err)
{
	g_autofree char *base_commit = run->base ? NULL : pk_mail_find_base_commit(buf, len);
	struct pk_sequence_where where = { base_commit, NULL, (const char *const *)run->bases, run->trees,
					   &run->refetch };
	g_autoptr(GError) e = NULL;

	if (pk_sequence_choose_base(seq, &where, err) < 0)
		return -1;
	if (seq->base.tried && !run->which_base)
		pk_info("base %s; passed over: %s", seq->base.name, seq->base.tried);
	if (!(*out_kernel = pk_describe_base(run->lab, seq->base.rev, &e)))
		pk_info("the base is not described in the reviews: %s", e->message);
	return 0;
}

/* --which-base: where the input's series goes and what was passed over; the exit status. */
static int say_base(const char *path, const struct pk_base_choice *base)
{
	if (!base->applies) {
		pk_print_text("%s: no base takes it: %s\n", path, base->tried ? base->tried : "no base configured");
		return 1;
	}
	pk_print_text("%s: %s %.12s%s%s%s\n", path, base->name, base->rev, base->three_way ? " (3-way)" : "",
	       base->tried ? "; passed over: " : "", base->tried ? base->tried : "");
	return 0;
}

/*
 * Test patch i of the input's series on the one before it, print and
 * store its review; the exit status for it.  A patch the bot failed on
 * leaves the parent where it was: the next one still gets its turn.
 */
static int test_one(struct test_run *run, struct pk_sequence *seq, const char *path, guint i,
		    gint64 source_id, const char *kernel)
{
	const struct pk_patch *p = seq->patches->pdata[i];
	guint n = seq->patches->len;
	struct pk_review_info info = { path, i + 1, n, seq->base.name, run->lab->config_hash,
				       .kernel = kernel, .compiler = run->compiler };
	struct pk_test_result res = { 0 };
	g_autoptr(GError) err = NULL;
	int status;

	if (p->error)
		fprintf(stderr, "printkbot test: %s: %s: malformed diff: %s\n", path,
			p->message_id ? p->message_id : "(no Message-ID)", p->error);
	pk_info("%s: testing %u/%u: %s", path, i + 1, n, p->subject ? p->subject : "(diff)");
	if (pk_sequence_test(seq, i, &res, &err) < 0 ||
	    review_one(run, p, source_id, &res, &info, &err) < 0) {
		fprintf(stderr, "printkbot test: %s: patch %u/%u: %s\n", path, i + 1, n, err->message);
		pk_test_result_clear(&res);
		return 2;
	}
	pk_sequence_advance(seq, res.after.commit);
	status = pk_verdict_is_bad(res.verdict) || p->error ? 1 : 0;
	pk_test_result_clear(&res);
	return status;
}

/*
 * Drop the cover letters of patches ("[PATCH v2 0/7] ..."), as b4 and the
 * daemon's intake do (series.h): a diff in one is an interdiff or a
 * range-diff against another version, not a change to apply first.
 * Each is said on stderr.
 */
static unsigned drop_cover_letters(GPtrArray *patches, const char *path)
{
	unsigned dropped = 0;

	for (guint i = 0; i < patches->len;) {
		const struct pk_patch *p = patches->pdata[i];
		struct pk_subject s;
		bool cover;

		pk_subject_parse(&s, p->subject);
		cover = pk_subject_is_cover(&s);
		pk_subject_clear(&s);
		if (!cover) {
			i++;
			continue;
		}
		fprintf(stderr, "printkbot test: %s: %s: a cover letter, not tested (its diff is against "
			"another version of the series)\n", path, p->subject);
		g_ptr_array_remove_index(patches, i);
		dropped++;
	}
	return dropped;
}

/* Read one input's patches into *out; the exit status 2, said, when there are none. */
static int read_input(struct test_run *run, const char *path, char **buf, size_t *len, GPtrArray **out)
{
	g_autoptr(GError) err = NULL;
	unsigned skipped = 0, covers;

	/* larger than [policy] max_mail_mb: refused rather than read into memory */
	if (pk_read_file(buf, len, path, run->opts.policy.max_mail_size, &err) < 0 ||
	    pk_patch_read_mails(out, &skipped, *buf, *len, &err) < 0) {
		fprintf(stderr, "printkbot test: %s\n", err->message);
		return 2;
	}
	covers = drop_cover_letters(*out, path);
	if (!(*out)->len) {
		if (covers)
			fprintf(stderr, "printkbot test: %s: no patch in it (%u cover letter(s), %u mail(s) "
				"without a diff)\n", path, covers, skipped);
		else if (skipped)
			fprintf(stderr, "printkbot test: %s: no patch in it (%u mail(s) without a diff)\n",
				path, skipped);
		else
			fprintf(stderr, "printkbot test: %s: no patch in it: %s\n", path,
				*len ? "no mail, and no diff (no file header such as '--- a/FILE')" : "the file is empty");
		return 2;
	}
	return 0;
}

/* Test every patch of one input, a series in order; returns the exit status for it. */
static int test_input(struct test_run *run, const char *path)
{
	g_autofree char *buf = NULL, *kernel = NULL;
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_sequence seq;
	gint64 source_id = 0;
	size_t len = 0;
	int status;

	if ((status = read_input(run, path, &buf, &len, &patches)) != 0)
		return status;
	pk_sequence_init(&seq, run->lab, run->store);
	seq.opts = run->opts;
	for (guint i = 0; i < patches->len; i++)
		pk_sequence_add(&seq, patches->pdata[i]);
	if ((run->store && !run->which_base &&
	     pk_store_add_source(run->store, &source_id, "mbox", path, NULL, &err) < 0) ||
	    choose_base(run, &seq, &kernel, buf, len, &err) < 0) {
		fprintf(stderr, "printkbot test: %s\n", err->message);
		status = 2;
	} else if (run->which_base) {
		status = say_base(path, &seq.base);
	} else {
		for (guint i = 0; i < patches->len; i++) {
			int one = test_one(run, &seq, path, i, source_id, kernel);   /* not inside MAX() */
			status = MAX(status, one);
		}
	}
	pk_sequence_clear(&seq);
	return status;
}

static int cmd_test(struct pk_cmd_ctx *ctx)
{
	const struct test_opts *o = ctx->cmdline.opts;
	const struct pk_config *config = &ctx->config;
	struct test_run run = { &ctx->lab, ctx->store };
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_rules) rules = NULL;
	const char *rules_path = o->rules ? o->rules : config->test.rules;
	int status = 0;

	if (rules_path && pk_monitor_rules_load(&rules, rules_path, &err) < 0) {
		fprintf(stderr, "printkbot test: %s%s\n", o->rules ? "--rules: " : "[test] rules: ", err->message);
		return 2;
	}
	run.opts.rules = rules;

	run.json = o->json;
	run.base = o->base;
	run.trees = config->trees;
	run.refetch.interval = config->daemon.fetch_interval;
	/* --base: that one alone; else the config's bases, else its base and every Debian base the lab has */
	run.bases = o->base ? g_strdupv((char *[]){ (char *)o->base, NULL }) : pk_sequence_bases(run.lab, &config->test);
	if (!(run.compiler = pk_describe_compiler(pk_lab_arch(run.lab), &err)))
		pk_info("the compiler is not named in the reviews: %s", err->message);
	pk_sequence_opts(&run.opts, &config->test, &config->policy, o->timeout);
	run.opts.policy.allow_build_system |= o->allow_build;
	run.opts.build_without_churn = o->all;
	/* --arch: that architecture alone, even for a file only another builds */
	run.opts.one_arch = ctx->cmdline.common.arch != NULL;
	run.which_base = o->which_base;
	for (char **a = ctx->cmdline.args; *a; a++) {
		int one = test_input(&run, *a);   /* not inside MAX(): it evaluates twice */
		status = MAX(status, one);
	}
	g_strfreev(run.bases);
	g_free(run.compiler);
	pk_bases_refetch_clear(&run.refetch);
	return status;
}

/* A bad --rules file is a usage error, said before the lab is waited for. */
static int test_check(const struct pk_cmdline *cl, GError **err)
{
	const struct test_opts *o = cl->opts;
	g_autoptr(pk_rules) rules = NULL;
	g_autoptr(GError) e = NULL;

	if (o->rules && pk_monitor_rules_load(&rules, o->rules, &e) < 0) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--rules: %s", e->message);
		return -1;
	}
	return 0;
}

/*
 * What can be checked before the lab is taken, so that a typo is said at
 * once rather than after another printkbot's build: every input is
 * readable, and --base names a revision of the lab (read without its
 * lock: a lab not set up is said by the set-up).
 */
static int test_inputs(const struct pk_cmd_ctx *ctx, GError **err)
{
	const struct pk_cmdline *cl = &ctx->cmdline;
	const struct test_opts *o = cl->opts;
	const char *base[] = { o->base, NULL };

	for (char **a = cl->args; *a; a++) {
		if (!strcmp(*a, "-"))
			continue;
		if (g_file_test(*a, G_FILE_TEST_IS_DIR) || access(*a, R_OK) < 0) {
			return pk_error(err, PK_ERROR_INPUT, "cannot read %s: %s", *a,
					g_file_test(*a, G_FILE_TEST_IS_DIR) ? "it is a directory" : g_strerror(errno));
		}
	}
	return pk_bases_check_names(base, "--base ", err);
}

const struct pk_cmd_spec cmd_test_spec = {
	.usage = test_usage,
	.options = test_options,
	.opts_size = sizeof(struct test_opts),
	.args_name = "PATCH|MBOX|-...",
	.args_min = 1, .args_max = G_MAXUINT,
	.check = test_check,
	.inputs = test_inputs,
	.setup_status = 2,
	.run = cmd_test,
};
