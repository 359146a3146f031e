/*
 * tested.c - what every job that tests something does with what it
 * tested: the series job (a patch), the push job (a commit) and the
 * command job (a series again, one answer).  Each stores its test and
 * review, the reply's row and the job that sends the reply in one
 * transaction, and only while this worker holds the job's lease; the
 * reply is delivered into the outbox's new/ before that transaction
 * commits (tested_reply()), so a crash between leaves a file
 * the reply built again (same Message-ID) finds.  A failure rolls back
 * and leaves the job to be run again.
 *
 * The jobs differ in what they record, how the mail is decided and
 * rendered, and what their log lines call it: those they hand in
 * (struct daemon_tested, struct daemon_tested_mail); the sequence is
 * here, once.  See private.h.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "report/outbox.h"
#include "report/reply.h"
#include "report/review.h"

#include <string.h>

/*
 * The reply's row, inside daemon_tested_store()'s transaction: t->row is
 * stored with t->reply's envelope and text when there is one (a mail to
 * send; none: the policy held it, row.held says why); then the job that
 * sends it is queued (*out_send_job, 0 for none), not to run before
 * t->not_before (the list's embargo; 0: at once), under t->series_key
 * and version when it waits (so that a later version or a resend
 * replaces it; NULL: it cannot be).  A mail sent at once is delivered
 * into the outbox's new/ before the caller commits; one that waits, when
 * its job runs (job-reply.c).
 */
static int tested_reply(struct pk_daemon *d, const struct daemon_tested *t, gint64 *out_send_job, GError **err)
{
	const struct pk_reply *reply = t->reply;
	struct pk_store_reply sr = t->row;
	g_autoptr(GString) recipients = g_string_new(NULL);
	g_autofree char *payload = NULL;
	gint64 reply_id, send_job = 0;

	if (reply) {
		for (guint i = 0; i < reply->recipients->len; i++)
			g_string_append_printf(recipients, "%s%s", i ? "\n" : "",
					       (const char *)reply->recipients->pdata[i]);
		sr.message_id = reply->message_id;
		sr.sender = reply->sender;
		sr.recipients = recipients->str;
		sr.text = reply->text;
	}
	if (pk_store_reply_add(d->store, &reply_id, &sr, err) < 0)
		return -1;
	if (reply) {
		payload = g_strdup_printf("{\"reply\":%" G_GINT64_FORMAT "}", reply_id);
		if (pk_store_job_add_reply(d->store, &send_job, t->not_before ? t->series_key : NULL, t->version,
					   t->not_before, payload, err) < 0 ||
		    pk_store_reply_set_send_job(d->store, reply_id, send_job, err) < 0)
			return -1;
		/*
		 * in the outbox before the commit: a crash between leaves a file the re-render
		 * finds.  One that waits out an embargo is put there when its job runs: a later
		 * version may replace it before.
		 */
		if (!t->not_before && pk_outbox_deliver(d->outbox, reply->message_id, reply->text, strlen(reply->text),
						     NULL, err) < 0)
			return -1;
	}
	*out_send_job = send_job;
	return 0;
}

int daemon_tested_store(struct pk_daemon *d, struct daemon_tested *t, gint64 *out_send_job, GError **err)
{
	if (pk_store_begin(d->store, err) < 0)
		return -1;
	/* held until the commit: a worker whose lease ended stores nothing, delivers nothing */
	if (daemon_lease_check(d, t->job_id, err) < 0 ||
	    t->record(t->ctx, &t->row.review_id, err) < 0 ||
	    tested_reply(d, t, out_send_job, err) < 0 ||
	    pk_store_commit(d->store, err) < 0) {
		pk_store_rollback(d->store);
		return -1;
	}
	return 0;
}

/*
 * The mail about what was tested, rendered when the gate says so.  One
 * that cannot be rendered is no failure of the job: it is held, and the
 * row says why.  0, or -1 with err when the bot failed.
 */
static int tested_render(struct daemon_tested_mail *m, struct daemon_gate *gate, JsonNode *model,
			 struct pk_reply *reply, GError **err)
{
	g_autoptr(GError) rerr = NULL;
	int rc;

	if (!gate->mail)
		return 0;
	if ((rc = m->render(m->ctx, gate, model, reply, &rerr)) < 0) {
		g_propagate_error(err, g_steal_pointer(&rerr));
		return -1;
	}
	if (rc > 0) {
		daemon_log(m->job_id, m->msgid, "%sno %s: %s", m->fail_prefix ? m->fail_prefix : "", m->noun,
			   rerr->message);
		gate->mail = false;
		gate->held = g_strdup_printf("not rendered: %s", rerr->message);
	}
	return 0;
}

/* The log lines of one stored result: the gate's decision, then what was stored and sent. */
static void tested_log(const struct daemon_tested_mail *m, const struct daemon_gate *gate,
		       const struct pk_reply *reply, gint64 review_id, gint64 send_job)
{
	daemon_gate_log(gate, m->job_id, m->msgid, m->what);
	if (gate->mail)
		daemon_log(m->job_id, m->msgid, "%s (review %" G_GINT64_FORMAT "); %s <%s>%s%s %s, sent by job %"
			   G_GINT64_FORMAT, m->what, review_id, m->noun, reply->message_id, m->to ? " to " : "",
			   m->to ? m->to : "", gate->not_before ? m->embargo : "in the outbox", send_job);
	else
		daemon_log(m->job_id, m->msgid, "%s (review %" G_GINT64_FORMAT "); no %s", m->what, review_id,
			   m->noun);
}

/* daemon_tested_mail()'s record: the job's, with the review made for it. */
struct tested_doc {
	struct daemon_tested_mail *m;
	const struct pk_review_doc *doc;
};

static int tested_record(void *ctx, gint64 *out_review_id, GError **err)
{
	struct tested_doc *td = ctx;

	return td->m->record(td->m->ctx, td->doc, out_review_id, err);
}

int daemon_tested_mail(struct pk_daemon *d, struct daemon_tested_mail *m, GError **err)
{
	struct pk_review_doc doc;
	struct daemon_gate gate = { 0 };
	struct pk_reply reply = { 0 };
	struct tested_doc td = { m, &doc };
	struct daemon_tested t = { .job_id = m->job_id, .row = m->row, .record = tested_record, .ctx = &td,
				   .series_key = m->series_key, .version = m->version };
	gint64 send_job = 0;
	int rc = -1;

	if (pk_review_doc_make(&doc, m->patch, m->res, m->info, err) < 0)
		return -1;
	if (m->gate(m->ctx, &gate, json_node_get_object(doc.model), err) < 0 ||
	    tested_render(m, &gate, doc.model, &reply, err) < 0)
		goto out;
	t.row.list_name = gate.list_name;
	t.row.author = gate.author;
	t.row.effect = gate.effect;
	t.row.rule = (char *)gate.judgement.rule;
	t.row.held = gate.held;
	t.reply = gate.mail ? &reply : NULL;
	t.not_before = gate.not_before;
	if (daemon_tested_store(d, &t, &send_job, err) < 0)
		goto out;
	tested_log(m, &gate, &reply, t.row.review_id, send_job);
	rc = 0;
out:
	daemon_gate_clear(&gate);
	pk_reply_clear(&reply);
	pk_review_doc_clear(&doc);
	return rc;
}
