/* test-apply.c - patches become commits in a git tree: offsets, failures, authorship. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lab/apply.h"
#include "lab/repo.h"
#include "base/proc.h"
#include "base/util.h"

/* A scratch repository with one commit, tagged base, holding f.c of 40 numbered lines. */
struct fixture {
	char *dir;
	struct pk_lab lab;
};

static void run_git(const char *dir, const char *const *args)
{
	const char *argv[16] = { "git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@t" };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result r;
	unsigned n = 7;

	for (; *args; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	assert_int_equal(pk_proc_run(&r, argv, &o, NULL), 0);
	assert_true(pk_proc_ok(&r));
}

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autoptr(GString) text = g_string_new(NULL);
	g_autofree char *path = NULL;

	f->dir = g_dir_make_tmp("printkbot-apply-XXXXXX", NULL);
	for (int i = 1; i <= 40; i++)
		g_string_append_printf(text, "line %d\n", i);
	path = g_build_filename(f->dir, "f.c", NULL);
	assert_true(g_file_set_contents(path, text->str, -1, NULL));
	g_free(path);
	path = g_build_filename(f->dir, "other.c", NULL);
	assert_true(g_file_set_contents(path, "untouched\n", -1, NULL));
	g_free(path);
	path = g_build_filename(f->dir, "MAINTAINERS", NULL);
	assert_true(g_file_set_contents(path, "FOO DRIVER\nM:\tA <a@b>\nS:\tMaintained\n", -1, NULL));
	run_git(f->dir, (const char *[]){ "init", "-q", NULL });
	run_git(f->dir, (const char *[]){ "add", ".", NULL });
	run_git(f->dir, (const char *[]){ "commit", "-q", "-m", "base", NULL });
	run_git(f->dir, (const char *[]){ "tag", "base", NULL });
	f->lab.tree = g_strdup(f->dir);
	f->lab.lock_fd = -1;
	f->lab.repo = pk_repo_cache_new();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "rm", "-rf", f->dir, NULL };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result r;

	pk_proc_run(&r, argv, &o, NULL);
	pk_repo_cache_free(f->lab.repo);
	g_free(f->lab.tree);
	g_free(f->dir);
	g_free(f);
	return 0;
}

static char *read_tree_file(struct fixture *f, const char *name)
{
	g_autofree char *path = g_build_filename(f->dir, name, NULL);
	char *text = NULL;

	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

/* The header says line 5, the text is at line 25: applied there, as git apply would. */
static const char offset_mail[] =
	"From: Jane Doe <jane@example.org>\n"
	"Subject: [PATCH v3 2/5] f: change line 25\n"
	"Date: Tue, 1 Dec 2026 10:00:00 +0100\n"
	"Message-ID: <offset@example.org>\n"
	"\n"
	"Change the twenty-fifth line.\n"
	"\n"
	"Signed-off-by: Jane Doe <jane@example.org>\n"
	"---\n"
	"diff --git a/f.c b/f.c\n"
	"--- a/f.c\n"
	"+++ b/f.c\n"
	"@@ -4,3 +4,3 @@\n"
	" line 24\n"
	"-line 25\n"
	"+line twenty-five\n"
	" line 26\n"
	"-- \n"
	"2.39.5\n";

static void test_offset_and_authorship(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GPtrArray) patches = NULL;
	struct pk_apply_result r;
	g_autofree char *text = NULL, *base = NULL;
	g_autoptr(GString) log = g_string_new(NULL);
	unsigned skipped;

	assert_int_equal(pk_patch_read_mails(&patches, &skipped, offset_mail, strlen(offset_mail), NULL), 0);
	assert_int_equal(pk_apply_patch(&r, &f->lab, "base", patches->pdata[0], NULL), 0);
	assert_true(r.applied);
	assert_null(r.failure);
	text = read_tree_file(f, "f.c");
	assert_non_null(strstr(text, "line 24\nline twenty-five\nline 26\n"));
	/* the commit carries the mail's author, date and message, not the [PATCH] tag */
	{
		const char *argv[] = { "git", "-C", f->dir, "log", "-1", "--format=%an <%ae>|%ad|%s|%b",
				       "--date=iso", "HEAD", NULL };
		struct pk_proc_opts o = PK_PROC_OPTS_INIT;
		struct pk_proc_result pr;

		o.capture = log;
		assert_int_equal(pk_proc_run(&pr, argv, &o, NULL), 0);
	}
	assert_non_null(strstr(log->str, "Jane Doe <jane@example.org>|2026-12-01 10:00:00 +0100|f: change line 25|"));
	assert_non_null(strstr(log->str, "Signed-off-by: Jane Doe"));
	assert_int_equal(strlen(r.commit), 40);
	/* back to the base: only the changed file is rewritten, the tree is the base again */
	assert_int_equal(pk_repo_checkout(&f->lab, "base", NULL), 0);
	base = read_tree_file(f, "f.c");
	assert_non_null(strstr(base, "line 24\nline 25\nline 26\n"));
	pk_apply_result_clear(&r);
}

/*
 * A quoted display name may hold < and > ("Dev <Team>" <dev@x.org>),
 * which libgit2 refuses in a signature: the patch still applies, the
 * brackets made parentheses.
 */
static void test_author_name_with_brackets(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GString) src = g_string_new(offset_mail);
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GString) log = g_string_new(NULL);
	g_autoptr(GError) err = NULL;
	struct pk_apply_result r;
	unsigned skipped;

	g_string_replace(src, "From: Jane Doe <jane@example.org>", "From: \"Dev <Team>\" <dev@example.org>", 1);
	assert_int_equal(pk_patch_read_mails(&patches, &skipped, src->str, src->len, NULL), 0);
	if (pk_apply_patch(&r, &f->lab, "base", patches->pdata[0], &err) < 0)
		fail_msg("apply: %s", err->message);
	assert_true(r.applied);
	{
		const char *argv[] = { "git", "-C", f->dir, "log", "-1", "--format=%an <%ae>", "HEAD", NULL };
		struct pk_proc_opts o = PK_PROC_OPTS_INIT;
		struct pk_proc_result pr;

		o.capture = log;
		assert_int_equal(pk_proc_run(&pr, argv, &o, NULL), 0);
	}
	assert_non_null(strstr(log->str, "Dev (Team) <dev@example.org>"));
	pk_apply_result_clear(&r);
	assert_int_equal(pk_repo_checkout(&f->lab, "base", NULL), 0);
}

static const char bad_second_hunk[] =
	"--- a/f.c\n"
	"+++ b/f.c\n"
	"@@ -2,1 +2,1 @@\n"
	"-line 2\n"
	"+line two\n"
	"@@ -30,3 +30,3 @@\n"
	" line 30\n"
	"-line thirty-one\n"
	"+line 31, again\n"
	" line 32\n";

static const char change_of_absent_file[] =
	"--- a/drivers/tty/absent.c\n"
	"+++ b/drivers/tty/absent.c\n"
	"@@ -1,1 +1,1 @@\n"
	"-line 1\n"
	"+line one\n";

static void test_failure_names_file_and_hunk(void **state)
{
	struct fixture *f = *state;
	g_autoptr(pk_patch) p = pk_patch_parse_diff(bad_second_hunk, strlen(bad_second_hunk));
	struct pk_apply_result r;
	g_autofree char *text = NULL;
	g_autoptr(GError) err = NULL;

	assert_int_equal(pk_apply_patch(&r, &f->lab, "base", p, NULL), 0);
	assert_false(r.applied);
	assert_null(r.commit);
	print_message("%s\n", r.failure);
	assert_non_null(strstr(r.failure, "f.c: hunk 2 (@@ -30,3 +30,3 @@) does not apply"));
	/* nothing half-applied: the tree is at the parent */
	text = read_tree_file(f, "f.c");
	assert_non_null(strstr(text, "\nline 2\n"));
	pk_apply_result_clear(&r);
	/* a file the base lacks is said so, not as libgit2 names the first missing directory */
	g_autoptr(pk_patch) absent = pk_patch_parse_diff(change_of_absent_file, strlen(change_of_absent_file));
	assert_int_equal(pk_apply_patch(&r, &f->lab, "base", absent, NULL), 0);
	assert_false(r.applied);
	assert_string_equal(r.failure, "drivers/tty/absent.c: does not apply: the base has no such file");
	pk_apply_result_clear(&r);
	/* a revision that does not exist is an error, not a result */
	assert_int_equal(pk_apply_patch(&r, &f->lab, "no-such-rev", p, &err), -1);
	assert_non_null(strstr(err->message, "no-such-rev"));
}

/* A MAINTAINERS hunk written against another tree, beside code that applies. */
static const char stale_maintainers[] =
	"--- a/MAINTAINERS\n"
	"+++ b/MAINTAINERS\n"
	"@@ -10,2 +10,3 @@\n"
	" BAR DRIVER\n"
	"+M:\tB <b@c>\n"
	" S:\tOdd Fixes\n"
	"--- a/f.c\n"
	"+++ b/f.c\n"
	"@@ -2,1 +2,1 @@\n"
	"-line 2\n"
	"+line two\n";

static const char only_stale_maintainers[] =
	"--- a/MAINTAINERS\n"
	"+++ b/MAINTAINERS\n"
	"@@ -10,2 +10,3 @@\n"
	" BAR DRIVER\n"
	"+M:\tB <b@c>\n"
	" S:\tOdd Fixes\n";

/*
 * A file no build reads whose hunks do not apply is left out and named,
 * the code applied; placement (pk_apply_series_check) agrees.  A patch of
 * nothing else, or whose code does not apply, still does not apply.
 */
static void test_inert_file_left_out(void **state)
{
	struct fixture *f = *state;
	g_autoptr(pk_patch) p = pk_patch_parse_diff(stale_maintainers, strlen(stale_maintainers));
	g_autoptr(pk_patch) only = pk_patch_parse_diff(only_stale_maintainers, strlen(only_stale_maintainers));
	const struct pk_patch *series[] = { p };
	g_autofree char *text = NULL, *maint = NULL, *failure = NULL;
	struct pk_apply_result r;

	assert_int_equal(pk_apply_patch(&r, &f->lab, "base", p, NULL), 0);
	assert_true(r.applied);
	assert_non_null(r.left_out);
	print_message("%s\n", r.left_out);
	assert_non_null(strstr(r.left_out, "MAINTAINERS: hunk 1"));
	text = read_tree_file(f, "f.c");
	assert_non_null(strstr(text, "\nline two\n"));
	maint = read_tree_file(f, "MAINTAINERS");
	assert_null(strstr(maint, "B <b@c>"));
	pk_apply_result_clear(&r);
	assert_int_equal(pk_apply_series_check(&failure, &f->lab, "base", series, 1, false, NULL), 1);
	assert_null(failure);

	assert_int_equal(pk_apply_patch(&r, &f->lab, "base", only, NULL), 0);
	assert_false(r.applied);
	assert_null(r.left_out);
	assert_non_null(strstr(r.failure, "MAINTAINERS: hunk 1"));
	pk_apply_result_clear(&r);
	assert_int_equal(pk_repo_checkout(&f->lab, "base", NULL), 0);
}

static void test_unparsable_diff(void **state)
{
	struct fixture *f = *state;
	static const char junk[] = "--- a/f.c\n+++ b/f.c\n@@ -1,1 +1,1 @@\n";
	g_autoptr(pk_patch) p = pk_patch_parse_diff(junk, strlen(junk));
	struct pk_apply_result r;

	assert_int_equal(pk_apply_patch(&r, &f->lab, "base", p, NULL), 0);
	assert_false(r.applied);
	assert_non_null(r.failure);
	pk_apply_result_clear(&r);
}

/*
 * What libgit2 would apply must be what the parsed patch (and so the
 * policy) saw: a rename or copy to another path, a symlink mode written
 * with a leading 0, a quoted path the parser reads otherwise, are refused
 * and nothing is applied.
 */
static void test_refuses_what_policy_did_not_see(void **state)
{
	struct fixture *f = *state;
	static const char *const hostile[] = {
		/* a pure rename: no ---/+++ lines for the parser, git moves f.c to scripts/ */
		"diff --git a/f.c b/scripts/evil\nsimilarity index 100%\nrename from f.c\nrename to scripts/evil\n"
		"diff --git a/other.c b/other.c\n--- a/other.c\n+++ b/other.c\n@@ -1 +1 @@\n-untouched\n+touched\n",
		/* a copy of other.c to scripts/evil beside a change of f.c */
		"diff --git a/other.c b/scripts/evil\nsimilarity index 100%\ncopy from other.c\ncopy to scripts/evil\n"
		"diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -2,1 +2,1 @@\n-line 2\n+line two\n",
		/* a symlink, its mode written so the text checks miss it */
		"diff --git a/link.c b/link.c\nnew file mode 0120000\n--- /dev/null\n+++ b/link.c\n"
		"@@ -0,0 +1 @@\n+/etc/shadow\n\\ No newline at end of file\n",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(hostile); i++) {
		g_autoptr(pk_patch) p = pk_patch_parse_diff(hostile[i], strlen(hostile[i]));
		struct pk_apply_result r;
		g_autofree char *text = NULL;

		assert_int_equal(pk_apply_patch(&r, &f->lab, "base", p, NULL), 0);
		print_message("case %zu: %s\n", i, r.failure ? r.failure : "(applied)");
		assert_false(r.applied);
		assert_true(r.refused);
		text = read_tree_file(f, "f.c");
		assert_non_null(strstr(text, "\nline 2\n"));
		assert_false(g_file_test(f->dir, G_FILE_TEST_IS_SYMLINK));
		pk_apply_result_clear(&r);
	}
}

/*
 * A mail the parser had to repair (a hunk line the mailer wrapped) is not
 * applied from the repaired reading: git am rejects it, and so does apply,
 * saying why; the tree stays at the parent.
 */
static void test_refuses_corrupt_mail(void **state)
{
	struct fixture *f = *state;
	static const char wrapped[] =
		"--- a/f.c\n+++ b/f.c\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n"
		"+line 3, now with a text long enough that the mailer of its sender wrapped\n"
		"it\n line 4\n";
	g_autoptr(pk_patch) p = pk_patch_parse_diff(wrapped, strlen(wrapped));
	struct pk_apply_result r;
	g_autofree char *text = NULL;

	assert_null(p->error);
	assert_int_equal(p->damage->len, 1);
	assert_int_equal(pk_apply_patch(&r, &f->lab, "base", p, NULL), 0);
	assert_false(r.applied);
	assert_false(r.refused);
	print_message("%s\n", r.failure);
	assert_non_null(strstr(r.failure, "the mail is corrupt: line 7 (the end of an added line) was wrapped"));
	assert_non_null(strstr(r.failure, "git am rejects it"));
	text = read_tree_file(f, "f.c");
	assert_non_null(strstr(text, "\nline 3\n"));
	pk_apply_result_clear(&r);
}

/* A mail of one diff, as a list carries it. */
static char *diff_mail(const char *subject, const char *diff)
{
	return g_strdup_printf("From: Jane Doe <jane@example.org>\nSubject: [PATCH] %s\n"
			       "Date: Tue, 1 Dec 2026 10:00:00 +0100\nMessage-ID: <%s@example.org>\n\nWhy.\n---\n%s",
			       subject, subject, diff);
}

/* git's own answer: diff applied with `git apply --cached` to rev's tree in a scratch index. */
static char *git_applied_tree(struct fixture *f, const char *rev, const char *diff)
{
	g_autofree char *index = g_build_filename(f->dir, ".git", "scratch-index", NULL);
	g_autofree char *patch = g_build_filename(f->dir, ".git", "scratch.patch", NULL);
	g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GIT_INDEX_FILE", index, TRUE);
	const char *read_tree[] = { "git", "-C", f->dir, "read-tree", rev, NULL };
	const char *apply[] = { "git", "-C", f->dir, "apply", "--cached", patch, NULL };
	const char *write_tree[] = { "git", "-C", f->dir, "write-tree", NULL };
	g_autofree char *out = NULL;
	int status;

	assert_true(g_file_set_contents(patch, diff, -1, NULL));
	assert_true(g_spawn_sync(NULL, (char **)read_tree, env, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
				 &status, NULL) && status == 0);
	assert_true(g_spawn_sync(NULL, (char **)apply, env, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
				 &status, NULL) && status == 0);
	assert_true(g_spawn_sync(NULL, (char **)write_tree, env, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, NULL,
				 &status, NULL) && status == 0);
	return g_strstrip(g_steal_pointer(&out));
}

/*
 * The bot applies a patch to the files it touches, not to an index of the
 * whole tree: the tree it makes is git's, byte for byte, for what a patch
 * can do: add in a new directory, change, delete a file and so a whole
 * directory.
 */
static void test_trees_as_git_makes_them(void **state)
{
	static const struct { const char *name, *diff; } cases[] = {
		{ "add-and-change",
		  "diff --git a/drivers/new/x/n.c b/drivers/new/x/n.c\nnew file mode 100644\n"
		  "--- /dev/null\n+++ b/drivers/new/x/n.c\n@@ -0,0 +1 @@\n+new\n"
		  "diff --git a/drivers/tty/a.c b/drivers/tty/a.c\n--- a/drivers/tty/a.c\n+++ b/drivers/tty/a.c\n"
		  "@@ -1 +1 @@\n-a\n+a2\n"
		  "diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -1,2 +1,2 @@\n-line 1\n+line one\n line 2\n" },
		{ "delete-a-file",
		  "diff --git a/other.c b/other.c\ndeleted file mode 100644\n--- a/other.c\n+++ /dev/null\n"
		  "@@ -1 +0,0 @@\n-untouched\n" },
		{ "delete-a-directory",
		  "diff --git a/drivers/tty/a.c b/drivers/tty/a.c\ndeleted file mode 100644\n--- a/drivers/tty/a.c\n"
		  "+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
		  "diff --git a/drivers/tty/b.c b/drivers/tty/b.c\ndeleted file mode 100644\n--- a/drivers/tty/b.c\n"
		  "+++ /dev/null\n@@ -1,2 +0,0 @@\n-b1\n-b2\n" },
	};
	struct fixture *f = *state;
	g_autofree char *dir = g_build_filename(f->dir, "drivers", "tty", NULL);
	g_autofree char *a = g_build_filename(dir, "a.c", NULL), *b = g_build_filename(dir, "b.c", NULL);

	assert_int_equal(g_mkdir_with_parents(dir, 0755), 0);
	assert_true(g_file_set_contents(a, "a\n", -1, NULL));
	assert_true(g_file_set_contents(b, "b1\nb2\n", -1, NULL));
	run_git(f->dir, (const char *[]){ "add", ".", NULL });
	run_git(f->dir, (const char *[]){ "commit", "-q", "-m", "drivers", NULL });
	run_git(f->dir, (const char *[]){ "tag", "base2", NULL });
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *mail = diff_mail(cases[i].name, cases[i].diff);
		g_autoptr(GPtrArray) patches = NULL;
		g_autofree char *ours = NULL, *gits = NULL, *rev = NULL;
		const char *parse[] = { "git", "-C", f->dir, "rev-parse", NULL, NULL };
		struct pk_apply_result r;
		unsigned skipped;
		int status;

		print_message("case: %s\n", cases[i].name);
		assert_int_equal(pk_patch_read_mails(&patches, &skipped, mail, strlen(mail), NULL), 0);
		assert_int_equal(pk_apply_patch(&r, &f->lab, "base2", patches->pdata[0], NULL), 0);
		assert_true(r.applied);
		parse[4] = rev = g_strconcat(r.commit, "^{tree}", NULL);
		assert_true(g_spawn_sync(NULL, (char **)parse, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &ours, NULL,
					 &status, NULL) && status == 0);
		gits = git_applied_tree(f, "base2", cases[i].diff);
		assert_string_equal(g_strstrip(ours), gits);
		pk_apply_result_clear(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_author_name_with_brackets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offset_and_authorship, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_names_file_and_hunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inert_file_left_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unparsable_diff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_what_policy_did_not_see, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_corrupt_mail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trees_as_git_makes_them, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
