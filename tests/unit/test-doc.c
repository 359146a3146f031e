/*
 * test-doc.c - the man pages and the code know the same commands and keys,
 * and the manual the same kinds of finding and verdicts.
 *
 * printkbot(1) has a "## printkbot NAME" section, filled with NAME's
 * --help, for every command of pk_commands[] and for no other;
 * printkbot.conf(5) has a "*key* = default" item, under its group's
 * heading, for every key config.c knows and for no other.  Both are read
 * from doc/, the conf page as make generates it from config.example
 * (doc/mkman.py), so a key added to the code but not to config.example
 * fails here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "config/config.h"
#include "cmd/commands.h"
#include "analysis/scan.h"
#include "base/verdict.h"

/* Keys the code knows only to refuse, each with why. */
static const char *const retired_keys[][3] = {
	{ "smtp", "starttls", "the old name of tls: known so that its error can say so" },
	{ "tree ", "reply_on", "the old name of a tree's reply: known so that its error can say so" },
};

static char *read_doc(const char *name)
{
	g_autofree char *path = g_build_filename(PK_SRCDIR, "doc", name, NULL);
	char *text = NULL;
	g_autoptr(GError) err = NULL;

	if (!g_file_get_contents(path, &text, NULL, &err))
		fail_msg("%s (make builds it)", err->message);
	return text;
}

static void test_every_command_has_its_section(void **state)
{
	g_autofree char *page = read_doc("printkbot.1.scd.in");
	g_auto(GStrv) lines = g_strsplit(page, "\n", -1);
	g_autoptr(GHashTable) sections = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (int i = 0; lines[i]; i++) {
		if (!g_str_has_prefix(lines[i], "## printkbot "))
			continue;
		const char *name = lines[i] + strlen("## printkbot ");
		g_autofree char *help = g_strdup_printf("@HELP %s@", name);

		if (!pk_command_find(name))
			fail_msg("printkbot(1) has a section for '%s', which is no command", name);
		/* the section's text is the command's --help, put there by mkman.py */
		if (!lines[i + 1] || !lines[i + 2] || strcmp(lines[i + 2], help))
			fail_msg("printkbot(1)'s section '%s' is not filled with its --help (%s)", name, help);
		g_hash_table_add(sections, g_strdup(name));
	}
	for (const struct pk_command *c = pk_commands; c->name; c++)
		if (!g_hash_table_contains(sections, c->name))
			fail_msg("printkbot(1) has no section for the command '%s'", c->name);
}

/* The generated page holds each command's usage as --help prints it. */
static void test_page_holds_each_help(void **state)
{
	g_autofree char *page = read_doc("printkbot.1.scd");

	for (const struct pk_command *c = pk_commands; c->name; c++)
		if (!strstr(page, c->spec->usage))
			fail_msg("doc/printkbot.1.scd lacks the --help of '%s' (make doc/printkbot.1)", c->name);
}

/* The known-keys row of a heading's group ("store", or "source " for [source NAME]). */
static const char *const *row_of(const char *heading)
{
	g_autofree char *group = g_strndup(heading + 1, strcspn(heading + 1, "]"));
	char *space = strchr(group, ' ');

	if (space)
		space[1] = '\0';   /* "source NAME" -> "source " */
	for (unsigned g = 0; pk_config_known_keys(g); g++)
		if (!strcmp(pk_config_known_keys(g)[0], group))
			return pk_config_known_keys(g);
	return NULL;
}

static bool retired(const char *group, const char *key)
{
	for (size_t i = 0; i < G_N_ELEMENTS(retired_keys); i++)
		if (!strcmp(retired_keys[i][0], group) && !strcmp(retired_keys[i][1], key))
			return true;
	return false;
}

static void test_every_key_has_its_item(void **state)
{
	g_autofree char *page = read_doc("printkbot.conf.5.scd");
	g_auto(GStrv) lines = g_strsplit(page, "\n", -1);
	g_autoptr(GHashTable) items = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	const char *const *row = NULL;

	for (int i = 0; lines[i]; i++) {
		if (g_str_has_prefix(lines[i], "## [")) {
			row = row_of(lines[i] + 3);
			if (!row)
				fail_msg("printkbot.conf(5) has a group the code does not know: %s", lines[i] + 3);
			continue;
		}
		if (lines[i][0] != '*' || !strstr(lines[i], "* = "))
			continue;
		g_autofree char *key = g_strndup(lines[i] + 1, strcspn(lines[i] + 1, "*"));
		bool known = false;

		if (!row)
			fail_msg("printkbot.conf(5) has the key '%s' before any group", key);
		for (int k = 1; row[k]; k++)
			known |= !strcmp(row[k], key);
		if (!known)
			fail_msg("printkbot.conf(5) has a key [%s] %s the code does not know", row[0], key);
		g_hash_table_add(items, g_strconcat(row[0], "/", key, NULL));
	}
	for (unsigned g = 0; pk_config_known_keys(g); g++) {
		const char *const *r = pk_config_known_keys(g);

		for (int k = 1; r[k]; k++) {
			g_autofree char *item = g_strconcat(r[0], "/", r[k], NULL);

			if (!g_hash_table_contains(items, item) && !retired(r[0], r[k]))
				fail_msg("printkbot.conf(5) (config.example) lacks the key [%s] %s", r[0], r[k]);
		}
	}
}

/*
 * The manual's tables of the words a review uses hold each word the code
 * knows, with what the code says it means, and no other: doc/scan.md's
 * "Every kind of finding" and doc/testing.md's "Every verdict" (what
 * `printkbot help findings` and `help verdicts` print).
 */
static void test_every_word_has_its_row(void **state)
{
	g_autofree char *scan = read_doc("scan.md"), *testing = read_doc("testing.md");
	const char *findings = strstr(scan, "## Every kind of finding"), *verdicts = strstr(testing, "## Every verdict");
	unsigned rows = 0;

	(void)state;
	assert_non_null(findings);
	assert_non_null(verdicts);
	for (unsigned k = 0; k < pk_finding_kinds(); k++) {
		g_auto(GStrv) parts = g_strsplit(pk_finding_kind_meaning(k), "|", -1);
		g_autofree char *escaped = g_strjoinv("\\|", parts);
		g_autofree char *row = g_strdup_printf("| `%s` | %s | %s |\n", pk_finding_kind_name(k),
						       pk_finding_is_silent(k) ? "yes" : "", escaped);

		if (!strstr(findings, row))
			fail_msg("doc/scan.md lacks the row %s", row);
	}
	for (const char *l = findings; (l = strstr(l, "\n| `")); l++)
		rows++;
	assert_int_equal(rows, pk_finding_kinds());
	rows = 0;
	for (unsigned v = PK_VERDICT_NONE + 1; v < pk_verdicts(); v++) {
		g_autofree char *row = g_strdup_printf("| `%s` | %s |\n", pk_verdict_name(v), pk_verdict_meaning(v));

		if (!strstr(verdicts, row))
			fail_msg("doc/testing.md lacks the row %s", row);
	}
	for (const char *l = verdicts; (l = strstr(l, "\n| `")); l++)
		rows++;
	assert_int_equal(rows, pk_verdicts() - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_command_has_its_section),
		cmocka_unit_test(test_page_holds_each_help),
		cmocka_unit_test(test_every_key_has_its_item),
		cmocka_unit_test(test_every_word_has_its_row),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
