/*
 * range.c - a range of the user's commits, read with libgit2 and brought
 * into the lab's repository; see range.h.
 */
#include "intake/range.h"

#include <string.h>

#include "base/gitutil.h"
#include <git2/sys/repository.h>   /* git_repository_set_index() */
#include "base/util.h"

/* The files whose change makes the kernel config stale (pk_range_sync_config()). */
static const char *const kconfig_dirs[] = { "scripts/kconfig/", "kernel/configs/", "arch/x86/configs/" };

#define KCONFIG_STAMP ".printkbot-kconfig"
#define RUN_REF_PREFIX "refs/printkbot/run/"

static void commit_free(gpointer p)
{
	struct pk_range_commit *c = p;

	g_free(c->id);
	g_free(c->parent);
	g_free(c->subject);
	g_free(c->author);
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

static int open_lab_repo(git_repository **out, const struct pk_lab *lab, GError **err)
{
	pk_git_init();
	if (git_repository_open(out, lab->tree) < 0)
		return pk_git_fail(err, lab->tree);
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
	const git_signature *a = git_commit_author(c);

	rc->id = g_strdup(git_oid_tostr_s(git_commit_id(c)));
	if (git_commit_parentcount(c))
		rc->parent = g_strdup(git_oid_tostr_s(git_commit_parent_id(c, 0)));
	rc->merge = git_commit_parentcount(c) > 1;
	rc->subject = g_strdup(git_commit_summary(c) ? git_commit_summary(c) : "");
	rc->author = g_strdup_printf("%s <%s>", a->name, a->email);
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
		g_autofree char *v = makefile_var(text, "VERSION");
		g_autofree char *p = makefile_var(text, "PATCHLEVEL");
		g_autofree char *s = makefile_var(text, "SUBLEVEL");
		g_autofree char *x = makefile_var(text, "EXTRAVERSION");

		if (v && p && *v && *p)
			version = g_strdup_printf("%s.%s%s%s%s", v, p, s && *s && strcmp(s, "0") ? "." : "",
						  s && *s && strcmp(s, "0") ? s : "", x ? x : "");
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

char *pk_range_lab_version(const struct pk_lab *lab, GError **err)
{
	git_repository *repo = NULL;
	git_commit *base = NULL;
	git_tree *tree = NULL;
	char *version = NULL;

	if (open_lab_repo(&repo, lab, err) < 0)
		return NULL;
	if (lookup_rev(&base, repo, PK_LAB_BASE_TAG, err) == 0 && git_commit_tree(&tree, base) == 0 &&
	    !(version = tree_version(repo, tree)))
		pk_error(err, PK_ERROR_FAILED, "%s: the base's Makefile states no version", lab->tree);
	git_tree_free(tree);
	git_commit_free(base);
	git_repository_free(repo);
	return version;
}

char **pk_range_default_bases(const struct pk_lab *lab, GError **err)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	g_autofree char *version = pk_range_lab_version(lab, err);
	git_repository *repo = NULL;
	git_commit *base = NULL;
	const char *dot;

	if (!version)
		return NULL;
	if (open_lab_repo(&repo, lab, err) < 0)
		return NULL;
	if (lookup_rev(&base, repo, PK_LAB_BASE_TAG, err) < 0) {
		git_repository_free(repo);
		return NULL;
	}
	g_strv_builder_add(b, git_oid_tostr_s(git_commit_id(base)));
	{
		g_autofree char *tag = g_strconcat("v", version, NULL);
		g_strv_builder_add(b, tag);
	}
	/* 6.12.57 -> v6.12 too: a branch made on the mainline release */
	if ((dot = strchr(version, '.')) && (dot = strchr(dot + 1, '.'))) {
		g_autofree char *tag = g_strdup_printf("v%.*s", (int)(dot - version), version);
		g_strv_builder_add(b, tag);
	}
	git_commit_free(base);
	git_repository_free(repo);
	return g_strv_builder_end(b);
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

/* ---------------------------------------------------------------- import */

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

/* List commits (hex) in the lab's .git/shallow, keeping what is there. */
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

int pk_range_import(const struct pk_range *range, const struct pk_lab *lab,
		    unsigned *out_copied, GError **err)
{
	struct copier c = { 0 };
	git_repository *lab_repo = NULL;
	g_autoptr(GPtrArray) shallow = g_ptr_array_new();
	int rc = -1;

	if (open_user_repo(&c.src, range->repo, err) < 0)
		return -1;
	if (open_lab_repo(&lab_repo, lab, err) < 0)
		goto cleanup;
	if (git_repository_odb(&c.from, c.src) < 0 || git_repository_odb(&c.to, lab_repo) < 0) {
		pk_git_fail(err, "opening the object databases");
		goto cleanup;
	}
	/* the base first: then each commit's parent is in the lab before it */
	if (range->base) {
		int missing = copy_commit(&c, range->base, err);
		if (missing < 0)
			goto cleanup;
		if (missing)
			g_ptr_array_add(shallow, range->base);
	}
	for (guint i = 0; i < range->commits->len; i++) {
		struct pk_range_commit *commit = range->commits->pdata[i];
		int missing = copy_commit(&c, commit->id, err);

		if (missing < 0)
			goto cleanup;
		if (missing)
			g_ptr_array_add(shallow, commit->id);
		if (c.copied && pk_progress_enabled())
			pk_progress("copying the range into the lab: commit %u of %u, %u objects",
				    i + 1, range->commits->len, c.copied);
	}
	if (keep_ref(lab_repo, range->tip, err) < 0 ||
	    (range->base && keep_ref(lab_repo, range->base, err) < 0) ||
	    mark_shallow(lab_repo, shallow, err) < 0)
		goto cleanup;
	if (out_copied)
		*out_copied = c.copied;
	rc = 0;
cleanup:
	if (c.copied)
		pk_progress("%s", "");
	git_odb_free(c.from);
	git_odb_free(c.to);
	git_repository_free(lab_repo);
	git_repository_free(c.src);
	return rc;
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
	    !(lab_version = pk_range_lab_version(lab, err)))
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

/* The diff of commit against its first parent as `git show` writes it; caller frees. */
static char *commit_diff_text(git_repository *repo, git_commit *commit, git_commit *parent, GError **err)
{
	git_diff_options dopts = GIT_DIFF_OPTIONS_INIT;
	git_diff_find_options fopts = GIT_DIFF_FIND_OPTIONS_INIT;
	git_tree *old_tree = NULL, *new_tree = NULL;
	git_diff *diff = NULL;
	git_buf buf = { 0 };
	char *text = NULL;

	g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);

	fopts.flags = GIT_DIFF_FIND_RENAMES;
	if (git_commit_tree(&old_tree, parent) < 0 || git_commit_tree(&new_tree, commit) < 0) {
		pk_git_fail(err, "reading the commit's trees");
		goto cleanup;
	}
	/* only the paths that changed: the diff then reads nothing else */
	if (tree_changes(paths, repo, old_tree, new_tree, "", err) < 0)
		goto cleanup;
	if (!paths->len) {
		text = g_strdup("");
		goto cleanup;
	}
	dopts.pathspec.strings = (char **)paths->pdata;
	dopts.pathspec.count = paths->len;
	dopts.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	if (git_diff_tree_to_tree(&diff, repo, old_tree, new_tree, &dopts) < 0 ||
	    git_diff_find_similar(diff, &fopts) < 0 ||
	    git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH) < 0)
		pk_git_fail(err, "diffing the commit against its parent");
	else
		text = g_strndup(buf.ptr ? buf.ptr : "", buf.size);
cleanup:
	git_buf_dispose(&buf);
	git_diff_free(diff);
	git_tree_free(new_tree);
	git_tree_free(old_tree);
	return text;
}

struct pk_patch *pk_range_commit_patch(const struct pk_lab *lab, const char *commit,
				       char **out_parent, GError **err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL, *parent = NULL;
	struct pk_patch *patch = NULL;
	g_autofree char *text = NULL;

	if (open_lab_repo(&repo, lab, err) < 0)
		return NULL;
	/*
	 * The diff looks up .gitattributes (the kernel's "*.c diff=cpp" makes
	 * the hunk headers name functions), in the worktree and in the index;
	 * the lab's index of 87,000 entries costs 0.1 s to read for nothing,
	 * so the repository gets an empty one for this diff.
	 */
	{
		git_index *empty = NULL;

		if (git_index_new(&empty) == 0)
			git_repository_set_index(repo, empty);
		git_index_free(empty);
	}
	if (lookup_rev(&c, repo, commit, err) < 0)
		goto cleanup;
	if (!git_commit_parentcount(c)) {
		pk_error(err, PK_ERROR_INPUT, "%.12s is a root commit: it has no parent to compare with", commit);
		goto cleanup;
	}
	if (git_commit_parent(&parent, c, 0) < 0) {
		pk_git_fail(err, "reading the commit's parent");
		goto cleanup;
	}
	if (!(text = commit_diff_text(repo, c, parent, err)))
		goto cleanup;
	patch = pk_patch_parse_diff(text, strlen(text));
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
	*out_parent = g_strdup(git_oid_tostr_s(git_commit_id(parent)));
cleanup:
	git_commit_free(parent);
	git_commit_free(c);
	git_repository_free(repo);
	return patch;
}

/* ---------------------------------------------------------------- the config */

static bool is_kconfig_path(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (g_str_has_prefix(slash ? slash + 1 : path, "Kconfig"))
		return true;
	for (size_t i = 0; i < G_N_ELEMENTS(kconfig_dirs); i++)
		if (g_str_has_prefix(path, kconfig_dirs[i]))
			return true;
	return false;
}

/* Whether path names a directory in tree (a directory one side does not have). */
static bool is_dir_in(git_tree *tree, const char *path)
{
	git_tree_entry *e = NULL;
	bool dir = git_tree_entry_bypath(&e, tree, path) == 0 && git_tree_entry_type(e) == GIT_OBJECT_TREE;

	git_tree_entry_free(e);
	return dir;
}

/* Whether the Kconfig files of two commits of the lab differ (true when from is unknown). */
static int kconfig_differs(bool *out, git_repository *repo, const char *from, const char *to,
			   GError **err)
{
	git_commit *a = NULL, *b = NULL;
	git_tree *ta = NULL, *tb = NULL;
	g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
	bool differs = false;
	int rc = -1;

	if (lookup_rev(&b, repo, to, err) < 0)
		return -1;
	if (lookup_rev(&a, repo, from, NULL) < 0) {
		*out = true;
		rc = 0;
		goto cleanup;
	}
	if (git_commit_tree(&ta, a) < 0 || git_commit_tree(&tb, b) < 0) {
		pk_git_fail(err, "comparing the Kconfig files");
		goto cleanup;
	}
	if (tree_changes(paths, repo, ta, tb, "", err) < 0)
		goto cleanup;
	/* a directory only one side has may bring Kconfig files of its own */
	for (guint i = 0; i < paths->len && !differs; i++)
		differs = is_kconfig_path(paths->pdata[i]) || is_dir_in(ta, paths->pdata[i]) ||
			  is_dir_in(tb, paths->pdata[i]);
	*out = differs;
	rc = 0;
cleanup:
	git_tree_free(tb);
	git_tree_free(ta);
	git_commit_free(b);
	git_commit_free(a);
	return rc;
}

int pk_range_sync_config(const struct pk_lab *lab, const char *commit, bool *out_refreshed,
			 GError **err)
{
	g_autofree char *stamp = g_build_filename(lab->build_dir, KCONFIG_STAMP, NULL);
	g_autofree char *made_for = NULL;
	g_autoptr(GString) missing = g_string_new(NULL);
	git_repository *repo = NULL;
	bool differs = false;
	int rc = -1;

	if (g_file_test(stamp, G_FILE_TEST_EXISTS)) {
		if (pk_read_file(&made_for, NULL, stamp, 4096, err) < 0)
			return -1;
		g_strstrip(made_for);
	} else {
		made_for = g_strdup(PK_LAB_BASE_TAG);
	}
	if (!strcmp(made_for, commit)) {
		if (out_refreshed)
			*out_refreshed = false;
		return 0;
	}
	if (open_lab_repo(&repo, lab, err) < 0)
		return -1;
	if (kconfig_differs(&differs, repo, made_for, commit, err) < 0)
		goto cleanup;
	if (differs) {
		pk_info("the Kconfig files of %.12s differ from %.12s's: making the kernel config again",
			commit, made_for);
		if (pk_lab_configure(lab, missing, err) < 0)
			goto cleanup;
		if (missing->len)
			pk_info("kernel config: options of qemu/kernel.config this tree does not have:%s",
				missing->str);
	}
	if (pk_write_file(stamp, commit, strlen(commit), err) < 0)
		goto cleanup;
	if (out_refreshed)
		*out_refreshed = differs;
	rc = 0;
cleanup:
	git_repository_free(repo);
	return rc;
}
