/*
 * test-bases.c - the lab's bases: another tree imported as a base, the
 * base a series goes on (as it stands, then by a 3-way merge), a
 * [tree]'s branch fetched and named by its version, its tags left out
 * (a tag pushed to a tree never becomes one of the lab's names), and
 * which base-commits are taken (only full ids of published commits) and
 * how often one the lab lacks fetches the trees again; a series run
 * (pipeline/sequence.h) on the base it chooses or is given.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lab/apply.h"
#include "lab/bases.h"
#include "lab/describe.h"
#include "lab/repo.h"
#include "pipeline/sequence.h"
#include "config/config.h"
#include "base/proc.h"
#include "base/util.h"

struct fixture {
	char *dir;                /* the lab's tree: f.c of 40 lines, tagged base */
	char *other;              /* another tree: line 25 is "LINE 25", imported as debian:9.9 */
	struct pk_lab lab;
};

static char *run_git(const char *dir, const char *const *args)
{
	const char *argv[20] = { "git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@t" };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result r;
	GString *out = g_string_new(NULL);
	unsigned n = 7;

	for (; *args; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	o.capture = out;
	assert_int_equal(pk_proc_run(&r, argv, &o, NULL), 0);
	assert_true(pk_proc_ok(&r));
	return g_strstrip(g_string_free(out, FALSE));
}

static void write_f(const char *dir, const char *name, bool upper25)
{
	g_autoptr(GString) text = g_string_new(NULL);
	g_autofree char *path = g_build_filename(dir, name, NULL);

	for (int i = 1; i <= 40; i++)
		g_string_append_printf(text, i == 25 && upper25 ? "LINE %d\n" : "line %d\n", i);
	assert_true(g_file_set_contents(path, text->str, -1, NULL));
}

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);

	f->dir = g_dir_make_tmp("printkbot-bases-XXXXXX", NULL);
	f->other = g_dir_make_tmp("printkbot-bases-other-XXXXXX", NULL);
	write_f(f->dir, "f.c", false);
	write_f(f->other, "f.c", true);
	g_free(run_git(f->dir, (const char *[]){ "init", "-q", NULL }));
	g_free(run_git(f->dir, (const char *[]){ "add", ".", NULL }));
	g_free(run_git(f->dir, (const char *[]){ "commit", "-q", "-m", "base", NULL }));
	g_free(run_git(f->dir, (const char *[]){ "tag", "base", NULL }));
	f->lab.tree = g_strdup(f->dir);
	f->lab.lock_fd = -1;
	f->lab.repo = pk_repo_cache_new();
	assert_int_equal(pk_repo_import_dir(&f->lab, f->other, "Linux 9.9 from Debian's linux-source-9.9",
					    "printkbot-debian-9.9", NULL), 0);
	*state = f;
	return 0;
}

static void rm_rf(const char *dir)
{
	const char *argv[] = { "rm", "-rf", dir, NULL };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result r;

	pk_proc_run(&r, argv, &o, NULL);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	rm_rf(f->dir);
	rm_rf(f->other);
	pk_repo_cache_free(f->lab.repo);
	g_free(f->lab.tree);
	g_free(f->dir);
	g_free(f->other);
	g_free(f);
	return 0;
}

static struct pk_patch *patch_of(const char *diff)
{
	g_autoptr(GPtrArray) patches = NULL;
	g_autofree char *mail = g_strdup_printf("From: T <t@t>\nSubject: [PATCH] f\n\nx\n---\n%s", diff);
	unsigned skipped;

	assert_int_equal(pk_patch_read_mails(&patches, &skipped, mail, strlen(mail), NULL), 0);
	assert_int_equal(patches->len, 1);
	return g_steal_pointer(&patches->pdata[0]);
}

static const char upper_diff[] =
	"diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -24,3 +24,3 @@\n line 24\n-LINE 25\n+Line 25\n line 26\n";
static const char nowhere_diff[] =
	"diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -24,3 +24,3 @@\n line 24\n-line 99\n+Line 99\n line 26\n";

/* The import is a second root commit with its own tree; HEAD and the worktree stay. */
static void test_import(void **state)
{
	struct fixture *f = *state;
	g_autofree char *text = NULL, *head = pk_repo_resolve(&f->lab, "HEAD", NULL);
	g_autofree char *base = pk_repo_resolve(&f->lab, "base", NULL);

	assert_int_equal(pk_repo_read_file(&text, NULL, &f->lab, "printkbot-debian-9.9", "f.c", NULL), 0);
	assert_non_null(strstr(text, "LINE 25\n"));
	assert_string_equal(head, base);
	g_autofree char *ref = pk_bases_ref("debian:9.9");
	assert_string_equal(ref, "printkbot-debian-9.9");
}

/* The first base the whole series applies to; none: the first, every base named with why. */
static void test_choose(void **state)
{
	struct fixture *f = *state;
	g_autoptr(pk_patch) up = patch_of(upper_diff), nowhere = patch_of(nowhere_diff);
	const char *bases[] = { "base", "debian:9.9", NULL };
	const struct pk_patch *series[] = { up };
	const struct pk_patch *bad[] = { nowhere };
	struct pk_base_choice c;
	char *reason = g_strdup("f.c: hunk 1 does not apply");

	assert_int_equal(pk_bases_choose(&c, &f->lab, NULL, NULL, NULL, bases, series, 1, NULL), 0);
	assert_true(c.applies);
	assert_false(c.three_way);
	assert_string_equal(c.name, "debian:9.9");
	assert_non_null(strstr(c.tried, "base: f.c: hunk 1"));
	pk_base_choice_clear(&c);

	assert_int_equal(pk_bases_choose(&c, &f->lab, NULL, NULL, NULL, bases, bad, 1, NULL), 0);
	assert_false(c.applies);
	assert_string_equal(c.name, "base");
	{
		/* the reason as the first base failed: a base failing alike is named, the failure said once */
		const char *why = c.tried + strlen("base: ");
		char *same = g_strndup(why, strstr(why, "; ") - why);

		pk_bases_tried_reason(&same, &c);
		assert_true(g_str_has_suffix(same, ". No base the bot has takes the series: it fails so on each "
					     "(base, debian:9.9)."));
		assert_null(strstr(strstr(same, "hunk") + 1, "hunk"));   /* the failure said once */
		g_free(same);
	}
	pk_bases_tried_reason(&reason, &c);
	assert_non_null(strstr(reason, "No base takes the whole series: base: f.c"));
	assert_non_null(strstr(reason, "; debian:9.9: f.c"));
	g_free(reason);
	pk_base_choice_clear(&c);

	/* a base-commit the lab has wins, applying or not */
	g_autofree char *id = pk_repo_resolve(&f->lab, "base", NULL);
	assert_int_equal(pk_bases_choose(&c, &f->lab, id, NULL, NULL, bases, series, 1, NULL), 0);
	assert_string_equal(c.rev, id);
	assert_true(g_str_has_prefix(c.name, "base-commit "));
	pk_base_choice_clear(&c);
}

/* A series run: a mail without a patch and one over the size limits are not tried on a base. */
static void test_sequence(void **state)
{
	struct fixture *f = *state;
	static const char big_nowhere_diff[] =
		"diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -24,5 +24,5 @@\n line 24\n"
		"-line 97\n-line 98\n-line 99\n+L97\n+L98\n+L99\n line 26\n";
	g_autoptr(pk_patch) up = patch_of(upper_diff), big = patch_of(big_nowhere_diff);
	const char *bases[] = { "base", "debian:9.9", NULL };
	struct pk_sequence_where where = { .bases = bases };
	g_autofree char *base_id = pk_repo_resolve(&f->lab, "base", NULL);
	struct pk_config config = { 0 };
	struct pk_sequence s;

	pk_sequence_init(&s, &f->lab, NULL);
	pk_sequence_add(&s, NULL);
	pk_sequence_add(&s, up);
	pk_sequence_add(&s, big);
	s.opts.policy.max_lines = 6;
	assert_int_equal(pk_sequence_choose_base(&s, &where, NULL), 0);
	assert_string_equal(s.base.name, "debian:9.9");
	assert_true(s.base.applies);
	assert_string_equal(s.parent, s.base.rev);
	assert_string_equal(s.opts.noise_base, s.base.rev);   /* its own copy */
	assert_string_equal(pk_sequence_base_named(&s), "debian:9.9");
	pk_sequence_advance(&s, NULL);
	assert_string_equal(s.parent, s.base.rev);
	pk_sequence_advance(&s, base_id);
	assert_string_equal(s.parent, base_id);
	pk_sequence_clear(&s);

	/* asked for by name: that base, applying or not, nothing tried; named by its commit */
	pk_sequence_init(&s, &f->lab, NULL);
	pk_sequence_add(&s, up);
	where.forced = "base";
	assert_int_equal(pk_sequence_choose_base(&s, &where, NULL), 0);
	assert_string_equal(s.base.rev, base_id);
	assert_string_equal(s.base.name, "base");
	assert_true(s.base.applies);
	assert_null(s.base.tried);
	assert_string_equal(pk_sequence_base_named(&s), base_id);
	pk_sequence_clear(&s);

	/* the config's bases, else its base first and the lab's Debian bases */
	config.test.bases = (char *[]){ "debian:9.9", NULL };
	g_auto(GStrv) configured = pk_sequence_bases(&f->lab, &config.test);
	assert_string_equal(configured[0], "debian:9.9");
	assert_null(configured[1]);
	config.test.bases = NULL;
	config.test.base = "base";
	g_auto(GStrv) dflt = pk_sequence_bases(&f->lab, &config.test);
	assert_string_equal(dflt[0], "base");
	assert_string_equal(dflt[1], "debian:9.9");
}

/* Made against debian:9.9's f.c (its index line), changing line 22: on base only by a 3-way merge. */
static void test_three_way(void **state)
{
	struct fixture *f = *state;
	g_autofree char *blob = run_git(f->dir, (const char *[]){ "rev-parse", "printkbot-debian-9.9:f.c", NULL });
	g_autofree char *diff = g_strdup_printf(
		"diff --git a/f.c b/f.c\nindex %.12s..1234567 100644\n--- a/f.c\n+++ b/f.c\n"
		"@@ -19,7 +19,7 @@\n line 19\n line 20\n line 21\n-line 22\n+line twenty-two\n line 23\n line 24\n LINE 25\n",
		blob);
	g_autoptr(pk_patch) p = patch_of(diff);
	const char *bases[] = { "base", NULL };
	const struct pk_patch *series[] = { p };
	struct pk_base_choice c;
	struct pk_apply_result r;
	g_autofree char *text = NULL;

	assert_int_equal(pk_bases_choose(&c, &f->lab, NULL, NULL, NULL, bases, series, 1, NULL), 0);
	assert_true(c.applies);
	assert_true(c.three_way);
	assert_non_null(strstr(c.tried, "3-way"));
	pk_base_choice_clear(&c);
	assert_int_equal(pk_apply_patch(&r, &f->lab, "base", p, NULL), 0);
	assert_true(r.applied);
	assert_true(r.three_way);
	assert_int_equal(pk_repo_read_file(&text, NULL, &f->lab, r.commit, "f.c", NULL), 0);
	/* the patch's change, and the base's own line 25 kept */
	assert_non_null(strstr(text, "line twenty-two\nline 23\nline 24\nline 25\n"));
	pk_apply_result_clear(&r);
}

/*
 * The same, but the pre-image blob is one only the lab's own work wrote
 * (no base's or tree's tip has it, as when the bot tested an earlier part
 * of the series): not applied, so a verdict never depends on what the lab
 * tested before.
 */
static void test_three_way_own_blob(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GString) own = g_string_new(NULL);
	g_autofree char *path = g_build_filename(f->dir, "own-f.c", NULL);

	for (int i = 1; i <= 40; i++)
		g_string_append_printf(own, i == 35 ? "LINE %d\n" : "line %d\n", i);
	assert_true(g_file_set_contents(path, own->str, -1, NULL));
	g_autofree char *blob = run_git(f->dir, (const char *[]){ "hash-object", "-w", "own-f.c", NULL });
	g_autofree char *diff = g_strdup_printf(
		"diff --git a/f.c b/f.c\nindex %.12s..1234567 100644\n--- a/f.c\n+++ b/f.c\n"
		"@@ -29,7 +29,7 @@\n line 29\n line 30\n line 31\n-line 32\n+line thirty-two\n line 33\n line 34\n LINE 35\n",
		blob);
	g_autoptr(pk_patch) p = patch_of(diff);
	const char *bases[] = { "base", NULL };
	const struct pk_patch *series[] = { p };
	struct pk_base_choice c;

	assert_int_equal(pk_bases_choose(&c, &f->lab, NULL, NULL, NULL, bases, series, 1, NULL), 0);
	assert_false(c.applies);
	assert_false(c.three_way);
	pk_base_choice_clear(&c);
}

/* A [tree]'s branch fetched into the lab, named by its version: its tags are not fetched. */
static void test_fetch_tree(void **state)
{
	struct fixture *f = *state;
	g_autofree char *remote = g_dir_make_tmp("printkbot-bases-tree-XXXXXX", NULL);
	g_autofree char *mk = g_build_filename(remote, "Makefile", NULL);
	g_autofree char *tip = NULL, *got = NULL, *ref = NULL, *name = NULL;
	char *branches[] = { "main", NULL };
	struct pk_tree_config t = { "net", remote, branches };

	assert_true(g_file_set_contents(mk, "VERSION = 6\nPATCHLEVEL = 13\nSUBLEVEL = 0\nEXTRAVERSION = -rc1\n", -1, NULL));
	g_free(run_git(remote, (const char *[]){ "init", "-q", "-b", "main", NULL }));
	g_free(run_git(remote, (const char *[]){ "add", ".", NULL }));
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "-m", "v6.13-rc1", NULL }));
	g_free(run_git(remote, (const char *[]){ "tag", "-a", "-m", "Linux 6.13-rc1", "v6.13-rc1", NULL }));
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "--allow-empty", "-m", "next", NULL }));
	tip = run_git(remote, (const char *[]){ "rev-parse", "HEAD", NULL });
	assert_int_equal(pk_bases_fetch_tree(&f->lab, &t, NULL), 0);
	ref = pk_bases_ref("net/main");
	got = pk_repo_resolve(&f->lab, ref, NULL);
	assert_string_equal(got, tip);
	name = pk_describe_base(&f->lab, ref, NULL);
	g_autofree char *want = g_strdup_printf("net/main %.12s (6.13-rc1)", tip);
	assert_string_equal(name, want);
	assert_null(pk_repo_resolve(&f->lab, "refs/tags/v6.13-rc1", NULL));
	rm_rf(remote);
}

/*
 * A watched branch: fetched with the others; deleted there, removed here
 * (a base branch that is gone stays as last fetched).  Its commits: the
 * patch key is the same for the same change on the same parent tree
 * (a reworded commit), another for another change; ancestry.
 */
static void test_fetch_watched(void **state)
{
	struct fixture *f = *state;
	g_autofree char *remote = g_dir_make_tmp("printkbot-bases-watch-XXXXXX", NULL);
	g_autofree char *c1 = NULL, *c2 = NULL, *c2b = NULL, *got = NULL;
	g_autofree char *k1 = NULL, *k2 = NULL, *k2b = NULL;
	g_autoptr(GError) err = NULL;
	char *branches[] = { "main", NULL };
	char *watch[] = { "dev", NULL };
	struct pk_tree_config t = { "lab", remote, branches, watch };

	write_f(remote, "f.c", false);
	g_free(run_git(remote, (const char *[]){ "init", "-q", "-b", "main", NULL }));
	g_free(run_git(remote, (const char *[]){ "add", ".", NULL }));
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "-m", "base", NULL }));
	g_free(run_git(remote, (const char *[]){ "checkout", "-q", "-b", "dev", NULL }));
	write_f(remote, "f.c", true);
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "-am", "one", NULL }));
	c1 = run_git(remote, (const char *[]){ "rev-parse", "HEAD", NULL });
	write_f(remote, "g.c", false);
	g_free(run_git(remote, (const char *[]){ "add", "g.c", NULL }));
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "-m", "two", NULL }));
	c2 = run_git(remote, (const char *[]){ "rev-parse", "HEAD", NULL });
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "--amend", "-m", "two, reworded", NULL }));
	c2b = run_git(remote, (const char *[]){ "rev-parse", "HEAD", NULL });
	g_free(run_git(remote, (const char *[]){ "branch", "-q", "keep", c2, NULL }));
	g_free(run_git(remote, (const char *[]){ "checkout", "-q", "main", NULL }));

	assert_int_equal(pk_bases_fetch_tree(&f->lab, &t, &err), 0);
	got = pk_repo_resolve(&f->lab, "refs/printkbot/trees/lab/dev", NULL);
	assert_string_equal(got, c2b);
	g_free(got);
	assert_non_null((got = pk_repo_resolve(&f->lab, "refs/printkbot/trees/lab/main", NULL)));
	/* c2 is not on a fetched branch: brought in for the keys, as a push job's fetch would */
	{
		g_autofree char *spec = g_strdup_printf("+refs/heads/keep:refs/printkbot/run/%s", c2);
		const char *specs[] = { spec, NULL };

		assert_int_equal(pk_repo_fetch(&f->lab, remote, specs, NULL, &err), 0);
	}
	assert_int_equal(pk_repo_patch_key(&k1, &f->lab, c1, NULL, &err), 0);
	assert_int_equal(pk_repo_patch_key(&k2, &f->lab, c2, NULL, &err), 0);
	assert_int_equal(pk_repo_patch_key(&k2b, &f->lab, c2b, NULL, &err), 0);
	assert_string_equal(k2, k2b);
	assert_string_not_equal(k1, k2);
	assert_int_equal(pk_repo_is_ancestor(&f->lab, c1, c2b, &err), 1);
	assert_int_equal(pk_repo_is_ancestor(&f->lab, c2b, c2b, &err), 1);
	assert_int_equal(pk_repo_is_ancestor(&f->lab, c2, c2b, &err), 0);

	g_free(run_git(remote, (const char *[]){ "branch", "-q", "-D", "dev", NULL }));
	assert_int_equal(pk_bases_fetch_tree(&f->lab, &t, &err), 0);
	assert_null(pk_repo_resolve(&f->lab, "refs/printkbot/trees/lab/dev", NULL));
	g_free(got);
	assert_non_null((got = pk_repo_resolve(&f->lab, "refs/printkbot/trees/lab/main", NULL)));
	rm_rf(remote);
}

/*
 * A [tree] anyone may push to, with tags of the lab's own names at its
 * branch: printkbot-debian-99.0 (annotated, as a Debian base would be)
 * and printkbot-base.  The fetch writes the branch's ref alone: no new
 * Debian base, the default base where it was, no tag of the tree.
 */
static void test_fetch_tree_tags_stay_out(void **state)
{
	struct fixture *f = *state;
	g_autofree char *remote = g_dir_make_tmp("printkbot-bases-evil-XXXXXX", NULL);
	g_autofree char *mk = g_build_filename(remote, "Makefile", NULL);
	g_autofree char *tip = NULL, *got = NULL, *base_before = NULL, *base_after = NULL;
	g_autofree char *deb_before = NULL, *deb_after = NULL;
	g_auto(GStrv) bases = NULL;
	g_autoptr(GPtrArray) tags = NULL;
	char *branches[] = { "main", NULL };
	struct pk_tree_config t = { "evil", remote, branches };

	g_free(run_git(f->dir, (const char *[]){ "tag", PK_LAB_BASE_TAG, "base", NULL }));
	base_before = pk_repo_resolve(&f->lab, "refs/tags/" PK_LAB_BASE_TAG, NULL);
	deb_before = pk_repo_resolve(&f->lab, "refs/tags/printkbot-debian-9.9", NULL);
	assert_true(g_file_set_contents(mk, "VERSION = 6\nPATCHLEVEL = 99\n", -1, NULL));
	g_free(run_git(remote, (const char *[]){ "init", "-q", "-b", "main", NULL }));
	g_free(run_git(remote, (const char *[]){ "add", ".", NULL }));
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "-m", "a base of mine", NULL }));
	g_free(run_git(remote, (const char *[]){ "tag", "-a", "-m", "x", "printkbot-debian-99.0", NULL }));
	g_free(run_git(remote, (const char *[]){ "tag", "-a", "-m", "x", "printkbot-debian-9.9", NULL }));
	g_free(run_git(remote, (const char *[]){ "tag", PK_LAB_BASE_TAG, NULL }));
	tip = run_git(remote, (const char *[]){ "rev-parse", "HEAD", NULL });

	assert_int_equal(pk_bases_fetch_tree(&f->lab, &t, NULL), 0);
	got = pk_repo_resolve(&f->lab, "refs/printkbot/trees/evil/main", NULL);
	assert_string_equal(got, tip);
	assert_null(pk_repo_resolve(&f->lab, "refs/tags/printkbot-debian-99.0", NULL));
	tags = pk_repo_refs(&f->lab, "refs/tags/printkbot-debian-");
	assert_int_equal(tags->len, 1);
	assert_string_equal(tags->pdata[0], "9.9");
	deb_after = pk_repo_resolve(&f->lab, "refs/tags/printkbot-debian-9.9", NULL);
	assert_string_equal(deb_after, deb_before);
	base_after = pk_repo_resolve(&f->lab, "refs/tags/" PK_LAB_BASE_TAG, NULL);
	assert_string_equal(base_after, base_before);
	/* the default bases: the base, then Debian's the lab imported; none of the tree's */
	bases = pk_bases_default(&f->lab, PK_LAB_BASE_TAG);
	for (char **b = bases; *b; b++)
		assert_null(strstr(*b, "99"));
	rm_rf(remote);
}

/*
 * A base-commit pushed to a [tree] after its last fetch: the tree is
 * fetched again and the series goes there; one no tree has is named with
 * the trees fetched for it.
 */
static void test_base_commit_fetched(void **state)
{
	struct fixture *f = *state;
	g_autofree char *remote = g_dir_make_tmp("printkbot-bases-tree-XXXXXX", NULL);
	g_autofree char *tip = NULL, *reason = NULL;
	char *branches[] = { "main", NULL };
	struct pk_tree_config t = { "net", remote, branches };
	g_autoptr(GPtrArray) trees = g_ptr_array_new();
	g_autoptr(pk_patch) p = patch_of("diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n"
					 " line 1\n-line 2\n+line two\n line 3\n");
	const char *bases[] = { "base", NULL };
	const struct pk_patch *series[] = { p };
	struct pk_base_choice c;
	struct pk_bases_refetch refetch = { .interval = 0 };   /* a fetch for each: this test is not the throttle's */

	g_ptr_array_add(trees, &t);
	write_f(remote, "f.c", false);
	g_free(run_git(remote, (const char *[]){ "init", "-q", "-b", "main", NULL }));
	g_free(run_git(remote, (const char *[]){ "add", ".", NULL }));
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "-m", "pushed since the last fetch", NULL }));
	tip = run_git(remote, (const char *[]){ "rev-parse", "HEAD", NULL });
	assert_null(pk_repo_resolve(&f->lab, tip, NULL));

	assert_int_equal(pk_bases_choose(&c, &f->lab, tip, trees, &refetch, bases, series, 1, NULL), 0);
	assert_string_equal(c.rev, tip);
	assert_true(g_str_has_prefix(c.name, "base-commit "));
	pk_base_choice_clear(&c);

	/* no tree has it: the next base, and the reason names the trees fetched for it */
	assert_int_equal(pk_bases_choose(&c, &f->lab, "0123456789abcdef0123456789abcdef01234567", trees, &refetch, bases,
					 series, 1, NULL), 0);
	assert_true(c.applies);
	assert_string_equal(c.name, "base");
	assert_non_null(strstr(c.tried, "base-commit 0123456789ab: not in the bot's tree nor in the trees "
				       "it fetched again (net)"));
	pk_base_choice_clear(&c);
	assert_int_equal(refetch.fetches, 2);
	pk_bases_refetch_clear(&refetch);
	rm_rf(remote);
}

/* The base a series with base_commit goes on, and why base_commit was passed over (into *why, may be NULL). */
static char *chosen(struct fixture *f, const char *base_commit, char **why)
{
	g_autoptr(pk_patch) p = patch_of("diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n"
					 " line 1\n-line 2\n+line two\n line 3\n");
	const char *bases[] = { "base", NULL };
	const struct pk_patch *series[] = { p };
	struct pk_base_choice c;
	char *name;

	assert_int_equal(pk_bases_choose(&c, &f->lab, base_commit, NULL, NULL, bases, series, 1, NULL), 0);
	assert_true(c.applies);
	name = g_steal_pointer(&c.name);
	if (why)
		*why = g_steal_pointer(&c.tried);
	pk_base_choice_clear(&c);
	return name;
}

/*
 * A base-commit is taken only as the full id of a commit in the history
 * of a base or a fetched tree: an abbreviated id, a blob, the bot's own
 * commit of an applied patch (kept under refs/printkbot/run/ or not) are
 * passed over for the usual choice of base, with why; a full id of a
 * published commit, a tree's tip's parent too, is taken.
 */
static void test_base_commit_published_only(void **state)
{
	struct fixture *f = *state;
	g_autofree char *base = pk_repo_resolve(&f->lab, "base", NULL);
	g_autofree char *short_id = g_strndup(base, 12), *name = NULL, *why = NULL;
	g_autofree char *blob = run_git(f->dir, (const char *[]){ "hash-object", "-w", "f.c", NULL });
	g_autofree char *run_ref = NULL, *remote = g_dir_make_tmp("printkbot-bases-tree-XXXXXX", NULL);
	g_autofree char *first = NULL;
	g_autoptr(pk_patch) p = patch_of(upper_diff);
	struct pk_apply_result r;
	char *branches[] = { "main", NULL };
	struct pk_tree_config t = { "net", remote, branches };

	name = chosen(f, short_id, &why);
	assert_string_equal(name, "base");
	assert_non_null(strstr(why, "an abbreviated id"));
	assert_true(g_str_has_prefix(why, "base-commit "));
	g_clear_pointer(&name, g_free);
	g_clear_pointer(&why, g_free);

	name = chosen(f, blob, &why);
	assert_string_equal(name, "base");
	assert_non_null(strstr(why, ": a blob, not a commit"));
	g_clear_pointer(&name, g_free);
	g_clear_pointer(&why, g_free);

	/* the bot's own commit: upper_diff applied on debian:9.9, as a series test makes one */
	assert_int_equal(pk_apply_patch(&r, &f->lab, "printkbot-debian-9.9", p, NULL), 0);
	assert_true(r.applied);
	name = chosen(f, r.commit, &why);
	assert_string_equal(name, "base");
	assert_non_null(strstr(why, "in the history of no base and no fetched tree"));
	g_clear_pointer(&name, g_free);
	g_clear_pointer(&why, g_free);
	/* nor when a ref of the bot's own keeps it */
	run_ref = g_strconcat("refs/printkbot/run/", r.commit, NULL);
	g_free(run_git(f->dir, (const char *[]){ "update-ref", run_ref, r.commit, NULL }));
	name = chosen(f, r.commit, &why);
	assert_string_equal(name, "base");
	assert_non_null(strstr(why, "in the history of no base and no fetched tree"));
	g_clear_pointer(&name, g_free);
	g_clear_pointer(&why, g_free);
	pk_apply_result_clear(&r);

	/* published: a base's commit by its full id, and a fetched tree's tip's parent */
	name = chosen(f, base, &why);
	assert_true(g_str_has_prefix(name, "base-commit "));
	assert_null(why);
	g_clear_pointer(&name, g_free);
	write_f(remote, "f.c", false);
	g_free(run_git(remote, (const char *[]){ "init", "-q", "-b", "main", NULL }));
	g_free(run_git(remote, (const char *[]){ "add", ".", NULL }));
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "-m", "first", NULL }));
	first = run_git(remote, (const char *[]){ "rev-parse", "HEAD", NULL });
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "--allow-empty", "-m", "second", NULL }));
	assert_int_equal(pk_bases_fetch_tree(&f->lab, &t, NULL), 0);
	name = chosen(f, first, &why);
	assert_true(g_str_has_prefix(name, "base-commit "));
	assert_null(why);
	rm_rf(remote);
}

/*
 * Mail naming ids the lab lacks fetches the [tree]s again once per
 * interval, not once per mail: the second id, a moment later, finds the
 * tree's branch where the first fetch left it (a commit pushed since is
 * not fetched), and the reason says when they are fetched again.  Once
 * the interval has passed, the next such id fetches them again.
 */
static void test_base_commit_refetch_throttled(void **state)
{
	struct fixture *f = *state;
	g_autofree char *remote = g_dir_make_tmp("printkbot-bases-tree-XXXXXX", NULL);
	g_autofree char *tip = NULL, *pushed = NULL, *got = NULL;
	char *branches[] = { "main", NULL };
	struct pk_tree_config t = { "net", remote, branches };
	g_autoptr(GPtrArray) trees = g_ptr_array_new();
	g_autoptr(pk_patch) p = patch_of(upper_diff);
	const char *bases[] = { "debian:9.9", NULL };
	const struct pk_patch *series[] = { p };
	struct pk_bases_refetch refetch = { .interval = 3600 };
	struct pk_base_choice c;

	g_ptr_array_add(trees, &t);
	write_f(remote, "f.c", false);
	g_free(run_git(remote, (const char *[]){ "init", "-q", "-b", "main", NULL }));
	g_free(run_git(remote, (const char *[]){ "add", ".", NULL }));
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "-m", "one", NULL }));
	tip = run_git(remote, (const char *[]){ "rev-parse", "HEAD", NULL });

	/* the first unknown id: the trees are fetched for it */
	assert_int_equal(pk_bases_choose(&c, &f->lab, "1111111111111111111111111111111111111111", trees, &refetch,
					 bases, series, 1, NULL), 0);
	assert_string_equal(c.name, "debian:9.9");
	assert_non_null(strstr(c.tried, "nor in the trees it fetched again (net)"));
	pk_base_choice_clear(&c);
	got = pk_repo_resolve(&f->lab, "refs/printkbot/trees/net/main", NULL);
	assert_string_equal(got, tip);
	g_clear_pointer(&got, g_free);
	assert_int_equal(refetch.fetches, 1);

	/* pushed since, and a second unknown id within the interval: no fetch */
	g_free(run_git(remote, (const char *[]){ "commit", "-q", "--allow-empty", "-m", "two", NULL }));
	pushed = run_git(remote, (const char *[]){ "rev-parse", "HEAD", NULL });
	assert_int_equal(pk_bases_choose(&c, &f->lab, "2222222222222222222222222222222222222222", trees, &refetch,
					 bases, series, 1, NULL), 0);
	assert_string_equal(c.name, "debian:9.9");
	assert_non_null(strstr(c.tried, "base-commit 222222222222: not in the bot's tree (the trees are fetched "
				       "again for a base-commit at most every 3600 s"));
	pk_base_choice_clear(&c);
	got = pk_repo_resolve(&f->lab, "refs/printkbot/trees/net/main", NULL);
	assert_string_equal(got, tip);
	g_clear_pointer(&got, g_free);
	assert_int_equal(refetch.fetches, 1);

	/* the first id again: remembered as missed by that fetch */
	assert_int_equal(pk_bases_choose(&c, &f->lab, "1111111111111111111111111111111111111111", trees, &refetch,
					 bases, series, 1, NULL), 0);
	assert_non_null(strstr(c.tried, "base-commit 111111111111: not in the bot's tree nor in the trees it "
				       "fetched again "));
	pk_base_choice_clear(&c);
	assert_int_equal(refetch.fetches, 1);

	/* the interval over: the commit pushed since is fetched for the mail that names it */
	refetch.last -= refetch.interval;
	assert_int_equal(pk_bases_choose(&c, &f->lab, pushed, trees, &refetch, bases, series, 1, NULL), 0);
	assert_string_equal(c.rev, pushed);
	assert_null(c.tried);
	pk_base_choice_clear(&c);
	assert_int_equal(refetch.fetches, 2);
	pk_bases_refetch_clear(&refetch);
	rm_rf(remote);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_import, setup, teardown),
		cmocka_unit_test_setup_teardown(test_choose, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sequence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_three_way, setup, teardown),
		cmocka_unit_test_setup_teardown(test_three_way_own_blob, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_watched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_tree_tags_stay_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_commit_fetched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_commit_published_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_commit_refetch_throttled, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
