/*
 * test-kcidb.c - KCIDB exports of stored reviews (report/kcidb.h), each
 * validated against KCIDB's own schema (../shared/kcidb/, Draft-07 with
 * format checks) by Debian's python3-jsonschema (kcidb-validate.py).
 *
 * The reviews are made as `test` makes them (pk_review_doc_make(), then
 * pk_test_record()) from results built here: a console change whose
 * records hold quotes, backslashes, a newline and bytes that are not
 * UTF-8, with such a subject and build error too; a two-patch series
 * with a cover letter; a patch that does not apply; a build that fails;
 * a kernel that panics; a patch whose file is not built.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "base/util.h"
#include "lab/coverage.h"
#include "pipeline/test.h"
#include "report/kcidb.h"
#include "report/review.h"
#include "store/store.h"

#define SCHEMA PK_SRCDIR "/../shared/kcidb/kcidb-io.schema.v5.3.json"
#define VALIDATE PK_SRCDIR "/tests/unit/kcidb-validate.py"
/* Debian's python, whose python3-jsonschema make deps installs */
#define PYTHON "/usr/bin/python3"
#define BASE "0123456789abcdef0123456789abcdef01234567"
#define CONFIG "e9995ec13ae3"

struct fixture {
	char *dir;
	struct pk_store *store;
	struct pk_capture *base_cap;
	gint64 base_build, base_boot;
	GArray *reviews;          /* gint64 review ids, in the order made */
};

static const char *const base_records[] = {
	"Linux version 6.12.118", "e820: [mem 0x10000000-0xafffffff] available for PCI devices",
	"Serial: 8250/16550 driver, 4 ports", "Run /init as init process", NULL,
};

static struct pk_capture *capture_of(const char *const *records)
{
	struct pk_capture *cap = g_new0(struct pk_capture, 1);
	static const char index[] =
		"<6> arch/x86/kernel/e820.c:682 e820__setup_pci_gap \"[mem %#010lx-%#010lx] available for PCI devices\\n\"\n"
		"<6> drivers/tty/serial/8250/8250_core.c:900 serial8250_init \"Serial: %s driver, %d ports\\n\"\n";

	cap->records = g_ptr_array_new_with_free_func((GDestroyNotify)pk_record_free);
	cap->index = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	cap->problems = g_string_new(NULL);
	cap->complete = true;
	pk_index_parse(cap->index, index, strlen(index), cap->problems);
	for (guint i = 0; records[i]; i++) {
		struct pk_record *r = g_new0(struct pk_record, 1);

		r->level = 6;
		r->seq = i;
		r->ts_usec = 1000 * (i + 1);
		r->text = g_strdup(records[i]);
		r->dict = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(cap->records, r);
	}
	return cap;
}

static struct pk_patch *patch_of(const char *mail)
{
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(GError) err = NULL;
	unsigned skipped = 0;

	if (pk_patch_read_mails(&patches, &skipped, mail, strlen(mail), &err) < 0)
		fail_msg("%s", err->message);
	assert_int_equal(patches->len, 1);
	return g_ptr_array_steal_index(patches, 0);
}

static char *mail_of(const char *mid, const char *subject, const char *line)
{
	return g_strdup_printf("From: Jane Dev <jane@example.org>\nDate: Tue, 1 Dec 2026 10:00:00 +0000\n"
			       "Subject: %s\nMessage-ID: <%s>\n\nA fixture of test-kcidb: %s.\n---\n"
			       "diff --git a/arch/x86/kernel/e820.c b/arch/x86/kernel/e820.c\n"
			       "--- a/arch/x86/kernel/e820.c\n+++ b/arch/x86/kernel/e820.c\n"
			       "@@ -679,3 +679,3 @@ __init void e820__setup_pci_gap(void)\n"
			       " \tpci_mem_start = gapstart;\n-\tpr_info(\"[mem %%#010lx-%%#010lx] available for PCI devices\\n\",\n"
			       "+\tpr_info(\"%s\\n\",\n \t\tgapstart, gapstart + gapsize - 1);\n", subject, mid, mid, line);
}

/* What a scenario's after side was. */
struct scenario {
	const char *mid, *subject;
	gint64 series_id;
	enum pk_verdict verdict;
	const char *reason;
	const char *after_commit;        /* NULL: not applied */
	const char *parent;              /* NULL: the base */
	gint64 parent_build, parent_boot;
	bool build_ok;
	const char *build_errors;
	bool booted;
	enum pk_boot_status boot;
	const char *boot_detail, *console_tail;
	const char *const *records;      /* the after boot's, when booted */
	const char *coverage_state;      /* "booted" or "not-built" */
	gint64 after_build, after_boot;  /* out: what was stored */
};

/* Make the review of sc as `test` does, store it; its id into f->reviews. */
static void record(struct fixture *f, struct scenario *sc)
{
	g_autofree char *mail = mail_of(sc->mid, sc->subject, "[mem %#010lx-%#010lx] free for PCI devices");
	g_autoptr(pk_patch) patch = patch_of(mail);
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_capture) after_cap = sc->records ? capture_of(sc->records) : NULL;
	/* a parent in the series printed what this patch's kernel prints (the fixture's patch 2/2 changes nothing) */
	g_autoptr(pk_capture) parent_cap = sc->parent && sc->records ? capture_of(sc->records) : NULL;
	struct pk_test_result res = { 0 };
	struct pk_review_info info = { "fixture.mbox", 1, 1, "printkbot-base", CONFIG,
				       .kernel = "Linux 6.12.118 (Debian linux-source-6.12)",
				       .compiler = "gcc (Debian 12.2.0-14+deb12u1) 12.2.0" };
	struct pk_review_doc doc;
	struct pk_store_patch_opts popts = PK_STORE_PATCH_OPTS_INIT;
	gint64 review_id, patch_id;

	if (sc->series_id) {
		popts.series_id = sc->series_id;
		assert_int_equal(pk_store_add_patch(f->store, &patch_id, NULL, patch, &popts, &err), 0);
	}
	res.verdict = sc->verdict;
	res.reason = (char *)sc->reason;
	res.scan = pk_scan(patch);
	res.seconds = 42.5;
	res.before.commit = (char *)(sc->parent ? sc->parent : BASE);
	res.before.build_id = sc->parent ? sc->parent_build : f->base_build;
	res.before.boot_id = sc->parent ? sc->parent_boot : f->base_boot;
	res.before.cached = true;
	res.before.boot.capture = parent_cap ? parent_cap : f->base_cap;
	if (!sc->coverage_state)
		sc->coverage_state = "booted";
	if (sc->after_commit) {
		res.after.commit = (char *)sc->after_commit;
		res.after.build_tried = true;
		res.after.build.ok = sc->build_ok;
		res.after.build.seconds = 61.25;
		res.after.build.errors = (char *)sc->build_errors;
		res.after.build.log_path = (char *)"/nonexistent/printkbot-test/build.log";
		res.after.booted = sc->booted;
		res.after.boot.status = sc->boot;
		res.after.boot.seconds = 3.5;
		res.after.boot.accel = "tcg";
		res.after.boot.detail = (char *)sc->boot_detail;
		res.after.boot.capture = after_cap;
		res.after.console_tail = (char *)sc->console_tail;
		res.coverage = g_ptr_array_new_with_free_func(pk_file_coverage_free);
		g_ptr_array_add(res.coverage, pk_file_coverage_new("arch/x86/kernel/e820.c",
								  !strcmp(sc->coverage_state, "booted") ? PK_COVERAGE_BOOTED
													: PK_COVERAGE_NOT_BUILT,
								  !strcmp(sc->coverage_state, "booted") ? NULL
									: "CONFIG_X86 is off \"quoted\"", true));
	}
	if (sc->booted && sc->boot == PK_BOOT_OK)
		res.diff = pk_kdiff_captures(res.before.boot.capture, after_cap, NULL);
	if (pk_review_doc_make(&doc, patch, &res, &info, &err) < 0)
		fail_msg("%s", err->message);
	{
		struct pk_test_record_info rec = { patch, 0, CONFIG, doc.model_json, doc.text };

		if (pk_test_record(f->store, &review_id, &res, &rec, &err) < 0)
			fail_msg("%s", err->message);
	}
	g_array_append_val(f->reviews, review_id);
	pk_review_doc_clear(&doc);
	pk_scan_free(res.scan);
	pk_kdiff_free(res.diff);
	if (res.coverage)
		g_ptr_array_unref(res.coverage);
	{
		/* what was stored of the after side, for a patch whose parent this one is */
		g_autoptr(pk_store_kcidb) k = NULL;

		assert_int_equal(pk_store_kcidb_review(f->store, review_id, &k, &err), 0);
		sc->after_build = k->after_build.id;
		sc->after_boot = k->after_boot.id;
	}
}

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autofree char *db = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_build_result build = { .ok = true, .seconds = 300.5, .log_path = (char *)"/nonexistent/base.log" };
	struct pk_boot_result boot = { .status = PK_BOOT_OK, .seconds = 3.25, .accel = "tcg" };

	f->dir = g_dir_make_tmp("pk-kcidb-XXXXXX", NULL);
	db = g_build_filename(f->dir, "printkbot.db", NULL);
	if (pk_store_open(&f->store, db, &err) < 0)
		fail_msg("%s", err->message);
	f->base_cap = capture_of(base_records);
	boot.capture = f->base_cap;
	assert_int_equal(pk_store_add_build(f->store, &f->base_build, BASE, BASE, CONFIG, "x86_64", &build, &err), 0);
	assert_int_equal(pk_store_add_boot(f->store, &f->base_boot, f->base_build, &boot, &err), 0);
	f->reviews = g_array_new(FALSE, FALSE, sizeof(gint64));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->dir);

	pk_store_close(f->store);
	pk_capture_free(f->base_cap);
	g_array_unref(f->reviews);
	g_assert(system(cmd) == 0);
	g_free(f->dir);
	g_free(f);
	return 0;
}

/* Validate text as a KCIDB document with kcidb-validate.py: its exit status; what it said into *said. */
static int validate(const char *dir, const char *text, char **said)
{
	g_autofree char *path = g_build_filename(dir, "doc.json", NULL);
	g_autofree char *out = NULL;
	const char *argv[] = { PYTHON, VALIDATE, SCHEMA, path, NULL };
	g_autoptr(GError) err = NULL;
	int status;

	if (!g_file_test(SCHEMA, G_FILE_TEST_EXISTS))
		fail_msg("no KCIDB schema at %s (the workplace's shared data)", SCHEMA);
	assert_true(g_file_set_contents(path, text, -1, NULL));
	if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status,
			  &err))
		fail_msg("%s: %s (make deps installs python3-jsonschema)", PYTHON, err->message);
	*said = g_steal_pointer(&out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static JsonObject *parse(const char *text)
{
	g_autoptr(JsonParser) p = json_parser_new();

	assert_true(json_parser_load_from_data(p, text, -1, NULL));
	return json_object_ref(json_node_get_object(json_parser_get_root(p)));
}

/* The object of list whose member name is value, or NULL. */
static JsonObject *find(JsonObject *doc, const char *list, const char *name, const char *value)
{
	JsonArray *a = json_object_get_array_member(doc, list);

	for (guint i = 0; i < json_array_get_length(a); i++) {
		JsonObject *o = json_array_get_object_element(a, i);

		if (json_object_has_member(o, name) && !g_strcmp0(json_object_get_string_member(o, name), value))
			return o;
	}
	return NULL;
}

static const char *str(JsonObject *o, const char *name)
{
	assert_non_null(o);
	return json_object_has_member(o, name) ? json_object_get_string_member(o, name) : NULL;
}

static void test_every_kind_of_review(void **state)
{
	struct fixture *f = *state;
	static const char *const hostile_records[] = {
		"Linux version 6.12.118", "e820: [mem 0x10000000-0xafffffff] \"free\" \\ for PCI\ndevices \xff\xfe\x80",
		"Serial: 8250/16550 driver, 4 ports", "Run /init as init process", NULL,
	};
	static const char *const panic_records[] = { "Linux version 6.12.118", "Kernel panic - not syncing", NULL };
	struct pk_store_series cover = { 0, "<cover@example.org>", "[PATCH 0/2] e820: two steps", 1, 2 };
	gint64 series_id;
	g_autoptr(GError) err = NULL;

	assert_int_equal(pk_store_add_series(f->store, &series_id, &cover, &err), 0);
	{
		struct scenario hostile = {
			"hostile\"id@example.org", "[PATCH] e820: say \"free\" \\ not\tavailable \xc3\x28",
			0, PK_VERDICT_CONSOLE_CHANGED, NULL, "1111111111111111111111111111111111111111", NULL, 0, 0,
			true, NULL, true, PK_BOOT_OK, NULL, NULL, hostile_records, "booted" };
		struct scenario one = {
			"one@example.org", "[PATCH 1/2] e820: first", series_id, PK_VERDICT_CONSOLE_CHANGED, NULL,
			"2222222222222222222222222222222222222222", NULL, 0, 0, true, NULL, true, PK_BOOT_OK, NULL, NULL,
			hostile_records, "booted" };
		struct scenario two = {
			"two@example.org", "[PATCH 2/2] e820: second", series_id, PK_VERDICT_NO_VISIBLE_CHANGE, NULL,
			"3333333333333333333333333333333333333333", "2222222222222222222222222222222222222222", 0, 0,
			true, NULL, true, PK_BOOT_OK, NULL, NULL, hostile_records, "booted" };
		struct scenario noapply = {
			"noapply@example.org", "[PATCH] e820: for another tree", 0, PK_VERDICT_DOES_NOT_APPLY,
			"arch/x86/kernel/e820.c: hunk 1 (@@ -679,3 +679,3 @@) does not apply:\n\"its pre-image\" is nowhere",
			NULL };
		struct scenario broken = {
			"broken@example.org", "[PATCH] e820: does not build", 0, PK_VERDICT_BUILD_FAILED, NULL,
			"4444444444444444444444444444444444444444", NULL, 0, 0, false,
			"arch/x86/kernel/e820.c:683:9: error: expected ';' before \"}\" token \xff\n", false };
		struct scenario panics = {
			"panics@example.org", "[PATCH] e820: panics", 0, PK_VERDICT_BOOT_FAILED, "the kernel panicked",
			"5555555555555555555555555555555555555555", NULL, 0, 0, true, NULL, true, PK_BOOT_PANIC,
			"Kernel panic - not syncing: \"VFS\"", "[    0.5] Kernel panic - not syncing\n[    0.6] ---[ end ]---",
			panic_records, "booted" };
		struct scenario unbuilt = {
			"unbuilt@example.org", "[PATCH] e820: a file not built", 0, PK_VERDICT_NOT_BUILT, NULL,
			"6666666666666666666666666666666666666666", NULL, 0, 0, true, NULL, true, PK_BOOT_OK, NULL, NULL,
			base_records, "not-built" };

		record(f, &hostile);
		record(f, &one);
		two.parent_build = one.after_build;
		two.parent_boot = one.after_boot;
		record(f, &two);
		record(f, &noapply);
		record(f, &broken);
		record(f, &panics);
		record(f, &unbuilt);
	}
	{
		g_autofree char *doc = pk_kcidb_export(f->store, "printkbot_test", f->reviews, &err);
		g_autofree char *said = NULL;
		g_autoptr(JsonObject) d = NULL;
		JsonObject *o;
		g_autofree char *raw1 = NULL, *raw2 = NULL, *s1 = NULL, *s2 = NULL, *sums = NULL, *want = NULL;

		if (!doc)
			fail_msg("%s", err->message);
		if (validate(f->dir, doc, &said) != 0)
			fail_msg("the export does not validate:\n%s\n%s", said, doc);
		assert_true(g_utf8_validate(doc, -1, NULL));
		if (g_getenv("KCIDB_DUMP"))
			g_file_set_contents(g_getenv("KCIDB_DUMP"), doc, -1, NULL);
		d = parse(doc);
		/* the base, the hostile patch, the series, and the four others */
		assert_int_equal(json_array_get_length(json_object_get_array_member(d, "checkouts")), 7);
		o = find(d, "checkouts", "id", "printkbot_test:" BASE);
		assert_string_equal(str(o, "patchset_hash"), "");
		/* the series: one checkout on the base, its hash KCIDB's recipe over both patches */
		o = find(d, "checkouts", "message_id", "cover@example.org");
		assert_string_equal(str(o, "git_commit_hash"), BASE);
		assert_int_equal(pk_store_patch_raw(f->store, 2, &raw1, &err), 0);
		assert_int_equal(pk_store_patch_raw(f->store, 3, &raw2, &err), 0);
		s1 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, raw1, -1);
		s2 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, raw2, -1);
		sums = g_strdup_printf("%s\n%s\n", s1, s2);
		want = g_compute_checksum_for_string(G_CHECKSUM_SHA256, sums, -1);
		assert_string_equal(str(o, "patchset_hash"), want);
		assert_int_equal(json_array_get_length(json_object_get_array_member(json_object_get_object_member(o, "misc"),
											"reviews")), 2);
		/* patch 2/2's kernel is compared with patch 1/2's, a build of the same checkout */
		o = find(d, "builds", "id", "printkbot_test:222222222222-" CONFIG);
		assert_string_equal(str(o, "checkout_id"), str(find(d, "checkouts", "message_id", "cover@example.org"), "id"));
		o = find(d, "tests", "id", "printkbot_test:333333333333-222222222222-" CONFIG "-console_diff");
		assert_string_equal(str(o, "status"), "PASS");
		/* the hostile change: a failure, its text made valid and kept */
		o = find(d, "tests", "id", "printkbot_test:111111111111-0123456789ab-" CONFIG "-console_diff");
		assert_string_equal(str(o, "status"), "FAIL");
		assert_string_equal(str(o, "path"), "printk.console_diff");
		assert_non_null(strstr(str(o, "log_excerpt"), "\"free\" \\ for PCI"));
		assert_non_null(find(d, "tests", "id", "printkbot_test:111111111111-0123456789ab-" CONFIG "-index_diff"));
		/* does-not-apply: an invalid checkout saying why, and no build */
		o = find(d, "checkouts", "message_id", "noapply@example.org");
		assert_false(json_object_get_boolean_member(o, "valid"));
		assert_non_null(strstr(str(o, "log_excerpt"), "\"its pre-image\" is nowhere"));
		/* a failed build with its errors; a panic with the console's end */
		o = find(d, "builds", "id", "printkbot_test:444444444444-" CONFIG);
		assert_string_equal(str(o, "status"), "FAIL");
		assert_non_null(strstr(str(o, "log_excerpt"), "expected ';'"));
		o = find(d, "tests", "build_id", "printkbot_test:555555555555-" CONFIG);
		assert_string_equal(str(o, "path"), "boot");
		assert_string_equal(str(o, "status"), "FAIL");
		assert_non_null(strstr(str(o, "log_excerpt"), "end ]---"));
		/* not-built: the comparisons vouch for nothing, and the coverage says why */
		o = find(d, "tests", "id", "printkbot_test:666666666666-0123456789ab-" CONFIG "-console_diff");
		assert_string_equal(str(o, "status"), "SKIP");
		o = json_array_get_object_element(json_object_get_array_member(json_object_get_object_member(o, "misc"),
									     "coverage"), 0);
		assert_string_equal(str(o, "state"), "not-built");
		/* a log file that is not there is no log_url */
		assert_null(str(find(d, "builds", "id", "printkbot_test:0123456789ab-" CONFIG), "log_url"));
	}
}

/* The validator is no rubber stamp: a document the schema refuses fails it, saying where. */
static void test_validator_refuses(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {
		"{ \"version\": { \"major\": 4 } }",
		"{ \"version\": { \"major\": 5 }, \"builds\": [ { \"id\": \"x:1\", \"checkout_id\": \"x:2\" } ] }",
		"{ \"version\": { \"major\": 5 }, \"checkouts\": [ { \"id\": \"x:1\", \"origin\": \"x\", "
		"\"start_time\": \"yesterday\" } ] }",
		"{ \"version\": { \"major\": 5 }, \"checkouts\": [ { \"id\": \"x:1\", \"origin\": \"x\", "
		"\"message_id\": \"no-at-sign\" } ] }",
		"{ \"version\": { \"major\": 5 }, \"tests\": [ { \"id\": \"x:1\", \"origin\": \"x\", \"build_id\": \"x:9\", "
		"\"status\": \"PASS\" } ] }",
		"{ \"version\": { \"major\": 5 }, \"tests\": [ { \"id\": \"x:1\", \"origin\": \"x\", \"build_id\": \"x:9\", "
		"\"path\": \"printk/console\" } ] }",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *said = NULL;

		if (validate(f->dir, bad[i], &said) != 1)
			fail_msg("accepted: %s", bad[i]);
		assert_true(said && *said);
	}
}

/* An origin KCIDB does not take is refused; a review that is not there is an error naming it. */
static void test_origin_and_missing(void **state)
{
	struct fixture *f = *state;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	g_autoptr(GError) err = NULL;
	gint64 none = 999;

	assert_true(pk_kcidb_origin_valid("printkbot"));
	assert_true(pk_kcidb_origin_valid("lab_2"));
	assert_false(pk_kcidb_origin_valid("Printkbot"));
	assert_false(pk_kcidb_origin_valid("print-kbot"));
	assert_false(pk_kcidb_origin_valid(""));
	g_array_append_val(ids, none);
	assert_null(pk_kcidb_export(f->store, "printkbot", ids, &err));
	assert_true(g_error_matches(err, PK_ERROR, PK_ERROR_INPUT));
	assert_non_null(strstr(err->message, "no review 999"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_kind_of_review, setup, teardown),
		cmocka_unit_test_setup_teardown(test_validator_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_origin_and_missing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
