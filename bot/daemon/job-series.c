/*
 * job-series.c - the series job: read its mails back from the store, take
 * the lab, test each patch on the one before it (the first on the series'
 * base-commit when the lab has it), and store each patch's test, review
 * and rendered reply in one transaction, the reply delivered into the
 * outbox and a reply job queued to send it.  See daemon.h.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "intake/intake.h"
#include "intake/mail.h"
#include "lab/board.h"
#include "lab/describe.h"
#include "lab/lab.h"
#include "pipeline/sequence.h"
#include "report/outbox.h"
#include "report/reply.h"
#include "report/review.h"
#include "report/site.h"
#include "base/util.h"

static char *mbox_name(const char *message_id)
{
	return g_strdup_printf("%s.mbx", message_id);
}

/* One tested patch as store_tested() hands it to the daemon_tested_mail() callbacks. */
struct series_tested {
	struct daemon_series *r;
	const struct pk_store_mail *row;
	const struct pk_mail *mail;
	const struct pk_test_result *res;
	struct pk_reply_info *rinfo;
};

static int series_gate(void *ctx, struct daemon_gate *out, JsonObject *model, GError **err)
{
	struct series_tested *p = ctx;
	struct daemon_series *r = p->r;
	const struct pk_source_config *src = daemon_source_of(r->d, p->row->source_id);
	const struct pk_base_choice *base = &r->seq.base;
	/* the series went on its own base-commit: what that tree lacks, the author's lacked */
	bool own_base = base->name && g_str_has_prefix(base->name, "base-commit ");
	/* no base takes it whole (a 3-way merge does): the later patches went on a tree the author never had */
	const char *series_gap = base->applies || base->three_way ? NULL
				 : base->tried ? base->tried : "no base takes it";

	return daemon_gate_patch(r->d, out, p->mail, src ? src->list : NULL, model, p->res, &r->lab, own_base,
				 series_gap, err);
}

static int series_render(void *ctx, const struct daemon_gate *gate, JsonNode *model, struct pk_reply *out,
			 GError **err)
{
	struct series_tested *p = ctx;
	struct pk_reply_info *rinfo = p->rinfo;

	rinfo->list = gate->list_address;
	rinfo->policy = &gate->policy;
	rinfo->same_as = gate->same_as;
	rinfo->muted = (const char *const *)gate->muted->pdata;
	return pk_reply_build(out, p->mail, model, &p->r->d->config.daemon.mail, rinfo, err) < 0 ? 1 : 0;
}

static int series_record(void *ctx, const struct pk_review_doc *doc, gint64 *out_review_id, GError **err)
{
	struct series_tested *p = ctx;
	struct pk_test_record_info rec = { p->mail->patch, p->row->source_id, p->r->lab.config_hash,
					   doc->model_json, doc->text };

	return pk_test_record(p->r->d->store, out_review_id, p->res, &rec, err);
}

/*
 * Store one tested patch: test, review, reply and the job that sends it,
 * all or nothing, and only while this worker holds the job's lease
 * (tested.c).  Whether a mail goes out, and when, is the list's
 * (reply-gate.c); a patch that gets none still has its row, saying why.
 */
static int store_tested(struct daemon_series *r, const struct pk_store_mail *row,
			const struct pk_mail *mail, const struct pk_test_result *res,
			const struct pk_review_info *info, struct pk_reply_info *rinfo, GError **err)
{
	struct series_tested p = { r, row, mail, res, rinfo };
	struct daemon_tested_mail m = {
		.job_id = r->job_id, .patch = mail->patch, .res = res, .info = info,
		.row = { .mail_id = row->id, .job_id = r->job_id, .after_commit = res->after.commit },
		.series_key = r->series_key, .version = r->version,
		.gate = series_gate, .render = series_render, .record = series_record, .ctx = &p,
		.msgid = mail->message_id, .what = pk_verdict_name(res->verdict), .noun = "reply",
		.embargo = "waits out the list's embargo",
	};

	return daemon_tested_mail(r->d, &m, err);
}

void daemon_series_init(struct daemon_series *r, struct pk_daemon *d, gint64 job_id)
{
	*r = (struct daemon_series){
		.d = d, .job_id = job_id, .lab = { .lock_fd = -1 },
		.rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_mail_free),
		.mails = g_ptr_array_new_with_free_func((GDestroyNotify)pk_mail_free),
		.verdicts = g_string_new(NULL),
	};
	pk_sequence_init(&r->seq, &r->lab, d->store);
}

void daemon_series_clear(struct daemon_series *r)
{
	g_ptr_array_unref(r->rows);
	g_ptr_array_unref(r->mails);
	pk_mail_free(r->cover);
	pk_sequence_clear(&r->seq);
	pk_lab_clear(&r->lab);
	g_free(r->base_note);
	g_free(r->kernel);
	g_free(r->compiler);
	g_strfreev(r->config_lines);
	g_string_free(r->verdicts, TRUE);
	g_free(r->series_key);
}

int daemon_read_mail(struct pk_daemon *d, gint64 id, struct pk_store_mail **out_row,
		     struct pk_mail **out_mail, char **detail)
{
	g_autoptr(GError) err = NULL;
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
		return -1;
	}
	*out_row = row;
	*out_mail = m;
	return 0;
}

int daemon_series_read(struct daemon_series *r, JsonObject *payload, char **detail)
{
	JsonArray *ids = payload && json_object_has_member(payload, "mails")
		       ? json_object_get_array_member(payload, "mails") : NULL;
	gint64 cover = payload ? json_object_get_int_member_with_default(payload, "cover", 0) : 0;
	struct pk_store_mail *row;
	struct pk_mail *m;

	if (!ids || !json_array_get_length(ids)) {
		*detail = g_strdup("the job's payload names no mails");
		return -1;
	}
	r->total = (guint)json_object_get_int_member_with_default(payload, "total",
								  json_array_get_length(ids));
	/* a later version or a resend replaces this one's mails while they wait (reply-gate.c) */
	r->series_key = g_strdup(json_object_get_string_member_with_default(payload, "key", NULL));
	r->version = (int)json_object_get_int_member_with_default(payload, "version", 1);
	for (guint i = 0; i < json_array_get_length(ids); i++) {
		if (daemon_read_mail(r->d, json_array_get_int_element(ids, i), &row, &m, detail) < 0)
			return -1;
		g_ptr_array_add(r->rows, row);
		g_ptr_array_add(r->mails, m);
	}
	if (cover) {
		if (daemon_read_mail(r->d, cover, &row, &r->cover, detail) < 0)
			return -1;
		pk_store_mail_free(row);
	}
	return 0;
}

/*
 * What the replies' heads say of the lab: the base, the compiler and the
 * config fragment.  Read once per series job rather than once per daemon,
 * so a gcc upgraded under a running daemon is named from the next series
 * on.  One that cannot be read is left out of the replies, and logged.
 */
static void series_describe(struct daemon_series *r)
{
	g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL;

	if (!(r->kernel = pk_describe_base(&r->lab, r->seq.base.rev, &e1)))
		daemon_log(r->job_id, NULL, "the base is not described in the replies: %s", e1->message);
	if (!(r->compiler = pk_describe_compiler(pk_lab_arch(&r->lab), &e2)))
		daemon_log(r->job_id, NULL, "no compiler: line in the replies: %s", e2->message);
	if (!(r->config_lines = pk_describe_config_lines(&r->lab, &e3)))
		daemon_log(r->job_id, NULL, "the config's lines are not in the replies: %s", e3->message);
}

/*
 * Where the series goes (pipeline/sequence.h): its base-commit when it
 * names a published commit, else the first configured base on which it
 * applies whole; or forced, a base asked for by name (a command by
 * mail), applying or not.  The note says what was passed over, and the
 * replies carry it.  A base-commit the lab lacks fetches the [tree]s
 * again at most once per fetch_interval, whatever the mail.
 */
static int choose_base(struct daemon_series *r, const char *base_commit, const char *forced, GError **err)
{
	const struct pk_config *c = &r->d->config;
	g_auto(GStrv) bases = forced ? NULL : pk_sequence_bases(&r->lab, &c->test);
	struct pk_sequence_where where = { base_commit, forced, (const char *const *)bases, c->trees,
					   &r->d->refetch };
	const struct pk_base_choice *base = &r->seq.base;

	for (guint i = 0; i < r->mails->len; i++)
		pk_sequence_add(&r->seq, ((const struct pk_mail *)r->mails->pdata[i])->patch);
	r->d->refetch.interval = c->daemon.fetch_interval;
	if (pk_sequence_choose_base(&r->seq, &where, err) < 0)
		return -1;
	if (base->tried && base->applies)
		r->base_note = g_strdup_printf("%s; it was tested on %s instead, the first base it applies to",
					       base->tried, base->name);
	return 0;
}

int daemon_series_start(struct daemon_series *r, const char *base, GError **err)
{
	const struct pk_mail *first = r->mails->pdata[0];
	const char *base_commit = r->cover && r->cover->base_commit ? r->cover->base_commit
				: first->base_commit;
	struct pk_test_opts *topts = &r->seq.opts;

	/* the options first: the base is tried with the patches within the policy's size limits */
	pk_sequence_opts(topts, &r->d->config.test, &r->d->config.policy, 0);
	topts->rules = r->d->rules;
	if (pk_lab_take(&r->lab, r->d->config.test.arch, err) < 0 || choose_base(r, base_commit, base, err) < 0)
		return -1;
	if (r->base_note)
		daemon_log(r->job_id, NULL, "%s", r->base_note);
	series_describe(r);
	return 0;
}

const struct pk_source_config *daemon_source_of(const struct pk_daemon *d, gint64 source_id)
{
	const struct pk_source_config *src = NULL;
	g_autofree char *name = NULL;

	for (guint k = 0; d->sources && k < d->sources->len; k++) {
		const struct pk_intake *in = d->sources->pdata[k];

		if (in->ctx.source_id == source_id)
			src = in->ctx.cfg;
	}
	if (src || pk_store_source_name(d->store, source_id, &name, NULL) <= 0)
		return src;
	for (guint k = 0; k < d->config.sources->len; k++) {
		const struct pk_source_config *c = d->config.sources->pdata[k];

		if (!g_strcmp0(c->name, name))
			src = c;
	}
	return src;
}

/*
 * Test patch i and store what came of it.  A patch whose reply is stored
 * already was tested before a restart: that result stands, and the next
 * patch goes on from it.  0 to go on, 1 when a signal came, -1 with err
 * set when the bot failed.
 */
static int series_test_one(struct daemon_series *r, guint i, GError **err)
{
	struct pk_daemon *d = r->d;
	struct pk_mail *m = r->mails->pdata[i];
	struct pk_store_mail *row = r->rows->pdata[i];
	struct pk_store_reply *done = NULL;
	struct pk_test_result res = { 0 };
	g_autofree char *source = mbox_name(m->message_id);
	/* a Debian base by its name; a branch (it moves) or a base-commit by the commit */
	g_autofree char *reproduce = pk_reply_reproduce(m->message_id, m->subject,
							pk_sequence_base_named(&r->seq), pk_lab_arch(&r->lab));
	const struct pk_source_config *src = daemon_source_of(d, row->source_id);
	/* report --site names a daemon's series by its job (report/site.h) */
	g_autofree char *site_page = pk_site_series_url(d->config.site.url, r->job_id, 0);
	struct pk_review_info info = { source, i + 1, MAX(r->total, r->mails->len), r->seq.base.name,
				       r->lab.config_hash, reproduce, r->kernel, r->compiler };
	struct pk_reply_info rinfo = {
		.base = r->seq.base.name, .base_note = r->base_note,
		.date = daemon_now(), .kernel = r->kernel, .archive = src ? src->archive : NULL,
		.site_page = site_page,
		.compiler = r->compiler, .config_lines = (const char *const *)r->config_lines,
		.max_lines = d->config.daemon.max_reply_lines,
	};
	g_autofree char *id_secret = NULL;
	int rc;

	if (daemon_lease_lost(d))   /* a stalled worker that woke: the job is another's now */
		return pk_error(err, PK_ERROR_FAILED, "the lease was lost: the series is left to the "
				"worker that took it");
	if (pk_store_reply_for_mail(d->store, row->id, &done, err) < 0)
		return -1;
	if (done) {
		daemon_log(r->job_id, m->message_id, "tested before the restart; not again");
		pk_sequence_advance(&r->seq, done->after_commit);
		pk_store_reply_free(done);
		return 0;
	}
	if (!m->patch) {
		daemon_log(r->job_id, m->message_id, "no patch in it any more; skipped");
		return 0;
	}
	daemon_log(r->job_id, m->message_id, "testing %u/%u on %s: %s", i + 1, r->mails->len,
		   i ? r->seq.parent : r->seq.base.name, m->subject ? m->subject : "");
	rc = pk_sequence_test(&r->seq, i, &res, err);
	if (rc == 0 && daemon_stopping())
		rc = 1;   /* a canceled build or boot is no verdict: the patch is tested again */
	/* the store's: a reply built again, by any worker, keeps its Message-ID */
	if (rc == 0 && (rc = pk_store_secret(d->store, PK_REPLY_ID_SECRET, &id_secret, err)) == 0) {
		rinfo.id_secret = id_secret;
		rc = store_tested(r, row, m, &res, &info, &rinfo, err);
	}
	if (rc == 0) {
		g_string_append_printf(r->verdicts, "%s%s", r->verdicts->len ? ", " : "",
				       pk_verdict_name(res.verdict));
		pk_sequence_advance(&r->seq, res.after.commit);
	}
	pk_test_result_clear(&res);
	return rc;
}

/* Whether name is one of list's ("x86_64,arm64"). */
static bool arch_listed(const char *list, const char *name)
{
	g_auto(GStrv) names = g_strsplit(list, ",", -1);

	return g_strv_contains((const char *const *)names, name);
}

/*
 * A patch of the series touches a driver whose QEMU board is another
 * architecture's (qemu/boards, lab/board.h) and this worker's lab has
 * none of it: when another worker said lately that its lab has it, the
 * job is left to that one (it needs that architecture from now on, and
 * goes back to the queue): 1, *detail saying so.  0 to test it here,
 * without the board (test.c then tests it as if no row named it), -1
 * with err.
 */
static int leave_to_other_arch(struct daemon_series *r, const struct pk_store_job *job, char **detail,
			       GError **err)
{
	struct pk_daemon *d = r->d;
	g_autofree char *datadir = pk_data_dir();
	/* about: seen within three leases or polls (a busy worker says so at each renewal) */
	gint64 within = (gint64)(3 * MAX(d->config.daemon.lease, d->config.daemon.worker_poll)), others = 0;
	const struct pk_board *board = NULL;
	const struct pk_mail *m = NULL;
	int rc;

	for (guint i = 0; !board && d->worker.arches && i < r->mails->len; i++) {
		m = r->mails->pdata[i];
		if (m->patch && pk_board_for_patch(&board, datadir, m->patch, err) < 0)
			return -1;
		if (board && arch_listed(d->worker.arches, board->arch->name))
			board = NULL;
	}
	if (!board)
		return 0;
	if (pk_store_workers_with_arch(d->store, &d->worker, board->arch->name, within, &others, err) < 0)
		return -1;
	if (!others) {
		daemon_log(job->id, NULL, "%s touches %s, for %s, whose lab no worker has: tested here without it",
			   m->subject ? m->subject : "a patch", board->prefix, board->arch->name);
		return 0;
	}
	if ((rc = pk_store_job_need_arch(d->store, job->id, &d->worker, board->arch->name, err)) <= 0)
		return rc < 0 ? -1 : 0;
	*detail = g_strdup_printf("left to a worker with an %s lab (%" G_GINT64_FORMAT " about): %s touches %s "
				  "(%s)", board->arch->name, others, m->subject ? m->subject : "a patch",
				  board->prefix, board->row);
	return 1;
}

enum job_end daemon_run_series(struct pk_daemon *d, const struct pk_store_job *job,
			       JsonObject *payload, char **detail, gint64 *out_retry)
{
	struct daemon_series r;
	g_autoptr(GError) err = NULL;
	enum job_end end;
	int rc;

	daemon_series_init(&r, d, job->id);
	if (daemon_series_read(&r, payload, detail) < 0) {
		daemon_series_clear(&r);
		return JOB_FAILED;
	}
	if ((rc = leave_to_other_arch(&r, job, detail, &err)) > 0) {
		daemon_series_clear(&r);
		*out_retry = daemon_now();
		return JOB_RETRY;
	}
	if (rc == 0)
		rc = daemon_series_start(&r, NULL, &err);
	for (guint i = 0; rc == 0 && i < r.mails->len; i++)
		rc = series_test_one(&r, i, &err);
	if (rc != 0) {
		end = daemon_test_job_unfinished(d, job, rc, err, "series", detail, out_retry);
	} else {
		*detail = g_strdup_printf("%u patch%s: %s", r.mails->len, r.mails->len == 1 ? "" : "es",
					  r.verdicts->len ? r.verdicts->str : "tested before");
		end = JOB_DONE;
	}
	daemon_series_clear(&r);
	return end;
}
