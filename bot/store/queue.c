/*
 * queue.c - what the daemon keeps: the job queue, the mails it read, the
 * replies it rendered, and how far each source was read.  See store.h for
 * the contracts.
 */
#include "store/private.h"

#include <string.h>

/* ---- the job queue ------------------------------------------------------ */

static const char *const job_states[] = { "queued", "running", "done", "failed", "cancelled" };

/* The static name of a state, or NULL for an unknown one. */
static const char *job_state_name(const char *state)
{
	for (size_t i = 0; state && i < G_N_ELEMENTS(job_states); i++)
		if (!strcmp(state, job_states[i]))
			return job_states[i];
	return NULL;
}

static gboolean job_move_allowed(const char *from, const char *to)
{
	static const struct { const char *from, *to; } moves[] = {
		{ "queued", "running" }, { "queued", "cancelled" },
		{ "running", "done" }, { "running", "failed" },
		{ "running", "queued" },   /* the daemon died mid-job: run it again */
		{ "failed", "queued" },    /* retry */
	};

	for (size_t i = 0; i < G_N_ELEMENTS(moves); i++)
		if (!strcmp(from, moves[i].from) && !strcmp(to, moves[i].to))
			return TRUE;
	return FALSE;
}

int pk_store_job_add(struct pk_store *store, gint64 *out_id, const char *kind,
		     const char *payload, GError **err)
{
	/* state is left to its default: only pk_store_job_set_state() writes it */
	g_autoptr(sqlite3_stmt) st = prep(store, "INSERT INTO jobs (kind, payload, created, updated) "
					  "VALUES (?1, ?2, ?3, ?3)", err);

	if (!st)
		return -1;
	bind_text(st, 1, kind);
	bind_text(st, 2, payload);
	sqlite3_bind_int64(st, 3, unix_now());
	if (run(store, st, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

int pk_store_job_state(struct pk_store *store, gint64 job_id, const char **out_state,
		       GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT state FROM jobs WHERE id = ?1", err);
	const char *name;
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	name = job_state_name((const char *)sqlite3_column_text(st, 0));
	if (!name)
		return pk_error(err, PK_ERROR_INPUT, "%s: job %" G_GINT64_FORMAT " has an unknown state",
				store->path, job_id);
	*out_state = name;
	return 1;
}

static int job_set_state_locked(struct pk_store *s, gint64 job_id, const char *to,
				const char *detail, GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	const char *from = NULL;
	int rc;

	if ((rc = pk_store_job_state(s, job_id, &from, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no job %" G_GINT64_FORMAT,
					      s->path, job_id);
	if (!job_move_allowed(from, to))
		return pk_error(err, PK_ERROR_INPUT, "job %" G_GINT64_FORMAT ": cannot go from %s to %s",
				job_id, from, to);
	st = prep(s, "UPDATE jobs SET state = ?2, detail = ?3, updated = ?4, "
		  "attempts = attempts + (?2 = 'running') WHERE id = ?1", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	bind_text(st, 2, to);
	bind_text(st, 3, detail);
	sqlite3_bind_int64(st, 4, unix_now());
	return run(s, st, err);
}

int pk_store_job_set_state(struct pk_store *store, gint64 job_id, const char *state,
			   const char *detail, GError **err)
{
	const char *to = job_state_name(state);

	if (!to)
		return pk_error(err, PK_ERROR_INPUT, "unknown job state '%s'", state ? state : "(null)");
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, job_set_state_locked(store, job_id, to, detail, err), err);
}

int pk_store_job_next(struct pk_store *store, gint64 *out_id, char **out_kind,
		      char **out_payload, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT id, kind, payload FROM jobs WHERE state = "
					  "'queued' ORDER BY id LIMIT 1", err);
	int rc;

	if (!st)
		return -1;
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out_id = sqlite3_column_int64(st, 0);
	*out_kind = col_text(st, 1);
	*out_payload = col_text(st, 2);
	return 1;
}

/* ---- the daemon: sources, mails, replies, the queue ------------------ */

int pk_store_source_state_get(struct pk_store *store, gint64 source_id, const char *key,
			      char **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT value FROM source_state "
					  "WHERE source_id = ?1 AND key = ?2", err);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, source_id);
	bind_text(st, 2, key);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out = col_text(st, 0);
	return 1;
}

int pk_store_source_state_set(struct pk_store *store, gint64 source_id, const char *key,
			      const char *value, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "INSERT INTO source_state (source_id, key, value) "
					  "VALUES (?1, ?2, ?3) ON CONFLICT (source_id, key) "
					  "DO UPDATE SET value = excluded.value", err);

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, source_id);
	bind_text(st, 2, key);
	bind_text(st, 3, value);
	return run(store, st, err);
}

void pk_store_mail_free(struct pk_store_mail *m)
{
	if (!m)
		return;
	g_free(m->message_id);
	g_free(m->in_reply_to);
	g_free(m->refs);
	g_free(m->subject);
	g_free(m->author_email);
	g_free(m->state);
	g_free(m->reason);
	g_free(m);
}

static const char *const mail_states[] = { "pending", "queued", "skipped" };

static gboolean mail_state_known(const char *state)
{
	for (size_t i = 0; state && i < G_N_ELEMENTS(mail_states); i++)
		if (!strcmp(state, mail_states[i]))
			return TRUE;
	return FALSE;
}

int pk_store_mail_find(struct pk_store *store, const char *message_id, gint64 *out_id,
		       GError **err)
{
	g_autofree char *mid = store_bare_msgid(message_id);
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT id FROM mails WHERE message_id = ?1", err);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, mid);
	if ((rc = step(store, st, err)) > 0)
		*out_id = sqlite3_column_int64(st, 0);
	return rc;
}

static int insert_mail(struct pk_store *s, gint64 *out_id, const struct pk_store_mail *m,
		       const char *mid, const char *raw, size_t len, GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	g_autoptr(GBytes) blob = NULL;

	if (raw && !(blob = store_gzip(raw, len, err)))
		return -1;
	st = prep(s, "INSERT INTO mails (source_id, message_id, in_reply_to, refs, subject, "
		  "author_email, version, number, total, state, reason, raw, job_id, received, churn) "
		  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)", err);
	if (!st)
		return -1;
	bind_id(st, 1, m->source_id);
	bind_text(st, 2, mid);
	bind_text(st, 3, m->in_reply_to);
	bind_text(st, 4, m->refs);
	bind_text(st, 5, m->subject);
	bind_text(st, 6, m->author_email);
	sqlite3_bind_int(st, 7, MAX(m->version, 1));
	sqlite3_bind_int(st, 8, MAX(m->number, 0));
	sqlite3_bind_int(st, 9, MAX(m->total, 1));
	bind_text(st, 10, m->state);
	bind_text(st, 11, m->reason);
	bind_blob(st, 12, blob);
	bind_id(st, 13, m->job_id);
	sqlite3_bind_int64(st, 14, m->received ? m->received : unix_now());
	sqlite3_bind_int(st, 15, m->churn);
	if (run(s, st, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int pk_store_mail_add(struct pk_store *store, gint64 *out_id, bool *out_existed,
		      const struct pk_store_mail *mail, const char *raw, size_t len,
		      GError **err)
{
	g_autofree char *mid = store_bare_msgid(mail->message_id);
	gint64 id = 0;
	int rc;

	if (!mid || !*mid)
		return pk_error(err, PK_ERROR_INPUT, "a mail without a Message-ID cannot be stored");
	if (!mail_state_known(mail->state))
		return pk_error(err, PK_ERROR_INPUT, "unknown mail state '%s'",
				mail->state ? mail->state : "(null)");
	if (tx_begin(store, err) < 0)
		return -1;
	rc = pk_store_mail_find(store, mid, &id, err);
	if (rc == 0)
		rc = insert_mail(store, &id, mail, mid, raw, len, err);
	if (tx_end(store, rc < 0 ? -1 : 0, err) < 0)
		return -1;
	*out_id = id;
	if (out_existed)
		*out_existed = rc == 1;
	return 0;
}

#define MAIL_COLUMNS "id, source_id, job_id, message_id, in_reply_to, refs, subject, " \
		     "author_email, version, number, total, state, reason, received, churn"

static struct pk_store_mail *mail_row(sqlite3_stmt *st)
{
	struct pk_store_mail *m = g_new0(struct pk_store_mail, 1);

	m->id = sqlite3_column_int64(st, 0);
	m->source_id = sqlite3_column_int64(st, 1);
	m->job_id = sqlite3_column_int64(st, 2);
	m->message_id = col_text(st, 3);
	m->in_reply_to = col_text(st, 4);
	m->refs = col_text(st, 5);
	m->subject = col_text(st, 6);
	m->author_email = col_text(st, 7);
	m->version = sqlite3_column_int(st, 8);
	m->number = sqlite3_column_int(st, 9);
	m->total = sqlite3_column_int(st, 10);
	m->state = col_text(st, 11);
	m->reason = col_text(st, 12);
	m->received = sqlite3_column_int64(st, 13);
	m->churn = sqlite3_column_int(st, 14);
	return m;
}

int pk_store_mails(struct pk_store *store, const char *state, GPtrArray **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT " MAIL_COLUMNS " FROM mails WHERE "
					  "?1 IS NULL OR state = ?1 ORDER BY id", err);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_mail_free);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, state);
	while ((rc = step(store, st, err)) > 0)
		g_ptr_array_add(rows, mail_row(st));
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}

int pk_store_mail_get(struct pk_store *store, gint64 mail_id, struct pk_store_mail **out,
		      GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT " MAIL_COLUMNS " FROM mails WHERE id = ?1", err);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, mail_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out = mail_row(st);
	return 1;
}

int pk_store_mail_raw(struct pk_store *store, gint64 mail_id, char **out, size_t *out_len,
		      GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT raw FROM mails WHERE id = ?1 AND raw IS NOT NULL", err);
	char *text;
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, mail_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	if (!(text = store_gunzip(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), err)))
		return -1;
	*out_len = strlen(text);
	*out = text;
	return 1;
}

int pk_store_mail_set_state(struct pk_store *store, gint64 mail_id, const char *state,
			    const char *reason, gint64 job_id, GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;

	if (!mail_state_known(state))
		return pk_error(err, PK_ERROR_INPUT, "unknown mail state '%s'", state ? state : "(null)");
	/* a skipped mail no longer needs its bytes */
	st = prep(store, "UPDATE mails SET state = ?2, reason = ?3, job_id = ?4, "
		  "raw = CASE WHEN ?2 = 'skipped' THEN NULL ELSE raw END WHERE id = ?1", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, mail_id);
	bind_text(st, 2, state);
	bind_text(st, 3, reason);
	bind_id(st, 4, job_id);
	if (run(store, st, err) < 0)
		return -1;
	if (!sqlite3_changes(store->db))
		return pk_error(err, PK_ERROR_INPUT, "%s: no mail %" G_GINT64_FORMAT, store->path, mail_id);
	return 0;
}

void pk_store_reply_free(struct pk_store_reply *r)
{
	if (!r)
		return;
	g_free(r->after_commit);
	g_free(r->message_id);
	g_free(r->sender);
	g_free(r->recipients);
	g_free(r->text);
	g_free(r);
}

int pk_store_reply_add(struct pk_store *store, gint64 *out_id, const struct pk_store_reply *r,
		       GError **err)
{
	g_autofree char *mid = store_bare_msgid(r->message_id);
	g_autoptr(sqlite3_stmt) st = prep(store, "INSERT INTO replies (mail_id, review_id, job_id, "
					  "after_commit, message_id, sender, recipients, text, sent) "
					  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", err);

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, r->mail_id);
	bind_id(st, 2, r->review_id);
	bind_id(st, 3, r->job_id);
	bind_text(st, 4, r->after_commit);
	bind_text(st, 5, mid);
	bind_text(st, 6, r->sender);
	bind_text(st, 7, r->recipients);
	bind_text(st, 8, r->text);
	if (r->sent)
		sqlite3_bind_int64(st, 9, r->sent);
	if (run(store, st, err) < 0)
		return -1;
	*out_id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

/* key is bound as text when given, else id. */
static int reply_query(struct pk_store *store, const char *where, gint64 id, const char *key,
		       struct pk_store_reply **out, GError **err)
{
	g_autofree char *sql = g_strdup_printf("SELECT id, mail_id, review_id, job_id, after_commit, "
					       "message_id, sender, recipients, text, sent FROM "
					       "replies WHERE %s = ?1", where);
	g_autoptr(sqlite3_stmt) st = prep(store, sql, err);
	struct pk_store_reply *r;
	int rc;

	if (!st)
		return -1;
	if (key)
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_int64(st, 1, id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	r = g_new0(struct pk_store_reply, 1);
	r->id = sqlite3_column_int64(st, 0);
	r->mail_id = sqlite3_column_int64(st, 1);
	r->review_id = sqlite3_column_int64(st, 2);
	r->job_id = sqlite3_column_int64(st, 3);
	r->after_commit = col_text(st, 4);
	r->message_id = col_text(st, 5);
	r->sender = col_text(st, 6);
	r->recipients = col_text(st, 7);
	r->text = col_text(st, 8);
	r->sent = sqlite3_column_int64(st, 9);
	*out = r;
	return 1;
}

int pk_store_reply_get(struct pk_store *store, gint64 reply_id, struct pk_store_reply **out,
		       GError **err)
{
	return reply_query(store, "id", reply_id, NULL, out, err);
}

int pk_store_reply_for_mail(struct pk_store *store, gint64 mail_id, struct pk_store_reply **out,
			    GError **err)
{
	return reply_query(store, "mail_id", mail_id, NULL, out, err);
}

int pk_store_reply_by_message_id(struct pk_store *store, const char *message_id,
				 struct pk_store_reply **out, GError **err)
{
	return reply_query(store, "message_id", 0, message_id, out, err);
}

static int reply_sent_locked(struct pk_store *s, gint64 reply_id, gint64 when, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(s, "UPDATE replies SET sent = ?2 WHERE id = ?1", err);
	g_autoptr(sqlite3_stmt) rv = NULL;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, reply_id);
	sqlite3_bind_int64(st, 2, when);
	if (run(s, st, err) < 0)
		return -1;
	rv = prep(s, "UPDATE reviews SET posted_to = (SELECT recipients FROM replies WHERE id = ?1), "
		  "posted_at = ?2, reply_message_id = (SELECT message_id FROM replies WHERE id = ?1) "
		  "WHERE id = (SELECT review_id FROM replies WHERE id = ?1)", err);
	if (!rv)
		return -1;
	sqlite3_bind_int64(rv, 1, reply_id);
	sqlite3_bind_int64(rv, 2, when);
	return run(s, rv, err);
}

int pk_store_reply_sent(struct pk_store *store, gint64 reply_id, gint64 time, GError **err)
{
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, reply_sent_locked(store, reply_id, time ? time : unix_now(), err), err);
}

void pk_store_job_free(struct pk_store_job *job)
{
	if (!job)
		return;
	g_free(job->kind);
	g_free(job->payload);
	g_free(job->state);
	g_free(job->detail);
	g_free(job);
}

int pk_store_jobs(struct pk_store *store, const char *state, GPtrArray **out, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT id, kind, payload, state, detail, attempts, "
					  "created, updated, not_before FROM jobs WHERE ?1 IS NULL "
					  "OR state = ?1 ORDER BY id", err);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_job_free);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, state);
	while ((rc = step(store, st, err)) > 0) {
		struct pk_store_job *j = g_new0(struct pk_store_job, 1);

		j->id = sqlite3_column_int64(st, 0);
		j->kind = col_text(st, 1);
		j->payload = col_text(st, 2);
		j->state = col_text(st, 3);
		j->detail = col_text(st, 4);
		j->attempts = sqlite3_column_int(st, 5);
		j->created = sqlite3_column_int64(st, 6);
		j->updated = sqlite3_column_int64(st, 7);
		j->not_before = sqlite3_column_int64(st, 8);
		g_ptr_array_add(rows, j);
	}
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}

int pk_store_job_next_due(struct pk_store *store, const char *kind, gint64 now_s, gint64 *out_id,
			  char **out_kind, char **out_payload, gint64 *out_wait, GError **err)
{
	g_autoptr(sqlite3_stmt) st = prep(store, "SELECT id, kind, payload, not_before FROM jobs "
					  "WHERE state = 'queued' AND (?1 IS NULL OR kind = ?1) "
					  "ORDER BY not_before > ?2, id LIMIT 1", err);
	g_autoptr(sqlite3_stmt) soon = NULL;
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, kind);
	sqlite3_bind_int64(st, 2, now_s);
	if ((rc = step(store, st, err)) < 0)
		return -1;
	if (rc > 0 && sqlite3_column_int64(st, 3) <= now_s) {
		*out_id = sqlite3_column_int64(st, 0);
		*out_kind = col_text(st, 1);
		*out_payload = col_text(st, 2);
		if (out_wait)
			*out_wait = 0;
		return 1;
	}
	if (!out_wait)
		return 0;
	/* nothing due: how long until the first queued job is */
	if (!(soon = prep(store, "SELECT min(not_before) FROM jobs WHERE state = 'queued' AND "
			  "(?1 IS NULL OR kind = ?1)", err)))
		return -1;
	bind_text(soon, 1, kind);
	if (step(store, soon, err) < 0)
		return -1;
	*out_wait = sqlite3_column_type(soon, 0) == SQLITE_NULL ? -1
		  : MAX(sqlite3_column_int64(soon, 0) - now_s, 0);
	return 0;
}

static int job_retry_locked(struct pk_store *s, gint64 job_id, gint64 not_before,
			    const char *detail, GError **err)
{
	g_autoptr(sqlite3_stmt) st = NULL;

	if (job_set_state_locked(s, job_id, "queued", detail, err) < 0)
		return -1;
	if (!(st = prep(s, "UPDATE jobs SET not_before = ?2 WHERE id = ?1", err)))
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, not_before);
	return run(s, st, err);
}

int pk_store_job_retry_at(struct pk_store *store, gint64 job_id, gint64 not_before,
			  const char *detail, GError **err)
{
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, job_retry_locked(store, job_id, not_before, detail, err), err);
}
