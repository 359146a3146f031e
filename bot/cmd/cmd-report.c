/* cmd-report.c - `printkbot report`: render a stored review again. */
#include "cmd/commands.h"
#include "report/review.h"
#include "store/store.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

static const char report_usage[] =
	"usage: printkbot report [--config FILE] [--db FILE] [--html FILE] ID\n\n"
	"Render stored review ID again from its model (the data `test` kept),\n"
	"through templates/review.txt.  The text is byte-identical to the review\n"
	"as first rendered; when the template changed since, a note on standard\n"
	"error says that this rendering differs from the stored one.\n\n"
	"    --config FILE  read its [store] path (default $PRINTKBOT_CONFIG, else\n"
	"                 /etc/printkbot.conf if present)\n"
	"    --db FILE    the database (default the config's [store] path, else\n"
	"                 $PRINTKBOT_DB, else $PRINTKBOT_CACHE/printkbot.db)\n"
	"    --html FILE  also write the review as an HTML page with a side-by-side\n"
	"                 console diff (templates/review.html) to FILE\n\n"
	"exit status: 0 rendered, 1 no such review, 2 usage, database or template error\n";

/* The command line of report (--config and --db are main's). */
struct report_opts {
	const char *html;
};

static const struct pk_option report_options[] = {
	PK_OPTION_CONFIG,
	PK_OPTION_DB,
	PK_OPTION_STRING("html", struct report_opts, html),
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

static int report_check(const struct pk_cmdline *cl, GError **err)
{
	gint64 id;

	if (!review_id(&id, cl->args[0])) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "report wants a review id (a number)");
		return -1;
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

static int cmd_report(struct pk_cmd_ctx *ctx)
{
	const struct report_opts *o = ctx->cmdline.opts;
	const char *id_arg = ctx->cmdline.args[0];
	g_autofree char *model = NULL, *body = NULL, *text = NULL;
	g_autoptr(GError) err = NULL;
	gint64 id = 0;

	review_id(&id, id_arg);   /* report_check() made sure it is one */
	if (pk_store_review_get(ctx->store, id, &model, &body, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return g_error_matches(err, PK_ERROR, PK_ERROR_INPUT) ? 1 : 2;   /* 1: no such review */
	}
	if (render(&text, model, o->html, &err) < 0) {
		fprintf(stderr, "printkbot: review %s: %s\n", id_arg, err->message);
		return 2;
	}
	fputs(text, stdout);
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
	.args_min = 1, .args_max = 1,
	.check = report_check,
	.setup_status = 2,
	.run = cmd_report,
};
