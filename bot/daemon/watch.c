/*
 * watch.c - the watched branches ([tree NAME] watch =): after each fetch
 * of a tree, each watched branch as the lab has it is compared with the
 * tip the store noted last; a move is one push, its new commits along
 * first parents (oldest first, as `run` walks a range) listed in the
 * store and queued as one job (job-push.c).  See daemon.h.
 *
 * The tip is moved in the store by compare and set, in the transaction
 * that adds the push and its job: of two workers that fetched the same
 * push, one queues it.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "intake/range.h"
#include "lab/bases.h"
#include "lab/lab.h"
#include "lab/repo.h"
#include "base/util.h"

#include <string.h>

/* A watched branch as the watch goes through it. */
struct watch {
	struct pk_daemon *d;
	const struct pk_lab *lab;
	const struct pk_tree_group *t;
	const char *branch;
	char *name;              /* TREE/BRANCH: the source's name */
	gint64 source_id;
	char *seen;              /* the tip the store has, or NULL */
	char *tip;               /* the tip the lab has now, or NULL (gone) */
};

static void watch_clear(struct watch *w)
{
	g_free(w->name);
	g_free(w->seen);
	g_free(w->tip);
}

/* The first sight of a branch: its tip noted, nothing before it tested. */
static int watch_first(struct watch *w, GError **err)
{
	int rc = pk_store_source_state_swap(w->d->store, w->source_id, "tip", NULL, w->tip, err);

	if (rc > 0)
		daemon_log(0, NULL, "tree %s: branch %s seen for the first time, at %.12s: watched from "
			   "there on (nothing before it is tested)", w->t->tree.name, w->branch, w->tip);
	return rc < 0 ? -1 : 0;
}

/*
 * The push as one transaction: the tip moved (unless another worker moved
 * it first: then nothing is written), the push and its commits, and its
 * job when it has a commit to test.  *out_job 0 for none.  1 written, 0
 * another worker had, -1 with err.
 */
static int watch_store(struct watch *w, const struct pk_store_push *push, GPtrArray *commits,
		       bool testable, gint64 *out_push, gint64 *out_job, GError **err)
{
	struct pk_store *s = w->d->store;
	g_autofree char *payload = NULL;
	gint64 push_id = 0, job = 0;
	int rc;

	if (pk_store_begin(s, err) < 0)
		return -1;
	if ((rc = pk_store_source_state_swap(s, w->source_id, "tip", w->seen, w->tip, err)) <= 0) {
		pk_store_rollback(s);
		return rc;
	}
	if (pk_store_push_add(s, &push_id, push, commits, err) < 0)
		goto fail;
	if (testable) {
		payload = g_strdup_printf("{\"push\":%" G_GINT64_FORMAT "}", push_id);
		if (pk_store_job_add(s, &job, PK_JOB_PUSH, payload, err) < 0 ||
		    pk_store_push_set_job(s, push_id, job, err) < 0)
			goto fail;
	}
	if (pk_store_commit(s, err) < 0)
		goto fail;
	*out_push = push_id;
	*out_job = job;
	return 1;
fail:
	pk_store_rollback(s);
	return -1;
}

/* The branch is gone from the tree: dropped, the push that says so stored. */
static int watch_deleted(struct watch *w, GError **err)
{
	struct pk_store_push push = { .source_id = w->source_id, .tree = w->t->tree.name, .branch = (char *)w->branch,
				      .old_tip = w->seen, .note = "the branch was deleted" };
	gint64 id, job;
	int rc = watch_store(w, &push, NULL, false, &id, &job, err);

	if (rc > 0)
		daemon_log(0, NULL, "tree %s: branch %s was deleted (its tip was %.12s): dropped; its commits "
			   "not tested yet will not be (push %" G_GINT64_FORMAT ")", w->t->tree.name, w->branch,
			   w->seen, id);
	return rc < 0 ? -1 : 0;
}

/* A push that brings nothing new (moved back, or from a tip this lab never had). */
static int watch_nothing_new(struct watch *w, const char *note, GError **err)
{
	struct pk_store_push push = { .source_id = w->source_id, .tree = w->t->tree.name, .branch = (char *)w->branch,
				      .old_tip = w->seen, .new_tip = w->tip, .forced = true, .note = (char *)note };
	gint64 id, job;
	int rc = watch_store(w, &push, NULL, false, &id, &job, err);

	if (rc > 0)
		daemon_log(0, NULL, "tree %s: branch %s moved from %.12s to %.12s: %s (push %" G_GINT64_FORMAT ")",
			   w->t->tree.name, w->branch, w->seen, w->tip, note, id);
	return rc < 0 ? -1 : 0;
}

/* A commit of the walk as the store lists it (strings borrowed from c). */
static struct pk_store_push_commit *listed(const struct pk_range_commit *c)
{
	struct pk_store_push_commit *pc = g_new0(struct pk_store_push_commit, 1);

	pc->commit_id = c->id;
	pc->parent = c->parent;
	pc->subject = c->subject;
	pc->author = c->author;
	pc->committer = c->committer;
	if (c->merge) {
		pc->state = "merge";
		pc->reason = "a merge: listed, not tested";
	} else if (!c->parent) {
		pc->state = "skipped";
		pc->reason = "a root commit: no parent to compare with";
	}
	return pc;
}

/*
 * What a cut push leaves out, in a sentence (new): the older commits of
 * the walk, from the first to the last one not listed.
 */
static char *left_out_note(const struct pk_range *range, guint left, const struct pk_tree_group *t)
{
	const struct pk_range_commit *first = range->commits->pdata[0];
	const struct pk_range_commit *last = range->commits->pdata[left - 1];

	return g_strdup_printf("%u older commit%s (%.12s..%.12s, oldest first) left out: the push brought %u "
			       "along first parents, more than max_commits = %u, and the newest %u are tested",
			       left, left == 1 ? "" : "s", first->id, last->id, range->commits->len,
			       t->max_commits, t->max_commits);
}

/* The branch moved from seen to tip, which has seen in its history or not (a force-push). */
static int watch_pushed(struct watch *w, GError **err)
{
	const struct pk_tree_group *t = w->t;
	g_autofree char *spec = g_strdup_printf("%s..%s", w->seen, w->tip);
	const char *words[] = { spec, NULL };
	g_autoptr(pk_range) range = NULL;
	g_autoptr(GPtrArray) commits = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *note = NULL;
	struct pk_store_push push = { .source_id = w->source_id, .tree = t->tree.name, .branch = (char *)w->branch,
				      .old_tip = w->seen, .new_tip = w->tip };
	guint left = 0, testable = 0, merges = 0;
	gint64 id, job;
	int forward, rc;

	if ((forward = pk_repo_is_ancestor(w->lab, w->seen, w->tip, err)) < 0 ||
	    pk_range_read(&range, w->lab->tree, words, NULL, err) < 0)
		return -1;
	push.forced = !forward;
	/* a release merged by fast-forward: the newest max_commits, never a stall */
	if (range->commits->len > t->max_commits) {
		left = range->commits->len - t->max_commits;
		note = left_out_note(range, left, t);
		push.left_out = (int)left;
		push.note = note;
	}
	for (guint i = left; i < range->commits->len; i++) {
		struct pk_store_push_commit *pc = listed(range->commits->pdata[i]);

		testable += !pc->state;
		merges += !g_strcmp0(pc->state, "merge");
		g_ptr_array_add(commits, pc);
	}
	if ((rc = watch_store(w, &push, commits, testable > 0, &id, &job, err)) <= 0)
		return rc;
	if (note)
		daemon_log(0, NULL, "tree %s: branch %s: push %" G_GINT64_FORMAT ": %s", t->tree.name, w->branch, id, note);
	if (job)
		daemon_log(job, NULL, "tree %s: branch %s pushed, %.12s..%.12s%s: %u new commit%s along first "
			   "parents (%u merge%s), queued (push %" G_GINT64_FORMAT ")", t->tree.name, w->branch, w->seen,
			   w->tip, push.forced ? " (forced)" : "", commits->len, commits->len == 1 ? "" : "s",
			   merges, merges == 1 ? "" : "s", id);
	else
		daemon_log(0, NULL, "tree %s: branch %s pushed, %.12s..%.12s%s: no commit to test (push %"
			   G_GINT64_FORMAT ")", t->tree.name, w->branch, w->seen, w->tip,
			   push.forced ? " (forced)" : "", id);
	return 0;
}

/* One watched branch after a fetch: compared, and what moved stored and queued. */
static int watch_branch(struct watch *w, GError **err)
{
	g_autofree char *ref = pk_bases_ref(w->name);
	g_autofree char *url = pk_url_redact(w->t->tree.url);
	g_autofree char *seen_here = NULL;
	int back;

	w->tip = pk_repo_resolve(w->lab, ref, NULL);
	if (pk_store_add_source(w->d->store, &w->source_id, "git", w->name, url, err) < 0 ||
	    pk_store_source_state_get(w->d->store, w->source_id, "tip", &w->seen, err) < 0)
		return -1;
	if (!g_strcmp0(w->seen, w->tip))
		return 0;
	if (!w->seen)
		return watch_first(w, err);
	if (!w->tip)
		return watch_deleted(w, err);
	/* another worker's lab noted a tip this one never fetched: nothing to walk from */
	if (!(seen_here = pk_repo_resolve(w->lab, w->seen, NULL)))
		return watch_nothing_new(w, "the tip seen before is not in this lab (fetched by another "
					 "worker, and gone from the tree): watched from the new tip on", err);
	if ((back = pk_repo_is_ancestor(w->lab, w->tip, w->seen, err)) < 0)
		return -1;
	if (back)
		return watch_nothing_new(w, "moved back to a commit of its history: nothing new to test", err);
	return watch_pushed(w, err);
}

void daemon_watch_tree(struct pk_daemon *d, const struct pk_lab *lab, const struct pk_tree_group *t)
{
	for (char **b = t->tree.watch; b && *b; b++) {
		struct watch w = { d, lab, t, *b, g_strdup_printf("%s/%s", t->tree.name, *b) };
		g_autoptr(GError) err = NULL;

		if (watch_branch(&w, &err) < 0)
			daemon_log(0, NULL, "tree %s: branch %s not compared: %s (again at the next fetch)",
				   t->tree.name, *b, err->message);
		watch_clear(&w);
	}
}
