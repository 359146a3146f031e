/*
 * test-boot.c - a boot's output is cut at its limits while it is written:
 * pk_boot_kernel() against a stand-in qemu-system-x86_64 (a script first
 * in PATH) that floods the capture file or the console and never exits.
 * The capture file never grows past max_capture (RLIMIT_FSIZE on QEMU),
 * the console kept never past max_console, and both cuts are reported in
 * the detail and at the console's end; the boot ends at its timeout.
 * And the boots of one machine take turns: never more at once than its
 * boot slots (one per two CPUs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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
	"slot) echo \"start $(date +%s.%N)\" >> \"$FAKE_QEMU_LOG\"; sleep 1;\n"
	"      echo \"end $(date +%s.%N)\" >> \"$FAKE_QEMU_LOG\"; exit 0;;\n"
	"args) printf '%s\\n' \"$0\" \"$@\" > \"$FAKE_QEMU_LOG\"; exit 0;;\n"
	"esac\n"
	"exec sleep 60\n";

struct fixture {
	char *dir, *bin, *size_file, *old_path;
	struct pk_lab lab;
};

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autofree char *qemu = NULL, *arm_qemu = NULL, *accel = NULL, *path = NULL;
	struct pk_sandbox_config c = PK_SANDBOX_CONFIG_INIT;

	f->dir = g_dir_make_tmp("printkbot-boot-test-XXXXXX", NULL);
	f->bin = g_build_filename(f->dir, "bin", NULL);
	f->size_file = g_build_filename(f->dir, "capture-size", NULL);
	qemu = g_build_filename(f->bin, "qemu-system-x86_64", NULL);
	arm_qemu = g_build_filename(f->bin, "qemu-system-aarch64", NULL);
	accel = g_build_filename(f->dir, "accel", NULL);
	g_mkdir(f->bin, 0755);
	g_file_set_contents(qemu, fake_qemu, -1, NULL);
	g_chmod(qemu, 0755);
	g_file_set_contents(arm_qemu, fake_qemu, -1, NULL);
	g_chmod(arm_qemu, 0755);
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

/* Events of test_boots_take_turns() by time (+t a start, -t an end); at a tie an end first. */
static gint by_time(gconstpointer pa, gconstpointer pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	if (fabs(a) != fabs(b))
		return fabs(a) < fabs(b) ? -1 : 1;
	return (a > 0) - (b > 0);
}

/* One more boot than the machine has slots, all at once: at most that many run together. */
static void test_boots_take_turns(void **state)
{
	struct fixture *f = *state;
	long slots = MAX(1L, sysconf(_SC_NPROCESSORS_ONLN) / 2);
	g_autofree char *log = g_build_filename(f->dir, "qemu-runs", NULL);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	g_autoptr(GArray) events = g_array_new(FALSE, FALSE, sizeof(double));   /* +t start, -t end */
	int running = 0, most = 0;

	g_setenv("FAKE_QEMU", "slot", TRUE);
	g_setenv("FAKE_QEMU_LOG", log, TRUE);
	for (long i = 0; i <= slots; i++) {
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			struct pk_boot_opts o = PK_BOOT_OPTS_INIT;
			struct pk_boot_result r = { 0 };

			o.vmlinux = f->lab.initrd;
			o.timeout = 20;
			_exit(pk_boot_kernel(&r, &f->lab, &o, NULL) == 0 ? 0 : 1);
		}
	}
	for (long i = 0; i <= slots; i++) {
		int status;

		assert_true(wait(&status) > 0);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_true(g_file_get_contents(log, &text, NULL, NULL));
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l && **l; l++) {
		double t = g_ascii_strtod(strchr(*l, ' ') + 1, NULL);
		double signed_t = g_str_has_prefix(*l, "start") ? t : -t;

		g_array_append_val(events, signed_t);
	}
	assert_int_equal(events->len, 2 * (slots + 1));
	g_array_sort(events, by_time);
	for (guint i = 0; i < events->len; i++) {
		running += g_array_index(events, double, i) > 0 ? 1 : -1;
		most = MAX(most, running);
	}
	assert_true(most >= 1 && most <= slots);
}

/* QEMU's command line of a boot, one argument a line, as the stand-in was run. */
static char **qemu_line(struct fixture *f, const struct pk_arch *arch)
{
	g_autofree char *log = g_build_filename(f->dir, "args", NULL), *text = NULL;
	struct pk_boot_result r;

	f->lab.arch = arch;
	g_setenv("FAKE_QEMU_LOG", log, TRUE);
	boot(f, "args", &r);
	pk_boot_result_clear(&r);
	f->lab.arch = NULL;
	assert_true(g_file_get_contents(log, &text, NULL, NULL));
	return g_strsplit(text, "\n", -1);
}

/* Whether line holds a then b, one after the other. */
static bool has_pair(char **line, const char *a, const char *b)
{
	for (char **l = line; *l && l[1]; l++)
		if (!strcmp(*l, a) && !strcmp(l[1], b))
			return true;
	return false;
}

/*
 * Each architecture boots on its own QEMU and machine, its console on the
 * command line, its capture port where its init looks (qemu/init.c): x86_64
 * the second 16550 of q35 (no printkbot.capture=), arm64 a virtio console
 * on virt, under TCG even where KVM serves x86_64.
 */
static void test_qemu_line_per_arch(void **state)
{
	struct fixture *f = *state;
	g_auto(GStrv) x86 = qemu_line(f, NULL), arm = NULL;
	g_autofree char *accel = g_build_filename(f->dir, "accel", NULL);
	const char *cmdline = NULL;

	assert_true(g_str_has_suffix(x86[0], "/qemu-system-x86_64"));
	assert_true(has_pair(x86, "-machine", "q35"));
	assert_true(has_pair(x86, "-serial", "chardev:capture"));
	for (char **l = x86; l[0] && l[1]; l++)
		if (!strcmp(*l, "-append"))
			cmdline = l[1];
	assert_non_null(cmdline);
	assert_true(g_str_has_prefix(cmdline, "console=ttyS0 "));
	assert_null(strstr(cmdline, "printkbot.capture"));

	g_file_set_contents(accel, "kvm", -1, NULL);   /* KVM for x86_64 says nothing of arm64 */
	arm = qemu_line(f, pk_arch_by_name("arm64"));
	g_file_set_contents(accel, "tcg", -1, NULL);
	assert_true(g_str_has_suffix(arm[0], "/qemu-system-aarch64"));
	assert_true(has_pair(arm, "-machine", "virt"));
	assert_true(has_pair(arm, "-cpu", "cortex-a57"));
	assert_false(has_pair(arm, "-accel", "kvm"));
	assert_true(has_pair(arm, "-device", "virtconsole,chardev=capture"));
	assert_false(has_pair(arm, "-serial", "chardev:capture"));
	cmdline = NULL;
	for (char **l = arm; l[0] && l[1]; l++)
		if (!strcmp(*l, "-append"))
			cmdline = l[1];
	assert_non_null(cmdline);
	assert_true(g_str_has_prefix(cmdline, "console=ttyAMA0 "));
	assert_non_null(strstr(cmdline, " printkbot.capture=hvc0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_capture_cut_while_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_console_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_boots_take_turns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qemu_line_per_arch, setup, teardown),
	};

	return cmocka_run_group_tests_name("boot", tests, NULL, NULL);
}
