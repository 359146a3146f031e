/*
 * repo-refs.c - the lab repository's refs and names of commits, as a
 * person reads them (git describe, the branch a commit heads); see repo.h.
 */
#include "lab/repo.h"
#include "lab/repo-git.h"

#include <string.h>

#include "lab/sandbox.h"
#include "base/util.h"

char *pk_repo_commit_message(const struct pk_lab *lab, const char *rev, GError **err)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	char *msg = NULL;

	if (pk_repo_handle(&repo, lab, err) < 0)
		return NULL;
	if (pk_repo_lookup(&commit, repo, rev, err) == 0)
		msg = g_strdup(git_commit_message(commit));
	git_commit_free(commit);
	return msg;
}

char *pk_repo_describe(const struct pk_lab *lab, const char *rev)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	git_describe_result *res = NULL;
	git_describe_options opts = GIT_DESCRIBE_OPTIONS_INIT;
	git_describe_format_options fmt = GIT_DESCRIBE_FORMAT_OPTIONS_INIT;
	git_buf buf = { 0 };
	char *out = NULL;

	/* annotated tags only, as git describe: the lab's own tags are lightweight */
	fmt.abbreviated_size = 12;
	if (pk_repo_handle(&repo, lab, NULL) < 0)
		return NULL;
	if (pk_repo_lookup(&commit, repo, rev, NULL) == 0 &&
	    git_describe_commit(&res, (git_object *)commit, &opts) == 0 &&
	    git_describe_format(&buf, res, &fmt) == 0)
		out = g_strdup(buf.ptr);
	git_buf_dispose(&buf);
	git_describe_result_free(res);
	git_commit_free(commit);
	return out;
}

char *pk_repo_ref_at(const struct pk_lab *lab, const char *rev, const char *prefix)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	g_autofree char *glob = g_strconcat(prefix, "*", NULL);
	char *out = NULL;

	if (pk_repo_handle(&repo, lab, NULL) < 0)
		return NULL;
	if (pk_repo_lookup(&commit, repo, rev, NULL) < 0 ||
	    git_reference_iterator_glob_new(&it, repo, glob) < 0)
		goto cleanup;
	while (!out && git_reference_next(&ref, it) == 0) {
		git_object *target = NULL;

		if (git_reference_peel(&target, ref, GIT_OBJECT_COMMIT) == 0 &&
		    git_oid_equal(git_object_id(target), git_commit_id(commit)))
			out = g_strdup(git_reference_name(ref) + strlen(prefix));
		git_object_free(target);
		git_reference_free(ref);
	}
cleanup:
	git_reference_iterator_free(it);
	git_commit_free(commit);
	return out;
}

bool pk_repo_head_published(const struct pk_lab *lab)
{
	static const char *const prefixes[] = { PK_REPO_PUBLISHED_PREFIXES };

	for (size_t i = 0; i < G_N_ELEMENTS(prefixes); i++) {
		g_autofree char *ref = pk_repo_ref_at(lab, "HEAD", prefixes[i]);

		if (ref)
			return true;
	}
	return false;
}

/* Where fetched [tree]s' branches are (bases.h's PK_BASES_TREE_PREFIX, which this file cannot include). */
#define TREES_PREFIX "refs/printkbot/trees/"

/*
 * Whether the published ref name is trusted to be built in place (build.h):
 * a base tag or branch of the lab's, or a branch of a [tree] marked
 * trusted.  Anyone who can push to an untrusted tree's branch chooses what
 * its tip builds; that is built in a layer, like a patch.
 */
static bool ref_trusted(const char *name)
{
	const char *const *trusted = (const char *const *)pk_sandbox_settings()->trusted_trees;
	const char *tree = name + strlen(TREES_PREFIX);

	if (!g_str_has_prefix(name, TREES_PREFIX))
		return true;
	for (; trusted && *trusted; trusted++) {
		size_t n = strlen(*trusted);

		if (!strncmp(tree, *trusted, n) && tree[n] == '/')
			return true;
	}
	return false;
}

/* The commits published refs point at (the trusted ones only, with trusted_only), as hex ids, into set. */
static void published_tips(GHashTable *set, git_repository *repo, bool trusted_only)
{
	static const char *const prefixes[] = { PK_REPO_PUBLISHED_PREFIXES };

	for (size_t i = 0; i < G_N_ELEMENTS(prefixes); i++) {
		g_autofree char *glob = g_strconcat(prefixes[i], "*", NULL);
		git_reference_iterator *it = NULL;
		git_reference *ref = NULL;

		if (git_reference_iterator_glob_new(&it, repo, glob) < 0)
			continue;
		while (git_reference_next(&ref, it) == 0) {
			git_object *target = NULL;

			if ((!trusted_only || ref_trusted(git_reference_name(ref))) &&
			    git_reference_peel(&target, ref, GIT_OBJECT_COMMIT) == 0)
				g_hash_table_add(set, g_strdup(git_oid_tostr_s(git_object_id(target))));
			git_object_free(target);
			git_reference_free(ref);
		}
		git_reference_iterator_free(it);
	}
}

/* The nearest commit along rev's first parents that is a tip of published_tips(). */
static char *tip_ancestor(const struct pk_lab *lab, const char *rev, unsigned max_depth, bool trusted_only)
{
	g_autoptr(GHashTable) tips = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	char *out = NULL;

	if (pk_repo_handle(&repo, lab, NULL) < 0)
		return NULL;
	published_tips(tips, repo, trusted_only);
	if (pk_repo_lookup(&commit, repo, rev, NULL) < 0)
		goto cleanup;
	for (unsigned depth = 0; commit && depth <= max_depth && !out; depth++) {
		git_commit *parent = NULL;
		const char *id = git_oid_tostr_s(git_commit_id(commit));

		if (g_hash_table_contains(tips, id))
			out = g_strdup(id);
		else if (git_commit_parentcount(commit) > 0)
			git_commit_parent(&parent, commit, 0);
		git_commit_free(commit);
		commit = parent;
	}
cleanup:
	git_commit_free(commit);
	return out;
}

char *pk_repo_published_ancestor(const struct pk_lab *lab, const char *rev, unsigned max_depth)
{
	return tip_ancestor(lab, rev, max_depth, false);
}

char *pk_repo_trusted_ancestor(const struct pk_lab *lab, const char *rev, unsigned max_depth)
{
	return tip_ancestor(lab, rev, max_depth, true);
}

bool pk_repo_head_trusted(const struct pk_lab *lab)
{
	g_autofree char *head = pk_repo_trusted_ancestor(lab, "HEAD", 0);

	return head != NULL;
}

/* Whether the tree's top Makefile is there, a regular file: without it nothing of the tree builds. */
static bool worktree_whole(const struct pk_lab *lab)
{
	g_autofree char *makefile = g_build_filename(lab->tree, "Makefile", NULL);

	return g_file_test(makefile, G_FILE_TEST_IS_REGULAR) && !g_file_test(makefile, G_FILE_TEST_IS_SYMLINK);
}

int pk_repo_rest(const struct pk_lab *lab, const char *rev, bool whole, GError **err)
{
	g_autofree char *from = pk_repo_resolve(lab, rev ? rev : "HEAD", rev ? err : NULL);
	g_autofree char *head = rev ? pk_repo_resolve(lab, "HEAD", NULL) : g_strdup(from);
	g_autofree char *target = from ? pk_repo_published_ancestor(lab, from, 256) : NULL;
	git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	int rc = -1;

	if (rev && !from)
		return -1;
	if (!worktree_whole(lab))
		whole = true;
	if (!target && rev)
		target = g_strdup(from);
	else if (!target)
		target = head && !whole ? g_strdup(head) : pk_repo_resolve(lab, PK_LAB_BASE_TAG, err);
	if (!target)
		return -1;
	if (!whole)
		return head && !strcmp(head, target) ? 0 : pk_repo_checkout(lab, target, err);
	if (pk_repo_handle(&repo, lab, err) < 0)
		return -1;
	if (pk_repo_lookup(&commit, repo, target, err) < 0)
		goto cleanup;
	/* every path: a file the worktree lost is written again though HEAD's tree has it too */
	opts.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_checkout_tree(repo, (const git_object *)commit, &opts) < 0) {
		pk_repo_checkout_failed(repo, err);
		goto cleanup;
	}
	if (git_repository_set_head_detached(repo, git_commit_id(commit)) < 0) {
		pk_git_fail(err, "detaching HEAD");
		goto cleanup;
	}
	rc = 0;
cleanup:
	git_commit_free(commit);
	return rc;
}

/* A walk's bound: commits dated before cutoff are left out, and with them their parents. */
struct walk_bound {
	git_repository *repo;
	git_time_t cutoff;
};

static int older_than_cutoff(const git_oid *id, void *payload)
{
	const struct walk_bound *b = payload;
	git_commit *commit = NULL;
	int old = 0;

	/* one the walk cannot read is not hidden: the walk's own error says why */
	if (git_commit_lookup(&commit, b->repo, id) == 0)
		old = git_commit_time(commit) < b->cutoff;
	git_commit_free(commit);
	return old;
}

/*
 * Whether commit is in the history of a published ref: libgit2's walk
 * from every published tip, unsorted (a sorted walk reads the whole
 * history before the first commit) and bounded by older_than_cutoff().
 * 1 yes, 0 no, -1 with err.
 */
static int is_published_commit(git_repository *repo, const git_commit *commit, GError **err)
{
	static const char *const prefixes[] = { PK_REPO_PUBLISHED_PREFIXES };
	/* a commit dated a month after a descendant's date is not found: kernel trees have none */
	struct walk_bound bound = { repo, git_commit_time(commit) - 31 * 24 * 3600 };
	git_revwalk *walk = NULL;
	git_oid id;
	int rc = -1, step = 0;

	if (git_revwalk_new(&walk, repo) < 0 || git_revwalk_add_hide_cb(walk, older_than_cutoff, &bound) < 0) {
		pk_git_fail(err, "walking the published history");
		goto cleanup;
	}
	for (size_t i = 0; i < G_N_ELEMENTS(prefixes); i++) {
		g_autofree char *glob = g_strconcat(prefixes[i], "*", NULL);

		/* a glob that matches nothing, or a tag of a tree or blob, pushes nothing */
		if (git_revwalk_push_glob(walk, glob) < 0) {
			pk_git_fail(err, glob);
			goto cleanup;
		}
	}
	rc = 0;
	while (rc == 0 && (step = git_revwalk_next(&id, walk)) == 0)
		rc = git_oid_equal(&id, git_commit_id(commit));
	if (rc == 0 && step != GIT_ITEROVER)
		rc = pk_git_fail(err, "walking the published history");
cleanup:
	git_revwalk_free(walk);
	return rc;
}

int pk_repo_id_published(enum pk_repo_id_kind *out, const char **out_type, const struct pk_lab *lab,
			 const char *hex, GError **err)
{
	git_repository *repo = NULL;
	git_object *obj = NULL;
	enum pk_repo_id_kind kind = PK_REPO_ID_ABSENT;
	git_oid id;
	int rc = -1, found;

	if (strlen(hex) != PK_REPO_ID_HEX || strspn(hex, "0123456789abcdef") != PK_REPO_ID_HEX ||
	    git_oid_fromstr(&id, hex) < 0)
		return pk_error(err, PK_ERROR_INPUT, "'%s' is not a full commit id", hex);
	if (pk_repo_handle(&repo, lab, err) < 0)
		return -1;
	found = git_object_lookup(&obj, repo, &id, GIT_OBJECT_ANY);
	if (found < 0 && found != GIT_ENOTFOUND) {
		pk_git_fail(err, hex);
		goto cleanup;
	}
	if (found == 0 && git_object_type(obj) != GIT_OBJECT_COMMIT) {
		kind = PK_REPO_ID_NOT_COMMIT;
	} else if (found == 0) {
		int published = is_published_commit(repo, (git_commit *)obj, err);

		if (published < 0)
			goto cleanup;
		kind = published ? PK_REPO_ID_PUBLISHED : PK_REPO_ID_UNPUBLISHED;
	}
	*out = kind;
	if (out_type)
		*out_type = kind == PK_REPO_ID_NOT_COMMIT ? git_object_type2string(git_object_type(obj)) : NULL;
	rc = 0;
cleanup:
	git_object_free(obj);
	return rc;
}

GPtrArray *pk_repo_refs(const struct pk_lab *lab, const char *prefix)
{
	git_repository *repo = NULL;
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	g_autofree char *glob = g_strconcat(prefix, "*", NULL);
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	if (pk_repo_handle(&repo, lab, NULL) < 0)
		return out;
	if (git_reference_iterator_glob_new(&it, repo, glob) == 0)
		while (git_reference_next(&ref, it) == 0) {
			g_ptr_array_add(out, g_strdup(git_reference_name(ref) + strlen(prefix)));
			git_reference_free(ref);
		}
	git_reference_iterator_free(it);
	return out;
}

/* The branches the remote listed in its last connection, without refs/heads/. */
static GPtrArray *remote_heads(git_remote *remote)
{
	GPtrArray *heads = g_ptr_array_new_with_free_func(g_free);
	const git_remote_head **list = NULL;
	size_t n = 0;

	if (git_remote_ls(&list, &n, remote) < 0)
		return heads;
	for (size_t i = 0; i < n; i++)
		if (g_str_has_prefix(list[i]->name, "refs/heads/"))
			g_ptr_array_add(heads, g_strdup(list[i]->name + strlen("refs/heads/")));
	return heads;
}

int pk_repo_delete_ref(const struct pk_lab *lab, const char *name, GError **err)
{
	git_repository *repo = NULL;
	int rc;

	if (pk_repo_handle(&repo, lab, err) < 0)
		return -1;
	rc = git_reference_remove(repo, name);
	if (rc < 0 && rc != GIT_ENOTFOUND)
		pk_git_fail(err, "removing a ref");
	return rc < 0 && rc != GIT_ENOTFOUND ? -1 : 0;
}

int pk_repo_fetch(const struct pk_lab *lab, const char *url, const char *const *refspecs,
		  GPtrArray **out_heads, GError **err)
{
	git_repository *repo = NULL;
	git_remote *remote = NULL;
	git_fetch_options opts = GIT_FETCH_OPTIONS_INIT;
	git_strarray specs = { (char **)refspecs, g_strv_length((char **)refspecs) };
	g_autofree char *shown = pk_url_redact(url);
	g_autofree char *what = g_strdup_printf("fetching %s", shown);
	g_autoptr(GError) local = NULL;
	int rc = -1;

	if (pk_repo_handle(&repo, lab, err) < 0)
		return -1;
	/*
	 * The refspecs' refs alone, no tag: a followed tag is written under
	 * refs/tags/, the lab's own names (printkbot-base, printkbot-debian-*),
	 * so a pushed tag would become a base or stop setup's import of one.
	 */
	opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	if (git_remote_create_anonymous(&remote, repo, url) < 0 ||
	    git_remote_fetch(remote, &specs, &opts, NULL) < 0) {
		/* libgit2 may quote the URL it was given (a malformed one), a token and all */
		g_autofree char *msg = NULL;

		pk_git_fail(&local, what);
		msg = pk_url_scrub(local->message, url);
		pk_error(err, local->code, "%s", msg);
	} else {
		/* the list the remote gave as the fetch connected: still there after it */
		if (out_heads)
			*out_heads = remote_heads(remote);
		rc = 0;
	}
	git_remote_free(remote);
	return rc;
}
