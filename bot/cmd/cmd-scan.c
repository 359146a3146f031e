/* cmd-scan.c - `printkbot scan`: static findings for patches and mails. */
#include "cmd/commands.h"
#include "base/jsonline.h"
#include "analysis/digest.h"
#include "base/settings.h"
#include "analysis/scan.h"
#include "analysis/tree.h"
#include "base/util.h"
#include "intake/mbox.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A mail (or a diff) larger than this is refused rather than read into memory. */
#define SCAN_MAX_INPUT_MIB 512
#define SCAN_MAX_INPUT (SCAN_MAX_INPUT_MIB * 1024u * 1024)

static const char scan_usage[] =
	"usage: printkbot scan [--json] [--churn-only] [--tree DIR] [--no-limits] [FILE|-]...\n"
	"   or: printkbot scan --tree DIR --describe PATH...\n\n"
	"Read patches (a plain diff, a patch mail or an mbox; '-' or no FILE is\n"
	"standard input; a FILE compressed with xz or gzip, as list archives are, is\n"
	"read through xz -dc or gzip -dc) and report what they do to printk-family\n"
	"calls, without building anything.  The family is checkpatch.pl's logging\n"
	"functions: printk*(), pr_*(), dev_*(), netdev_*(), the <subsys>_<level>()\n"
	"wrappers (drm_err(), pci_info(), btrfs_err()...), <subsys>_printk(),\n"
	"dev_err_probe(), dev_warn_probe(), WARN*() and panic().  Each changed call\n"
	"is judged as it prints, pr_fmt() prefix and format together: the prefix\n"
	"before the patch and after it come from the pr_fmt() the patch removes,\n"
	"adds or shows (with KBUILD_MODNAME from the object name, kernel/foo.c\n"
	"giving \"foo\"), or from the tree.\n\n"
	"    --json        one JSON object per patch (JSON Lines)\n"
	"    --churn-only  only the patches that touch a printk-family call (not\n"
	"                  no-churn): a list's archive shows its churn alone\n"
	"    --tree DIR    a kernel source tree the patches apply to: findings then\n"
	"                  state the prefix each message prints (pr_fmt() with the\n"
	"                  file's KBUILD_MODNAME), and a pr_fmt() change counts every\n"
	"                  pr_*() call of the file\n"
	"    --describe    print what the tree says about each PATH of it (unit,\n"
	"                  KBUILD_MODNAME, pr_fmt(), prefix) instead of scanning\n"
	"    --no-limits   scan a patch of any size: without it, one over the defaults\n"
	"                  of [policy] max_files and max_lines (200 files, 20000 lines)\n"
	"                  is not scanned (a scan takes about 50 times the diff's size\n"
	"                  in memory) and is reported as refused, with the limit\n\n"
	"text output: a '# subject: verdict' line per patch (with what of it could\n"
	"not be read, when it is damaged), then its findings grouped by cause and\n"
	"file, one line each (file:line: kind: sentence for a finding alone;\n"
	"file: kind: N calls ... (lines a, b, c and K more) for a cause that\n"
	"repeats), the advice of checkpatch's kinds after the changes, one line per\n"
	"kind; --json has every finding\n"
	"exit status, as test's: 0 nothing printed changes (no-churn,\n"
	"no-visible-change: a call converted, advice), 1 a patch changes what the\n"
	"kernel prints (console-changed; or a damaged or refused patch among\n"
	"readable ones), 2 bad input (unreadable, neither a mail nor a diff, or no\n"
	"patch in it could be read whole and scanned) or usage;\n"
	"mails without a diff are skipped, not bad input\n";

/* The command line of scan. */
struct scan_opts {
	bool json;
	bool churn_only;
	const char *tree_dir;   /* --tree */
	bool describe;
	bool no_limits;
};

static const struct pk_option scan_options[] = {
	PK_OPTION_FLAG("json", struct scan_opts, json),
	PK_OPTION_FLAG("churn-only", struct scan_opts, churn_only),
	PK_OPTION_STRING("tree", struct scan_opts, tree_dir),
	PK_OPTION_FLAG("describe", struct scan_opts, describe),
	PK_OPTION_FLAG("no-limits", struct scan_opts, no_limits),
	{ NULL },
};

/* How one scan runs. */
struct scan_run {
	bool json;
	bool churn_only;        /* --churn-only: no-churn patches not printed */
	struct pk_tree *tree;   /* NULL without --tree */
	struct pk_policy limits; /* max_files and max_lines: [policy]'s defaults, 0 with --no-limits */
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

/*
 * A header value without the blanks around it, or NULL: GMime keeps those
 * an encoded word brings ("=?UTF-8?Q?=20sched:...?=").  Returns a new string.
 */
static char *trimmed(const char *value)
{
	return value ? g_strstrip(g_strdup(value)) : NULL;
}

static void print_json(const struct pk_patch *p, const struct pk_scan *s, const char *refused)
{
	g_autoptr(GString) b = g_string_new(NULL);
	g_autofree char *subject = trimmed(p->subject), *message_id = trimmed(p->message_id);
	g_autofree char *author = trimmed(p->author);

	pk_jl_open(b, NULL, '{');
	pk_jl_str(b, "subject", subject);
	pk_jl_str(b, "message_id", message_id);
	pk_jl_str(b, "author", author);
	pk_jl_str(b, "verdict", pk_verdict_name(s->verdict));
	pk_jl_str(b, "error", p->error);
	if (refused)
		pk_jl_str(b, "reason", refused);
	pk_jl_open(b, "findings", '[');
	for (guint i = 0; i < s->findings->len; i++)
		json_finding(b, s->findings->pdata[i]);
	pk_jl_close(b, ']');
	pk_jl_close(b, '}');
	puts(b->str);
}

static void print_text(const char *input, const struct pk_patch *p, const struct pk_scan *s,
		       const char *refused)
{
	g_autofree char *subject = trimmed(p->subject), *raw_id = trimmed(p->message_id);
	/* the mail's own words drive no terminal: its Message-ID on stderr as well */
	g_autofree char *message_id = raw_id ? pk_text_for_terminal(raw_id) : NULL;

	if (p->error)   /* what the findings cover: the patch up to its damage */
		pk_print_text("# %s: %s (read only in part: %s)\n", subject ? subject : input,
			      pk_verdict_name(s->verdict), p->error);
	else
		pk_print_text("# %s: %s\n", subject ? subject : input, pk_verdict_name(s->verdict));
	if (refused)
		fprintf(stderr, "printkbot: %s: %s: not scanned: %s; --no-limits scans it\n", input,
			message_id ? message_id : "(no Message-ID)", refused);
	if (p->error)
		fprintf(stderr, "printkbot: %s: %s: malformed diff: %s\n", input,
			message_id ? message_id : "(no Message-ID)", p->error);
	g_autoptr(GPtrArray) groups = pk_digest(s->findings, NULL);

	/* a finding's text is the patch's: through pk_print_text(), as every line of it */
	for (guint i = 0; i < groups->len; i++) {
		g_autofree char *line = pk_digest_line(groups->pdata[i]);
		pk_print_text("%s\n", line);
	}
}

/* What scan_buffer() counted over an input. */
struct scan_tally {
	unsigned skipped;   /* mails without a diff */
	unsigned patches;   /* patches read */
	unsigned damaged;   /* of them, read only in part (p->error) or refused (over a limit) */
};

/*
 * Print the patches of buf (a diff, a mail, or an mbox's mail), counting
 * them into t; returns 0 clean, 1 findings (or a damaged patch), 2 when
 * buf cannot be read at all.
 */
static int scan_buffer(const char *path, const char *buf, size_t len, const struct scan_run *o,
		       struct scan_tally *t)
{
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	unsigned skip = 0;
	int rc = 0;

	if (pk_patch_read_mails(&patches, &skip, buf, len, &err) < 0) {
		fprintf(stderr, "printkbot: %s: %s\n", path, err->message);
		return 2;
	}
	t->skipped += skip;
	t->patches += patches->len;
	for (guint i = 0; i < patches->len; i++) {
		const struct pk_patch *p = patches->pdata[i];
		/* over a limit: not scanned, which would cost many times its size */
		g_autofree char *refused = pk_patch_over_limits(p, &o->limits);
		g_autoptr(pk_scan_result) s = pk_scan_tree(refused ? NULL : p, o->tree);

		if (refused)
			s->verdict = PK_VERDICT_REFUSED;
		t->damaged += p->error || refused;
		rc = MAX(rc, p->error || refused || s->verdict == PK_VERDICT_CONSOLE_CHANGED ? 1 : 0);
		if (o->churn_only && s->verdict == PK_VERDICT_NO_CHURN && !p->error)
			continue;
		if (o->json)
			print_json(p, s, refused);
		else
			print_text(path, p, s, refused);
	}
	return rc;
}

/*
 * An mbox, one mail at a time: memory stays bounded by the largest mail
 * however large the file (a list archive is a gigabyte).  first is the
 * first mail, already read.
 */
static int scan_mbox(const char *path, struct pk_mbox_reader *r, struct pk_mbox_mail *first,
		     const struct scan_run *o, struct scan_tally *t)
{
	struct pk_mbox_mail m = *first;
	g_autoptr(GError) err = NULL;
	int rc = 0, got = 1;

	for (; got > 0; got = pk_mbox_next(r, &m, &err)) {
		int one;

		if (!m.raw) {
			fprintf(stderr, "printkbot: %s: the mail at byte %" G_GINT64_FORMAT " is %" G_GINT64_FORMAT
				" bytes, more than the limit of %u: skipped\n", path, m.offset, m.size, SCAN_MAX_INPUT);
			rc = 2;
			continue;
		}
		one = scan_buffer(path, m.raw, m.len, o, t);
		rc = MAX(rc, one);
	}
	if (got < 0) {
		fprintf(stderr, "printkbot: %s: %s\n", path, err->message);
		return 2;
	}
	return rc;
}

/* A list archive is kept compressed: the decompressors that made it, rather than a library each. */
static const struct {
	const char *magic;
	size_t len;
	const char *program;
} compressors[] = {
	{ "\xfd" "7zXZ\0", 6, "xz" },
	{ "\x1f\x8b", 2, "gzip" },
};

/*
 * fd, or when it is a regular file that xz or gzip made, the read end of
 * that program's -dc of it (*child set, for input_close()).  The input
 * is read once, in order, so a pipe serves as the file would.
 */
static int input_open(const char *path, int fd, GPid *child, const char **program)
{
	char head[8];
	ssize_t n = pread(fd, head, sizeof head, 0);

	*child = 0;
	for (size_t i = 0; n > 0 && i < G_N_ELEMENTS(compressors); i++) {
		const char *argv[] = { compressors[i].program, "-dc", NULL };
		g_autoptr(GError) err = NULL;
		int pipefd[2];

		if ((size_t)n < compressors[i].len || memcmp(head, compressors[i].magic, compressors[i].len))
			continue;
		*program = compressors[i].program;
		if (!g_unix_open_pipe(pipefd, FD_CLOEXEC, NULL))
			return -1;
		if (!g_spawn_async_with_fds(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD,
					    NULL, NULL, child, fd, pipefd[1], -1, &err)) {
			fprintf(stderr, "printkbot: %s: is %s-compressed, and %s -dc could not run: %s\n", path,
				*program, *program, err->message);
			close(pipefd[0]);
			close(pipefd[1]);
			errno = 0;
			return -1;
		}
		close(pipefd[1]);
		close(fd);
		return pipefd[0];
	}
	return fd;
}

/* Close what input_open() gave; 2 when its decompressor failed (a damaged archive), else rc. */
static int input_close(const char *path, int fd, GPid child, const char *program, int rc)
{
	int status;

	close(fd);   /* a decompressor cut short by a scan that stopped early ends on SIGPIPE */
	if (!child)
		return rc;
	if (waitpid(child, &status, 0) < 0 || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
		fprintf(stderr, "printkbot: %s: %s -dc failed (exit %d): the archive is damaged or cut short\n",
			path, program, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return 2;
	}
	return rc;
}

/*
 * Scan one input; returns 0 clean, 1 findings, 2 bad input.  Bad input is
 * what cannot be read, or holds patches none of which could be read whole.
 * Mails without a diff are no patches at all, and a damaged patch among
 * readable ones is that patch's own problem (said on stderr, counted as a
 * finding): an mbox of a list's traffic is not bad input.
 */
static int scan_one(const char *path, const struct scan_run *o)
{
	g_autoptr(pk_mbox_reader) r = NULL;
	g_autoptr(GString) whole = g_string_new(NULL);
	g_autoptr(GError) err = NULL;
	struct pk_mbox_mail m = { 0 };
	struct scan_tally t = { 0 };
	const char *program = NULL;
	GPid child = 0;
	int fd, got, rc;

	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	if (fd >= 0 && strcmp(path, "-") && (fd = input_open(path, fd, &child, &program)) < 0 && !errno)
		return 2;   /* said */
	if (fd < 0) {
		fprintf(stderr, "printkbot: cannot read %s: %s\n", path, g_strerror(errno));
		return 2;
	}
	r = pk_mbox_reader_new(fd, 0, SCAN_MAX_INPUT);
	if ((got = pk_mbox_next(r, &m, &err)) > 0 && m.raw && m.len >= 5 && !memcmp(m.raw, "From ", 5)) {
		rc = scan_mbox(path, r, &m, o, &t);
		goto out;
	}
	/* a diff or one mail, whose body may hold a "From " line of its own: read whole */
	for (; got > 0 && m.raw && whole->len + m.len <= SCAN_MAX_INPUT; got = pk_mbox_next(r, &m, &err))
		g_string_append_len(whole, m.raw, (gssize)m.len);
	if (got != 0) {
		fprintf(stderr, "printkbot: %s: %s\n", path,
			got < 0 ? err->message : "more than the limit of " G_STRINGIFY(SCAN_MAX_INPUT_MIB) " MiB");
		return input_close(path, fd, child, program, 2);
	}
	rc = scan_buffer(path, whole->str, whole->len, o, &t);
out:
	rc = input_close(path, fd, child, program, rc);
	if (t.skipped)
		pk_info("%s: %u mail(s) without a diff skipped", path, t.skipped);
	if (!t.patches && !t.skipped) {
		/* neither a mail nor a diff: "no findings" would be a silent all-clear */
		fprintf(stderr, "printkbot: %s: no patch in it: %s\n", path,
			whole->len || rc ? "no mail, and no diff (no file header such as '--- a/FILE')"
					 : "the input is empty");
		return 2;
	}
	return t.damaged && t.damaged == t.patches ? 2 : rc;
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
	struct scan_run run = { o->json, o->churn_only, NULL, PK_POLICY_DEFAULT };
	int rc = 0;

	if (o->no_limits)
		run.limits.max_files = run.limits.max_lines = 0;
	if (o->tree_dir && pk_tree_open(&tree, o->tree_dir, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return 2;
	}
	if (o->describe)
		return describe(tree, args, ctx->cmdline.n_args, o->json);
	run.tree = tree;
	if (*args) {
		guint64 bytes = 0;
		GStatBuf st;

		/* standard input, a FIFO or a device: size unknown, the patterns stay JIT-compiled */
		for (char **a = args; *a && bytes < PK_REGEX_JIT_MIN_INPUT; a++)
			bytes += strcmp(*a, "-") && g_stat(*a, &st) == 0 && S_ISREG(st.st_mode) ? (guint64)st.st_size
											: PK_REGEX_JIT_MIN_INPUT;
		pk_regex_input_size(bytes);
	}
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
