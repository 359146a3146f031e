/* test-proc.c - child supervision: exit codes, deadlines, caps, process groups. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "base/proc.h"
#include "base/util.h"

static void test_exit_code_and_capture(void **state)
{
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	g_autoptr(GString) cap = g_string_new(NULL);
	struct pk_proc_result r;

	o.capture = cap;
	assert_int_equal(pk_proc_run(&r, argv, &o, NULL), 0);
	assert_int_equal(r.end, PK_PROC_EXITED);
	assert_int_equal(r.exit_code, 3);
	assert_false(pk_proc_ok(&r));
	assert_non_null(strstr(cap->str, "out\n"));
	assert_non_null(strstr(cap->str, "err\n"));
}

/* The deadline ends the whole group, including a grandchild holding the pipe. */
static void test_timeout_kills_group(void **state)
{
	const char *argv[] = { "sh", "-c", "sleep 30 & sleep 30", NULL };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result r;
	g_autofree char *how = NULL;

	o.timeout = 0.5;
	assert_int_equal(pk_proc_run(&r, argv, &o, NULL), 0);
	assert_int_equal(r.end, PK_PROC_TIMEOUT);
	assert_true(r.seconds < 10);
	how = pk_proc_describe(&r);
	assert_non_null(strstr(how, "timeout"));
}

static void test_output_cap(void **state)
{
	const char *argv[] = { "sh", "-c", "head -c 1000000 /dev/zero", NULL };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	g_autoptr(GString) cap = g_string_new(NULL);
	struct pk_proc_result r;

	o.capture = cap;
	o.output_cap = 4096;
	assert_int_equal(pk_proc_run(&r, argv, &o, NULL), 0);
	assert_true(pk_proc_ok(&r)); /* the child was not blocked by the cap */
	assert_true(r.truncated);
	assert_int_equal(cap->len, 4096);
}

static void test_signal_and_missing(void **state)
{
	const char *killer[] = { "sh", "-c", "kill -SEGV $$", NULL };
	const char *missing[] = { "printkbot-no-such-program", NULL };
	struct pk_proc_result r;

	assert_int_equal(pk_proc_run(&r, killer, NULL, NULL), 0);
	assert_int_equal(r.end, PK_PROC_SIGNALED);
	assert_int_equal(r.signal, SIGSEGV);
	assert_int_equal(pk_proc_run(&r, missing, NULL, NULL), 0);
	assert_int_equal(r.exit_code, 127);
}

static void test_cancel(void **state)
{
	const char *argv[] = { "sleep", "30", NULL };
	volatile sig_atomic_t cancel = 1;
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result r;

	o.cancel = &cancel;
	assert_int_equal(pk_proc_run(&r, argv, &o, NULL), 0);
	assert_int_equal(r.end, PK_PROC_CANCELED);
	assert_true(r.seconds < 10);
}

/* A write past the file size limit fails (EFBIG), the writer is not killed, the file is cut. */
static void test_file_size_limit(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("printkbot-proc-XXXXXX", NULL);
	g_autofree char *file = g_build_filename(dir, "out", NULL);
	g_autofree char *script = g_strdup_printf("head -c 100000 /dev/zero > %s; echo rc=$?", file);
	const char *argv[] = { "sh", "-c", script, NULL };
	struct pk_limits l = { .file_size = 4096 };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	g_autoptr(GString) cap = g_string_new(NULL);
	struct pk_proc_result r;
	GStatBuf st;

	o.limits = &l;
	o.capture = cap;
	assert_int_equal(pk_proc_run(&r, argv, &o, NULL), 0);
	assert_true(pk_proc_ok(&r));
	assert_non_null(strstr(cap->str, "rc=1"));
	assert_int_equal(g_stat(file, &st), 0);
	assert_int_equal(st.st_size, 4096);
	g_unlink(file);
	g_rmdir(dir);
}

/* A process that spins past its CPU limit is killed by SIGXCPU (or SIGKILL). */
static void test_cpu_limit(void **state)
{
	const char *argv[] = { "sh", "-c", "while :; do :; done", NULL };
	struct pk_limits l = { .cpu_seconds = 1 };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result r;

	o.limits = &l;
	o.timeout = 30;
	assert_int_equal(pk_proc_run(&r, argv, &o, NULL), 0);
	assert_int_equal(r.end, PK_PROC_SIGNALED);
	assert_true(r.signal == SIGXCPU || r.signal == SIGKILL);
	assert_true(r.seconds < 20);
}

/* An allocation past the address space limit fails inside the child. */
static void test_memory_limit(void **state)
{
	const char *argv[] = { "python3", "-c", "x = bytearray(512 << 20)", NULL };
	struct pk_limits l = { .memory = 256u << 20 };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	g_autoptr(GString) cap = g_string_new(NULL);
	struct pk_proc_result r;

	o.limits = &l;
	o.capture = cap;
	assert_int_equal(pk_proc_run(&r, argv, &o, NULL), 0);
	assert_false(pk_proc_ok(&r));
	assert_non_null(strstr(cap->str, "MemoryError"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_code_and_capture),
		cmocka_unit_test(test_timeout_kills_group),
		cmocka_unit_test(test_output_cap),
		cmocka_unit_test(test_signal_and_missing),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_file_size_limit),
		cmocka_unit_test(test_cpu_limit),
		cmocka_unit_test(test_memory_limit),
	};

	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
