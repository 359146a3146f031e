/* cmd-scan.c - `printkbot scan`: static findings for patches and mails. */
#include "cmd/commands.h"
#include "base/jsonline.h"
#include "analysis/scan.h"
#include "analysis/tree.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

/* A mailbox larger than this is refused rather than read into memory. */
#define SCAN_MAX_INPUT (512u * 1024 * 1024)

static const char scan_usage[] =
	"usage: printkbot scan [--json] [--tree DIR] [FILE|-]...\n"
	"   or: printkbot scan --tree DIR --describe PATH...\n\n"
	"Read patches (a plain diff, a patch mail or an mbox; '-' or no FILE is\n"
	"standard input) and report what they do to printk-family calls, without\n"
	"building anything.\n\n"
	"    --json        one JSON object per patch (JSON Lines)\n"
	"    --tree DIR    a kernel source tree the patches apply to: findings then\n"
	"                  state the prefix each message prints (pr_fmt() with the\n"
	"                  file's KBUILD_MODNAME), and a pr_fmt() change counts every\n"
	"                  pr_*() call of the file\n"
	"    --describe    print what the tree says about each PATH of it (unit,\n"
	"                  KBUILD_MODNAME, pr_fmt(), prefix) instead of scanning\n\n"
	"text output: a '# subject' line per patch, then file:line: kind: sentence\n"
	"exit status: 0 no findings, 1 findings, 2 bad input or usage\n";

/* The command line of scan. */
struct scan_opts {
	bool json;
	const char *tree_dir;   /* --tree */
	bool describe;
};

static const struct pk_option scan_options[] = {
	PK_OPTION_FLAG("json", struct scan_opts, json),
	PK_OPTION_STRING("tree", struct scan_opts, tree_dir),
	PK_OPTION_FLAG("describe", struct scan_opts, describe),
	{ NULL },
};

/* How one scan runs. */
struct scan_run {
	bool json;
	struct pk_tree *tree;   /* NULL without --tree */
};

static void json_finding(GString *b, const struct pk_finding *f)
{
	pk_jl_open(b, NULL, '{');
	pk_jl_str(b, "file", f->file);
	pk_jl_int(b, "line", f->line);
	pk_jl_str(b, "kind", pk_finding_kind_name(f->kind));
	pk_jl_str(b, "old_call", f->old_call);
	pk_jl_str(b, "new_call", f->new_call);
	pk_jl_str(b, "old_level", f->old_level);
	pk_jl_str(b, "new_level", f->new_level);
	pk_jl_str(b, "old_text", f->old_text);
	pk_jl_str(b, "new_text", f->new_text);
	pk_jl_bool(b, "silent", f->silent);
	if (f->old_prefix || f->new_prefix) {
		pk_jl_str(b, "old_prefix", f->old_prefix);
		pk_jl_str(b, "new_prefix", f->new_prefix);
	}
	if (pk_finding_is_pr_fmt(f->kind)) {
		pk_jl_int(b, "affected", f->affected);
		pk_jl_bool(b, "affected_whole_file", f->affected_whole_file);
	}
	pk_jl_str(b, "message", f->message);
	pk_jl_close(b, '}');
}

static void print_json(const struct pk_patch *p, const struct pk_scan *s)
{
	g_autoptr(GString) b = g_string_new(NULL);

	pk_jl_open(b, NULL, '{');
	pk_jl_str(b, "subject", p->subject);
	pk_jl_str(b, "message_id", p->message_id);
	pk_jl_str(b, "author", p->author);
	pk_jl_str(b, "verdict", pk_verdict_name(s->verdict));
	pk_jl_str(b, "error", p->error);
	pk_jl_open(b, "findings", '[');
	for (guint i = 0; i < s->findings->len; i++)
		json_finding(b, s->findings->pdata[i]);
	pk_jl_close(b, ']');
	pk_jl_close(b, '}');
	puts(b->str);
}

static void print_text(const char *input, const struct pk_patch *p, const struct pk_scan *s)
{
	printf("# %s: %s\n", p->subject ? p->subject : input, pk_verdict_name(s->verdict));
	if (p->error)
		fprintf(stderr, "printkbot: %s: %s: malformed diff: %s\n", input,
			p->message_id ? p->message_id : "(no Message-ID)", p->error);
	for (guint i = 0; i < s->findings->len; i++) {
		const struct pk_finding *f = s->findings->pdata[i];
		printf("%s:%d: %s: %s\n", f->file, f->line, pk_finding_kind_name(f->kind), f->message);
	}
}

/* Scan one input; returns 0 clean, 1 findings, 2 bad input. */
static int scan_one(const char *path, const struct scan_run *o)
{
	g_autofree char *buf = NULL;
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	unsigned skipped = 0;
	size_t len = 0;
	int rc = 0;

	if (pk_read_file(&buf, &len, path, SCAN_MAX_INPUT, &err) < 0 ||
	    pk_patch_read_mails(&patches, &skipped, buf, len, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return 2;
	}
	for (guint i = 0; i < patches->len; i++) {
		const struct pk_patch *p = patches->pdata[i];
		g_autoptr(pk_scan_result) s = pk_scan_tree(p, o->tree);

		if (o->json)
			print_json(p, s);
		else
			print_text(path, p, s);
		rc = MAX(rc, p->error ? 2 : s->findings->len ? 1 : 0);
	}
	if (skipped)
		pk_info("%s: %u mail(s) without a diff skipped", path, skipped);
	return rc;
}

/* --describe: one line (or JSON object) per path of the tree. */
static int describe(struct pk_tree *tree, char **paths, unsigned n, bool json)
{
	for (unsigned i = 0; i < n; i++) {
		g_autoptr(pk_tree_file) f = pk_tree_describe(tree, paths[i], NULL);

		if (json) {
			g_autoptr(GString) b = g_string_new(NULL);
			pk_jl_open(b, NULL, '{');
			pk_jl_str(b, "path", f->path);
			pk_jl_str(b, "unit", f->unit);
			pk_jl_str(b, "modname", f->modname);
			pk_jl_str(b, "pr_fmt", f->pr_fmt);
			pk_jl_str(b, "pr_fmt_file", f->pr_fmt_file);
			pk_jl_str(b, "prefix", f->prefix);
			pk_jl_close(b, '}');
			puts(b->str);
		} else {
			printf("%s: unit %s, KBUILD_MODNAME %s, pr_fmt %s%s%s, prefix %s%s%s\n", f->path,
			       f->unit ? f->unit : "unknown", f->modname ? f->modname : "unknown",
			       f->pr_fmt ? f->pr_fmt : "default",
			       f->pr_fmt_file ? " from " : "", f->pr_fmt_file ? f->pr_fmt_file : "",
			       f->prefix ? "\"" : "", f->prefix ? f->prefix : "unknown", f->prefix ? "\"" : "");
		}
	}
	return 0;
}

static int scan_check(const struct pk_cmdline *cl, GError **err)
{
	const struct scan_opts *o = cl->opts;

	if (o->describe && !o->tree_dir) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--describe needs --tree DIR");
		return -1;
	}
	return 0;
}

static int cmd_scan(struct pk_cmd_ctx *ctx)
{
	const struct scan_opts *o = ctx->cmdline.opts;
	char **args = ctx->cmdline.args;
	g_autoptr(pk_tree) tree = NULL;
	g_autoptr(GError) err = NULL;
	struct scan_run run = { o->json, NULL };
	int rc = 0;

	if (o->tree_dir && pk_tree_open(&tree, o->tree_dir, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return 2;
	}
	if (o->describe)
		return describe(tree, args, ctx->cmdline.n_args, o->json);
	run.tree = tree;
	for (char **a = args; *a; a++) {
		int one = scan_one(*a, &run);   /* not inside MAX(): it evaluates twice */
		rc = MAX(rc, one);
	}
	if (!*args)
		rc = scan_one("-", &run);
	return rc;
}

const struct pk_cmd_spec cmd_scan_spec = {
	.usage = scan_usage,
	.options = scan_options,
	.opts_size = sizeof(struct scan_opts),
	.args_max = G_MAXUINT,
	.check = scan_check,
	.setup_status = 2,
	.run = cmd_scan,
};
