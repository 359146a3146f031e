/*
 * queue.c - what the daemon keeps beside its jobs (jobs.c): the mails it
 * read, the replies it rendered, and how far each source was read.  See
 * store.h for the contracts.
 */
#include "store/private.h"

#include <string.h>

/* ---- how far each source was read -------------------------------------- */

int pk_store_source_state_get(struct pk_store *store, gint64 source_id, const char *key,
			      char **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT value FROM source_state "
					  "WHERE source_id = ?1 AND key = ?2", err);
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, source_id);
	bind_text(st, 2, key);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out = col_text(st, 0);
	return 1;
}

int pk_store_source_state_set(struct pk_store *store, gint64 source_id, const char *key,
			      const char *value, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "INSERT INTO source_state (source_id, key, value) "
					  "VALUES (?1, ?2, ?3) ON CONFLICT (source_id, key) "
					  "DO UPDATE SET value = excluded.value", err);

	if (!st)
		return -1;
	bind_int(st, 1, source_id);
	bind_text(st, 2, key);
	bind_text(st, 3, value);
	return run(store, st, err);
}

int pk_store_source_state_swap(struct pk_store *store, gint64 source_id, const char *key,
			       const char *old, const char *value, GError **err)
{
	/*
	 * One statement either way: an upsert whose update is conditional when
	 * there was no value, an update conditional on the value otherwise.
	 * Inside the caller's write transaction (SQLite's lock; on PostgreSQL the
	 * row lock of the UPDATE), so that of two workers only one sees a row back.
	 */
	g_autoptr(store_stmt) st = prep(store, old
		? "UPDATE source_state SET value = ?3 WHERE source_id = ?1 AND key = ?2 AND "
		  "value = ?4 RETURNING 1"
		: "INSERT INTO source_state (source_id, key, value) VALUES (?1, ?2, ?3) "
		  "ON CONFLICT (source_id, key) DO UPDATE SET value = excluded.value "
		  "WHERE source_state.value IS NULL RETURNING 1", err);
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, source_id);
	bind_text(st, 2, key);
	bind_text(st, 3, value);
	if (old)
		bind_text(st, 4, old);
	if ((rc = step(store, st, err)) < 0)
		return -1;
	return rc > 0 ? 1 : 0;
}

int pk_store_source_read(struct pk_store *store, gint64 source_id, gint64 time, GError **err)
{
	g_autofree char *value = g_strdup_printf("%" G_GINT64_FORMAT, time);

	return pk_store_source_state_set(store, source_id, "last_read", value, err);
}

void pk_store_source_free(struct pk_store_source *s)
{
	if (!s)
		return;
	g_free(s->kind);
	g_free(s->name);
	g_free(s);
}

int pk_store_sources(struct pk_store *store, GPtrArray **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT s.id, s.kind, s.name, v.value FROM sources s "
					  "LEFT JOIN source_state v ON v.source_id = s.id AND "
					  "v.key = 'last_read' ORDER BY s.id", err);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_source_free);
	int rc;

	if (!st)
		return -1;
	while ((rc = step(store, st, err)) > 0) {
		struct pk_store_source *src = g_new0(struct pk_store_source, 1);
		const char *when = col_str(st, 3);

		src->id = col_int(st, 0);
		src->kind = col_text(st, 1);
		src->name = col_text(st, 2);
		src->last_read = when ? g_ascii_strtoll(when, NULL, 10) : 0;
		g_ptr_array_add(rows, src);
	}
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}

/* ---- mails ------------------------------------------------------------- */

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
	g_autoptr(store_stmt) st = prep(store, "SELECT id FROM mails WHERE message_id = ?1", err);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, mid);
	if ((rc = step(store, st, err)) > 0)
		*out_id = col_int(st, 0);
	return rc;
}

static int insert_mail(struct pk_store *s, gint64 *out_id, const struct pk_store_mail *m,
		       const char *mid, const char *raw, size_t len, GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	g_autoptr(GBytes) blob = NULL;

	if (raw && !(blob = store_gzip(raw, len, err)))
		return -1;
	st = prep(s, "INSERT INTO mails (source_id, message_id, in_reply_to, refs, subject, "
		  "author_email, version, number, total, state, reason, raw, job_id, received, churn) "
		  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) RETURNING id", err);
	if (!st)
		return -1;
	bind_id(st, 1, m->source_id);
	bind_text(st, 2, mid);
	bind_text(st, 3, m->in_reply_to);
	bind_text(st, 4, m->refs);
	bind_text(st, 5, m->subject);
	bind_text(st, 6, m->author_email);
	bind_int(st, 7, MAX(m->version, 1));
	bind_int(st, 8, MAX(m->number, 0));
	bind_int(st, 9, MAX(m->total, 1));
	bind_text(st, 10, m->state);
	bind_text(st, 11, m->reason);
	bind_blob(st, 12, blob);
	bind_id(st, 13, m->job_id);
	bind_int(st, 14, m->received ? m->received : unix_now());
	bind_int(st, 15, m->churn);
	if (run_id(s, st, out_id, err) < 0)
		return -1;
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

static struct pk_store_mail *mail_row(store_stmt *st)
{
	struct pk_store_mail *m = g_new0(struct pk_store_mail, 1);

	m->id = col_int(st, 0);
	m->source_id = col_int(st, 1);
	m->job_id = col_int(st, 2);
	m->message_id = col_text(st, 3);
	m->in_reply_to = col_text(st, 4);
	m->refs = col_text(st, 5);
	m->subject = col_text(st, 6);
	m->author_email = col_text(st, 7);
	m->version = col_int(st, 8);
	m->number = col_int(st, 9);
	m->total = col_int(st, 10);
	m->state = col_text(st, 11);
	m->reason = col_text(st, 12);
	m->received = col_int(st, 13);
	m->churn = col_int(st, 14);
	return m;
}

int pk_store_mails(struct pk_store *store, const char *state, GPtrArray **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT " MAIL_COLUMNS " FROM mails WHERE "
					  "state = ?1 OR ?1 IS NULL ORDER BY id", err);
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
	g_autoptr(store_stmt) st = prep(store, "SELECT " MAIL_COLUMNS " FROM mails WHERE id = ?1", err);
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, mail_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out = mail_row(st);
	return 1;
}

int pk_store_mail_raw(struct pk_store *store, gint64 mail_id, char **out, size_t *out_len,
		      GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT raw FROM mails WHERE id = ?1 AND raw IS NOT NULL", err);
	char *text;
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, mail_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	if (!(text = col_gunzip(st, 0, err)))
		return -1;
	*out_len = strlen(text);
	*out = text;
	return 1;
}

int pk_store_mail_set_state(struct pk_store *store, gint64 mail_id, const char *state,
			    const char *reason, gint64 job_id, GError **err)
{
	g_autoptr(store_stmt) st = NULL;

	if (!mail_state_known(state))
		return pk_error(err, PK_ERROR_INPUT, "unknown mail state '%s'", state ? state : "(null)");
	/* a skipped mail no longer needs its bytes */
	st = prep(store, "UPDATE mails SET state = ?2, reason = ?3, job_id = ?4, "
		  "raw = CASE WHEN ?2 = 'skipped' THEN NULL ELSE raw END WHERE id = ?1", err);
	if (!st)
		return -1;
	bind_int(st, 1, mail_id);
	bind_text(st, 2, state);
	bind_text(st, 3, reason);
	bind_id(st, 4, job_id);
	if (run(store, st, err) < 0)
		return -1;
	if (!store_changes(store))
		return pk_error(err, PK_ERROR_INPUT, "%s: no mail %" G_GINT64_FORMAT, store->path, mail_id);
	return 0;
}

/* ---- replies ----------------------------------------------------------- */

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
	g_autoptr(store_stmt) st = prep(store, "INSERT INTO replies (mail_id, review_id, job_id, "
					  "after_commit, message_id, sender, recipients, text, sent, "
					  "push_commit_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
					  "RETURNING id", err);

	if (!st)
		return -1;
	bind_id(st, 1, r->mail_id);
	bind_id(st, 2, r->review_id);
	bind_id(st, 3, r->job_id);
	bind_text(st, 4, r->after_commit);
	bind_text(st, 5, mid);
	bind_text(st, 6, r->sender);
	bind_text(st, 7, r->recipients);
	bind_text(st, 8, r->text);
	if (r->sent)
		bind_int(st, 9, r->sent);
	bind_id(st, 10, r->push_commit_id);
	if (run_id(store, st, out_id, err) < 0)
		return -1;
	return 0;
}

/* key is bound as text when given, else id. */
static int reply_query(struct pk_store *store, const char *where, gint64 id, const char *key,
		       struct pk_store_reply **out, GError **err)
{
	g_autofree char *sql = g_strdup_printf("SELECT id, mail_id, review_id, job_id, after_commit, "
					       "message_id, sender, recipients, text, sent, push_commit_id FROM "
					       "replies WHERE %s = ?1", where);
	g_autoptr(store_stmt) st = prep(store, sql, err);
	struct pk_store_reply *r;
	int rc;

	if (!st)
		return -1;
	if (key)
		bind_text(st, 1, key);
	else
		bind_int(st, 1, id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	r = g_new0(struct pk_store_reply, 1);
	r->id = col_int(st, 0);
	r->mail_id = col_int(st, 1);
	r->review_id = col_int(st, 2);
	r->job_id = col_int(st, 3);
	r->after_commit = col_text(st, 4);
	r->message_id = col_text(st, 5);
	r->sender = col_text(st, 6);
	r->recipients = col_text(st, 7);
	r->text = col_text(st, 8);
	r->sent = col_int(st, 9);
	r->push_commit_id = col_int(st, 10);
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
	g_autoptr(store_stmt) st = prep(s, "UPDATE replies SET sent = ?2 WHERE id = ?1", err);
	g_autoptr(store_stmt) rv = NULL;

	if (!st)
		return -1;
	bind_int(st, 1, reply_id);
	bind_int(st, 2, when);
	if (run(s, st, err) < 0)
		return -1;
	rv = prep(s, "UPDATE reviews SET posted_to = (SELECT recipients FROM replies WHERE id = ?1), "
		  "posted_at = ?2, reply_message_id = (SELECT message_id FROM replies WHERE id = ?1) "
		  "WHERE id = (SELECT review_id FROM replies WHERE id = ?1)", err);
	if (!rv)
		return -1;
	bind_int(rv, 1, reply_id);
	bind_int(rv, 2, when);
	return run(s, rv, err);
}

int pk_store_reply_sent(struct pk_store *store, gint64 reply_id, gint64 time, GError **err)
{
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, reply_sent_locked(store, reply_id, time ? time : unix_now(), err), err);
}

/* ---- commands by mail ---------------------------------------------------- */

int pk_store_command_add(struct pk_store *store, gint64 *out_id, const struct pk_store_command *c,
			 GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "INSERT INTO commands (mail_id, sender, thread, command, arg, "
					  "job_id, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id", err);

	if (!st)
		return -1;
	bind_id(st, 1, c->mail_id);
	bind_text(st, 2, c->sender);
	bind_text(st, 3, c->thread);
	bind_text(st, 4, c->command);
	bind_text(st, 5, c->arg);
	bind_id(st, 6, c->job_id);
	bind_int(st, 7, c->created ? c->created : unix_now());
	return run_id(store, st, out_id, err);
}

int pk_store_commands_since(struct pk_store *store, const char *sender, const char *thread, gint64 since,
			    gint64 *out_count, GError **err)
{
	/* all of them: a scan, but of a table that the limits keep to a few rows an hour */
	g_autoptr(store_stmt) st = prep(store, sender
		? "SELECT count(*) FROM commands WHERE sender = ?1 AND created >= ?2"
		: thread ? "SELECT count(*) FROM commands WHERE thread = ?1 AND created >= ?2"
		: "SELECT count(*) FROM commands WHERE created >= ?1", err);
	int rc;

	if (!st)
		return -1;
	if (sender || thread) {
		bind_text(st, 1, sender ? sender : thread);
		bind_int(st, 2, since);
	} else {
		bind_int(st, 1, since);
	}
	if ((rc = step(store, st, err)) < 0)
		return -1;
	*out_count = rc ? col_int(st, 0) : 0;
	return 0;
}
