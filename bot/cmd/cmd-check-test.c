/*
 * cmd-check-test.c - `printkbot check` in printkbot-core: the static check
 * (cmd-check.c), or with --test the patch tested as `test` tests it, its
 * review stored, and its verdict and changes said as b4 check lines.
 */
#include "cmd/cmd-check.h"
#include "base/patch.h"
#include "base/util.h"
#include "intake/mail.h"
#include "lab/bases.h"
#include "lab/describe.h"
#include "pipeline/monitor.h"
#include "pipeline/sequence.h"
#include "pipeline/test.h"
#include "report/check.h"
#include "report/review.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * b4 takes every line on standard error for a failed check, and a test
 * logs on its way (the lab's lock awaited, the review stored): that goes
 * to a file of its own, kept and named only when the check fails.
 */
struct quiet {
	int saved;       /* the real standard error, -1 when not redirected */
	char *log;       /* the file standard error goes to */
};

static int quiet_start(struct quiet *q, GError **err)
{
	g_autoptr(GError) e = NULL;
	int fd = g_file_open_tmp("printkbot-check-XXXXXX.log", &q->log, &e);

	q->saved = -1;
	if (fd < 0)
		return pk_error(err, PK_ERROR_FAILED, "a log for --test: %s", e->message);
	fflush(stderr);
	q->saved = dup(STDERR_FILENO);
	if (q->saved < 0 || dup2(fd, STDERR_FILENO) < 0) {
		int saved_errno = errno;

		close(fd);
		return pk_error(err, PK_ERROR_FAILED, "a log for --test: %s", g_strerror(saved_errno));
	}
	close(fd);
	return 0;
}

/* Standard error back; the log removed unless keep. */
static void quiet_end(struct quiet *q, bool keep)
{
	if (q->saved >= 0) {
		fflush(stderr);
		dup2(q->saved, STDERR_FILENO);
		close(q->saved);
		q->saved = -1;
	}
	if (q->log && !keep)
		unlink(q->log);
	if (q->log && keep)
		fprintf(stderr, "printkbot check: what it logged is in %s\n", q->log);
	g_clear_pointer(&q->log, g_free);
}

/* Where the input's series goes: --base, else base-commit:, else the config's bases as `test` chooses. */
static int choose(struct pk_base_choice *out, struct pk_cmd_ctx *ctx, const struct check_opts *o,
		  struct pk_bases_refetch *refetch, const char *buf, size_t len, GPtrArray *patches, GError **err)
{
	const struct pk_config *config = &ctx->config;
	g_autofree char *base_commit = o->base ? NULL : pk_mail_find_base_commit(buf, len);
	g_auto(GStrv) bases = NULL;

	if (o->base)
		bases = g_strdupv((char *[]){ (char *)o->base, NULL });
	else
		bases = pk_sequence_bases(&ctx->lab, &config->test);
	return pk_bases_choose(out, &ctx->lab, base_commit, config->trees, refetch, (const char *const *)bases,
			       (const struct pk_patch *const *)patches->pdata, patches->len, err);
}

/* Test, review and store one patch; its lines into lines.  -1 with err when the bot could not. */
static int check_one(struct pk_cmd_ctx *ctx, const struct pk_test_opts *topts, const struct pk_patch *p,
		     const struct pk_base_choice *base, const char *parent, const struct pk_review_info *info,
		     gint64 source_id, GPtrArray *lines, char **next_parent, GError **err)
{
	struct pk_test_result res = { 0 };
	struct pk_review_doc doc = { 0 };
	gint64 review_id;
	int rc = -1;

	if (pk_test_patch(&res, &ctx->lab, ctx->store, topts, p, parent, err) < 0)
		return -1;
	/* the line says why this base refused it; the review names every base tried */
	pk_check_test_lines(lines, &res, base->name);
	if (res.verdict == PK_VERDICT_DOES_NOT_APPLY)
		pk_bases_tried_reason(&res.reason, base);
	if (pk_review_doc_make(&doc, p, &res, info, err) < 0)
		goto out;
	if (ctx->store) {
		struct pk_test_record_info rec = { p, source_id, ctx->lab.config_hash, doc.model_json, doc.text };

		if (pk_test_record(ctx->store, &review_id, &res, &rec, err) < 0)
			goto out;
		pk_info("stored as review %" G_GINT64_FORMAT, review_id);
	}
	if (res.after.commit) {
		g_free(*next_parent);
		*next_parent = g_strdup(res.after.commit);
	}
	rc = 0;
out:
	pk_review_doc_clear(&doc);
	pk_test_result_clear(&res);
	return rc;
}

static int check_test(struct pk_cmd_ctx *ctx, const char *path, GError **err)
{
	static const struct pk_command all = {
		"check", PK_NEEDS_CONFIG | PK_NEEDS_LAB | PK_NEEDS_STORE, &cmd_check_spec, NULL
	};
	const struct check_opts *o = ctx->cmdline.opts;
	g_autofree char *buf = NULL, *parent = NULL, *kernel = NULL, *compiler = NULL;
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GPtrArray) lines = pk_check_lines_new();
	g_autoptr(pk_rules) rules = NULL;
	g_autoptr(GError) e = NULL;
	struct pk_base_choice base = { 0 };
	struct pk_bases_refetch refetch = { 0 };
	struct pk_test_opts topts = { 0 };
	const char *rules_path;
	gint64 source_id = 0;
	unsigned skipped = 0;
	size_t len = 0;
	int rc = -1;

	if (pk_command_setup(ctx, &all, err) < 0 ||
	    pk_read_file(&buf, &len, path, ctx->config.policy.max_mail_size, err) < 0 ||
	    pk_patch_read_mails(&patches, &skipped, buf, len, err) < 0)
		goto out;
	if (!patches->len) {
		pk_error(err, PK_ERROR_INPUT, "%s: no patch in it", strcmp(path, "-") ? path : "standard input");
		goto out;
	}
	rules_path = o->rules ? o->rules : ctx->config.test.rules;
	if (rules_path && pk_monitor_rules_load(&rules, rules_path, err) < 0)
		goto out;
	refetch.interval = ctx->config.daemon.fetch_interval;
	if ((ctx->store && pk_store_add_source(ctx->store, &source_id, "mbox", path, NULL, err) < 0) ||
	    choose(&base, ctx, o, &refetch, buf, len, patches, err) < 0)
		goto out;
	if (!(kernel = pk_describe_base(&ctx->lab, base.rev, &e)))
		g_clear_error(&e);
	if (!(compiler = pk_describe_compiler(pk_lab_arch(&ctx->lab), &e)))
		g_clear_error(&e);
	pk_sequence_opts(&topts, &ctx->config.test, &ctx->config.policy, o->timeout);
	topts.noise_base = base.rev;
	topts.rules = rules;
	parent = g_strdup(base.rev);
	for (guint i = 0; i < patches->len; i++) {
		struct pk_review_info info = { path, i + 1, patches->len, base.name, ctx->lab.config_hash,
					       .kernel = kernel, .compiler = compiler };

		if (check_one(ctx, &topts, patches->pdata[i], &base, parent, &info, source_id, lines, &parent, err) < 0)
			goto out;
	}
	for (guint i = 0; i < lines->len; i++) {
		g_autofree char *line = pk_check_line_format(lines->pdata[i]);

		puts(line);
	}
	rc = lines->len ? 1 : 0;
out:
	pk_base_choice_clear(&base);
	pk_bases_refetch_clear(&refetch);
	return rc;
}

static int cmd_check(struct pk_cmd_ctx *ctx)
{
	const struct check_opts *o = ctx->cmdline.opts;
	const char *path = ctx->cmdline.n_args ? ctx->cmdline.args[0] : "-";
	struct quiet q = { -1, NULL };
	g_autoptr(GError) err = NULL;
	int rc;

	if (!o->test)
		return check_static(path);
	if (quiet_start(&q, &err) < 0) {
		fprintf(stderr, "printkbot check: %s\n", err->message);
		return 2;
	}
	rc = check_test(ctx, path, &err);
	if (rc < 0)
		fprintf(stderr, "printkbot check: %s\n", err->message);
	quiet_end(&q, rc < 0);
	if (rc < 0)
		fprintf(stderr, "printkbot check: %s\n", err->message);
	return rc < 0 ? 2 : rc;
}

/* A bad --rules file is a usage error, said before the lab is waited for. */
static int check_check(const struct pk_cmdline *cl, GError **err)
{
	const struct check_opts *o = cl->opts;
	g_autoptr(pk_rules) rules = NULL;
	g_autoptr(GError) e = NULL;

	if (check_validate(cl, err) < 0)
		return -1;
	if (o->rules && pk_monitor_rules_load(&rules, o->rules, &e) < 0) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--rules: %s", e->message);
		return -1;
	}
	return 0;
}

const struct pk_cmd_spec cmd_check_spec = {
	.usage = check_usage,
	.options = check_options,
	.opts_size = sizeof(struct check_opts),
	.args_name = "FILE|-",
	.args_max = 1,
	.check = check_check,
	.setup_status = 2,
	.run = cmd_check,
};
