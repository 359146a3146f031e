/*
 * test-relocate.c - a build dir copied under another name
 * (lab/relocate.h): the tools/ build's .cmd and .d files are made to name
 * the new dir, each keeping its times; the kernel's own .cmd files, a
 * symlink, a file with another link, a dir already named right and a
 * dir with no tools/ are left alone.  The files here are shaped as
 * Linux 6.1's tools/build writes them for objtool, read from a real
 * lab's build dir.
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
#include "lab/relocate.h"

/* a tools/build .cmd: the comment fixdep's absence leaves, then the target's command by its absolute path */
#define TOOLS_CMD(dir, rel, t) \
	"# cannot find fixdep (" dir "/tools/objtool//fixdep)\n# using basic dep data\n\n" \
	dir "/" rel "/" t ": \\\n " t ".c /usr/include/stdc-predef.h \\\n " dir "/" rel "/x.h\n" \
	"cmd_" dir "/" rel "/" t " := gcc -Wp,-MD," dir "/" rel "/." t ".d -Wp,-MT," dir "/" rel "/" t \
	" -c -o " dir "/" rel "/" t " " t ".c\n"

static char *dir, *old;

static int setup(void **state)
{
	(void)state;
	dir = g_dir_make_tmp("test-relocate-XXXXXX", NULL);
	old = g_strconcat(dir, ".was", NULL);
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s' '%s'", dir, old);

	(void)state;
	assert_int_equal(system(cmd), 0);
	g_clear_pointer(&dir, g_free);
	g_clear_pointer(&old, g_free);
	return 0;
}

/* Write rel under dir with text, dated a day ago (make compares mtimes: they must stay). */
static void put(const char *rel, const char *text)
{
	g_autofree char *path = g_build_filename(dir, rel, NULL);
	g_autofree char *parent = g_path_get_dirname(path);
	struct timespec ts[2] = { { 1700000000, 0 }, { 1700000000, 123 } };

	assert_int_equal(g_mkdir_with_parents(parent, 0755), 0);
	assert_true(g_file_set_contents(path, text, -1, NULL));
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static char *get(const char *rel)
{
	g_autofree char *path = g_build_filename(dir, rel, NULL);
	char *text = NULL;

	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

/* A .cmd of dir rel's target t made in the build dir named made_in. */
static char *tools_cmd(const char *made_in, const char *rel, const char *t)
{
	g_autoptr(GString) s = g_string_new(TOOLS_CMD("@D", "@R", "@T"));

	g_string_replace(s, "@D", made_in, 0);
	g_string_replace(s, "@R", rel, 0);
	g_string_replace(s, "@T", t, 0);
	return g_strdup(s->str);
}

static void test_a_copy_names_itself(void **state)
{
	g_autofree char *check = tools_cmd(old, "tools/objtool", "check.o");
	g_autofree char *decode = tools_cmd(old, "tools/objtool/arch/x86", "decode.o");
	g_autofree char *want_check = tools_cmd(dir, "tools/objtool", "check.o");
	g_autofree char *want_decode = tools_cmd(dir, "tools/objtool/arch/x86", "decode.o");
	g_autofree char *dep = g_strdup_printf("%s/tools/objtool/fixdep.o: fixdep.c\n", old);
	g_autofree char *kernel = g_strdup_printf("savedcmd_init/main.o := gcc -I%s/include -c\n", old);
	g_autofree char *text = NULL, *path = NULL;
	g_autoptr(GError) err = NULL;
	struct stat st;

	(void)state;
	put("tools/objtool/.check.o.cmd", check);
	put("tools/objtool/arch/x86/.decode.o.cmd", decode);
	put("tools/objtool/.fixdep.o.d", dep);
	/* a file no tools/ build writes, and the kernel's own: not the tools' */
	put("tools/objtool/README", dep);
	put("init/.main.o.cmd", kernel);

	assert_int_equal(pk_build_dir_relocate(dir, &err), 3);
	assert_null(err);
	text = get("tools/objtool/.check.o.cmd");
	assert_string_equal(text, want_check);
	g_free(text);
	text = get("tools/objtool/arch/x86/.decode.o.cmd");
	assert_string_equal(text, want_decode);
	g_free(text);
	text = get("tools/objtool/.fixdep.o.d");
	assert_non_null(strstr(text, dir));
	assert_null(strstr(text, old));
	g_free(text);
	text = get("tools/objtool/README");
	assert_string_equal(text, dep);
	g_free(text);
	text = get("init/.main.o.cmd");
	assert_string_equal(text, kernel);
	/* the times as they were: a newer .cmd would say nothing to make, but an older target might */
	path = g_build_filename(dir, "tools/objtool/.check.o.cmd", NULL);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mtim.tv_sec, 1700000000);
	assert_int_equal(st.st_mtim.tv_nsec, 123);

	/* named right now: nothing to do */
	assert_int_equal(pk_build_dir_relocate(dir, &err), 0);
	assert_null(err);
}

static void test_what_is_not_rewritten(void **state)
{
	g_autofree char *check = tools_cmd(old, "tools/objtool", "check.o");
	g_autofree char *outside = g_strconcat(old, "/outside.cmd", NULL);
	g_autofree char *evil = g_build_filename(dir, "tools/objtool/.evil.o.cmd", NULL);
	g_autofree char *twice = g_build_filename(dir, "tools/objtool/.twice.o.cmd", NULL);
	g_autofree char *other = g_strconcat(old, "/other.cmd", NULL);
	g_autofree char *text = NULL;
	g_autoptr(GError) err = NULL;

	(void)state;
	put("tools/objtool/.check.o.cmd", check);
	assert_int_equal(g_mkdir_with_parents(old, 0755), 0);
	assert_true(g_file_set_contents(outside, check, -1, NULL));
	assert_int_equal(symlink(outside, evil), 0);
	assert_true(g_file_set_contents(other, check, -1, NULL));
	assert_int_equal(link(other, twice), 0);

	assert_int_equal(pk_build_dir_relocate(dir, &err), 1);
	assert_null(err);
	/* neither the symlink's target nor a file with a name elsewhere */
	assert_true(g_file_get_contents(outside, &text, NULL, NULL));
	assert_string_equal(text, check);
	g_free(text);
	assert_true(g_file_get_contents(other, &text, NULL, NULL));
	assert_string_equal(text, check);
}

static void test_nothing_to_relocate(void **state)
{
	g_autofree char *own = tools_cmd(dir, "tools/objtool", "check.o");
	g_autofree char *gone = g_strconcat(dir, "/no-such-dir", NULL);
	g_autoptr(GError) err = NULL;

	(void)state;
	/* no tools/ (arm64's build dirs), no build dir yet */
	put("init/.main.o.cmd", "savedcmd_init/main.o := gcc\n");
	assert_int_equal(pk_build_dir_relocate(dir, &err), 0);
	assert_int_equal(pk_build_dir_relocate(gone, &err), 0);
	/* a .cmd whose command names some other target says nothing of where it was made */
	put("tools/objtool/.check.o.cmd", "cmd_/elsewhere/tools/objtool/elf.o := gcc\n");
	assert_int_equal(pk_build_dir_relocate(dir, &err), 0);
	/* made here */
	put("tools/objtool/.weak.o.cmd", own);
	assert_int_equal(pk_build_dir_relocate(dir, &err), 0);
	assert_null(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_copy_names_itself, setup, teardown),
		cmocka_unit_test_setup_teardown(test_what_is_not_rewritten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_to_relocate, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
