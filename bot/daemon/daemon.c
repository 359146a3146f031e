/* daemon.c - the mailing-list bot's loop, intake, series and jobs; see daemon.h. */
#define _GNU_SOURCE
#include "daemon/daemon.h"
#include "base/config.h"
#include "intake/intake.h"
#include "lab/lab.h"
#include "intake/mail.h"
#include "report/outbox.h"
#include "base/proc.h"
#include "report/reply.h"
#include "report/review.h"
#include "analysis/scan.h"
#include "intake/series.h"
#include "report/smtp.h"
#include "store/store.h"
#include "pipeline/test.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Set by the signal handlers; the loop and proc.h read them. */
static volatile sig_atomic_t stop_flag, reload_flag;
static int wake_fd = -1;   /* write end of the self-pipe that wakes poll() */

struct daemon {
	struct pk_config config;
	struct pk_store *store;
	GPtrArray *sources;       /* struct pk_intake* */
	struct pk_outbox *outbox; /* rendered replies waiting to be sent */
	const struct pk_daemon_opts *opts;
};

/* One line per event: "printkbot daemon: job 4 <id@host>: what happened". */
static void logf_event(gint64 job, const char *msgid, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void logf_event(gint64 job, const char *msgid, const char *fmt, ...)
{
	g_autofree char *what = NULL;
	va_list ap;

	va_start(ap, fmt);
	what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	fprintf(stderr, "printkbot daemon:");
	if (job)
		fprintf(stderr, " job %" G_GINT64_FORMAT, job);
	if (msgid)
		fprintf(stderr, " <%s>", msgid);
	fprintf(stderr, "%s %s\n", job || msgid ? ":" : "", what);
}

static gint64 now_s(void)
{
	return g_get_real_time() / G_USEC_PER_SEC;
}

/* ---- signals ------------------------------------------------------------ */

static void on_signal(int sig)
{
	int saved = errno;

	if (sig == SIGHUP)
		reload_flag = 1;
	else
		stop_flag = 1;
	if (wake_fd >= 0 && write(wake_fd, "x", 1) < 0) {
		/* the pipe is full: poll() wakes anyway */
	}
	errno = saved;
}

/* No SA_RESTART: a signal must interrupt poll() and proc.h's wait. */
static void install_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	pk_proc_set_cancel(&stop_flag);
}

/* ---- sources ------------------------------------------------------------ */

static void close_sources(struct daemon *d)
{
	if (d->sources)
		g_ptr_array_unref(d->sources);
	d->sources = NULL;
}

static int open_sources(struct daemon *d, GError **err)
{
	close_sources(d);
	d->sources = g_ptr_array_new_with_free_func((GDestroyNotify)pk_intake_close);
	for (guint i = 0; i < d->config.sources->len; i++) {
		struct pk_intake *in;

		if (pk_intake_open(&in, d->store, d->config.sources->pdata[i], err) < 0)
			return -1;
		g_ptr_array_add(d->sources, in);
	}
	return 0;
}

/* The bot's own address and the loop guard built on it. */
static char *bot_address(const struct daemon *d)
{
	g_autofree char *a = pk_mail_addr(d->config.daemon.from);

	return a ? g_ascii_strdown(a, -1) : g_strdup("printkbot@localhost");
}

struct delivery {
	struct daemon *d;
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
static int on_mail(void *data, const char *raw, size_t len, GError **err)
{
	struct delivery *dl = data;
	struct daemon *d = dl->d;
	g_autoptr(pk_mail) mail = NULL;
	g_autoptr(GError) perr = NULL;
	g_autofree char *bot = bot_address(d);
	g_autofree char *refs = NULL;
	const char *bots[] = { bot, NULL };
	struct pk_series_guard guard = { bots };
	struct pk_series_mail sm = { 0 };
	struct pk_store_mail row = { 0 };
	enum pk_series_kind kind;
	const char *reason = NULL;
	gint64 id;
	bool existed;

	if (pk_mail_parse(&mail, raw, len, &perr) < 0 || !mail->message_id) {
		logf_event(0, NULL, "source %s: a mail without a Message-ID skipped", dl->in->ctx.cfg->name);
		return 0;
	}
	switch (pk_store_mail_find(d->store, mail->message_id, &id, err)) {
	case -1:
		return -1;
	case 1:
		return 0;   /* seen before: never handled twice */
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
	if (kind == PK_SERIES_PATCH) {
		/* the static scan, in milliseconds: a series without churn is never built */
		g_autoptr(pk_scan_result) scan = pk_scan(mail->patch);
		row.churn = (int)scan->calls_changed;
	}
	row.state = kind == PK_SERIES_SKIP ? "skipped" : "pending";
	row.reason = (char *)reason;
	if (pk_store_mail_add(d->store, &id, &existed, &row, kind == PK_SERIES_SKIP ? NULL : raw,
			      kind == PK_SERIES_SKIP ? 0 : len, err) < 0)
		return -1;
	if (kind == PK_SERIES_SKIP) {
		logf_event(0, mail->message_id, "skipped: %s", reason);
		return 0;
	}
	logf_event(0, mail->message_id, "%s v%d %d/%d from %s: waiting for its series",
			   kind == PK_SERIES_COVER ? "cover letter" : "patch", sm.version, sm.number,
			   sm.total, mail->from_addr ? mail->from_addr : "?");
	dl->kept++;   /* a patch or cover letter: the rest is stored as skipped */
	return 0;
}

static void fetch_source(struct daemon *d, struct pk_intake *in)
{
	struct delivery dl = { d, in, 0 };
	g_autoptr(GError) err = NULL;
	unsigned count = 0;

	in->next_poll = pk_now() + in->ctx.cfg->poll_interval;
	if (in->ops->fetch(in->state, on_mail, &dl, &count, &err) < 0)
		logf_event(0, NULL, "source %s: %s (tried again in %.0f s)", in->ctx.cfg->name,
			   err->message, in->ctx.cfg->poll_interval);
	else if (count)
		logf_event(0, NULL, "source %s: %u new mail(s), %u kept", in->ctx.cfg->name, count, dl.kept);
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

static JsonObject *parse_payload(JsonParser *p, const char *payload)
{
	JsonNode *root;

	if (!payload || !json_parser_load_from_data(p, payload, -1, NULL))
		return NULL;
	root = json_parser_get_root(p);
	return root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
}

/* Skip every mail of a series (a superseded or orphaned one). */
static int skip_series(struct daemon *d, const struct pk_series *s, const char *why, GError **err)
{
	if (s->cover && pk_store_mail_set_state(d->store, s->cover->id, "skipped", why, 0, err) < 0)
		return -1;
	for (guint i = 0; i < s->patches->len; i++) {
		struct pk_series_mail *m = s->patches->pdata[i];
		if (pk_store_mail_set_state(d->store, m->id, "skipped", why, 0, err) < 0)
			return -1;
	}
	logf_event(0, s->cover ? s->cover->message_id : s->patches->len ?
		   ((struct pk_series_mail *)s->patches->pdata[0])->message_id : NULL,
		   "series v%d skipped: %s", s->version, why);
	return 0;
}

/* A newer version of a series replaces an older one still waiting in the queue. */
static int cancel_older(struct daemon *d, const struct pk_series *s, gint64 new_job, GError **err)
{
	g_autofree char *why = g_strdup_printf("superseded by v%d (job %" G_GINT64_FORMAT ")",
					       s->version, new_job);
	g_autoptr(GArray) cancelled = NULL;

	if (pk_store_jobs_cancel_superseded(d->store, s->key, s->version, why, &cancelled, err) < 0)
		return -1;
	for (guint i = 0; i < cancelled->len; i++)
		logf_event(g_array_index(cancelled, gint64, i), NULL, "cancelled: %s", why);
	return 0;
}

static int queue_series(struct daemon *d, const struct pk_series *s, GError **err)
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
	logf_event(job, s->cover ? s->cover->message_id : ((struct pk_series_mail *)s->patches->pdata[0])->message_id,
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

/*
 * Turn pending mails into jobs: a complete series at once, an incomplete
 * one after series_wait seconds without a new mail of it.  *out_wait gets
 * the seconds until the next incomplete series is due, -1 for none.
 */
static int assemble(struct daemon *d, double *out_wait, GError **err)
{
	g_autoptr(GPtrArray) rows = NULL, groups = NULL;
	g_autoptr(GPtrArray) mails = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) refs = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
	g_autoptr(GHashTable) churn = g_hash_table_new(g_direct_hash, g_direct_equal);
	gint64 now = now_s();

	*out_wait = -1;
	if (pk_store_mails(d->store, "pending", &rows, err) < 0)
		return -1;
	if (!rows->len)
		return 0;
	for (guint i = 0; i < rows->len; i++) {
		struct pk_store_mail *r = rows->pdata[i];
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
		g_ptr_array_add(mails, m);
		g_hash_table_insert(churn, GINT_TO_POINTER((gint)r->id), GINT_TO_POINTER(r->churn));
	}
	pk_series_group(&groups, mails);
	for (guint i = 0; i < groups->len; i++) {
		struct pk_series *s = groups->pdata[i];
		gint64 due = s->last_received + (gint64)d->config.daemon.series_wait;
		bool newer = false;

		for (guint j = 0; j < groups->len; j++) {
			struct pk_series *t = groups->pdata[j];
			newer |= t != s && !strcmp(t->key, s->key) && t->version > s->version;
		}
		if (newer) {
			g_autofree char *why = g_strdup_printf("superseded by a newer version before it was tested");
			if (skip_series(d, s, why, err) < 0)
				return -1;
			continue;
		}
		if (!s->complete && now < due) {
			double wait = (double)(due - now);
			*out_wait = *out_wait < 0 ? wait : MIN(*out_wait, wait);
			continue;
		}
		if (!s->prefix) {
			if (skip_series(d, s, s->patches->len ? "patch 1 of the series never arrived"
							      : "no patch of the series arrived", err) < 0)
				return -1;
			continue;
		}
		if (!series_churn(s, churn)) {
			if (skip_series(d, s, "no logging churn (scan): nothing to build", err) < 0)
				return -1;
			continue;
		}
		if (queue_series(d, s, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- the series job ------------------------------------------------------ */

/* Where the series goes: its base-commit when the lab has it, else the configured base. */
static void choose_base(struct daemon *d, const struct pk_lab *lab, const char *base_commit,
			char **out_parent, char **out_name, char **out_note)
{
	const char *configured = d->config.base ? d->config.base : PK_LAB_BASE_TAG;
	g_autofree char *rev = base_commit ? g_strdup_printf("%s^{commit}", base_commit) : NULL;

	*out_note = NULL;
	if (base_commit && pk_lab_git(lab, NULL, NULL, "rev-parse", "--verify", "--quiet", rev, NULL) == 0) {
		*out_parent = g_strdup(base_commit);
		*out_name = g_strdup_printf("base-commit %.12s", base_commit);
		return;
	}
	if (base_commit)
		*out_note = g_strdup_printf("the patch names base-commit %.12s, which the bot's tree does "
					    "not have; it was tested on %s instead", base_commit, configured);
	*out_parent = g_strdup(configured);
	*out_name = g_strdup(configured);
}

static char *mbox_name(const char *message_id)
{
	return g_strdup_printf("%s.mbx", message_id);
}

/* Store one tested patch: test, review, reply and the job that sends it, all or nothing. */
static int store_tested(struct daemon *d, gint64 job_id, const struct pk_store_mail *row,
			const struct pk_mail *mail, const struct pk_test_result *res,
			const struct pk_lab *lab, const struct pk_review_info *info,
			const struct pk_reply_info *rinfo, GError **err)
{
	g_autoptr(JsonNode) model = pk_review_model(mail->patch, res, info);
	g_autofree char *body = pk_review_render(model, "review.txt", err);
	g_autofree char *model_json = NULL, *recipients = NULL, *reply_payload = NULL;
	g_autoptr(GError) rerr = NULL;
	struct pk_reply reply = { 0 };
	struct pk_store_reply sr = { 0 };
	bool wanted = pk_reply_wanted(d->config.daemon.reply_on, res->verdict);
	gint64 test_id, review_id, reply_id, send_job = 0;

	if (!body)
		return -1;
	model_json = json_to_string(model, FALSE);
	if (wanted && pk_reply_build(&reply, mail, model, body, &d->config.daemon, rinfo, &rerr) < 0) {
		logf_event(job_id, mail->message_id, "no reply: %s", rerr->message);
		wanted = false;
	}
	if (wanted) {
		g_ptr_array_add(reply.recipients, NULL);
		recipients = g_strjoinv("\n", (char **)reply.recipients->pdata);
	}
	if (pk_store_begin(d->store, err) < 0)
		goto fail_clear;
	if (pk_test_store(d->store, &test_id, mail->patch, row->source_id, res, lab->config_hash, err) < 0 ||
	    pk_store_add_review(d->store, &review_id, test_id, model_json, body, err) < 0)
		goto fail;
	sr.mail_id = row->id;
	sr.review_id = review_id;
	sr.job_id = job_id;
	sr.after_commit = res->after.commit;
	sr.message_id = wanted ? reply.message_id : NULL;
	sr.sender = wanted ? reply.sender : NULL;
	sr.recipients = recipients;
	sr.text = wanted ? reply.text : NULL;
	if (pk_store_reply_add(d->store, &reply_id, &sr, err) < 0)
		goto fail;
	if (wanted) {
		reply_payload = g_strdup_printf("{\"reply\":%" G_GINT64_FORMAT "}", reply_id);
		if (pk_store_job_add(d->store, &send_job, PK_JOB_REPLY, reply_payload, err) < 0)
			goto fail;
		/* in the outbox before the commit: a crash between leaves a file the re-render finds */
		if (pk_outbox_deliver(d->outbox, reply.message_id, reply.text, strlen(reply.text), NULL, err) < 0)
			goto fail;
	}
	if (pk_store_commit(d->store, err) < 0)
		goto fail;
	if (wanted)
		logf_event(job_id, mail->message_id, "%s (review %" G_GINT64_FORMAT "); reply <%s> in the outbox, "
			   "sent by job %" G_GINT64_FORMAT, pk_verdict_name(res->verdict), review_id, reply.message_id, send_job);
	else
		logf_event(job_id, mail->message_id, "%s (review %" G_GINT64_FORMAT "); no reply (reply_on = %s)",
			   pk_verdict_name(res->verdict), review_id, d->config.daemon.reply_on);
	pk_reply_clear(&reply);
	return 0;
fail:
	pk_store_rollback(d->store);
fail_clear:
	pk_reply_clear(&reply);
	return -1;
}

enum job_end { JOB_DONE, JOB_FAILED, JOB_INTERRUPTED, JOB_RETRY };

static enum job_end run_series(struct daemon *d, gint64 job_id, const char *payload, char **detail)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	JsonObject *o = parse_payload(parser, payload);
	JsonArray *ids = o && json_object_has_member(o, "mails") ? json_object_get_array_member(o, "mails") : NULL;
	g_autoptr(GPtrArray) mails = g_ptr_array_new_with_free_func((GDestroyNotify)pk_mail_free);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_mail_free);
	g_autoptr(GString) verdicts = g_string_new(NULL);
	g_autoptr(GError) err = NULL;
	g_autofree char *parent = NULL, *base_name = NULL, *base_note = NULL;
	struct pk_lab lab = { .lock_fd = -1 };
	struct pk_test_opts topts = { 0 };
	gint64 cover = o ? json_object_get_int_member_with_default(o, "cover", 0) : 0;
	const char *base_commit = NULL;
	g_autoptr(pk_mail) cover_mail = NULL;
	enum job_end end = JOB_FAILED;
	guint total;

	if (!ids) {
		*detail = g_strdup("the job's payload names no mails");
		return JOB_FAILED;
	}
	total = o ? (guint)json_object_get_int_member_with_default(o, "total", json_array_get_length(ids)) : 0;
	/* every mail is read before anything is built: a lost one fails the job at once */
	for (guint i = 0; i < json_array_get_length(ids) + (cover ? 1 : 0); i++) {
		gint64 id = i < json_array_get_length(ids) ? json_array_get_int_element(ids, i) : cover;
		struct pk_store_mail *row = NULL;
		g_autofree char *raw = NULL;
		struct pk_mail *m = NULL;
		size_t len;

		if (pk_store_mail_get(d->store, id, &row, &err) <= 0 ||
		    pk_store_mail_raw(d->store, id, &raw, &len, &err) <= 0 ||
		    pk_mail_parse(&m, raw, len, &err) < 0) {
			*detail = g_strdup_printf("mail %" G_GINT64_FORMAT " cannot be read back: %s", id,
						  err ? err->message : "not stored");
			pk_store_mail_free(row);
			return JOB_FAILED;
		}
		if (i < json_array_get_length(ids)) {
			g_ptr_array_add(rows, row);
			g_ptr_array_add(mails, m);
		} else {
			pk_store_mail_free(row);
			cover_mail = m;
		}
	}
	base_commit = cover_mail && cover_mail->base_commit ? cover_mail->base_commit
		    : ((struct pk_mail *)mails->pdata[0])->base_commit;
	if (pk_lab_take(&lab, &err) < 0)
		goto out_err;
	choose_base(d, &lab, base_commit, &parent, &base_name, &base_note);
	if (base_note)
		logf_event(job_id, NULL, "%s", base_note);
	topts.policy = d->config.policy;
	topts.boot_timeout = d->config.boot_timeout;
	for (guint i = 0; i < mails->len; i++) {
		struct pk_mail *m = mails->pdata[i];
		struct pk_store_mail *row = rows->pdata[i];
		struct pk_store_reply *done = NULL;
		struct pk_test_result res = { 0 };
		g_autofree char *source = mbox_name(m->message_id);
		struct pk_review_info info = { source, i + 1, MAX(total, mails->len), base_name, lab.config_hash };
		struct pk_reply_info rinfo = { base_name, base_note, NULL, now_s() };
		const struct pk_source_config *src = NULL;

		for (guint k = 0; d->sources && k < d->sources->len; k++) {
			struct pk_intake *in = d->sources->pdata[k];
			if (in->ctx.source_id == row->source_id)
				src = in->ctx.cfg;
		}
		rinfo.list = src ? src->list : NULL;
		if (pk_store_reply_for_mail(d->store, row->id, &done, &err) < 0)
			goto out_err;
		if (done) {
			/* tested before the daemon was stopped: keep that result, go on from it */
			logf_event(job_id, m->message_id, "tested before the restart; not again");
			if (done->after_commit) {
				g_free(parent);
				parent = g_strdup(done->after_commit);
			}
			pk_store_reply_free(done);
			continue;
		}
		if (!m->patch) {
			logf_event(job_id, m->message_id, "no patch in it any more; skipped");
			continue;
		}
		logf_event(job_id, m->message_id, "testing %u/%u on %s: %s", i + 1, mails->len,
			   i ? parent : base_name, m->subject ? m->subject : "");
		if (pk_test_patch(&res, &lab, d->store, &topts, m->patch, parent, &err) < 0) {
			pk_test_result_clear(&res);
			if (stop_flag) {
				end = JOB_INTERRUPTED;
				goto out;
			}
			goto out_err;
		}
		if (stop_flag) {
			/* a canceled build or boot is no verdict: the patch is tested again */
			pk_test_result_clear(&res);
			end = JOB_INTERRUPTED;
			goto out;
		}
		if (store_tested(d, job_id, row, m, &res, &lab, &info, &rinfo, &err) < 0) {
			pk_test_result_clear(&res);
			goto out_err;
		}
		g_string_append_printf(verdicts, "%s%s", verdicts->len ? ", " : "", pk_verdict_name(res.verdict));
		if (res.after.commit) {
			g_free(parent);
			parent = g_strdup(res.after.commit);
		}
		pk_test_result_clear(&res);
	}
	*detail = g_strdup_printf("%u patch%s: %s", mails->len, mails->len == 1 ? "" : "es",
				  verdicts->len ? verdicts->str : "tested before");
	end = JOB_DONE;
	goto out;
out_err:
	*detail = g_strdup(err ? err->message : "failed");
	end = stop_flag ? JOB_INTERRUPTED : JOB_FAILED;
out:
	pk_lab_clear(&lab);
	return end;
}

/* ---- the reply job ------------------------------------------------------- */

/* The backoff: retry_min after the first failure, doubling up to retry_max. */
static double retry_wait(const struct daemon *d, gint64 attempts)
{
	return MIN(d->config.daemon.retry_min * (double)(1ull << MIN(MAX(attempts, 1) - 1, 20)),
		   d->config.daemon.retry_max);
}

/*
 * Send one reply from the outbox: the file in new/ is what goes out, with
 * the envelope the store keeps.  Sent, it is recorded in the store, then
 * moved to cur/; a crash between the two leaves a file in new/ of a reply
 * the store says is sent, which is moved and not sent again (here and in
 * reconcile_outbox()).  A reply stored before the outbox existed, or whose
 * file was removed by hand, is delivered from the store's text first.
 */
static enum job_end run_reply(struct daemon *d, const struct pk_store_job *job, char **detail,
			      gint64 *out_retry)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	JsonObject *o = parse_payload(parser, job->payload);
	gint64 job_id = job->id;
	gint64 reply_id = o ? json_object_get_int_member_with_default(o, "reply", 0) : 0;
	struct pk_store_reply *r = NULL;
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) rcpts = NULL;
	g_autofree char *text = NULL;
	bool permanent = false;
	enum job_end end;
	size_t len;

	if (pk_store_reply_get(d->store, reply_id, &r, &err) <= 0 || !r->text) {
		*detail = g_strdup_printf("reply %" G_GINT64_FORMAT " is not stored: %s", reply_id,
					  err ? err->message : "no text");
		pk_store_reply_free(r);
		return JOB_FAILED;
	}
	switch (pk_outbox_state(d->outbox, r->message_id)) {
	case PK_OUTBOX_SENT:
		/* moved to cur/ but not recorded (the record failed, or a crash): it went out */
		if (!r->sent && pk_store_reply_sent(d->store, r->id, 0, &err) < 0)
			logf_event(job_id, r->message_id, "sent, but not recorded: %s", err->message);
		*detail = g_strdup_printf("<%s> was sent already", r->message_id);
		pk_store_reply_free(r);
		return JOB_DONE;
	case PK_OUTBOX_WAITING:
		break;
	case PK_OUTBOX_ABSENT:
		if (r->sent)
			break;
		if (pk_outbox_deliver(d->outbox, r->message_id, r->text, strlen(r->text), NULL, &err) < 0) {
			*detail = g_strdup_printf("<%s> cannot be put in the outbox: %s", r->message_id, err->message);
			pk_store_reply_free(r);
			return JOB_FAILED;
		}
		logf_event(job_id, r->message_id, "not in the outbox: delivered from the store");
		break;
	}
	if (r->sent) {
		if (pk_outbox_mark_sent(d->outbox, r->message_id, &err) < 0 &&
		    pk_outbox_state(d->outbox, r->message_id) == PK_OUTBOX_WAITING)
			logf_event(job_id, r->message_id, "sent, but still in the outbox: %s", err->message);
		*detail = g_strdup_printf("<%s> was sent already", r->message_id);
		pk_store_reply_free(r);
		return JOB_DONE;
	}
	if (pk_outbox_read(d->outbox, r->message_id, &text, &len, &err) <= 0) {
		double wait = retry_wait(d, job->attempts);

		/* the file is there (it was checked): a read error is the disk's, try again later */
		*out_retry = now_s() + (gint64)wait;
		*detail = g_strdup_printf("<%s> cannot be read from the outbox: %s; next try in %.0f s",
					  r->message_id, err ? err->message : "gone", wait);
		pk_store_reply_free(r);
		return JOB_RETRY;
	}
	rcpts = g_strsplit(r->recipients ? r->recipients : "", "\n", -1);
	if (pk_smtp_send(&d->config.smtp, r->sender, (const char *const *)rcpts, text, &permanent, &err) == 0) {
		g_autofree char *to = g_strjoinv(", ", rcpts);

		if (pk_store_reply_sent(d->store, r->id, 0, &err) < 0) {
			logf_event(job_id, r->message_id, "sent, but not recorded: %s", err->message);
			g_clear_error(&err);
		}
		/* moved even when not recorded: cur/ alone is enough to never send it again */
		if (pk_outbox_mark_sent(d->outbox, r->message_id, &err) < 0)
			logf_event(job_id, r->message_id, "sent, but still in the outbox: %s", err->message);
		*detail = g_strdup_printf("<%s> sent to %s", r->message_id, to);
		end = JOB_DONE;
	} else if (permanent) {
		*detail = g_strdup_printf("<%s> refused by the server: %s", r->message_id, err->message);
		end = JOB_FAILED;
	} else {
		gint64 attempts = job->attempts;
		double wait = retry_wait(d, attempts);

		*out_retry = now_s() + (gint64)wait;
		*detail = g_strdup_printf("<%s> not sent (attempt %" G_GINT64_FORMAT "): %s; next try in %.0f s; "
					  "waiting in the outbox", r->message_id, attempts, err->message, wait);
		end = JOB_RETRY;
	}
	pk_store_reply_free(r);
	return end;
}

/*
 * At start-up: a reply in new/ that the store records as sent was sent
 * just before a crash (between the record and the move): move it to cur/
 * so it is never sent again.  The others wait for their reply jobs.
 */
static int reconcile_outbox(struct daemon *d, GError **err)
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
			logf_event(0, mid, "in the outbox but not in the store: left in %s/new", d->outbox->dir);
		else if (r->sent) {
			if (pk_outbox_mark_sent(d->outbox, mid, err) < 0) {
				pk_store_reply_free(r);
				return -1;
			}
			logf_event(0, mid, "sent before the daemon stopped: moved to the outbox's cur/, not sent again");
		}
		pk_store_reply_free(r);
	}
	if (left)
		logf_event(0, NULL, "outbox %s: %u repl%s waiting in new/", d->outbox->dir, left,
			   left == 1 ? "y" : "ies");
	return 0;
}

/* ---- jobs ------------------------------------------------------------------ */

/* Run the next due job (replies first: they are quick and people wait for them). 1 ran, 0 none. */
static int run_next_job(struct daemon *d, gint64 *out_wait, GError **err)
{
	g_autoptr(pk_store_job) job = NULL;
	g_autofree char *detail = NULL;
	gint64 id, retry = 0, wait_reply = -1, wait_any = -1;
	enum job_end end;
	int rc;

	rc = pk_store_job_next_due(d->store, PK_JOB_REPLY, now_s(), &job, &wait_reply, err);
	if (rc == 0)
		rc = pk_store_job_next_due(d->store, PK_JOB_ANY_KIND, now_s(), &job, &wait_any, err);
	if (rc <= 0) {
		*out_wait = wait_reply < 0 ? wait_any : wait_any < 0 ? wait_reply : MIN(wait_reply, wait_any);
		return rc;
	}
	id = job->id;
	if (pk_store_job_set_state(d->store, id, PK_JOB_RUNNING, NULL, err) < 0)
		return -1;
	job->attempts++;   /* the move to running counted this one */
	switch (job->kind) {
	case PK_JOB_SERIES:
		end = run_series(d, id, job->payload, &detail);
		break;
	case PK_JOB_REPLY:
		end = run_reply(d, job, &detail, &retry);
		break;
	default:
		detail = g_strdup_printf("unknown job kind '%s'", pk_job_kind_name(job->kind));
		end = JOB_FAILED;
		break;
	}
	switch (end) {
	case JOB_DONE:
		logf_event(id, NULL, "done: %s", detail);
		return pk_store_job_set_state(d->store, id, PK_JOB_DONE, detail, err) < 0 ? -1 : 1;
	case JOB_FAILED:
		logf_event(id, NULL, "failed: %s", detail);
		return pk_store_job_set_state(d->store, id, PK_JOB_FAILED, detail, err) < 0 ? -1 : 1;
	case JOB_RETRY:
		logf_event(id, NULL, "%s", detail);
		return pk_store_job_retry_at(d->store, id, retry, detail, err) < 0 ? -1 : 1;
	case JOB_INTERRUPTED:
		logf_event(id, NULL, "interrupted by a signal: back in the queue");
		return pk_store_job_set_state(d->store, id, PK_JOB_QUEUED, "interrupted by a signal", err) < 0 ? -1 : 1;
	}
	return 1;
}

/* Jobs left "running" by a daemon that died are queued again. */
static int recover_jobs(struct daemon *d, GError **err)
{
	g_autoptr(GArray) requeued = NULL;

	if (pk_store_jobs_requeue_running(d->store, "requeued: the daemon stopped while it ran",
					  &requeued, err) < 0)
		return -1;
	for (guint i = 0; i < requeued->len; i++)
		logf_event(g_array_index(requeued, gint64, i), NULL,
			   "was running when the daemon stopped: queued again");
	return 0;
}

/* ---- the loop ---------------------------------------------------------- */

static int daemon_lock(const char *db_path, GError **err)
{
	g_autofree char *path = g_strdup_printf("%s.daemon-lock", db_path);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", path, g_strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return pk_error(err, PK_ERROR_FAILED, "another printkbot daemon uses %s (%s is locked)",
				db_path, path);
	}
	return fd;
}

/* The outbox the config names (created when missing); the one open before is kept on failure. */
static int open_outbox(struct daemon *d, GError **err)
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

static void reload(struct daemon *d)
{
	struct pk_config fresh = { 0 };
	struct pk_config old = d->config;
	g_autoptr(GError) err = NULL;

	reload_flag = 0;
	if (pk_config_load(&fresh, d->opts->config_path, &err) < 0) {
		logf_event(0, NULL, "SIGHUP: the configuration is not reloaded: %s", err->message);
		return;
	}
	close_sources(d);
	d->config = fresh;
	if (open_sources(d, &err) < 0) {
		logf_event(0, NULL, "SIGHUP: %s; the old configuration is kept", err->message);
		close_sources(d);
		pk_config_clear(&d->config);
		d->config = old;
		g_clear_error(&err);
		if (open_sources(d, &err) < 0)
			logf_event(0, NULL, "and the old sources fail too: %s", err->message);
		return;
	}
	pk_config_clear(&old);
	pk_sandbox_configure(&d->config.sandbox);
	if (open_outbox(d, &err) < 0 || reconcile_outbox(d, &err) < 0) {
		logf_event(0, NULL, "SIGHUP: %s; the outbox %s is kept", err->message, d->outbox->dir);
		g_clear_error(&err);
	}
	logf_event(0, NULL, "SIGHUP: configuration reloaded (%u source(s))", d->sources->len);
}

int pk_daemon_run(const struct pk_daemon_opts *opts, GError **err)
{
	struct daemon d = { .opts = opts };
	int pipefd[2] = { -1, -1 }, lock_fd = -1, rc = -1;
	bool first = true;

	if (pk_config_load(&d.config, opts->config_path, err) < 0)
		return -1;
	pk_sandbox_configure(&d.config.sandbox);
	if (pk_store_open(&d.store, opts->db ? opts->db : d.config.db, err) < 0)
		goto out;
	if ((lock_fd = daemon_lock(pk_store_path(d.store), err)) < 0)
		goto out;
	if (open_outbox(&d, err) < 0 || reconcile_outbox(&d, err) < 0)
		goto out;
	if (recover_jobs(&d, err) < 0 || open_sources(&d, err) < 0)
		goto out;
	if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
		pk_error(err, PK_ERROR_FAILED, "pipe: %s", g_strerror(errno));
		goto out;
	}
	wake_fd = pipefd[1];
	install_signals();
	logf_event(0, NULL, "started: %u source(s), database %s, outbox %s%s", d.sources->len,
		   pk_store_path(d.store), d.outbox->dir, opts->once ? ", once" : "");
	while (!stop_flag) {
		g_autoptr(GArray) fds = g_array_new(FALSE, TRUE, sizeof(struct pollfd));
		double series_wait = -1, timeout = -1, now = pk_now();
		gint64 job_wait = -1;
		struct pollfd wake = { pipefd[0], POLLIN, 0 };
		int ran;

		if (reload_flag)
			reload(&d);
		for (guint i = 0; i < d.sources->len; i++) {
			struct pk_intake *in = d.sources->pdata[i];
			int fd = in->ops->watch_fd(in->state);
			struct pollfd p = { fd, POLLIN, 0 };
			bool due = first || (fd < 0 && !opts->once && now >= in->next_poll);

			if (!due && fd >= 0 && !opts->once && poll(&p, 1, 0) > 0)
				due = true;
			if (due)
				fetch_source(&d, in);
		}
		first = false;
		if (assemble(&d, &series_wait, err) < 0)
			goto out;
		if (opts->queue_only)
			break;
		if ((ran = run_next_job(&d, &job_wait, err)) < 0)
			goto out;
		if (ran)
			continue;
		if (opts->once)
			break;
		/* nothing to do: sleep until mail, a signal, a poll or a job is due */
		g_array_append_val(fds, wake);
		for (guint i = 0; i < d.sources->len; i++) {
			struct pk_intake *in = d.sources->pdata[i];
			int fd = in->ops->watch_fd(in->state);
			struct pollfd p = { fd, POLLIN, 0 };

			if (fd >= 0)
				g_array_append_val(fds, p);
			else
				timeout = timeout < 0 ? in->next_poll - now : MIN(timeout, in->next_poll - now);
		}
		if (series_wait >= 0)
			timeout = timeout < 0 ? series_wait : MIN(timeout, series_wait);
		if (job_wait >= 0)
			timeout = timeout < 0 ? (double)job_wait : MIN(timeout, (double)job_wait);
		if (poll((struct pollfd *)fds->data, fds->len, timeout < 0 ? -1 : (int)(MAX(timeout, 0) * 1000) + 1) > 0) {
			char buf[64];
			while (read(pipefd[0], buf, sizeof buf) > 0)
				;
		}
	}
	logf_event(0, NULL, stop_flag ? "stopped by a signal" : "nothing more to do");
	rc = 0;
out:
	pk_proc_set_cancel(NULL);
	wake_fd = -1;
	close_sources(&d);
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	pk_store_close(d.store);
	pk_outbox_free(d.outbox);
	if (lock_fd >= 0)
		close(lock_fd);
	pk_config_clear(&d.config);
	return rc;
}
