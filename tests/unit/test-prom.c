/*
 * test-prom.c - Prometheus' text format as base/prom.h writes it: label
 * values and help escaped (backslash, quote, newline, bytes that are not
 * UTF-8), values as the format spells them, a whole text with a
 * histogram exactly as expected, and the file replaced atomically: a
 * reader holding the old file still reads the whole old text, the new
 * one is 0644 under any umask, and no temporary file is left, even by a
 * write that fails.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/prom.h"

static void test_escape(void **state)
{
	static const struct { const char *in, *want; } cases[] = {
		{ "linux-serial", "linux-serial" },
		{ "a\\b", "a\\\\b" },
		{ "say \"hi\"", "say \\\"hi\\\"" },
		{ "two\nlines", "two\\nlines" },
		{ "\\\"\n", "\\\\\\\"\\n" },
		{ "", "" },
		{ NULL, "" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },            /* UTF-8 is kept */
		{ "bad\xff", "bad\xef\xbf\xbd" },            /* a byte that is not: U+FFFD */
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = pk_prom_escape(cases[i].in);

		assert_string_equal(got, cases[i].want);
	}
}

static void test_value(void **state)
{
	static const struct { double in; const char *want; } cases[] = {
		{ 0, "0" }, { 3, "3" }, { -2, "-2" }, { 1700000000, "1700000000" },
		{ 0.25, "0.25" }, { 0.1, "0.1" }, { 12.5, "12.5" }, { 1e300, "1e+300" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = pk_prom_value(cases[i].in);

		assert_string_equal(got, cases[i].want);
	}
	g_autofree char *inf = pk_prom_value(INFINITY), *ninf = pk_prom_value(-INFINITY);
	g_autofree char *nan_ = pk_prom_value(NAN);
	assert_string_equal(inf, "+Inf");
	assert_string_equal(ninf, "-Inf");
	assert_string_equal(nan_, "NaN");
}

/* A whole text: help escaped, labels in order, a histogram's buckets, sum and count. */
static void test_text(void **state)
{
	g_autoptr(pk_prom) p = pk_prom_new();
	static const double bounds[] = { 1, 2.5 };
	static const gint64 le[] = { 1, 3 };

	pk_prom_family(p, "x_jobs", "gauge", "Jobs \\ by\nstate.");
	pk_prom_sample(p, (const char *const[]){ "kind", "series", "state", "queued", NULL }, 2);
	pk_prom_sample(p, (const char *const[]){ "kind", "a\"b", "state", "x\ny", NULL }, 0);
	pk_prom_family(p, "x_age_seconds", "gauge", "Age.");
	pk_prom_sample(p, NULL, 1.5);
	pk_prom_family(p, "x_seconds", "histogram", "Seconds.");
	pk_prom_histogram(p, (const char *const[]){ "status", "ok", NULL }, bounds, le, 2, 4, 9.5);
	pk_prom_histogram(p, NULL, bounds, le, 0, 0, 0);
	assert_string_equal(pk_prom_text(p),
		"# HELP x_jobs Jobs \\\\ by\\nstate.\n"
		"# TYPE x_jobs gauge\n"
		"x_jobs{kind=\"series\",state=\"queued\"} 2\n"
		"x_jobs{kind=\"a\\\"b\",state=\"x\\ny\"} 0\n"
		"# HELP x_age_seconds Age.\n"
		"# TYPE x_age_seconds gauge\n"
		"x_age_seconds 1.5\n"
		"# HELP x_seconds Seconds.\n"
		"# TYPE x_seconds histogram\n"
		"x_seconds_bucket{status=\"ok\",le=\"1\"} 1\n"
		"x_seconds_bucket{status=\"ok\",le=\"2.5\"} 3\n"
		"x_seconds_bucket{status=\"ok\",le=\"+Inf\"} 4\n"
		"x_seconds_sum{status=\"ok\"} 9.5\n"
		"x_seconds_count{status=\"ok\"} 4\n"
		"x_seconds_bucket{le=\"+Inf\"} 0\n"
		"x_seconds_sum 0\n"
		"x_seconds_count 0\n");
}

static gint by_name(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir, sorted, one a line. */
static char *listing(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	const char *n;

	while (d && (n = g_dir_read_name(d)))
		g_ptr_array_add(names, g_strdup(n));
	g_ptr_array_sort(names, by_name);
	g_ptr_array_add(names, NULL);
	return g_strjoinv("\n", (char **)names->pdata);
}

static void test_write_atomic(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("test-prom-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "printkbot-daemon.prom", NULL);
	g_autofree char *gone = g_build_filename(dir, "no-such-dir", "x.prom", NULL);
	g_autofree char *blocked = g_build_filename(dir, "blocked.prom", NULL);
	g_autofree char *inside = g_build_filename(blocked, "x", NULL);
	g_autoptr(pk_prom) one = pk_prom_new(), two = pk_prom_new();
	g_autoptr(GError) err = NULL;
	g_autofree char *text = NULL, *names = NULL;
	char old[64] = { 0 };
	struct stat st;
	mode_t mask;
	int fd;

	pk_prom_family(one, "x_up", "gauge", "Up.");
	pk_prom_sample(one, NULL, 1);
	pk_prom_family(two, "x_up", "gauge", "Up.");
	pk_prom_sample(two, NULL, 2);
	/* a umask that would hide the file from another user: the file is 0644 anyway */
	mask = umask(077);
	assert_int_equal(pk_prom_write(one, path, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* a reader that opened the old file reads it whole after the rewrite: replaced, not rewritten */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pk_prom_write(two, path, &err), 0);
	umask(mask);
	assert_int_equal(read(fd, old, sizeof old - 1), (ssize_t)strlen(pk_prom_text(one)));
	close(fd);
	assert_string_equal(old, pk_prom_text(one));
	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	assert_string_equal(text, pk_prom_text(two));
	/* no temporary file left beside it */
	names = listing(dir);
	assert_string_equal(names, "printkbot-daemon.prom");

	/* a write that cannot be made fails with the path, and the old file stays */
	assert_int_equal(pk_prom_write(one, gone, &err), -1);
	assert_non_null(strstr(err->message, gone));
	g_clear_error(&err);
	/* one that fails at the rename (a directory is in the way) leaves no temporary file */
	assert_int_equal(mkdir(blocked, 0755), 0);
	assert_true(g_file_set_contents(inside, "", 0, NULL));
	assert_int_equal(pk_prom_write(one, blocked, &err), -1);
	assert_non_null(strstr(err->message, blocked));
	g_free(names);
	names = listing(dir);
	assert_string_equal(names, "blocked.prom\nprintkbot-daemon.prom");
	unlink(inside);
	rmdir(blocked);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_write_atomic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
