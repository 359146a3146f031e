/*
 * repo.c - every git operation on the lab's repository, through libgit2;
 * see repo.h.
 */
#include "lab/repo.h"
#include "lab/repo-git.h"

#include <errno.h>
#include <string.h>

#include <git2/sys/repository.h>   /* git_repository_set_index() */
#include "base/proc.h"
#include "base/settings.h"
#include "base/util.h"

#define RUN_REF_PREFIX "refs/printkbot/run/"

/* The base commit's author and committer date: fixed, so its id is the same on every machine. */
#define BASE_TIME 1704067200   /* 2024-01-01T00:00:00Z */

/*
 * What a lab holds of its repository (lab.h's repo): the handle, opened
 * by the lab's first call, and the tree it was opened on.
 */
struct pk_repo_cache {
	git_repository *git;
	char *path;
};

struct pk_repo_cache *pk_repo_cache_new(void)
{
	return g_new0(struct pk_repo_cache, 1);
}

void pk_repo_cache_free(struct pk_repo_cache *cache)
{
	if (!cache)
		return;
	git_repository_free(cache->git);
	g_free(cache->path);
	g_free(cache);
}

void pk_repo_forget(const struct pk_lab *lab)
{
	if (!lab->repo)
		return;
	g_clear_pointer(&lab->repo->git, git_repository_free);
	g_clear_pointer(&lab->repo->path, g_free);
}

int pk_repo_handle(git_repository **out, const struct pk_lab *lab, GError **err)
{
	struct pk_repo_cache *cache = lab->repo;
	git_repository *repo = NULL;

	if (!cache)
		return pk_error(err, PK_ERROR_FAILED, "%s: the lab has no place for its repository (not made by "
				"pk_lab_open(), pk_lab_for_rev() or a derived config)", lab->tree);
	if (cache->git && !g_strcmp0(cache->path, lab->tree)) {
		*out = cache->git;
		return 0;
	}
	/* none yet, or one of a tree the lab no longer names (its fields are plain: a caller may change tree) */
	pk_repo_forget(lab);
	pk_git_init();
	if (git_repository_open(&repo, lab->tree) < 0)
		return pk_git_fail(err, lab->tree);
	cache->git = repo;
	cache->path = g_strdup(lab->tree);
	*out = repo;
	return 0;
}

int pk_repo_lookup(git_commit **out, git_repository *repo, const char *rev, GError **err)
{
	git_object *obj = NULL;
	int rc = 0;

	if (git_revparse_single(&obj, repo, rev) < 0)
		return pk_error(err, PK_ERROR_INPUT, "'%s' is not a revision of the kernel tree", rev);
	if (git_object_peel((git_object **)out, obj, GIT_OBJECT_COMMIT) < 0)
		rc = pk_error(err, PK_ERROR_INPUT, "'%s' does not name a commit", rev);
	git_object_free(obj);
	return rc;
}

/* ---------------------------------------------------------------- checkout */

/* Side of a tree walk: a tree, or none (everything under the other side is added or removed). */
static int tree_paths(GPtrArray *out, git_repository *repo, const git_tree *a, const git_tree *b,
		      const char *prefix);

/* The paths of entry e under prefix, both sides being it (one side may lack it: NULL). */
static int entry_paths(GPtrArray *out, git_repository *repo, const git_tree_entry *ea, const git_tree_entry *eb,
		       const char *prefix)
{
	const git_tree_entry *e = ea ? ea : eb;
	g_autofree char *path = g_strconcat(prefix, git_tree_entry_name(e), NULL);
	git_tree *ta = NULL, *tb = NULL;
	g_autofree char *sub = NULL;
	bool a_tree = ea && git_tree_entry_type(ea) == GIT_OBJECT_TREE;
	bool b_tree = eb && git_tree_entry_type(eb) == GIT_OBJECT_TREE;
	int rc = 0;

	if (ea && eb && git_oid_equal(git_tree_entry_id(ea), git_tree_entry_id(eb)) &&
	    git_tree_entry_filemode(ea) == git_tree_entry_filemode(eb))
		return 0;   /* the same subtree or file: nothing under it differs */
	if ((ea && !a_tree) || (eb && !b_tree))
		g_ptr_array_add(out, g_strdup(path));   /* a file on either side */
	if (!a_tree && !b_tree)
		return 0;
	sub = g_strconcat(path, "/", NULL);
	if ((a_tree && git_tree_lookup(&ta, repo, git_tree_entry_id(ea)) < 0) ||
	    (b_tree && git_tree_lookup(&tb, repo, git_tree_entry_id(eb)) < 0))
		rc = -1;
	else
		rc = tree_paths(out, repo, ta, tb, sub);
	git_tree_free(ta);
	git_tree_free(tb);
	return rc;
}

static int tree_paths(GPtrArray *out, git_repository *repo, const git_tree *a, const git_tree *b,
		      const char *prefix)
{
	size_t na = a ? git_tree_entrycount(a) : 0, nb = b ? git_tree_entrycount(b) : 0;

	for (size_t i = 0; i < na; i++) {
		const git_tree_entry *ea = git_tree_entry_byindex(a, i);
		const git_tree_entry *eb = b ? git_tree_entry_byname(b, git_tree_entry_name(ea)) : NULL;

		if (entry_paths(out, repo, ea, eb, prefix) < 0)
			return -1;
	}
	for (size_t j = 0; j < nb; j++) {
		const git_tree_entry *eb = git_tree_entry_byindex(b, j);

		if ((!a || !git_tree_entry_byname(a, git_tree_entry_name(eb))) &&
		    entry_paths(out, repo, NULL, eb, prefix) < 0)
			return -1;
	}
	return 0;
}

/*
 * The paths that differ between HEAD and target, walking only subtrees
 * whose ids differ (libgit2's tree-to-tree diff reads every tree of both:
 * 0.13 s on the lab's kernel tree even for two equal ones).  NULL when
 * HEAD cannot be read.
 */
static GPtrArray *paths_changed_from_head(git_repository *repo, git_commit *target)
{
	git_object *head = NULL;
	git_tree *from = NULL, *to = NULL;
	GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);

	if (git_revparse_single(&head, repo, "HEAD^{tree}") < 0 ||
	    git_tree_lookup(&from, repo, git_object_id(head)) < 0 ||
	    git_commit_tree(&to, target) < 0 ||
	    tree_paths(paths, repo, from, to, "") < 0)
		g_clear_pointer(&paths, g_ptr_array_unref);
	git_tree_free(to);
	git_tree_free(from);
	git_object_free(head);
	return paths;
}

int pk_repo_checkout_failed(git_repository *repo, GError **err)
{
	/*
	 * A checkout cut short may leave the handle's index changed in memory
	 * and never written, and the next checkout reads the index file again
	 * only when the file changed: the handle drops it, and reads the file
	 * as a handle opened anew would (libgit2 takes NULL for "none set").
	 */
	pk_git_fail(err, "checkout");
	git_repository_set_index(repo, NULL);
	return -1;
}

/* When HEAD cannot be read, the whole tree is checked out. */
int pk_repo_checkout_commit(git_repository *repo, git_commit *commit, GError **err)
{
	git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
	g_autoptr(GPtrArray) paths = paths_changed_from_head(repo, commit);

	opts.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (paths) {
		if (!paths->len)
			goto detach;
		opts.checkout_strategy |= GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
		opts.paths.strings = (char **)paths->pdata;
		opts.paths.count = paths->len;
	}
	if (git_checkout_tree(repo, (const git_object *)commit, &opts) < 0)
		return pk_repo_checkout_failed(repo, err);
detach:
	if (git_repository_set_head_detached(repo, git_commit_id(commit)) < 0)
		return pk_git_fail(err, "detaching HEAD");
	return 0;
}

int pk_repo_checkout(const struct pk_lab *lab, const char *rev, GError **err)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	int rc = -1;

	if (pk_repo_handle(&repo, lab, err) < 0)
		return -1;
	if (pk_repo_lookup(&commit, repo, rev, err) < 0)
		goto cleanup;
	rc = pk_repo_checkout_commit(repo, commit, err);
cleanup:
	git_commit_free(commit);
	return rc;
}

char *pk_repo_resolve(const struct pk_lab *lab, const char *rev, GError **err)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	char *id = NULL;

	if (pk_repo_handle(&repo, lab, err) < 0)
		return NULL;
	if (pk_repo_lookup(&commit, repo, rev, err) == 0)
		id = g_strdup(git_oid_tostr_s(git_commit_id(commit)));
	git_commit_free(commit);
	return id;
}

/* ---------------------------------------------------------------- files of a commit */

/* The blob at path in rev's tree; the caller frees it. */
static int lookup_blob(git_blob **out, git_repository *repo, const char *rev, const char *path,
		       GError **err)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	int rc = -1;

	if (pk_repo_lookup(&commit, repo, rev, err) < 0)
		return -1;
	if (git_commit_tree(&tree, commit) < 0) {
		pk_git_fail(err, rev);
		goto cleanup;
	}
	if (git_tree_entry_bypath(&entry, tree, path) < 0 || git_tree_entry_type(entry) != GIT_OBJECT_BLOB) {
		pk_error(err, PK_ERROR_FAILED, "%s: no file %s in %s", git_repository_workdir(repo), path, rev);
		goto cleanup;
	}
	if (git_blob_lookup(out, repo, git_tree_entry_id(entry)) < 0) {
		pk_git_fail(err, path);
		goto cleanup;
	}
	rc = 0;
cleanup:
	git_tree_entry_free(entry);
	git_tree_free(tree);
	git_commit_free(commit);
	return rc;
}

int pk_repo_read_file(char **out, size_t *out_len, const struct pk_lab *lab, const char *rev,
		      const char *path, GError **err)
{
	git_repository *repo = NULL;
	git_blob *blob = NULL;

	if (pk_repo_handle(&repo, lab, err) < 0 || lookup_blob(&blob, repo, rev, path, err) < 0)
		return -1;
	*out = g_strndup(git_blob_rawcontent(blob), git_blob_rawsize(blob));
	if (out_len)
		*out_len = git_blob_rawsize(blob);
	git_blob_free(blob);
	return 0;
}

/* "VERSION = 6" -> "6": the value of a top-level Makefile variable, or NULL. */
static char *makefile_var(const char *text, const char *name)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", 64);

	for (char **l = lines; *l; l++) {
		size_t n = strlen(name);
		const char *p = *l;

		if (strncmp(p, name, n))
			continue;
		p += n;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '=')
			continue;
		return g_strstrip(g_strdup(p + 1));
	}
	return NULL;
}

char *pk_repo_makefile_version(const char *makefile)
{
	g_autofree char *v = makefile_var(makefile, "VERSION");
	g_autofree char *p = makefile_var(makefile, "PATCHLEVEL");
	g_autofree char *s = makefile_var(makefile, "SUBLEVEL");
	g_autofree char *x = makefile_var(makefile, "EXTRAVERSION");
	bool sub = s && *s && strcmp(s, "0");

	if (!v || !p || !*v || !*p)
		return NULL;
	return g_strdup_printf("%s.%s%s%s%s", v, p, sub ? "." : "", sub ? s : "", x ? x : "");
}

char *pk_repo_makefile_series(const char *makefile)
{
	g_autofree char *v = makefile_var(makefile, "VERSION");
	g_autofree char *p = makefile_var(makefile, "PATCHLEVEL");

	return v && p && *v && *p ? g_strdup_printf("%s.%s", v, p) : NULL;
}

char *pk_repo_kernel_version(const struct pk_lab *lab, const char *rev, GError **err)
{
	g_autofree char *makefile = NULL;
	char *version;

	if (pk_repo_read_file(&makefile, NULL, lab, rev, "Makefile", err) < 0)
		return NULL;
	/* the variables are at its top: the rest of a 2,000-line Makefile is not read */
	if (strlen(makefile) > 4096)
		makefile[4096] = '\0';
	if (!(version = pk_repo_makefile_version(makefile)))
		pk_error(err, PK_ERROR_FAILED, "%s: the Makefile of %s states no version", lab->tree, rev);
	return version;
}

/* ---------------------------------------------------------------- setup's import */

/*
 * Add every file of the worktree to index.  Not git_index_add_all() with
 * GIT_INDEX_ADD_FORCE: libgit2 1.5 lists an ignored directory whole
 * ("Documentation/") rather than its files, and the tarball's .gitignore
 * ignores everything; a workdir diff that recurses into ignored
 * directories lists each file.
 */
static int add_every_file(git_repository *repo, git_index *index, GError **err)
{
	git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
	git_diff *diff = NULL;
	int rc = -1;

	opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
		     GIT_DIFF_INCLUDE_IGNORED | GIT_DIFF_RECURSE_IGNORED_DIRS | GIT_DIFF_SKIP_BINARY_CHECK;
	if (git_diff_index_to_workdir(&diff, repo, index, &opts) < 0)
		return pk_git_fail(err, "listing the tree's files");
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (git_index_add_bypath(index, d->new_file.path) < 0) {
			pk_git_fail(err, d->new_file.path);
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	git_diff_free(diff);
	return rc;
}

/* The repository, gc off (objects stay loose: the lab never runs gc), every file in its index. */
static int init_with_all_files(git_repository **out, git_index **out_index, const char *dir, GError **err)
{
	git_repository *repo = NULL;
	git_config *config = NULL;
	git_index *index = NULL;

	if (git_repository_init(&repo, dir, 0) < 0 || git_repository_config(&config, repo) < 0 ||
	    git_config_set_int32(config, "gc.auto", 0) < 0 || git_repository_index(&index, repo) < 0) {
		pk_git_fail(err, dir);
		goto fail;
	}
	if (add_every_file(repo, index, err) < 0)
		goto fail;
	if (git_index_write(index) < 0) {
		pk_git_fail(err, "writing the index");
		goto fail;
	}
	git_config_free(config);
	*out = repo;
	*out_index = index;
	return 0;
fail:
	git_index_free(index);
	git_config_free(config);
	git_repository_free(repo);
	return -1;
}

int pk_repo_import_tree(const struct pk_lab *lab, const char *message, GError **err)
{
	git_repository *repo = NULL;
	git_index *index = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_reference *tag = NULL;
	git_buf msg = { 0 };
	git_oid tree_id, id;
	int rc = -1;

	/* a repository made anew (setup removed a .git its import left cut short): not one held on the old */
	pk_repo_forget(lab);
	pk_git_init();
	if (init_with_all_files(&repo, &index, lab->tree, err) < 0)
		return -1;
	/* the message as `git commit -m` keeps it: whitespace cleaned up, a final newline */
	if (git_message_prettify(&msg, message, 0, 0) < 0 ||
	    git_index_write_tree(&tree_id, index) < 0 || git_tree_lookup(&tree, repo, &tree_id) < 0 ||
	    git_signature_new(&sig, "printkbot", "printkbot@localhost", BASE_TIME, 0) < 0 ||
	    git_commit_create(&id, repo, "HEAD", sig, sig, NULL, msg.ptr, tree, 0, NULL) < 0 ||
	    git_reference_create(&tag, repo, "refs/tags/" PK_LAB_BASE_TAG, &id, 1, NULL) < 0) {
		pk_git_fail(err, "committing the imported tree");
		goto cleanup;
	}
	rc = 0;
cleanup:
	git_reference_free(tag);
	git_signature_free(sig);
	git_tree_free(tree);
	git_buf_dispose(&msg);
	git_index_free(index);
	git_repository_free(repo);
	return rc;
}

/* The tree of every file under dir, written into repo's objects (dir need not be repo's worktree). */
static int write_dir_tree(git_oid *out, git_repository *repo, const char *dir, GError **err)
{
	git_index *index = NULL;
	int rc = -1;

	/* the repository sees dir as its worktree, with an index of its own, for this handle only */
	if (git_repository_set_workdir(repo, dir, 0) < 0 || git_index_new(&index) < 0 ||
	    git_repository_set_index(repo, index) < 0)
		return pk_git_fail(err, dir);
	if (add_every_file(repo, index, err) < 0)
		goto cleanup;
	if (git_index_write_tree_to(out, index, repo) < 0) {
		pk_git_fail(err, "writing the imported tree");
		goto cleanup;
	}
	rc = 0;
cleanup:
	git_index_free(index);
	return rc;
}

int pk_repo_import_dir(const struct pk_lab *lab, const char *dir, const char *message, const char *tag,
		       GError **err)
{
	git_repository *repo = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_reference *ref = NULL;
	git_buf msg = { 0 };
	g_autofree char *tag_ref = g_strconcat("refs/tags/", tag, NULL);
	git_oid tree_id, id;
	int rc = -1;

	/* a handle of its own, not the lab's (pk_repo_handle()): write_dir_tree() points it at dir */
	pk_git_init();
	if (git_repository_open(&repo, lab->tree) < 0)
		return pk_git_fail(err, lab->tree);
	if (write_dir_tree(&tree_id, repo, dir, err) < 0)
		goto cleanup;
	if (git_message_prettify(&msg, message, 0, 0) < 0 || git_tree_lookup(&tree, repo, &tree_id) < 0 ||
	    git_signature_new(&sig, "printkbot", "printkbot@localhost", BASE_TIME, 0) < 0 ||
	    git_commit_create(&id, repo, NULL, sig, sig, NULL, msg.ptr, tree, 0, NULL) < 0 ||
	    git_reference_create(&ref, repo, tag_ref, &id, 1, NULL) < 0) {
		pk_git_fail(err, "committing the imported tree");
		goto cleanup;
	}
	rc = 0;
cleanup:
	git_reference_free(ref);
	git_signature_free(sig);
	git_tree_free(tree);
	git_buf_dispose(&msg);
	git_repository_free(repo);
	return rc;
}

int pk_repo_tag(const struct pk_lab *lab, const char *tag, const char *rev, GError **err)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	git_reference *ref = NULL;
	g_autofree char *name = g_strconcat("refs/tags/", tag, NULL);
	int rc = -1;

	if (pk_repo_handle(&repo, lab, err) < 0)
		return -1;
	if (pk_repo_lookup(&commit, repo, rev, err) == 0) {
		if (git_reference_create(&ref, repo, name, git_commit_id(commit), 1, NULL) < 0)
			pk_git_fail(err, name);
		else
			rc = 0;
	}
	git_reference_free(ref);
	git_commit_free(commit);
	return rc;
}

/* ---------------------------------------------------------------- comparing trees */

/*
 * The paths where trees a and b (either may be NULL) differ, appended to
 * out: files, and directories that only one side has.  Subtrees with the
 * same id are skipped, so two commits of a kernel that differ in a few
 * files cost a few tree reads, where libgit2's tree-to-tree diff (1.5)
 * walks all 80,000 entries of both (0.3 to 0.6 s each time).
 */
static int tree_changes(GPtrArray *out, git_repository *repo, git_tree *a, git_tree *b,
			const char *prefix, GError **err)
{
	git_tree *sides[2] = { a, b };

	for (int side = 0; side < 2; side++) {
		git_tree *t = sides[side], *other = sides[!side];

		for (size_t i = 0; t && i < git_tree_entrycount(t); i++) {
			const git_tree_entry *e = git_tree_entry_byindex(t, i);
			const git_tree_entry *o = other ? git_tree_entry_byname(other, git_tree_entry_name(e)) : NULL;
			g_autofree char *path = g_strconcat(prefix, git_tree_entry_name(e), NULL);

			if (side == 1 && o)
				continue;   /* seen from a's side */
			if (o && git_oid_equal(git_tree_entry_id(e), git_tree_entry_id(o)) &&
			    git_tree_entry_filemode(e) == git_tree_entry_filemode(o))
				continue;
			if (o && git_tree_entry_type(e) == GIT_OBJECT_TREE && git_tree_entry_type(o) == GIT_OBJECT_TREE) {
				git_tree *ta = NULL, *tb = NULL;
				g_autofree char *sub = g_strconcat(path, "/", NULL);
				int rc = git_tree_lookup(&ta, repo, git_tree_entry_id(side ? o : e)) < 0 ||
					 git_tree_lookup(&tb, repo, git_tree_entry_id(side ? e : o)) < 0
					 ? pk_git_fail(err, "reading a tree") : tree_changes(out, repo, ta, tb, sub, err);

				git_tree_free(ta);
				git_tree_free(tb);
				if (rc < 0)
					return -1;
				continue;
			}
			g_ptr_array_add(out, g_steal_pointer(&path));
		}
	}
	return 0;
}

/* Whether path names a directory in tree. */
static bool is_dir_in(git_tree *tree, const char *path)
{
	git_tree_entry *e = NULL;
	bool dir = git_tree_entry_bypath(&e, tree, path) == 0 && git_tree_entry_type(e) == GIT_OBJECT_TREE;

	git_tree_entry_free(e);
	return dir;
}

int pk_repo_changed_paths(GPtrArray **out, const struct pk_lab *lab, const char *from, const char *to,
			  GError **err)
{
	git_repository *repo = NULL;
	git_commit *a = NULL, *b = NULL;
	git_tree *ta = NULL, *tb = NULL;
	g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
	int rc = -1;

	if (pk_repo_handle(&repo, lab, err) < 0)
		return -1;
	if (pk_repo_lookup(&a, repo, from, err) < 0 || pk_repo_lookup(&b, repo, to, err) < 0)
		goto cleanup;
	if (git_commit_tree(&ta, a) < 0 || git_commit_tree(&tb, b) < 0) {
		pk_git_fail(err, "reading the commits' trees");
		goto cleanup;
	}
	if (tree_changes(paths, repo, ta, tb, "", err) < 0)
		goto cleanup;
	for (guint i = 0; i < paths->len; i++) {
		char *p = paths->pdata[i];

		if (is_dir_in(ta, p) || is_dir_in(tb, p)) {
			paths->pdata[i] = g_strconcat(p, "/", NULL);
			g_free(p);
		}
	}
	*out = g_steal_pointer(&paths);
	rc = 0;
cleanup:
	git_tree_free(tb);
	git_tree_free(ta);
	git_commit_free(b);
	git_commit_free(a);
	return rc;
}

/* ---------------------------------------------------------------- a commit as a patch */

static char *rfc2822_date(const git_time *when)
{
	g_autoptr(GTimeZone) tz = g_time_zone_new_offset(when->offset * 60);
	g_autoptr(GDateTime) utc = g_date_time_new_from_unix_utc(when->time);
	g_autoptr(GDateTime) local = utc ? g_date_time_to_timezone(utc, tz) : NULL;

	/* spelt here: g_date_time_format()'s %a and %b follow the locale, a Date: header does not */
	static const char *const days[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	int off = when->offset;

	if (!local)
		return NULL;
	return g_strdup_printf("%s, %d %s %d %02d:%02d:%02d %c%02d%02d",
			       days[g_date_time_get_day_of_week(local) - 1], g_date_time_get_day_of_month(local),
			       months[g_date_time_get_month(local) - 1], g_date_time_get_year(local),
			       g_date_time_get_hour(local), g_date_time_get_minute(local),
			       g_date_time_get_second(local), off < 0 ? '-' : '+', ABS(off) / 60, ABS(off) % 60);
}

/*
 * The size of one side of a delta, read from the object's header (a
 * packed delta's header has it): 0 for a side that does not exist or is
 * no blob (a submodule's commit).
 */
static guint64 side_size(git_odb *odb, const git_diff_file *f)
{
	size_t len = 0;
	git_object_t type;

	if (!(f->flags & GIT_DIFF_FLAG_EXISTS) || git_oid_is_zero(&f->id) ||
	    git_odb_read_header(&len, &type, odb, &f->id) < 0 || type != GIT_OBJECT_BLOB)
		return 0;
	return len;
}

/*
 * Why diff, not yet read, is more than policy lets a diff cost: the
 * files it touches, each at the larger of its two sides, add up to more
 * than max_mail_mb, as a mail carrying them whole would.  Its diff would
 * read them all (renames found, the text made, the patch-id), and hold
 * both sides of a file in memory at once.  Only the blobs' headers are
 * read here.  NULL when within it.
 */
static char *blobs_over_limit(git_repository *repo, git_diff *diff, const struct pk_policy *policy)
{
	git_odb *odb = NULL;
	guint64 total = 0, largest = 0;
	const char *largest_path = NULL;

	if (!policy || !policy->max_mail_size || git_repository_odb(&odb, repo) < 0)
		return NULL;
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		guint64 size = MAX(side_size(odb, &d->old_file), side_size(odb, &d->new_file));

		total += size;
		if (size > largest) {
			largest = size;
			largest_path = d->new_file.path ? d->new_file.path : d->old_file.path;
		}
	}
	git_odb_free(odb);
	if (total <= policy->max_mail_size)
		return NULL;
	return g_strdup_printf("the files the commit touches add up to %" G_GUINT64_FORMAT " bytes (%s alone %"
			       G_GUINT64_FORMAT "), more than the limit of %zu bytes of a diff ([policy] "
			       "max_mail_mb): its diff is not read", total, largest_path, largest,
			       policy->max_mail_size);
}

/*
 * The diff of commit against parent, renames found, into *out (git_diff_free()),
 * or NULL when their trees are the same.  When a file of it is larger than
 * policy (NULL: no limit) lets a diff read, *out_over says so and the diff
 * is returned with renames not looked for (which reads the files).
 */
static int commit_diff(git_diff **out, char **out_over, git_repository *repo, git_commit *commit,
		       git_commit *parent, const struct pk_policy *policy, GError **err)
{
	git_diff_options dopts = GIT_DIFF_OPTIONS_INIT;
	git_diff_find_options fopts = GIT_DIFF_FIND_OPTIONS_INIT;
	git_tree *old_tree = NULL, *new_tree = NULL;
	git_diff *diff = NULL;
	int rc = -1;

	g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);

	fopts.flags = GIT_DIFF_FIND_RENAMES;
	if (git_commit_tree(&old_tree, parent) < 0 || git_commit_tree(&new_tree, commit) < 0) {
		pk_git_fail(err, "reading the commit's trees");
		goto cleanup;
	}
	/* only the paths that changed: the diff then reads nothing else */
	if (tree_changes(paths, repo, old_tree, new_tree, "", err) < 0)
		goto cleanup;
	if (paths->len) {
		dopts.pathspec.strings = (char **)paths->pdata;
		dopts.pathspec.count = paths->len;
		dopts.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
		if (git_diff_tree_to_tree(&diff, repo, old_tree, new_tree, &dopts) < 0) {
			pk_git_fail(err, "diffing the commit against its parent");
			goto cleanup;
		}
		/* before anything reads a file: finding renames reads them */
		if (!(*out_over = blobs_over_limit(repo, diff, policy)) && git_diff_find_similar(diff, &fopts) < 0) {
			pk_git_fail(err, "diffing the commit against its parent");
			goto cleanup;
		}
	}
	*out = g_steal_pointer(&diff);
	rc = 0;
cleanup:
	git_diff_free(diff);
	git_tree_free(new_tree);
	git_tree_free(old_tree);
	return rc;
}

/* The text of a diff as it is printed, held to limits (diff_text()). */
struct diff_printer {
	GString *text;
	const struct pk_policy *policy;   /* NULL: no limits */
	guint64 lines;                    /* hunk lines so far, as patch.h counts them */
	char *over;                       /* the limit gone over, once */
	bool canceled;                    /* a stop was asked for */
};

/*
 * One line of the diff's text, as git_diff_to_buf() writes it (the
 * origin first for a line of a hunk).  Non-zero ends the printing: a
 * limit gone over, or a stop asked for, seen line by line, so that one
 * huge file is not printed whole first.
 */
static int print_line(const git_diff_delta *delta, const git_diff_hunk *hunk, const git_diff_line *line,
		      void *payload)
{
	struct diff_printer *p = payload;
	const struct pk_policy *policy = p->policy;
	bool counted = line->origin == GIT_DIFF_LINE_ADDITION || line->origin == GIT_DIFF_LINE_DELETION ||
		       line->origin == GIT_DIFF_LINE_CONTEXT;

	if ((p->canceled = pk_proc_canceled()))
		return 1;
	p->lines += counted;
	if (policy && policy->max_mail_size && p->text->len + line->content_len + 1 > policy->max_mail_size) {
		p->over = g_strdup_printf("the diff is more than the limit of %zu bytes ([policy] max_mail_mb): "
					  "it is not read past that", policy->max_mail_size);
		return 1;
	}
	if (policy && policy->max_lines && p->lines > policy->max_lines) {
		p->over = g_strdup_printf("the diff has more than %u lines, the limit ([policy] max_lines): "
					  "it is not read past that", policy->max_lines);
		return 1;
	}
	if (counted)
		g_string_append_c(p->text, line->origin);
	g_string_append_len(p->text, line->content, (gssize)line->content_len);
	return 0;
}

/*
 * The text of diff, held to policy's limits (NULL: none): over one,
 * *out_over says which and no text is returned.  A stop asked for
 * (base/proc.h) ends it, as an error.
 */
static int diff_text(char **out, char **out_over, git_diff *diff, const struct pk_policy *policy, GError **err)
{
	struct diff_printer p = { g_string_new(NULL), policy, 0, NULL, false };
	size_t n = git_diff_num_deltas(diff);
	int rc;

	if (policy && policy->max_files && n > policy->max_files) {
		*out_over = g_strdup_printf("the commit touches %zu files, more than the limit of %u "
					    "([policy] max_files)", n, policy->max_files);
		g_string_free(p.text, TRUE);
		return 0;
	}
	/* print_line()'s non-zero comes back as it is: why is in p */
	rc = git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, print_line, &p);
	if (p.canceled)
		rc = pk_error(err, PK_ERROR_FAILED, "the diff was stopped by a signal");
	else if (p.over)
		*out_over = g_steal_pointer(&p.over);
	else if (rc < 0)
		pk_git_fail(err, "diffing the commit against its parent");
	else
		*out = g_string_free(g_steal_pointer(&p.text), FALSE);
	if (p.text)
		g_string_free(p.text, TRUE);
	return rc < 0 ? -1 : 0;
}

/* The files of diff, paths only, into patch (a diff not read: pk_patch's over_limit). */
static void take_diff_paths(struct pk_patch *patch, git_diff *diff)
{
	for (size_t i = 0; diff && i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		struct pk_diff_file *f = g_new0(struct pk_diff_file, 1);

		f->old_path = d->status == GIT_DELTA_ADDED ? NULL : g_strdup(d->old_file.path);
		f->new_path = d->status == GIT_DELTA_DELETED ? NULL : g_strdup(d->new_file.path);
		f->hunks = g_ptr_array_new();
		g_ptr_array_add(patch->files, f);
	}
}

/*
 * The diff of commit against parent as a patch, held to policy's limits
 * (NULL: none): over one, the patch names its files only and says why
 * (over_limit).
 */
static struct pk_patch *commit_diff_patch(git_repository *repo, git_commit *commit, git_commit *parent,
					  const struct pk_policy *policy, GError **err)
{
	git_diff *diff = NULL;
	g_autofree char *text = NULL;
	char *over = NULL;
	struct pk_patch *patch = NULL;

	if (commit_diff(&diff, &over, repo, commit, parent, policy, err) < 0)
		return NULL;
	if (!diff)
		text = g_strdup("");
	else if (!over && diff_text(&text, &over, diff, policy, err) < 0)
		goto cleanup;
	if (over) {
		patch = pk_patch_parse_diff("", 0);   /* its diff "", its files those of the commit */
		patch->over_limit = over;
		take_diff_paths(patch, diff);
	} else {
		patch = pk_patch_parse_diff(text, strlen(text));
	}
cleanup:
	git_diff_free(diff);
	return patch;
}

/* The commit's author, date, subject and message into patch. */
static void take_commit_header(struct pk_patch *patch, git_commit *c)
{
	const git_signature *a = git_commit_author(c);
	const char *body = git_commit_body(c);

	patch->subject = g_strdup(git_commit_summary(c) ? git_commit_summary(c) : "");
	patch->author_name = g_strdup(a->name);
	patch->author_email = g_strdup(a->email);
	patch->author = g_strdup_printf("%s <%s>", a->name, a->email);
	patch->time = a->when.time;
	patch->tz_minutes = a->when.offset;
	patch->date = rfc2822_date(&a->when);
	patch->description = body ? g_strdup(body) : NULL;
}

/* The lab's repository, with an empty index for a diff (see pk_repo_commit_patch()); diff_done() after. */
static int handle_for_diff(git_repository **repo, const struct pk_lab *lab, GError **err)
{
	git_index *empty = NULL;

	if (pk_repo_handle(repo, lab, err) < 0)
		return -1;
	/*
	 * The diff looks up .gitattributes (the kernel's "*.c diff=cpp" makes
	 * the hunk headers name functions), in the worktree and in the index;
	 * the lab's index of 87,000 entries costs 0.1 s to read for nothing,
	 * so the repository gets an empty one for this diff.
	 */
	if (git_index_new(&empty) == 0)
		git_repository_set_index(*repo, empty);
	git_index_free(empty);
	return 0;
}

/*
 * The lab holds the handle: left with the empty index, its next checkout
 * would take that for the worktree's.  Dropped rather than put back (the
 * lab's was not read): the next use reads the index file, as a handle
 * opened anew would.
 */
static void diff_done(git_repository *repo)
{
	git_repository_set_index(repo, NULL);
}

struct pk_patch *pk_repo_commit_patch(const struct pk_lab *lab, const char *commit, const struct pk_policy *policy,
				      char **out_parent, GError **err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL, *parent = NULL;
	struct pk_patch *patch = NULL;

	if (handle_for_diff(&repo, lab, err) < 0)
		return NULL;
	if (pk_repo_lookup(&c, repo, commit, err) < 0)
		goto cleanup;
	if (!git_commit_parentcount(c)) {
		pk_error(err, PK_ERROR_INPUT, "%.12s is a root commit: it has no parent to compare with", commit);
		goto cleanup;
	}
	if (git_commit_parent(&parent, c, 0) < 0) {
		pk_git_fail(err, "reading the commit's parent");
		goto cleanup;
	}
	if (!(patch = commit_diff_patch(repo, c, parent, policy, err)))
		goto cleanup;
	take_commit_header(patch, c);
	*out_parent = g_strdup(git_oid_tostr_s(git_commit_id(parent)));
cleanup:
	git_commit_free(parent);
	git_commit_free(c);
	diff_done(repo);
	return patch;
}

int pk_repo_patch_key(char **out, const struct pk_lab *lab, const char *commit, const struct pk_policy *policy,
		      GError **err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL, *parent = NULL;
	git_diff *diff = NULL;
	g_autofree char *over = NULL;
	git_oid id;
	char hex[GIT_OID_HEXSZ + 1] = "";
	int rc = -1;

	if (handle_for_diff(&repo, lab, err) < 0)
		return -1;
	if (pk_repo_lookup(&c, repo, commit, err) < 0)
		goto cleanup;
	if (!git_commit_parentcount(c)) {
		pk_error(err, PK_ERROR_INPUT, "%.12s is a root commit: it has no parent to compare with", commit);
		goto cleanup;
	}
	if (git_commit_parent(&parent, c, 0) < 0) {
		pk_git_fail(err, "reading the commit's parent");
		goto cleanup;
	}
	if (commit_diff(&diff, &over, repo, c, parent, policy, err) < 0)
		goto cleanup;
	if (over || (policy && policy->max_files && diff && git_diff_num_deltas(diff) > policy->max_files)) {
		/* the patch-id reads every file: none for a commit over the limits */
		*out = NULL;
		rc = 0;
		goto cleanup;
	}
	/* an empty commit has the patch-id of nothing: all zeros */
	memset(&id, 0, sizeof id);
	if (diff && git_diff_patchid(&id, diff, NULL) < 0) {
		pk_git_fail(err, "the commit's patch-id");
		goto cleanup;
	}
	git_oid_tostr(hex, sizeof hex, &id);
	*out = g_strdup_printf("%s %s", hex, git_oid_tostr_s(git_commit_tree_id(parent)));
	rc = 0;
cleanup:
	git_diff_free(diff);
	git_commit_free(parent);
	git_commit_free(c);
	diff_done(repo);
	return rc;
}

int pk_repo_is_ancestor(const struct pk_lab *lab, const char *ancestor, const char *rev, GError **err)
{
	git_repository *repo = NULL;
	git_commit *a = NULL, *r = NULL;
	int rc = -1;

	if (pk_repo_handle(&repo, lab, err) < 0)
		return -1;
	if (pk_repo_lookup(&a, repo, ancestor, err) < 0 || pk_repo_lookup(&r, repo, rev, err) < 0)
		goto cleanup;
	if (git_oid_equal(git_commit_id(a), git_commit_id(r))) {
		rc = 1;
		goto cleanup;
	}
	rc = git_graph_descendant_of(repo, git_commit_id(r), git_commit_id(a));
	if (rc < 0)
		pk_git_fail(err, "walking the history");
cleanup:
	git_commit_free(r);
	git_commit_free(a);
	return rc < 0 ? -1 : rc;
}

struct pk_patch *pk_repo_diff_patch(const struct pk_lab *lab, const char *from, const char *to,
				    const struct pk_policy *policy, GError **err)
{
	git_repository *repo = NULL;
	git_commit *a = NULL, *b = NULL;
	struct pk_patch *patch = NULL;

	if (handle_for_diff(&repo, lab, err) < 0)
		return NULL;
	if (pk_repo_lookup(&a, repo, from, err) == 0 && pk_repo_lookup(&b, repo, to, err) == 0)
		patch = commit_diff_patch(repo, b, a, policy, err);
	git_commit_free(b);
	git_commit_free(a);
	diff_done(repo);
	return patch;
}

/* ---------------------------------------------------------------- importing commits */

/*
 * Why objects are copied through the object databases rather than
 * fetched: libgit2 (1.5, Debian 12's) fetches refs, not object ids, and a
 * range like HEAD~3..1a2b3c names commits no ref of the user's points at;
 * making a ref there would touch the user's repository.  Copying reads
 * only what the lab lacks (a tree the lab has is skipped whole, its
 * children being written before it), so a branch on a base the lab knows
 * costs a few objects, and an unknown base costs one pass over its tree.
 * Objects are written loose: the lab repository never runs gc.
 */
struct copier {
	git_repository *src;
	git_odb *from, *to;
	unsigned copied;
};

static int copy_object(struct copier *c, const git_oid *id, GError **err)
{
	git_odb_object *obj = NULL;
	git_oid written;
	int rc = 0;

	if (git_odb_exists(c->to, id))
		return 0;
	if (git_odb_read(&obj, c->from, id) < 0)
		return pk_git_fail(err, "reading an object of the user's repository");
	if (git_odb_write(&written, c->to, git_odb_object_data(obj), git_odb_object_size(obj),
			  git_odb_object_type(obj)) < 0)
		rc = pk_git_fail(err, "writing an object into the lab's repository");
	else
		c->copied++;
	git_odb_object_free(obj);
	return rc;
}

/* Copy a tree and everything under it that the lab lacks, children first. */
static int copy_tree(struct copier *c, const git_oid *tree_id, GError **err)
{
	git_tree *tree = NULL;
	int rc = -1;

	if (git_odb_exists(c->to, tree_id))
		return 0;
	if (git_tree_lookup(&tree, c->src, tree_id) < 0)
		return pk_git_fail(err, "reading a tree of the user's repository");
	for (size_t i = 0; i < git_tree_entrycount(tree); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tree, i);
		git_object_t type = git_tree_entry_type(e);

		if (type == GIT_OBJECT_TREE ? copy_tree(c, git_tree_entry_id(e), err) < 0
		    : type == GIT_OBJECT_BLOB ? copy_object(c, git_tree_entry_id(e), err) < 0
		    : 0)  /* a submodule's commit is not ours to copy */
			goto cleanup;
	}
	rc = copy_object(c, tree_id, err);
cleanup:
	git_tree_free(tree);
	return rc;
}

/* Copy commit id (its tree first); 1 when a parent of it is not in the lab, else 0. */
static int copy_commit(struct copier *c, const char *hex, GError **err)
{
	git_commit *commit = NULL;
	git_oid id;
	int rc = -1;

	if (git_oid_fromstr(&id, hex) < 0 || git_commit_lookup(&commit, c->src, &id) < 0)
		return pk_git_fail(err, hex);
	if (copy_tree(c, git_commit_tree_id(commit), err) < 0 || copy_object(c, &id, err) < 0)
		goto cleanup;
	rc = 0;
	for (unsigned p = 0; p < git_commit_parentcount(commit); p++)
		if (!git_odb_exists(c->to, git_commit_parent_id(commit, p)))
			rc = 1;
cleanup:
	git_commit_free(commit);
	return rc;
}

/*
 * List commits (hex) in the lab's .git/shallow, keeping what is there:
 * written by hand, libgit2 (1.5) only reads that file.
 */
static int mark_shallow(git_repository *lab, GPtrArray *commits, GError **err)
{
	g_autofree char *path = g_build_filename(git_repository_path(lab), "shallow", NULL);
	g_autofree char *old = NULL;
	g_autoptr(GString) text = g_string_new(NULL);

	if (!commits->len)
		return 0;
	if (g_file_test(path, G_FILE_TEST_EXISTS) && pk_read_file(&old, NULL, path, 16 << 20, err) < 0)
		return -1;
	g_string_append(text, old ? old : "");
	for (guint i = 0; i < commits->len; i++) {
		g_autofree char *line = g_strconcat(commits->pdata[i], "\n", NULL);
		if (!strstr(text->str, line))
			g_string_append(text, line);
	}
	return pk_write_file(path, text->str, text->len, err);
}

static int keep_ref(git_repository *lab, const char *hex, GError **err)
{
	g_autofree char *name = g_strconcat(RUN_REF_PREFIX, hex, NULL);
	git_reference *ref = NULL;
	git_oid id;

	if (git_oid_fromstr(&id, hex) < 0 ||
	    git_reference_create(&ref, lab, name, &id, 1, "printkbot: a range under test") < 0)
		return pk_git_fail(err, name);
	git_reference_free(ref);
	return 0;
}

/* Copy the commits; those whose parents the lab lacks afterwards are added to shallow. */
static int copy_commits(struct copier *c, const char *const *commits, GPtrArray *shallow, GError **err)
{
	guint n = g_strv_length((char **)commits);

	for (guint i = 0; i < n; i++) {
		int missing = copy_commit(c, commits[i], err);

		if (missing < 0)
			return -1;
		if (missing)
			g_ptr_array_add(shallow, (char *)commits[i]);
		if (c->copied && pk_progress_enabled())
			pk_progress("copying the range into the lab: commit %u of %u, %u objects",
				    i + 1, n, c->copied);
	}
	return 0;
}

int pk_repo_import_commits(unsigned *out_copied, const struct pk_lab *lab, const char *src_dir,
			   const char *const *commits, const char *const *keep, GError **err)
{
	struct copier c = { 0 };
	git_repository *lab_repo = NULL;
	g_autoptr(GPtrArray) shallow = g_ptr_array_new();
	int rc = -1;

	pk_git_init();
	if (git_repository_open_ext(&c.src, src_dir, 0, NULL) < 0)
		return pk_git_fail(err, src_dir);
	if (pk_repo_handle(&lab_repo, lab, err) < 0)
		goto cleanup;
	if (git_repository_odb(&c.from, c.src) < 0 || git_repository_odb(&c.to, lab_repo) < 0) {
		pk_git_fail(err, "opening the object databases");
		goto cleanup;
	}
	if (copy_commits(&c, commits, shallow, err) < 0)
		goto cleanup;
	for (const char *const *k = keep; k && *k; k++)
		if (keep_ref(lab_repo, *k, err) < 0)
			goto cleanup;
	if (mark_shallow(lab_repo, shallow, err) < 0)
		goto cleanup;
	if (out_copied)
		*out_copied = c.copied;
	rc = 0;
cleanup:
	if (c.copied)
		pk_progress("%s", "");
	git_odb_free(c.from);
	git_odb_free(c.to);
	git_repository_free(c.src);
	return rc;
}

int pk_repo_worktree(const struct pk_lab *lab, const char *path, const char *rev, GError **err)
{
	g_autofree char *partial = g_strconcat(path, ".partial", NULL);
	g_autofree char *dotgit = g_build_filename(path, ".git", NULL);
	const char *prune[] = { "git", "-C", lab->tree, "worktree", "prune", NULL };
	const char *add[] = { "git", "-C", lab->tree, "worktree", "add", "--detach", "--quiet", partial, rev, NULL };
	const char *move[] = { "git", "-C", lab->tree, "worktree", "move", partial, path, NULL };
	g_autofree char *parent = g_path_get_dirname(path);

	/*
	 * git writes .git/worktrees/ and the new tree: nothing of what a lab's
	 * held handle keeps (pk_repo_handle()); the new tree's lab opens its own.
	 */
	if (g_file_test(dotgit, G_FILE_TEST_EXISTS))
		return 0;
	/* what an add cut short left: its files, and its registration once they are gone */
	if (pk_remove_tree(partial, err) < 0 || pk_proc_step("git worktree prune", prune, NULL, NULL, err) < 0)
		return -1;
	if (g_mkdir_with_parents(parent, 0755) < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", parent, g_strerror(errno));
	if (pk_proc_step("git worktree add", add, NULL, NULL, err) < 0 ||
	    pk_proc_step("git worktree move", move, NULL, NULL, err) < 0)
		return -1;
	return 0;
}
