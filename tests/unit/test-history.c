/*
 * test-history.c - what the store answers about changes: history filters
 * and rows, confirmations that do not match the findings, and the
 * commands that read the store (report, history, db check).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd/commands.h"
#include "report/review.h"
#include "pipeline/test.h"
#include "store-fixture.h"

/* ---- history ------------------------------------------------------------ */

/*
 * The history fixture: four patches; each row's old text starts with a tag
 * (S static, B boot, I index; then the patch number) that cases name.
 *   P1 2025-12-15 Jane, lkml, tested console-changed: S1 B1 I1 (topology.c)
 *   P2 2026-01-10 John, lkml, tested no-visible-change: S2 I2 (drivers/net/x.c)
 *   P3 2026-02-01 Jane, git commit abcdef123456, console-changed: S3 B3 (core.c)
 *   P4 2026-03-01 Zoë, no source, never tested (scan: no-visible-change): S4 (topology.c)
 */
struct fx_finding { const char *file, *kind, *old, *new; };
struct fx_change { const char *stage, *file, *func, *kind, *old, *new; };
struct fx_patch {
	const char *subject, *mid, *commit, *author, *name, *email, *source, *source_kind;
	gint64 time;
	const char *scan_verdict, *test_verdict;   /* NULL: not tested */
	struct fx_finding finding;
	struct fx_change changes[2];
};

/* The verdict named name (NULL: none). */
static enum pk_verdict verdict_of(const char *name)
{
	enum pk_verdict v = PK_VERDICT_NONE;

	if (name)
		assert_true(pk_verdict_parse(name, &v));
	return v;
}

/* The finding kind named name. */
static enum pk_finding_kind finding_kind_of(const char *name)
{
	enum pk_finding_kind k = PK_FINDING_TEXT_CHANGED;

	assert_true(pk_finding_kind_parse(name, &k));
	return k;
}

/* The change kind named name. */
static enum pk_change_kind change_kind_of(const char *name)
{
	enum pk_change_kind k = PK_CHANGE_TEXT_CHANGED;

	assert_true(pk_change_kind_parse(name, &k));
	return k;
}

static struct pk_store *history_fixture(const char *name)
{
	const struct fx_patch fx[] = {
		{ "[PATCH v2 1/3] sched: tidy topology messages", "p1@x", NULL,
		  "Jane Doe <jane@example.org>", "Jane Doe", "jane@example.org", "lkml", "mbox",
		  utc(2025, 12, 15, 9), "console-changed", "console-changed",
		  { "kernel/sched/topology.c", "text-changed", "S1 scheduling while atomic", "S1 new" },
		  { { "boot", "kernel/sched/topology.c", "build_sched_domains", "text-changed",
		      "B1 old", "B1 scheduling while atomic" },
		    { "index", "kernel/sched/topology.c", "build_sched_domains", "text-changed",
		      "I1 old %d\n", "I1 new %d\n" } } },
		{ "[PATCH] net: pr_fmt for x", "p2@x", NULL,
		  "John Smith <john@example.com>", "John Smith", "john@example.com", "lkml", "mbox",
		  utc(2026, 1, 10, 12), "console-changed", "no-visible-change",
		  { "drivers/net/x.c", "level-changed", "S2 link up", "S2 link up" },
		  { { "index", "drivers/net/x.c", "x_probe", "level-changed", "I2 link up\n",
		      "I2 link up\n" } } },
		{ "sched: debug atomic scheduling", NULL, "abcdef1234567890",
		  "Jane Doe <jane@example.org>", "Jane Doe", "jane@example.org",
		  "linux.git master", "git", utc(2026, 2, 1, 12), "console-changed", "console-changed",
		  { "kernel/sched/core.c", "debug-compiled-out", "S3 scheduling while atomic", NULL },
		  { { "boot", "kernel/sched/core.c", "schedule_debug", "message-removed",
		      "B3 BUG: scheduling while atomic", NULL } } },
		{ "[PATCH 2/2] sched: pr_info", "p4@x", NULL,
		  "Zo\xc3\xab \xc3\x9cnicode <zoe@example.net>", "Zo\xc3\xab \xc3\x9cnicode",
		  "zoe@example.net", NULL, NULL, utc(2026, 3, 1, 8), "no-visible-change", NULL,
		  { "kernel/sched/topology.c", "call-converted", "S4 domain", "S4 domain" },
		  { { NULL } } },
	};
	g_autofree char *path = db_path(name);
	struct pk_store *s = open_ok(path);
	g_autoptr(GError) err = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS(fx); i++) {
		const struct fx_patch *x = &fx[i];
		struct pk_patch p = { .subject = (char *)x->subject, .message_id = (char *)x->mid,
				      .author = (char *)x->author, .author_name = (char *)x->name,
				      .author_email = (char *)x->email, .time = x->time,
				      .diff = "diff --git a/x b/x\n" };
		struct pk_store_patch_opts o = PK_STORE_PATCH_OPTS_INIT;
		struct pk_finding f = { .file = (char *)x->finding.file, .line = 10,
					.kind = finding_kind_of(x->finding.kind), .old_text = (char *)x->finding.old,
					.new_text = (char *)x->finding.new, .message = "m" };
		g_autoptr(GPtrArray) findings = g_ptr_array_new();
		struct pk_scan scan = { .verdict = verdict_of(x->scan_verdict), .calls_changed = 1,
					.findings = findings };
		g_autoptr(GPtrArray) changes = g_ptr_array_new_with_free_func(g_free);
		g_autoptr(GPtrArray) index_changes = g_ptr_array_new_with_free_func(g_free);
		struct pk_kdiff diff = { .changes = changes, .index_changes = index_changes };
		const char *confirm[] = { "seen-at-boot" };
		struct pk_store_test t = { .verdict = verdict_of(x->test_verdict), .diff = &diff,
					   .confirmations = confirm, .n_confirmations = 1 };
		gint64 patch, test;

		o.commit = x->commit;
		/* the list a daemon read (its url), a branch; p4 came from no source, as from a file */
		if (x->source && pk_store_add_source(s, &o.source_id, x->source_kind, x->source,
						     !strcmp(x->source, "lkml") ? "/srv/mail/lkml.mbox" : NULL,
						     &err) < 0)
			fail_msg("%s", err->message);
		g_ptr_array_add(findings, &f);
		if (pk_store_add_patch(s, &patch, NULL, &p, &o, &err) < 0 ||
		    pk_store_add_findings(s, patch, &scan, &err) < 0)
			fail_msg("%s", err->message);
		if (!x->test_verdict)
			continue;
		for (size_t k = 0; k < G_N_ELEMENTS(x->changes) && x->changes[k].stage; k++) {
			const struct fx_change *c = &x->changes[k];
			struct pk_origin o = { .file = (char *)c->file, .line = 20 + (int)k,
					       .func = (char *)c->func, .format = (char *)c->old };

			if (!strcmp(c->stage, "boot")) {
				struct pk_change *ch = g_new0(struct pk_change, 1);

				*ch = (struct pk_change){ .kind = change_kind_of(c->kind), .old_level = 6,
					.new_level = c->new ? 6 : -1, .old_text = (char *)c->old,
					.new_text = (char *)c->new, .origin = o, .message = "m" };
				g_ptr_array_add(changes, ch);
			} else {
				struct pk_index_change *ch = g_new0(struct pk_index_change, 1);

				*ch = (struct pk_index_change){ .kind = change_kind_of(c->kind), .old_level = 6,
					.new_level = 4, .old_format = (char *)c->old,
					.new_format = (char *)c->new, .origin = o };
				g_ptr_array_add(index_changes, ch);
			}
		}
		t.patch_id = patch;
		/* the third patch's kernels were built for arm64 (history's arch) */
		if (i == 2) {
			struct pk_build_result b = { .ok = true, .seconds = 1 };

			if (pk_store_add_build(s, &t.after_build, "c3", "base", "cfg", "arm64", &b, &err) < 0)
				fail_msg("%s", err->message);
		}
		if (pk_store_add_test(s, &test, &t, &err) < 0)
			fail_msg("%s", err->message);
	}
	return s;
}

/* The tags (first word of the old text) of the rows, in order, comma-joined. */
static char *history_tags(struct pk_store *s, const struct pk_history_filter *f)
{
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GError) err = NULL;

	if (pk_store_history(s, &rows, f, &err) < 0)
		fail_msg("history: %s", err->message);
	for (guint i = 0; i < rows->len; i++) {
		const struct pk_history_row *r = rows->pdata[i];

		g_string_append_printf(out, "%s%.2s", i ? "," : "", r->old_text);
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}

struct history_case {
	const char *name;
	struct pk_history_filter filter;
	const char *tags;
};

static void test_history_filters(void **state)
{
	g_autoptr(pk_store) s = history_fixture("history.db");
	const struct history_case cases[] = {
		{ "no filter, newest first", { 0 }, "S4,S3,B3,S2,I2,S1,B1,I1" },
		{ "file", { .file = "kernel/sched/topology.c" }, "S4,S1,B1,I1" },
		{ "file nothing", { .file = "kernel/sched" }, "" },
		{ "file is exact", { .file = "Kernel/sched/topology.c" }, "" },
		{ "func", { .func = "build_sched_domains" }, "B1,I1" },
		{ "grep old or new text", { .grep = "scheduling while atomic" }, "S3,B3,S1,B1" },
		{ "grep is case-sensitive", { .grep = "Scheduling While" }, "" },
		{ "grep a format", { .grep = "new %d" }, "I1" },
		{ "kind", { .kind = "level-changed" }, "S2,I2" },
		{ "verdict", { .verdict = "console-changed" }, "S3,B3,S1,B1,I1" },
		{ "verdict of an untested patch is the scan's", { .verdict = "no-visible-change" },
		  "S4,S2,I2" },
		{ "author name", { .author = "jane doe" }, "S3,B3,S1,B1,I1" },
		{ "author address", { .author = "JOHN@example.com" }, "S2,I2" },
		{ "author non-ASCII", { .author = "Zo\xc3\xab" }, "S4" },
		{ "since", { .since = utc(2026, 1, 1, 0) }, "S4,S3,B3,S2,I2" },
		{ "until", { .until = utc(2026, 1, 1, 0) }, "S1,B1,I1" },
		{ "since and until", { .since = utc(2026, 1, 1, 0), .until = utc(2026, 2, 1, 0) },
		  "S2,I2" },
		{ "source name", { .source = "lkml" }, "S2,I2,S1,B1,I1" },
		{ "source kind", { .source = "git" }, "S3,B3" },
		{ "commit prefix", { .commit = "ABCDEF1" }, "S3,B3" },
		{ "commit not a prefix", { .commit = "bcdef" }, "" },
		{ "message-id", { .message_id = "<p2@x>" }, "S2,I2" },
		{ "message-id bare", { .message_id = "p2@x" }, "S2,I2" },
		{ "stage boot", { .stage = "boot" }, "B3,B1" },
		{ "stage index", { .stage = "index" }, "I2,I1" },
		{ "stage static", { .stage = "static" }, "S4,S3,S2,S1" },
		{ "file and verdict", { .file = "kernel/sched/topology.c", .verdict = "console-changed" },
		  "S1,B1,I1" },
		{ "grep, author and since", { .grep = "scheduling while atomic", .author = "jane",
					      .since = utc(2026, 1, 1, 0) }, "S3,B3" },
		{ "func and stage", { .func = "build_sched_domains", .stage = "index" }, "I1" },
		{ "func excludes static findings", { .func = "x_probe", .file = "drivers/net/x.c" }, "I2" },
		{ "kind and file, nothing", { .kind = "text-changed", .file = "drivers/net/x.c" }, "" },
		{ "source and since", { .source = "lkml", .since = utc(2026, 1, 1, 0) }, "S2,I2" },
		{ "limit", { .limit = 2 }, "S4,S3" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = history_tags(s, &cases[i].filter);

		if (strcmp(got, cases[i].tags))
			fail_msg("%s: got '%s', want '%s'", cases[i].name, got, cases[i].tags);
	}
	{
		/* report --commit: the newest review of a commit, by a prefix, any case */
		struct pk_history_filter by_commit = { .commit = "abcdef" };
		g_autoptr(GPtrArray) rows = NULL;
		g_autoptr(GError) err = NULL;
		gint64 first, second, got = 0, test = 0;

		assert_int_equal(pk_store_history(s, &rows, &by_commit, &err), 0);
		for (guint i = 0; i < rows->len; i++)   /* a boot change's row: a static finding has no test */
			test = MAX(test, ((struct pk_history_row *)rows->pdata[i])->test_id);
		assert_true(test > 0);
		assert_int_equal(pk_store_review_of_commit(s, "abcdef12", &got, &err), 0);
		assert_int_equal(pk_store_add_review(s, &first, test, "{}", "one", &err), 0);
		assert_int_equal(pk_store_add_review(s, &second, test, "{}", "two", &err), 0);
		assert_int_equal(pk_store_review_of_commit(s, "ABCDEF12", &got, &err), 1);
		assert_int_equal(got, second);
		/* the rows name the review report takes: the test's newest, and a static row its patch's */
		g_clear_pointer(&rows, g_ptr_array_unref);
		assert_int_equal(pk_store_history(s, &rows, &by_commit, &err), 0);
		for (guint i = 0; i < rows->len; i++) {
			const struct pk_history_row *r = rows->pdata[i];

			assert_int_equal(r->review_id, second);
		}
		assert_int_equal(pk_store_review_of_commit(s, "bcdef1", &got, &err), 0);
		assert_int_equal(pk_store_review_of_commit(s, "abc", &got, &err), -1);
	}
}

static void test_history_rows(void **state)
{
	g_autoptr(pk_store) s = history_fixture("rows.db");
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_history_filter f = { .grep = "scheduling while atomic" };
	struct pk_history_filter bad = { .stage = "mail" };
	const struct pk_history_row *r;

	assert_int_equal(pk_store_history(s, &rows, &f, &err), 0);
	assert_int_equal(rows->len, 4);
	r = rows->pdata[1];      /* B3: the git patch's console change */
	assert_string_equal(r->stage, "boot");
	assert_string_equal(r->kind, "message-removed");
	assert_string_equal(r->file, "kernel/sched/core.c");
	assert_int_equal(r->line, 20);
	assert_string_equal(r->func, "schedule_debug");
	assert_null(r->new_text);
	assert_null(r->message_id);
	assert_string_equal(r->link, "abcdef1234567890");
	assert_string_equal(r->source, "linux.git master");
	assert_true(r->test_id > 0);
	assert_string_equal(r->arch, "arm64");   /* its build's */
	r = rows->pdata[2];      /* S1: a static finding of a mail */
	assert_string_equal(r->stage, "static");
	assert_null(r->arch);                    /* nothing built */
	assert_null(r->func);
	assert_int_equal(r->test_id, 0);
	assert_string_equal(r->subject, "[PATCH v2 1/3] sched: tidy topology messages");
	assert_string_equal(r->author, "Jane Doe <jane@example.org>");
	assert_string_equal(r->link, "https://lore.kernel.org/r/p1@x");   /* a list's mail */
	assert_int_equal(r->time, utc(2025, 12, 15, 9));
	assert_int_equal(count(s, "finding_checks"), 3);
	{   /* a mail read from a file is named by its Message-ID: no archive is invented for it */
		struct pk_history_filter by_mid = { .message_id = "p4@x" };
		g_autoptr(GPtrArray) mine = NULL;

		assert_int_equal(pk_store_history(s, &mine, &by_mid, &err), 0);
		assert_true(mine->len > 0);
		assert_string_equal(((const struct pk_history_row *)mine->pdata[0])->link, "<p4@x>");
	}
	assert_int_equal(pk_store_history(s, &rows, &bad, &err), -1);
	assert_non_null(strstr(err->message, "unknown stage"));
	g_clear_error(&err);
	/* a verdict or a kind no row can hold is a typo, not "no match" */
	{
		struct pk_history_filter verdict = { .verdict = "console-change" }, kind = { .kind = "txt-changed" };
		struct pk_history_filter dynamic = { .kind = "line-split" };

		assert_int_equal(pk_store_history(s, &rows, &verdict, &err), -1);
		assert_non_null(strstr(err->message, "unknown verdict 'console-change'"));
		g_clear_error(&err);
		assert_int_equal(pk_store_history(s, &rows, &kind, &err), -1);
		assert_non_null(strstr(err->message, "unknown kind 'txt-changed'"));
		g_clear_error(&err);
		g_clear_pointer(&rows, g_ptr_array_unref);
		assert_int_equal(pk_store_history(s, &rows, &dynamic, &err), 0);
	}
}

/* A test whose confirmations do not match the stored findings is refused whole. */
static void test_confirmation_mismatch(void **state)
{
	g_autoptr(pk_store) s = history_fixture("mismatch.db");
	g_autoptr(GError) err = NULL;
	const char *two[] = { "seen-at-boot", "not-confirmed" };
	struct pk_store_test t = { .patch_id = 1, .verdict = PK_VERDICT_CONSOLE_CHANGED,
				   .confirmations = two, .n_confirmations = 2 };
	gint64 tests = count(s, "tests"), id = 0;

	assert_int_equal(pk_store_add_test(s, &id, &t, &err), -1);
	assert_non_null(strstr(err->message, "1 stored findings but the test confirms 2"));
	assert_int_equal(id, 0);
	assert_int_equal(count(s, "tests"), tests);
}

/* The commands as main runs them (parse, set up, run), by name. */
static int cmd_report(int argc, char **argv) { return pk_command_main(pk_command_find("report"), argc, argv); }
static int cmd_history(int argc, char **argv) { return pk_command_main(pk_command_find("history"), argc, argv); }
static int cmd_db(int argc, char **argv) { return pk_command_main(pk_command_find("db"), argc, argv); }
static int cmd_queue(int argc, char **argv) { return pk_command_main(pk_command_find("queue"), argc, argv); }

/* Run a command with its standard output in a file; returns its exit status. */
static int run_captured(int (*cmd)(int, char **), int argc, char **argv, char **out)
{
	g_autofree char *file = g_build_filename(tmpdir, "stdout", NULL);
	int saved, fd, rc;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	rc = cmd(argc, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_int_equal(pk_read_file(out, NULL, file, 0, NULL), 0);
	return rc;
}

static const char report_mail[] =
	"From: Jane Doe <jane@example.org>\n"
	"Subject: [PATCH] sched: convert printk to pr_err\n"
	"Message-ID: <report@example.org>\n"
	"Date: Tue, 1 Dec 2026 10:00:00 +0000\n"
	"\n"
	"Convert.\n"
	"---\n"
	"diff --git a/kernel/sched/core.c b/kernel/sched/core.c\n"
	"--- a/kernel/sched/core.c\n"
	"+++ b/kernel/sched/core.c\n"
	"@@ -10,3 +10,3 @@ void f(void)\n"
	" {\n"
	"-\tprintk(KERN_ERR \"BUG: scheduling while atomic: %s\\n\", comm);\n"
	"+\tpr_err(\"BUG: scheduling while atomic: %s\", comm);\n"
	" }\n";

/*
 * `report ID` renders the stored model again: the same bytes as the body
 * rendered when the review was made, and the stored review is found by id.
 */
static void test_report(void **state)
{
	g_autofree char *path = db_path("report.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *model_json = NULL, *body = NULL, *out = NULL, *id = NULL;
	const struct pk_review_info info = { "report.mbox", 1, 2, "printkbot-base", "427fcf303d87" };
	struct pk_test_result res = { 0 };
	struct pk_store_test t = { .verdict = PK_VERDICT_DOES_NOT_APPLY };
	const struct pk_patch *p;
	unsigned skipped;
	gint64 review, stale;

	assert_int_equal(pk_patch_read_mails(&patches, &skipped, report_mail, strlen(report_mail), NULL), 0);
	p = patches->pdata[0];
	res.scan = pk_scan(p);
	res.verdict = PK_VERDICT_DOES_NOT_APPLY;
	res.reason = g_strdup("kernel/sched/core.c: hunk 1 does not apply");
	res.before.commit = g_strdup("514c34e2f1d7a9b0c3e4f5a6b7c8d9e0f1a2b3c4");
	model = pk_review_model(p, &res, &info);
	model_json = json_to_string(model, FALSE);
	body = pk_review_render(model, "review.txt", &err);
	if (!body)
		fail_msg("render: %s", err->message);
	assert_int_equal(pk_store_add_patch(s, &t.patch_id, NULL, p, NULL, &err), 0);
	assert_int_equal(pk_store_add_findings(s, t.patch_id, res.scan, &err), 0);
	assert_int_equal(pk_store_add_test(s, &t.patch_id, &t, &err), 0);
	assert_int_equal(pk_store_add_review(s, &review, t.patch_id, model_json, body, &err), 0);
	/* a review whose stored body is stale: report renders the model, not the body */
	assert_int_equal(pk_store_add_review(s, &stale, t.patch_id, model_json, "stale body\n", &err), 0);
	pk_store_close(g_steal_pointer(&s));

	id = g_strdup_printf("%" G_GINT64_FORMAT, review);
	{
		char *argv[] = { "report", "--db", path, id, NULL };

		assert_int_equal(run_captured(cmd_report, 4, argv, &out), 0);
		assert_string_equal(out, body);
		assert_non_null(strstr(out, "does-not-apply"));
	}
	g_clear_pointer(&out, g_free);
	g_free(id);
	id = g_strdup_printf("%" G_GINT64_FORMAT, stale);
	{
		char *argv[] = { "report", "--db", path, id, NULL };

		assert_int_equal(run_captured(cmd_report, 4, argv, &out), 0);
		assert_string_equal(out, body);
	}
	g_clear_pointer(&out, g_free);
	{
		char *argv[] = { "report", "--db", path, "99", NULL };

		assert_int_equal(run_captured(cmd_report, 4, argv, &out), 1);
		assert_string_equal(out, "");
	}
	pk_test_result_clear(&res);
}

/* history and db check through the commands: exit codes and output forms. */
static void test_commands(void **state)
{
	g_autoptr(pk_store) s = history_fixture("commands.db");
	g_autofree char *path = g_strdup(pk_store_path(s));
	g_autofree char *out = NULL;
	g_auto(GStrv) lines = NULL;

	pk_store_close(g_steal_pointer(&s));
	{
		char *argv[] = { "history", "--db", path, "--json", "--file=kernel/sched/topology.c", NULL };
		g_autoptr(JsonParser) parser = json_parser_new();

		assert_int_equal(run_captured(cmd_history, 5, argv, &out), 0);
		lines = g_strsplit(out, "\n", -1);
		assert_int_equal(g_strv_length(lines), 5);   /* 4 rows and the last newline */
		assert_true(json_parser_load_from_data(parser, lines[1], -1, NULL));
		assert_string_equal(json_object_get_string_member(
			json_node_get_object(json_parser_get_root(parser)), "link"),
			"https://lore.kernel.org/r/p1@x");
	}
	g_clear_pointer(&out, g_free);
	{
		char *argv[] = { "history", "--db", path, "--grep", "scheduling while atomic",
				 "--until", "2025-12-15", NULL };

		/* --until includes the day it names */
		assert_int_equal(run_captured(cmd_history, 7, argv, &out), 0);
		assert_non_null(strstr(out, "PATCH"));
		assert_non_null(strstr(out, "S1 scheduling while atomic → S1 new"));
		assert_non_null(strstr(out, "[PATCH v2 1/3] sched: tidy topology messages"));
		assert_null(strstr(out, "B3"));
	}
	g_clear_pointer(&out, g_free);
	{
		char *argv[] = { "history", "--db", path, "--author", "nobody", NULL };

		assert_int_equal(run_captured(cmd_history, 5, argv, &out), 1);
	}
	g_clear_pointer(&out, g_free);
	/* `queue`: a subject's escape sequences and bidi overrides do not reach the terminal */
	{
		g_autoptr(pk_store) q = NULL;
		gint64 id;
		char *argv[] = { "queue", "--db", path, NULL };
		char *bad[] = { "queue", "--db", path, "--state", "nosuch", NULL };

		assert_int_equal(pk_store_open(&q, path, NULL), 0);
		assert_int_equal(pk_store_job_add(q, &id, PK_JOB_SERIES, "{\"subject\":\"[PATCH] \\u001b]0;owned"
						  "\\u0007x \\u202eevil\\u202c \\u009b2J\\nforged\"}", NULL), 0);
		{
			struct pk_store_worker w = { "test:1", "test-machine", 1, 60 };
			g_autoptr(pk_store_job) job = NULL;

			assert_int_equal(pk_store_job_claim(q, &w, PK_JOB_ANY_KIND, g_get_real_time() / G_USEC_PER_SEC,
							    &job, NULL, NULL), 1);
		}
		assert_int_equal(pk_store_job_set_state(q, id, PK_JOB_FAILED, "said \x1b[31mred\x07", NULL), 0);
		g_clear_pointer(&q, pk_store_close);
		assert_int_equal(run_captured(cmd_queue, 3, argv, &out), 0);
		print_message("%s", out);
		assert_non_null(strstr(out, "[PATCH] ?]0;owned?x ?evil? ?2J forged"));
		assert_non_null(strstr(out, "said ?[31mred?"));
		assert_null(strchr(out, '\x1b'));
		assert_null(strchr(out, '\x07'));
		assert_null(strstr(out, "\u202e"));
		assert_null(strstr(out, "\xc2\x9b"));
		g_clear_pointer(&out, g_free);
		assert_int_equal(run_captured(cmd_queue, 5, bad, &out), 2);
		g_clear_pointer(&out, g_free);
	}
	/* an end at the epoch finds nothing; one before it is refused, never "no filter" (0) */
	for (const char *const *d = (const char *const[]){ "1970-01-01", "1969-12-31", "1970-01-01T00:00:00Z",
							   "1900-01-01", NULL }; *d; d++) {
		char *argv[] = { "history", "--db", path, "--until", (char *)*d, NULL };

		print_message("--until %s\n", *d);
		assert_int_equal(run_captured(cmd_history, 5, argv, &out), !strcmp(*d, "1970-01-01") ? 1 : 2);
		g_clear_pointer(&out, g_free);
	}
	{
		char *argv[] = { "history", "--db", path, "--since", "last week", NULL };

		assert_int_equal(run_captured(cmd_history, 5, argv, &out), 2);
	}
	g_clear_pointer(&out, g_free);
	{
		char *argv[] = { "db", "check", "--db", path, NULL };

		assert_int_equal(run_captured(cmd_db, 4, argv, &out), 0);
		assert_non_null(strstr(out, "integrity ok, foreign keys ok"));
	}
	g_clear_pointer(&out, g_free);
	{
		char *argv[] = { "db", "migrate", "--db", path, NULL };

		g_autofree char *want = g_strdup_printf("schema version %d, nothing to migrate",
							PK_STORE_SCHEMA_VERSION);

		assert_int_equal(run_captured(cmd_db, 4, argv, &out), 0);
		assert_non_null(strstr(out, want));
	}
	g_clear_pointer(&out, g_free);
	if (!pg_admin) {   /* a new file is made */
		g_autofree char *fresh = db_path("fresh.db");
		char *argv[] = { "db", "migrate", "--db", fresh, NULL };

		g_autofree char *want = g_strdup_printf("made at schema version %d", PK_STORE_SCHEMA_VERSION);

		assert_int_equal(run_captured(cmd_db, 4, argv, &out), 0);
		assert_non_null(strstr(out, want));
		g_clear_pointer(&out, g_free);
	}
	if (!pg_admin) {   /* a file that is not a database */
		g_autofree char *bad = db_path("bad.db");
		char *argv[] = { "db", "check", "--db", bad, NULL };

		assert_int_equal(pk_write_file(bad, "SQLite format 3\0garbage", 24, NULL), 0);
		assert_int_equal(run_captured(cmd_db, 4, argv, &out), 1);
		assert_non_null(strstr(out, "problem"));
	}
}

/* What a terminal must not get from a stored string: ESC, BEL, CSI (C1), CR, a bidi override. */
static void assert_terminal_safe(const char *out)
{
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\x07'));
	assert_null(strchr(out, '\r'));
	assert_null(strstr(out, "\u202e"));
	assert_null(strstr(out, "\xc2\x9b"));
}

/*
 * A store holding strings that would drive a terminal (a subject, an
 * author, a commit's subject and author, a skip reason, a change's text
 * and the review's reason with ESC sequences, BEL, CR, a C1 CSI and a
 * right-to-left override): report, report --push, history and history
 * --pushes print them with '?' for each, and --json keeps them exact,
 * escaped as JSON does.
 */
static void test_text_for_terminal(void **state)
{
	static const char evil[] = "\x1b]0;owned\x07 \x1b[2J\u202eevil\u202c \xc2\x9b" "1m\rforged";
	static const char shown[] = "?]0;owned? ?[2J?evil? ?1m?forged";
	g_autofree char *path = db_path("terminal.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *mail = NULL, *model_json = NULL, *body = NULL, *out = NULL, *id = NULL, *push_id = NULL;
	const struct pk_review_info info = { "terminal.mbox", 1, 1, "printkbot-base", "427fcf303d87" };
	struct pk_test_result res = { 0 };
	struct pk_store_test t = { .verdict = PK_VERDICT_DOES_NOT_APPLY };
	unsigned skipped;
	gint64 review, source, push;

	/* the subject and author as encoded words, the changed message raw in the diff */
	mail = g_strdup_printf("From: =?UTF-8?Q?Eve_=1B]0;owned=07_=E2=80=AE?= <eve@example.org>\n"
			       "Subject: =?UTF-8?Q?[PATCH]_x:_=1B[2J=E2=80=AEevil=E2=80=AC_=C2=9B1m=0Dforged?=\n"
			       "Message-ID: <terminal@example.org>\nDate: Tue, 1 Dec 2026 10:00:00 +0000\n\n---\n"
			       "--- a/kernel/x.c\n+++ b/kernel/x.c\n@@ -1,3 +1,3 @@\n {\n"
			       "-\tpr_err(\"old\\n\");\n+\tpr_err(\"%s\\n\");\n }\n", evil);
	assert_int_equal(pk_patch_read_mails(&patches, &skipped, mail, strlen(mail), NULL), 0);
	res.scan = pk_scan(patches->pdata[0]);
	res.verdict = PK_VERDICT_DOES_NOT_APPLY;
	res.reason = g_strdup_printf("kernel/x.c: %s", evil);
	res.before.commit = g_strdup("514c34e2f1d7a9b0c3e4f5a6b7c8d9e0f1a2b3c4");
	model = pk_review_model(patches->pdata[0], &res, &info);
	model_json = json_to_string(model, FALSE);
	assert_non_null(body = pk_review_render(model, "review.txt", &err));
	assert_int_equal(pk_store_add_patch(s, &t.patch_id, NULL, patches->pdata[0], NULL, &err), 0);
	assert_int_equal(pk_store_add_findings(s, t.patch_id, res.scan, &err), 0);
	assert_int_equal(pk_store_add_test(s, &t.patch_id, &t, &err), 0);
	assert_int_equal(pk_store_add_review(s, &review, t.patch_id, model_json, body, &err), 0);
	{
		struct pk_store_push_commit c = { .commit_id = "0123456789abcdef0123456789abcdef01234567",
						  .subject = (char *)evil, .author = (char *)evil };
		struct pk_store_push p = { .tree = "lab", .branch = "main", .old_tip = "1111111111111111",
					   .new_tip = "0123456789abcdef" };
		g_autoptr(GPtrArray) one = g_ptr_array_new();
		g_autoptr(pk_store_push) got = NULL;
		g_autoptr(GPtrArray) commits = NULL;

		assert_int_equal(pk_store_add_source(s, &source, "git", "lab/main", NULL, &err), 0);
		p.source_id = source;
		g_ptr_array_add(one, &c);
		assert_int_equal(pk_store_push_add(s, &push, &p, one, &err), 0);
		assert_int_equal(pk_store_push_get(s, push, &got, &commits, &err), 1);
		c.id = ((struct pk_store_push_commit *)commits->pdata[0])->id;
		c.state = "skipped";
		c.reason = (char *)evil;
		assert_int_equal(pk_store_push_commit_set(s, &c, &err), 0);
	}
	pk_store_close(g_steal_pointer(&s));
	id = g_strdup_printf("%" G_GINT64_FORMAT, review);
	push_id = g_strdup_printf("%" G_GINT64_FORMAT, push);
	{
		char *report[] = { "report", "--db", path, id, NULL };
		char *report_push[] = { "report", "--db", path, "--push", push_id, NULL };
		char *history[] = { "history", "--db", path, NULL };
		char *pushes[] = { "history", "--db", path, "--pushes", NULL };
		struct { const char *name; char **argv; int argc; } cmds[] = {
			{ "report", report, 4 }, { "report --push", report_push, 5 },
			{ "history", history, 3 }, { "history --pushes", pushes, 4 },
		};

		for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
			int rc = run_captured(!strcmp(cmds[i].argv[0], "report") ? cmd_report : cmd_history,
					      cmds[i].argc, cmds[i].argv, &out);

			print_message("%s:\n%s", cmds[i].name, out);
			assert_int_equal(rc, 0);
			assert_terminal_safe(out);
			assert_non_null(strstr(out, i == 2 ? "?evil?" : shown));
			g_clear_pointer(&out, g_free);
		}
	}
	{
		/* --json: the data exact, escaped as JSON does */
		char *argv[] = { "history", "--db", path, "--pushes", "--json", NULL };
		g_autoptr(JsonParser) parser = json_parser_new();
		JsonObject *o;

		assert_int_equal(run_captured(cmd_history, 5, argv, &out), 0);
		assert_null(strchr(out, '\x1b'));
		assert_true(json_parser_load_from_data(parser, out, -1, NULL));
		o = json_array_get_object_element(json_object_get_array_member(
			json_node_get_object(json_parser_get_root(parser)), "commits"), 0);
		assert_string_equal(json_object_get_string_member(o, "subject"), evil);
	}
	pk_test_result_clear(&res);
}

/* `history --json` of one store, with more arguments; its output. */
static char *history_json(const char *path, char *more)
{
	char *argv[] = { "history", "--db", (char *)path, "--json", more, NULL };
	char *out = NULL;

	assert_int_equal(run_captured(cmd_history, more ? 5 : 4, argv, &out), 0);
	return out;
}

/*
 * The same data in SQLite and in PostgreSQL: `history --json` gives the
 * same bytes, whole and filtered (the filters' SQL differs by backend).
 */
static void test_json_both_backends(void **state)
{
	g_autofree char *admin = g_steal_pointer(&pg_admin);
	g_autoptr(pk_store) lite = history_fixture("json.db");   /* pg_admin unset: a file */
	g_autoptr(pk_store) pg = NULL;
	char *filters[] = { NULL, "--author=jane", "--grep=scheduling while atomic", "--commit=ABCDEF",
			    "--source=lkml", "--limit=2", "--since=2026-01-01" };

	pg_admin = g_steal_pointer(&admin);
	pg = history_fixture("json.db");
	for (size_t i = 0; i < G_N_ELEMENTS(filters); i++) {
		g_autofree char *a = history_json(pk_store_path(lite), filters[i]);
		g_autofree char *b = history_json(pk_store_path(pg), filters[i]);

		print_message("history --json %s: %zu bytes\n", filters[i] ? filters[i] : "", strlen(a));
		assert_true(*a);
		assert_string_equal(a, b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history_filters),
		cmocka_unit_test(test_history_rows),
		cmocka_unit_test(test_confirmation_mismatch),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_text_for_terminal),
	};
	const struct CMUnitTest pg_tests[] = {
		cmocka_unit_test(test_history_filters),
		cmocka_unit_test(test_history_rows),
		cmocka_unit_test(test_confirmation_mismatch),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_text_for_terminal),
		cmocka_unit_test(test_json_both_backends),
	};

	return run_both(tests, pg_tests, setup, teardown);
}
