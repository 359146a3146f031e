/*
 * test-util.c - the shared helpers of base/util.h that no stage's test
 * covers: the redaction of secrets in URLs and connection strings, and
 * the scrubbing of a library's error that was handed such a URL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

static void test_url_redact(void **state)
{
	static const struct { const char *in, *want; } cases[] = {
		/* [store] url: the userinfo's password, the query's password= */
		{ "postgresql://user:secret@host/db", "postgresql://user:***@host/db" },
		{ "postgres://user:s%40cr%2Fet@host:5432/db?sslmode=require",
		  "postgres://user:***@host:5432/db?sslmode=require" },
		{ "postgresql://user@host/db?password=secret", "postgresql://user@host/db?password=***" },
		{ "postgresql://host/db?sslmode=require&password=secret&application_name=x",
		  "postgresql://host/db?sslmode=require&password=***&application_name=x" },
		{ "postgresql:///db?host=/run/pg&pass%77ord=secret&sslpassword=key",
		  "postgresql:///db?host=/run/pg&pass%77ord=***&sslpassword=***" },
		/* libpq's first '@' or RFC 3986's last one: both hidden */
		{ "postgresql://user:p@ss@host/db", "postgresql://user:***@host/db" },
		{ "postgresql://user:pa?ss@host/db", "postgresql://user:***@host/db" },
		/* libpq's key=value form */
		{ "host=db user=bot password=secret dbname=p", "host=db user=bot password=*** dbname=p" },
		{ "host=db password = 'sec ret\\' x' dbname=p", "host=db password = *** dbname=p" },
		{ "PASSWORD=secret", "PASSWORD=***" },
		/* [tree] url: a token as password or as the user alone (forges take both) */
		{ "https://user:token@git.example.org/x.git", "https://user:***@git.example.org/x.git" },
		{ "https://ghp_token@github.com/x/y.git", "https://***@github.com/x/y.git" },
		{ "imaps://bot:secret@mail.example.org/INBOX", "imaps://bot:***@mail.example.org/INBOX" },
		/* nothing to hide: as it was */
		{ "ssh://git@git.example.org/x.git", "ssh://git@git.example.org/x.git" },
		{ "postgresql://bot@db.example.org/printkbot", "postgresql://bot@db.example.org/printkbot" },
		{ "https://git.kernel.org/pub/scm/linux/kernel/git/x.git?a=b@c",
		  "https://git.kernel.org/pub/scm/linux/kernel/git/x.git?a=b@c" },
		{ "/var/lib/printkbot/printkbot.db", "/var/lib/printkbot/printkbot.db" },
		{ "/srv/my trees/a=b.git", "/srv/my trees/a=b.git" },
		{ "", "" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = pk_url_redact(cases[i].in);

		if (strcmp(got, cases[i].want))
			fail_msg("%s: got %s, want %s", cases[i].in, got, cases[i].want);
		assert_true(pk_url_has_secret(cases[i].in) == !!strcmp(cases[i].in, cases[i].want));
	}
	assert_null(pk_url_redact(NULL));
	assert_false(pk_url_has_secret(NULL));
}

/* An error a library wrote about a URL: the URL redacted, a secret quoted alone hidden too. */
static void test_url_scrub(void **state)
{
	static const struct { const char *text, *url, *want; } cases[] = {
		{ "fetching https://u:tok3n@h/x.git: unexpected http status code: 401", "https://u:tok3n@h/x.git",
		  "fetching https://u:***@h/x.git: unexpected http status code: 401" },
		{ "invalid percent-encoded token: \"s3cr%zz\"", "postgresql://u:s3cr%zz@h/db",
		  "invalid percent-encoded token: \"***\"" },
		{ "password authentication failed for user \"u\" (s3cr@t)", "postgresql://u:s3cr%40t@h/db",
		  "password authentication failed for user \"u\" (***)" },
		/* a short secret stays in other words (the whole URL is still redacted) */
		{ "host h: no route; postgresql://u:ab@h/db", "postgresql://u:ab@h/db",
		  "host h: no route; postgresql://u:***@h/db" },
		{ "nothing secret here", "/var/lib/p.db", "nothing secret here" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = pk_url_scrub(cases[i].text, cases[i].url);

		if (strcmp(got, cases[i].want))
			fail_msg("%s: got %s, want %s", cases[i].text, got, cases[i].want);
	}
	assert_null(pk_url_scrub(NULL, "x"));
}

/*
 * The runtime dir the locks live in: made 0755 when missing; a link, a
 * dir writable by others (/run/lock's mode, where any user could take a
 * lock first) or another user's dir refused, saying which.
 */
static void test_runtime_dir(void **state)
{
	g_autofree char *root = g_dir_make_tmp("pk-runtime-XXXXXX", NULL);
	g_autofree char *fresh = g_build_filename(root, "fresh", NULL);
	g_autofree char *open_dir = g_build_filename(root, "sticky", NULL);
	g_autofree char *link = g_build_filename(root, "link", NULL);
	g_autofree char *got = NULL, *cmd = NULL;
	g_autoptr(GError) err = NULL;
	struct stat st;

	(void)state;
	g_setenv("PRINTKBOT_RUNTIME_DIR", fresh, TRUE);
	got = pk_runtime_dir(&err);
	assert_string_equal(got, fresh);
	assert_int_equal(stat(fresh, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	g_clear_pointer(&got, g_free);

	assert_int_equal(mkdir(open_dir, 01777), 0);
	assert_int_equal(chmod(open_dir, 01777), 0);
	g_setenv("PRINTKBOT_RUNTIME_DIR", open_dir, TRUE);
	assert_null(pk_runtime_dir(&err));
	assert_non_null(strstr(err->message, "writable by group or others"));
	g_clear_error(&err);

	assert_int_equal(symlink(fresh, link), 0);
	g_setenv("PRINTKBOT_RUNTIME_DIR", link, TRUE);
	assert_null(pk_runtime_dir(&err));
	assert_non_null(strstr(err->message, "a symbolic link"));
	g_clear_error(&err);

	if (geteuid() == 0) {
		assert_int_equal(chmod(open_dir, 0755), 0);
		assert_int_equal(chown(open_dir, 65534, 65534), 0);
		g_setenv("PRINTKBOT_RUNTIME_DIR", open_dir, TRUE);
		assert_null(pk_runtime_dir(&err));
		assert_non_null(strstr(err->message, "owned by another user"));
		g_clear_error(&err);
	}
	g_unsetenv("PRINTKBOT_RUNTIME_DIR");
	cmd = g_strdup_printf("rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url_redact),
		cmocka_unit_test(test_url_scrub),
		cmocka_unit_test(test_runtime_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
