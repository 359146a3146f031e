/*
 * test-repo.c - the lab's repository (lab/repo.h) on a small tree made
 * here: setup's import past an ignore-everything .gitignore, revisions
 * resolved, checkouts that write only what differs, a commit read as a
 * patch, the paths two commits differ in, the kernel version of a
 * Makefile, and which checkouts count as published (the build dir's
 * right to write the bot's ccache).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "lab/build.h"
#include "lab/layer.h"
#include "lab/repo.h"
#include "lab/sandbox.h"
#include "base/gitutil.h"
#include "base/proc.h"
#include "base/util.h"

/*
 * The history: base (imported from files on disk), then A (drivers/x.c
 * changed) and B (a new directory drivers/new/ with a Kconfig).
 */
struct fixture {
	char *dir;
	struct pk_lab lab;
	char *base, *a, *b;   /* hex ids */
};

static const char makefile[] = "# SPDX\nVERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 3\nEXTRAVERSION =\nNAME = Baby Opossum Posse\n";
static const char x_base[] = "void x(void)\n{\n\tprintk(KERN_INFO \"x: hello\\n\");\n}\n";
static const char x_a[] = "void x(void)\n{\n\tpr_info(\"x: hello\\n\");\n}\n";
static const char base_message[] = "Linux 6.12.3 from a test\n\nImported by test-repo.";

/* Files of the tree on disk, as the tarball would leave it: .gitignore ignores everything. */
static const char *const base_files[] = {
	".gitignore", "*\n",
	"Makefile", makefile,
	"Kconfig", "mainmenu \"Linux\"\n",
	"drivers/x.c", x_base,
	"Documentation/a.txt", "about x\n",
	NULL,
};

static void write_files(const char *dir, const char *const *files)
{
	for (const char *const *f = files; *f; f += 2) {
		g_autofree char *path = g_build_filename(dir, f[0], NULL);
		g_autofree char *parent = g_path_get_dirname(path);

		assert_int_equal(g_mkdir_with_parents(parent, 0755), 0);
		assert_true(g_file_set_contents(path, f[1], -1, NULL));
	}
}

/* A commit on parent: its tree with files (path, content pairs) put in; the id, hex, caller frees. */
static char *commit_on(struct fixture *f, const char *parent_hex, const char *msg, const char *const *files)
{
	git_repository *repo;
	git_index *index;
	git_commit *parent;
	git_tree *tree;
	git_signature *sig;
	git_oid pid, tree_id, id;

	assert_int_equal(git_repository_open(&repo, f->dir), 0);
	assert_int_equal(git_oid_fromstr(&pid, parent_hex), 0);
	assert_int_equal(git_commit_lookup(&parent, repo, &pid), 0);
	assert_int_equal(git_commit_tree(&tree, parent), 0);
	/* the repository's index in memory only (never written): it writes the blobs */
	assert_int_equal(git_repository_index(&index, repo), 0);
	assert_int_equal(git_index_read_tree(index, tree), 0);
	git_tree_free(tree);
	for (const char *const *p = files; *p; p += 2) {
		git_index_entry e = { 0 };

		e.path = p[0];
		e.mode = GIT_FILEMODE_BLOB;
		assert_int_equal(git_index_add_from_buffer(index, &e, p[1], strlen(p[1])), 0);
	}
	assert_int_equal(git_index_write_tree_to(&tree_id, index, repo), 0);
	assert_int_equal(git_tree_lookup(&tree, repo, &tree_id), 0);
	assert_int_equal(git_signature_new(&sig, "Jane Developer", "jane@example.org", 1764583200, 60), 0);
	assert_int_equal(git_commit_create(&id, repo, NULL, sig, sig, NULL, msg, tree, 1,
					   (const git_commit *[]){ parent }), 0);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(index);
	git_commit_free(parent);
	git_repository_free(repo);
	return g_strdup(git_oid_tostr_s(&id));
}

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autoptr(GError) err = NULL;

	pk_git_init();
	f->dir = g_dir_make_tmp("test-repo-XXXXXX", NULL);
	f->lab.tree = f->dir;
	f->lab.lock_fd = -1;
	f->lab.repo = pk_repo_cache_new();
	write_files(f->dir, base_files);
	assert_int_equal(pk_repo_import_tree(&f->lab, base_message, &err), 0);
	f->base = pk_repo_resolve(&f->lab, PK_LAB_BASE_TAG, &err);
	assert_non_null(f->base);
	f->a = commit_on(f, f->base, "x: use pr_info\n\nA conversion.\n",
			 (const char *[]){ "drivers/x.c", x_a, NULL });
	f->b = commit_on(f, f->a, "new: a driver\n",
			 (const char *[]){ "drivers/new/Kconfig", "config NEW\n", "drivers/new/n.c", "int n;\n", NULL });
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "rm", "-rf", f->dir, NULL };

	g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
	pk_repo_cache_free(f->lab.repo);
	g_free(f->dir);
	g_free(f->base);
	g_free(f->a);
	g_free(f->b);
	g_free(f);
	return 0;
}

static char *read_tree_file(const struct fixture *f, const char *name)
{
	g_autofree char *path = g_build_filename(f->dir, name, NULL);
	char *text = NULL;

	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

/* Every file is in the base, ignored or not; the same tree and message give the same id anywhere. */
static void test_repo_import_tree(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GError) err = NULL;
	g_autofree char *doc = NULL, *ignore = NULL, *version = NULL, *again = NULL;
	g_autofree char *other_dir = g_dir_make_tmp("test-repo-XXXXXX", NULL);
	struct pk_lab other = { .tree = other_dir, .lock_fd = -1, .repo = pk_repo_cache_new() };
	size_t len = 0;

	assert_int_equal(pk_repo_read_file(&doc, &len, &f->lab, PK_LAB_BASE_TAG, "Documentation/a.txt", &err), 0);
	assert_string_equal(doc, "about x\n");
	assert_int_equal(len, strlen("about x\n"));
	assert_int_equal(pk_repo_read_file(&ignore, NULL, &f->lab, PK_LAB_BASE_TAG, ".gitignore", &err), 0);
	assert_string_equal(ignore, "*\n");
	assert_int_equal(pk_repo_read_file(&ignore, NULL, &f->lab, PK_LAB_BASE_TAG, "nosuch.c", &err), -1);
	assert_non_null(strstr(err->message, "no file nosuch.c"));
	g_clear_error(&err);
	version = pk_repo_kernel_version(&f->lab, PK_LAB_BASE_TAG, &err);
	assert_string_equal(version, "6.12.3");

	write_files(other_dir, base_files);
	assert_int_equal(pk_repo_import_tree(&other, base_message, &err), 0);
	again = pk_repo_resolve(&other, PK_LAB_BASE_TAG, &err);
	assert_string_equal(again, f->base);
	pk_repo_cache_free(other.repo);
	{
		const char *argv[] = { "rm", "-rf", other_dir, NULL };
		g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
	}
}

struct resolve_case {
	const char *rev;     /* "@A" stands for A's id, "@a" for its first 10 hex */
	const char *want;    /* "base", "A", "B", or NULL for an error */
	const char *error_has;
};

static const struct resolve_case resolve_cases[] = {
	{ PK_LAB_BASE_TAG, "base", NULL },
	{ "@A", "A", NULL },
	{ "@a", "A", NULL },
	{ "@B~1", "A", NULL },
	{ "@B^^", "base", NULL },
	{ "nosuch", NULL, "'nosuch' is not a revision of the kernel tree" },
	{ PK_LAB_BASE_TAG ":Makefile", NULL, "does not name a commit" },
};

static void test_repo_resolve(void **state)
{
	struct fixture *f = *state;

	for (size_t i = 0; i < G_N_ELEMENTS(resolve_cases); i++) {
		const struct resolve_case *c = &resolve_cases[i];
		g_autoptr(GError) err = NULL;
		g_autofree char *rev = NULL, *id = NULL;

		if (c->rev[0] == '@') {
			const char *hex = g_ascii_tolower(c->rev[1]) == 'a' ? f->a : f->b;
			rev = c->rev[1] == 'a' ? g_strndup(hex, 10) : g_strconcat(hex, c->rev + 2, NULL);
		} else {
			rev = g_strdup(c->rev);
		}
		id = pk_repo_resolve(&f->lab, rev, &err);
		print_message("%s: %s\n", c->rev, id ? id : err->message);
		if (!c->want) {
			assert_null(id);
			assert_true(g_error_matches(err, PK_ERROR, PK_ERROR_INPUT));
			assert_non_null(strstr(err->message, c->error_has));
			continue;
		}
		assert_string_equal(id, !strcmp(c->want, "base") ? f->base : !strcmp(c->want, "A") ? f->a : f->b);
	}
}

/* A checkout writes the files that differ, and only those: a local change elsewhere survives it. */
static void test_repo_checkout(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GError) err = NULL;
	g_autofree char *x = NULL, *x_again = NULL, *doc = NULL, *head = NULL;
	g_autofree char *doc_path = g_build_filename(f->dir, "Documentation", "a.txt", NULL);
	g_autofree char *new_path = g_build_filename(f->dir, "drivers", "new", "n.c", NULL);

	assert_true(g_file_set_contents(doc_path, "changed here\n", -1, NULL));
	assert_int_equal(pk_repo_checkout(&f->lab, f->b, &err), 0);
	x = read_tree_file(f, "drivers/x.c");
	assert_string_equal(x, x_a);
	assert_true(g_file_test(new_path, G_FILE_TEST_EXISTS));
	doc = read_tree_file(f, "Documentation/a.txt");
	assert_string_equal(doc, "changed here\n");
	head = pk_repo_resolve(&f->lab, "HEAD", &err);
	assert_string_equal(head, f->b);

	assert_int_equal(pk_repo_checkout(&f->lab, PK_LAB_BASE_TAG, &err), 0);
	x_again = read_tree_file(f, "drivers/x.c");
	assert_string_equal(x_again, x_base);
	assert_false(g_file_test(new_path, G_FILE_TEST_EXISTS));
	g_free(head);
	head = pk_repo_resolve(&f->lab, "HEAD", &err);
	assert_string_equal(head, f->base);

	assert_int_equal(pk_repo_checkout(&f->lab, "nosuch", &err), -1);
	assert_true(g_error_matches(err, PK_ERROR, PK_ERROR_INPUT));
}

static void test_repo_commit_patch(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_patch) patch = NULL, root = NULL;
	g_autofree char *parent = NULL, *none = NULL;

	patch = pk_repo_commit_patch(&f->lab, f->a, NULL, &parent, &err);
	assert_non_null(patch);
	assert_string_equal(parent, f->base);
	assert_string_equal(patch->subject, "x: use pr_info");
	assert_string_equal(patch->description, "A conversion.");
	assert_string_equal(patch->author, "Jane Developer <jane@example.org>");
	assert_string_equal(patch->date, "Mon, 1 Dec 2025 11:00:00 +0100");
	assert_null(patch->error);
	assert_int_equal(patch->files->len, 1);
	assert_string_equal(((struct pk_diff_file *)patch->files->pdata[0])->new_path, "drivers/x.c");
	assert_non_null(strstr(patch->diff, "-\tprintk(KERN_INFO \"x: hello\\n\");\n+\tpr_info(\"x: hello\\n\");\n"));

	root = pk_repo_commit_patch(&f->lab, PK_LAB_BASE_TAG, NULL, &none, &err);
	assert_null(root);
	assert_null(none);
	assert_non_null(strstr(err->message, "root commit"));
}

/*
 * A commit is held to the policy's limits as a mail is: more files than
 * max_files, files that add up to more than max_mail_mb, a diff longer
 * than it or than max_lines, and the diff is not read (the patch lists the files,
 * no hunks, and says which limit, naming its key); the two limits seen
 * before the diff is made leave the commit without a patch key.  Within
 * them, the whole diff.  A stop asked for ends a diff, as an error.
 */
static void test_repo_commit_limits(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GString) big = g_string_new(NULL);
	g_autofree char *c_big = NULL, *c_three = NULL;
	volatile sig_atomic_t stop = 1;
	static const struct {
		const char *which;       /* "big": 200 lines of 10 bytes in one file; "three": 3 files */
		unsigned max_files, max_lines;
		size_t max_bytes;
		const char *want;        /* over_limit holds it; NULL: read whole */
		bool keyed;              /* a patch key is made */
	} cases[] = {
		{ "big", 0, 0, 0, NULL, true },
		{ "big", 0, 0, 1000, "the files the commit touches add up to 2000 bytes (drivers/big.c alone 2000), "
		  "more than the limit of 1000 bytes of a diff ([policy] max_mail_mb)", false },
		{ "three", 0, 0, 5, "add up to 6 bytes (t/1.c alone 2), more than the limit of 5 bytes", false },
		{ "big", 0, 0, 2100, "the diff is more than the limit of 2100 bytes ([policy] max_mail_mb)", true },
		{ "big", 0, 150, 0, "the diff has more than 150 lines, the limit ([policy] max_lines)", true },
		{ "three", 2, 0, 0, "the commit touches 3 files, more than the limit of 2 ([policy] max_files)", false },
		{ "three", 3, 0, 0, NULL, true },
	};

	for (int i = 0; i < 200; i++)
		g_string_append_printf(big, "int a%03d;\n", i);
	c_big = commit_on(f, f->b, "big: a file\n", (const char *[]){ "drivers/big.c", big->str, NULL });
	c_three = commit_on(f, f->b, "three: files\n", (const char *[]){ "t/1.c", "1\n", "t/2.c", "2\n",
									  "t/3.c", "3\n", NULL });
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct pk_policy policy = PK_POLICY_DEFAULT;
		const char *commit = !strcmp(cases[i].which, "big") ? c_big : c_three;
		g_autoptr(GError) err = NULL;
		g_autoptr(pk_patch) patch = NULL;
		g_autofree char *parent = NULL, *key = NULL;

		print_message("%s: files %u, lines %u, bytes %zu\n", cases[i].which, cases[i].max_files,
			      cases[i].max_lines, cases[i].max_bytes);
		policy.max_files = cases[i].max_files;
		policy.max_lines = cases[i].max_lines;
		policy.max_mail_size = cases[i].max_bytes;
		patch = pk_repo_commit_patch(&f->lab, commit, &policy, &parent, &err);
		assert_non_null(patch);
		assert_string_equal(parent, f->b);
		assert_non_null(patch->subject);
		assert_int_equal(patch->files->len, !strcmp(cases[i].which, "big") ? 1 : 3);
		if (cases[i].want) {
			g_autofree char *over = pk_patch_over_limits(patch, &policy);

			assert_non_null(strstr(patch->over_limit, cases[i].want));
			assert_string_equal(over, patch->over_limit);
			assert_int_equal(((struct pk_diff_file *)patch->files->pdata[0])->hunks->len, 0);
		} else {
			assert_null(patch->over_limit);
			assert_int_equal(((struct pk_diff_file *)patch->files->pdata[0])->hunks->len, 1);
		}
		assert_int_equal(pk_repo_patch_key(&key, &f->lab, commit, &policy, &err), 0);
		assert_int_equal(key != NULL, cases[i].keyed);
	}
	pk_proc_set_cancel(&stop);
	{
		g_autoptr(GError) err = NULL;
		g_autofree char *parent = NULL;
		g_autoptr(pk_patch) none = pk_repo_commit_patch(&f->lab, c_three, NULL, &parent, &err);

		pk_proc_set_cancel(NULL);
		assert_null(none);
		assert_null(parent);
		assert_non_null(strstr(err->message, "stopped by a signal"));
	}
}

/* The diff of a range (base..b): the files of both commits, as one patch without a header. */
static void test_repo_diff_patch(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_patch) patch = pk_repo_diff_patch(&f->lab, f->base, f->b, NULL, &err);
	g_autoptr(pk_patch) none = NULL;
	g_autoptr(GPtrArray) paths = g_ptr_array_new();

	assert_non_null(patch);
	assert_null(patch->error);
	for (guint i = 0; i < patch->files->len; i++)
		g_ptr_array_add(paths, ((struct pk_diff_file *)patch->files->pdata[i])->new_path);
	assert_int_equal(paths->len, 3);
	assert_true(g_ptr_array_find_with_equal_func(paths, "drivers/x.c", g_str_equal, NULL));
	assert_true(g_ptr_array_find_with_equal_func(paths, "drivers/new/Kconfig", g_str_equal, NULL));
	assert_true(g_ptr_array_find_with_equal_func(paths, "drivers/new/n.c", g_str_equal, NULL));
	assert_null(patch->subject);
	none = pk_repo_diff_patch(&f->lab, f->base, "no-such-revision", NULL, &err);
	assert_null(none);
}

/* The series of a Makefile's text: VERSION.PATCHLEVEL, without SUBLEVEL or EXTRAVERSION. */
static void test_repo_makefile_series(void **state)
{
	g_autofree char *s = pk_repo_makefile_series("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\nEXTRAVERSION = -rc1\n");
	g_autofree char *none = pk_repo_makefile_series("VERSION = 6\n");

	assert_string_equal(s, "6.1");
	assert_null(none);
}

/* Files that differ, and directories one side lacks, marked with a final '/'. */
static void test_repo_changed_paths(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GError) err = NULL;
	g_autoptr(GPtrArray) ab = NULL, base_b = NULL, same = NULL;

	assert_int_equal(pk_repo_changed_paths(&ab, &f->lab, f->a, f->b, &err), 0);
	assert_int_equal(ab->len, 1);
	assert_string_equal(ab->pdata[0], "drivers/new/");
	assert_int_equal(pk_repo_changed_paths(&base_b, &f->lab, PK_LAB_BASE_TAG, f->b, &err), 0);
	assert_int_equal(base_b->len, 2);
	assert_string_equal(base_b->pdata[0], "drivers/x.c");
	assert_string_equal(base_b->pdata[1], "drivers/new/");
	assert_int_equal(pk_repo_changed_paths(&same, &f->lab, f->b, f->b, &err), 0);
	assert_int_equal(same->len, 0);
}

struct version_case {
	const char *makefile;
	const char *want;   /* NULL: no version */
};

static const struct version_case version_cases[] = {
	{ makefile, "6.12.3" },
	{ "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\nEXTRAVERSION = -rc3\n", "6.12-rc3" },
	{ "VERSION\t= 6\nPATCHLEVEL =\t12\nSUBLEVEL = 118\n", "6.12.118" },
	{ "VERSIONS = 6\nPATCHLEVEL = 12\n", NULL },
	{ "all:\n\ttrue\n", NULL },
};

static void test_repo_makefile_version(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(version_cases); i++) {
		g_autofree char *v = pk_repo_makefile_version(version_cases[i].makefile);

		if (version_cases[i].want)
			assert_string_equal(v, version_cases[i].want);
		else
			assert_null(v);
	}
}

/* HEAD is published at the tip of a tag or branch, not at a commit of the bot's own. */
static void test_repo_head_published(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GError) err = NULL;
	git_repository *repo;
	git_reference *ref;
	git_oid a;

	assert_int_equal(pk_repo_checkout(&f->lab, PK_LAB_BASE_TAG, &err), 0);
	assert_true(pk_repo_head_published(&f->lab));
	assert_int_equal(pk_repo_checkout(&f->lab, f->a, &err), 0);
	assert_false(pk_repo_head_published(&f->lab));
	assert_int_equal(git_repository_open(&repo, f->dir), 0);
	assert_int_equal(git_oid_fromstr(&a, f->a), 0);
	assert_int_equal(git_reference_create(&ref, repo, "refs/heads/topic", &a, 0, NULL), 0);
	assert_true(pk_repo_head_published(&f->lab));
	assert_int_equal(git_reference_delete(ref), 0);
	git_reference_free(ref);
	git_repository_free(repo);
	assert_false(pk_repo_head_published(&f->lab));
	assert_int_equal(pk_repo_checkout(&f->lab, PK_LAB_BASE_TAG, &err), 0);
}

/*
 * A watched tree's tip is published (a base a series may go on) but built
 * in place only when its [tree] is trusted: whoever pushes there chooses
 * the code.  The lab's own bases are always trusted.
 */
static void test_repo_head_trusted(void **state)
{
	struct fixture *f = *state;
	struct pk_sandbox_config trusting = PK_SANDBOX_CONFIG_INIT, saved = *pk_sandbox_settings();
	char *trusted[] = { "net", NULL };
	g_autoptr(GError) err = NULL;
	g_autofree char *ancestor = NULL;
	git_repository *repo;
	git_reference *ref;
	git_oid a;

	assert_int_equal(pk_repo_checkout(&f->lab, PK_LAB_BASE_TAG, &err), 0);
	assert_true(pk_repo_head_trusted(&f->lab));
	assert_int_equal(git_repository_open(&repo, f->dir), 0);
	assert_int_equal(git_oid_fromstr(&a, f->a), 0);
	assert_int_equal(git_reference_create(&ref, repo, "refs/printkbot/trees/net/main", &a, 0, NULL), 0);
	assert_int_equal(pk_repo_checkout(&f->lab, f->a, &err), 0);
	assert_true(pk_repo_head_published(&f->lab));
	assert_false(pk_repo_head_trusted(&f->lab));
	ancestor = pk_repo_trusted_ancestor(&f->lab, f->b, 8);
	assert_string_equal(ancestor, f->base);
	trusting.trusted_trees = trusted;
	pk_sandbox_configure(&trusting);
	assert_true(pk_repo_head_trusted(&f->lab));
	g_free(ancestor);
	ancestor = pk_repo_trusted_ancestor(&f->lab, f->b, 8);
	assert_string_equal(ancestor, f->a);
	pk_sandbox_configure(&saved);
	assert_int_equal(git_reference_delete(ref), 0);
	git_reference_free(ref);
	git_repository_free(repo);
	assert_int_equal(pk_repo_checkout(&f->lab, PK_LAB_BASE_TAG, &err), 0);
}

/*
 * A commit of another kernel series is tested in a tree of its own (a
 * worktree under the cache's trees/), so that the base's tree is never
 * rewritten by a switch; a worktree a test left without its top Makefile
 * is whole again the next time it is taken.
 */
static void test_lab_for_rev(void **state)
{
	struct fixture *f = *state;
	g_autofree char *cache = g_dir_make_tmp("test-repo-cache-XXXXXX", NULL);
	g_autofree char *older = commit_on(f, f->base, "an older kernel\n",
					    (const char *[]){ "Makefile", "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n",
							      "drivers/x.c", "int old;\n", NULL });
	g_autofree char *main_x = g_build_filename(f->dir, "drivers", "x.c", NULL);
	g_autofree char *want = g_build_filename(cache, PK_LAB_TREES_DIR, "6.1", NULL);
	g_autofree char *x = NULL, *other_x = NULL, *build_dir = NULL, *makefile = NULL, *rm = NULL;
	struct pk_lab older_lab = { .lock_fd = -1 }, base_lab = { .lock_fd = -1 };
	g_autoptr(GError) err = NULL;
	struct stat before, after;

	f->lab.cache = cache;
	f->lab.build_stem = g_build_filename(cache, "build", "cfg", NULL);
	assert_int_equal(pk_repo_checkout(&f->lab, PK_LAB_BASE_TAG, &err), 0);
	assert_int_equal(stat(main_x, &before), 0);
	if (pk_lab_for_rev(&older_lab, &f->lab, older, &err) < 0)
		fail_msg("%s", err->message);
	assert_string_equal(older_lab.tree, want);
	assert_int_equal(pk_repo_checkout(&older_lab, older, &err), 0);
	other_x = g_build_filename(older_lab.tree, "drivers", "x.c", NULL);
	assert_true(g_file_get_contents(other_x, &x, NULL, NULL));
	assert_string_equal(x, "int old;\n");
	build_dir = pk_lab_build_dir(&older_lab);
	assert_true(g_str_has_suffix(build_dir, "cfg-6.1"));
	/* the base's tree: its own, untouched */
	assert_int_equal(stat(main_x, &after), 0);
	assert_int_equal(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	assert_int_equal(pk_lab_for_rev(&base_lab, &f->lab, f->base, &err), 0);
	assert_string_equal(base_lab.tree, f->dir);
	/* a test killed with the worktree's Makefile deleted: whole again when it is taken */
	makefile = g_build_filename(older_lab.tree, "Makefile", NULL);
	assert_int_equal(g_unlink(makefile), 0);
	pk_lab_clear(&older_lab);
	assert_int_equal(pk_lab_for_rev(&older_lab, &f->lab, older, &err), 0);
	assert_true(g_file_test(makefile, G_FILE_TEST_IS_REGULAR));
	pk_lab_clear(&older_lab);
	pk_lab_clear(&base_lab);
	g_free((char *)f->lab.build_stem);
	f->lab.build_stem = NULL;
	f->lab.cache = NULL;
	rm = g_strdup_printf("rm -rf '%s'", cache);
	assert_int_equal(system(rm), 0);
}

/* A fetch that fails names its URL without the password or token in it ([tree] url). */
static void test_repo_fetch_hides_token(void **state)
{
	static const char *const urls[] = {
		"https://user:tok3nvalue@127.0.0.1:1/x.git",
		"https://tok3nvalue@127.0.0.1:1/x.git",
	};
	const char *specs[] = { "+refs/heads/main:refs/printkbot/trees/t/main", NULL };
	struct fixture *f = *state;

	for (size_t i = 0; i < G_N_ELEMENTS(urls); i++) {
		g_autoptr(GError) err = NULL;

		assert_int_equal(pk_repo_fetch(&f->lab, urls[i], specs, NULL, &err), -1);
		print_message("%s\n", err->message);
		assert_null(strstr(err->message, "tok3n"));
		assert_non_null(strstr(err->message, "***@127.0.0.1:1/x.git"));
	}
}

/*
 * A new build dir is marked as having built only published commits.  As
 * root (kernel overlayfs), anything else is built in a throwaway layer
 * (lab/layer.h), which keeps the mark: the build dir itself saw only
 * published builds.  Without layers, the first make step of anything else
 * drops the mark for good, and a dir that already existed never gets one.
 */
static void test_build_dir_published_only(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GError) err = NULL;
	struct pk_sandbox_config off = PK_SANDBOX_CONFIG_INIT;
	const char *noop[] = { "true", NULL };
	g_autofree char *build_dir = NULL, *marker = NULL;
	struct pk_lab lab = f->lab;   /* with a repository cache of its own, below: f->lab's is f->lab's */
	bool layers;

	off.mode = PK_SANDBOX_OFF;   /* what is tested is the mark, not the sandbox around "true" */
	pk_sandbox_configure(&off);
	lab.repo = pk_repo_cache_new();
	lab.cache = f->dir;
	lab.build_stem = g_build_filename(f->dir, "build", "cfg", NULL);
	build_dir = pk_lab_build_dir(&lab);
	marker = g_strconcat(build_dir, ".published-only", NULL);
	layers = pk_layer_usable(lab.cache, NULL);

	assert_int_equal(pk_repo_checkout(&lab, PK_LAB_BASE_TAG, &err), 0);
	assert_int_equal(pk_build_dir_make(&lab, &err), 0);
	assert_true(g_file_test(build_dir, G_FILE_TEST_IS_DIR));
	assert_true(g_file_test(marker, G_FILE_TEST_EXISTS));
	assert_int_equal(pk_build_step(&lab, "a base step", NULL, noop, NULL, &err), 0);
	assert_true(g_file_test(marker, G_FILE_TEST_EXISTS));
	assert_false(pk_layer_over(build_dir, NULL));

	assert_int_equal(pk_repo_checkout(&lab, f->a, &err), 0);
	assert_int_equal(pk_build_step(&lab, "a patch's step", NULL, noop, NULL, &err), 0);
	assert_int_equal(g_file_test(marker, G_FILE_TEST_EXISTS), layers);
	assert_int_equal(pk_layer_over(build_dir, NULL), layers);

	assert_int_equal(pk_repo_checkout(&lab, PK_LAB_BASE_TAG, &err), 0);
	assert_int_equal(pk_build_step(&lab, "a base step again", NULL, noop, NULL, &err), 0);
	assert_false(pk_layer_over(build_dir, NULL));   /* a published build drops the layer */
	assert_int_equal(pk_build_dir_make(&lab, &err), 0);
	assert_int_equal(g_file_test(marker, G_FILE_TEST_EXISTS), layers);
	pk_layer_drop_all();
	pk_repo_cache_free(lab.repo);
	g_free(lab.build_stem);
}

/*
 * make sees the same environment with sandbox = off as in the sandbox:
 * the reproducible build's variables and the prefix map (KCPPFLAGS) that
 * the compiler's command line carries.  Without it, each switch between
 * the two rebuilt every object of the build dir (e2e 041 ran one build
 * for 20 minutes).  A make first in PATH writes down what it was given.
 */
static void test_build_env_without_sandbox(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GError) err = NULL;
	struct pk_sandbox_config off = PK_SANDBOX_CONFIG_INIT;
	g_autofree char *bin = g_build_filename(f->dir, "fake-bin", NULL);
	g_autofree char *make = g_build_filename(bin, "make", NULL);
	g_autofree char *seen = g_build_filename(f->dir, "make.env", NULL);
	g_autofree char *path = g_strconcat(bin, ":", g_getenv("PATH"), NULL);
	g_autofree char *old_path = g_strdup(g_getenv("PATH"));
	g_autofree char *script = g_strdup_printf("#!/bin/sh\nenv > '%s'\n", seen);
	g_autofree char *env = NULL;
	struct pk_build_result res = { 0 };
	struct pk_lab lab = f->lab;   /* with a repository cache of its own, below: f->lab's is f->lab's */

	off.mode = PK_SANDBOX_OFF;
	pk_sandbox_configure(&off);
	lab.repo = pk_repo_cache_new();
	lab.cache = f->dir;
	lab.build_stem = g_build_filename(f->dir, "build", "cfg", NULL);
	assert_int_equal(g_mkdir_with_parents(bin, 0755), 0);
	assert_true(g_file_set_contents(make, script, -1, NULL));
	assert_int_equal(g_chmod(make, 0755), 0);
	g_setenv("PATH", path, TRUE);

	assert_int_equal(pk_repo_checkout(&lab, PK_LAB_BASE_TAG, &err), 0);
	assert_int_equal(pk_build_kernel(&res, &lab, &err), 0);
	g_setenv("PATH", old_path, TRUE);
	assert_true(res.ok);
	assert_false(res.sandboxed);
	assert_true(g_file_get_contents(seen, &env, NULL, NULL));
	assert_non_null(strstr(env, "\nKCPPFLAGS=-fmacro-prefix-map="));
	assert_non_null(strstr(env, "\nKBUILD_BUILD_TIMESTAMP=2024-01-01 00:00:00 UTC\n"));
	assert_non_null(strstr(env, "\nLOCALVERSION=\n"));
	pk_build_result_clear(&res);
	pk_layer_drop_all();
	pk_repo_cache_free(lab.repo);
	g_free(lab.build_stem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repo_import_tree),
		cmocka_unit_test(test_repo_resolve),
		cmocka_unit_test(test_repo_checkout),
		cmocka_unit_test(test_repo_commit_patch),
		cmocka_unit_test(test_repo_commit_limits),
		cmocka_unit_test(test_repo_changed_paths),
		cmocka_unit_test(test_repo_diff_patch),
		cmocka_unit_test(test_repo_makefile_series),
		cmocka_unit_test(test_repo_makefile_version),
		cmocka_unit_test(test_repo_head_published),
		cmocka_unit_test(test_repo_head_trusted),
		cmocka_unit_test(test_lab_for_rev),
		cmocka_unit_test(test_build_dir_published_only),
		cmocka_unit_test(test_build_env_without_sandbox),
		cmocka_unit_test(test_repo_fetch_hides_token),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
