/*
 * pushes.c - the pushes the daemon saw on watched branches and what
 * became of each of their commits.  See store.h for the contracts.
 */
#include "store/private.h"

#include <string.h>

static const char *const push_commit_states[] = { "queued", "tested", "tested-before", "merge", "skipped" };

static bool push_commit_state_known(const char *state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(push_commit_states); i++)
		if (!g_strcmp0(state, push_commit_states[i]))
			return true;
	return false;
}

void pk_store_push_commit_free(struct pk_store_push_commit *c)
{
	if (!c)
		return;
	g_free(c->commit_id);
	g_free(c->parent);
	g_free(c->subject);
	g_free(c->author);
	g_free(c->committer);
	g_free(c->state);
	g_free(c->reason);
	g_free(c->patch_key);
	g_free(c->verdict);
	g_free(c->mail_message_id);
	g_free(c);
}

void pk_store_push_free(struct pk_store_push *p)
{
	if (!p)
		return;
	g_free(p->tree);
	g_free(p->branch);
	g_free(p->old_tip);
	g_free(p->new_tip);
	g_free(p->note);
	g_free(p->job_state);
	g_free(p);
}

static int push_commit_insert(struct pk_store *s, gint64 push_id, int seq,
			      const struct pk_store_push_commit *c, GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	const char *state = c->state ? c->state : "queued";

	if (!push_commit_state_known(state))
		return pk_error(err, PK_ERROR_INPUT, "a pushed commit in state '%s'", state);
	st = prep(s, "INSERT INTO push_commits (push_id, seq, commit_id, parent, subject, author, "
		  "committer, state, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", err);
	if (!st)
		return -1;
	bind_int(st, 1, push_id);
	bind_int(st, 2, seq);
	bind_text(st, 3, c->commit_id);
	bind_text(st, 4, c->parent);
	bind_text(st, 5, c->subject);
	bind_text(st, 6, c->author);
	bind_text(st, 7, c->committer);
	bind_text(st, 8, state);
	bind_text(st, 9, c->reason);
	return run(s, st, err);
}

static int push_add_locked(struct pk_store *s, gint64 *out_id, const struct pk_store_push *p,
			   const GPtrArray *commits, GError **err)
{
	g_autoptr(store_stmt) st = prep(s, "INSERT INTO pushes (source_id, tree, branch, old_tip, new_tip, "
					"forced, commits, left_out, note, job_id, created) VALUES (?1, ?2, ?3, "
					"?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id", err);
	gint64 id;

	if (!st)
		return -1;
	bind_int(st, 1, p->source_id);
	bind_text(st, 2, p->tree);
	bind_text(st, 3, p->branch);
	bind_text(st, 4, p->old_tip);
	bind_text(st, 5, p->new_tip);
	bind_int(st, 6, p->forced ? 1 : 0);
	bind_int(st, 7, commits ? commits->len : 0);
	bind_int(st, 8, p->left_out);
	bind_text(st, 9, p->note);
	bind_id(st, 10, p->job_id);
	bind_int(st, 11, p->created ? p->created : unix_now());
	if (run_id(s, st, &id, err) < 0)
		return -1;
	for (guint i = 0; commits && i < commits->len; i++)
		if (push_commit_insert(s, id, (int)i + 1, commits->pdata[i], err) < 0)
			return -1;
	*out_id = id;
	return 0;
}

int pk_store_push_add(struct pk_store *store, gint64 *out_id, const struct pk_store_push *push,
		      const GPtrArray *commits, GError **err)
{
	gint64 id = 0;
	int rc;

	if (!push->tree || !push->branch || !push->old_tip || !push->source_id)
		return pk_error(err, PK_ERROR_INPUT, "a push needs its branch, its source and the tip before");
	if (tx_begin(store, err) < 0)
		return -1;
	rc = push_add_locked(store, &id, push, commits, err);
	if (tx_end(store, rc, err) < 0)
		return -1;
	*out_id = id;
	return 0;
}

int pk_store_push_set_job(struct pk_store *store, gint64 push_id, gint64 job_id, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "UPDATE pushes SET job_id = ?2 WHERE id = ?1", err);

	if (!st)
		return -1;
	bind_int(st, 1, push_id);
	bind_id(st, 2, job_id);
	return run(store, st, err);
}

#define PUSH_COLUMNS "p.id, p.source_id, p.job_id, p.tree, p.branch, p.old_tip, p.new_tip, p.forced, " \
		     "p.commits, p.left_out, p.note, p.created, j.state"
#define PUSH_FROM " FROM pushes p LEFT JOIN jobs j ON j.id = p.job_id"

static struct pk_store_push *push_row(store_stmt *st)
{
	struct pk_store_push *p = g_new0(struct pk_store_push, 1);

	p->id = col_int(st, 0);
	p->source_id = col_int(st, 1);
	p->job_id = col_int(st, 2);
	p->tree = col_text(st, 3);
	p->branch = col_text(st, 4);
	p->old_tip = col_text(st, 5);
	p->new_tip = col_text(st, 6);
	p->forced = col_int(st, 7) != 0;
	p->commits = (int)col_int(st, 8);
	p->left_out = (int)col_int(st, 9);
	p->note = col_text(st, 10);
	p->created = col_int(st, 11);
	p->job_state = col_text(st, 12);
	return p;
}

#define PUSH_COMMIT_COLUMNS "c.id, c.push_id, c.seq, c.commit_id, c.parent, c.subject, c.author, " \
			    "c.committer, c.state, c.reason, c.patch_key, c.same_as, c.verdict, " \
			    "c.review_id, r.message_id, r.sent"
#define PUSH_COMMIT_FROM " FROM push_commits c LEFT JOIN replies r ON r.push_commit_id = c.id " \
			 "AND r.text IS NOT NULL"

static struct pk_store_push_commit *push_commit_row(store_stmt *st)
{
	struct pk_store_push_commit *c = g_new0(struct pk_store_push_commit, 1);

	c->id = col_int(st, 0);
	c->push_id = col_int(st, 1);
	c->seq = (int)col_int(st, 2);
	c->commit_id = col_text(st, 3);
	c->parent = col_text(st, 4);
	c->subject = col_text(st, 5);
	c->author = col_text(st, 6);
	c->committer = col_text(st, 7);
	c->state = col_text(st, 8);
	c->reason = col_text(st, 9);
	c->patch_key = col_text(st, 10);
	c->same_as = col_int(st, 11);
	c->verdict = col_text(st, 12);
	c->review_id = col_int(st, 13);
	c->mail_message_id = col_text(st, 14);
	c->mail_sent = col_int(st, 15);
	return c;
}

int pk_store_push_get(struct pk_store *store, gint64 push_id, struct pk_store_push **out,
		      GPtrArray **out_commits, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT " PUSH_COLUMNS PUSH_FROM " WHERE p.id = ?1", err);
	g_autoptr(store_stmt) cs = NULL;
	g_autoptr(pk_store_push) push = NULL;
	g_autoptr(GPtrArray) commits = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_push_commit_free);
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, push_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	push = push_row(st);
	if (out_commits) {
		if (!(cs = prep(store, "SELECT " PUSH_COMMIT_COLUMNS PUSH_COMMIT_FROM " WHERE c.push_id = ?1 "
				"ORDER BY c.seq", err)))
			return -1;
		bind_int(cs, 1, push_id);
		while ((rc = step(store, cs, err)) > 0)
			g_ptr_array_add(commits, push_commit_row(cs));
		if (rc < 0)
			return -1;
		*out_commits = g_steal_pointer(&commits);
	}
	*out = g_steal_pointer(&push);
	return 1;
}

int pk_store_pushes(struct pk_store *store, const char *source, unsigned limit, GPtrArray **out,
		    GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT " PUSH_COLUMNS PUSH_FROM " WHERE p.tree = ?1 OR "
					"p.tree || '/' || p.branch = ?1 OR ?1 IS NULL ORDER BY p.id DESC", err);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_push_free);
	int rc = 0;

	if (!st)
		return -1;
	bind_text(st, 1, source);
	while ((!limit || rows->len < limit) && (rc = step(store, st, err)) > 0)
		g_ptr_array_add(rows, push_row(st));
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}

int pk_store_push_commit_set(struct pk_store *store, const struct pk_store_push_commit *c, GError **err)
{
	g_autoptr(store_stmt) st = NULL;

	if (!push_commit_state_known(c->state))
		return pk_error(err, PK_ERROR_INPUT, "a pushed commit in state '%s'", c->state ? c->state : "(none)");
	st = prep(store, "UPDATE push_commits SET state = ?2, reason = ?3, patch_key = ?4, same_as = ?5, "
		  "verdict = ?6, review_id = ?7 WHERE id = ?1 RETURNING id", err);
	if (!st)
		return -1;
	bind_int(st, 1, c->id);
	bind_text(st, 2, c->state);
	bind_text(st, 3, c->reason);
	bind_text(st, 4, c->patch_key);
	bind_id(st, 5, c->same_as);
	bind_text(st, 6, c->verdict);
	bind_id(st, 7, c->review_id);
	switch (step(store, st, err)) {
	case -1:
		return -1;
	case 0:
		return pk_error(err, PK_ERROR_INPUT, "%s: no pushed commit %" G_GINT64_FORMAT, store->path, c->id);
	}
	return 0;
}

int pk_store_push_commit_by_key(struct pk_store *store, const char *key,
				struct pk_store_push_commit **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT " PUSH_COMMIT_COLUMNS PUSH_COMMIT_FROM " WHERE "
					"c.patch_key = ?1 AND c.state = 'tested' ORDER BY c.id LIMIT 1", err);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, key);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out = push_commit_row(st);
	return 1;
}
