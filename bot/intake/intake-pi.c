/*
 * intake-pi.c - a public-inbox archive as a source, read with libgit2.
 *
 * A v2 inbox (what lore mirrors are) is a directory whose git/N.git are
 * epochs: git repositories in which every commit adds one mail as the
 * blob `m` at the root of its tree (a commit without `m` deletes one).
 * Each epoch is walked from the last commit seen (kept in the store as
 * "commit:N") to its branch head, oldest first, and the commit is
 * remembered after its mail was delivered.  A path that is itself a git
 * repository is read as one epoch (a v1 inbox, or a single epoch).
 * The archive is looked at every poll_interval seconds.  Starting now
 * records each epoch's head; an epoch that appears later is read whole
 * (all of it is new).
 */
#include "intake/intake.h"
#include "store/store.h"
#include "store/queue.h"
#include "base/gitutil.h"
#include "base/util.h"

#include <string.h>

struct pi {
	struct pk_intake_ctx *ctx;
	GPtrArray *epochs;    /* char*: repository paths, oldest epoch first */
};

static int git_fail(GError **err, const char *what, const char *path)
{
	const git_error *e = git_error_last();

	return pk_error(err, PK_ERROR_FAILED, "%s %s: %s", what, path, e && e->message ? e->message : "failed");
}

static gint epoch_number(const char *name)
{
	return (gint)g_ascii_strtoll(name, NULL, 10);
}

static int by_epoch(gconstpointer a, gconstpointer b)
{
	g_autofree char *x = g_path_get_basename(*(char *const *)a);
	g_autofree char *y = g_path_get_basename(*(char *const *)b);

	return epoch_number(x) - epoch_number(y);
}

/* The epochs of the inbox at path, found again on every fetch (a new one may appear). */
static GPtrArray *find_epochs(const char *path)
{
	GPtrArray *epochs = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *gitdir = g_build_filename(path, "git", NULL);
	g_autoptr(GDir) dir = g_dir_open(gitdir, 0, NULL);
	const char *name;

	while (dir && (name = g_dir_read_name(dir)))
		if (g_ascii_isdigit(name[0]) && g_str_has_suffix(name, ".git"))
			g_ptr_array_add(epochs, g_build_filename(gitdir, name, NULL));
	if (epochs->len)
		g_ptr_array_sort(epochs, by_epoch);
	else
		g_ptr_array_add(epochs, g_strdup(path));
	return epochs;
}

static int pi_open(void **out, struct pk_intake_ctx *ctx, GError **err)
{
	struct pi *p;

	pk_git_init();
	if (!g_file_test(ctx->cfg->path, G_FILE_TEST_IS_DIR))
		return pk_error(err, PK_ERROR_INPUT, "source %s: %s is not a directory", ctx->cfg->name,
				ctx->cfg->path);
	p = g_new0(struct pi, 1);
	p->ctx = ctx;
	*out = p;
	return 0;
}

static int pi_watch_fd(void *state)
{
	return -1;
}

/* Deliver the `m` of one commit, if it has one. */
static int deliver_commit(const struct pk_intake_ctx *ctx, git_repository *repo, const git_oid *oid,
			  const char *path, pk_intake_deliver_fn deliver, void *data, bool *out_had,
			  GError **err)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	int rc = -1;

	*out_had = false;
	if (git_commit_lookup(&commit, repo, oid) < 0 || git_commit_tree(&tree, commit) < 0) {
		git_fail(err, "cannot read a commit of", path);
		goto cleanup;
	}
	if (git_tree_entry_bypath(&entry, tree, "m") < 0) {
		rc = 0;   /* a deletion: no mail */
		goto cleanup;
	}
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(entry)) < 0) {
		git_fail(err, "cannot read a mail of", path);
		goto cleanup;
	}
	if (ctx->max_mail && (guint64)git_blob_rawsize(blob) > ctx->max_mail) {
		char hex[GIT_OID_HEXSZ + 1];

		pk_info("source %s: the mail of commit %s of %s is %" G_GUINT64_FORMAT
			" bytes, over max_mail_mb (%zu bytes): skipped", ctx->cfg->name,
			git_oid_tostr(hex, sizeof hex, oid), path, (guint64)git_blob_rawsize(blob), ctx->max_mail);
		rc = 0;
		goto cleanup;
	}
	*out_had = true;
	{
		char hex[GIT_OID_HEXSZ + 1];
		g_autofree char *where = g_strdup_printf("commit %s of %s", git_oid_tostr(hex, sizeof hex, oid),
							 path);

		rc = deliver(data, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), where, err);
	}
cleanup:
	git_blob_free(blob);
	git_tree_entry_free(entry);
	git_tree_free(tree);
	git_commit_free(commit);
	return rc;
}

static int open_epoch(git_repository **out, const char *path, GError **err)
{
	if (git_repository_open_bare(out, path) < 0 && git_repository_open(out, path) < 0)
		return git_fail(err, "cannot open", path);
	return 0;
}

/* The branch an epoch's mails are on: HEAD, else master or main. */
static int epoch_head(git_oid *out, git_repository *repo)
{
	static const char *const refs[] = { "HEAD", "refs/heads/master", "refs/heads/main" };

	for (size_t i = 0; i < G_N_ELEMENTS(refs); i++)
		if (git_reference_name_to_id(out, repo, refs[i]) == 0)
			return 0;
	return -1;
}

static int fetch_epoch(struct pi *p, const char *path, guint n, pk_intake_deliver_fn deliver,
		       void *data, unsigned *count, GError **err)
{
	g_autofree char *key = g_strdup_printf("commit:%u", n);
	g_autofree char *seen = NULL;
	git_repository *repo = NULL;
	git_revwalk *walk = NULL;
	git_oid head, oid, last;
	int rc = -1;

	if (open_epoch(&repo, path, err) < 0)
		return -1;
	if (epoch_head(&head, repo) < 0) {
		rc = 0;   /* an epoch without commits yet */
		goto cleanup;
	}
	if (pk_store_source_state_get(p->ctx->store, p->ctx->source_id, key, &seen, err) < 0)
		goto cleanup;
	if (git_revwalk_new(&walk, repo) < 0 || git_revwalk_push(walk, &head) < 0) {
		git_fail(err, "cannot walk", path);
		goto cleanup;
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (seen && git_oid_fromstr(&last, seen) == 0 && git_revwalk_hide(walk, &last) < 0) {
		/* the commit we stopped at is gone (the epoch was rewritten): read it all */
		pk_info("source %s: %s no longer has commit %s: reading it again", p->ctx->cfg->name, path, seen);
		if (pk_intake_read_again(p->ctx, err) < 0)
			goto cleanup;
		git_revwalk_reset(walk);
		git_revwalk_push(walk, &head);
		git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	}
	while (git_revwalk_next(&oid, walk) == 0) {
		char hex[GIT_OID_HEXSZ + 1];
		bool had;

		if (deliver_commit(p->ctx, repo, &oid, path, deliver, data, &had, err) < 0)
			goto cleanup;
		git_oid_tostr(hex, sizeof hex, &oid);
		if (pk_store_source_state_set(p->ctx->store, p->ctx->source_id, key, hex, err) < 0)
			goto cleanup;
		*count += had;
	}
	rc = 0;
cleanup:
	git_revwalk_free(walk);
	git_repository_free(repo);
	return rc;
}

/* The number of epoch i of epochs, as its state key names it (0 for a lone repository). */
static guint epoch_index(GPtrArray *epochs, guint i)
{
	g_autofree char *base = g_path_get_basename(epochs->pdata[i]);

	return epochs->len == 1 && !g_ascii_isdigit(base[0]) ? 0 : (guint)epoch_number(base);
}

static int pi_fetch(void *state, pk_intake_deliver_fn deliver, void *data, unsigned *out_count,
		    GError **err)
{
	struct pi *p = state;
	g_autoptr(GPtrArray) epochs = find_epochs(p->ctx->cfg->path);

	*out_count = 0;
	for (guint i = 0; i < epochs->len; i++)
		if (fetch_epoch(p, epochs->pdata[i], epoch_index(epochs, i), deliver, data, out_count, err) < 0)
			return -1;
	return 0;
}

/* Each epoch's head becomes its last commit seen, unless one is kept already. */
static int pi_start_now(void *state, GError **err)
{
	struct pi *p = state;
	g_autoptr(GPtrArray) epochs = find_epochs(p->ctx->cfg->path);

	for (guint i = 0; i < epochs->len; i++) {
		g_autofree char *key = g_strdup_printf("commit:%u", epoch_index(epochs, i));
		g_autofree char *seen = NULL;
		git_repository *repo = NULL;
		char hex[GIT_OID_HEXSZ + 1];
		git_oid head;
		int rc;

		if ((rc = pk_store_source_state_get(p->ctx->store, p->ctx->source_id, key, &seen, err)) < 0)
			return -1;
		if (rc > 0)
			continue;
		if (open_epoch(&repo, epochs->pdata[i], err) < 0)
			return -1;
		rc = epoch_head(&head, repo);
		git_repository_free(repo);
		if (rc < 0)
			continue;   /* no commit yet: all it will hold is new */
		git_oid_tostr(hex, sizeof hex, &head);
		if (pk_store_source_state_set(p->ctx->store, p->ctx->source_id, key, hex, err) < 0)
			return -1;
	}
	return 0;
}

static void pi_close(void *state)
{
	if (!state)
		return;
	g_free(state);
}

const struct pk_intake_ops pk_intake_public_inbox = {
	.type = "public-inbox",
	.kind = "public-inbox",
	.open = pi_open,
	.start_now = pi_start_now,
	.watch_fd = pi_watch_fd,
	.fetch = pi_fetch,
	.close = pi_close,
};
