/*
 * test-authres.c - Authentication-Results (intake/authres.h): the
 * grammar of RFC 8601 read with its comments, quoted strings and
 * folding, errors that say where; and whom the fields vouch for: only
 * the topmost field of a trusted authserv-id, a pass only for the From
 * domain, against hostile headers (a forged field below the server's,
 * another id, a pass for another domain, a pass hidden in a comment or
 * a quoted string).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "intake/authres.h"

/* Each result of a as "method=result ptype.property=value ...", results joined with "; ". */
static char *flatten(const struct pk_authres *a)
{
	GString *s = g_string_new(a->authserv_id);

	for (guint i = 0; i < a->results->len; i++) {
		const struct pk_authres_result *r = a->results->pdata[i];

		g_string_append_printf(s, "; %s=%s", r->method, r->result);
		for (guint k = 0; k < r->props->len; k++) {
			const struct pk_authres_prop *p = r->props->pdata[k];

			if (!strcmp(p->ptype, "reason"))
				g_string_append_printf(s, " reason=[%s]", p->value);
			else
				g_string_append_printf(s, " %s.%s=[%s]", p->ptype, p->property, p->value);
		}
	}
	return g_string_free(s, FALSE);
}

static void test_parse(void **state)
{
	static const struct {
		const char *value;
		const char *want;     /* flatten() of the result, or NULL: an error */
		const char *error;    /* a part of the error's message */
	} cases[] = {
		/* RFC 8601's own examples */
		{ "example.org 1; none", "example.org" },
		{ " example.com;\n spf=pass smtp.mailfrom=example.net",
		  "example.com; spf=pass smtp.mailfrom=[example.net]" },
		{ "example.com;\r\n\t auth=pass (cram-md5) smtp.auth=sender@example.net;\r\n"
		  "\t spf=pass smtp.mailfrom=example.net",
		  "example.com; auth=pass smtp.auth=[sender@example.net]; spf=pass smtp.mailfrom=[example.net]" },
		{ "example.com; sender-id=fail header.from=example.com; dkim=pass (good signature) "
		  "header.d=example.com",
		  "example.com; sender-id=fail header.from=[example.com]; dkim=pass header.d=[example.com]" },
		/* opendkim's, with its comment and a base64 value */
		{ " mx.example.org;\n\tdkim=pass (1024-bit key; unprotected) header.d=example.org "
		  "header.i=@example.org header.a=rsa-sha256 header.s=test header.b=Ab+/Cd=E",
		  "mx.example.org; dkim=pass header.d=[example.org] header.i=[@example.org] "
		  "header.a=[rsa-sha256] header.s=[test] header.b=[Ab+/Cd=E]" },
		/* case, blanks around '=' and '.', a method version, a reason, a quoted id */
		{ "\"mx.example.org\" ; DKIM/1 = PASS Header . D = Example.ORG reason=\"ok; fine\"",
		  "mx.example.org; dkim=pass header.d=[Example.ORG] reason=[ok; fine]" },
		/* comments nest and hold what would be results */
		{ "mx; dkim=fail (a (nested) comment; dkim=pass header.d=example.org) header.d=evil.example",
		  "mx; dkim=fail header.d=[evil.example]" },
		/* a quoted local part may hold ';' and '=' */
		{ "mx; spf=pass smtp.mailfrom=\"a;dkim=pass header.d=example.org\"@evil.example",
		  "mx; spf=pass smtp.mailfrom=[a;dkim=pass header.d=example.org@evil.example]" },
		{ "mx; dkim=pass header.d=\"example.org\" header.i=\\", NULL, "a property without its value" },
		{ "", NULL, "no authserv-id" },
		{ "mx.example.org", NULL, "no ';' and result" },
		{ "mx.example.org;", NULL, "a result without its method" },
		{ "mx; dkim", NULL, "a method without '='" },
		{ "mx; dkim=", NULL, "a method without its result" },
		{ "mx; dkim=pass header", NULL, "ptype.property=value" },
		{ "mx; dkim=pass header.d", NULL, "a property without '='" },
		{ "mx; dkim=pass header.d=", NULL, "a property without its value" },
		{ "mx; dkim=pass (unterminated", NULL, "an unterminated comment" },
		{ "mx; dkim=pass header.d=\"x", NULL, "an unterminated quoted string" },
		{ "mx; dkim=pass\x01 header.d=x", NULL, "a control character" },
		{ "mx; none; dkim=pass header.d=example.org", NULL, "a method without '='" },
		{ "mx; dkim=pass header.d=example.org \"x\"", NULL, "at byte 35 ('\"')" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(pk_authres_t) a = { 0 };
		g_autoptr(GError) err = NULL;
		int rc = pk_authres_parse(&a, cases[i].value, &err);

		if (cases[i].want) {
			g_autofree char *got = NULL;

			if (rc < 0)
				fail_msg("case %zu: %s", i, err->message);
			got = flatten(&a);
			if (strcmp(got, cases[i].want))
				fail_msg("case %zu: '%s', not '%s'", i, got, cases[i].want);
		} else {
			if (rc == 0)
				fail_msg("case %zu: read, but it is no header", i);
			if (!strstr(err->message, cases[i].error))
				fail_msg("case %zu: '%s' does not say '%s'", i, err->message, cases[i].error);
			assert_null(a.authserv_id);
		}
	}
}

static void test_vouches(void **state)
{
	static const char *const mx[] = { "mx.example.org", NULL };
	static const char *const two[] = { "dkim.example.org", "spf.example.org", NULL };
	static const char *const none[] = { NULL };
	static const struct {
		const char *fields[3];    /* topmost first */
		const char *const *ids;
		const char *from;
		bool ok;
		const char *what;         /* a part of *out_what */
	} cases[] = {
		{ { "mx.example.org; dkim=pass header.d=example.org" }, mx, "max@example.org", true,
		  "dkim=pass header.d=example.org (mx.example.org)" },
		{ { "MX.Example.ORG; dkim=pass header.d=Example.Org." }, mx, "max@example.org", true, "dkim=pass" },
		{ { "mx.example.org; dkim=pass header.i=max@lists.example.org" }, mx, "max@lists.example.org", true,
		  "dkim=pass header.i=@lists.example.org" },
		{ { "mx.example.org; spf=pass smtp.mailfrom=bounce@example.org" }, mx, "max@example.org", true,
		  "spf=pass smtp.mailfrom=example.org" },
		{ { "mx.example.org; spf=pass smtp.mailfrom=example.org" }, mx, "max@example.org", true, "spf=pass" },
		/* a parent domain signs for its subdomains; a bare TLD for nobody; SPF only for itself */
		{ { "mx.example.org; dkim=pass header.d=example.org" }, mx, "max@lists.example.org", true, "dkim" },
		{ { "mx.example.org; dkim=pass header.d=org" }, mx, "max@example.org", false, "no pass for example.org" },
		{ { "mx.example.org; dkim=pass header.d=lists.example.org" }, mx, "max@example.org", false, "no pass" },
		{ { "mx.example.org; spf=pass smtp.mailfrom=x@lists.example.org" }, mx, "max@example.org", false,
		  "no pass" },
		{ { "mx.example.org; dkim=pass header.d=ample.org" }, mx, "max@example.org", false, "no pass" },
		/* a pass for another domain */
		{ { "mx.example.org; dkim=pass header.d=evil.example" }, mx, "max@example.org", false,
		  "mx.example.org found dkim=pass header.d=evil.example: no pass for example.org" },
		{ { "mx.example.org; dkim=fail header.d=example.org; spf=softfail smtp.mailfrom=example.org" }, mx,
		  "max@example.org", false,
		  "found dkim=fail header.d=example.org, spf=softfail smtp.mailfrom=example.org: no pass" },
		{ { "mx.example.org; dkim=pass" }, mx, "max@example.org", false, "no pass" },
		{ { "mx.example.org; none" }, mx, "max@example.org", false, "mx.example.org found none" },
		/* the server's field on top, a forged one below: the forged one is no one's */
		{ { "mx.example.org; dkim=none", "mx.example.org; dkim=pass header.d=example.org" }, mx,
		  "max@example.org", false, "found dkim=none" },
		{ { "mx.example.org; dkim=pass header.d=example.org", "mx.example.org; dkim=fail" }, mx,
		  "max@example.org", true, "dkim=pass" },
		/* another id, however good its news */
		{ { "evil.example; dkim=pass header.d=example.org" }, mx, "max@example.org", false,
		  "no Authentication-Results of mx.example.org" },
		{ { "evil.example; dkim=pass header.d=example.org", "mx.example.org; spf=fail" }, mx,
		  "max@example.org", false, "mx.example.org found spf=fail" },
		{ { "mx.example.org.evil.example; dkim=pass header.d=example.org" }, mx, "max@example.org", false,
		  "no Authentication-Results" },
		/* folded, and a pass only in a comment or a quoted string */
		{ { "mx.example.org;\n\tdkim=pass\n\t header.d=example.org" }, mx, "max@example.org", true, "dkim" },
		{ { "mx.example.org; dkim=fail (dkim=pass header.d=example.org) header.d=example.org" }, mx,
		  "max@example.org", false, "dkim=fail" },
		{ { "mx.example.org; spf=pass smtp.mailfrom=\"x; dkim=pass header.d=example.org\"@evil.example" },
		  mx, "max@example.org", false, "no pass" },
		/* the server's field does not read: it vouches for nothing, and a forged one below neither */
		{ { "mx.example.org; dkim=pass header.d=example.org (", "mx.example.org; dkim=pass header.d=example.org" },
		  mx, "max@example.org", false, "cannot be read (Authentication-Results: an unterminated comment" },
		/* two servers, each with its own id: each one's topmost counts */
		{ { "spf.example.org; spf=pass smtp.mailfrom=example.org", "dkim.example.org; dkim=fail" }, two,
		  "max@example.org", true, "spf=pass smtp.mailfrom=example.org (spf.example.org)" },
		{ { "spf.example.org; spf=none" }, two, "max@example.org", false,
		  "no Authentication-Results of dkim.example.org; spf.example.org found spf=none: no pass" },
		/* no fields, no ids, no From */
		{ { NULL }, mx, "max@example.org", false, "no Authentication-Results of mx.example.org" },
		{ { "mx.example.org; dkim=pass header.d=example.org" }, none, "max@example.org", false, "no authserv-id" },
		{ { "mx.example.org; dkim=pass header.d=example.org" }, mx, "max", false, "no domain" },
		{ { "mx.example.org; dkim=pass header.d=example.org" }, mx, NULL, false, "no domain" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *what = NULL;
		guint n = 0;
		bool ok;

		while (n < G_N_ELEMENTS(cases[i].fields) && cases[i].fields[n])
			n++;
		ok = pk_authres_vouches(cases[i].fields, n, cases[i].ids, cases[i].from, &what);
		assert_non_null(what);
		if (ok != cases[i].ok || !strstr(what, cases[i].what))
			fail_msg("case %zu: %s, '%s' (wanted %s, '%s')", i, ok ? "vouches" : "does not", what,
				 cases[i].ok ? "vouches" : "does not", cases[i].what);
	}
}

/* What a forger writes into a failed check's values is shown short and printable. */
static void test_shown(void **state)
{
	static const char *const mx[] = { "mx.example.org", NULL };
	g_autofree char *longd = g_strnfill(300, 'a');
	g_autofree char *field = g_strdup_printf("mx.example.org; dkim=fail header.d=\"%s\xc3\xa9\"", longd);
	g_autofree char *what = NULL;

	assert_false(pk_authres_vouches((const char *[]){ field }, 1, mx, "max@example.org", &what));
	assert_true(strlen(what) < 200);
	assert_non_null(strstr(what, "...: no pass for example.org"));
	for (const char *p = what; *p; p++)
		assert_true(g_ascii_isprint(*p));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_vouches),
		cmocka_unit_test(test_shown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
