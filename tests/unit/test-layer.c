/*
 * test-layer.c - the throwaway layer (lab/layer.h): what is written
 * through a layer (a stamp, a host program changed, an object dated in
 * the future) is seen while the layer holds and gone when it is dropped
 * or replaced by the next commit's; the build dir under it is never
 * touched.  Needs root (kernel overlayfs); skipped elsewhere.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab/lab.h"
#include "lab/layer.h"
#include "base/proc.h"
#include "lab/sandbox.h"

struct fixture {
	char *root;            /* the cache dir */
	struct pk_lab lab;
	char *build_dir;
};

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autofree char *makefile = NULL, *fixdep = NULL, *obj = NULL, *fixdep_dir = NULL, *obj_dir = NULL;

	f->root = g_dir_make_tmp("test-layer-XXXXXX", NULL);
	f->lab.lock_fd = -1;
	f->lab.cache = g_strdup(f->root);
	f->lab.tree = g_build_filename(f->root, "linux", NULL);
	f->lab.build_stem = g_build_filename(f->root, "build", "cfg", NULL);
	g_mkdir_with_parents(f->lab.tree, 0755);
	makefile = g_build_filename(f->lab.tree, "Makefile", NULL);
	g_file_set_contents(makefile, "VERSION = 6\nPATCHLEVEL = 12\n", -1, NULL);
	f->build_dir = pk_lab_build_dir(&f->lab);
	fixdep = g_build_filename(f->build_dir, "scripts", "basic", "fixdep", NULL);
	obj = g_build_filename(f->build_dir, "init", "main.o", NULL);
	g_mkdir_with_parents(f->build_dir, 0755);
	fixdep_dir = g_path_get_dirname(fixdep);
	obj_dir = g_path_get_dirname(obj);
	g_mkdir_with_parents(fixdep_dir, 0755);
	g_mkdir_with_parents(obj_dir, 0755);
	g_file_set_contents(fixdep, "\177ELF the host program", -1, NULL);
	g_file_set_contents(obj, "an object", -1, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	pk_layer_drop_all();
	pk_remove_tree(f->root, NULL);
	g_free(f->root);
	g_free(f->build_dir);
	pk_lab_clear(&f->lab);
	g_free(f);
	return 0;
}

static char *in_build(struct fixture *f, const char *rel)
{
	return g_build_filename(f->build_dir, rel, NULL);
}

/* What a hostile build leaves: a stamp, a host program appended to, an object dated 2035. */
static void plant(struct fixture *f)
{
	g_autofree char *stamp = in_build(f, "printkbot-planted");
	g_autofree char *fixdep = in_build(f, "scripts/basic/fixdep");
	g_autofree char *obj = in_build(f, "init/main.o");
	struct timespec future[2] = { { 2051222400, 0 }, { 2051222400, 0 } };
	FILE *fp;

	assert_true(g_file_set_contents(stamp, "planted", -1, NULL));
	assert_non_null(fp = fopen(fixdep, "a"));
	fputs("\n#planted\n", fp);
	fclose(fp);
	assert_int_equal(utimensat(AT_FDCWD, obj, future, 0), 0);
}

/* Whether the build dir shows none of plant()'s work. */
static void assert_clean(struct fixture *f)
{
	g_autofree char *stamp = in_build(f, "printkbot-planted");
	g_autofree char *fixdep = in_build(f, "scripts/basic/fixdep");
	g_autofree char *obj = in_build(f, "init/main.o");
	g_autofree char *text = NULL;
	struct stat st;

	assert_false(g_file_test(stamp, G_FILE_TEST_EXISTS));
	assert_true(g_file_get_contents(fixdep, &text, NULL, NULL));
	assert_string_equal(text, "\177ELF the host program");
	assert_int_equal(stat(obj, &st), 0);
	assert_true(st.st_mtime < 2051222400);
}

static void skip_without_layers(struct fixture *f)
{
	g_autofree char *why = NULL;

	if (geteuid() != 0 || !pk_layer_usable(f->root, &why)) {
		print_message("no layers here (%s): skipped\n", why ? why : "not root");
		skip();
	}
}

/* A plant through commit 1's layer is seen while it holds, and gone for commit 2's and once dropped. */
static void test_plant_does_not_outlive_its_layer(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GError) err = NULL;
	g_autofree char *stamp = in_build(f, "printkbot-planted");
	g_autofree char *layers = g_build_filename(f->root, "layers", NULL);
	const char *commit = NULL;

	skip_without_layers(f);
	assert_int_equal(pk_layer_enter(f->lab.cache, f->build_dir, "1111", &err), 0);
	assert_true(pk_layer_over(f->build_dir, &commit));
	assert_string_equal(commit, "1111");
	plant(f);
	assert_true(g_file_test(stamp, G_FILE_TEST_EXISTS));   /* the build itself sees its writes */

	/* the same commit again (its boot, a config step): the same layer */
	assert_int_equal(pk_layer_enter(f->lab.cache, f->build_dir, "1111", &err), 0);
	assert_true(g_file_test(stamp, G_FILE_TEST_EXISTS));

	/* the next patch: a fresh layer, nothing of the last one's */
	assert_int_equal(pk_layer_enter(f->lab.cache, f->build_dir, "2222", &err), 0);
	assert_clean(f);
	plant(f);
	assert_int_equal(pk_layer_drop(f->build_dir, &err), 0);
	assert_false(pk_layer_over(f->build_dir, NULL));
	assert_clean(f);

	/* the upper dirs went with their layers */
	assert_int_equal(pk_layer_sweep(f->root, &err), 0);
	{
		g_autoptr(GDir) d = g_dir_open(layers, 0, NULL);
		assert_true(!d || !g_dir_read_name(d));
	}
}

/* A process that died left an upper dir: the next holder of the lab's lock removes it. */
static void test_sweep_removes_what_a_dead_process_left(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GError) err = NULL;
	g_autofree char *left = g_build_filename(f->root, "layers", "cfg-6.12.99999", "upper", NULL);
	g_autofree char *ours = NULL;

	skip_without_layers(f);
	assert_int_equal(g_mkdir_with_parents(left, 0755), 0);
	assert_int_equal(pk_layer_enter(f->lab.cache, f->build_dir, "3333", &err), 0);
	ours = g_strdup_printf("%s/layers/cfg-6.12.%ld/upper", f->root, (long)getpid());
	assert_int_equal(pk_layer_sweep(f->root, &err), 0);
	assert_false(g_file_test(left, G_FILE_TEST_EXISTS));
	assert_true(g_file_test(ours, G_FILE_TEST_IS_DIR));   /* in use: kept */
	pk_layer_drop_all();
	assert_false(g_file_test(ours, G_FILE_TEST_EXISTS));
}

/*
 * [policy] layer_mb: a layer holds at most that much (a tmpfs under its
 * upper dir), so that a build cannot fill the cache's disk; past it a
 * write fails with ENOSPC, and the build dir under it is untouched.
 */
static void test_layer_is_capped(void **state)
{
	struct fixture *f = *state;
	struct pk_sandbox_config small = PK_SANDBOX_CONFIG_INIT, saved = *pk_sandbox_settings();
	g_autoptr(GError) err = NULL;
	g_autofree char *big = in_build(f, "big"), *fits = in_build(f, "fits");
	g_autofree char *chunk = g_malloc0(1 << 20);
	int fd, e = 0;

	skip_without_layers(f);
	small.layer_size = 2u << 20;
	pk_sandbox_configure(&small);
	assert_int_equal(pk_layer_enter(f->lab.cache, f->build_dir, "4444", &err), 0);
	assert_true(g_file_set_contents(fits, "small", -1, NULL));
	assert_true((fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0);
	for (int i = 0; i < 4 && !e; i++)
		if (write(fd, chunk, 1 << 20) < 0)
			e = errno;
	if (!e && fsync(fd) < 0)
		e = errno;
	close(fd);
	pk_sandbox_configure(&saved);
	assert_int_equal(e, ENOSPC);
	assert_int_equal(pk_layer_drop(f->build_dir, &err), 0);
	assert_false(g_file_test(big, G_FILE_TEST_EXISTS) || g_file_test(fits, G_FILE_TEST_EXISTS));
	assert_clean(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_plant_does_not_outlive_its_layer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_removes_what_a_dead_process_left, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layer_is_capped, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
