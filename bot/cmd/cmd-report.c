/* cmd-report.c - `printkbot report`: render a stored review again. */
#include "cmd/commands.h"
#include "report/kcidb.h"
#include "report/pushes.h"
#include "report/review.h"
#include "report/site.h"
#include "store/store.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

static const char report_usage[] =
	"usage: printkbot report [--config FILE] [--db FILE] [--html FILE] ID\n"
	"       printkbot report [--config FILE] [--db FILE] [--html FILE] --commit COMMIT\n"
	"       printkbot report [--config FILE] [--db FILE] --push ID\n"
	"       printkbot report [--config FILE] [--db FILE] --site DIR [--full]\n"
	"       printkbot report [--config FILE] [--db FILE] --kcidb ID...\n\n"
	"Render stored review ID again from its model (the data `test` kept),\n"
	"through templates/review.txt.  The text is byte-identical to the review\n"
	"as first rendered; when the template changed since, a note on standard\n"
	"error says that this rendering differs from the stored one.\n\n"
	"With --commit, the review is the newest one of COMMIT (its id, or 4 hex\n"
	"digits of it or more), a commit tested by `run` or of a watched branch.\n"
	"With --push, ID is a push the daemon saw on a watched branch (history\n"
	"--pushes lists them): the branch and its tips, what was left out (over\n"
	"max_commits), each commit and what became of it, then the review of\n"
	"every commit tested in it that changed the console or failed.\n\n"
	"With --site, no ID: DIR becomes a static web site of every stored review\n"
	"(doc/site.md): index.html lists every series (date, source, author,\n"
	"subject, verdict, base) with filters by verdict, file or directory and\n"
	"author that run in the browser; series/ has a page per series with each\n"
	"patch's review (the console diff side by side, the changed words marked,\n"
	"links to the list's archive and, with [site] source_url, to the source\n"
	"lines); files/ a page per file with its history.  Only pages whose\n"
	"reviews, templates or config changed since the last run are written\n"
	"again; serve DIR with any web server, or open index.html from disk.\n\n"
	"    --config FILE  read its [store] path (default $PRINTKBOT_CONFIG, else\n"
	"                 /etc/printkbot.conf if present)\n"
	"    --db FILE    the database (default the config's [store] path, else\n"
	"                 $PRINTKBOT_DB, else $PRINTKBOT_CACHE/printkbot.db)\n"
	"    --html FILE  also write the review as an HTML page with a side-by-side\n"
	"                 console diff (templates/review.html) to FILE\n"
	"    --commit     the argument is a commit, not a review id\n"
	"    --push       ID is a push, not a review\n"
	"    --site DIR   write the site of every stored review to DIR; the config's\n"
	"                 [site] and each [source NAME]'s archive are read\n"
	"    --full       with --site, write every page again\n"
	"    --kcidb      the reviews ID... as one KCIDB document (KernelCI's common\n"
	"                 database, I/O schema v5.3: a checkout per series, a build\n"
	"                 per kernel, a test per boot and per comparison); its ids\n"
	"                 start with the config's [kcidb] origin (doc/history.md)\n\n"
	"exit status: 0 rendered (the site written), 1 no such review or push, 2\n"
	"usage, database, template or disk error\n";

/* The command line of report (--config and --db are main's). */
struct report_opts {
	const char *html;
	bool commit;
	bool push;
	const char *site;
	bool full;
	bool kcidb;
};

static const struct pk_option report_options[] = {
	PK_OPTION_CONFIG,
	PK_OPTION_DB,
	PK_OPTION_STRING("html", struct report_opts, html),
	PK_OPTION_FLAG("commit", struct report_opts, commit),
	PK_OPTION_FLAG("push", struct report_opts, push),
	PK_OPTION_STRING("site", struct report_opts, site),
	PK_OPTION_FLAG("full", struct report_opts, full),
	PK_OPTION_FLAG("kcidb", struct report_opts, kcidb),
	{ NULL },
};

static bool review_id(gint64 *out, const char *text)
{
	guint64 id;

	if (!g_ascii_string_to_unsigned(text, 10, 1, G_MAXINT64, &id, NULL))
		return false;
	*out = (gint64)id;
	return true;
}

/* --kcidb: review ids, one or more, and nothing of the other forms. */
static int kcidb_check(const struct pk_cmdline *cl, GError **err)
{
	const struct report_opts *o = cl->opts;
	gint64 id;

	if (o->commit || o->push || o->html || o->full) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--kcidb takes review ids alone: no --commit, "
			    "--push, --html or --full with it");
		return -1;
	}
	if (!cl->n_args) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "missing ID");
		return -1;
	}
	for (unsigned i = 0; i < cl->n_args; i++)
		if (!review_id(&id, cl->args[i])) {
			g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "'%s' is not a review id (a number)",
				    cl->args[i]);
			return -1;
		}
	return 0;
}

static int report_check(const struct pk_cmdline *cl, GError **err)
{
	const struct report_opts *o = cl->opts;
	gint64 id;

	if (o->site && (cl->n_args || o->commit || o->push || o->html)) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--site writes every review: no ID, "
			    "--html, --commit or --push with it");
		return -1;
	}
	if (o->site)
		return 0;
	if (o->kcidb)
		return kcidb_check(cl, err);
	if (o->full) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--full goes with --site");
		return -1;
	}
	if (cl->n_args != 1) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, cl->n_args ? "one ID (several with --kcidb)"
										  : "missing ID");
		return -1;
	}
	if (o->commit && o->push) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--commit or --push, not both");
		return -1;
	}
	if (o->commit)
		return 0;   /* the store says whether it is one */
	if (!review_id(&id, cl->args[0])) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "report wants a %s id (a number)",
			    o->push ? "push" : "review");
		return -1;
	}
	if (o->push && o->html) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--html renders a review, not a push");
		return -1;
	}
	return 0;
}

/*
 * A push: its text (pushes.h), then the review of each commit tested in
 * it that changed the console or failed, as `run` ends.  0, 1 no such
 * push, 2 the store or a template failed.
 */
static int report_push(struct pk_cmd_ctx *ctx, gint64 id)
{
	g_autoptr(pk_store_push) p = NULL;
	g_autoptr(GPtrArray) commits = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *text = NULL;
	int rc = pk_store_push_get(ctx->store, id, &p, &commits, &err);

	if (rc <= 0) {
		fprintf(stderr, "printkbot: %s\n", rc < 0 ? err->message : "no such push");
		return rc < 0 ? 2 : 1;
	}
	text = pk_push_text(p, commits);
	pk_print_text("%s", text);
	for (guint i = 0; i < commits->len; i++) {
		const struct pk_store_push_commit *c = commits->pdata[i];
		enum pk_verdict v = PK_VERDICT_NONE;
		g_autofree char *model = NULL, *review = NULL;

		if (strcmp(c->state, "tested") || !pk_verdict_parse(c->verdict, &v) || !pk_verdict_is_bad(v))
			continue;
		if (pk_store_review_get(ctx->store, c->review_id, &model, NULL, &err) < 0 ||
		    !(review = pk_review_render_json(model, "review.txt", &err))) {
			fprintf(stderr, "printkbot: review %" G_GINT64_FORMAT ": %s\n", c->review_id, err->message);
			return 2;
		}
		pk_print_text("\n========================================================================\n"
			      "commit %s (review %" G_GINT64_FORMAT ")\n\n%s", c->commit_id, c->review_id, review);
	}
	return 0;
}

/* Stored model rendered as text (into *out) and, with html_path, as HTML into that file. */
static int render(char **out, const char *model, const char *html_path, GError **err)
{
	g_autofree char *text = pk_review_render_json(model, "review.txt", err);

	if (!text)
		return -1;
	if (html_path) {
		g_autofree char *html = pk_review_render_json(model, "review.html", err);
		if (!html || pk_write_file(html_path, html, strlen(html), err) < 0)
			return -1;
	}
	*out = g_steal_pointer(&text);
	return 0;
}

/* --kcidb ID...: one KCIDB document of the reviews (kcidb.h). */
static int report_kcidb(struct pk_cmd_ctx *ctx)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	g_autoptr(GError) err = NULL;
	g_autofree char *origin = NULL, *doc = NULL;

	for (unsigned i = 0; i < ctx->cmdline.n_args; i++) {
		gint64 id;

		review_id(&id, ctx->cmdline.args[i]);   /* kcidb_check() made sure it is one */
		g_array_append_val(ids, id);
	}
	if (pk_config_kcidb_origin(&origin, ctx->cmdline.common.config_path, &err) < 0 ||
	    !(doc = pk_kcidb_export(ctx->store, origin, ids, &err))) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return g_error_matches(err, PK_ERROR, PK_ERROR_INPUT) ? 1 : 2;
	}
	puts(doc);
	return 0;
}

/* --site DIR: the site of every review (site.h), and what the run wrote. */
static int report_site(struct pk_cmd_ctx *ctx)
{
	const struct report_opts *o = ctx->cmdline.opts;
	struct pk_site_config config = { 0 };
	struct pk_site_opts opts = { .dir = o->site, .config = &config, .full = o->full };
	struct pk_site_stats st;
	g_autoptr(GError) err = NULL;
	double t0 = pk_now();

	if (pk_config_site(&config, ctx->cmdline.common.config_path, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return 2;
	}
	if (pk_site_write(ctx->store, &opts, &st, &err) < 0) {
		fprintf(stderr, "printkbot: site %s: %s\n", o->site, err->message);
		pk_site_config_clear(&config);
		return 2;
	}
	pk_site_config_clear(&config);
	printf("site %s: %u series (%u rendered, %u written), %u files (%u rendered, %u written), "
	       "%u other pages written, %u removed, in %.1f s\n", o->site, st.series, st.series_rendered,
	       st.series_written, st.files, st.files_rendered, st.files_written, st.other_written, st.removed,
	       pk_now() - t0);
	if (st.failed)
		pk_info("%u review%s could not be rendered: %s say%s why", st.failed, st.failed == 1 ? "" : "s",
			st.failed == 1 ? "its page" : "their pages", st.failed == 1 ? "s" : "");
	return 0;
}

static int cmd_report(struct pk_cmd_ctx *ctx)
{
	const struct report_opts *o = ctx->cmdline.opts;
	const char *id_arg = ctx->cmdline.args[0];
	g_autofree char *model = NULL, *body = NULL, *text = NULL;
	g_autoptr(GError) err = NULL;
	gint64 id = 0;

	if (o->site)
		return report_site(ctx);
	if (o->kcidb)
		return report_kcidb(ctx);
	if (o->push) {
		review_id(&id, id_arg);   /* report_check() made sure it is one */
		return report_push(ctx, id);
	}
	if (o->commit) {
		int rc = pk_store_review_of_commit(ctx->store, id_arg, &id, &err);

		if (rc <= 0) {
			fprintf(stderr, "printkbot: %s\n", rc < 0 ? err->message : "no tested commit of that id");
			return rc < 0 ? 2 : 1;
		}
	} else {
		review_id(&id, id_arg);   /* report_check() made sure it is one */
	}
	if (pk_store_review_get(ctx->store, id, &model, &body, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return g_error_matches(err, PK_ERROR, PK_ERROR_INPUT) ? 1 : 2;   /* 1: no such review */
	}
	if (render(&text, model, o->html, &err) < 0) {
		fprintf(stderr, "printkbot: review %s: %s\n", id_arg, err->message);
		return 2;
	}
	pk_print_text("%s", text);
	if (strcmp(text, body))
		pk_info("review %s: this rendering differs from the stored one (the template "
			"changed since it was written)", id_arg);
	return 0;
}

const struct pk_cmd_spec cmd_report_spec = {
	.usage = report_usage,
	.options = report_options,
	.opts_size = sizeof(struct report_opts),
	.args_name = "ID",
	.args_min = 0, .args_max = G_MAXUINT,   /* report_check(): one, none with --site, any with --kcidb */
	.check = report_check,
	.setup_status = 2,
	.run = cmd_report,
};
