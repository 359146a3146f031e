/*
 * job-command.c - the command job: answer one command by mail
 * (#printkbot, intake/mailcmd.h) once.  "test" tests the thread's series
 * again, patch after patch as the series job does (job-series.c), and
 * stores every patch's test and review with the one answer in one
 * transaction, under the job's lease, keyed on the command's mail; "help",
 * an unknown command and a command whose thread has no series are
 * answered alone.  See daemon.h.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "intake/intake.h"
#include "intake/mail.h"
#include "intake/mailcmd.h"
#include "lab/bases.h"
#include "lab/lab.h"
#include "lab/repo.h"
#include "pipeline/sequence.h"
#include "report/reply.h"
#include "report/review.h"
#include "base/util.h"

#include <string.h>

/* A command job as it runs. */
struct command_run {
	struct pk_daemon *d;
	const struct pk_store_job *job;
	struct pk_store_mail *row;     /* the command's mail */
	struct pk_mail *mail;
	enum pk_mailcmd_kind kind;
	char *line;                    /* the command as written */
	const char *base;              /* test: the base asked for, or NULL */
	struct daemon_series series;   /* test: the series tested again */
	GPtrArray *results;            /* struct pk_test_result*, one per tested patch */
	GPtrArray *docs;               /* struct pk_review_doc*, one per tested patch */
	GPtrArray *tested;             /* struct pk_mail* (borrowed from series): each tested patch */
	GPtrArray *verdicts;           /* const char*: each tested patch's verdict name */
};

static void result_free(struct pk_test_result *r)
{
	pk_test_result_clear(r);
	g_free(r);
}

static void doc_free(struct pk_review_doc *doc)
{
	pk_review_doc_clear(doc);
	g_free(doc);
}

static void command_run_clear(struct command_run *r)
{
	pk_store_mail_free(r->row);
	pk_mail_free(r->mail);
	g_free(r->line);
	daemon_series_clear(&r->series);
	g_ptr_array_unref(r->results);
	g_ptr_array_unref(r->docs);
	g_ptr_array_unref(r->tested);
	g_ptr_array_unref(r->verdicts);
}

/* The command as written, from the mail again (the payload keeps only its name). */
static void command_line(struct command_run *r)
{
	g_auto(pk_mailcmd_t) c = { 0 };

	pk_mailcmd_parse(&c, r->mail->body);
	r->line = g_strdup(c.line ? c.line : "#printkbot");
}

/*
 * The bases a command may name, each resolving in the lab: the default
 * base, [test] base and bases, the Debian bases the lab holds, and every
 * branch of every [tree].  A new NULL-terminated array.
 */
static char **known_bases(struct pk_daemon *d, const struct pk_lab *lab)
{
	const struct pk_config *c = &d->config;
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
	g_auto(GStrv) deb = pk_bases_default(lab, PK_LAB_BASE_TAG);

	g_ptr_array_add(names, g_strdup(PK_LAB_BASE_TAG));
	g_ptr_array_add(names, g_strdup(PK_BASES_DEFAULT_SOURCE));
	if (c->test.base)
		g_ptr_array_add(names, g_strdup(c->test.base));
	for (char **b = c->test.bases; b && *b; b++)
		g_ptr_array_add(names, g_strdup(*b));
	for (char **b = deb; b && *b; b++)
		g_ptr_array_add(names, g_strdup(*b));
	for (guint i = 0; c->trees && i < c->trees->len; i++) {
		const struct pk_tree_group *t = c->trees->pdata[i];

		for (char **b = t->tree.branches; b && *b; b++)
			g_ptr_array_add(names, g_strdup_printf("%s/%s", t->tree.name, *b));
		for (char **b = t->tree.watch; b && *b; b++)
			g_ptr_array_add(names, g_strdup_printf("%s/%s", t->tree.name, *b));
	}
	for (guint i = 0; i < names->len; i++) {
		const char *n = names->pdata[i];
		g_autofree char *ref = pk_bases_ref(n);
		g_autofree char *id = pk_repo_resolve(lab, ref, NULL);
		bool seen = false;

		for (guint k = 0; k < out->len && !seen; k++)
			seen = !strcmp(out->pdata[k], n);
		if (id && !seen)
			g_ptr_array_add(out, g_strdup(n));
	}
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
}

/* Whether name is one of bases. */
static bool base_known(char **bases, const char *name)
{
	for (char **b = bases; b && *b; b++)
		if (!strcmp(*b, name))
			return true;
	return false;
}

/*
 * Test every patch of the series on the one before, keeping each result
 * and review for the one transaction at the end.  0, 1 when a signal
 * came, -1 with err when the bot failed.
 */
static int command_test(struct command_run *r, GError **err)
{
	struct daemon_series *s = &r->series;
	const char *named = pk_sequence_base_named(&s->seq);

	for (guint i = 0; i < s->mails->len; i++) {
		struct pk_mail *m = s->mails->pdata[i];
		struct pk_test_result *res;
		struct pk_review_doc *doc;
		g_autofree char *source = g_strdup_printf("%s.mbx", m->message_id);
		g_autofree char *reproduce = pk_reply_reproduce(m->message_id, m->subject, named, pk_lab_arch(&s->lab));
		struct pk_review_info info = { source, i + 1, MAX(s->total, s->mails->len), s->seq.base.name,
					       s->lab.config_hash, reproduce, s->kernel, s->compiler };

		if (daemon_lease_lost(r->d))
			return pk_error(err, PK_ERROR_FAILED, "the lease was lost: the command is left to the "
					"worker that took it");
		if (!m->patch)
			continue;
		daemon_log(r->job->id, m->message_id, "testing %u/%u again on %s: %s", i + 1, s->mails->len,
			   i ? s->seq.parent : s->seq.base.name, m->subject ? m->subject : "");
		res = g_new0(struct pk_test_result, 1);
		if (pk_sequence_test(&s->seq, i, res, err) < 0) {
			g_free(res);
			return -1;
		}
		if (daemon_stopping()) {
			result_free(res);
			return 1;   /* a canceled build or boot is no verdict: the command runs again */
		}
		g_ptr_array_add(r->results, res);
		doc = g_new0(struct pk_review_doc, 1);
		if (pk_review_doc_make(doc, m->patch, res, &info, err) < 0) {
			g_free(doc);
			return -1;
		}
		g_ptr_array_add(r->docs, doc);
		g_ptr_array_add(r->tested, m);
		g_ptr_array_add(r->verdicts, (char *)pk_verdict_name(res->verdict));
		pk_sequence_advance(&s->seq, res->after.commit);
	}
	return 0;
}

/*
 * Each tested patch's test and review (the last review is the one the
 * answer's row names; 0 when nothing was tested).
 */
static int command_record(void *ctx, gint64 *out_review_id, GError **err)
{
	struct command_run *r = ctx;
	gint64 review_id = 0;

	for (guint i = 0; i < r->results->len; i++) {
		const struct pk_review_doc *doc = r->docs->pdata[i];
		const struct pk_mail *m = r->tested->pdata[i];
		const struct pk_store_mail *row = NULL;
		struct pk_test_record_info rec = { m->patch, 0, r->series.lab.config_hash, doc->model_json,
						   doc->text };

		for (guint k = 0; k < r->series.mails->len; k++)
			if (r->series.mails->pdata[k] == m)
				row = r->series.rows->pdata[k];
		rec.source_id = row ? row->source_id : 0;
		if (pk_test_record(r->d->store, &review_id, r->results->pdata[i], &rec, err) < 0)
			return -1;
	}
	*out_review_id = review_id;
	return 0;
}

/*
 * Store what the command did and its answer, all or nothing, while this
 * worker holds the job's lease (tested.c): each tested patch's test and
 * review, then the answer keyed on the command's mail, sent at once.
 */
static int command_store(struct command_run *r, const struct pk_reply *reply, GError **err)
{
	struct daemon_tested t = {
		.job_id = r->job->id, .row = { .mail_id = r->row->id, .job_id = r->job->id },
		.record = command_record, .ctx = r, .reply = reply,
	};
	gint64 send_job = 0;

	if (daemon_tested_store(r->d, &t, &send_job, err) < 0)
		return -1;
	daemon_log(r->job->id, r->mail->message_id, "answered: <%s> in the outbox, sent by job %" G_GINT64_FORMAT,
		   reply->message_id, send_job);
	return 0;
}

/* Build the answer (c says what) and store it with what was tested.  0, or -1 with err. */
static int command_answer(struct command_run *r, struct pk_reply_command *c, GError **err)
{
	struct daemon_series *s = &r->series;
	const struct pk_source_config *src = daemon_source_of(r->d, r->row->source_id);
	g_autofree char *id_secret = NULL;
	g_autoptr(GPtrArray) models = g_ptr_array_new();
	struct pk_reply reply = { 0 };
	struct pk_reply_info info = {
		.base = s->seq.base.name, .base_note = s->base_note, .list = src ? src->list : NULL,
		.date = daemon_now(), .kernel = s->kernel, .archive = src ? src->archive : NULL,
		.compiler = s->compiler, .config_lines = (const char *const *)s->config_lines,
	};
	int rc;

	for (guint i = 0; i < r->docs->len; i++)
		g_ptr_array_add(models, ((struct pk_review_doc *)r->docs->pdata[i])->model);
	g_ptr_array_add(r->verdicts, NULL);
	c->line = r->line;
	c->models = (JsonNode *const *)models->pdata;
	c->n = models->len;
	c->verdicts = (const char *const *)r->verdicts->pdata;
	/* the store's: an answer built again, by any worker, keeps its Message-ID */
	if (pk_store_secret(r->d->store, PK_REPLY_ID_SECRET, &id_secret, err) < 0)
		return -1;
	info.id_secret = id_secret;
	if (pk_reply_build_command(&reply, r->mail, c, &r->d->config.daemon.mail, &info, err) < 0)
		return -1;
	rc = command_store(r, &reply, err);
	pk_reply_clear(&reply);
	return rc;
}

/*
 * test: the series again, on the base asked for when the bot knows it.
 * 0 (answered), 1 (a signal), -1 with err.  *what says what was done.
 */
static int command_run_test(struct command_run *r, JsonObject *payload, char **what, char **detail,
			    GError **err)
{
	struct pk_reply_command c = { 0 };
	const char *no_series = json_object_get_string_member_with_default(payload, "no_series", NULL);
	g_autofree char *problem = NULL;
	g_auto(GStrv) bases = NULL;
	int rc;

	if (no_series || !json_object_has_member(payload, "mails")) {
		problem = g_strdup_printf("It names no series printkbot tested: %s.  A command goes in a "
					  "reply to a patch or to the cover letter of a series the bot "
					  "answered (or to its answer).", no_series ? no_series : "no series");
		c.problem = problem;
		*what = g_strdup("no series: answered");
		return command_answer(r, &c, err);
	}
	if (r->base) {
		struct pk_lab lab = { .lock_fd = -1 };

		if (pk_lab_open(&lab, err) < 0)
			return -1;
		bases = known_bases(r->d, &lab);
		pk_lab_clear(&lab);
		if (!base_known(bases, r->base)) {
			problem = g_strdup_printf("printkbot does not know the base '%s', so it tested nothing.",
						  r->base);
			c.problem = problem;
			c.bases = (const char *const *)bases;
			*what = g_strdup_printf("unknown base %s: answered with the known ones", r->base);
			return command_answer(r, &c, err);
		}
	}
	if (daemon_series_read(&r->series, payload, detail) < 0)
		return pk_error(err, PK_ERROR_INPUT, "%s", *detail);
	if (daemon_series_start(&r->series, r->base, err) < 0)
		return -1;
	if (r->series.base_note)
		daemon_log(r->job->id, NULL, "%s", r->series.base_note);
	if ((rc = command_test(r, err)) != 0)
		return rc;
	c.series = json_object_get_string_member_with_default(payload, "subject", NULL);
	if (!r->results->len) {
		c.problem = "Its series holds no patch any more: nothing was tested.";
		*what = g_strdup("no patch to test: answered");
	} else {
		g_autoptr(GString) v = g_string_new(NULL);

		for (guint i = 0; i < r->results->len; i++)
			g_string_append_printf(v, "%s%s", i ? ", " : "", (const char *)r->verdicts->pdata[i]);
		*what = g_strdup_printf("tested again on %s: %s", r->series.seq.base.name, v->str);
	}
	return command_answer(r, &c, err);
}

enum job_end daemon_run_command(struct pk_daemon *d, const struct pk_store_job *job, JsonObject *payload,
				char **detail, gint64 *out_retry)
{
	struct command_run r = {
		.d = d, .job = job,
		.results = g_ptr_array_new_with_free_func((GDestroyNotify)result_free),
		.docs = g_ptr_array_new_with_free_func((GDestroyNotify)doc_free),
		.tested = g_ptr_array_new(),
		.verdicts = g_ptr_array_new(),
	};
	gint64 mail_id = payload ? json_object_get_int_member_with_default(payload, "mail", 0) : 0;
	const char *name = payload ? json_object_get_string_member_with_default(payload, "command", "") : "";
	struct pk_store_reply *done = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *what = NULL, *problem = NULL;
	enum job_end end;
	int rc;

	daemon_series_init(&r.series, d, job->id);
	if (!pk_mailcmd_kind_parse(name, &r.kind) || !mail_id) {
		*detail = g_strdup("the job's payload names no command or no mail");
		command_run_clear(&r);
		return JOB_FAILED;
	}
	/* answered before a restart: the answer is stored (and sent, or waiting in the outbox) */
	if ((rc = pk_store_reply_for_mail(d->store, mail_id, &done, &err)) > 0) {
		*detail = g_strdup_printf("answered before (<%s>): not again", done->message_id);
		pk_store_reply_free(done);
		command_run_clear(&r);
		return JOB_DONE;
	}
	if (rc == 0 && daemon_read_mail(d, mail_id, &r.row, &r.mail, detail) < 0) {
		command_run_clear(&r);
		return JOB_FAILED;
	}
	if (rc == 0) {
		command_line(&r);
		r.base = json_object_get_string_member_with_default(payload, "base", NULL);
		daemon_log(job->id, r.mail->message_id, "%s from %s", r.line, r.mail->from_addr);
	}
	if (rc < 0) {
		/* below */
	} else if (r.kind == PK_MAILCMD_TEST) {
		rc = command_run_test(&r, payload, &what, detail, &err);
	} else {
		struct pk_reply_command c = { .help = true };
		const char *word = json_object_get_string_member_with_default(payload, "word", NULL);

		if (r.kind == PK_MAILCMD_UNKNOWN)
			c.problem = problem = word ? g_strdup_printf("printkbot does not know the command '%s'.", word)
					    : g_strdup("printkbot found no command after #printkbot.");
		what = g_strdup(r.kind == PK_MAILCMD_HELP ? "help: answered" : "unknown command: answered with help");
		rc = command_answer(&r, &c, &err);
	}
	g_clear_pointer(detail, g_free);
	if (rc != 0) {
		end = daemon_test_job_unfinished(d, job, rc, err, "command", detail, out_retry);
	} else {
		*detail = g_steal_pointer(&what);
		end = JOB_DONE;
	}
	command_run_clear(&r);
	return end;
}
