/* test-review.c - the review model and its rendering through templates/review.txt and review.html. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "report/review.h"
#include "lab/coverage.h"
#include "analysis/kdiff.h"
#include "analysis/kmsg.h"
#include "base/util.h"

static const char fixture[] =
	"From: Jane Doe <jane@example.org>\n"
	"Subject: [PATCH v2 1/3] sched: convert printk to pr_err\n"
	"Message-ID: <20261201.jane@example.org>\n"
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

/* A does-not-apply result: scan findings but no boots. */
static void make_result(struct pk_test_result *res, struct pk_patch **out_patch)
{
	g_autoptr(GPtrArray) patches = NULL;
	unsigned skipped;

	assert_int_equal(pk_patch_read_mails(&patches, &skipped, fixture, strlen(fixture), NULL), 0);
	assert_int_equal(patches->len, 1);
	*out_patch = g_ptr_array_steal_index(patches, 0);
	memset(res, 0, sizeof *res);
	res->scan = pk_scan(*out_patch);
	res->verdict = PK_VERDICT_DOES_NOT_APPLY;
	res->reason = g_strdup("kernel/sched/core.c: hunk 1 (@@ -10,3 +10,3 @@) does not apply: "
			       "its pre-image is nowhere in the file");
	res->before.commit = g_strdup("514c34e2f1d7a9b0c3e4f5a6b7c8d9e0f1a2b3c4");
}

static const struct pk_review_info info = {
	"0001-sched.patch", 1, 3, "printkbot-base", "427fcf303d87",
};

static void test_render_does_not_apply(void **state)
{
	struct pk_test_result res;
	g_autoptr(pk_patch) patch = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;

	make_result(&res, &patch);
	model = pk_review_model(patch, &res, &info);
	text = pk_review_render(model, "review.txt", &err);
	assert_non_null(text);
	print_message("%s", text);
	assert_non_null(strstr(text, "[1/3] [PATCH v2 1/3] sched: convert printk to pr_err"));
	assert_non_null(strstr(text, "verdict: does-not-apply"));
	assert_non_null(strstr(text, "hunk 1 (@@ -10,3 +10,3 @@)"));
	assert_non_null(strstr(text, "kernel/sched/core.c:11: newline-lost"));
	/* nothing was built: no "Tested on", nothing to reproduce, and what to do next */
	assert_null(strstr(text, "To reproduce"));
	assert_null(strstr(text, "Tested on"));
	assert_non_null(strstr(text, "Tried on printkbot-base at 514c34e2f1d7; nothing was built."));
	assert_non_null(strstr(text, "(b4 am of the thread gives them all)"));
	assert_null(strstr(text, "Boot log"));   /* nothing was booted */
	lines = g_strsplit(text, "pre-image", -1);
	assert_int_equal(g_strv_length(lines), 2);   /* its reason said once */
	g_strfreev(lines);
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++)
		if (g_utf8_strlen(*l, -1) > 72 && strncmp(*l, "    ", 4))
			fail_msg("line over 72 columns: %s", *l);
	pk_test_result_clear(&res);
}

/* A mail the mailer damaged: the review says why it was not applied, and where. */
static void test_render_corrupt_mail(void **state)
{
	static const char wrapped[] =
		"From: Jane Doe <jane@example.org>\nSubject: [PATCH] sched: x\n"
		"Message-ID: <wrapped@example.org>\nDate: Tue, 1 Dec 2026 10:00:00 +0000\n\nWhy.\n---\n"
		"--- a/kernel/sched/core.c\n+++ b/kernel/sched/core.c\n"
		"@@ -10,2 +10,2 @@ static int sched_domain_debug_one(struct sched_domain *sd, int cpu, int\n"
		"level)\n-\tprintk(KERN_ERR \"x\\n\");\n+\tpr_err(\"x\\n\");\n";
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *text = NULL;
	struct pk_test_result res = { 0 };
	unsigned skipped;

	assert_int_equal(pk_patch_read_mails(&patches, &skipped, wrapped, strlen(wrapped), NULL), 0);
	res.scan = pk_scan(patches->pdata[0]);
	res.verdict = PK_VERDICT_DOES_NOT_APPLY;
	res.reason = g_strdup("the mail is corrupt: line 11 (the end of a hunk header) was wrapped by the "
			      "mailer; git am rejects it, so the bot does not apply it");
	res.before.commit = g_strdup("514c34e2f1d7a9b0c3e4f5a6b7c8d9e0f1a2b3c4");
	model = pk_review_model(patches->pdata[0], &res, &info);
	text = pk_review_render(model, "review.txt", &err);
	assert_non_null(text);
	print_message("%s", text);
	assert_non_null(strstr(text, "The mail was damaged on its way"));
	assert_non_null(strstr(text, "kernel/sched/core.c:10: patch-corrupt"));
	assert_non_null(strstr(text, "line 11 (the end of a hunk header) was wrapped"));
	pk_test_result_clear(&res);
}

/* What the store keeps (the model as JSON text) renders to the same bytes. */
static void test_render_from_json_is_identical(void **state)
{
	struct pk_test_result res;
	g_autoptr(pk_patch) patch = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *first = NULL, *json = NULL, *again = NULL;

	make_result(&res, &patch);
	model = pk_review_model(patch, &res, &info);
	first = pk_review_render(model, "review.txt", NULL);
	json = json_to_string(model, FALSE);
	again = pk_review_render_json(json, "review.txt", NULL);
	assert_non_null(first);
	assert_string_equal(first, again);
	pk_test_result_clear(&res);
}

/*
 * A not-built result: the verdict, the sentence naming the file and why,
 * and every touched file's coverage in the text, the HTML and the JSON.
 */
static void test_render_not_built(void **state)
{
	struct pk_test_result res;
	g_autoptr(pk_patch) patch = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *text = NULL, *html = NULL, *json = NULL;
	g_auto(GStrv) lines = NULL;
	JsonArray *cov;
	JsonObject *row;

	make_result(&res, &patch);
	g_free(res.reason);
	res.coverage = g_ptr_array_new_with_free_func(pk_file_coverage_free);
	g_ptr_array_add(res.coverage, pk_file_coverage_new("kernel/sched/core.c", PK_COVERAGE_NOT_BUILT,
		"not compiled by the tested kernel config: CONFIG_SCHED_CORE_TEST is not set (kernel/sched/Makefile)",
		true));
	g_ptr_array_add(res.coverage, pk_file_coverage_new("Documentation/scheduler/sched-debug.rst",
		PK_COVERAGE_NOT_BUILT, "documentation: the build does not read it", false));
	res.verdict = pk_coverage_verdict(PK_VERDICT_NO_VISIBLE_CHANGE, res.coverage, &res.reason);
	model = pk_review_model(patch, &res, &info);
	text = pk_review_render(model, "review.txt", &err);
	assert_non_null(text);
	fputs(text, stdout);   /* print_message() cuts a long text */
	assert_non_null(strstr(text, "verdict: not-built"));
	assert_non_null(strstr(text, "This file is not compiled into the kernel the bot built:"));
	assert_non_null(strstr(text, "  kernel/sched/core.c: not-built (not compiled by the tested kernel"));
	assert_non_null(strstr(text, "  Documentation/scheduler/sched-debug.rst: not-built (documentation:"));
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++)
		if (g_utf8_strlen(*l, -1) > 72 && strncmp(*l, "    ", 4))
			fail_msg("line over 72 columns: %s", *l);
	html = pk_review_render(model, "review.html", &err);
	assert_non_null(html);
	assert_non_null(strstr(html, "<code>kernel/sched/core.c</code>: not-built (not compiled"));
	cov = json_object_get_array_member(json_node_get_object(model), "coverage");
	assert_int_equal(json_array_get_length(cov), 2);
	row = json_array_get_object_element(cov, 0);
	assert_string_equal(json_object_get_string_member(row, "file"), "kernel/sched/core.c");
	assert_string_equal(json_object_get_string_member(row, "state"), "not-built");
	assert_non_null(strstr(json_object_get_string_member(row, "reason"), "CONFIG_SCHED_CORE_TEST"));
	json = json_to_string(model, FALSE);
	assert_non_null(strstr(json, "\"verdict\":\"not-built\""));
	pk_test_result_clear(&res);
}

/* text with every run of white space as one space: a review wraps at 72 columns */
static char *flattened(const char *text)
{
	g_autoptr(GRegex) space = g_regex_new("\\s+", 0, 0, NULL);

	return g_regex_replace_literal(space, text, -1, 0, " ", 0, NULL);
}

/*
 * A derived config: an option the patch adds that the config set is
 * said to be on; one no config could set is not (it was claimed on
 * before, beside "No x86_64 config could set" it).
 */
static void test_render_added_options(void **state)
{
	struct pk_test_result res;
	g_autoptr(pk_patch) patch = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *text = NULL;

	make_result(&res, &patch);
	res.verdict = PK_VERDICT_NOT_BUILT;
	res.derived.lines = g_strdup("CONFIG_NET=y\nCONFIG_BT=y\nCONFIG_BT_NXPUART=y\n");
	res.derived.asked = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(res.derived.asked, g_strdup("drivers/bluetooth/btnxpuart.c: CONFIG_BT_NXPUART"));
	res.derived.cannot = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(res.derived.cannot, g_strdup("CONFIG_SERIAL_8250_ASPEED: CONFIG_SERIAL_8250_ASPEED depends on "
						     "ARCH_ASPEED"));
	res.derived.added = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(res.derived.added, g_strdup("CONFIG_BT_NXPUART (tristate, default n)"));
	g_ptr_array_add(res.derived.added, g_strdup("CONFIG_SERIAL_8250_ASPEED (tristate, default n)"));
	model = pk_review_model(patch, &res, &info);
	text = pk_review_render(model, "review.txt", NULL);
	assert_non_null(text);
	g_autofree char *flat = flattened(text);
	fputs(text, stdout);
	assert_non_null(strstr(flat, "The patch adds the option CONFIG_BT_NXPUART (tristate, default n), which gates "
				     "what it changes: the patched kernel was built with it on"));
	assert_non_null(strstr(flat, "The patch adds the option CONFIG_SERIAL_8250_ASPEED (tristate, default n), "
				     "which gates what it changes, but no kernel here could have it on"));
	assert_null(strstr(flat, "CONFIG_SERIAL_8250_ASPEED (tristate, default n), which gates what it changes: the"));
	pk_test_result_clear(&res);
}

/*
 * A kernel that did not link, tested again with what it lacked: the
 * verdict is build-failed, the summary says what to select, and the
 * changes shown are those of the test again.
 */
static void test_render_relinked(void **state)
{
	struct pk_test_result res;
	g_autoptr(pk_patch) patch = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *text = NULL, *flat = NULL;
	struct pk_test_result *again;
	JsonObject *relinked;

	make_result(&res, &patch);
	g_clear_pointer(&res.reason, g_free);
	res.verdict = PK_VERDICT_BUILD_FAILED;
	res.before.build.ok = true;
	res.after.commit = g_strdup("8dc463df7f71aaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	res.after.build.errors = g_strdup("btnxpuart.c:(.text+0x881): undefined reference to `crc8'\n");
	again = g_new0(struct pk_test_result, 1);
	again->scan = pk_scan(patch);
	again->verdict = PK_VERDICT_NOT_BUILT;
	again->before.commit = g_strdup(res.before.commit);
	again->derived.lines = g_strdup("CONFIG_CRC8=y\n");
	again->derived.asked = g_ptr_array_new_with_free_func(g_free);
	again->derived.linked = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(again->derived.linked, g_strdup("CONFIG_CRC8 (lib/crc8.c: crc8)"));
	again->coverage = g_ptr_array_new_with_free_func(pk_file_coverage_free);
	g_ptr_array_add(again->coverage, pk_file_coverage_new("kernel/sched/core.c", PK_COVERAGE_BUILT, NULL, true));
	res.relinked = again;
	model = pk_review_model(patch, &res, &info);
	text = pk_review_render(model, "review.txt", NULL);
	assert_non_null(text);
	fputs(text, stdout);
	flat = flattened(text);
	assert_non_null(strstr(flat, "verdict: build-failed"));
	assert_non_null(strstr(flat, "it calls code that only CONFIG_CRC8 (lib/crc8.c: crc8) builds, and nothing "
				     "the patch turns on selects it. Tested again with it on too: not-built."));
	assert_non_null(strstr(flat, "undefined reference to `crc8'"));
	assert_non_null(strstr(flat, "kernel/sched/core.c: built"));   /* the coverage of the kernels that linked */
	assert_non_null(strstr(flat, "One of them is there for what the patched kernel did not link without"));
	relinked = json_object_get_object_member(json_node_get_object(model), "relinked");
	assert_non_null(relinked);
	assert_string_equal(json_object_get_string_member(relinked, "verdict"), "not-built");
	assert_string_equal(json_array_get_string_element(json_object_get_array_member(relinked, "options"), 0),
			    "CONFIG_CRC8 (lib/crc8.c: crc8)");
	pk_test_result_clear(&res);
}

/*
 * The patched kernel's first boot never ended and a second one did: the
 * review says so, and which boot it compared (the model keeps the first
 * boot's seconds).
 */
static void test_render_booted_again(void **state)
{
	static const char stream[] = "@PKB 1\n@K 30\n6,0,1000,-;Linux version 6.12\n\n@E 1 0\n";
	struct pk_test_result res;
	g_autoptr(pk_patch) patch = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *text = NULL, *flat = NULL;
	JsonObject *after;

	make_result(&res, &patch);
	g_clear_pointer(&res.reason, g_free);
	res.verdict = PK_VERDICT_NO_VISIBLE_CHANGE;
	res.after.commit = g_strdup("8dc463df7f71aaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	for (unsigned i = 0; i < 2; i++) {
		struct pk_test_side *s = i ? &res.after : &res.before;

		s->build_tried = s->build.ok = s->booted = true;
		s->build.seconds = 5.0;
		s->boot.status = PK_BOOT_OK;
		s->boot.seconds = 4.5;
		s->boot.accel = "tcg";
		s->boot.capture = pk_capture_parse(stream, sizeof stream - 1);
		assert_true(s->boot.capture->complete);
	}
	res.after.timed_out = 60.2;
	res.diff = pk_kdiff_captures(res.before.boot.capture, res.after.boot.capture, NULL);
	model = pk_review_model(patch, &res, &info);
	text = pk_review_render(model, "review.txt", NULL);
	assert_non_null(text);
	fputs(text, stdout);
	flat = flattened(text);
	assert_non_null(strstr(flat, "after: build 5.0 s, boot 4.5 s (tcg). The patched kernel's first boot did "
				     "not end within 60 s (no limit was reached); it was booted again, and that "
				     "boot is the one compared."));
	after = json_object_get_object_member(json_node_get_object(model), "after");
	assert_string_equal(json_object_get_string_member(after, "first_boot_timed_out"), "60.2");
	pk_test_result_clear(&res);
}

/* A model stored before coverage was in it (no has_coverage, coverage) still renders. */
static void test_render_older_model(void **state)
{
	struct pk_test_result res;
	g_autoptr(pk_patch) patch = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *text = NULL, *html = NULL;
	JsonObject *o;

	make_result(&res, &patch);
	model = pk_review_model(patch, &res, &info);
	o = json_node_get_object(model);
	json_object_remove_member(o, "has_coverage");
	json_object_remove_member(o, "coverage");
	json_object_remove_member(o, "coverage_elsewhere");
	text = pk_review_render(model, "review.txt", &err);
	if (!text)
		fail_msg("%s", err->message);
	assert_non_null(strstr(text, "verdict: does-not-apply"));
	html = pk_review_render(model, "review.html", &err);
	assert_non_null(html);
	pk_test_result_clear(&res);
}

static void test_bad_inputs(void **state)
{
	g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL;

	assert_null(pk_review_render_json("{not json", "review.txt", &e1));
	assert_non_null(strstr(e1->message, "stored review model"));
	assert_null(pk_review_render_json("[1,2]", "review.txt", &e2));
	assert_non_null(strstr(e2->message, "not a JSON object"));
	assert_null(pk_review_render_json("{}", "no-such-template.txt", &e3));
	assert_non_null(strstr(e3->message, "no-such-template.txt"));
}

/*
 * The templates come from the data dir: this test lies in the checkout,
 * so the checkout's; $PRINTKBOT_DATADIR wins, with no fallback to it.
 */
static void test_templates_from_the_data_dir(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("printkbot-datadir-XXXXXX", NULL);
	g_autofree char *tdir = g_build_filename(dir, "templates", NULL);
	g_autofree char *tmpl = g_build_filename(tdir, "review.txt", NULL);
	g_autofree char *checkout = pk_data_dir(), *text = NULL;
	g_autoptr(GError) err = NULL;

	assert_string_equal(checkout, PK_SRCDIR);
	g_setenv("PRINTKBOT_DATADIR", dir, TRUE);
	assert_null(pk_review_render_json("{}", "review.txt", &err));
	assert_non_null(strstr(err->message, tmpl));
	g_mkdir(tdir, 0755);
	assert_true(g_file_set_contents(tmpl, "from the data dir\n", -1, NULL));
	text = pk_review_render_json("{}", "review.txt", NULL);
	assert_string_equal(text, "from the data dir\n");
	g_unsetenv("PRINTKBOT_DATADIR");
	g_unlink(tmpl);
	g_rmdir(tdir);
	g_rmdir(dir);
}

/*
 * The HTML review shows every string as text: a boot line, subject or
 * build error that is markup (a </td> that would end its cell, a script)
 * comes out escaped, so none can add an element or end one.
 */
static void test_html_escapes_markup(void **state)
{
	static const char model[] =
		"{\"subject\": \"[PATCH] x86: <script>alert(2)</script>\", \"verdict\": \"console-changed\","
		" \"summary\": \"a & b\", \"reason\": null, \"has_findings\": false, \"findings\": [],"
		" \"has_console\": true, \"console\": [{\"where\": \"e820.c:682 <b>f()</b>\","
		" \"kind\": \"text-changed\", \"old_side\": \"<6>[mem] available\","
		" \"new_side\": \"<6>[mem] <script>alert(1)</script></td> \\\"free\\\" 'x'\"}],"
		" \"has_index\": false, \"index\": [], \"has_unstable\": false, \"unstable\": [],"
		" \"after\": {\"build_errors\": \"<img src=x onerror=alert(3)>\", \"console_tail\": null},"
		" \"tested_wrapped\": \"\", \"reproduce\": \"printkbot test a.patch\", \"tool\": \"printkbot\"}";
	g_autoptr(GError) err = NULL;
	g_autofree char *html = pk_review_render_json(model, "review.html", &err);

	if (!html)
		fail_msg("%s", err->message);
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "<img"));
	assert_null(strstr(html, "<b>"));
	/* the changed words marked, the markup of the line still text inside the mark */
	assert_non_null(strstr(html, "<td class=\"log old\">&lt;6&gt;[mem] <del>available</del></td>"));
	assert_non_null(strstr(html, "<td class=\"log new\">&lt;6&gt;[mem] <ins>&lt;script&gt;alert(1)&lt;/script&gt;"
				     "&lt;/td&gt; &quot;free&quot; &apos;x&apos;</ins></td>"));
	assert_non_null(strstr(html, "<title>printkbot: [PATCH] x86: &lt;script&gt;alert(2)&lt;/script&gt;</title>"));
	assert_non_null(strstr(html, "a &amp; b"));
	assert_non_null(strstr(html, "&lt;img src=x onerror=alert(3)&gt;"));
}

/*
 * Markup comes from the renderer alone: a model that carries its own
 * where_html or old_side_html (a stored model someone wrote into the
 * database) has them dropped, and the renderer's own are made from the
 * text.  With a source_url, file:line links to the source line, and a
 * path that would break out of the address is escaped in it.
 */
static void test_html_markup_members(void **state)
{
	static const char model[] =
		"{\"subject\": \"s\", \"verdict\": \"console-changed\", \"summary\": \"\", \"reason\": null,"
		" \"base\": \"v6.12\", \"before\": {\"commit\": \"0123456789abcdef\"},"
		" \"has_findings\": true, \"findings\": [{\"where\": \"a/b.c:7\", \"file\": \"a/b\\\"><script>.c\","
		" \"line\": 7, \"kind\": \"text-changed\", \"confirmation_note\": \"\", \"message\": \"m\","
		" \"where_html\": \"<script>alert(1)</script>\"}],"
		" \"has_console\": true, \"console\": [{\"where\": \"x.c:1\", \"file\": \"x.c\", \"line\": 1,"
		" \"kind\": \"text-changed\", \"old_side\": \"a b\", \"new_side\": \"a c\","
		" \"old_side_html\": \"<img src=x onerror=alert(1)>\", \"new_side_html\": \"<b>\"}],"
		" \"has_index\": false, \"index\": [], \"has_unstable\": false, \"unstable\": [],"
		" \"after\": {\"build_errors\": null, \"console_tail\": null}, \"subject_html\": \"<i>\","
		" \"tested_wrapped\": \"\", \"reproduce\": \"r\", \"tool\": \"printkbot\"}";
	const struct pk_review_html opts = {
		.source_url = "https://git.example.org/linux/tree/{path}?id={commit}#n{line}",
	};
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) err = NULL;
	g_autofree char *html = NULL;

	assert_true(json_parser_load_from_data(parser, model, -1, NULL));
	html = pk_review_render_html(json_parser_get_root(parser), "review.html", &opts, &err);
	if (!html)
		fail_msg("%s", err->message);
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "<img"));
	assert_null(strstr(html, "<b>"));
	assert_null(strstr(html, "<i>"));
	assert_non_null(strstr(html, "<a href=\"https://git.example.org/linux/tree/a/b%22%3E%3Cscript%3E.c"
				     "?id=0123456789abcdef#n7\">a/b.c:7</a>"));
	assert_non_null(strstr(html, "<code><a href=\"https://git.example.org/linux/tree/x.c?id=0123456789abcdef#n1\">"
				     "x.c:1</a></code>"));
	assert_non_null(strstr(html, "<td class=\"log old\">a <del>b</del></td><td class=\"log new\">a <ins>c</ins></td>"));
}

static void test_wrap(void **state)
{
	g_autofree char *w = pk_wrap("aaa bbb ccc ddd", 7, "  ");
	g_autofree char *long_word = pk_wrap("x verylongword y", 5, "");

	assert_string_equal(w, "aaa bbb\n  ccc\n  ddd");
	assert_string_equal(long_word, "x\nverylongword\ny");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render_does_not_apply),
		cmocka_unit_test(test_render_corrupt_mail),
		cmocka_unit_test(test_render_from_json_is_identical),
		cmocka_unit_test(test_render_not_built),
		cmocka_unit_test(test_render_added_options),
		cmocka_unit_test(test_render_relinked),
		cmocka_unit_test(test_render_booted_again),
		cmocka_unit_test(test_render_older_model),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_templates_from_the_data_dir),
		cmocka_unit_test(test_html_escapes_markup),
		cmocka_unit_test(test_html_markup_members),
		cmocka_unit_test(test_wrap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
