/* test-config.c - the configuration file: values, defaults, and errors that name the key. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/config.h"
#include "lab/sandbox.h"

/* Write text to a temporary file; returns its path (caller unlinks and frees). */
static char *write_tmp(const char *text)
{
	char *path = NULL;
	int fd = g_file_open_tmp("printkbot-config-XXXXXX.conf", &path, NULL);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_values_and_defaults(void **state)
{
	g_autofree char *path = write_tmp("[test]\nbase = v6.12\nboot_timeout = 20.5\n"
					  "[policy]\nallow_build_system = true\nmax_files = 7\n");
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_string_equal(c.base, "v6.12");
	assert_true(c.boot_timeout == 20.5);
	assert_true(c.policy.allow_build_system);
	assert_false(c.policy.allow_other_files);
	assert_int_equal(c.policy.max_files, 7);
	assert_int_equal(c.policy.max_lines, 20000);   /* the default stays */
	assert_null(c.db);
	pk_config_clear(&c);
	unlink(path);
}

struct bad_case {
	const char *text;
	const char *error_has;
};

/*
 * [policy] sandbox and limits: parsed into the config; they become the
 * process's settings only when the caller installs them, as a copy.
 */
static void test_sandbox_and_limits(void **state)
{
	g_autofree char *path = write_tmp("[policy]\nsandbox = off\nsandbox_user = builder\n"
					  "build_timeout = 600\nbuild_cpu_seconds = 120\n"
					  "build_memory_mb = 1024\nbuild_file_mb = 100\nbuild_processes = 64\n"
					  "max_console_mb = 1\nmax_capture_mb = 2\nmax_mail_mb = 3\n");
	g_autofree char *defaults = write_tmp("[policy]\nmax_files = 7\n");
	const struct pk_sandbox_config *now;
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_int_equal(c.sandbox.mode, PK_SANDBOX_OFF);
	assert_int_equal(c.policy.sandbox, PK_SANDBOX_OFF);
	assert_string_equal(c.sandbox.user, "builder");
	assert_true(c.sandbox.build_timeout == 600 && c.sandbox.build.cpu_seconds == 120);
	assert_true(c.sandbox.build.memory == 1024ull << 20);
	assert_true(c.sandbox.build.file_size == 100ull << 20);
	assert_int_equal(c.sandbox.build.processes, 64);
	assert_true(c.sandbox.console_cap == 1u << 20 && c.sandbox.capture_cap == 2u << 20);
	assert_int_equal(c.policy.max_mail_size, 3u << 20);
	assert_int_equal(pk_sandbox_settings()->mode, PK_SANDBOX_ON);   /* loading installs nothing */
	pk_sandbox_configure(&c.sandbox);
	pk_config_clear(&c);
	now = pk_sandbox_settings();
	assert_int_equal(now->mode, PK_SANDBOX_OFF);
	assert_string_equal(now->user, "builder");   /* a copy: the config is cleared */

	assert_int_equal(pk_config_load(&c, defaults, NULL), 0);
	assert_int_equal(c.sandbox.mode, PK_SANDBOX_ON);
	assert_int_equal(c.policy.sandbox, PK_SANDBOX_ON);
	assert_string_equal(c.sandbox.user, PK_SANDBOX_USER);
	assert_true(c.sandbox.build.memory == 4ull << 30);
	assert_int_equal(c.policy.max_mail_size, 64u << 20);
	assert_int_equal(pk_sandbox_settings()->mode, PK_SANDBOX_OFF);
	pk_sandbox_configure(&c.sandbox);
	pk_config_clear(&c);
	assert_int_equal(pk_sandbox_settings()->mode, PK_SANDBOX_ON);
	unlink(path);
	unlink(defaults);
}

static const struct bad_case bad[] = {
	{ "[policy]\nsandbox = maybe\n", "[policy] sandbox: 'maybe' is not one of on, off" },
	{ "[policy]\nbuild_memory_mb = lots\n", "[policy] build_memory_mb" },
	{ "[policy]\nallow_build_sytem = true\n", "[policy]: unknown key 'allow_build_sytem'" },
	{ "[policy]\nallow_build_system = maybe\n", "[policy] allow_build_system" },
	{ "[policy]\nmax_files = lots\n", "[policy] max_files" },
	{ "[test]\nboot_timeout = -3\n", "must not be negative" },
	{ "this is not a key file\n", "printkbot-config-" },
};

static void test_bad_values_name_the_key(void **state)
{
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		g_autofree char *path = write_tmp(bad[i].text);
		g_autoptr(GError) err = NULL;
		struct pk_config c;

		assert_int_equal(pk_config_load(&c, path, &err), -1);
		print_message("%s\n", err->message);
		assert_non_null(strstr(err->message, bad[i].error_has));
		assert_non_null(strstr(err->message, path));
		unlink(path);
	}
}

static void test_missing_named_file(void **state)
{
	g_autoptr(GError) err = NULL;
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, "/nonexistent/printkbot.conf", &err), -1);
	assert_non_null(strstr(err->message, "/nonexistent/printkbot.conf"));
}

/* The example shipped with the sources is itself a valid configuration. */
static void test_example_loads(void **state)
{
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, PK_SRCDIR "/config.example", NULL), 0);
	pk_config_clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_and_defaults),
		cmocka_unit_test(test_sandbox_and_limits),
		cmocka_unit_test(test_bad_values_name_the_key),
		cmocka_unit_test(test_missing_named_file),
		cmocka_unit_test(test_example_loads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
