/* test-config.c - the configuration file: values, defaults, and errors that name the key. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"

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

static const struct bad_case bad[] = {
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
		cmocka_unit_test(test_bad_values_name_the_key),
		cmocka_unit_test(test_missing_named_file),
		cmocka_unit_test(test_example_loads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
