/*
 * test-beneath.c - what a build can leave in its build dir for the bot
 * (root, outside the sandbox) to trip on: at every path the bot reads
 * there, a symlink to a host file only root may read, a symlink to
 * /dev/zero, a FIFO, a device node, a hard link and a file over the cap.
 * Each reader must refuse it, quickly (an alarm stops a blocked open),
 * without the host file's text in what it returns; a regular file of the
 * build's own is read as before.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/util.h"
#include "lab/boot.h"
#include "lab/coverage.h"
#include "lab/interrupted.h"
#include "lab/kconfig.h"
#include "lab/lab.h"

#define SECRET "root-only secret 8c1f"

struct fake {
	char *root;     /* everything of the test */
	char *build;    /* the build dir */
	char *tree;     /* the kernel tree */
	char *secret;   /* a host file only root may read, outside the build dir */
};

static void put(const char *dir, const char *rel, const char *text)
{
	g_autofree char *path = g_build_filename(dir, rel, NULL);
	g_autofree char *parent = g_path_get_dirname(path);

	assert_int_equal(g_mkdir_with_parents(parent, 0755), 0);
	assert_true(g_file_set_contents(path, text, -1, NULL));
}

static int setup(void **state)
{
	struct fake *f = g_new0(struct fake, 1);

	f->root = g_dir_make_tmp("pk-beneath-XXXXXX", NULL);
	f->build = g_build_filename(f->root, "build", NULL);
	f->tree = g_build_filename(f->root, "linux", NULL);
	f->secret = g_build_filename(f->root, "shadow", NULL);
	put(f->root, "shadow", SECRET "\n");
	assert_int_equal(chmod(f->secret, 0600), 0);
	put(f->tree, "Makefile", "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\n");
	put(f->tree, "Kbuild", "obj-y += kernel/\n");
	put(f->tree, "kernel/Makefile", "obj-y += fork.o\n");
	put(f->tree, "kernel/fork.c", "int x;\n");
	put(f->tree, "include/fork.h", "int x;\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->root);

	assert_int_equal(system(cmd), 0);
	g_free(f->root);
	g_free(f->build);
	g_free(f->tree);
	g_free(f->secret);
	g_free(f);
	return 0;
}

/* What a build may put at a path of the build dir. */
enum planted {
	PLANT_LINK_TO_SECRET,   /* a symlink to a root-only host file */
	PLANT_LINK_TO_ZERO,     /* a symlink to /dev/zero: endless */
	PLANT_DIR_LINK,         /* the path's directory a symlink to one holding the host file */
	PLANT_FIFO,             /* an open for reading would wait for a writer forever */
	PLANT_DEVICE,           /* a device node (root's test makes /dev/zero's) */
	PLANT_HARD_LINK,        /* a second name of the host file */
	PLANT_KINDS,
};

static const char *const planted_name[] = {
	"a symlink to a host file", "a symlink to /dev/zero", "a symlinked directory", "a FIFO",
	"a device node", "a hard link",
};

/*
 * Put kind at rel in the build dir (its parent made first): 0, or -1 when
 * this machine cannot make it (no mknod outside root).
 */
static int plant(const struct fake *f, const char *rel, enum planted kind)
{
	g_autofree char *path = g_build_filename(f->build, rel, NULL);
	g_autofree char *parent = g_path_get_dirname(path);
	g_autofree char *name = g_path_get_basename(path);

	assert_int_equal(g_mkdir_with_parents(parent, 0755), 0);
	unlink(path);
	switch (kind) {
	case PLANT_LINK_TO_SECRET:
		return symlink(f->secret, path);
	case PLANT_LINK_TO_ZERO:
		return symlink("/dev/zero", path);
	case PLANT_DIR_LINK: {
		/* rel's directory replaced by a link to one where rel's name is the host file */
		g_autofree char *elsewhere = g_build_filename(f->root, "elsewhere", NULL);
		g_autofree char *target = g_build_filename(elsewhere, name, NULL);
		g_autofree char *cmd = NULL;

		if (!strcmp(parent, f->build)) {
			errno = 0;   /* rel is at the top: the build dir itself is the caller's */
			return -1;
		}
		g_mkdir_with_parents(elsewhere, 0755);
		unlink(target);
		assert_int_equal(link(f->secret, target) == 0 || symlink(f->secret, target) == 0, 1);
		cmd = g_strdup_printf("rm -rf '%s'", parent);
		assert_int_equal(system(cmd), 0);
		return symlink(elsewhere, parent);
	}
	case PLANT_FIFO:
		return mkfifo(path, 0644);
	case PLANT_DEVICE:
		return mknod(path, S_IFCHR | 0644, makedev(1, 5));
	case PLANT_HARD_LINK:
		return link(f->secret, path);
	case PLANT_KINDS:
		break;
	}
	return -1;
}

/* A reader of the bot's, run on the fake build dir; 0 when it read the planted file, -1 when it refused. */
typedef int (*reader_fn)(const struct fake *f, GString *said);

/* kconfig.c: the build's .config. */
static int read_config(const struct fake *f, GString *said)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(GHashTable) config = pk_kconfig_values(f->build, &err);

	if (config)
		g_string_append(said, g_hash_table_lookup(config, "X") ? "X" : "");
	else
		g_string_append(said, err->message);
	return config ? 0 : -1;
}

/*
 * coverage.c: vmlinux.a, .vmlinux.o.cmd and each linked object's .cmd (read
 * for who includes a header), for a patch to kernel/fork.c and a header.
 */
static int read_coverage(const struct fake *f, GString *said)
{
	static const char diff[] = "diff --git a/kernel/fork.c b/kernel/fork.c\n--- a/kernel/fork.c\n"
				   "+++ b/kernel/fork.c\n@@ -1 +1 @@\n-int x;\n+int y;\n"
				   "diff --git a/include/fork.h b/include/fork.h\n--- a/include/fork.h\n"
				   "+++ b/include/fork.h\n@@ -1 +1 @@\n-int x;\n+int y;\n";
	g_autoptr(pk_patch) patch = pk_patch_parse_diff(diff, strlen(diff));
	struct pk_coverage_input in = { f->build, f->tree, patch, NULL, NULL };
	g_autoptr(GPtrArray) cov = NULL;
	g_autoptr(GError) err = NULL;

	if (pk_coverage_read(&cov, &in, &err) < 0) {
		g_string_append(said, err->message);
		return -1;
	}
	for (guint i = 0; i < cov->len; i++) {
		const struct pk_file_coverage *c = cov->pdata[i];

		g_string_append_printf(said, "%s %s %s\n", c->file, pk_coverage_state_name(c->state),
				       c->reason ? c->reason : "");
	}
	return 0;
}

/* boot.c: the kernel image QEMU is handed (refused before QEMU starts). */
static int read_vmlinux(const struct fake *f, GString *said)
{
	struct pk_lab lab = { .cache = f->root, .tree = f->tree, .initrd = f->secret, .lock_fd = -1 };
	g_autofree char *vmlinux = g_build_filename(f->build, "vmlinux", NULL);
	struct pk_boot_opts opts = PK_BOOT_OPTS_INIT;
	struct pk_boot_result res = { 0 };
	g_autoptr(GError) err = NULL;
	int rc;

	opts.vmlinux = vmlinux;
	opts.timeout = 5;
	assert_int_equal(pk_boot_kernel(&res, &lab, &opts, &err), 0);
	rc = res.status == PK_BOOT_FAILED && !strcmp(res.accel, "none") ? -1 : 0;
	g_string_append_printf(said, "%s %s", res.detail ? res.detail : "", res.console ? res.console : "");
	pk_boot_result_clear(&res);
	return rc;
}

/* interrupted.c: every .cmd file is looked at before a make; a planted one is passed over, never opened blocking. */
static int read_for_repair(const struct fake *f, GString *said)
{
	g_autoptr(GError) err = NULL;
	int removed = pk_build_dir_repair(f->build, &err);

	if (removed < 0)
		g_string_append(said, err->message);
	/* it reads only regular files: "refused" is that it ended and left the host file alone */
	return -1;
}

/* lab.c: the tree's Makefile names the build dir's series (a pushed commit may hold a link there). */
static int read_tree_makefile(const struct fake *f, GString *said)
{
	struct pk_lab lab = { .tree = f->build, .build_stem = f->root, .lock_fd = -1 };
	g_autofree char *dir = pk_lab_build_dir(&lab);

	g_string_append(said, dir);
	return g_str_has_suffix(dir, "-6.12") ? 0 : -1;
}

struct path_case {
	const char *rel;        /* under the build dir */
	const char *whole;      /* what a regular file there holds, for the control */
	reader_fn read;
};

static const struct path_case paths[] = {
	{ ".config", "CONFIG_X=y\n", read_config },
	{ "vmlinux.a", NULL, read_coverage },
	{ ".vmlinux.o.cmd", "savedcmd_vmlinux.o := ld -r -o vmlinux.o vmlinux.a\n", read_coverage },
	{ "kernel/.fork.o.cmd", NULL, read_coverage },
	{ "vmlinux", NULL, read_vmlinux },
	{ "kernel/.fork.o.cmd", NULL, read_for_repair },
	{ "Makefile", "VERSION = 6\nPATCHLEVEL = 12\n", read_tree_makefile },
};

/* A regular build dir of its own: vmlinux.a linking kernel/fork.o, its .cmd, a .config. */
static void make_build_dir(const struct fake *f)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s' '%s/elsewhere'", f->build, f->root);
	g_autofree char *cmdfile = g_strdup_printf("savedcmd_kernel/fork.o := gcc -c -o kernel/fork.o %s/kernel/fork.c\n\n"
						   "source_kernel/fork.o := %s/kernel/fork.c\n\ndeps_kernel/fork.o := \\\n"
						   "  %s/include/fork.h \\\n"
						   "\nkernel/fork.o: $(deps_kernel/fork.o)\n\n$(deps_kernel/fork.o):\n",
						   f->tree, f->tree, f->tree);
	static const char table[] = "kernel/fork.o/\n";
	g_autofree char *ar = g_strdup_printf("!<thin>\n%-16s%-12s%-6s%-6s%-8s%-10zu`\n%s", "//", "", "", "", "",
					      strlen(table), table);

	assert_int_equal(system(cmd), 0);
	put(f->build, ".config", "CONFIG_X=y\n");
	put(f->build, "vmlinux.a", ar);
	put(f->build, ".vmlinux.o.cmd", "savedcmd_vmlinux.o := ld -r -o vmlinux.o vmlinux.a\n");
	put(f->build, "kernel/.fork.o.cmd", cmdfile);
	put(f->build, "kernel/fork.o", "ELF");
	put(f->build, "vmlinux", "ELF");
	put(f->build, "Makefile", "VERSION = 6\nPATCHLEVEL = 12\n");
}

static void on_alarm(int sig)
{
	(void)sig;
	/* a reader blocked on a FIFO or reading /dev/zero without end: the failure this test is for */
	fail_msg("a reader did not return within 20 s: blocked on what was planted");
}

static void test_each_path_each_plant(void **state)
{
	const struct fake *f = *state;
	struct stat before, after;

	signal(SIGALRM, on_alarm);
	assert_int_equal(stat(f->secret, &before), 0);
	for (size_t p = 0; p < G_N_ELEMENTS(paths); p++) {
		g_autoptr(GString) said = g_string_new(NULL);

		/* the control: the build's own regular files are read */
		make_build_dir(f);
		alarm(20);
		if (paths[p].read != read_for_repair && paths[p].read(f, said) != 0)
			fail_msg("%s: a regular file was refused: %s", paths[p].rel, said->str);
		alarm(0);
		for (int k = 0; k < PLANT_KINDS; k++) {
			g_string_truncate(said, 0);
			make_build_dir(f);
			if (plant(f, paths[p].rel, k) < 0) {
				print_message("%s: %s: %s, skipped\n", paths[p].rel, planted_name[k],
					      errno ? g_strerror(errno) : "no directory of its own to link");
				continue;
			}
			alarm(20);
			if (paths[p].read(f, said) != -1)
				fail_msg("%s as %s was read: %s", paths[p].rel, planted_name[k], said->str);
			alarm(0);
			if (strstr(said->str, SECRET))
				fail_msg("%s as %s: the host file's text came out: %s", paths[p].rel,
					 planted_name[k], said->str);
		}
	}
	/* nothing was written to the host file either */
	assert_int_equal(stat(f->secret, &after), 0);
	assert_int_equal(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
	assert_int_equal(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	assert_int_equal(before.st_size, after.st_size);
}

/* The primitive itself: each refusal says what the path is, absent is not an error, the cap holds. */
static void test_read_kinds(void **state)
{
	const struct fake *f = *state;
	g_autofree char *big = g_strnfill(5000, 'x');
	g_autofree char *text = NULL;
	g_autoptr(GError) err = NULL;
	size_t len = 0;
	int dirfd;

	make_build_dir(f);
	put(f->build, "big", big);
	dirfd = pk_beneath_open_dir(f->build, &err);
	assert_true(dirfd >= 0);
	assert_int_equal(pk_beneath_read(&text, &len, dirfd, ".config", 0, &err), 1);
	assert_string_equal(text, "CONFIG_X=y\n");
	assert_int_equal(len, strlen(text));
	g_clear_pointer(&text, g_free);
	/* absent, and a file where a directory should be, are "not there" */
	assert_int_equal(pk_beneath_read(&text, NULL, dirfd, "nothing", 0, &err), 0);
	assert_int_equal(pk_beneath_read(&text, NULL, dirfd, "vmlinux/x", 0, &err), 0);
	assert_null(err);
	assert_int_equal(pk_beneath_read(&text, NULL, dirfd, "big", 4096, &err), -1);
	assert_true(g_error_matches(err, PK_ERROR, PK_ERROR_LIMIT));
	g_clear_error(&err);
	assert_int_equal(pk_beneath_read(&text, NULL, dirfd, "../shadow", 0, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_beneath_read(&text, NULL, dirfd, "kernel", 0, &err), -1);
	assert_non_null(strstr(err->message, "a directory"));
	g_clear_error(&err);
	assert_int_equal(plant(f, "linked", PLANT_LINK_TO_SECRET), 0);
	assert_int_equal(pk_beneath_read(&text, NULL, dirfd, "linked", 0, &err), -1);
	assert_non_null(strstr(err->message, "a symbolic link"));
	g_clear_error(&err);
	assert_int_equal(plant(f, "fifo", PLANT_FIFO), 0);
	assert_int_equal(pk_beneath_read(&text, NULL, dirfd, "fifo", 0, &err), -1);
	assert_non_null(strstr(err->message, "a FIFO"));
	g_clear_error(&err);
	close(dirfd);
	assert_null(text);
}

/* pk_beneath_copy: a regular file copied whole, a link refused and dest left as it was. */
static void test_copy(void **state)
{
	const struct fake *f = *state;
	g_autofree char *dest = g_build_filename(f->root, "kept.vmlinux", NULL);
	g_autofree char *text = NULL;
	g_autoptr(GError) err = NULL;

	make_build_dir(f);
	assert_int_equal(pk_beneath_copy(f->build, "vmlinux", dest, 0, &err), 1);
	assert_true(g_file_get_contents(dest, &text, NULL, NULL));
	assert_string_equal(text, "ELF");
	assert_int_equal(pk_beneath_copy(f->build, "vmlinux", dest, 2, &err), -1);
	assert_true(g_error_matches(err, PK_ERROR, PK_ERROR_LIMIT));
	assert_false(g_file_test(dest, G_FILE_TEST_EXISTS));
	g_clear_error(&err);
	assert_int_equal(plant(f, "vmlinux", PLANT_LINK_TO_SECRET), 0);
	assert_int_equal(pk_beneath_copy(f->build, "vmlinux", dest, 0, &err), -1);
	assert_false(g_file_test(dest, G_FILE_TEST_EXISTS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_each_path_each_plant, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
