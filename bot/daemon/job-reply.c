/*
 * job-reply.c - the reply job and the outbox: a rendered reply waits in
 * the outbox Maildir's new/ until the SMTP server takes it, then is
 * recorded as sent in the store and moved to cur/.  See daemon.h.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "report/outbox.h"
#include "report/reply.h"
#include "report/smtp.h"
#include "base/util.h"

#include <string.h>

/* ---- the outbox ----------------------------------------------------------- */

/* The outbox the config names (created when missing); the one open before is kept on failure. */
int daemon_open_outbox(struct pk_daemon *d, GError **err)
{
	g_autofree char *dir = pk_outbox_default_dir(d->config.daemon.outbox);
	struct pk_outbox *ob;

	if (d->outbox && !strcmp(d->outbox->dir, dir))
		return 0;
	if (pk_outbox_open(&ob, dir, true, err) < 0)
		return -1;
	pk_outbox_free(d->outbox);
	d->outbox = ob;
	return 0;
}

/*
 * At start-up: a reply in new/ that the store records as sent was sent
 * just before a crash (between the record and the move): move it to cur/
 * so it is never sent again.  The others wait for their reply jobs.
 */
int daemon_reconcile_outbox(struct pk_daemon *d, GError **err)
{
	g_autoptr(GPtrArray) waiting = NULL;
	guint left = 0;

	if (pk_outbox_waiting(d->outbox, &waiting, err) < 0)
		return -1;
	for (guint i = 0; i < waiting->len; i++) {
		const char *mid = waiting->pdata[i];
		struct pk_store_reply *r = NULL;
		int rc = pk_store_reply_by_message_id(d->store, mid, &r, err);

		if (rc < 0)
			return -1;
		left += rc == 0 || !r->sent;
		if (rc == 0)
			daemon_log(0, mid, "in the outbox but not in the store: left in %s/new", d->outbox->dir);
		else if (r->sent) {
			if (pk_outbox_mark_sent(d->outbox, mid, err) < 0) {
				pk_store_reply_free(r);
				return -1;
			}
			daemon_log(0, mid, "sent before the daemon stopped: moved to the outbox's cur/, not sent again");
		}
		pk_store_reply_free(r);
	}
	if (left)
		daemon_log(0, NULL, "outbox %s: %u repl%s waiting in new/", d->outbox->dir, left,
			   left == 1 ? "y" : "ies");
	return 0;
}

/* ---- the reply job -------------------------------------------------------- */

double daemon_retry_wait(const struct pk_daemon *d, gint64 attempts)
{
	return MIN(d->config.daemon.retry_min * (double)(1ull << MIN(MAX(attempts, 1) - 1, 20)),
		   d->config.daemon.retry_max);
}

enum job_end daemon_test_job_unfinished(const struct pk_daemon *d, const struct pk_store_job *job, int rc,
					const GError *err, const char *what, char **detail, gint64 *out_retry)
{
	const char *why = err ? err->message : "failed";

	if (rc > 0)
		return JOB_INTERRUPTED;
	if (daemon_stopping()) {
		*detail = g_strdup(why);
		return JOB_INTERRUPTED;
	}
	if (pk_error_transient(err) || job->attempts < DAEMON_TEST_JOB_MAX_ATTEMPTS) {
		double wait = daemon_retry_wait(d, job->attempts);

		*out_retry = daemon_now() + (gint64)wait;
		*detail = g_strdup_printf("%s; the worker failed, not the %s: next try in %.0f s", why, what, wait);
		return JOB_RETRY;
	}
	*detail = g_strdup_printf("%s (the worker failed %d times on it)", why, job->attempts);
	return JOB_FAILED;
}

/*
 * A reply that needs no sending is settled here: one the outbox has in
 * cur/ (sent, maybe not recorded) or the store records as sent (moved to
 * cur/ now) is done.  A reply whose file is missing from the outbox (stored
 * before the outbox existed, or removed by hand) is delivered from the
 * store's text first.  1 with *end and *detail set when settled, 0 to send.
 */
static int reply_settled(struct pk_daemon *d, const struct pk_store_job *job,
			 const struct pk_store_reply *r, enum job_end *end, char **detail, gint64 *out_retry)
{
	g_autoptr(GError) err = NULL;
	gint64 job_id = job->id;

	switch (pk_outbox_state(d->outbox, r->message_id)) {
	case PK_OUTBOX_SENT:
		/* moved to cur/ but not recorded (the record failed, or a crash): it went out */
		if (!r->sent && pk_store_reply_sent(d->store, r->id, 0, &err) < 0)
			daemon_log(job_id, r->message_id, "sent, but not recorded: %s", err->message);
		*detail = g_strdup_printf("<%s> was sent already", r->message_id);
		*end = JOB_DONE;
		return 1;
	case PK_OUTBOX_WAITING:
		break;
	case PK_OUTBOX_ABSENT:
		if (r->sent)
			break;
		if (pk_outbox_deliver(d->outbox, r->message_id, r->text, strlen(r->text), NULL, &err) < 0) {
			double wait = daemon_retry_wait(d, job->attempts);

			/* a full disk or an I/O error passes: the reply is not lost for it */
			*end = pk_error_transient(err) ? JOB_RETRY : JOB_FAILED;
			if (*end == JOB_RETRY) {
				*out_retry = daemon_now() + (gint64)wait;
				*detail = g_strdup_printf("<%s> cannot be put in the outbox now: %s; next try "
							  "in %.0f s", r->message_id, err->message, wait);
			} else {
				*detail = g_strdup_printf("<%s> cannot be put in the outbox: %s", r->message_id,
							  err->message);
			}
			return 1;
		}
		daemon_log(job_id, r->message_id, "not in the outbox: delivered from the store");
		break;
	}
	if (!r->sent)
		return 0;
	if (pk_outbox_mark_sent(d->outbox, r->message_id, &err) < 0 &&
	    pk_outbox_state(d->outbox, r->message_id) == PK_OUTBOX_WAITING)
		daemon_log(job_id, r->message_id, "sent, but still in the outbox: %s", err->message);
	*detail = g_strdup_printf("<%s> was sent already", r->message_id);
	*end = JOB_DONE;
	return 1;
}

/*
 * The server took the reply: record it, then move the file to cur/ (even
 * when the record failed: cur/ alone is enough to never send it again).
 * Returns the job's detail (new).
 */
static char *reply_record_sent(struct pk_daemon *d, gint64 job_id, const struct pk_store_reply *r,
			       char **rcpts, GPtrArray *refused)
{
	g_autoptr(GPtrArray) took = g_ptr_array_new();
	g_autofree char *to = NULL;
	g_autoptr(GError) err = NULL;

	/* "sent to" names those the server took: a refused one is "<addr> (answer)" (smtp.h) */
	for (char **a = rcpts; *a; a++) {
		g_autofree char *mark = g_strdup_printf("<%s> ", *a);
		bool gone = false;

		for (guint i = 0; i < refused->len && !gone; i++)
			gone = g_str_has_prefix(refused->pdata[i], mark);
		if (!gone && **a)
			g_ptr_array_add(took, *a);
	}
	g_ptr_array_add(took, NULL);
	to = g_strjoinv(", ", (char **)took->pdata);

	/* the others have it: a refused one (a stale Cc) is told in the log, not retried */
	for (guint i = 0; i < refused->len; i++)
		daemon_log(job_id, r->message_id, "recipient refused by the server, not sent to it: %s",
			   (const char *)refused->pdata[i]);

	if (pk_store_reply_sent(d->store, r->id, 0, &err) < 0) {
		daemon_log(job_id, r->message_id, "sent, but not recorded: %s", err->message);
		g_clear_error(&err);
	}
	if (pk_outbox_mark_sent(d->outbox, r->message_id, &err) < 0)
		daemon_log(job_id, r->message_id, "sent, but still in the outbox: %s", err->message);
	if (refused->len)
		return g_strdup_printf("<%s> sent to %s but %u refused by the server (logged)", r->message_id,
				       to, refused->len);
	return g_strdup_printf("<%s> sent to %s", r->message_id, to);
}

/*
 * Send the reply's file from new/ with the envelope the store keeps: done,
 * refused for good (failed), or not sent now (retried after the backoff,
 * the file waiting in new/).
 */
static enum job_end reply_send(struct pk_daemon *d, const struct pk_store_job *job,
			       const struct pk_store_reply *r, char **detail, gint64 *out_retry)
{
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) rcpts = NULL;
	g_autoptr(GPtrArray) refused = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *text = NULL;
	bool permanent = false;
	double wait = daemon_retry_wait(d, job->attempts);
	size_t len;

	if (pk_outbox_read(d->outbox, r->message_id, &text, &len, &err) <= 0) {
		/* the file is there (it was checked): a read error is the disk's, try again later */
		*out_retry = daemon_now() + (gint64)wait;
		*detail = g_strdup_printf("<%s> cannot be read from the outbox: %s; next try in %.0f s",
					  r->message_id, err ? err->message : "gone", wait);
		return JOB_RETRY;
	}
	/* the store decides who sends: only the holder of the job, while its lease holds */
	if (daemon_lease_check(d, job->id, &err) < 0) {
		*detail = g_strdup_printf("<%s> not sent now: %s", r->message_id, err->message);
		*out_retry = daemon_now() + (gint64)wait;
		/* a lost lease: the store refuses this end too, the holder sends */
		return pk_error_transient(err) ? JOB_RETRY : JOB_FAILED;
	}
	rcpts = g_strsplit(r->recipients ? r->recipients : "", "\n", -1);
	/* SIGTERM ends the conversation within a second: systemd kills a daemon that takes 30 s to stop */
	if (pk_smtp_send(&d->config.smtp, r->sender, (const char *const *)rcpts, text, refused,
			 daemon_stopping, &permanent, &err) == 0) {
		*detail = reply_record_sent(d, job->id, r, rcpts, refused);
		return JOB_DONE;
	}
	if (permanent) {
		g_autoptr(GError) move = NULL;

		*detail = g_strdup_printf("<%s> refused by the server: %s", r->message_id, err->message);
		/* out of new/: `ls outbox/new` is what still waits */
		if (pk_outbox_mark_refused(d->outbox, r->message_id, &move) < 0)
			daemon_log(job->id, r->message_id, "refused, but still in the outbox: %s", move->message);
		return JOB_FAILED;
	}
	if (daemon_stopping()) {
		/* stopped, not refused: in new/, and the job queued for the next start */
		*detail = g_strdup_printf("<%s> not sent: %s; waiting in the outbox", r->message_id,
					  err->message);
		return JOB_INTERRUPTED;
	}
	*out_retry = daemon_now() + (gint64)wait;
	*detail = g_strdup_printf("<%s> not sent (attempt %d): %s; next try in %.0f s; waiting in "
				  "the outbox", r->message_id, job->attempts, err->message, wait);
	return JOB_RETRY;
}

/*
 * A reply that is not to go out after all: held by the list's policy
 * (the row says why), or, one that waited out the list's embargo
 * (queued under its series, job->series_key), replaced by a later
 * version or a resend of its series that came meanwhile: held now, and
 * done, nothing sent.  0 with *detail set when so, 0 with *detail NULL to
 * go on, -1 with err when the store failed.
 */
static int reply_replaced(struct pk_daemon *d, const struct pk_store_job *job, struct pk_store_reply *r,
			  enum job_end *end, char **detail, GError **err)
{
	gint64 newer = 0;
	int rc;

	*detail = NULL;
	if (r->held) {
		*detail = g_strdup_printf("<%s> not sent: %s", r->message_id, r->held);
		*end = JOB_DONE;
		return 0;
	}
	if (!job->series_key || r->sent)
		return 0;
	if ((rc = pk_store_job_newer_series(d->store, job->series_key, job->series_version, r->job_id, &newer,
					    err)) <= 0)
		return rc;
	r->held = g_strdup_printf("replaced by a later version or a resend of its series (job %" G_GINT64_FORMAT
				  ") inside the list's embargo", newer);
	if (pk_store_reply_hold(d->store, r->id, r->held, err) < 0)
		return -1;
	daemon_log(job->id, r->message_id, "not sent: %s", r->held);
	*detail = g_strdup_printf("<%s> not sent: %s", r->message_id, r->held);
	*end = JOB_DONE;
	return 0;
}

/*
 * Send one reply from the outbox.  Sent, it is recorded in the store, then
 * moved to cur/; a crash between the two leaves a file in new/ of a reply
 * the store says is sent, which is moved and not sent again (here and in
 * daemon_reconcile_outbox()), so a reply always goes out once, with the
 * Message-ID it was rendered with.
 */
enum job_end daemon_run_reply(struct pk_daemon *d, const struct pk_store_job *job,
			      JsonObject *payload, char **detail, gint64 *out_retry)
{
	gint64 reply_id = payload ? json_object_get_int_member_with_default(payload, "reply", 0) : 0;
	struct pk_store_reply *r = NULL;
	g_autoptr(GError) err = NULL;
	enum job_end end;

	if (pk_store_reply_get(d->store, reply_id, &r, &err) <= 0 || !r->text) {
		*detail = g_strdup_printf("reply %" G_GINT64_FORMAT " is not stored: %s", reply_id,
					  err ? err->message : "no text");
		pk_store_reply_free(r);
		return JOB_FAILED;
	}
	if (reply_replaced(d, job, r, &end, detail, &err) < 0) {
		/* the store could not say: asked again later, as a send that failed */
		*out_retry = daemon_now() + (gint64)daemon_retry_wait(d, job->attempts);
		*detail = g_strdup_printf("<%s> not sent now: %s", r->message_id, err->message);
		end = JOB_RETRY;
	} else if (!*detail && !reply_settled(d, job, r, &end, detail, out_retry)) {
		end = reply_send(d, job, r, detail, out_retry);
	}
	pk_store_reply_free(r);
	return end;
}
