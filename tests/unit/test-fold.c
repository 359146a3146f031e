/* test-fold.c - what the compiler knows of a format, folded into its text (fold.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/fold.h"

static const struct pk_fold_env env = { "neo_parse_modem", "jsm", "jsm_neo" };

static void assert_str_or_null(const char *got, const char *want)
{
	if (!want) {
		assert_null(got);
	} else {
		assert_non_null(got);
		assert_string_equal(got, want);
	}
}

/* Expressions the compiler knows the string of, and some it does not. */
static void test_value(void **state)
{
	static const struct { const char *expr, *value; } cases[] = {
		{ "\"x_probe\"", "x_probe" },
		{ "\"a\" \"b\\n\"", "ab\\n" },
		{ "__func__", "neo_parse_modem" },
		{ "__FUNCTION__", "neo_parse_modem" },
		{ "__PRETTY_FUNCTION__", "neo_parse_modem" },
		{ "KBUILD_MODNAME \": \"", "jsm: " },
		{ "KBUILD_BASENAME", "jsm_neo" },
		{ "ch->ch_portnum", NULL },
		{ "name", NULL },
		{ "f(\"x\")", NULL },
		{ "\"cut off", NULL },
		{ "", NULL },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = pk_fold_value(&env, cases[i].expr);

		print_message("value: %s\n", cases[i].expr);
		assert_str_or_null(got, cases[i].value);
	}
	/* a name whose value is unknown where it is folded */
	g_autofree char *func = pk_fold_value(&(struct pk_fold_env){ NULL, "jsm", NULL }, "__func__");
	assert_null(func);
}

struct format_case {
	const char *fmt;
	const char *args[6];    /* NULL-terminated */
	const char *folded;
	const char *left;       /* the arguments left, joined with '|' */
};

static const struct format_case format_cases[] = {
	/* the jsm patch: "neo_parse_modem: port..." made "%s: port...", __func__ */
	{ "%s: port: %d msignals: %x\\n", { "__func__", "ch->ch_portnum", "msignals" },
	  "neo_parse_modem: port: %d msignals: %x\\n", "ch->ch_portnum|msignals" },
	{ "%d %s", { "n", "\"x\"" }, "%d x", "n" },
	/* an unknown argument keeps its conversion, and the count goes on */
	{ "%s %s", { "name", "KBUILD_MODNAME" }, "%s jsm", "name" },
	/* width and precision take arguments of their own; only a plain %s is folded */
	{ "%*s|%.*s|%s", { "w", "\"a\"", "p", "\"b\"", "\"c\"" }, "%*s|%.*s|c", "w|\"a\"|p|\"b\"" },
	{ "%-8s|%s", { "\"a\"", "\"b\"" }, "%-8s|b", "\"a\"" },
	{ "%pV: %s", { "&vaf", "__func__" }, "%pV: neo_parse_modem", "&vaf" },
	{ "%lu %%s %s", { "n", "\"x\"" }, "%lu %%s x", "n" },
	/* a value's '%' is doubled: the result is still a format */
	{ "load %s", { "\"100%\"" }, "load 100%%", "" },
	/* more conversions than arguments the hunk shows */
	{ "%s: %d", { "__func__" }, "neo_parse_modem: %d", "" },
	{ "no conversion\\n", { NULL }, "no conversion\\n", "" },
	{ "ends in %", { NULL }, "ends in %", "" },
};

static void test_format(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(format_cases); i++) {
		const struct format_case *c = &format_cases[i];
		guint n = 0;
		g_auto(GStrv) left = NULL;
		g_autofree char *joined = NULL;

		while (c->args[n])
			n++;
		g_autofree char *got = pk_fold_format(c->fmt, c->args, n, &env, &left);
		print_message("format: %s\n", c->fmt);
		assert_string_equal(got, c->folded);
		joined = g_strjoinv("|", left);
		assert_string_equal(joined, c->left);
	}
}

/* Folding what a file knows, then what a call knows, gives what folding once does. */
static void test_refold(void **state)
{
	static const char *const args[] = { "KBUILD_MODNAME", "__func__", "\"x\"" };
	const struct pk_fold_env file = { NULL, "jsm", NULL };
	g_auto(GStrv) left = NULL;
	g_autofree char *once = pk_fold_format("%s:%s:%s: ", args, 3, &env, NULL);
	g_autofree char *first = pk_fold_format("%s:%s:%s: ", args, 3, &file, &left);
	g_autofree char *second = NULL;

	assert_string_equal(first, "jsm:%s:x: ");
	assert_int_equal(g_strv_length(left), 1);
	second = pk_fold_format(first, (const char *const *)left, 1, &env, NULL);
	assert_string_equal(second, once);
	assert_string_equal(second, "jsm:neo_parse_modem:x: ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_refold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
