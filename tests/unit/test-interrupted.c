/*
 * test-interrupted.c - what a make ended by a signal left in a build dir
 * (lab/interrupted.h): .cmd files cut short are removed with their
 * targets, mark or no mark; under the mark of a make that never ended,
 * each file written since without a whole .cmd written after it is
 * removed; the config, the bot's files, Kconfig's and filechk's files and
 * what came before the mark are kept.  The e2e 001-lab does the same to
 * the real kernel's build dir and boots what is built after.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "lab/interrupted.h"
#include "lab/state.h"

/* a .cmd as fixdep writes it, whole */
#define WHOLE_CMD(t) \
	"savedcmd_" t " := gcc -c -o " t " x.c\n\nsource_" t " := x.c\n\ndeps_" t " := \\\n" \
	"  include/linux/kconfig.h \\\n  $(wildcard include/config/FOO) \\\n\n" t ": $(deps_" t ")\n\n$(deps_" t "):\n"

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = g_dir_make_tmp("test-interrupted-XXXXXX", NULL);
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s' '%s.state'", dir, dir);

	(void)state;
	assert_int_equal(system(cmd), 0);
	g_clear_pointer(&dir, g_free);
	return 0;
}

/* Write rel under dir with text, dated at (seconds from now; 0 leaves it now). */
static void put(const char *rel, const char *text, int at)
{
	g_autofree char *path = g_build_filename(dir, rel, NULL);
	g_autofree char *parent = g_path_get_dirname(path);

	assert_int_equal(g_mkdir_with_parents(parent, 0755), 0);
	assert_true(g_file_set_contents(path, text, -1, NULL));
	if (at) {
		struct timespec ts[2];

		clock_gettime(CLOCK_REALTIME, &ts[0]);
		ts[0].tv_sec += at;
		ts[1] = ts[0];
		assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	}
}

static bool there(const char *rel)
{
	g_autofree char *path = g_build_filename(dir, rel, NULL);

	return g_file_test(path, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK);
}

/* A .cmd of exactly one block of whole lines, as a cut at a line's end leaves it. */
static char *block_of_lines(const char *target)
{
	g_autofree char *head = g_strdup_printf("savedcmd_%s := gcc", target);
	GString *body = g_string_new(NULL);
	GString *s = g_string_new(head);

	g_string_append_printf(body, "deps_%s := \\\n", target);
	while (strlen(head) + body->len + 2 + 64 < 4096)
		g_string_append(body, "  include/linux/types.h \\\n");
	g_string_append(body, "\n");
	while (s->len + 2 + body->len < 4096)
		g_string_append_c(s, ' ');
	g_string_append(s, "\n\n");
	g_string_append(s, body->str);
	g_string_free(body, TRUE);
	return g_string_free(s, FALSE);
}

static void test_cut_cmd_files_without_a_mark(void **state)
{
	g_autofree char *block = block_of_lines("lib/big.o");
	g_autoptr(GError) err = NULL;

	(void)state;
	put("kernel/fork.o", "ELF", 0);
	put("kernel/.fork.o.cmd", WHOLE_CMD("kernel/fork.o"), 0);
	/* fixdep stopped inside the dependency list: the last line goes on */
	put("kernel/pid.o", "ELF", 0);
	put("kernel/.pid.o.cmd", "savedcmd_kernel/pid.o := gcc\n\ndeps_kernel/pid.o := \\\n  include/a.h \\\n", 0);
	/* ...or in the middle of a line, as the build dir CI failed on */
	put("drivers/acpi/evrgnini.o", "ELF", 0);
	put("drivers/acpi/.evrgnini.o.cmd", "savedcmd_drivers/acpi/evrgnini.o := gcc\n\n  $(wildcard include/con", 0);
	/* ...or at the end of a line that is not fixdep's last */
	put("lib/big.o", "ELF", 0);
	put("lib/.big.o.cmd", block, 0);
	assert_int_equal(strlen(block), 4096);
	/* nothing written: Kbuild makes the target again as it is */
	put("lib/empty.o", "ELF", 0);
	put("lib/.empty.o.cmd", "", 0);
	/* without a mark, an object newer than its .cmd is not the repair's to judge */
	put("init/main.o", "EL", 0);
	put("init/.main.o.cmd", WHOLE_CMD("init/main.o"), -10);

	assert_int_equal(pk_build_dir_repair(dir, &err), 6);
	assert_null(err);
	assert_true(there("kernel/fork.o") && there("kernel/.fork.o.cmd"));
	assert_false(there("kernel/pid.o") || there("kernel/.pid.o.cmd"));
	assert_false(there("drivers/acpi/evrgnini.o") || there("drivers/acpi/.evrgnini.o.cmd"));
	assert_false(there("lib/big.o") || there("lib/.big.o.cmd"));
	assert_true(there("lib/empty.o") && there("lib/.empty.o.cmd"));
	assert_true(there("init/main.o"));
	/* a second repair finds nothing */
	assert_int_equal(pk_build_dir_repair(dir, &err), 0);
}

static void test_what_a_make_that_never_ended_wrote(void **state)
{
	g_autoptr(GError) err = NULL;
	struct pk_proc_result killed = { .end = PK_PROC_TIMEOUT };
	g_autofree char *source = g_build_filename(dir, "source", NULL);

	(void)state;
	put("kernel/old.o", "ELF", -100);                 /* from a build before */
	put("kernel/.old.o.cmd", WHOLE_CMD("kernel/old.o"), -200);
	assert_int_equal(pk_make_started(dir, &err), 0);
	pk_make_ended(dir, &killed);
	assert_true(pk_state_stat(dir, PK_STATE_MAKE_RUNNING, NULL));
	/* written by the make that was killed, dated after the mark */
	put("init/main.o", "EL", 5);                      /* cut: its .cmd is the build before's */
	put("init/.main.o.cmd", WHOLE_CMD("init/main.o"), -50);
	put("init/version.o", "ELF", 5);                  /* whole: its .cmd came after */
	put("init/.version.o.cmd", WHOLE_CMD("init/version.o"), 6);
	put("vmlinux", "ELF, half linked", 5);             /* no .cmd at all */
	put("init/.main.o.d", "init/main.o: x.c", 5);      /* a depfile fixdep never read */
	put(".config", "CONFIG_PRINTK=y\n", 5);            /* the bot's and Kconfig's */
	put(".printkbot-kconfig", "abc\n", 5);
	put("printkbot-build.log", "make\n", 5);
	put("include/config/auto.conf", "CONFIG_PRINTK=y\n", 5);
	put("include/generated/autoconf.h", "#define CONFIG_PRINTK 1\n", 5);
	assert_int_equal(symlink("/nonexistent", source), 0);

	assert_int_equal(pk_build_dir_repair(dir, &err), 3);
	assert_null(err);
	assert_false(there("init/main.o"));
	assert_true(there("init/.main.o.cmd"));           /* whole: Kbuild sees the object missing */
	assert_true(there("init/version.o") && there("init/.version.o.cmd"));
	assert_false(there("vmlinux") || there("init/.main.o.d"));
	assert_true(there("kernel/old.o") && there(".config") && there(".printkbot-kconfig") &&
		    there("printkbot-build.log") && there("include/config/auto.conf") &&
		    there("include/generated/autoconf.h") && there("source"));
	/* repaired: the mark is gone, and what is newer now is the next make's */
	assert_false(pk_state_stat(dir, PK_STATE_MAKE_RUNNING, NULL));
	put("init/main.o", "ELF", 10);
	assert_int_equal(pk_build_dir_repair(dir, &err), 0);
}

static void test_a_make_that_ended_leaves_no_mark(void **state)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *missing = g_build_filename(dir, "not-made-yet", NULL);
	struct pk_proc_result failed = { .end = PK_PROC_EXITED, .exit_code = 2 };

	(void)state;
	assert_int_equal(pk_make_started(dir, &err), 0);
	put("init/main.o", "EL", 5);
	/* a compile error: make deleted what it could not finish, the rest is whole */
	pk_make_ended(dir, &failed);
	assert_false(pk_state_stat(dir, PK_STATE_MAKE_RUNNING, NULL));
	assert_int_equal(pk_build_dir_repair(dir, &err), 0);
	assert_true(there("init/main.o"));
	/* a build dir not made yet has nothing to repair */
	assert_int_equal(pk_build_dir_repair(missing, &err), 0);
	assert_null(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cut_cmd_files_without_a_mark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_what_a_make_that_never_ended_wrote, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_make_that_ended_leaves_no_mark, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
