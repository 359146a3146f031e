/*
 * inbox-command.c - the intake of commands by mail: a reply addressed to
 * the bot with a #printkbot line (intake/mailcmd.h) is checked against
 * [daemon] commands_from, its sender proven (intake/authres.h, or a
 * trusted source), its thread's series found in the store, the rate
 * limits checked, and stored with its command job in one transaction, or
 * stored as skipped with why.  See daemon.h ("command" jobs).
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "intake/authres.h"
#include "intake/mail.h"
#include "intake/mailcmd.h"
#include "base/util.h"

#include <string.h>

/* What a command found of its thread: the series it answers, or why none. */
struct thread_series {
	JsonNode *series;         /* the series job's payload ("mails", "cover", "total", "subject"), or NULL */
	gint64 job_id;            /* the job that tested it */
	char *why;                /* no series: why (new) */
};

static void thread_series_clear(struct thread_series *t)
{
	if (t->series)
		json_node_unref(t->series);
	g_free(t->why);
}

/*
 * The series of one mail the command answers (a patch, a cover letter,
 * or a command answered before, whose job names its series): 1 found, 0
 * not (*why set when the mail tells something: a patch not tested).
 */
static int series_of_mail(struct pk_daemon *d, const char *message_id, struct thread_series *out,
			  GError **err)
{
	g_autoptr(pk_store_job) job = NULL;
	g_autoptr(JsonParser) p = json_parser_new();
	struct pk_store_mail *row = NULL;
	JsonNode *root;
	gint64 id;
	int rc;

	if ((rc = pk_store_mail_find(d->store, message_id, &id, err)) <= 0)
		return rc;
	if (pk_store_mail_get(d->store, id, &row, err) < 0)
		return -1;
	if (!row->job_id) {
		if (!out->why && row->number > 0 && !g_strcmp0(row->state, "pending"))
			out->why = g_strdup_printf("its series (<%s>) is still waiting for its patches: it "
						   "was not tested yet", message_id);
		else if (!out->why && row->number > 0 && row->reason && g_strcmp0(row->reason, "a reply"))
			out->why = g_strdup_printf("its series (<%s>) was not tested: %s", message_id, row->reason);
		pk_store_mail_free(row);
		return 0;
	}
	rc = pk_store_job_get(d->store, row->job_id, &job, err);
	pk_store_mail_free(row);
	if (rc <= 0)
		return rc;
	if ((job->kind != PK_JOB_SERIES && job->kind != PK_JOB_COMMAND) || !job->payload ||
	    !json_parser_load_from_data(p, job->payload, -1, NULL))
		return 0;
	root = json_parser_get_root(p);
	if (!root || !JSON_NODE_HOLDS_OBJECT(root) ||
	    !json_object_has_member(json_node_get_object(root), "mails"))
		return 0;   /* a command without a series (help): look further up the thread */
	out->series = json_node_copy(root);
	out->job_id = job->kind == PK_JOB_SERIES ? job->id
		    : json_object_get_int_member_with_default(json_node_get_object(root), "series_job", 0);
	return 1;
}

/*
 * The series the command's thread is about: the mail it answers, then
 * up its References, nearest first.  0 (out->series, or out->why), or -1.
 */
static int find_series(struct pk_daemon *d, const struct pk_mail *m, struct thread_series *out, GError **err)
{
	int rc = 0;

	if (m->in_reply_to && (rc = series_of_mail(d, m->in_reply_to, out, err)) != 0)
		return rc < 0 ? -1 : 0;
	for (guint i = m->references->len; i-- > 0;)
		if ((rc = series_of_mail(d, m->references->pdata[i], out, err)) != 0)
			return rc < 0 ? -1 : 0;
	if (!out->why)
		out->why = g_strdup(m->in_reply_to || m->references->len
				    ? "it answers no patch or cover letter the bot read"
				    : "it answers no mail (no In-Reply-To or References)");
	return 0;
}

/* The command job's payload (daemon.h): the command, its mail, and its series or why none. */
static char *command_payload(const struct pk_mailcmd *c, gint64 mail_id, const struct thread_series *t)
{
	g_autoptr(JsonNode) root = t->series ? json_node_copy(t->series) : json_node_new(JSON_NODE_OBJECT);
	JsonObject *o;

	if (!t->series)
		json_node_take_object(root, json_object_new());
	o = json_node_get_object(root);
	/* a series job's own members that are not the command's */
	json_object_remove_member(o, "key");
	json_object_remove_member(o, "version");
	json_object_remove_member(o, "no_series");
	json_object_set_string_member(o, "command", pk_mailcmd_kind_name(c->kind));
	json_object_set_int_member(o, "mail", mail_id);
	if (c->arg)
		json_object_set_string_member(o, "base", c->arg);
	else
		json_object_remove_member(o, "base");
	if (c->word)
		json_object_set_string_member(o, "word", c->word);
	if (t->series)
		json_object_set_int_member(o, "series_job", t->job_id);
	else
		json_object_set_string_member(o, "no_series", t->why);
	return json_to_string(root, FALSE);
}

/*
 * Whether the command mail's From is its sender's: its source is
 * trusted_commands, or the Authentication-Results of one of [daemon]
 * commands_authserv_id vouch for it (intake/authres.h).  *what (new)
 * says how, or why not.
 */
static bool sender_proven(struct pk_daemon *d, const struct pk_store_mail *row, const struct pk_mail *mail,
			  char **what)
{
	const struct pk_source_config *src = daemon_source_of(d, row->source_id);
	char **ids = d->config.daemon.commands_authserv_id;

	if (src && src->trusted_commands) {
		*what = g_strdup_printf("[source %s] trusted_commands", src->name);
		return true;
	}
	/* which From a signature covered is not ours to guess */
	if (mail->from_count != 1) {
		*what = g_strdup_printf("its From: names %u mailboxes, not one", mail->from_count);
		return false;
	}
	if (!ids) {
		*what = g_strdup_printf("no [daemon] commands_authserv_id, and %s%s%s is not trusted_commands",
					src ? "[source " : "its source", src ? src->name : "", src ? "]" : "");
		return false;
	}
	return pk_authres_vouches((const char *const *)mail->auth_results->pdata, mail->auth_results->len,
				  (const char *const *)ids, mail->from_addr, what);
}

/* What the per-thread limit counts a command in: the series it is about, whatever its References say. */
static char *thread_key(const struct thread_series *t)
{
	return t->series ? g_strdup_printf("series %" G_GINT64_FORMAT, t->job_id) : g_strdup("no series");
}

/* Store the command mail skipped with why (and log it): never acted on, never answered. */
static int command_skip(struct pk_daemon *d, const struct pk_store_mail *base, const char *why, GError **err)
{
	struct pk_store_mail row = *base;
	gint64 id;

	row.state = "skipped";
	row.reason = (char *)why;
	if (pk_store_mail_add(d->store, &id, NULL, &row, NULL, 0, err) < 0)
		return -1;
	daemon_log(0, row.message_id, "skipped: %s", why);
	return 0;
}

/*
 * Whether a rate limit holds the command back: all commands, the
 * sender's or the thread's (its series') acted on in the last hour.
 * 1 (*why new), 0, -1.
 */
static int over_rate(struct pk_daemon *d, const char *sender, const char *thread, char **why, GError **err)
{
	const struct pk_daemon_config *c = &d->config.daemon;
	gint64 since = daemon_now() - 3600, n = 0;

	if (c->commands_total_per_hour) {
		if (pk_store_commands_since(d->store, NULL, NULL, since, &n, err) < 0)
			return -1;
		if (n >= c->commands_total_per_hour) {
			*why = g_strdup_printf("a #printkbot command over the rate: %" G_GINT64_FORMAT " were acted "
					       "on in the last hour ([daemon] commands_total_per_hour = %u): not "
					       "acted on", n, c->commands_total_per_hour);
			return 1;
		}
	}
	if (c->commands_per_hour) {
		if (pk_store_commands_since(d->store, sender, NULL, since, &n, err) < 0)
			return -1;
		if (n >= c->commands_per_hour) {
			*why = g_strdup_printf("a #printkbot command over the rate: %s gave %" G_GINT64_FORMAT
					       " in the last hour ([daemon] commands_per_hour = %u): not acted on",
					       sender, n, c->commands_per_hour);
			return 1;
		}
	}
	if (c->commands_per_thread_hour) {
		if (pk_store_commands_since(d->store, NULL, thread, since, &n, err) < 0)
			return -1;
		if (n >= c->commands_per_thread_hour) {
			*why = g_strdup_printf("a #printkbot command over the rate: its thread (%s) had %"
					       G_GINT64_FORMAT " in the last hour ([daemon] "
					       "commands_per_thread_hour = %u): not acted on", thread, n,
					       c->commands_per_thread_hour);
			return 1;
		}
	}
	return 0;
}

/* The mail, its command row and its job, in one transaction. */
static int command_queue(struct pk_daemon *d, const struct pk_store_mail *base, const struct pk_mailcmd *c,
			 const char *thread, const struct thread_series *t, const char *raw, size_t len,
			 gint64 *out_job, GError **err)
{
	struct pk_store_mail row = *base;
	struct pk_store_command cr = { 0 };
	g_autofree char *payload = NULL;
	gint64 mail_id, job, cmd_id;
	bool existed;

	row.state = "queued";
	row.reason = NULL;
	if (pk_store_begin(d->store, err) < 0)
		return -1;
	if (pk_store_mail_add(d->store, &mail_id, &existed, &row, raw, len, err) < 0)
		goto fail;
	if (existed) {   /* another intake cannot be (the lock), but say it rather than act twice */
		pk_store_rollback(d->store);
		return pk_error(err, PK_ERROR_FAILED, "<%s> was stored meanwhile", row.message_id);
	}
	/* only test works on the series; the others were found one for the thread's limit alone */
	payload = command_payload(c, mail_id, c->kind == PK_MAILCMD_TEST ? t : &(struct thread_series){ 0 });
	if (pk_store_job_add(d->store, &job, PK_JOB_COMMAND, payload, err) < 0 ||
	    pk_store_mail_set_state(d->store, mail_id, "queued", NULL, job, err) < 0)
		goto fail;
	cr.mail_id = mail_id;
	cr.job_id = job;
	cr.sender = row.author_email;
	cr.thread = thread;
	cr.command = pk_mailcmd_kind_name(c->kind);
	cr.arg = c->arg;
	if (pk_store_command_add(d->store, &cmd_id, &cr, err) < 0 || pk_store_commit(d->store, err) < 0)
		goto fail;
	*out_job = job;
	return 0;
fail:
	pk_store_rollback(d->store);
	return -1;
}

int daemon_intake_command(struct pk_daemon *d, const struct pk_store_mail *row, const struct pk_mail *mail,
			  const char *raw, size_t len, const char *bot, GError **err)
{
	const struct pk_daemon_config *c = &d->config.daemon;
	g_auto(pk_mailcmd_t) cmd = { 0 };
	struct thread_series t = { 0 };
	g_autofree char *why = NULL, *proof = NULL, *thread = NULL;
	gint64 job = 0;
	int rc;

	/* our own mail and automatic mail never command the bot; a command is addressed to it */
	if (mail->bot_header || mail->auto_submitted || !mail->from_addr ||
	    !g_ascii_strcasecmp(mail->from_addr, bot) ||
	    !pk_mailcmd_addressed_to((const char *const *)mail->cc_addrs->pdata, mail->cc_addrs->len, bot))
		return 0;
	pk_mailcmd_parse(&cmd, mail->body);
	if (cmd.kind == PK_MAILCMD_NONE)
		return 0;
	if (!c->commands_from)
		rc = command_skip(d, row, "a #printkbot command, but commands by mail are off ([daemon] "
				  "commands_from is not set)", err);
	else if (!pk_mailcmd_sender_allowed((const char *const *)c->commands_from, mail->from_addr)) {
		why = g_strdup_printf("a #printkbot command refused: %s is not in [daemon] commands_from",
				      mail->from_addr);
		rc = command_skip(d, row, why, err);
	} else if (!sender_proven(d, row, mail, &proof)) {
		why = g_strdup_printf("a #printkbot command refused: its From (%s) is not proven: %s",
				      mail->from_addr, proof);
		rc = command_skip(d, row, why, err);
	} else if (find_series(d, mail, &t, err) < 0) {
		rc = -1;
	} else if ((rc = over_rate(d, mail->from_addr, (thread = thread_key(&t)), &why, err)) != 0) {
		rc = rc < 0 ? -1 : command_skip(d, row, why, err);
	} else if (command_queue(d, row, &cmd, thread, &t, raw, len, &job, err) < 0) {
		rc = -1;
	} else {
		if (t.series && cmd.kind == PK_MAILCMD_TEST)
			daemon_log(job, mail->message_id, "queued: '%s' from %s, on the series of job %"
				   G_GINT64_FORMAT "; sender proven by %s", cmd.line, mail->from_addr, t.job_id, proof);
		else
			daemon_log(job, mail->message_id, "queued: '%s' from %s%s%s; sender proven by %s", cmd.line,
				   mail->from_addr, t.why && cmd.kind == PK_MAILCMD_TEST ? "; no series: " : "",
				   t.why && cmd.kind == PK_MAILCMD_TEST ? t.why : "", proof);
	}
	thread_series_clear(&t);
	return rc < 0 ? -1 : 1;
}
