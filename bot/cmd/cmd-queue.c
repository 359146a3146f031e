/*
 * cmd-queue.c - `printkbot queue`: what the daemon has waiting, running,
 * done, failed; with --sources, when each source was last read.
 */
#include "cmd/commands.h"
#include "config/config.h"
#include "base/jsonout.h"
#include "base/util.h"
#include "report/outbox.h"
#include "store/store.h"
#include "store/queue.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

static const char queue_usage[] =
	"usage: printkbot queue [--json] [--state STATE] [--sources] [--config FILE] [--db FILE]\n\n"
	"List the daemon's jobs: a \"series\" job tests the patches of one series, a\n"
	"\"push\" job the new commits of one push to a watched branch (history\n"
	"--pushes, report --push), a \"reply\" job sends one reply or mail about a\n"
	"commit (one whose SMTP server was down waits with its next try).  Mails\n"
	"still waiting for the rest of their series, and replies waiting in the\n"
	"outbox Maildir's new/ ([daemon] outbox), are counted at the end.\n\n"
	"  --json         one JSON object per job (or per source)\n"
	"  --state STATE  only queued, running, done, failed or cancelled jobs\n"
	"  --sources      the sources instead: when a daemon last read each to its\n"
	"                 end, those of the configuration never read included\n"
	"  --config FILE  the configuration (for [store] path)\n"
	"  --db FILE      the store\n\n"
	"exit status: 0, or 2 when the store cannot be read.\n";

/* What a job is about, in a few words. */
static char *job_what(const struct pk_store_job *j)
{
	g_autoptr(JsonParser) p = json_parser_new();
	JsonObject *o;

	if (!j->payload || !json_parser_load_from_data(p, j->payload, -1, NULL) ||
	    !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
		return g_strdup("");
	o = json_node_get_object(json_parser_get_root(p));
	switch (j->kind) {
	case PK_JOB_SERIES:
		return g_strdup(json_object_get_string_member_with_default(o, "subject", ""));
	case PK_JOB_REPLY:
		return g_strdup_printf("reply %" G_GINT64_FORMAT, json_object_get_int_member_with_default(o, "reply", 0));
	case PK_JOB_PUSH:
		return g_strdup_printf("push %" G_GINT64_FORMAT, json_object_get_int_member_with_default(o, "push", 0));
	case PK_JOB_COMMAND:
		return g_strdup_printf("#printkbot %s%s%s (mail %" G_GINT64_FORMAT ")",
				       json_object_get_string_member_with_default(o, "command", "?"),
				       json_object_get_string_member_with_default(o, "base", NULL) ? " " : "",
				       json_object_get_string_member_with_default(o, "base", ""),
				       json_object_get_int_member_with_default(o, "mail", 0));
	default:
		return g_strdup(j->payload);
	}
}

static char *when(gint64 t)
{
	g_autoptr(GDateTime) dt = t ? g_date_time_new_from_unix_local(t) : NULL;

	return dt ? g_date_time_format(dt, "%Y-%m-%d %H:%M:%S") : g_strdup("-");
}

static void print_json(const struct pk_store_job *j, const char *what)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autoptr(JsonNode) root = NULL;
	g_autofree char *text = NULL;

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "id");
	json_builder_add_int_value(b, j->id);
	json_builder_set_member_name(b, "kind");
	json_builder_add_string_value(b, pk_job_kind_name(j->kind));
	json_builder_set_member_name(b, "state");
	json_builder_add_string_value(b, pk_job_state_name(j->state));
	json_builder_set_member_name(b, "attempts");
	json_builder_add_int_value(b, j->attempts);
	json_builder_set_member_name(b, "what");
	json_builder_add_string_value(b, what);
	json_builder_set_member_name(b, "detail");
	json_builder_add_string_value(b, j->detail);
	json_builder_set_member_name(b, "created");
	json_builder_add_int_value(b, j->created);
	json_builder_set_member_name(b, "updated");
	json_builder_add_int_value(b, j->updated);
	json_builder_set_member_name(b, "not_before");
	json_builder_add_int_value(b, j->not_before);
	json_builder_set_member_name(b, "worker");
	json_builder_add_string_value(b, j->worker);
	json_builder_set_member_name(b, "lease_until");
	json_builder_add_int_value(b, j->lease_until);
	json_builder_set_member_name(b, "arch");
	json_builder_add_string_value(b, j->arch);
	json_builder_end_object(b);
	root = json_builder_get_root(b);
	text = json_to_string(root, FALSE);
	printf("%s\n", text);
}

/* The jobs, running first, then queued, failed, done and cancelled. */
static void print_jobs(GPtrArray *jobs, bool json)
{
	static const enum pk_job_state order[] = { PK_JOB_RUNNING, PK_JOB_QUEUED, PK_JOB_FAILED,
						   PK_JOB_DONE, PK_JOB_CANCELLED };

	if (!json)
		printf("%-6s %-7s %-9s %-3s %-19s %s\n", "JOB", "KIND", "STATE", "TRY", "UPDATED", "WHAT / DETAIL");
	for (size_t s = 0; s < G_N_ELEMENTS(order); s++)
		for (guint i = 0; i < jobs->len; i++) {
			const struct pk_store_job *j = jobs->pdata[i];
			g_autofree char *what = NULL, *upd = NULL, *next = NULL, *shown = NULL, *detail = NULL;

			if (j->state != order[s])
				continue;
			what = job_what(j);
			if (json) {
				print_json(j, what);
				continue;
			}
			upd = when(j->updated);
			/* a subject is the sender's: no escape sequence reaches the terminal */
			shown = pk_text_for_terminal(what);
			detail = pk_text_for_terminal(j->detail);
			printf("%-6" G_GINT64_FORMAT " %-7s %-9s %-3d %-19s %s\n", j->id,
			       pk_job_kind_name(j->kind), pk_job_state_name(j->state), j->attempts, upd, shown);
			if (j->state == PK_JOB_QUEUED && j->not_before > g_get_real_time() / G_USEC_PER_SEC) {
				next = when(j->not_before);
				printf("%38s next try %s\n", "", next);
			}
			if (j->arch && (j->state == PK_JOB_QUEUED || j->state == PK_JOB_RUNNING))
				printf("%38s for a worker whose lab has %s\n", "", j->arch);
			if (j->state == PK_JOB_RUNNING && j->worker) {
				g_autofree char *who = pk_text_for_terminal(j->worker), *until = when(j->lease_until);

				printf("%38s by %s, lease until %s\n", "", who, until);
			}
			if (*detail)
				printf("%38s %s\n", "", detail);
		}
}

/* One source: its name, type and last read (0: never), as text or a JSON object. */
static void print_source(const char *name, const char *kind, gint64 last_read, bool json)
{
	if (json) {
		g_autoptr(JsonBuilder) b = json_builder_new();
		g_autoptr(JsonNode) root = NULL;
		g_autofree char *text = NULL;

		json_builder_begin_object(b);
		json_builder_set_member_name(b, "source");
		json_builder_add_string_value(b, name);
		json_builder_set_member_name(b, "type");
		json_builder_add_string_value(b, kind);
		json_builder_set_member_name(b, "last_read");
		json_builder_add_int_value(b, last_read);
		json_builder_end_object(b);
		root = json_builder_get_root(b);
		text = json_to_string(root, FALSE);
		printf("%s\n", text);
	} else {
		g_autofree char *shown = pk_text_for_terminal(name);
		g_autofree char *at = last_read ? when(last_read) : g_strdup("never");

		printf("%-24s %-13s %s\n", shown, kind, at);
	}
}

/*
 * The sources a daemon read (the store's, with a last read), then those
 * of the configuration it never read to their end.
 */
static int print_sources(struct pk_store *store, const struct pk_config *config, bool json,
			 GError **err)
{
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GHashTable) shown = g_hash_table_new(g_str_hash, g_str_equal);

	if (pk_store_sources(store, &rows, err) < 0)
		return -1;
	if (!json)
		printf("%-24s %-13s %s\n", "SOURCE", "TYPE", "LAST READ");
	for (guint i = 0; i < rows->len; i++) {
		const struct pk_store_source *s = rows->pdata[i];

		if (!s->last_read)
			continue;
		print_source(s->name, s->kind, s->last_read, json);
		g_hash_table_add(shown, s->name);
	}
	for (guint i = 0; config->sources && i < config->sources->len; i++) {
		const struct pk_source_config *c = config->sources->pdata[i];

		if (!g_hash_table_contains(shown, c->name))
			print_source(c->name, c->type, 0, json);
	}
	return 0;
}

/* The command line of queue (--config and --db are main's). */
struct queue_opts {
	bool json;
	const char *state;
	bool sources;
};

static const struct pk_option queue_options[] = {
	PK_OPTION_FLAG("json", struct queue_opts, json),
	PK_OPTION_STRING("state", struct queue_opts, state),
	PK_OPTION_FLAG("sources", struct queue_opts, sources),
	PK_OPTION_CONFIG,
	PK_OPTION_DB,
	{ NULL },
};

static int cmd_queue(struct pk_cmd_ctx *ctx)
{
	const struct queue_opts *o = ctx->cmdline.opts;
	struct pk_store *store = ctx->store;
	g_autoptr(GPtrArray) jobs = NULL, pending = NULL, waiting = NULL;
	g_autoptr(pk_outbox) outbox = NULL;
	g_autofree char *outbox_dir = NULL;
	g_autoptr(GError) err = NULL;
	enum pk_job_state only = PK_JOB_ANY_STATE;
	bool json = o->json;
	int status = 0;

	if (o->state && !pk_job_state_parse(o->state, &only)) {
		fprintf(stderr, "printkbot queue: unknown state '%s' (queued, running, done, failed "
			"or cancelled)\n", o->state);
		return 2;
	}
	if (o->sources) {
		if (print_sources(store, &ctx->config, json, &err) < 0) {
			fprintf(stderr, "printkbot queue: %s\n", err->message);
			status = 2;
		}
		goto out;
	}
	outbox_dir = pk_outbox_default_dir(ctx->config.daemon.outbox);
	if (pk_store_jobs(store, only, &jobs, &err) < 0 ||
	    pk_store_mails(store, "pending", &pending, &err) < 0 ||
	    pk_outbox_open(&outbox, outbox_dir, false, &err) < 0 ||
	    pk_outbox_waiting(outbox, &waiting, &err) < 0) {
		fprintf(stderr, "printkbot queue: %s\n", err->message);
		status = 2;
		goto out;
	}
	print_jobs(jobs, json);
	if (!json && pending->len)
		printf("\n%u mail(s) wait for the rest of their series.\n", pending->len);
	if (!json)
		printf("\n%u repl%s waiting in the outbox %s/new.\n", waiting->len,
		       waiting->len == 1 ? "y" : "ies", outbox_dir);
out:
	return status;
}

const struct pk_cmd_spec cmd_queue_spec = {
	.usage = queue_usage,
	.options = queue_options,
	.opts_size = sizeof(struct queue_opts),
	.args_max = 0,
	.setup_status = 2,
	.run = cmd_queue,
};
