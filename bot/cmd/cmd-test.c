/* cmd-test.c - `printkbot test`: a patch or a series through the whole pipeline. */
#include "cmd/commands.h"
#include "base/config.h"
#include "lab/lab.h"
#include "report/review.h"
#include "store/store.h"
#include "pipeline/test.h"
#include "base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char test_usage[] =
	"usage: printkbot test [--json] [--config FILE] [--base REV] [--timeout SECONDS]\n"
	"                      [--db FILE | --no-store] [--allow-build-system] [--all]\n"
	"                      PATCH|MBOX|-...\n\n"
	"Apply each patch on the base in the bot's kernel tree (a series: each patch\n"
	"on top of the previous one), build and boot the kernel before and after in\n"
	"QEMU, and review what changed in what the kernel prints: the boot log, the\n"
	"printk index, and the static findings of `scan`, each confirmed or not.\n"
	"The before side is built and booted once per base and config and kept in\n"
	"the store; everything is stored (see `printkbot history`, `report`).\n\n"
	"  --json                one JSON object per patch (the review's data)\n"
	"  --config FILE         settings and policy (see config.example; default\n"
	"                        $PRINTKBOT_CONFIG, else /etc/printkbot.conf if present);\n"
	"                        options given here override it\n"
	"  --base REV            the revision patches apply to (default: printkbot-base)\n"
	"  --timeout SECONDS     per boot (default 60)\n"
	"  --db FILE             the store (default $PRINTKBOT_DB or <cache>/printkbot.db)\n"
	"  --no-store            keep nothing, cache nothing\n"
	"  --allow-build-system  build patches that change Makefile, Kconfig, scripts/...\n"
	"  --all                 build and boot patches without logging churn too\n\n"
	"verdicts: no-churn, no-visible-change, console-changed, does-not-apply,\n"
	"build-failed, boot-failed, refused.\n"
	"exit status: 0 when every patch is no-churn or no-visible-change, 1 when\n"
	"some patch changed the console or failed, 2 on bad input or when the bot\n"
	"could not work.\n";

struct test_run {
	struct pk_lab lab;
	struct pk_store *store;   /* NULL with --no-store */
	struct pk_test_opts opts;
	const char *base;
	bool json;
	unsigned printed;
};

/* Render, print and store the review of one tested patch. */
static int review_one(struct test_run *run, const struct pk_patch *patch, gint64 source_id,
		      const struct pk_test_result *res, const struct pk_review_info *info, GError **err)
{
	g_autoptr(JsonNode) model = pk_review_model(patch, res, info);
	g_autofree char *body = pk_review_render(model, "review.txt", err);
	g_autofree char *model_json = NULL;
	gint64 test_id, review_id;

	if (!body)
		return -1;
	model_json = json_to_string(model, FALSE);
	if (run->json)
		printf("%s\n", model_json);
	else
		printf("%s%s", run->printed++ ? "\n========================================================================\n\n" : "", body);
	fflush(stdout);
	if (!run->store)
		return 0;
	if (pk_store_begin(run->store, err) < 0)
		return -1;
	if (pk_test_store(run->store, &test_id, patch, source_id, res, run->lab.config_hash, err) < 0 ||
	    pk_store_add_review(run->store, &review_id, test_id, model_json, body, err) < 0 ||
	    pk_store_commit(run->store, err) < 0) {
		pk_store_rollback(run->store);
		return -1;
	}
	pk_info("stored as review %" G_GINT64_FORMAT " (printkbot report %" G_GINT64_FORMAT ")", review_id, review_id);
	return 0;
}

/* Test every patch of one input, a series in order; returns the exit status for it. */
static int test_input(struct test_run *run, const char *path)
{
	g_autofree char *buf = NULL;
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *parent = g_strdup(run->base);
	gint64 source_id = 0;
	unsigned skipped = 0;
	size_t len = 0;
	int status = 0;

	/* larger than [policy] max_mail_mb: refused rather than read into memory */
	if (pk_read_file(&buf, &len, path, run->opts.policy.max_mail_size, &err) < 0 ||
	    pk_patch_read_mails(&patches, &skipped, buf, len, &err) < 0) {
		fprintf(stderr, "printkbot test: %s\n", err->message);
		return 2;
	}
	if (!patches->len) {
		fprintf(stderr, "printkbot test: %s: no patch in it (%u mail(s) without a diff)\n", path, skipped);
		return 2;
	}
	if (run->store && pk_store_add_source(run->store, &source_id, "mbox", path, NULL, &err) < 0) {
		fprintf(stderr, "printkbot test: %s\n", err->message);
		return 2;
	}
	for (guint i = 0; i < patches->len; i++) {
		const struct pk_patch *p = patches->pdata[i];
		struct pk_review_info info = { path, i + 1, patches->len, run->base, run->lab.config_hash };
		struct pk_test_result res = { 0 };

		if (p->error)
			fprintf(stderr, "printkbot test: %s: %s: malformed diff: %s\n", path,
				p->message_id ? p->message_id : "(no Message-ID)", p->error);
		pk_info("%s: testing %u/%u: %s", path, i + 1, patches->len, p->subject ? p->subject : "(diff)");
		if (pk_test_patch(&res, &run->lab, run->store, &run->opts, p, parent, &err) < 0 ||
		    review_one(run, p, source_id, &res, &info, &err) < 0) {
			/* the bot failed on this patch; the next ones still get their turn */
			fprintf(stderr, "printkbot test: %s: patch %u/%u: %s\n", path, i + 1, patches->len,
				err->message);
			g_clear_error(&err);
			pk_test_result_clear(&res);
			status = 2;
			continue;
		}
		if (res.after.commit) {
			g_free(parent);
			parent = g_strdup(res.after.commit);
		}
		status = MAX(status, pk_verdict_is_bad(res.verdict) || p->error ? 1 : 0);
		pk_test_result_clear(&res);
	}
	return status;
}

int cmd_test(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "config", required_argument, NULL, 'C' },
		{ "base", required_argument, NULL, 'b' },
		{ "timeout", required_argument, NULL, 't' },
		{ "db", required_argument, NULL, 'd' },
		{ "no-store", no_argument, NULL, 'n' },
		{ "allow-build-system", no_argument, NULL, 'B' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct test_run run = { 0 };
	struct pk_config config = { 0 };
	g_autoptr(GError) err = NULL;
	const char *db = NULL, *config_path = NULL, *base = NULL;
	bool no_store = false, json = false, allow_build = false, all = false;
	double timeout = 0;
	int c, status = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': config_path = optarg; break;
		case 'j': json = true; break;
		case 'b': base = optarg; break;
		case 't': timeout = g_ascii_strtod(optarg, NULL); break;
		case 'd': db = optarg; break;
		case 'n': no_store = true; break;
		case 'B': allow_build = true; break;
		case 'a': all = true; break;
		case 'h': fputs(test_usage, stdout); return 0;
		default: fputs(test_usage, stderr); return 2;
		}
	}
	if (optind == argc) {
		fputs(test_usage, stderr);
		return 2;
	}
	if (pk_config_load(&config, config_path, &err) < 0)
		goto fail;
	pk_sandbox_configure(&config.sandbox);
	run.json = json;
	run.base = base ? base : config.base ? config.base : PK_LAB_BASE_TAG;
	run.opts.policy = config.policy;
	run.opts.policy.allow_build_system |= allow_build;
	run.opts.boot_timeout = timeout ? timeout : config.boot_timeout;
	run.opts.build_without_churn = all;
	if (pk_lab_take(&run.lab, &err) < 0)
		goto fail;
	if (!no_store && pk_store_open(&run.store, db ? db : config.db, &err) < 0)
		goto fail;
	for (int i = optind; i < argc; i++) {
		int one = test_input(&run, argv[i]);   /* not inside MAX(): it evaluates twice */
		status = MAX(status, one);
	}
	goto out;
fail:
	fprintf(stderr, "printkbot test: %s\n", err->message);
	status = 2;
out:
	pk_store_close(run.store);
	pk_lab_clear(&run.lab);
	pk_config_clear(&config);
	return status;
}
