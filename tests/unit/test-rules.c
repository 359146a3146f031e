/*
 * test-rules.c - log-monitor rules: RE2 patterns against kernel formats
 * and records, rule files (node-problem-detector's real one among them),
 * two kernels' indexes compared, and the rules a patch breaks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/rules.h"
#include "base/util.h"

#define DATA PK_SRCDIR "/tests/data/rules/"
/* node-problem-detector's kernel-monitor.json, read where the workplace keeps it (never copied) */
#define NPD_RULES PK_SRCDIR "/../shared/monitors/npd-kernel-monitor.json"

/* Rules of one plain pattern each, parsed; fails the test on an error. */
static struct pk_rules *rules_of(const char *text)
{
	struct pk_rules *rules = NULL;
	g_autoptr(GError) err = NULL;

	if (pk_rules_parse(&rules, "t.rules", text, strlen(text), &err) < 0)
		fail_msg("%s", err->message);
	return rules;
}

static struct pk_capture *capture_of(const char *index_text, const char *const *records)
{
	struct pk_capture *cap = g_new0(struct pk_capture, 1);

	cap->records = g_ptr_array_new_with_free_func((GDestroyNotify)pk_record_free);
	cap->index = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	cap->problems = g_string_new(NULL);
	cap->complete = true;
	pk_index_parse(cap->index, index_text, strlen(index_text), cap->problems);
	assert_string_equal(cap->problems->str, "");
	for (guint i = 0; records && records[i]; i++) {
		struct pk_record *r = g_new0(struct pk_record, 1);

		r->level = 6;
		r->seq = i;
		r->text = g_strdup(records[i]);
		r->dict = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(cap->records, r);
	}
	return cap;
}

static struct pk_capture *capture_file(const char *name)
{
	g_autofree char *path = g_strconcat(DATA, name, NULL);
	g_autofree char *text = NULL;

	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return capture_of(text, NULL);
}

/* ---------------------------------------------------------------- patterns against formats */

struct format_case {
	const char *pattern, *format;
	bool match;
};

static const struct format_case format_cases[] = {
	/* conversions print what the rule's classes take */
	{ "Killed process \\d+ (.+) total-vm:\\d+kB",
	  "%s: Killed process %d (%s) total-vm:%lukB, anon-rss:%lukB\n", true },
	{ "task docker:\\w+ blocked for more than \\w+ seconds\\.",
	  "INFO: task %s:%d blocked for more than %ld seconds.\n", true },
	{ "task \\S+:\\w+ blocked", "task %s:%d blocked\n", true },
	{ "\\d+ CPUs", "%u CPUs\n", true },
	{ "[a-z]+ CPUs", "%u CPUs\n", false },
	{ "x[0-9]{3}", "x%x\n", true },
	{ "x[g-z]{3}", "x%x\n", false },
	{ "a\\.b", "a%sb\n", true },
	{ "a\\.b", "a%db\n", false },
	{ "count:  5 items", "count:%3d items\n", true },
	{ "count: 5 items", "count:%3d items\n", true },
	{ "count:5 items", "count:%3d items\n", true },
	{ "100%", "100%%\n", true },
	{ "pointer at \\(_+ptrval_+\\)", "pointer at %p\n", true },
	{ "ptrval", "at %p\n", false },
	/* what only an argument prints says nothing of the format: its own letters must take part */
	{ "divide error: 0000 \\[#\\d+\\] SMP", "Oops: %s: %04lx [#%d]%s%s%s%s%s\n", false },
	{ "divide error: 0000 \\[#\\d+\\] SMP", "divide %s: %04lx [#%d]%s%s%s%s%s\n", true },
	{ "BUG: unable to handle", "%s\n", false },
	{ "^Killed process", "%s: Killed process %d\n", false },
	{ "divide error: 0000 \\[#\\d+\\] SMP", "divide error: %04lx [%d]\n", false },
	{ "BUG: unable to handle kernel NULL pointer dereference at .*",
	  "BUG: kernel NULL pointer dereference, address: %px\n", false },
	{ "BUG: unable to handle kernel NULL pointer dereference at .*",
	  "BUG: unable to handle kernel %s at %px\n", true },
	/* anchors and word boundaries */
	{ "^Killed", "Killed process %d\n", true },
	{ "^Killed", "K%s\n", false },              /* one own letter: chance */
	{ "count = \\d+$", "count = %d\n", true },
	{ "count = \\d+$", "count = %d items\n", false },
	{ "\\bprocess\\b", "subprocess %d\n", false },
	{ "\\bprocess\\b", "a process %d\n", true },
	{ "\\Bprocess", "subprocess %d\n", true },
	{ "^ab$", "ab\n", true },
	{ "^ab$", "abc\n", false },
	{ "^$", "%s\n", false },                    /* names nothing a message holds */
	/* flags, repetitions, alternation */
	{ "(?i)KILLED", "killed\n", true },
	{ "KILLED", "killed\n", false },
	{ "x{2,3}y", "xxxxy\n", true },
	{ "^x{2,3}y", "xxxxy\n", false },
	{ "^(?:ab|cd)+e$", "abcdabe\n", true },
	{ "^(?:ab|cd)+e$", "abce\n", false },
	{ "^(?P<who>\\w+) joined$", "%s joined\n", true },
	/* a format without its newline may go on with pr_cont() text */
	{ "foo bar", "foo ", true },
	{ "foo bar", "foo \n", false },
	/* a newline inside a format is a line break the rule must cross as such */
	{ "a.b", "a\nb\n", false },
	{ "(?s)a.b", "a\nb\n", true },
	{ "(?:a\\nb)", "a\nb\n", true },
};

static void test_patterns_against_formats(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(format_cases); i++) {
		const struct format_case *c = &format_cases[i];
		g_autoptr(pk_rules) rules = rules_of(c->pattern);
		const struct pk_rule *r = rules->rules->pdata[0];
		bool got = pk_rule_matches_format(rules, r, 0, c->format);

		if (got != c->match)
			fail_msg("/%s/ against \"%s\": %s, expected %s", c->pattern, c->format,
				 got ? "matches" : "no match", c->match ? "a match" : "none");
	}
}

/* Records are concrete text: the same engine, the same anchors. */
static void test_patterns_against_records(void **state)
{
	static const struct format_case cases[] = {
		{ "Killed process \\d+ \\(.+\\)", "Out of memory: Killed process 12 (sh)", true },
		{ "Killed process \\d+ \\(.+\\)", "Out of memory: Killed process x (sh)", false },
		{ "^Out", "Out of memory", true },
		{ "memory$", "Out of memory", true },
		{ "memor$", "Out of memory", false },
		{ "^-+$", "-----", true },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(pk_rules) rules = rules_of(cases[i].pattern);

		assert_int_equal(pk_rule_matches_record(rules, rules->rules->pdata[0], 0, cases[i].format),
				 cases[i].match);
	}
}

/* ---------------------------------------------------------------- bad patterns and files */

struct bad_case {
	const char *text;        /* a rule file's text */
	const char *path;
	const char *message;     /* the whole error */
};

static const struct bad_case bad_cases[] = {
	{ "a(b\n", "p.txt", "p.txt: line 1: pattern /a(b/: missing closing ) at offset 1" },
	{ "ok\na)b\n", "p.txt", "p.txt: line 2: pattern /a)b/: unexpected ) at offset 1" },
	{ "# c\n\n[a\n", "p.txt", "p.txt: line 3: pattern /[a/: missing closing ] at offset 0" },
	{ "*a", "p.txt", "p.txt: line 1: pattern /*a/: missing argument to repetition operator at offset 0" },
	{ "a**", "p.txt", "p.txt: line 1: pattern /a**/: bad repetition operator at offset 2" },
	{ "(?=a)", "p.txt", "p.txt: line 1: pattern /(?=a)/: lookaround is not RE2 syntax at offset 0" },
	{ "(a)\\1", "p.txt", "p.txt: line 1: pattern /(a)\\1/: backreferences are not RE2 syntax at offset 3" },
	{ "\\pL", "p.txt", "p.txt: line 1: pattern /\\pL/: Unicode classes (\\p, \\P) are not supported at offset 0" },
	{ "a{1001}", "p.txt", "p.txt: line 1: pattern /a{1001}/: bad repetition operator (at most {1000}) at offset 1" },
	{ "[z-a]", "p.txt", "p.txt: line 1: pattern /[z-a]/: invalid character class range at offset 1" },
	{ "a\\", "p.txt", "p.txt: line 1: pattern /a\\/: trailing backslash at end of expression at offset 1" },
	{ "\\q", "p.txt", "p.txt: line 1: pattern /\\q/: invalid escape sequence at offset 0" },
	{ "a\\Z", "p.txt", "p.txt: line 1: pattern /a\\Z/: \\Z is not RE2 syntax (\\z is) at offset 1" },
	{ "(?x)a", "p.txt", "p.txt: line 1: pattern /(?x)a/: invalid or unsupported Perl syntax at offset 0" },
	{ "# only a comment\n\n", "p.txt", "p.txt: no rule in it" },
	{ "{ \"rules\": [ { \"reason\": \"X\", \"pattern\": \"a(\" } ] }", "n.json",
	  "n.json: rules[0] (X): pattern /a(/: missing closing ) at offset 1" },
	{ "{ \"rules\": [ { \"pattern\": \"ok\" }, { \"reason\": \"Y\" } ] }", "n.json",
	  "n.json: rules[1]: no \"pattern\" string" },
	{ "{ \"rules\": [ { \"reason\": \"Y\", \"pattern\": 3 } ] }", "n.json",
	  "n.json: rules[0]: no \"pattern\" string" },
	{ "{ \"rules\": [ \"a\" ] }", "n.json", "n.json: rules[0]: not an object" },
	{ "{ \"rules\": [ { \"reason\": \"E\", \"pattern\": \"\" } ] }", "n.json",
	  "n.json: rules[0] (E): the pattern is empty (it would match everything)" },
	{ "{ \"rules\": {} }", "n.json", "n.json: not a node-problem-detector rule file: no \"rules\" array" },
	{ "{ \"rules\": [] }", "n.json", "n.json: no rule in it" },
};

static void test_bad_rules(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
		struct pk_rules *rules = NULL;
		g_autoptr(GError) err = NULL;

		if (pk_rules_parse(&rules, bad_cases[i].path, bad_cases[i].text, strlen(bad_cases[i].text), &err) == 0)
			fail_msg("%s parsed", bad_cases[i].text);
		assert_null(rules);
		assert_true(g_error_matches(err, PK_ERROR, PK_ERROR_INPUT));
		assert_string_equal(err->message, bad_cases[i].message);
	}
	{
		struct pk_rules *rules = NULL;
		g_autoptr(GError) err = NULL;
		const char *text = "{ \"rules\": [ ";

		assert_int_equal(pk_rules_parse(&rules, "n.json", text, strlen(text), &err), -1);
		assert_true(g_str_has_prefix(err->message, "n.json: not valid JSON: "));
	}
}

/* ---------------------------------------------------------------- the real rule file */

static struct pk_rules *npd_rules(void)
{
	g_autofree char *text = NULL;
	gsize len = 0;
	struct pk_rules *rules = NULL;
	g_autoptr(GError) err = NULL;

	assert_true(g_file_get_contents(NPD_RULES, &text, &len, NULL));
	if (pk_rules_parse(&rules, "npd-kernel-monitor.json", text, len, &err) < 0)
		fail_msg("%s", err->message);
	return rules;
}

static const struct pk_rule_report *report_named(GPtrArray *reports, const char *where)
{
	for (guint i = 0; i < reports->len; i++) {
		const struct pk_rule_report *r = reports->pdata[i];

		if (!strcmp(r->rule->where, where))
			return r;
	}
	fail_msg("no rule %s", where);
	return NULL;
}

static void test_npd_file(void **state)
{
	g_autoptr(pk_rules) rules = npd_rules();
	const struct pk_rule *oom = rules->rules->pdata[0];

	assert_int_equal(rules->rules->len, 7);
	assert_string_equal(oom->name, "OOMKilling");
	assert_string_equal(oom->where, "rules[0]");
	assert_int_equal(oom->n_lines, 2);
	assert_string_equal(oom->lines[0], "Kill process \\d+ (.+) score \\d+ or sacrifice child");
	assert_true(g_str_has_prefix(oom->lines[1], "Killed process \\d+ (.+) total-vm:"));
	assert_string_equal(((const struct pk_rule *)rules->rules->pdata[6])->name, "UnregisterNetDeviceIssue");
}

/*
 * The rules against the messages Linux 4.19 printed and the 6.12 kernel's
 * index: OOMKilling matched then (both lines, the second a whole line of
 * its own), matches nothing now, and the nearest message of 6.12 is the
 * "Killed process" line that replaced both; the NULL-pointer oops rule
 * the same.  The divide-error rule matches neither: "divide error" is
 * what the %s of the oops header prints, no message's own text.
 */
static void test_npd_against_kernels(void **state)
{
	g_autoptr(pk_rules) rules = npd_rules();
	g_autoptr(pk_capture) old = capture_file("index-4.19-oom.txt");
	g_autoptr(pk_capture) cur = capture_file("index-6.12.txt");
	g_autoptr(pk_kdiff) d = pk_kdiff_captures(old, cur, NULL);
	g_autoptr(GPtrArray) reports = pk_rules_compare(rules, old, cur, d);
	const struct pk_rule_report *oom = report_named(reports, "rules[0]");
	const struct pk_rule_report *null_ptr = report_named(reports, "rules[2]");
	const struct pk_rule_report *divide = report_named(reports, "rules[3]");
	const struct pk_index_entry *e;

	assert_int_equal(reports->len, 7);
	assert_true(oom->a.matches);
	assert_false(oom->b.matches);
	assert_int_equal(oom->a.lines[0]->len, 1);
	assert_int_equal(oom->a.lines[1]->len, 1);
	assert_int_equal(oom->b.lines[0]->len, 0);
	assert_int_equal(oom->b.lines[1]->len, 0);
	assert_int_equal(oom->changed->len, 2);
	for (guint l = 0; l < 2; l++) {
		assert_non_null(e = oom->nearest[l]);
		assert_string_equal(e->file, "mm/oom_kill.c");
		assert_int_equal(e->line, 955);
	}
	assert_true(null_ptr->a.matches);
	assert_false(null_ptr->b.matches);
	assert_non_null(e = null_ptr->nearest[0]);
	assert_string_equal(e->format, "BUG: kernel NULL pointer dereference, address: %px\n");
	assert_false(divide->a.matches);
	assert_false(divide->b.matches);
	assert_int_equal(divide->changed->len, 0);
	/* 6.12's lab kernel builds no hung-task detector and no networking */
	assert_false(report_named(reports, "rules[1]")->b.matches);
	assert_false(report_named(reports, "rules[6]")->b.matches);
}

/* A multi-line rule in the boot records: the lines must be consecutive records. */
static void test_records_consecutive(void **state)
{
	static const char *const together[] = { "x", "Out of memory: Kill process 1 (a) score 9 or sacrifice child",
						"Killed process 1 (a) total-vm:1kB, anon-rss:2kB, file-rss:3kB", NULL };
	static const char *const apart[] = { "Out of memory: Kill process 1 (a) score 9 or sacrifice child", "x",
					     "Killed process 1 (a) total-vm:1kB, anon-rss:2kB, file-rss:3kB", NULL };
	g_autoptr(pk_rules) rules = npd_rules();
	g_autoptr(pk_capture) a = capture_of("", together);
	g_autoptr(pk_capture) b = capture_of("", apart);
	g_autoptr(GPtrArray) reports = pk_rules_compare(rules, a, b, NULL);
	const struct pk_rule_report *oom = report_named(reports, "rules[0]");

	assert_int_equal(oom->a.records->len, 1);
	assert_ptr_equal(oom->a.records->pdata[0], a->records->pdata[1]);
	assert_true(oom->a.matches);
	assert_int_equal(oom->b.records->len, 0);
	assert_false(oom->b.matches);
}

/* ---------------------------------------------------------------- a patch */

/*
 * A made-up patch that rewords a trap's message (the divide-error rule loses it),
 * removes the oom_reaper's message (a plain rule loses it), moves "OOM
 * killer disabled." to another function (still matched, elsewhere), and
 * changes what a boot record prints with the same format.
 */
static void test_breaks(void **state)
{
	static const char before_index[] =
		"<-1> arch/x86/kernel/traps.c:425 do_error_trap \"divide error: %04lx [#%d]%s%s\\n\"\n"
		"<6> mm/oom_kill.c:599 oom_reap_task_mm \"oom_reaper: reaped process %d (%s), now anon-rss:%lukB\\n\"\n"
		"<6> mm/oom_kill.c:842 oom_killer_disable \"OOM killer disabled.\\n\"\n"
		"<6> drivers/tty/serial/8250/8250_core.c:900 serial8250_init \"Serial: %s driver, %d ports\\n\"\n";
	static const char after_index[] =
		"<-1> arch/x86/kernel/traps.c:425 do_error_trap \"divide error: code %04lx [#%d]%s%s\\n\"\n"
		"<6> mm/oom_kill.c:860 oom_killer_stop \"OOM killer disabled.\\n\"\n"
		"<6> drivers/tty/serial/8250/8250_core.c:900 serial8250_init \"Serial: %s driver, %d ports\\n\"\n";
	static const char *const before_recs[] = { "Serial: 8250/16550 driver, 4 ports", NULL };
	static const char *const after_recs[] = { "Serial: 8250 driver, 4 ports", NULL };
	static const char rule_text[] =
		"{ \"rules\": [\n"
		"  { \"reason\": \"KernelPanic\", \"pattern\": \"divide error: 0000 \\\\[#\\\\d+\\\\] SMP\" },\n"
		"  { \"reason\": \"Reaped\", \"pattern\": \"oom_reaper: reaped process \\\\d+\" },\n"
		"  { \"reason\": \"Disabled\", \"pattern\": \"^OOM killer disabled\" },\n"
		"  { \"reason\": \"Serial\", \"pattern\": \"Serial: 8250/16550 driver\" },\n"
		"  { \"reason\": \"Untouched\", \"pattern\": \"ports\" }\n"
		"] }\n";
	g_autoptr(pk_rules) rules = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_capture) before = capture_of(before_index, before_recs);
	g_autoptr(pk_capture) after = capture_of(after_index, after_recs);
	g_autoptr(pk_kdiff) d = pk_kdiff_captures(before, after, NULL);
	g_autoptr(GPtrArray) breaks = NULL;
	const struct pk_rule_break *b;

	assert_int_equal(pk_rules_parse(&rules, "r.json", rule_text, strlen(rule_text), &err), 0);
	breaks = pk_rules_breaks(rules, d, after);
	assert_int_equal(breaks->len, 4);
	/* sorted by file and line */
	b = breaks->pdata[0];
	assert_string_equal(b->rule, "KernelPanic");
	assert_string_equal(b->where, "rules[0]");
	assert_string_equal(pk_rule_break_kind_name(b->kind), "reworded");
	assert_string_equal(b->file, "arch/x86/kernel/traps.c");
	assert_int_equal(b->line, 425);
	assert_string_equal(b->new_text, "divide error: code %04lx [#%d]%s%s\n");
	assert_false(b->still_matched);
	assert_false(b->boot_log);
	b = breaks->pdata[1];
	assert_string_equal(b->rule, "Serial");
	assert_int_equal(b->kind, PK_RULE_REWORDED);
	assert_true(b->boot_log);
	assert_string_equal(b->old_text, "Serial: 8250/16550 driver, 4 ports");
	assert_string_equal(b->new_text, "Serial: 8250 driver, 4 ports");
	assert_true(b->still_matched);   /* the format can still print it */
	b = breaks->pdata[2];
	assert_string_equal(b->rule, "Reaped");
	assert_int_equal(b->kind, PK_RULE_REMOVED);
	assert_null(b->new_text);
	assert_false(b->still_matched);
	b = breaks->pdata[3];
	assert_string_equal(b->rule, "Disabled");
	assert_int_equal(b->kind, PK_RULE_MOVED);
	assert_string_equal(b->moved_to, "mm/oom_kill.c:860 oom_killer_stop()");
	assert_true(b->still_matched);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patterns_against_formats),
		cmocka_unit_test(test_patterns_against_records),
		cmocka_unit_test(test_bad_rules),
		cmocka_unit_test(test_npd_file),
		cmocka_unit_test(test_npd_against_kernels),
		cmocka_unit_test(test_records_consecutive),
		cmocka_unit_test(test_breaks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
