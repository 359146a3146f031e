/* cmd-report.c - `printkbot report`: render a stored review again. */
#include "cmd/commands.h"
#include "report/review.h"
#include "store/store.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

static const char report_usage[] =
	"usage: printkbot report [--db FILE] [--html FILE] ID\n\n"
	"Render stored review ID again from its model (the data `test` kept),\n"
	"through templates/review.txt.  The text is byte-identical to the review\n"
	"as first rendered; when the template changed since, a note on standard\n"
	"error says that this rendering differs from the stored one.\n\n"
	"    --db FILE    the database (default $PRINTKBOT_DB, else\n"
	"                 $PRINTKBOT_CACHE/printkbot.db)\n"
	"    --html FILE  also write the review as an HTML page with a side-by-side\n"
	"                 console diff (templates/review.html) to FILE\n\n"
	"exit status: 0 rendered, 1 no such review, 2 usage, database or template error\n";

int cmd_report(int argc, char **argv)
{
	g_autoptr(pk_store) store = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *model = NULL, *body = NULL, *text = NULL;
	const char *db = NULL, *id_arg = NULL, *html_path = NULL;
	guint64 id = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(report_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--db") && i + 1 < argc) {
			db = argv[++i];
		} else if (!strncmp(argv[i], "--db=", 5)) {
			db = argv[i] + 5;
		} else if (!strcmp(argv[i], "--html") && i + 1 < argc) {
			html_path = argv[++i];
		} else if (argv[i][0] != '-' && !id_arg) {
			id_arg = argv[i];
		} else {
			fprintf(stderr, "printkbot: unexpected argument '%s'\n%s", argv[i], report_usage);
			return 2;
		}
	}
	if (!id_arg || !g_ascii_string_to_unsigned(id_arg, 10, 1, G_MAXINT64, &id, NULL)) {
		fprintf(stderr, "printkbot: report wants a review id (a number)\n%s", report_usage);
		return 2;
	}
	if (pk_store_open(&store, db, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return 2;
	}
	if (pk_store_review_get(store, (gint64)id, &model, &body, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return g_error_matches(err, PK_ERROR, PK_ERROR_INPUT) ? 1 : 2;
	}
	if (!(text = pk_review_render_json(model, "review.txt", &err))) {
		fprintf(stderr, "printkbot: review %s: %s\n", id_arg, err->message);
		return 2;
	}
	if (html_path) {
		g_autofree char *html = pk_review_render_json(model, "review.html", &err);
		if (!html || pk_write_file(html_path, html, strlen(html), &err) < 0) {
			fprintf(stderr, "printkbot: review %s: %s\n", id_arg, err->message);
			return 2;
		}
	}
	fputs(text, stdout);
	if (strcmp(text, body))
		pk_info("review %s: this rendering differs from the stored one (the template "
			"changed since it was written)", id_arg);
	return 0;
}
