/* cmd-history.c - `printkbot history`: stored changes to messages, filtered. */
#include "cmd/commands.h"
#include "base/jsonout.h"
#include "report/kcidb.h"
#include "report/pushes.h"
#include "lab/arch.h"
#include "store/store.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char history_usage[] =
	"usage: printkbot history [<filter>...] [--json] [--limit N] [--config FILE]\n"
	"                        [--db FILE]\n\n"
	"Every stored change to what the kernel prints: static findings of\n"
	"patches, console changes seen at boot, printk index changes.  Filters\n"
	"combine (all must match):\n\n"
	"    --file F         the message's source file (kernel/sched/topology.c)\n"
	"    --func F         its function (boot and index changes only)\n"
	"    --grep TEXT      TEXT in the old or the new text (case-sensitive)\n"
	"    --kind K         a finding kind (text-changed, level-changed, ...)\n"
	"    --verdict V      the test's verdict (console-changed, ...)\n"
	"    --author A       A in the author's name or address (ASCII case ignored)\n"
	"    --since D        patches dated D or later (YYYY-MM-DD or ISO 8601, UTC)\n"
	"    --until D        patches dated before the end of D\n"
	"    --source S       the source's name, URL or kind (mbox, imap, git, ...)\n"
	"    --commit C       a commit id or its prefix\n"
	"    --message-id M   a mail's Message-ID\n"
	"    --stage S        static, boot or index\n\n"
	"    --pushes         the pushes the daemon saw on watched branches instead,\n"
	"                     newest first, each with its commits: what became of\n"
	"                     each (tested, tested-before, merge, skipped and why),\n"
	"                     its verdict, its review and the mail to its author;\n"
	"                     only --source (TREE or TREE/BRANCH), --limit (pushes)\n"
	"                     and --json go with it\n"
	"    --json           one JSON object per row (JSON Lines)\n"
	"    --kcidb          the newest review of each patch a row names, as one\n"
	"                     KCIDB document (report --kcidb)\n"
	"    --limit N        at most N rows\n"
	"    --config FILE    read its [store] path (default $PRINTKBOT_CONFIG, else\n"
	"                     /etc/printkbot.conf if present)\n"
	"    --db FILE        the database (default the config's [store] path, else\n"
	"                     $PRINTKBOT_DB, else $PRINTKBOT_CACHE/printkbot.db)\n\n"
	"rows are newest patch first; REVIEW is what `printkbot report ID` takes\n"
	"(the newest review of the row's test; - for a patch never tested); the\n"
	"link is the mail on lore.kernel.org (a list's mail the daemon read), its\n"
	"<Message-ID> (a mail read from a file), or the commit id.  A boot or\n"
	"index row of kernels built for arm64 says so in its stage (boot/arm64;\n"
	"--json: arch).\n"
	"exit status: 0 rows printed, 1 nothing matched, 2 usage or database error\n";

/* Columns on a terminal are cut to this many characters; pipes get them whole. */
#define TEXT_COLS 48
#define SUBJECT_COLS 44

/* Texts as one readable line: control characters escaped, bad UTF-8 replaced. */
static char *oneline(const char *text)
{
	g_autofree char *valid = g_utf8_make_valid(text, -1);
	GString *out = g_string_new(NULL);

	for (const char *p = valid; *p; p++) {
		if (*p == '\n')
			g_string_append(out, "\\n");
		else if (*p == '\t')
			g_string_append(out, "\\t");
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			g_string_append_printf(out, "\\x%02x", (unsigned char)*p);
		else
			g_string_append_c(out, *p);
	}
	return g_string_free(out, FALSE);
}

/* What changed, in one cell: old → new, -old, +new, or the text when both agree. */
static char *change_cell(const struct pk_history_row *r)
{
	g_autofree char *o = r->old_text ? oneline(r->old_text) : NULL;
	g_autofree char *n = r->new_text ? oneline(r->new_text) : NULL;

	if (o && n)
		return strcmp(o, n) ? g_strdup_printf("%s → %s", o, n) : g_steal_pointer(&o);
	if (o)
		return g_strconcat("-", o, NULL);
	return n ? g_strconcat("+", n, NULL) : g_strdup("");
}

/* Cut a cell to cols characters (with an ellipsis), when cols is not 0. */
static char *cut(char *cell, unsigned cols)
{
	char *end;

	if (!cols || g_utf8_strlen(cell, -1) <= cols)
		return cell;
	end = g_utf8_offset_to_pointer(cell, cols - 1);
	*end = '\0';
	end = g_strconcat(cell, "…", NULL);
	g_free(cell);
	return end;
}

static char *date_cell(gint64 time, const char *format)
{
	g_autoptr(GDateTime) t = time ? g_date_time_new_from_unix_utc(time) : NULL;

	return t ? g_date_time_format(t, format) : g_strdup("-");
}

enum { COL_REVIEW, COL_PATCH, COL_DATE, COL_VERDICT, COL_STAGE, COL_KIND, COL_WHERE, COL_CHANGE,
       COL_SUBJECT, COL_LINK, N_COLS };
static const char *const col_names[N_COLS] = {
	"REVIEW", "PATCH", "DATE", "VERDICT", "STAGE", "KIND", "WHERE", "CHANGE", "SUBJECT", "LINK",
};

/* The table: every cell first, then each column as wide as its widest cell. */
static void print_table(const GPtrArray *rows, gboolean tty)
{
	g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) cols = g_array_new(FALSE, FALSE, sizeof(unsigned)); /* each cell's width */
	unsigned width[N_COLS];

	for (int c = 0; c < N_COLS; c++)
		width[c] = (unsigned)strlen(col_names[c]);
	for (guint i = 0; i < rows->len; i++) {
		const struct pk_history_row *r = rows->pdata[i];
		g_autofree char *subject = r->subject ? oneline(r->subject) : g_strdup("-");
		char *row[N_COLS] = {
			r->review_id ? g_strdup_printf("%" G_GINT64_FORMAT, r->review_id) : g_strdup("-"),
			g_strdup_printf("%" G_GINT64_FORMAT, r->patch_id),
			date_cell(r->time, "%F"),
			g_strdup(r->verdict ? r->verdict : "-"),
			/* where the kernels ran, when not the default's: "boot/arm64" */
			r->arch && strcmp(r->arch, pk_arch_x86_64.name) ? g_strdup_printf("%s/%s", r->stage, r->arch)
									 : g_strdup(r->stage),
			g_strdup(r->kind),
			r->func ? g_strdup_printf("%s:%d %s()", r->file ? r->file : "?", r->line, r->func)
				: g_strdup_printf("%s:%d", r->file ? r->file : "?", r->line),
			cut(change_cell(r), tty ? TEXT_COLS : 0),
			cut(g_steal_pointer(&subject), tty ? SUBJECT_COLS : 0),
			g_strdup(r->link ? r->link : "-"),
		};

		for (int c = 0; c < N_COLS; c++) {
			unsigned w = (unsigned)g_utf8_strlen(row[c], -1);

			width[c] = MAX(width[c], w);
			g_ptr_array_add(cells, row[c]);
			g_array_append_val(cols, w);
		}
	}
	for (guint i = 0; i <= rows->len; i++) {
		g_autoptr(GString) line = g_string_new(NULL);

		for (int c = 0; c < N_COLS; c++) {
			const char *cell = i ? cells->pdata[(i - 1) * N_COLS + c] : col_names[c];
			unsigned w = i ? g_array_index(cols, unsigned, (i - 1) * N_COLS + c)
				       : (unsigned)strlen(cell);

			g_string_append(line, cell);
			if (c + 1 < N_COLS)   /* pad by characters, not bytes */
				for (; w < width[c] + 2; w++)
					g_string_append_c(line, ' ');
		}
		pk_print_text("%s\n", line->str);
	}
}

/* A string member, made valid UTF-8 (kernel text may hold any byte). */
static void json_text(JsonBuilder *b, const char *name, const char *value)
{
	g_autofree char *valid = NULL;

	if (value && !g_utf8_validate(value, -1, NULL))
		value = valid = g_utf8_make_valid(value, -1);
	pk_json_str(b, name, value);
}

/* One JSON Lines row; b and gen are reused from row to row. */
static void print_json(JsonBuilder *b, JsonGenerator *gen, const struct pk_history_row *r)
{
	g_autofree char *date = r->time ? date_cell(r->time, "%FT%TZ") : NULL;
	g_autoptr(JsonNode) root = NULL;
	g_autofree char *text = NULL;

	json_builder_reset(b);
	json_builder_begin_object(b);
	pk_json_int(b, "patch_id", r->patch_id);
	json_builder_set_member_name(b, "review_id");
	if (r->review_id)
		json_builder_add_int_value(b, r->review_id);
	else
		json_builder_add_null_value(b);
	json_builder_set_member_name(b, "test_id");
	if (r->test_id)
		json_builder_add_int_value(b, r->test_id);
	else
		json_builder_add_null_value(b);
	json_text(b, "subject", r->subject);
	json_text(b, "message_id", r->message_id);
	json_text(b, "commit", r->commit);
	json_text(b, "author", r->author);
	pk_json_str(b, "date", date);
	pk_json_str(b, "verdict", r->verdict);
	pk_json_str(b, "stage", r->stage);
	pk_json_str(b, "arch", r->arch);
	pk_json_str(b, "kind", r->kind);
	json_text(b, "file", r->file);
	pk_json_int(b, "line", r->line);
	json_text(b, "func", r->func);
	json_text(b, "old_text", r->old_text);
	json_text(b, "new_text", r->new_text);
	json_text(b, "source", r->source);
	json_text(b, "link", r->link);
	json_builder_end_object(b);
	root = json_builder_get_root(b);
	json_generator_set_root(gen, root);
	text = json_generator_to_data(gen, NULL);
	puts(text);
}

/* The command line of history: the filter, and how to print it. */
struct history_opts {
	struct pk_history_filter filter;
	bool json;
	bool pushes;
	bool kcidb;
};

static const struct pk_option history_options[] = {
	PK_OPTION_STRING("file", struct history_opts, filter.file),
	PK_OPTION_STRING("func", struct history_opts, filter.func),
	PK_OPTION_STRING("grep", struct history_opts, filter.grep),
	PK_OPTION_STRING("kind", struct history_opts, filter.kind),
	PK_OPTION_STRING("verdict", struct history_opts, filter.verdict),
	PK_OPTION_STRING("author", struct history_opts, filter.author),
	PK_OPTION_DATE("since", struct history_opts, filter.since),
	PK_OPTION_DATE_END("until", struct history_opts, filter.until),
	PK_OPTION_STRING("source", struct history_opts, filter.source),
	PK_OPTION_STRING("commit", struct history_opts, filter.commit),
	PK_OPTION_STRING("message-id", struct history_opts, filter.message_id),
	PK_OPTION_STRING("stage", struct history_opts, filter.stage),
	PK_OPTION_FLAG("json", struct history_opts, json),
	PK_OPTION_FLAG("pushes", struct history_opts, pushes),
	PK_OPTION_FLAG("kcidb", struct history_opts, kcidb),
	PK_OPTION_COUNT("limit", struct history_opts, filter.limit),
	PK_OPTION_CONFIG,
	PK_OPTION_DB,
	{ NULL },
};

/* --pushes: each push of the watched branches, newest first, with its commits. */
static int history_pushes(struct pk_cmd_ctx *ctx, const struct history_opts *o)
{
	const struct pk_history_filter *f = &o->filter;
	g_autoptr(GPtrArray) pushes = NULL;
	g_autoptr(GError) err = NULL;

	if (f->file || f->func || f->grep || f->kind || f->verdict || f->author || f->commit ||
	    f->message_id || f->stage || f->since || f->until) {
		fprintf(stderr, "printkbot history: --pushes takes --source, --limit and --json only\n");
		return 2;
	}
	if (pk_store_pushes(ctx->store, f->source, f->limit, &pushes, &err) < 0) {
		fprintf(stderr, "printkbot: %s\n", err->message);
		return 2;
	}
	for (guint i = 0; i < pushes->len; i++) {
		const struct pk_store_push *listed = pushes->pdata[i];
		g_autoptr(pk_store_push) p = NULL;
		g_autoptr(GPtrArray) commits = NULL;

		if (pk_store_push_get(ctx->store, listed->id, &p, &commits, &err) <= 0) {
			fprintf(stderr, "printkbot: push %" G_GINT64_FORMAT ": %s\n", listed->id,
				err ? err->message : "gone");
			return 2;
		}
		if (o->json) {
			g_autoptr(JsonNode) node = pk_push_json(p, commits);
			g_autofree char *text = json_to_string(node, FALSE);

			puts(text);
		} else {
			g_autofree char *text = pk_push_text(p, commits);

			pk_print_text("%s%s", i ? "\n" : "", text);
		}
	}
	return pushes->len ? 0 : 1;
}

/* --kcidb: the newest review of each patch the rows name, each once, as one KCIDB document. */
static int history_kcidb(struct pk_cmd_ctx *ctx, const GPtrArray *rows)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	g_autoptr(GError) err = NULL;
	g_autofree char *origin = NULL, *doc = NULL;

	for (guint i = 0; i < rows->len; i++) {
		const struct pk_history_row *r = rows->pdata[i];
		gint64 id;
		int rc = pk_store_review_of_test(ctx->store, r->test_id, r->patch_id, &id, &err);

		if (rc < 0)
			goto fail;
		if (rc && !g_hash_table_contains(seen, &id)) {
			g_array_append_val(ids, id);
			g_hash_table_add(seen, g_memdup2(&id, sizeof id));
		}
	}
	if (pk_config_kcidb_origin(&origin, ctx->cmdline.common.config_path, &err) < 0 ||
	    !(doc = pk_kcidb_export(ctx->store, origin, ids, &err)))
		goto fail;
	puts(doc);
	return ids->len ? 0 : 1;
fail:
	fprintf(stderr, "printkbot: %s\n", err->message);
	return 2;
}

static int cmd_history(struct pk_cmd_ctx *ctx)
{
	const struct history_opts *o = ctx->cmdline.opts;
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GError) err = NULL;

	if (o->pushes)
		return history_pushes(ctx, o);
	if (pk_store_history(ctx->store, &rows, &o->filter, &err) < 0) {
		fprintf(stderr, "printkbot history: %s\n", err->message);
		return 2;
	}
	if (o->kcidb)
		return history_kcidb(ctx, rows);
	if (o->json) {
		g_autoptr(JsonBuilder) b = json_builder_new();
		g_autoptr(JsonGenerator) gen = json_generator_new();

		for (guint i = 0; i < rows->len; i++)
			print_json(b, gen, rows->pdata[i]);
	} else if (rows->len)
		print_table(rows, isatty(STDOUT_FILENO));
	else
		fprintf(stderr, "printkbot history: no stored change matches\n");
	return rows->len ? 0 : 1;
}

const struct pk_cmd_spec cmd_history_spec = {
	.usage = history_usage,
	.options = history_options,
	.opts_size = sizeof(struct history_opts),
	.args_max = 0,
	.setup_status = 2,
	.run = cmd_history,
};
