/*
 * cmd-bisect.c - `printkbot bisect`: the first commit of a branch that
 * changed a message, for every console change between the branch's ends.
 */
#include "cmd/commands.h"
#include "config/config.h"
#include "base/jsonout.h"
#include "pipeline/range-bisect.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

/* Index changes shown per commit in the text output; --json has them all. */
#define INDEX_SHOWN 3

static const char bisect_usage[] =
	"usage: printkbot bisect [--repo DIR] [--message TEXT] [--json] [--config FILE]\n"
	"                        [--timeout SECONDS] [--db FILE] [--allow-build-system] RANGE...\n\n"
	"Build and boot the two ends of RANGE (spelt as for `printkbot run`) and\n"
	"compare what they print; then, for each change between them (or only\n"
	"what matches --message), find the first commit that brought it, by\n"
	"bisection along the first parents: about log2(commits) builds, fewer\n"
	"when commits were built before (run and bisect store every build and\n"
	"boot).  A commit that does not build or boot is skipped, as `git bisect\n"
	"run` skips on exit status 125; when skipped commits could hold the change\n"
	"instead, the result says so and names them.  The result names the commit,\n"
	"its author and subject, and the change.  When the range touches drivers the\n"
	"lab's config does not compile, every commit is built on a config derived for\n"
	"the range's whole diff, which the output names.  Your repository is only read.\n\n"
	"  --repo DIR            the repository to read the range from (default: the\n"
	"                        one the current directory is in)\n"
	"  --message TEXT        only what prints (or can print) a message containing\n"
	"                        TEXT: the first commit after which those records and\n"
	"                        printk index entries are no longer as at the base\n"
	"  --json                one JSON object: the ends, every change with its\n"
	"                        commit, and the builds it took\n"
	"  --config FILE         settings and policy (see config.example)\n"
	"  --timeout SECONDS     per boot (default 60); a unit may follow: 90s, 2m, 1h\n"
	"  --db FILE             the store (default $PRINTKBOT_DB or <cache>/printkbot.db)\n"
	"  --allow-build-system  accepted for symmetry with run; a commit is built as it is\n\n"
	"exit status: 0 every change found its first commit, 1 the ends print the\n"
	"same (or nothing matching TEXT changed), 2 bad range or usage, an end\n"
	"that does not build or boot, or the bot could not work, 3 some change's\n"
	"first commit is ambiguous because commits were skipped.\n";

/* ---------------------------------------------------------------- output */

static const struct pk_range_commit *line_commit(const struct pk_range_bisect *b, unsigned i)
{
	return i ? b->range->commits->pdata[i - 1] : NULL;
}

static char *date_text(gint64 t)
{
	g_autoptr(GDateTime) d = g_date_time_new_from_unix_utc(t);
	return d ? g_date_time_format(d, "%Y-%m-%d") : g_strdup("?");
}

static void print_text(const struct pk_range_bisect *b)
{
	unsigned n = b->line->len - 1;

	printf("%s: %u commit%s from %.12s to %.12s (%s)\n", b->range->spec, n, n == 1 ? "" : "s",
	       (char *)b->line->pdata[0], (char *)b->line->pdata[n], b->range->repo);
	if (b->derived.lines) {
		g_autofree char *lines = g_strdelimit(g_strdup(b->derived.lines), "\n", ' ');
		printf("config: the lab's, derived for the range's drivers (%s):%s%s\n", b->lab.config_hash,
		       *lines == ' ' ? "" : " ", g_strchomp(lines));
	}
	if (b->derived.devices)
		printf("devices: %s\n", b->derived.devices);
	/* one paragraph per first commit, in line order; index changes past a few are counted */
	for (unsigned i = 1; i <= n; i++) {
		const struct pk_range_commit *c = line_commit(b, i);
		bool header = false;
		unsigned index_shown = 0, index_more = 0;

		for (guint k = 0; k < b->targets->len; k++) {
			const struct pk_bisect_target *t = b->targets->pdata[k];

			if (!t->searched || t->result.first != i)
				continue;
			if (!strcmp(t->stage, "index") && index_shown == INDEX_SHOWN && !pk_bisect_ambiguous(&t->result)) {
				index_more++;
				continue;
			}
			index_shown += !strcmp(t->stage, "index");
			if (!header) {
				g_autofree char *date = date_text(c->time);
				pk_print_text("\n%.12s %s\n  author: %s, %s%s\n", c->id, c->subject, c->author, date,
					      c->merge ? " (a merge: the change came with the branch it merged)" : "");
				header = true;
			}
			{
				g_autofree char *what = pk_wrap(t->what, 68, "    ");
				pk_print_text("  %s: %s\n", t->stage, what);
			}
			if (pk_bisect_ambiguous(&t->result)) {
				printf("    ambiguous: skipped commits before it could have brought it instead:");
				for (guint s = 0; s < t->result.skipped->len; s++) {
					unsigned j = g_array_index(t->result.skipped, unsigned, s);
					printf(" %.12s (%s)", line_commit(b, j)->id, pk_range_bisect_skip_reason(b, j));
				}
				printf("\n");
			}
		}
		if (index_more)
			printf("  index: and %u more printk index change%s (--json lists them)\n", index_more,
			       index_more == 1 ? "" : "s");
	}
	for (guint k = 0; k < b->targets->len; k++) {
		const struct pk_bisect_target *t = b->targets->pdata[k];
		if (!t->searched)
			pk_print_text("\nnot searched (its records print elsewhere too, unchanged): %s\n", t->what);
	}
	printf("\n%u change%s between the ends; %u build%s (%u for the ends, %u for the search), "
	       "%u commit%s taken from the store\n", b->targets->len, b->targets->len == 1 ? "" : "s",
	       b->builds, b->builds == 1 ? "" : "s", b->builds_ends, b->builds - b->builds_ends,
	       b->from_store, b->from_store == 1 ? "" : "s");
}

static void print_json(const struct pk_range_bisect *b)
{
	g_autoptr(JsonBuilder) j = json_builder_new();
	unsigned n = b->line->len - 1;

	json_builder_begin_object(j);
	pk_json_str(j, "range", b->range->spec);
	pk_json_str(j, "repo", b->range->repo);
	pk_json_str(j, "base", b->line->pdata[0]);
	pk_json_str(j, "tip", b->line->pdata[n]);
	pk_json_int(j, "commits", n);
	pk_json_str(j, "message", b->message);
	pk_json_int(j, "builds", b->builds);
	pk_json_int(j, "builds_ends", b->builds_ends);
	pk_json_int(j, "builds_search", b->builds - b->builds_ends);
	pk_json_int(j, "from_store", b->from_store);
	pk_json_str(j, "config", b->lab.config_hash);
	pk_json_str(j, "config_derived", b->derived.lines);
	pk_json_str(j, "devices", b->derived.devices);
	json_builder_set_member_name(j, "changes");
	json_builder_begin_array(j);
	for (guint k = 0; k < b->targets->len; k++) {
		const struct pk_bisect_target *t = b->targets->pdata[k];
		const struct pk_range_commit *c = t->searched ? line_commit(b, t->result.first) : NULL;

		json_builder_begin_object(j);
		pk_json_str(j, "stage", t->stage);
		pk_json_str(j, "kind", t->kind);
		pk_json_str(j, "change", t->what);
		pk_json_bool(j, "searched", t->searched);
		pk_json_str(j, "commit", c ? c->id : NULL);
		pk_json_str(j, "subject", c ? c->subject : NULL);
		pk_json_str(j, "author", c ? c->author : NULL);
		pk_json_int(j, "time", c ? c->time : 0);
		pk_json_bool(j, "merge", c && c->merge);
		pk_json_bool(j, "ambiguous", t->searched && pk_bisect_ambiguous(&t->result));
		json_builder_set_member_name(j, "skipped");
		json_builder_begin_array(j);
		for (guint s = 0; t->searched && s < t->result.skipped->len; s++)
			json_builder_add_string_value(j, line_commit(b, g_array_index(t->result.skipped, unsigned, s))->id);
		json_builder_end_array(j);
		pk_json_int(j, "tests", t->searched ? t->result.tests : 0);
		json_builder_end_object(j);
	}
	json_builder_end_array(j);
	json_builder_end_object(j);
	pk_json_print(j);
}

static int bisect_status(const struct pk_range_bisect *b)
{
	int status = 0;

	for (guint k = 0; k < b->targets->len; k++) {
		const struct pk_bisect_target *t = b->targets->pdata[k];
		if (t->searched && pk_bisect_ambiguous(&t->result))
			status = 3;
	}
	return status;
}

/* ---------------------------------------------------------------- the command */

/* The bisection's outcome printed; returns the exit status. */
static int print_outcome(const struct pk_range_bisect *b, bool json)
{
	unsigned n = b->line->len - 1;

	if (!b->targets->len || (b->message && !((struct pk_bisect_target *)b->targets->pdata[0])->searched)) {
		if (b->message)
			pk_info("nothing printing `%s` changed between %.12s and %.12s", b->message,
				(char *)b->line->pdata[0], (char *)b->line->pdata[n]);
		else
			pk_info("%.12s and %.12s print the same: nothing to bisect", (char *)b->line->pdata[0],
				(char *)b->line->pdata[n]);
		if (json)
			print_json(b);
		return 1;
	}
	if (json)
		print_json(b);
	else
		print_text(b);
	return bisect_status(b);
}

/* The command line of bisect (--config and --db are main's). */
struct bisect_opts {
	const char *repo;
	const char *message;
	bool json;
	double timeout;          /* 0: the config's, else the default */
	bool allow_build;        /* accepted, not used: a commit is built as it is */
};

static const struct pk_option bisect_options[] = {
	PK_OPTION_STRING("repo", struct bisect_opts, repo),
	PK_OPTION_STRING("message", struct bisect_opts, message),
	PK_OPTION_FLAG("json", struct bisect_opts, json),
	PK_OPTION_CONFIG,
	PK_OPTION_DURATION("timeout", struct bisect_opts, timeout),
	PK_OPTION_DB,
	PK_OPTION_FLAG("allow-build-system", struct bisect_opts, allow_build),
	{ NULL },
};

static int bisect_check(const struct pk_cmdline *cl, GError **err)
{
	const struct bisect_opts *o = cl->opts;

	if (o->message && !*o->message) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--message wants a text, not ''");
		return -1;
	}
	return 0;
}

static int cmd_bisect(struct pk_cmd_ctx *ctx)
{
	const struct bisect_opts *o = ctx->cmdline.opts;
	struct pk_range_bisect b = { 0 };
	struct pk_test_opts topts = { 0 };
	struct pk_lab lab;
	g_autoptr(GError) err = NULL;
	int status = 2, rc;

	topts.policy = ctx->config.policy;
	topts.boot_timeout = o->timeout ? o->timeout : ctx->config.test.boot_timeout;
	pk_cmd_ctx_take_lab(ctx, &lab);
	if (pk_range_bisect_open(&b, &lab, pk_cmd_ctx_take_store(ctx), &topts, o->repo,
				 (const char *const *)ctx->cmdline.args, o->message, &err) < 0 ||
	    (rc = pk_range_bisect_run(&b, &err)) < 0) {
		pk_progress("%s", "");
		fprintf(stderr, "printkbot bisect: %s\n", err->message);
	} else if (rc == 1) {
		fprintf(stderr, "printkbot bisect: %s\n", err->message);
	} else {
		status = print_outcome(&b, o->json);
	}
	pk_range_bisect_clear(&b);
	return status;
}

const struct pk_cmd_spec cmd_bisect_spec = {
	.usage = bisect_usage,
	.options = bisect_options,
	.opts_size = sizeof(struct bisect_opts),
	.args_name = "RANGE...",
	.args_min = 1, .args_max = G_MAXUINT,
	.check = bisect_check,
	.setup_status = 2,
	.run = cmd_bisect,
};
