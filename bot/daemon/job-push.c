/*
 * job-push.c - the push job: the new commits of one push to a watched
 * branch, oldest first, each tested against its parent as `run` tests a
 * range (scanned, and built and booted when it churns logging, on a
 * config derived for what it touches), stored with its review, and the
 * author of each that changed what the kernel prints (or is not-built,
 * or failed) mailed in the kernel test robot's form.  See daemon.h.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "lab/bases.h"
#include "lab/describe.h"
#include "lab/lab.h"
#include "lab/repo.h"
#include "pipeline/sequence.h"
#include "pipeline/test.h"
#include "report/reply.h"
#include "report/review.h"
#include "base/util.h"

#include <string.h>

/* A push job as it runs. */
struct push_run {
	struct pk_daemon *d;
	gint64 job_id;
	struct pk_store_push *push;
	GPtrArray *commits;       /* struct pk_store_push_commit*, oldest first */
	const struct pk_tree_group *tree;   /* its [tree], NULL when the branch is no longer watched */
	char *tree_url;           /* the tree's url or path as mails show it (a password as ***) */
	struct pk_lab lab;
	bool fetched;             /* the tree was fetched again by this job */
	struct pk_sequence seq;   /* the commits in order, on lab and the store */
	char *compiler;           /* the lab's gcc (describe.h), or NULL */
	char **config_lines;      /* qemu/kernel.config's options, or NULL */
	GString *verdicts;        /* each commit tested by this run: its verdict, comma-separated */
	unsigned before, skipped; /* commits tested before (same patch key), skipped */
	unsigned earlier;         /* commits an earlier run of the job stored (a takeover) */
};

static void push_run_clear(struct push_run *r)
{
	pk_store_push_free(r->push);
	if (r->commits)
		g_ptr_array_unref(r->commits);
	g_free(r->tree_url);
	pk_sequence_clear(&r->seq);
	pk_lab_clear(&r->lab);
	g_free(r->compiler);
	g_strfreev(r->config_lines);
	g_string_free(r->verdicts, TRUE);
}

/* The push named by the payload, its commits and its [tree]: 0, or -1 with *detail set. */
static int push_read(struct push_run *r, JsonObject *payload, char **detail)
{
	gint64 id = payload ? json_object_get_int_member_with_default(payload, "push", 0) : 0;
	g_autoptr(GError) err = NULL;

	if (pk_store_push_get(r->d->store, id, &r->push, &r->commits, &err) <= 0) {
		*detail = g_strdup_printf("push %" G_GINT64_FORMAT " is not stored%s%s", id, err ? ": " : "",
					  err ? err->message : "");
		return -1;
	}
	for (guint i = 0; i < r->d->config.trees->len; i++) {
		const struct pk_tree_group *t = r->d->config.trees->pdata[i];

		if (!strcmp(t->tree.name, r->push->tree) && pk_tree_watches(&t->tree, r->push->branch))
			r->tree = t;
	}
	r->tree_url = r->tree ? pk_url_redact(r->tree->tree.url) : g_strdup(r->push->tree);
	return 0;
}

/* Take the lab and read what the mails' heads say of it. */
static int push_start(struct push_run *r, GError **err)
{
	g_autoptr(GError) e1 = NULL, e2 = NULL;

	if (pk_lab_take(&r->lab, r->d->config.test.arch, err) < 0)
		return -1;
	if (!(r->compiler = pk_describe_compiler(pk_lab_arch(&r->lab), &e1)))
		daemon_log(r->job_id, NULL, "no compiler: line in the mails: %s", e1->message);
	if (!(r->config_lines = pk_describe_config_lines(&r->lab, &e2)))
		daemon_log(r->job_id, NULL, "the config's lines are not in the mails: %s", e2->message);
	pk_sequence_opts(&r->seq.opts, &r->d->config.test, &r->d->config.policy, 0);
	r->seq.opts.rules = r->d->rules;
	/* the tip before a fast-forward has the mask every parent after it may borrow */
	pk_sequence_start_commits(&r->seq, r->push->forced ? NULL : r->push->old_tip);
	return 0;
}

/* rev in the lab, the tree fetched once more when it is not (another worker fetched the push). */
static char *push_resolve(struct push_run *r, const char *rev)
{
	g_autoptr(GError) err = NULL;
	char *id = pk_repo_resolve(&r->lab, rev, NULL);

	if (id || r->fetched || !r->tree)
		return id;
	r->fetched = true;
	if (pk_bases_fetch_tree(&r->lab, &r->tree->tree, &err) < 0)
		daemon_log(r->job_id, NULL, "tree %s not fetched: %s", r->tree->tree.name, err->message);
	return pk_repo_resolve(&r->lab, rev, NULL);
}

/*
 * Whether commit is still on the branch: in the history of the tip the
 * store has now (a force-push or a deletion since the push moved it).
 * 1 on it, 0 not (*why set), -1 with err.
 */
static int push_on_branch(struct push_run *r, const char *commit, const char **why, GError **err)
{
	g_autofree char *tip = NULL, *here = NULL;
	int rc;

	if (pk_store_source_state_get(r->d->store, r->push->source_id, "tip", &tip, err) < 0)
		return -1;
	if (!tip) {
		*why = "the branch was deleted before it was tested";
		return 0;
	}
	/* a tip this lab cannot have: the commit is taken to be on it rather than dropped */
	if (!(here = push_resolve(r, tip)))
		return 1;
	if ((rc = pk_repo_is_ancestor(&r->lab, commit, here, err)) == 0)
		*why = "it left the branch (a force-push) before it was tested";
	return rc;
}

/* What became of c written, while the lease holds (c's fields are borrowed). */
static int push_commit_write(struct push_run *r, const struct pk_store_push_commit *c, GError **err)
{
	if (pk_store_begin(r->d->store, err) < 0)
		return -1;
	if (daemon_lease_check(r->d, r->job_id, err) < 0 || pk_store_push_commit_set(r->d->store, c, err) < 0 ||
	    pk_store_commit(r->d->store, err) < 0) {
		pk_store_rollback(r->d->store);
		return -1;
	}
	return 0;
}

/* c is not tested, for why: skipped. */
static int push_skip(struct push_run *r, const struct pk_store_push_commit *c, const char *why, GError **err)
{
	struct pk_store_push_commit row = { .id = c->id, .state = "skipped", .reason = (char *)why,
					    .patch_key = c->patch_key };

	if (push_commit_write(r, &row, err) < 0)
		return -1;
	r->skipped++;
	daemon_log(r->job_id, NULL, "%.12s skipped: %s", c->commit_id, why);
	return 0;
}

/* c brings what an earlier commit (same) brought to the same tree: its result stands, no mail. */
static int push_tested_before(struct push_run *r, const struct pk_store_push_commit *c, const char *key,
			      const struct pk_store_push_commit *same, GError **err)
{
	g_autofree char *why = g_strdup_printf("the same patch-id on the same parent tree as %.12s, tested "
					       "already", same->commit_id);
	struct pk_store_push_commit row = { .id = c->id, .state = "tested-before", .reason = why,
					    .patch_key = (char *)key, .same_as = same->id,
					    .verdict = same->verdict, .review_id = same->review_id };

	if (push_commit_write(r, &row, err) < 0)
		return -1;
	r->before++;
	daemon_log(r->job_id, NULL, "%.12s: %s (%s): not tested again, no mail", c->commit_id, why,
		   same->verdict ? same->verdict : "?");
	return 0;
}

/* One tested commit as push_store_tested() hands it to the daemon_tested_mail() callbacks. */
struct push_tested {
	struct push_run *r;
	const struct pk_store_push_commit *c;
	const struct pk_test_result *res;
	struct pk_reply_commit *mail;
	struct pk_store_push_commit *row;   /* what became of the pushed commit */
	gint64 date;                        /* the mail's Date:, when the commit was stored */
};

static int push_gate(void *ctx, struct daemon_gate *out, JsonObject *model, GError **err)
{
	struct push_tested *p = ctx;

	return daemon_gate_commit(p->r->d, out, p->r->tree, p->c->author, model, p->res, &p->r->lab, err);
}

static int push_render(void *ctx, const struct daemon_gate *gate, JsonNode *model, struct pk_reply *out,
		       GError **err)
{
	struct push_tested *p = ctx;
	struct pk_daemon *d = p->r->d;
	g_autofree char *id_secret = NULL;
	struct pk_reply_info rinfo = { .date = p->date, .compiler = p->r->compiler,
				       .config_lines = (const char *const *)p->r->config_lines,
				       .max_lines = d->config.daemon.max_reply_lines, .policy = &gate->policy };

	/* the store's: a mail built again, by any worker, keeps its Message-ID */
	if (pk_store_secret(d->store, PK_REPLY_ID_SECRET, &id_secret, err) < 0)
		return -1;
	rinfo.id_secret = id_secret;
	return pk_reply_build_commit(out, p->mail, model, &d->config.daemon.mail, &rinfo, err) < 0 ? 1 : 0;
}

static int push_record(void *ctx, const struct pk_review_doc *doc, gint64 *out_review_id, GError **err)
{
	struct push_tested *p = ctx;
	struct pk_store *store = p->r->d->store;
	struct pk_test_record_info rec = { NULL, p->r->push->source_id, p->r->lab.config_hash, doc->model_json,
					   doc->text };

	if (pk_test_record(store, &p->row->review_id, p->res, &rec, err) < 0 ||
	    pk_store_push_commit_set(store, p->row, err) < 0)
		return -1;
	*out_review_id = p->row->review_id;
	return 0;
}

/*
 * Store one tested commit: test, review, what became of the pushed commit
 * and, when the tree's policy mails it (reply-gate.c), the mail to its
 * author and the job that sends it, all or nothing, and only while this
 * worker holds the lease (tested.c).
 */
static int push_store_tested(struct push_run *r, const struct pk_store_push_commit *c, guint index,
			     const char *key, const struct pk_test_result *res, GError **err)
{
	g_autofree char *source = g_strdup_printf("%s/%s (commit %.12s)", r->push->tree, r->push->branch,
						  c->commit_id);
	g_autofree char *reproduce = pk_reply_commit_reproduce(r->tree_url, r->push->branch, c->commit_id);
	struct pk_review_info info = { source, index, r->commits->len, "its parent", r->lab.config_hash,
				       reproduce, NULL, r->compiler };
	struct pk_reply_commit mail = {
		.tree = r->push->tree, .branch = r->push->branch, .tree_url = r->tree_url,
		.head = r->push->new_tip, .commit = c->commit_id, .subject = c->subject,
		.author = c->author, .committer = c->committer, .date = res->patch ? res->patch->date : NULL,
		.index = index, .total = r->commits->len, .list = r->tree->list,
	};
	struct pk_store_push_commit row = { .id = c->id, .state = "tested", .patch_key = (char *)key,
					    .verdict = (char *)pk_verdict_name(res->verdict) };
	g_autofree char *what = g_strdup_printf("%.12s %s", c->commit_id, row.verdict);
	g_autofree char *fail_prefix = g_strdup_printf("%.12s: ", c->commit_id);
	struct push_tested p = { r, c, res, &mail, &row, daemon_now() };
	struct daemon_tested_mail m = {
		.job_id = r->job_id, .patch = NULL, .res = res, .info = &info,
		.row = { .push_commit_id = c->id, .job_id = r->job_id, .after_commit = c->commit_id },
		.gate = push_gate, .render = push_render, .record = push_record, .ctx = &p,
		.msgid = NULL, .what = what, .noun = "mail", .to = c->author,
		.embargo = "waits out the tree's embargo", .fail_prefix = fail_prefix,
	};

	return daemon_tested_mail(r->d, &m, err);
}

/*
 * Commit i of the push: tested and stored, or what it is instead.  A
 * commit no longer queued was dealt with before a restart (or is a
 * merge, a root): not again.  0 to go on, 1 when a signal came, -1 with
 * err when the bot failed.
 */
static int push_test_one(struct push_run *r, guint i, GError **err)
{
	struct pk_store_push_commit *c = r->commits->pdata[i];
	struct pk_store_push_commit *same = NULL;
	struct pk_test_result res = { 0 };
	g_autofree char *here = NULL, *key = NULL;
	g_autoptr(GError) kerr = NULL;
	const char *why = NULL;
	int rc;

	if (daemon_lease_lost(r->d))   /* a stalled worker that woke: the job is another's now */
		return pk_error(err, PK_ERROR_FAILED, "the lease was lost: the push is left to the worker "
				"that took it");
	if (strcmp(c->state, "queued"))
		return 0;
	if (daemon_stopping())
		return 1;   /* the next commit waits for the next start */
	if (!r->tree)
		return push_skip(r, c, "its branch is no longer watched", err);
	if (!(here = push_resolve(r, c->commit_id)))
		return push_skip(r, c, "it is not in the lab, and the tree fetched again no longer has it", err);
	if ((rc = push_on_branch(r, here, &why, err)) <= 0)
		return rc < 0 ? -1 : push_skip(r, c, why, err);
	/* no key for a commit over the policy's limits: pk_test_commit() refuses it unread */
	if (pk_repo_patch_key(&key, &r->lab, here, &r->seq.opts.policy, &kerr) < 0)
		return push_skip(r, c, kerr->message, err);
	if (key && (rc = pk_store_push_commit_by_key(r->d->store, key, &same, err)) < 0)
		return -1;
	if (key && rc > 0) {
		rc = push_tested_before(r, c, key, same, err);
		pk_store_push_commit_free(same);
		return rc;
	}
	daemon_log(r->job_id, NULL, "testing %u/%u, %.12s: %s", i + 1, r->commits->len, c->commit_id,
		   c->subject ? c->subject : "");
	/* the mask a parent learnt (or found) serves the next parents, as in `run` */
	rc = pk_sequence_test_commit(&r->seq, here, &res, err) < 0 ? -1 : 0;
	if (rc == 0 && daemon_stopping())
		rc = 1;   /* a canceled build or boot is no verdict: the commit is tested again */
	if (rc == 0 && (rc = push_store_tested(r, c, i + 1, key, &res, err)) == 0)
		g_string_append_printf(r->verdicts, "%s%s", r->verdicts->len ? ", " : "",
				       pk_verdict_name(res.verdict));
	pk_test_result_clear(&res);
	return rc;
}

enum job_end daemon_run_push(struct pk_daemon *d, const struct pk_store_job *job, JsonObject *payload,
			     char **detail, gint64 *out_retry)
{
	struct push_run r = { .d = d, .job_id = job->id, .lab = { .lock_fd = -1 }, .verdicts = g_string_new(NULL) };
	g_autoptr(GError) err = NULL;
	enum job_end end;
	int rc;

	pk_sequence_init(&r.seq, &r.lab, d->store);
	if (push_read(&r, payload, detail) < 0) {
		push_run_clear(&r);
		return JOB_FAILED;
	}
	/* what an earlier run stored (the job was taken over) counts in its end as this run's does */
	for (guint i = 0; i < r.commits->len; i++) {
		const char *state = ((struct pk_store_push_commit *)r.commits->pdata[i])->state;

		r.earlier += !strcmp(state, "tested");
		r.before += !strcmp(state, "tested-before");
		r.skipped += !strcmp(state, "skipped");
	}
	rc = push_start(&r, &err);
	for (guint i = 0; rc == 0 && i < r.commits->len; i++)
		rc = push_test_one(&r, i, &err);
	if (rc != 0) {
		end = daemon_test_job_unfinished(d, job, rc, err, "push", detail, out_retry);
	} else {
		g_autofree char *earlier = r.earlier ? g_strdup_printf(", %u stored by an earlier run", r.earlier)
					   : g_strdup("");

		*detail = g_strdup_printf("push %" G_GINT64_FORMAT " of %s/%s, %u commit%s: %s%s; %u tested before "
					  "(the same change), %u skipped", r.push->id, r.push->tree, r.push->branch,
					  r.commits->len, r.commits->len == 1 ? "" : "s",
					  r.verdicts->len ? r.verdicts->str : "none tested now", earlier, r.before,
					  r.skipped);
		end = JOB_DONE;
	}
	push_run_clear(&r);
	return end;
}
