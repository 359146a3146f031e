/*
 * range.c - a range of the user's commits, read with libgit2, and its
 * import into the lab's repository through lab/repo.h; see range.h.
 */
#include "intake/range.h"

#include <string.h>

#include "base/gitutil.h"
#include "lab/repo.h"
#include "base/util.h"

static void commit_free(gpointer p)
{
	struct pk_range_commit *c = p;

	g_free(c->id);
	g_free(c->parent);
	g_free(c->subject);
	g_free(c->author);
	g_free(c->committer);
	g_free(c);
}

void pk_range_free(struct pk_range *range)
{
	if (!range)
		return;
	g_free(range->repo);
	g_free(range->spec);
	g_free(range->base);
	g_free(range->tip);
	if (range->commits)
		g_ptr_array_unref(range->commits);
	g_free(range);
}

const struct pk_range_commit *pk_range_find(const struct pk_range *range, const char *id)
{
	for (guint i = 0; i < range->commits->len; i++) {
		const struct pk_range_commit *c = range->commits->pdata[i];
		if (!strcmp(c->id, id))
			return c;
	}
	return NULL;
}

/* The path a repository is named by in messages: its worktree, else its git dir. */
static char *repo_name(git_repository *repo)
{
	const char *p = git_repository_workdir(repo) ? git_repository_workdir(repo) : git_repository_path(repo);
	char *s = g_strdup(p);
	size_t n = strlen(s);

	if (n > 1 && s[n - 1] == '/')
		s[n - 1] = '\0';
	return s;
}

static int open_user_repo(git_repository **out, const char *dir, GError **err)
{
	g_autofree char *abs = g_canonicalize_filename(dir ? dir : ".", NULL);

	pk_git_init();
	if (git_repository_open_ext(out, abs, 0, NULL) < 0)
		return pk_error(err, PK_ERROR_INPUT, "%s: not a git repository (nor any parent directory)%s",
				abs, dir ? "" : "; name one with --repo DIR");
	return 0;
}

/* rev as a commit of repo, or an error naming rev and the repository. */
static int lookup_rev(git_commit **out, git_repository *repo, const char *rev, GError **err)
{
	g_autofree char *name = repo_name(repo);
	git_object *obj = NULL;
	int rc = 0;

	if (git_revparse_single(&obj, repo, rev) < 0)
		return pk_error(err, PK_ERROR_INPUT, "'%s' is not a revision in %s", rev, name);
	if (git_object_peel((git_object **)out, obj, GIT_OBJECT_COMMIT) < 0)
		rc = pk_error(err, PK_ERROR_INPUT, "'%s' does not name a commit in %s", rev, name);
	git_object_free(obj);
	return rc;
}

/* What the words of a range ask for: one tip and the commits to leave out. */
struct range_words {
	char *tip;           /* the revision as spelt */
	GPtrArray *hide;     /* char*: revisions whose history is left out */
	GPtrArray *hide_parents_of;  /* char*: B of "B^!" */
};

static void range_words_clear(struct range_words *w)
{
	g_free(w->tip);
	g_ptr_array_unref(w->hide);
	g_ptr_array_unref(w->hide_parents_of);
}

static int add_tip(struct range_words *w, const char *rev, const char *spec, GError **err)
{
	if (w->tip && strcmp(w->tip, rev))
		return pk_error(err, PK_ERROR_INPUT, "'%s': more than one tip (%s and %s); a range is "
				"reviewed along one line of history", spec, w->tip, rev);
	g_free(w->tip);
	w->tip = g_strdup(rev);
	return 0;
}

/* Sort the words of a range spec into the tip and what to hide. */
static int parse_words(struct range_words *w, const char *const *spec, const char *joined, GError **err)
{
	w->hide = g_ptr_array_new_with_free_func(g_free);
	w->hide_parents_of = g_ptr_array_new_with_free_func(g_free);
	for (const char *const *s = spec; *s; s++) {
		g_auto(GStrv) words = g_strsplit_set(*s, " \t\n", -1);

		for (char **word = words; *word; word++) {
			const char *x = *word, *dots = strstr(x, "..");
			size_t n = strlen(x);

			if (!*x)
				continue;
			if (strstr(x, "...")) {
				return pk_error(err, PK_ERROR_INPUT, "'%s': a symmetric difference (A...B) is not a "
						"line of history; use A..B", x);
			} else if (dots) {
				g_autofree char *left = g_strndup(x, dots - x);
				const char *right = dots + 2;

				if (strstr(right, ".."))
					return pk_error(err, PK_ERROR_INPUT, "'%s' is not a range", x);
				g_ptr_array_add(w->hide, g_strdup(*left ? left : "HEAD"));
				if (add_tip(w, *right ? right : "HEAD", joined, err) < 0)
					return -1;
			} else if (x[0] == '^') {
				if (!x[1])
					return pk_error(err, PK_ERROR_INPUT, "'^' names no revision");
				g_ptr_array_add(w->hide, g_strdup(x + 1));
			} else if (n > 2 && !strcmp(x + n - 2, "^!")) {
				g_autofree char *rev = g_strndup(x, n - 2);

				g_ptr_array_add(w->hide_parents_of, g_strdup(rev));
				if (add_tip(w, rev, joined, err) < 0)
					return -1;
			} else if (add_tip(w, x, joined, err) < 0) {
				return -1;
			}
		}
	}
	if (!w->tip)
		return pk_error(err, PK_ERROR_INPUT, "'%s': no tip: name the branch or commit to review", joined);
	return 0;
}

static int hide_commit(git_revwalk *walk, git_commit *c)
{
	return git_revwalk_hide(walk, git_commit_id(c));
}

/* Hide the default base of a one-revision range: the first one repo has. */
static int hide_default_base(git_revwalk *walk, git_repository *repo, const char *joined,
			     const struct pk_range_opts *opts, GError **err)
{
	g_autofree char *name = repo_name(repo);
	g_autoptr(GString) tried = g_string_new(NULL);

	for (const char *const *b = opts->default_bases; b && *b; b++) {
		git_object *obj = NULL, *commit = NULL;
		int rc = -1;

		if (git_revparse_single(&obj, repo, *b) == 0 &&
		    git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) == 0)
			rc = git_revwalk_hide(walk, git_object_id(commit));
		git_object_free(commit);
		git_object_free(obj);
		if (rc == 0)
			return 0;
		g_string_append_printf(tried, "%s%.12s", tried->len ? ", " : "", *b);
	}
	if (!tried->len)
		return pk_error(err, PK_ERROR_INPUT, "'%s' is one revision: give the range as BASE..%s",
				joined, joined);
	return pk_error(err, PK_ERROR_INPUT, "'%s' is one revision and %s has none of the bases it "
			"would start from (%s): give the range as BASE..%s", joined, name, tried->str, joined);
}

static struct pk_range_commit *range_commit_new(git_commit *c)
{
	struct pk_range_commit *rc = g_new0(struct pk_range_commit, 1);
	const git_signature *a = git_commit_author(c), *m = git_commit_committer(c);

	rc->id = g_strdup(git_oid_tostr_s(git_commit_id(c)));
	if (git_commit_parentcount(c))
		rc->parent = g_strdup(git_oid_tostr_s(git_commit_parent_id(c, 0)));
	rc->merge = git_commit_parentcount(c) > 1;
	rc->subject = g_strdup(git_commit_summary(c) ? git_commit_summary(c) : "");
	rc->author = g_strdup_printf("%s <%s>", a->name, a->email);
	rc->committer = g_strdup_printf("%s <%s>", m->name, m->email);
	rc->time = a->when.time;
	return rc;
}

/* Walk what words ask for into range->commits, oldest first. */
static int walk_range(struct pk_range *range, git_repository *repo, const struct range_words *w,
		      const struct pk_range_opts *opts, GError **err)
{
	git_revwalk *walk = NULL;
	git_commit *tip = NULL;
	git_oid id;
	int rc = -1, next;

	if (git_revwalk_new(&walk, repo) < 0) {
		pk_git_fail(err, "revwalk");
		goto cleanup;
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (!opts->all_parents)
		git_revwalk_simplify_first_parent(walk);
	if (lookup_rev(&tip, repo, w->tip, err) < 0)
		goto cleanup;
	range->tip = g_strdup(git_oid_tostr_s(git_commit_id(tip)));
	if (git_revwalk_push(walk, git_commit_id(tip)) < 0) {
		pk_git_fail(err, "revwalk");
		goto cleanup;
	}
	for (guint i = 0; i < w->hide->len; i++) {
		git_commit *c = NULL;
		int hidden = lookup_rev(&c, repo, w->hide->pdata[i], err) < 0 ? -1 : hide_commit(walk, c);

		git_commit_free(c);
		if (hidden < 0)
			goto cleanup;
	}
	for (guint i = 0; i < w->hide_parents_of->len; i++) {
		git_commit *c = NULL;

		if (lookup_rev(&c, repo, w->hide_parents_of->pdata[i], err) < 0)
			goto cleanup;
		for (unsigned p = 0; p < git_commit_parentcount(c); p++)
			git_revwalk_hide(walk, git_commit_parent_id(c, p));
		git_commit_free(c);
	}
	if (!w->hide->len && !w->hide_parents_of->len &&
	    hide_default_base(walk, repo, range->spec, opts, err) < 0)
		goto cleanup;
	while ((next = git_revwalk_next(&id, walk)) == 0) {
		git_commit *c = NULL;

		if (git_commit_lookup(&c, repo, &id) < 0) {
			pk_git_fail(err, "reading a commit of the range");
			goto cleanup;
		}
		g_ptr_array_add(range->commits, range_commit_new(c));
		range->merges += git_commit_parentcount(c) > 1;
		git_commit_free(c);
	}
	if (next != GIT_ITEROVER) {
		pk_git_fail(err, "walking the range");
		goto cleanup;
	}
	if (!range->commits->len) {
		g_autofree char *name = repo_name(repo);
		pk_error(err, PK_ERROR_INPUT, "'%s' names no commit in %s: %s is already in what it leaves out",
			 range->spec, name, w->tip);
		goto cleanup;
	}
	rc = 0;
cleanup:
	git_commit_free(tip);
	git_revwalk_free(walk);
	return rc;
}

int pk_range_read(struct pk_range **out, const char *repo_dir, const char *const *spec,
		  const struct pk_range_opts *opts, GError **err)
{
	static const struct pk_range_opts defaults = PK_RANGE_OPTS_INIT;
	const struct pk_range_opts *o = opts ? opts : &defaults;
	struct range_words w = { 0 };
	git_repository *repo = NULL;
	struct pk_range *range = g_new0(struct pk_range, 1);
	int rc = -1;

	range->commits = g_ptr_array_new_with_free_func(commit_free);
	range->all_parents = o->all_parents;
	range->spec = g_strjoinv(" ", (char **)spec);
	if (open_user_repo(&repo, repo_dir, err) < 0)
		goto cleanup;
	range->repo = repo_name(repo);
	if (parse_words(&w, spec, range->spec, err) < 0 || walk_range(range, repo, &w, o, err) < 0)
		goto cleanup;
	{
		const struct pk_range_commit *oldest = range->commits->pdata[0];
		range->base = g_strdup(oldest->parent);
	}
	*out = g_steal_pointer(&range);
	rc = 0;
cleanup:
	if (w.hide)
		range_words_clear(&w);
	pk_range_free(range);
	git_repository_free(repo);
	return rc;
}

/* ---------------------------------------------------------------- kernel trees */

/* ---------------------------------------------------------------- kernel trees */

/* The version a kernel tree's top-level Makefile states, or NULL when it has none. */
static char *tree_version(git_repository *repo, git_tree *tree)
{
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	char *version = NULL;

	if (git_tree_entry_bypath(&entry, tree, "Makefile") == 0 &&
	    git_blob_lookup(&blob, repo, git_tree_entry_id(entry)) == 0) {
		g_autofree char *text = g_strndup(git_blob_rawcontent(blob),
						  MIN(git_blob_rawsize(blob), (git_object_size_t)4096));

		version = pk_repo_makefile_version(text);
	}
	git_blob_free(blob);
	git_tree_entry_free(entry);
	return version;
}

static bool tree_has(git_tree *tree, const char *path)
{
	git_tree_entry *entry = NULL;
	bool has = git_tree_entry_bypath(&entry, tree, path) == 0;

	git_tree_entry_free(entry);
	return has;
}

int pk_range_check_kernel(const struct pk_range *range, char **out_version, GError **err)
{
	git_repository *repo = NULL;
	git_commit *tip = NULL;
	git_tree *tree = NULL;
	char *version = NULL;
	int rc = -1;

	if (open_user_repo(&repo, range->repo, err) < 0)
		return -1;
	if (lookup_rev(&tip, repo, range->tip, err) < 0)
		goto cleanup;
	if (git_commit_tree(&tree, tip) < 0) {
		pk_git_fail(err, "reading the tip's tree");
		goto cleanup;
	}
	if (!tree_has(tree, "Makefile") || !tree_has(tree, "Kconfig") || !tree_has(tree, "init/main.c") ||
	    !(version = tree_version(repo, tree))) {
		pk_error(err, PK_ERROR_INPUT, "%s: %.12s is not a Linux kernel tree (no top-level Makefile "
			 "with a VERSION, Kconfig and init/main.c)", range->repo, range->tip);
		goto cleanup;
	}
	if (out_version)
		*out_version = g_steal_pointer(&version);
	rc = 0;
cleanup:
	g_free(version);
	git_tree_free(tree);
	git_commit_free(tip);
	git_repository_free(repo);
	return rc;
}

char **pk_range_default_bases(const struct pk_lab *lab, GError **err)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	g_autofree char *version = pk_repo_kernel_version(lab, PK_LAB_BASE_TAG, err);
	g_autofree char *base = version ? pk_repo_resolve(lab, PK_LAB_BASE_TAG, err) : NULL;
	const char *dot;

	if (!base)
		return NULL;
	g_strv_builder_add(b, base);
	{
		g_autofree char *tag = g_strconcat("v", version, NULL);
		g_strv_builder_add(b, tag);
	}
	/* 6.12.57 -> v6.12 too: a branch made on the mainline release */
	if ((dot = strchr(version, '.')) && (dot = strchr(dot + 1, '.'))) {
		g_autofree char *tag = g_strdup_printf("v%.*s", (int)(dot - version), version);
		g_strv_builder_add(b, tag);
	}
	return g_strv_builder_end(b);
}

/* ---------------------------------------------------------------- import */

/* The range's commits, its base first, copied into the lab by repo.h. */
int pk_range_import(const struct pk_range *range, const struct pk_lab *lab,
		    unsigned *out_copied, GError **err)
{
	g_autoptr(GPtrArray) commits = g_ptr_array_new();
	const char *keep[] = { range->tip, range->base, NULL };

	/* the base first: then each commit's parent is in the lab before it */
	if (range->base)
		g_ptr_array_add(commits, range->base);
	for (guint i = 0; i < range->commits->len; i++)
		g_ptr_array_add(commits, ((struct pk_range_commit *)range->commits->pdata[i])->id);
	g_ptr_array_add(commits, NULL);
	return pk_repo_import_commits(out_copied, lab, range->repo, (const char *const *)commits->pdata,
				      keep, err);
}


int pk_range_load(struct pk_range **out, const struct pk_lab *lab, const char *repo_dir,
		  const char *const *spec, bool all_parents, GError **err)
{
	struct pk_range_opts ropts = PK_RANGE_OPTS_INIT;
	g_auto(GStrv) bases = pk_range_default_bases(lab, err);
	g_autoptr(pk_range) range = NULL;
	g_autofree char *version = NULL, *lab_version = NULL;
	unsigned copied = 0;

	if (!bases)
		return -1;
	ropts.all_parents = all_parents;
	ropts.default_bases = (const char *const *)bases;
	if (pk_range_read(&range, repo_dir, spec, &ropts, err) < 0 ||
	    pk_range_check_kernel(range, &version, err) < 0 ||
	    !(lab_version = pk_repo_kernel_version(lab, PK_LAB_BASE_TAG, err)))
		return -1;
	if (strcmp(version, lab_version))
		pk_info("%s is Linux %s and the lab's base %s: the kernel config is made again for "
			"each tree whose Kconfig differs", range->repo, version, lab_version);
	if (pk_range_import(range, lab, &copied, err) < 0)
		return -1;
	if (copied)
		pk_info("copied %u objects of %s into the lab's tree", copied, range->repo);
	*out = g_steal_pointer(&range);
	return 0;
}
