/* test-bisect.c - the first bad commit of a line, skips and free commits, as data. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/bisect.h"

/*
 * A line as a string: index i is line[i], 'g' good, 'b' bad, 's' skipped
 * (does not build); line[0] is the base and the last one the tip.  free_
 * marks with 'f' the commits already built.
 */
struct bisect_case {
	const char *name;
	const char *line;
	const char *free_;         /* NULL: nothing free */
	unsigned first;            /* expected first bad index */
	const char *skipped;       /* expected skipped indices, as "3,4", or "" */
	unsigned max_paid;         /* tests of non-free commits at most */
};

static const struct bisect_case cases[] = {
	{ "one commit", "gb", NULL, 1, "", 0 },
	{ "two, the first", "gbb", NULL, 1, "", 1 },
	{ "two, the second", "ggb", NULL, 2, "", 1 },
	{ "4 commits, the second", "ggbbb", NULL, 2, "", 2 },
	{ "32 commits, the 21st", "gggggggggggggggggggggbbbbbbbbbbbb", NULL, 21, "", 5 },
	{ "32 commits, the last", "ggggggggggggggggggggggggggggggggb", NULL, 32, "", 5 },
	{ "32 commits, the first", "gbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", NULL, 1, "", 5 },
	{ "a skip in the middle is stepped around", "gggsggbb", NULL, 6, "", 4 },
	{ "a skip right before the first bad is a candidate too", "gggsbbb", NULL, 4, "3", 3 },
	{ "a skip right before the first bad: ambiguous", "ggsbb", NULL, 3, "2", 3 },
	{ "two skips before it", "ggssbb", NULL, 4, "2,3", 4 },
	{ "everything between skipped", "gssb", NULL, 3, "1,2", 2 },
	{ "the bad one itself skipped", "ggsgb", NULL, 4, "", 3 },
	{ "free commits narrow first: no paid test", "ggggbbbb", "ffffffff", 4, "", 0 },
	{ "a free commit near the change", "ggggggggggbbbbbbbbbb", "f........f.f........", 10, "", 1 },
};

struct line_state {
	const char *line;
	const char *free_;
	unsigned paid;
};

static int judge(void *data, unsigned i, enum pk_bisect_state *out, GError **err)
{
	struct line_state *s = data;

	if (!s->free_ || s->free_[i] != 'f')
		s->paid++;
	*out = s->line[i] == 'g' ? PK_BISECT_GOOD : s->line[i] == 'b' ? PK_BISECT_BAD : PK_BISECT_SKIP;
	return 0;
}

static void test_bisect_table(void **state)
{
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const struct bisect_case *c = &cases[k];
		unsigned n = strlen(c->line) - 1;
		g_autofree bool *free_ = g_new0(bool, n + 1);
		struct line_state s = { c->line, c->free_, 0 };
		struct pk_bisect_result res = { 0 };
		g_autoptr(GString) skipped = g_string_new(NULL);

		for (unsigned i = 0; c->free_ && i <= n; i++)
			free_[i] = c->free_[i] == 'f';
		assert_int_equal(pk_bisect_run(&res, n, free_, judge, &s, NULL), 0);
		for (guint i = 0; i < res.skipped->len; i++)
			g_string_append_printf(skipped, "%s%u", i ? "," : "", g_array_index(res.skipped, unsigned, i));
		print_message("%s: first %u, skipped [%s], %u tests, %u paid\n", c->name, res.first,
			      skipped->str, res.tests, s.paid);
		assert_int_equal(res.first, c->first);
		assert_string_equal(skipped->str, c->skipped);
		assert_true(s.paid <= c->max_paid);
		assert_int_equal(pk_bisect_ambiguous(&res), *c->skipped != '\0');
		pk_bisect_result_clear(&res);
	}
}

static int failing(void *data, unsigned i, enum pk_bisect_state *out, GError **err)
{
	g_set_error(err, g_quark_from_static_string("test"), 1, "no QEMU");
	return -1;
}

static void test_bisect_error_stops(void **state)
{
	struct pk_bisect_result res = { 0 };
	g_autoptr(GError) err = NULL;

	assert_int_equal(pk_bisect_run(&res, 8, NULL, failing, NULL, &err), -1);
	assert_non_null(err);
	assert_null(res.skipped);   /* untouched on failure */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bisect_table),
		cmocka_unit_test(test_bisect_error_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
