/*
 * test-mailcmd.c - commands by mail as intake/mailcmd.h reads them: the
 * #printkbot line of a reply (never a quoted one, nor one in a
 * signature, a diff or a mail carried unquoted under a top-posted reply),
 * its words, what of it an answer quotes, the bot's own text defused,
 * and who may give one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "intake/mailcmd.h"

static void test_parse(void **state)
{
	static const struct {
		const char *body;
		enum pk_mailcmd_kind kind;
		const char *arg, *word;
		bool extra;
	} cases[] = {
		{ NULL, PK_MAILCMD_NONE },
		{ "", PK_MAILCMD_NONE },
		{ "Thanks, applied.\n", PK_MAILCMD_NONE },
		{ "#printkbot test\n", PK_MAILCMD_TEST },
		{ "Hi,\n\n  #printkbot test debian:6.1\r\nThanks\n", PK_MAILCMD_TEST, "debian:6.1" },
		{ "#PrintkBot TEST net-next/main\n", PK_MAILCMD_TEST, "net-next/main" },
		{ "#printkbot\ttest\tprintkbot-base  now please\n", PK_MAILCMD_TEST, "printkbot-base", NULL, true },
		{ "#printkbot help", PK_MAILCMD_HELP },
		{ "#printkbot help me\n", PK_MAILCMD_HELP, NULL, NULL, true },
		{ "#printkbot\n", PK_MAILCMD_UNKNOWN },
		{ "#printkbot retest\n", PK_MAILCMD_UNKNOWN, NULL, "retest" },
		/* a base with shell or quote characters is no base: the command is not understood */
		{ "#printkbot test $(reboot)\n", PK_MAILCMD_UNKNOWN, NULL, "test", true },
		{ "#printkbot test --base=x\n", PK_MAILCMD_UNKNOWN, NULL, "test", true },
		/* quoted: someone else's command, not given again */
		{ "> #printkbot test\n", PK_MAILCMD_NONE },
		{ "  >> #printkbot test\nOK\n", PK_MAILCMD_NONE },
		{ "> #printkbot test\n#printkbot help\n", PK_MAILCMD_HELP },
		/* another tag, a mention in a sentence, a signature, a diff */
		{ "#printkbotx test\n", PK_MAILCMD_NONE },
		{ "try #printkbot test\n", PK_MAILCMD_NONE },
		{ "Thanks\n-- \n#printkbot test\n", PK_MAILCMD_NONE },
		{ "x\ndiff --git a/a b/a\n+#printkbot test\n", PK_MAILCMD_NONE },
		/* the first command counts */
		{ "#printkbot help\n#printkbot test\n", PK_MAILCMD_HELP },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct pk_mailcmd c;

		pk_mailcmd_parse(&c, cases[i].body);
		if (c.kind != cases[i].kind)
			fail_msg("case %zu: kind %d, not %d", i, c.kind, cases[i].kind);
		assert_string_equal(c.arg ? c.arg : "(null)", cases[i].arg ? cases[i].arg : "(null)");
		assert_string_equal(c.word ? c.word : "(null)", cases[i].word ? cases[i].word : "(null)");
		assert_int_equal(c.extra, cases[i].extra);
		assert_true(c.kind == PK_MAILCMD_NONE ? !c.line : g_str_has_prefix(c.line, "#"));
		pk_mailcmd_clear(&c);
	}
}

/* What the answer quotes: the command understood, never the rest of the line. */
static void test_parse_line(void **state)
{
	static const struct {
		const char *body, *line;
	} cases[] = {
		{ "#printkbot test\n", "#printkbot test" },
		{ "  #PrintkBot TEST debian:6.1   \n", "#printkbot test debian:6.1" },
		{ "#printkbot test debian:6.1 BUY CHEAP PILLS at http://spam.example\n", "#printkbot test debian:6.1" },
		{ "#printkbot help me, and visit http://spam.example\n", "#printkbot help" },
		{ "#printkbot\n", "#printkbot" },
		{ "#printkbot frobnicate now\n", "#printkbot frobnicate ..." },
		{ "#printkbot www.spam.example/buy-now\n", "#printkbot www?spam?example?buy" },
		{ "#printkbot aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", "#printkbot aaaaaaaaaaaaaaaaaaaa" },
		{ "#printkbot test $(reboot)\n", "#printkbot test ..." },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(pk_mailcmd_t) c = { 0 };

		pk_mailcmd_parse(&c, cases[i].body);
		if (!c.line || strcmp(c.line, cases[i].line))
			fail_msg("case %zu: '%s', not '%s'", i, c.line ? c.line : "(null)", cases[i].line);
	}
}

/*
 * A mail carried unquoted under a reply (top-posting) gives no command;
 * the replier's own lines under an inline reply's attribution do.
 */
static void test_parse_carried(void **state)
{
	static const struct {
		const char *body;
		enum pk_mailcmd_kind kind;
	} cases[] = {
		/* top-posted over the bot's answer, carried unquoted */
		{ "Thanks!\n\nOn Tue, 1 Dec 2026 at 10:00, printkbot <bot@example.org> wrote:\n"
		  "Hi Max,\n\nprintkbot read your command:\n\n    #printkbot test\n", PK_MAILCMD_NONE },
		/* the attribution wrapped on two lines, CRLF */
		{ "Thanks!\r\n\r\nOn Tue, 1 Dec 2026 at 10:00, printkbot\r\n<bot@example.org> wrote:\r\n\r\n"
		  "#printkbot help\r\n", PK_MAILCMD_NONE },
		{ "OK\n-----Original Message-----\nFrom: printkbot\n\n#printkbot test\n", PK_MAILCMD_NONE },
		/* inline: the quoted mail under the attribution, then the command */
		{ "On Tue, 1 Dec 2026, Jane Dev wrote:\n> the patch\n> more\n\n#printkbot test\n", PK_MAILCMD_TEST },
		{ "On Tue, 1 Dec 2026, Jane Dev wrote:\n\n  > the patch\n\n#printkbot help\n", PK_MAILCMD_HELP },
		/* a command above an attribution is a command */
		{ "#printkbot test\n\nOn Tue, 1 Dec 2026, Max wrote:\nwhatever\n", PK_MAILCMD_TEST },
		/* "wrote:" alone is no attribution */
		{ "Max wrote:\n#printkbot help\n", PK_MAILCMD_HELP },
		{ "On a related note, I wrote:\n> x\n#printkbot help\n", PK_MAILCMD_HELP },
		/* an attribution at the very end */
		{ "#printkbot help\nOn Tue, Max wrote:", PK_MAILCMD_HELP },
		{ "On Tue, Max wrote:", PK_MAILCMD_NONE },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(pk_mailcmd_t) c = { 0 };

		pk_mailcmd_parse(&c, cases[i].body);
		if (c.kind != cases[i].kind)
			fail_msg("case %zu: kind %d, not %d", i, c.kind, cases[i].kind);
	}
}

/* What the bot writes holds no line that gives a command; the rest is left as it is. */
static void test_defuse(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "", "" },
		{ "Hi Max,\n\n    #printkbot test\n\nBye\n", "Hi Max,\n\n>     #printkbot test\n\nBye\n" },
		{ "#printkbot help\r\n#printkbotx\r\n> #printkbot test\r\n#printkbot",
		  "> #printkbot help\r\n#printkbotx\r\n> #printkbot test\r\n> #printkbot" },
		{ "say \"#printkbot test\" on a line\n", "say \"#printkbot test\" on a line\n" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = pk_mailcmd_defuse(cases[i].text);
		g_auto(pk_mailcmd_t) c = { 0 };

		assert_string_equal(got, cases[i].want);
		pk_mailcmd_parse(&c, got);
		assert_int_equal(c.kind, PK_MAILCMD_NONE);
	}
}

/* A long line is cut; a long word is not a base. */
static void test_parse_limits(void **state)
{
	g_autofree char *longbase = g_strnfill(150, 'a');
	g_autofree char *body = g_strdup_printf("#printkbot test %s\n", longbase);
	struct pk_mailcmd c;

	pk_mailcmd_parse(&c, body);
	assert_int_equal(c.kind, PK_MAILCMD_UNKNOWN);
	assert_true(strlen(c.line) <= 200);
	pk_mailcmd_clear(&c);
}

static void test_kind_names(void **state)
{
	enum pk_mailcmd_kind k;

	assert_string_equal(pk_mailcmd_kind_name(PK_MAILCMD_TEST), "test");
	assert_string_equal(pk_mailcmd_kind_name(PK_MAILCMD_HELP), "help");
	assert_string_equal(pk_mailcmd_kind_name(PK_MAILCMD_UNKNOWN), "unknown");
	assert_true(pk_mailcmd_kind_parse("help", &k) && k == PK_MAILCMD_HELP);
	assert_false(pk_mailcmd_kind_parse("", &k));
	assert_false(pk_mailcmd_kind_parse(NULL, &k));
}

static void test_allowed(void **state)
{
	const char *const none[] = { NULL };
	const char *const all[] = { "*", NULL };
	const char *const some[] = { "max@example.org", "@kernel.org", NULL };

	assert_false(pk_mailcmd_sender_allowed(NULL, "max@example.org"));
	assert_false(pk_mailcmd_sender_allowed(none, "max@example.org"));
	assert_true(pk_mailcmd_sender_allowed(all, "anyone@anywhere.example"));
	assert_false(pk_mailcmd_sender_allowed(all, "no-domain"));
	assert_false(pk_mailcmd_sender_allowed(all, NULL));
	assert_true(pk_mailcmd_sender_allowed(some, "max@example.org"));
	assert_true(pk_mailcmd_sender_allowed(some, "MAX@Example.ORG"));
	assert_false(pk_mailcmd_sender_allowed(some, "jane@example.org"));
	assert_true(pk_mailcmd_sender_allowed(some, "gregkh@kernel.org"));
	/* a domain is that domain, not its subdomains nor a suffix of another */
	assert_false(pk_mailcmd_sender_allowed(some, "x@vger.kernel.org"));
	assert_false(pk_mailcmd_sender_allowed(some, "x@evilkernel.org"));
	assert_false(pk_mailcmd_sender_allowed(some, "kernel.org@evil.example"));
}

static void test_addressed_to(void **state)
{
	const char *const to[] = { "list@vger.kernel.org", "Bot@Example.org", NULL };

	assert_true(pk_mailcmd_addressed_to(to, 2, "bot@example.org"));
	assert_false(pk_mailcmd_addressed_to(to, 1, "bot@example.org"));
	assert_false(pk_mailcmd_addressed_to(to, 2, "other@example.org"));
	assert_false(pk_mailcmd_addressed_to(NULL, 0, "bot@example.org"));
	assert_false(pk_mailcmd_addressed_to(to, 2, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_parse_carried),
		cmocka_unit_test(test_defuse),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_addressed_to),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
