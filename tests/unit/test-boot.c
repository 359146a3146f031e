/*
 * test-boot.c - a boot's output is cut at its limits while it is written:
 * pk_boot_kernel() against a stand-in qemu-system-x86_64 (a script first
 * in PATH) that floods the capture file or the console and never exits.
 * The capture file never grows past max_capture (RLIMIT_FSIZE on QEMU),
 * the console kept never past max_console, and both cuts are reported in
 * the detail and at the console's end; the boot ends at its timeout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "lab/boot.h"
#include "lab/sandbox.h"
#include "base/util.h"

static const char fake_qemu[] =
	"#!/bin/sh\n"
	"# a stand-in QEMU: finds the capture file, floods what FAKE_QEMU says\n"
	"for a; do case $a in file,id=capture,path=*) cap=${a#file,id=capture,path=};; esac; done\n"
	"case $FAKE_QEMU in\n"
	"capture) yes 0123456789abcdef > \"$cap\"; stat -c %s \"$cap\" > \"$FAKE_QEMU_SIZE\";;\n"
	"console) yes 'a console that never ends';;\n"
	"esac\n"
	"exec sleep 60\n";

struct fixture {
	char *dir, *bin, *size_file, *old_path;
	struct pk_lab lab;
};

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autofree char *qemu = NULL, *accel = NULL, *path = NULL;
	struct pk_sandbox_config c = PK_SANDBOX_CONFIG_INIT;

	f->dir = g_dir_make_tmp("printkbot-boot-test-XXXXXX", NULL);
	f->bin = g_build_filename(f->dir, "bin", NULL);
	f->size_file = g_build_filename(f->dir, "capture-size", NULL);
	qemu = g_build_filename(f->bin, "qemu-system-x86_64", NULL);
	accel = g_build_filename(f->dir, "accel", NULL);
	g_mkdir(f->bin, 0755);
	g_file_set_contents(qemu, fake_qemu, -1, NULL);
	g_chmod(qemu, 0755);
	g_file_set_contents(accel, "tcg", -1, NULL);   /* no KVM probe */
	f->lab.cache = g_strdup(f->dir);
	f->lab.initrd = g_build_filename(f->dir, "initrd", NULL);
	g_file_set_contents(f->lab.initrd, "", 0, NULL);
	f->old_path = g_strdup(g_getenv("PATH"));
	path = g_strconcat(f->bin, ":", f->old_path, NULL);
	g_setenv("PATH", path, TRUE);
	g_setenv("FAKE_QEMU_SIZE", f->size_file, TRUE);
	c.mode = PK_SANDBOX_OFF;        /* the stand-in lives outside what the sandbox shows */
	c.capture_cap = 1u << 20;
	c.console_cap = 64u << 10;
	pk_sandbox_configure(&c);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "rm", "-rf", f->dir, NULL };
	struct pk_proc_result r;
	struct pk_sandbox_config c = PK_SANDBOX_CONFIG_INIT;

	g_setenv("PATH", f->old_path, TRUE);
	pk_proc_run(&r, argv, NULL, NULL);
	pk_sandbox_configure(&c);
	g_free(f->lab.cache);
	g_free(f->lab.initrd);
	g_free(f->dir);
	g_free(f->bin);
	g_free(f->size_file);
	g_free(f->old_path);
	g_free(f);
	return 0;
}

static void boot(struct fixture *f, const char *mode, struct pk_boot_result *out)
{
	struct pk_boot_opts o = PK_BOOT_OPTS_INIT;

	g_setenv("FAKE_QEMU", mode, TRUE);
	o.vmlinux = f->lab.initrd;   /* anything: the stand-in does not read it */
	o.timeout = 1;
	assert_int_equal(pk_boot_kernel(out, &f->lab, &o, NULL), 0);
}

static void test_capture_cut_while_written(void **state)
{
	struct fixture *f = *state;
	struct pk_boot_result r = { 0 };
	g_autofree char *size = NULL;

	boot(f, "capture", &r);
	assert_int_equal(r.status, PK_BOOT_TIMEOUT);
	assert_true(g_file_get_contents(f->size_file, &size, NULL, NULL));
	assert_int_equal(atoi(size), 1 << 20);   /* QEMU could write no more */
	assert_non_null(strstr(r.detail, "the capture port was cut at its limit of 1048576 bytes"));
	assert_non_null(strstr(r.console, "[printkbot: the capture port was cut at its limit"));
	assert_false(r.capture->complete);
	pk_boot_result_clear(&r);
}

static void test_console_cut(void **state)
{
	struct fixture *f = *state;
	struct pk_boot_result r = { 0 };

	boot(f, "console", &r);
	assert_int_equal(r.status, PK_BOOT_TIMEOUT);
	assert_true(strlen(r.console) < (64u << 10) + 200);
	assert_non_null(strstr(r.console, "a console that never ends"));
	assert_non_null(strstr(r.detail, "the console was cut at its limit of 65536 bytes"));
	assert_true(g_str_has_suffix(r.console, "[printkbot: the console was cut at its limit of 65536 bytes]\n"));
	pk_boot_result_clear(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_capture_cut_while_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_console_cut, setup, teardown),
	};

	return cmocka_run_group_tests_name("boot", tests, NULL, NULL);
}
