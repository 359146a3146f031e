/* cmd-run.c - `printkbot run`: a developer's branch, each commit against its parent. */
#include "cmd/commands.h"
#include "config/config.h"
#include "base/jsonout.h"
#include "lab/lab.h"
#include "lab/repo.h"
#include "intake/range.h"
#include "report/review.h"
#include "store/store.h"
#include "pipeline/sequence.h"
#include "pipeline/test.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

static const char run_usage[] =
	"usage: printkbot run [--repo DIR] [--all] [--json] [--all-parents] [--config FILE]\n"
	"                     [--timeout SECONDS] [--db FILE] [--allow-build-system] RANGE...\n\n"
	"Review a branch commit by commit: each commit of RANGE, read from the\n"
	"repository DIR (default: the one the current directory is in), is\n"
	"scanned and, when it changes logging calls, built and booted in QEMU\n"
	"against its parent, and what the kernel prints is compared.  Your\n"
	"repository is only read: the commits are copied into the bot's own\n"
	"kernel tree, which is where they are checked out and built.\n\n"
	"RANGE is spelt as for git log: BASE..TIP, TIP ^BASE, TIP^! (one commit),\n"
	"or TIP alone (its commits not in the lab's base: that commit, or the tag\n"
	"v<version> of the lab's kernel).  Commits are taken along the first\n"
	"parents; merges are listed and not tested.\n\n"
	"At the end: a table (commit, verdict, counts of boot-log, printk index\n"
	"and static changes, subject), then the review of every commit that\n"
	"changed the console or failed.  Everything is stored, so running the\n"
	"same range again reuses its builds and boots.\n\n"
	"  --repo DIR            the repository to read the range from\n"
	"  --all                 build and boot commits without logging churn too\n"
	"  --json                one JSON object per commit (the review's data, with\n"
	"                        \"commit\" and \"parent\"), nothing else on stdout\n"
	"  --all-parents         every commit of the range, not only first parents\n"
	"  --config FILE         settings and policy (see config.example)\n"
	"  --timeout SECONDS     per boot (default 60); a unit may follow: 90s, 2m, 1h\n"
	"  --db FILE             the store (default $PRINTKBOT_DB or <cache>/printkbot.db)\n"
	"  --allow-build-system  build commits that change Makefile, Kconfig, scripts/...\n"
	"                        even without a throwaway layer (not root) or with\n"
	"                        sandbox = off; with them, they are built by default\n\n"
	"exit status: 0 when every commit is no-churn or no-visible-change, 1 when\n"
	"some commit changed the console, touches code the lab's config does not\n"
	"build (not-built) or does not build or boot, 2 on a bad range or usage,\n"
	"or when the bot could not work.\n";

/* One line of the summary table. */
struct run_row {
	char *commit, *subject;
	enum pk_verdict verdict;   /* PK_VERDICT_NONE for a commit not tested */
	const char *skipped;   /* why it was not tested ("merge", "root commit"), or NULL */
	int boot, index, findings;   /* -1: not compared */
	char *body;            /* the review, kept for the details when bad */
};

static void run_row_free(gpointer p)
{
	struct run_row *r = p;

	g_free(r->commit);
	g_free(r->subject);
	g_free(r->body);
	g_free(r);
}

struct run {
	struct pk_lab lab;
	struct pk_store *store;
	struct pk_sequence seq; /* the commits in order, on lab and store */
	struct pk_range *range;
	gint64 source_id;
	gint64 first_review, last_review;   /* stored this run, 0 when none */
	bool json;
	GPtrArray *rows;        /* struct run_row* */
	/* progress */
	unsigned index, total;  /* the commit being tested (1-based), of how many */
	unsigned to_build, built;  /* commits with churn (to build) and those done */
	double start, build_seconds;
};

static char *clock_text(double seconds)
{
	unsigned s = seconds < 0 ? 0 : (unsigned)(seconds + 0.5);

	return s >= 3600 ? g_strdup_printf("%u:%02u:%02u", s / 3600, s / 60 % 60, s % 60)
			 : g_strdup_printf("%u:%02u", s / 60, s % 60);
}

/* The progress line: commit i of n, its stage, elapsed time and an estimate of what is left. */
static void run_progress(void *data, const char *stage)
{
	struct run *run = data;
	g_autofree char *elapsed = clock_text(pk_now() - run->start);
	g_autofree char *left = NULL;

	if (run->built && run->to_build > run->built)
		left = clock_text(run->build_seconds / run->built * (run->to_build - run->built));
	pk_progress("[%u/%u] %s  %s elapsed%s%s%s", run->index, run->total, stage, elapsed,
		    left ? ", about " : "", left ? left : "", left ? " left" : "");
}

/* How many commits of the range churn logging: those that will be built. */
static unsigned count_to_build(struct run *run)
{
	unsigned n = 0;

	for (guint i = 0; i < run->range->commits->len; i++) {
		const struct pk_range_commit *c = run->range->commits->pdata[i];
		g_autofree char *parent = NULL;
		g_autoptr(pk_patch) patch = NULL;
		g_autoptr(pk_scan_result) scan = NULL;
		g_autofree char *over = NULL;

		if (c->merge || !c->parent)
			continue;
		if (run->seq.opts.build_without_churn) {
			n++;
			continue;
		}
		/* one over the policy's limits is refused unscanned, never built */
		if (!(patch = pk_repo_commit_patch(&run->lab, c->id, &run->seq.opts.policy, &parent, NULL)) ||
		    (over = pk_patch_over_limits(patch, &run->seq.opts.policy)))
			continue;
		scan = pk_scan(patch);
		n += scan->verdict != PK_VERDICT_NO_CHURN;
	}
	return n;
}

/* Render, print (JSON) and store the review of one tested commit; keeps the body in row. */
static int review_commit(struct run *run, struct run_row *row, const struct pk_test_result *res, GError **err)
{
	g_autofree char *source = g_strdup_printf("%s (commit %.12s)", run->range->repo, res->after.commit);
	/* "Tested on its parent (1a2b3c4d5e6f) with ...": the model names the commit itself */
	g_autofree char *reproduce = g_strdup_printf("printkbot run --repo %s %.12s^!", run->range->repo,
						     res->after.commit);
	struct pk_review_info info = { source, run->index, run->total, "its parent", run->lab.config_hash,
				       reproduce };
	struct pk_review_doc doc;
	struct pk_test_record_info rec = { NULL, run->source_id, run->lab.config_hash, NULL, NULL };
	gint64 review_id;
	int rc;

	if (pk_review_doc_make(&doc, NULL, res, &info, err) < 0)
		return -1;
	if (run->json) {
		printf("%s\n", doc.model_json);
		fflush(stdout);
	}
	rec.model_json = doc.model_json;
	rec.review_text = doc.text;
	rc = pk_test_record(run->store, &review_id, res, &rec, err);
	row->body = g_steal_pointer(&doc.text);
	pk_review_doc_clear(&doc);
	if (rc < 0)
		return -1;
	if (!run->first_review)
		run->first_review = review_id;
	run->last_review = review_id;
	return 0;
}

/* A commit that is not tested: listed in the table (and in JSON), not stored. */
static void skip_commit(struct run *run, struct run_row *row, const char *why)
{
	row->skipped = why;
	if (run->json) {
		g_autoptr(JsonBuilder) b = json_builder_new();

		json_builder_begin_object(b);
		pk_json_str(b, "commit", row->commit);
		pk_json_str(b, "subject", row->subject);
		pk_json_str(b, "skipped", why);
		json_builder_end_object(b);
		pk_json_print(b);
	}
}

/* Test one commit of the range into a new row of the table. */
static int run_commit(struct run *run, const struct pk_range_commit *c, GError **err)
{
	struct run_row *row = g_new0(struct run_row, 1);
	struct pk_test_result res = { 0 };
	double t0 = pk_now();

	row->commit = g_strdup(c->id);
	row->subject = g_strdup(c->subject);
	row->boot = row->index = row->findings = -1;
	g_ptr_array_add(run->rows, row);
	if (c->merge) {
		skip_commit(run, row, "merge");
		return 0;
	}
	if (!c->parent) {
		skip_commit(run, row, "root commit");
		return 0;
	}
	run_progress(run, "scanning");
	switch (pk_sequence_test_commit(&run->seq, c->id, &res, err)) {
	case -1:
		return -1;
	case 1:   /* the mask just learnt (or found) serves the next parents too */
		pk_info("the noise mask learnt from %u boots of %.12s serves every parent after it",
			res.noise_boots, res.noise_commit);
		break;
	}
	row->verdict = res.verdict;
	row->findings = res.scan->findings->len;
	if (res.diff) {
		row->boot = res.diff->changes->len;
		row->index = res.diff->index_changes->len;
	}
	if (res.verdict != PK_VERDICT_NO_CHURN || run->seq.opts.build_without_churn) {
		run->built++;
		run->build_seconds += pk_now() - t0;
	}
	if (review_commit(run, row, &res, err) < 0) {
		pk_test_result_clear(&res);
		return -1;
	}
	pk_test_result_clear(&res);
	return 0;
}

static void print_count(int n)
{
	if (n < 0)
		printf(" %6s", "-");
	else
		printf(" %6d", n);
}

/* The summary table, then the review of every commit that changed the console or failed. */
static void print_summary(const struct run *run)
{
	printf("%s: %u commit%s (%s)\n\n", run->range->spec, run->rows->len, run->rows->len == 1 ? "" : "s",
	       run->range->repo);
	printf("%-12s  %-17s %6s %6s %6s  %s\n", "commit", "verdict", "boot", "index", "static", "subject");
	for (guint i = 0; i < run->rows->len; i++) {
		const struct run_row *r = run->rows->pdata[i];
		g_autofree char *skipped = r->skipped ? g_strdup_printf("(%s)", r->skipped) : NULL;

		pk_print_text("%.12s  %-17s", r->commit, r->verdict ? pk_verdict_name(r->verdict) : skipped);
		print_count(r->boot);
		print_count(r->index);
		print_count(r->findings);
		pk_print_text("  %s\n", r->subject);
	}
	for (guint i = 0; i < run->rows->len; i++) {
		const struct run_row *r = run->rows->pdata[i];

		if (!pk_verdict_is_bad(r->verdict) || !r->body)
			continue;
		pk_print_text("\n========================================================================\n"
			      "commit %s\n\n%s", r->commit, r->body);
	}
	fflush(stdout);
}

static int run_status(const struct run *run)
{
	for (guint i = 0; i < run->rows->len; i++) {
		const struct run_row *r = run->rows->pdata[i];
		if (pk_verdict_is_bad(r->verdict))
			return 1;
	}
	return 0;
}

/* Read the range from the user's repository, bring it into the lab, and name its source. */
static int open_range(struct run *run, const char *repo, const char *const *spec, bool all_parents,
		      GError **err)
{
	g_autofree char *name = NULL;

	if (pk_range_load(&run->range, &run->lab, repo, spec, all_parents, err) < 0)
		return -1;
	name = g_strdup_printf("%s %s", run->range->repo, run->range->spec);
	return pk_store_add_source(run->store, &run->source_id, "git", name, NULL, err);
}

/* The command line of run (--config and --db are main's). */
struct run_opts {
	const char *repo;
	bool all;
	bool json;
	bool all_parents;
	double timeout;          /* 0: the config's, else the default */
	bool allow_build;
};

static const struct pk_option run_options[] = {
	PK_OPTION_STRING("repo", struct run_opts, repo),
	PK_OPTION_FLAG("all", struct run_opts, all),
	PK_OPTION_FLAG("json", struct run_opts, json),
	PK_OPTION_FLAG("all-parents", struct run_opts, all_parents),
	PK_OPTION_CONFIG,
	PK_OPTION_DURATION("timeout", struct run_opts, timeout),
	PK_OPTION_DB,
	PK_OPTION_FLAG("allow-build-system", struct run_opts, allow_build),
	{ NULL },
};

static int cmd_run(struct pk_cmd_ctx *ctx)
{
	const struct run_opts *o = ctx->cmdline.opts;
	const struct pk_config *config = &ctx->config;
	struct run run = { 0 };
	g_autoptr(GError) err = NULL;
	int status = 2;

	run.rows = g_ptr_array_new_with_free_func(run_row_free);
	run.start = pk_now();
	run.json = o->json;
	/* struct run owns its lab and store, as its workers expect */
	pk_cmd_ctx_take_lab(ctx, &run.lab);
	run.store = pk_cmd_ctx_take_store(ctx);
	pk_sequence_init(&run.seq, &run.lab, run.store);
	pk_sequence_opts(&run.seq.opts, &config->test, &config->policy, o->timeout);
	run.seq.opts.policy.allow_build_system |= o->allow_build;
	run.seq.opts.build_without_churn = o->all;
	run.seq.opts.progress = run_progress;
	run.seq.opts.progress_data = &run;
	if (open_range(&run, o->repo, (const char *const *)ctx->cmdline.args, o->all_parents, &err) < 0)
		goto fail;
	pk_sequence_start_commits(&run.seq, run.range->base);
	run.total = run.range->commits->len;
	run.to_build = count_to_build(&run);
	pk_info("%s: %u commit%s, %u to build%s", run.range->spec, run.total, run.total == 1 ? "" : "s",
		run.to_build, run.range->merges ? " (merges are listed, not tested)" : "");
	for (guint i = 0; i < run.range->commits->len; i++) {
		run.index = i + 1;
		if (run_commit(&run, run.range->commits->pdata[i], &err) < 0)
			goto fail;
	}
	pk_progress("%s", "");
	if (!run.json)
		print_summary(&run);
	if (run.first_review)
		pk_info("stored as reviews %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT " (printkbot report ID)",
			run.first_review, run.last_review);
	status = run_status(&run);
	goto out;
fail:
	pk_progress("%s", "");
	fprintf(stderr, "printkbot run: %s\n", err->message);
	status = 2;
out:
	g_ptr_array_unref(run.rows);
	pk_sequence_clear(&run.seq);
	pk_range_free(run.range);
	pk_store_close(run.store);
	pk_lab_clear(&run.lab);
	return status;
}

const struct pk_cmd_spec cmd_run_spec = {
	.usage = run_usage,
	.options = run_options,
	.opts_size = sizeof(struct run_opts),
	.args_name = "RANGE...",
	.args_min = 1, .args_max = G_MAXUINT,
	.setup_status = 2,
	.run = cmd_run,
};
