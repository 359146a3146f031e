/*
 * test-range.c - ranges read from a small repository made here with
 * libgit2: the spellings git users write, first parents and merges, bad
 * ranges, a commit brought into another repository and read as a patch.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <git2.h>
#include <glib/gstdio.h>

#include "intake/range.h"
#include "lab/repo.h"
#include "base/gitutil.h"
#include "base/util.h"

/*
 * The history:
 *
 *   R --- A --- B --- M --- C      master (HEAD at B), tag "base" at R
 *          \         /
 *           S ------'              side
 *
 * R is a kernel-like tree (Makefile with a version, Kconfig, init/main.c).
 */
struct repo_fixture {
	char *dir, *lab_dir;
	char R[GIT_OID_HEXSZ + 1], A[GIT_OID_HEXSZ + 1], B[GIT_OID_HEXSZ + 1];
	char S[GIT_OID_HEXSZ + 1], M[GIT_OID_HEXSZ + 1], C[GIT_OID_HEXSZ + 1];
};

static const char makefile[] = "# SPDX\nVERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 3\nEXTRAVERSION =\nNAME = Baby Opossum Posse\n";

/* Commit the files (path, content pairs, NULL-terminated) on parents; id into hex. */
static void commit(git_repository *repo, char *hex, const char *msg, const char *const *parents,
		   const char *const *files)
{
	git_index *index;
	git_oid tree_id, id;
	git_tree *tree;
	git_signature *sig;
	const git_commit *pc[2] = { 0 };
	size_t np = 0;
	static git_time_t when = 1764583200;   /* each commit a minute after the one before */

	/* the repository's own index, emptied: add_from_buffer writes blobs through it */
	assert_int_equal(git_repository_index(&index, repo), 0);
	assert_int_equal(git_index_clear(index), 0);
	for (const char *const *f = files; *f; f += 2) {
		git_index_entry e = { 0 };

		e.path = f[0];
		e.mode = GIT_FILEMODE_BLOB;
		assert_int_equal(git_index_add_from_buffer(index, &e, f[1], strlen(f[1])), 0);
	}
	assert_int_equal(git_index_write_tree_to(&tree_id, index, repo), 0);
	assert_int_equal(git_tree_lookup(&tree, repo, &tree_id), 0);
	assert_int_equal(git_signature_new(&sig, "Jane Developer", "jane@example.org", when += 60, 60), 0);
	for (; parents && parents[np]; np++) {
		git_oid pid;
		git_oid_fromstr(&pid, parents[np]);
		assert_int_equal(git_commit_lookup((git_commit **)&pc[np], repo, &pid), 0);
	}
	assert_int_equal(git_commit_create(&id, repo, NULL, sig, sig, NULL, msg, tree, np, pc), 0);
	git_oid_tostr(hex, GIT_OID_HEXSZ + 1, &id);
	for (size_t i = 0; i < np; i++)
		git_commit_free((git_commit *)pc[i]);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(index);
}

static void set_ref(git_repository *repo, const char *name, const char *hex)
{
	git_reference *ref;
	git_oid id;

	git_oid_fromstr(&id, hex);
	assert_int_equal(git_reference_create(&ref, repo, name, &id, 1, NULL), 0);
	git_reference_free(ref);
}

static int setup(void **state)
{
	struct repo_fixture *f = g_new0(struct repo_fixture, 1);
	git_repository *repo, *lab;
	git_object *obj;

	pk_git_init();
	f->dir = g_dir_make_tmp("test-range-XXXXXX", NULL);
	f->lab_dir = g_build_filename(f->dir, "lab", NULL);
	assert_int_equal(git_repository_init(&repo, f->dir, 0), 0);
	{
		const char *r[] = { "Makefile", makefile, "Kconfig", "mainmenu \"Linux\"\n",
				    "init/main.c", "int main;\n", "drivers/x.c", "void x(void)\n{\n\tprintk(KERN_INFO \"x: hello\\n\");\n}\n", NULL };
		const char *a[] = { "Makefile", makefile, "Kconfig", "mainmenu \"Linux\"\n",
				    "init/main.c", "int main;\n", "drivers/x.c", "void x(void)\n{\n\tpr_info(\"x: hello\\n\");\n}\n", NULL };
		const char *b[] = { "Makefile", makefile, "Kconfig", "mainmenu \"Linux\"\n",
				    "init/main.c", "int main;\n", "drivers/x.c", "void x(void)\n{\n\tpr_info(\"x: hello there\\n\");\n}\n", NULL };
		const char *s[] = { "Makefile", makefile, "Kconfig", "mainmenu \"Linux\"\n",
				    "init/main.c", "int main; /* side */\n", "drivers/x.c", "void x(void)\n{\n\tpr_info(\"x: hello\\n\");\n}\n", NULL };
		const char *m[] = { "Makefile", makefile, "Kconfig", "mainmenu \"Linux\"\n",
				    "init/main.c", "int main; /* side */\n", "drivers/x.c", "void x(void)\n{\n\tpr_info(\"x: hello there\\n\");\n}\n", NULL };
		const char *c[] = { "Makefile", makefile, "Kconfig", "mainmenu \"Linux\"\n",
				    "init/main.c", "int main; /* side */\n", "drivers/x.c", "void x(void)\n{\n\tpr_info(\"x: hello there\\n\");\n}\n",
				    "drivers/y.c", "/* y */\n", NULL };
		const char *pr[] = { f->R, NULL }, *pa[] = { f->A, NULL };
		const char *pm[] = { f->B, f->S, NULL }, *pc[] = { f->M, NULL };

		commit(repo, f->R, "init: the base\n", NULL, r);
		commit(repo, f->A, "x: use pr_info\n\nA conversion.\n", pr, a);
		commit(repo, f->B, "x: say hello there\n", pa, b);
		commit(repo, f->S, "init: a comment on the side\n", pa, s);
		commit(repo, f->M, "Merge branch 'side'\n", pm, m);
		commit(repo, f->C, "y: a new file\n", pc, c);
	}
	set_ref(repo, "refs/heads/master", f->C);
	set_ref(repo, "refs/heads/side", f->S);
	assert_int_equal(git_revparse_single(&obj, repo, f->R), 0);
	{
		git_oid tag;
		git_signature *sig;
		git_signature_new(&sig, "Jane Developer", "jane@example.org", 1764583200, 0);
		assert_int_equal(git_tag_create(&tag, repo, "base", obj, sig, "the base\n", 0), 0);
		git_signature_free(sig);
	}
	git_object_free(obj);
	/* HEAD detached at B, so that "..X" and "X.." mean something */
	{
		git_oid b;
		git_oid_fromstr(&b, f->B);
		assert_int_equal(git_repository_set_head_detached(repo, &b), 0);
	}
	git_repository_free(repo);
	/* an empty "lab" repository that the range is imported into */
	assert_int_equal(git_repository_init(&lab, f->lab_dir, 0), 0);
	git_repository_free(lab);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct repo_fixture *f = *state;
	const char *argv[] = { "rm", "-rf", f->dir, NULL };

	g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
	g_free(f->dir);
	g_free(f->lab_dir);
	g_free(f);
	return 0;
}

/* The commits of a range as their fixture names ("A B M C"). */
static char *names(const struct repo_fixture *f, const struct pk_range *r)
{
	GString *s = g_string_new(NULL);
	const char *ids[] = { f->R, f->A, f->B, f->S, f->M, f->C };
	const char *n[] = { "R", "A", "B", "S", "M", "C" };

	for (guint i = 0; i < r->commits->len; i++) {
		const struct pk_range_commit *c = r->commits->pdata[i];
		const char *name = "?";
		for (size_t k = 0; k < G_N_ELEMENTS(ids); k++)
			if (!strcmp(c->id, ids[k]))
				name = n[k];
		g_string_append_printf(s, "%s%s%s", i ? " " : "", name, c->merge ? "(merge)" : "");
	}
	return g_string_free(s, FALSE);
}

struct range_case {
	const char *name;
	const char *spec[3];       /* words; "@R" etc. stand for the fixture's ids */
	bool all_parents;
	bool default_bases;        /* offer "nosuch", then "base" for a one-revision range */
	const char *commits;       /* expected, or NULL for an error */
	const char *base;          /* the expected base's name */
	const char *error_has;
};

static const struct range_case cases[] = {
	{ "A..B", { "base..master" }, false, false, "A B M(merge) C", "R", NULL },
	{ "B ^A as two words", { "master", "^base" }, false, false, "A B M(merge) C", "R", NULL },
	{ "B ^A as one word", { "master ^base" }, false, false, "A B M(merge) C", "R", NULL },
	{ "ids", { "@A..@B" }, false, false, "B", "A", NULL },
	{ "X^! is one commit", { "@B^!" }, false, false, "B", "A", NULL },
	{ "..X is HEAD..X", { "..master" }, false, false, "M(merge) C", "B", NULL },
	{ "X.. is X..HEAD", { "base.." }, false, false, "A B", "R", NULL },
	{ "one ref over the first default base it has", { "master" }, false, true, "A B M(merge) C", "R", NULL },
	{ "all parents", { "base..master" }, true, false, "A B S M(merge) C", "R", NULL },
	{ "side branch", { "base..side" }, false, false, "A S", "R", NULL },
	{ "one ref without bases", { "master" }, false, false, NULL, NULL, "is one revision: give the range as BASE..master" },
	{ "not a revision", { "nosuch..master" }, false, false, NULL, NULL, "'nosuch' is not a revision in" },
	{ "symmetric difference", { "base...master" }, false, false, NULL, NULL, "symmetric difference" },
	{ "empty", { "master..base" }, false, false, NULL, NULL, "names no commit" },
	{ "two tips", { "base..master", "side" }, false, false, NULL, NULL, "more than one tip" },
	{ "no tip", { "^base" }, false, false, NULL, NULL, "no tip" },
};

/* "@B" -> B's id. */
static char *expand(const struct repo_fixture *f, const char *word)
{
	g_autoptr(GString) s = g_string_new(word);

	g_string_replace(s, "@R", f->R, 0);
	g_string_replace(s, "@A", f->A, 0);
	g_string_replace(s, "@B", f->B, 0);
	return g_string_free(g_steal_pointer(&s), FALSE);
}

static void test_range_table(void **state)
{
	struct repo_fixture *f = *state;

	for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
		const struct range_case *c = &cases[k];
		const char *bases[] = { "nosuch", "base", NULL };
		struct pk_range_opts opts = PK_RANGE_OPTS_INIT;
		g_autoptr(GPtrArray) spec = g_ptr_array_new_with_free_func(g_free);
		g_autoptr(pk_range) r = NULL;
		g_autoptr(GError) err = NULL;
		int rc;

		for (size_t w = 0; w < G_N_ELEMENTS(c->spec) && c->spec[w]; w++)
			g_ptr_array_add(spec, expand(f, c->spec[w]));
		g_ptr_array_add(spec, NULL);
		opts.all_parents = c->all_parents;
		opts.default_bases = c->default_bases ? bases : NULL;
		rc = pk_range_read(&r, f->dir, (const char *const *)spec->pdata, &opts, &err);
		if (!c->commits) {
			print_message("%s: %s\n", c->name, err ? err->message : "(no error)");
			assert_int_equal(rc, -1);
			assert_null(r);
			assert_non_null(strstr(err->message, c->error_has));
			continue;
		}
		if (rc < 0)
			fail_msg("%s: %s", c->name, err->message);
		{
			g_autofree char *got = names(f, r);
			const char *base = !strcmp(r->base, f->R) ? "R" : !strcmp(r->base, f->A) ? "A"
					 : !strcmp(r->base, f->B) ? "B" : "?";

			print_message("%s: %s (base %s)\n", c->name, got, base);
			assert_string_equal(got, c->commits);
			assert_string_equal(base, c->base);
		}
	}
}

static void test_range_details(void **state)
{
	struct repo_fixture *f = *state;
	const char *spec[] = { "base..master", NULL };
	g_autoptr(pk_range) r = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *sub = g_build_filename(f->dir, "drivers", NULL);
	g_autofree char *cwd = g_get_current_dir();
	const struct pk_range_commit *b;

	/* found from a directory inside the worktree, as git does */
	g_mkdir_with_parents(sub, 0755);
	assert_int_equal(chdir(sub), 0);
	assert_int_equal(pk_range_read(&r, NULL, spec, NULL, &err), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_string_equal(r->tip, f->C);
	assert_int_equal(r->merges, 1);
	assert_string_equal(r->spec, "base..master");
	b = pk_range_find(r, f->B);
	assert_non_null(b);
	assert_string_equal(b->subject, "x: say hello there");
	assert_string_equal(b->author, "Jane Developer <jane@example.org>");
	assert_string_equal(b->parent, f->A);
	assert_null(pk_range_find(r, f->S));
	{
		g_autofree char *version = NULL;
		assert_int_equal(pk_range_check_kernel(r, &version, &err), 0);
		assert_string_equal(version, "6.12.3");
	}
}

static void test_range_not_a_repository(void **state)
{
	struct repo_fixture *f = *state;
	g_autofree char *dir = g_dir_make_tmp("test-range-norepo-XXXXXX", NULL);
	const char *spec[] = { "HEAD", NULL };
	g_autoptr(pk_range) r = NULL;
	g_autoptr(GError) err = NULL;

	(void)f;
	assert_int_equal(pk_range_read(&r, dir, spec, NULL, &err), -1);
	assert_non_null(strstr(err->message, "not a git repository"));
	g_rmdir(dir);
}

static void test_range_not_a_kernel(void **state)
{
	struct repo_fixture *f = *state;
	g_autofree char *dir = g_build_filename(f->dir, "plain", NULL);
	git_repository *repo;
	char id[GIT_OID_HEXSZ + 1], id2[GIT_OID_HEXSZ + 1];
	const char *files[] = { "README", "hello\n", NULL }, *files2[] = { "README", "hello again\n", NULL };
	const char *parents[] = { id, NULL };
	g_autofree char *spec0 = NULL;
	const char *spec[] = { NULL, NULL };
	g_autoptr(pk_range) r = NULL;
	g_autoptr(GError) err = NULL;

	assert_int_equal(git_repository_init(&repo, dir, 0), 0);
	commit(repo, id, "readme\n", NULL, files);
	commit(repo, id2, "readme again\n", parents, files2);
	git_repository_free(repo);
	spec[0] = spec0 = g_strdup_printf("%s..%s", id, id2);
	assert_int_equal(pk_range_read(&r, dir, spec, NULL, &err), 0);
	assert_int_equal(pk_range_check_kernel(r, NULL, &err), -1);
	assert_non_null(strstr(err->message, "is not a Linux kernel tree"));
}

/* Import into another repository, then read a commit there as a patch. */
static void test_range_import_and_patch(void **state)
{
	struct repo_fixture *f = *state;
	const char *spec[] = { "base..master", NULL };
	struct pk_lab lab = { .tree = f->lab_dir, .lock_fd = -1, .repo = pk_repo_cache_new() };
	g_autoptr(pk_range) r = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_patch) patch = NULL;
	g_autofree char *parent = NULL, *shallow = NULL, *shallow_path = NULL;
	unsigned copied = 0, again = 0;

	assert_int_equal(pk_range_read(&r, f->dir, spec, NULL, &err), 0);
	assert_int_equal(pk_range_import(r, &lab, &copied, &err), 0);
	/* 6 commits (R, A, B, M, C and none of S: first parents only, M's tree covers it) */
	print_message("copied %u objects\n", copied);
	assert_true(copied > 6);
	assert_int_equal(pk_range_import(r, &lab, &again, &err), 0);
	assert_int_equal(again, 0);   /* all there already */
	/* M's second parent was not copied (first parents only): M is listed as shallow, R (a root) is not */
	shallow_path = g_build_filename(f->lab_dir, ".git", "shallow", NULL);
	assert_int_equal(pk_read_file(&shallow, NULL, shallow_path, 4096, &err), 0);
	assert_non_null(strstr(shallow, f->M));
	assert_null(strstr(shallow, f->R));
	{
		/* a lab that lacks the base's parent: the base is listed too */
		g_autofree char *dir2 = g_build_filename(f->dir, "lab2", NULL);
		g_autofree char *spec2 = g_strdup_printf("%s..master", f->A);
		g_autofree char *path2 = g_build_filename(dir2, ".git", "shallow", NULL);
		g_autofree char *shallow2 = NULL;
		const char *words[] = { spec2, NULL };
		struct pk_lab lab2 = { .tree = dir2, .lock_fd = -1, .repo = pk_repo_cache_new() };
		g_autoptr(pk_range) r2 = NULL;
		git_repository *repo;

		assert_int_equal(git_repository_init(&repo, dir2, 0), 0);
		git_repository_free(repo);
		assert_int_equal(pk_range_read(&r2, f->dir, words, NULL, &err), 0);
		assert_int_equal(pk_range_import(r2, &lab2, NULL, &err), 0);
		assert_int_equal(pk_read_file(&shallow2, NULL, path2, 4096, &err), 0);
		assert_non_null(strstr(shallow2, f->A));
		pk_repo_cache_free(lab2.repo);
	}

	patch = pk_repo_commit_patch(&lab, f->B, NULL, &parent, &err);
	assert_non_null(patch);
	assert_string_equal(parent, f->A);
	assert_string_equal(patch->subject, "x: say hello there");
	assert_string_equal(patch->author_name, "Jane Developer");
	assert_string_equal(patch->author_email, "jane@example.org");
	assert_non_null(patch->date);
	assert_non_null(strstr(patch->date, "+0100"));
	assert_null(patch->error);
	assert_int_equal(patch->files->len, 1);
	assert_string_equal(((struct pk_diff_file *)patch->files->pdata[0])->new_path, "drivers/x.c");
	assert_non_null(strstr(patch->diff, "+\tpr_info(\"x: hello there\\n\");"));
	{
		g_autoptr(pk_patch) root = NULL;
		g_autofree char *p2 = NULL;
		g_autoptr(GError) e2 = NULL;

		root = pk_repo_commit_patch(&lab, f->R, NULL, &p2, &e2);
		assert_null(root);
		assert_non_null(strstr(e2->message, "root commit"));
	}
	pk_repo_cache_free(lab.repo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_table),
		cmocka_unit_test(test_range_details),
		cmocka_unit_test(test_range_not_a_repository),
		cmocka_unit_test(test_range_not_a_kernel),
		cmocka_unit_test(test_range_import_and_patch),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
