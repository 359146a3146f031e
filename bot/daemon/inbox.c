/*
 * inbox.c - from mail to jobs: every mail a source delivers is parsed,
 * classified and stored by Message-ID (once), then pending patches and
 * cover letters are grouped into series, and a series that is complete
 * (or waited for long enough) becomes one job.  See daemon.h.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "analysis/scan.h"
#include "intake/intake.h"
#include "intake/mail.h"
#include "intake/series.h"
#include "base/util.h"

#include <string.h>

/* ---- sources ------------------------------------------------------------ */

void daemon_close_sources(struct pk_daemon *d)
{
	if (d->sources)
		g_ptr_array_unref(d->sources);
	d->sources = NULL;
}

int daemon_open_sources(struct pk_daemon *d, GError **err)
{
	daemon_close_sources(d);
	d->sources = g_ptr_array_new_with_free_func((GDestroyNotify)pk_intake_close);
	for (guint i = 0; i < d->config.sources->len; i++) {
		struct pk_intake *in;

		if (pk_intake_open(&in, d->store, d->config.sources->pdata[i], err) < 0)
			return -1;
		in->ctx.max_mail = d->config.policy.max_mail_size;   /* as `test` reads it; 0: none */
		g_ptr_array_add(d->sources, in);
	}
	return 0;
}

/* The bot's own address and the loop guard built on it. */
static char *bot_address(const struct pk_daemon *d)
{
	g_autofree char *a = pk_mail_addr(d->config.daemon.mail.from);

	return a ? g_ascii_strdown(a, -1) : g_strdup("printkbot@localhost");
}

struct delivery {
	struct pk_daemon *d;
	struct pk_intake *in;
	unsigned kept;
};

static char *join_refs(GPtrArray *refs)
{
	g_ptr_array_add(refs, NULL);
	g_autofree char *s = g_strjoinv(" ", (char **)refs->pdata);
	g_ptr_array_remove_index(refs, refs->len - 1);
	return *s ? g_steal_pointer(&s) : NULL;
}

/*
 * One mail from a source: parsed, classified, stored by Message-ID.  A mail
 * seen before is dropped here, which is what makes every backend's
 * "deliver again rather than skip" safe.
 */
static int on_mail(void *data, const char *raw, size_t len, const char *where, GError **err)
{
	struct delivery *dl = data;
	struct pk_daemon *d = dl->d;
	g_autoptr(pk_mail) mail = NULL;
	g_autoptr(GError) perr = NULL;
	g_autofree char *bot = bot_address(d);
	g_autofree char *refs = NULL, *over = NULL;
	const char *bots[] = { bot, NULL };
	struct pk_series_guard guard = { bots };
	struct pk_series_mail sm = { 0 };
	struct pk_store_mail row = { 0 };
	enum pk_series_kind kind;
	const char *reason = NULL;
	gint64 id;
	bool existed;

	if (pk_mail_parse(&mail, raw, len, &perr) < 0) {
		daemon_log(0, NULL, "source %s, %s: a mail skipped: %s", dl->in->ctx.cfg->name, where,
			   perr->message);
		return 0;
	}
	if (!mail->message_id) {
		daemon_log(0, NULL, "source %s, %s: a mail without a Message-ID skipped", dl->in->ctx.cfg->name,
			   where);
		return 0;
	}
	switch (pk_store_mail_find(d->store, mail->message_id, &id, err)) {
	case -1:
		return -1;
	case 1:
		/*
		 * Seen before: never handled twice.  The same mail delivered again
		 * (after a crash) or another mail reusing its id, which would
		 * otherwise vanish without a word: named, with where it was.
		 */
		daemon_log(0, mail->message_id, "source %s, %s: this Message-ID was read before (mail %"
			   G_GINT64_FORMAT "): this mail dropped", dl->in->ctx.cfg->name, where, id);
		return 0;
	}
	sm.message_id = mail->message_id;
	sm.in_reply_to = mail->in_reply_to;
	sm.subject = mail->subject;
	sm.from_addr = mail->from_addr;
	sm.bot_header = mail->bot_header;
	sm.auto_submitted = mail->auto_submitted;
	sm.has_patch = mail->patch && mail->patch->files->len > 0;
	kind = pk_series_classify(&sm, &guard, &reason);
	refs = join_refs(mail->references);
	row.source_id = dl->in->ctx.source_id;
	row.message_id = mail->message_id;
	row.in_reply_to = mail->in_reply_to;
	row.refs = refs;
	row.subject = mail->subject;
	row.author_email = mail->from_addr;
	row.version = sm.version;
	row.number = sm.number;
	row.total = sm.total;
	if (kind == PK_SERIES_PATCH && (over = pk_patch_over_limits(mail->patch, &d->config.policy))) {
		/* not scanned: its series is tested, and the patch refused there, naming the limit */
		daemon_log(0, mail->message_id, "not scanned: %s", over);
		row.churn = 1;
	} else if (kind == PK_SERIES_PATCH) {
		/*
		 * The static scan, in milliseconds: a series without churn is
		 * never built.  Its verdict, not only its count of calls: a
		 * pr_fmt() added or changed touches no call and changes every
		 * message of the file.
		 */
		g_autoptr(pk_scan_result) scan = pk_scan(mail->patch);

		if (scan->canceled)
			return pk_error(err, PK_ERROR_FAILED, "the scan of %s was stopped by a signal",
					mail->message_id);
		row.churn = scan->verdict == PK_VERDICT_NO_CHURN ? 0 : (int)MAX(1u, scan->calls_changed);
	}
	row.state = kind == PK_SERIES_SKIP ? "skipped" : "pending";
	row.reason = (char *)reason;
	/* a reply may be a command by mail (#printkbot): stored, queued or refused there */
	if (kind == PK_SERIES_SKIP) {
		int rc = daemon_intake_command(d, &row, mail, raw, len, bot, err);

		if (rc != 0)
			return rc < 0 ? -1 : 0;
	}
	if (pk_store_mail_add(d->store, &id, &existed, &row, kind == PK_SERIES_SKIP ? NULL : raw,
			      kind == PK_SERIES_SKIP ? 0 : len, err) < 0)
		return -1;
	if (kind == PK_SERIES_SKIP) {
		daemon_log(0, mail->message_id, "skipped: %s", reason);
		return 0;
	}
	daemon_log(0, mail->message_id, "%s v%d %d/%d from %s: waiting for its series",
		   kind == PK_SERIES_COVER ? "cover letter" : "patch", sm.version, sm.number,
		   sm.total, mail->from_addr ? mail->from_addr : "?");
	dl->kept++;   /* a patch or cover letter: the rest is stored as skipped */
	return 0;
}

void daemon_fetch_source(struct pk_daemon *d, struct pk_intake *in)
{
	struct delivery dl = { d, in, 0 };
	g_autoptr(GError) err = NULL;
	g_autofree char *own = g_strdup_printf("source %s: ", in->ctx.cfg->name);
	unsigned count = 0;
	int rc;

	in->next_poll = pk_now() + in->ctx.cfg->poll_interval;
	rc = pk_intake_fetch(in, on_mail, &dl, &count, &err);
	daemon_metrics_source_read(d, in, rc == 0, count);
	if (rc < 0)
		/* a backend's error may name the source already: once is enough */
		daemon_log(0, NULL, "%s%s (tried again in %.0f s)", own,
			   err->message + (g_str_has_prefix(err->message, own) ? strlen(own) : 0),
			   in->ctx.cfg->poll_interval);
	else if (in->started_now)
		daemon_log(0, NULL, "source %s: first look, start = now: what it holds is not read, "
			   "only what comes from now on", in->ctx.cfg->name);
	if (count)
		daemon_log(0, NULL, "source %s: %u new mail(s), %u kept", in->ctx.cfg->name, count, dl.kept);
}

/* ---- series into jobs ---------------------------------------------------- */

static char *series_payload(const struct pk_series *s, GArray *ids)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autoptr(JsonNode) root = NULL;

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "key");
	json_builder_add_string_value(b, s->key);
	json_builder_set_member_name(b, "version");
	json_builder_add_int_value(b, s->version);
	json_builder_set_member_name(b, "total");
	json_builder_add_int_value(b, s->total);
	json_builder_set_member_name(b, "subject");
	json_builder_add_string_value(b, s->subject);
	json_builder_set_member_name(b, "cover");
	json_builder_add_int_value(b, s->cover ? s->cover->id : 0);
	json_builder_set_member_name(b, "mails");
	json_builder_begin_array(b);
	for (guint i = 0; i < ids->len; i++)
		json_builder_add_int_value(b, g_array_index(ids, gint64, i));
	json_builder_end_array(b);
	json_builder_end_object(b);
	root = json_builder_get_root(b);
	return json_to_string(root, FALSE);
}

/* Skip every mail of a series (a superseded or orphaned one). */
static int skip_series(struct pk_daemon *d, const struct pk_series *s, const char *why, GError **err)
{
	if (s->cover && pk_store_mail_set_state(d->store, s->cover->id, "skipped", why, 0, err) < 0)
		return -1;
	for (guint i = 0; i < s->patches->len; i++) {
		struct pk_series_mail *m = s->patches->pdata[i];
		if (pk_store_mail_set_state(d->store, m->id, "skipped", why, 0, err) < 0)
			return -1;
	}
	daemon_log(0, s->cover ? s->cover->message_id : s->patches->len ?
		   ((struct pk_series_mail *)s->patches->pdata[0])->message_id : NULL,
		   "series v%d skipped: %s", s->version, why);
	return 0;
}

/* A newer version of a series replaces an older one still waiting in the queue. */
static int cancel_older(struct pk_daemon *d, const struct pk_series *s, gint64 new_job, GError **err)
{
	g_autofree char *why = g_strdup_printf("superseded by v%d (job %" G_GINT64_FORMAT ")",
					       s->version, new_job);
	g_autoptr(GArray) cancelled = NULL;

	g_autofree char *replaced = g_strdup_printf("replaced by v%d (job %" G_GINT64_FORMAT "), which came inside "
						    "the list's embargo", s->version, new_job);
	g_autoptr(GArray) waiting = NULL;

	if (pk_store_jobs_cancel_superseded(d->store, s->key, s->version, why, &cancelled, err) < 0)
		return -1;
	for (guint i = 0; i < cancelled->len; i++)
		daemon_log(g_array_index(cancelled, gint64, i), NULL, "cancelled: %s", why);
	/* the mails of an earlier version, or of a resend's first post, that wait out an embargo */
	if (pk_store_replies_replace_waiting(d->store, s->key, s->version, replaced, &waiting, err) < 0)
		return -1;
	for (guint i = 0; i < waiting->len; i++)
		daemon_log(g_array_index(waiting, gint64, i), NULL, "reply not sent: %s", replaced);
	return 0;
}

static int queue_series(struct pk_daemon *d, const struct pk_series *s, GError **err)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	g_autofree char *payload = NULL;
	gint64 job;

	/* only patches 1..prefix: a gap would make every later patch fail to apply */
	for (guint i = 0; i < s->prefix; i++)
		g_array_append_val(ids, ((struct pk_series_mail *)s->patches->pdata[i])->id);
	payload = series_payload(s, ids);
	if (pk_store_begin(d->store, err) < 0)
		return -1;
	if (pk_store_job_add_series(d->store, &job, s->key, s->version, payload, err) < 0)
		goto fail;
	if (s->cover && pk_store_mail_set_state(d->store, s->cover->id, "queued", NULL, job, err) < 0)
		goto fail;
	for (guint i = 0; i < s->patches->len; i++) {
		struct pk_series_mail *m = s->patches->pdata[i];
		if (pk_store_mail_set_state(d->store, m->id, i < s->prefix ? "queued" : "skipped",
					    i < s->prefix ? NULL : "after a missing patch of its series",
					    i < s->prefix ? job : 0, err) < 0)
			goto fail;
	}
	if (cancel_older(d, s, job, err) < 0 || pk_store_commit(d->store, err) < 0)
		goto fail;
	daemon_log(job, s->cover ? s->cover->message_id : ((struct pk_series_mail *)s->patches->pdata[0])->message_id,
		   "queued: %s (v%d, %u of %d patch%s)", s->subject, s->version, s->prefix, s->total,
		   s->total == 1 ? "" : "es");
	return 0;
fail:
	pk_store_rollback(d->store);
	return -1;
}

/* Calls changed by the patches 1..prefix of a series, from the scan at intake. */
static unsigned series_churn(const struct pk_series *s, GHashTable *churn)
{
	unsigned n = 0;

	for (guint i = 0; i < s->prefix; i++)
		n += GPOINTER_TO_INT(g_hash_table_lookup(churn, GINT_TO_POINTER(
			(gint)((struct pk_series_mail *)s->patches->pdata[i])->id)));
	return n;
}

/* A stored pending mail as series.h groups it; its strings stay the row's, refs is kept in refs. */
static struct pk_series_mail *series_mail(const struct pk_store_mail *r, GPtrArray *refs)
{
	struct pk_series_mail *m = g_new0(struct pk_series_mail, 1);
	char **r_refs = r->refs ? g_strsplit(r->refs, " ", -1) : NULL;

	g_ptr_array_add(refs, r_refs);
	m->id = r->id;
	m->message_id = r->message_id;
	m->in_reply_to = r->in_reply_to;
	m->refs = (const char *const *)r_refs;
	m->subject = r->subject;
	m->from_addr = r->author_email;
	m->received = r->received;
	m->version = r->version;
	m->number = r->number;
	m->total = r->total;
	m->has_patch = r->number > 0;
	return m;
}

/* Whether groups holds a newer version of series s. */
static bool series_superseded(const struct pk_series *s, GPtrArray *groups)
{
	for (guint j = 0; j < groups->len; j++) {
		const struct pk_series *t = groups->pdata[j];

		if (t != s && !strcmp(t->key, s->key) && t->version > s->version)
			return true;
	}
	return false;
}

/*
 * What becomes of one grouped series now: skipped (superseded, without
 * its first patch, without churn), left to wait (incomplete and not yet
 * due: *out_wait lowered to its due time), or queued.
 */
static int assemble_series(struct pk_daemon *d, struct pk_series *s, GPtrArray *groups,
			   GHashTable *churn, gint64 now, double *out_wait, GError **err)
{
	gint64 due = s->last_received + (gint64)d->config.daemon.series_wait;

	if (series_superseded(s, groups))
		return skip_series(d, s, "superseded by a newer version before it was tested", err);
	if (!s->complete && now < due) {
		double wait = (double)(due - now);

		*out_wait = *out_wait < 0 ? wait : MIN(*out_wait, wait);
		return 0;
	}
	if (!s->prefix)
		return skip_series(d, s, s->patches->len ? "patch 1 of the series never arrived"
							 : "no patch of the series arrived", err);
	if (!series_churn(s, churn))
		return skip_series(d, s, "no logging churn (scan): nothing to build", err);
	return queue_series(d, s, err);
}

int daemon_assemble(struct pk_daemon *d, double *out_wait, GError **err)
{
	g_autoptr(GPtrArray) rows = NULL, groups = NULL;
	g_autoptr(GPtrArray) mails = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) refs = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
	g_autoptr(GHashTable) churn = g_hash_table_new(g_direct_hash, g_direct_equal);
	gint64 now = daemon_now();

	*out_wait = -1;
	if (pk_store_mails(d->store, "pending", &rows, err) < 0)
		return -1;
	if (!rows->len)
		return 0;
	for (guint i = 0; i < rows->len; i++) {
		struct pk_store_mail *r = rows->pdata[i];

		g_ptr_array_add(mails, series_mail(r, refs));
		g_hash_table_insert(churn, GINT_TO_POINTER((gint)r->id), GINT_TO_POINTER(r->churn));
	}
	pk_series_group(&groups, mails);
	for (guint i = 0; i < groups->len; i++)
		if (assemble_series(d, groups->pdata[i], groups, churn, now, out_wait, err) < 0)
			return -1;
	return 0;
}
