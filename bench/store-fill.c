/*
 * store-fill.c - fill a printkbot database the way months of testing would,
 * through the store's own API, for bench/store.sh.
 *
 * usage: store-fill DB [PATCHES] [CHANGES_PER_PATCH] [models]
 *        store-fill --query DB [--file F] [--grep T] ...   (history's filters)
 *
 * The second form times pk_store_history() alone, in this process: the
 * best of five runs, wall and CPU ms, and the rows, with no process start
 * and no output formatting in the figures.
 *
 * One base build and boot (records and a printk index of kernel size),
 * then for every patch: a mail or a commit from one of three sources, its
 * static findings, an after build and boot whose records and index differ
 * from the base's in a few places, a test with console and index changes,
 * and a review.  A tenth of the changes name kernel/sched/topology.c's
 * neighbours, a few say "scheduling while atomic", dates run over two
 * years up to 2026-03, so the bench's queries have something to find.
 * Deterministic: the same arguments give the same database.
 *
 * With "models" last, each review's model is the one `test` would keep
 * (pk_review_model() of the patch, its findings and changes), so that
 * `report` and `report --site` (bench/site.sh) render real reviews;
 * without it a short stand-in, as bench/store.sh has always measured.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"
#include "base/util.h"
#include "report/review.h"

#define INDEX_ENTRIES 3000
#define BOOT_RECORDS 400
#define FILES 2000
#define AUTHORS 500

static const char *const subsystems[] = { "sched", "net", "mm", "drm", "usb", "x86", "block", "fs" };
static const enum pk_verdict verdicts[] = { PK_VERDICT_CONSOLE_CHANGED, PK_VERDICT_NO_VISIBLE_CHANGE,
					    PK_VERDICT_CONSOLE_CHANGED, PK_VERDICT_NO_CHURN,
					    PK_VERDICT_BUILD_FAILED, PK_VERDICT_CONSOLE_CHANGED };
static const enum pk_finding_kind finding_kinds[] = {
	PK_FINDING_TEXT_CHANGED, PK_FINDING_LEVEL_CHANGED, PK_FINDING_MESSAGE_ADDED,
	PK_FINDING_MESSAGE_REMOVED, PK_FINDING_PREFIX_CHANGED, PK_FINDING_STRING_SPLIT };
static const enum pk_change_kind change_kinds[] = {
	PK_CHANGE_TEXT_CHANGED, PK_CHANGE_LEVEL_CHANGED, PK_CHANGE_MESSAGE_ADDED,
	PK_CHANGE_MESSAGE_REMOVED, PK_CHANGE_PREFIX_CHANGED, PK_CHANGE_LINE_SPLIT };

static char *file_name(unsigned i)
{
	if (i == 0)
		return g_strdup("kernel/sched/topology.c");
	return g_strdup_printf("%s/%s/file%u.c", i % 3 ? "drivers" : "kernel",
			       subsystems[i % G_N_ELEMENTS(subsystems)], i);
}

static struct pk_capture *base_capture(void)
{
	struct pk_capture *cap = g_new0(struct pk_capture, 1);

	cap->records = g_ptr_array_new_with_free_func((GDestroyNotify)pk_record_free);
	cap->index = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	cap->problems = g_string_new(NULL);
	cap->complete = true;
	for (unsigned i = 0; i < BOOT_RECORDS; i++) {
		struct pk_record *r = g_new0(struct pk_record, 1);

		r->level = 6;
		r->seq = i;
		r->ts_usec = 1000u * i;
		r->caller = g_strdup_printf("T%u", i % 4);
		r->text = g_strdup_printf("subsystem %u: initialised %u things in a boot line of usual length", i, i * 7);
		r->dict = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(cap->records, r);
	}
	for (unsigned i = 0; i < INDEX_ENTRIES; i++) {
		struct pk_index_entry *e = g_new0(struct pk_index_entry, 1);

		e->level = (int)(i % 8);
		e->file = file_name(i % FILES);
		e->line = (int)(100 + i);
		e->func = g_strdup_printf("function_%u", i);
		e->format = g_strdup_printf("%s: could not set up thing %%d (%%pe) number %u\n",
					    subsystems[i % G_N_ELEMENTS(subsystems)], i);
		g_ptr_array_add(cap->index, e);
	}
	return cap;
}

/* The base capture with a few records and index entries changed by patch n. */
static void mutate(struct pk_capture *cap, const struct pk_capture *base, unsigned n, GRand *rand)
{
	for (guint i = 0; i < cap->records->len; i++) {
		struct pk_record *r = cap->records->pdata[i];
		const struct pk_record *b = base->records->pdata[i];

		r->ts_usec = b->ts_usec + (guint64)g_rand_int_range(rand, 0, 900);
		g_free(r->text);
		r->text = g_rand_int_range(rand, 0, 100) < 1
			? g_strdup_printf("%s (patched by %u)", b->text, n) : g_strdup(b->text);
	}
	for (guint i = 0; i < cap->index->len; i++) {
		struct pk_index_entry *e = cap->index->pdata[i];
		const struct pk_index_entry *b = base->index->pdata[i];

		g_free(e->format);
		e->format = (i + n) % 1500 == 0 || (i + 7 * n) % 1500 == 0
			? g_strdup_printf("changed by patch %u: %s", n, b->format) : g_strdup(b->format);
	}
}

static struct pk_capture *copy_capture(const struct pk_capture *base)
{
	struct pk_capture *cap = g_new0(struct pk_capture, 1);

	cap->records = g_ptr_array_new_with_free_func((GDestroyNotify)pk_record_free);
	cap->index = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	cap->problems = g_string_new(NULL);
	cap->complete = true;
	for (guint i = 0; i < base->records->len; i++) {
		const struct pk_record *b = base->records->pdata[i];
		struct pk_record *r = g_memdup2(b, sizeof(*b));

		r->caller = g_strdup(b->caller);
		r->text = g_strdup(b->text);
		r->dict = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(cap->records, r);
	}
	for (guint i = 0; i < base->index->len; i++) {
		const struct pk_index_entry *b = base->index->pdata[i];
		struct pk_index_entry *e = g_memdup2(b, sizeof(*b));

		e->file = g_strdup(b->file);
		e->func = g_strdup(b->func);
		e->format = g_strdup(b->format);
		g_ptr_array_add(cap->index, e);
	}
	return cap;
}

static char *console_text(const struct pk_capture *cap)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < cap->records->len; i++) {
		const struct pk_record *r = cap->records->pdata[i];

		g_string_append_printf(s, "[%5u.%06u] %s\n", (unsigned)(r->ts_usec / 1000000),
				       (unsigned)(r->ts_usec % 1000000), r->text);
	}
	return g_string_free(s, FALSE);
}

static void change_free(gpointer p)
{
	struct pk_change *c = p;

	g_free(c->old_text);
	g_free(c->new_text);
	g_free(c->origin.file);
	g_free(c->origin.func);
	g_free(c->origin.format);
	g_free(c->message);
	g_free(c);
}

static void index_change_free(gpointer p)
{
	struct pk_index_change *c = p;

	g_free(c->old_format);
	g_free(c->new_format);
	g_free(c->origin.file);
	g_free(c->origin.func);
	g_free(c->origin.format);
	g_free(c);
}

/* A message text; one in 500 is the one the bench greps for. */
static char *message(GRand *rand, const char *file, unsigned k)
{
	if (g_rand_int_range(rand, 0, 500) == 0)
		return g_strdup_printf("BUG: scheduling while atomic: %s/%u", file, k);
	return g_strdup_printf("%s: failed to configure channel %u (error %%d)",
			       subsystems[k % G_N_ELEMENTS(subsystems)], g_rand_int_range(rand, 0, 100000));
}

/* The model `test` keeps for this patch and what was found of it (pk_review_model()). */
static char *real_model(const struct pk_patch *p, struct pk_scan *scan, struct pk_kdiff *diff,
			enum pk_verdict verdict, const char *tip)
{
	struct pk_test_result res = { .verdict = verdict, .scan = scan, .diff = diff, .noise_boots = 3,
				      .seconds = 52.5 };
	struct pk_review_info info = { .source = "bench.mbox", .index = 1, .total = 1, .base = "printkbot-base",
				       .config_hash = "bench" };
	g_autoptr(JsonNode) model = NULL;

	res.before.commit = "0123456789abcdef0123456789abcdef01234567";
	res.before.cached = true;
	res.before.booted = true;
	res.after.commit = (char *)tip;
	res.after.build_tried = true;
	res.after.build.ok = true;
	res.after.build.seconds = 40;
	res.after.booted = true;
	res.after.boot.seconds = 6;
	res.after.boot.accel = "kvm";
	model = pk_review_model(p, &res, &info);
	return json_to_string(model, FALSE);
}

static int fill_patch(struct pk_store *s, unsigned n, unsigned per_patch, const gint64 sources[3],
		      gint64 base_boot, const struct pk_capture *base, GRand *rand, bool models, GError **err)
{
	unsigned src = n % 3, author = (unsigned)g_rand_int_range(rand, 0, AUTHORS);
	gint64 start = 1704067200 /* 2024-01-01 */, span = 1772323200 /* 2026-03-01 */ - start;
	g_autofree char *subject = g_strdup_printf("[PATCH v%u %u/%u] %s: rework the messages of part %u",
						   1 + n % 3, 1 + n % 5, 5, subsystems[n % 8], n);
	g_autofree char *mid = src < 2 ? g_strdup_printf("20260101.%u.bench@example.org", n) : NULL;
	g_autofree char *commit = src == 2 ? g_strdup_printf("%08x%032x", n, g_rand_int(rand)) : NULL;
	g_autofree char *name = g_strdup_printf("Author Number%u", author);
	g_autofree char *email = g_strdup_printf("author%u@example.org", author);
	g_autofree char *from = g_strdup_printf("%s <%s>", name, email);
	g_autofree char *diff = g_strdup_printf("diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n"
						"@@ -1,3 +1,3 @@\n-\tpr_info(\"old %u\\n\");\n"
						"+\tpr_info(\"new %u\\n\");\n", n, n);
	struct pk_patch p = { .subject = subject, .message_id = mid, .author = from,
			      .author_name = name, .author_email = email,
			      .time = start + (gint64)(g_rand_double(rand) * (double)span),
			      .description = "Make the messages say what they mean.\n", .diff = diff };
	struct pk_store_patch_opts o = PK_STORE_PATCH_OPTS_INIT;
	g_autoptr(GPtrArray) findings = g_ptr_array_new();
	g_autoptr(GPtrArray) changes = g_ptr_array_new_with_free_func(change_free);
	g_autoptr(GPtrArray) index_changes = g_ptr_array_new_with_free_func(index_change_free);
	g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
	struct pk_scan scan = { .verdict = PK_VERDICT_CONSOLE_CHANGED, .calls_changed = 3, .findings = findings };
	struct pk_kdiff diffs = { .changes = changes, .index_changes = index_changes,
				  .records_before = BOOT_RECORDS, .records_after = BOOT_RECORDS };
	struct pk_finding f[8];
	const char *confirm[8];
	unsigned n_static = MIN(per_patch * 3 / 10, 8), n_index = per_patch * 2 / 10;
	g_autoptr(pk_capture) after = copy_capture(base);
	g_autofree char *console = NULL;
	g_autofree char *tip = g_strdup_printf("tip%u", n);
	g_autofree char *model = NULL;
	g_autofree char *body = NULL;
	struct pk_build_result b = { .ok = true, .seconds = 40 };
	struct pk_boot_result boot = { .status = PK_BOOT_OK, .seconds = 6, .accel = "kvm",
				       .cmdline = "console=ttyS0 quiet", .capture = after };
	struct pk_store_test t = { .verdict = verdicts[n % G_N_ELEMENTS(verdicts)], .diff = &diffs,
				   .before_boot = base_boot, .confirmations = confirm };
	gint64 patch, build, after_boot, test, review;

	o.source_id = sources[src];
	o.commit = commit;
	for (unsigned k = 0; k < n_static; k++) {
		char *file = file_name((unsigned)g_rand_int_range(rand, 0, FILES));

		f[k] = (struct pk_finding){ .file = file, .line = 100 + (int)k, .kind = finding_kinds[k % 6],
			.old_text = message(rand, file, k), .new_text = message(rand, file, k),
			.message = "the format text changed" };
		g_ptr_array_add(texts, f[k].file);
		g_ptr_array_add(texts, f[k].old_text);
		g_ptr_array_add(texts, f[k].new_text);
		g_ptr_array_add(findings, &f[k]);
		confirm[k] = "seen-at-boot";
	}
	for (unsigned k = 0; k + n_static < per_patch; k++) {
		char *file = file_name((unsigned)g_rand_int_range(rand, 0, FILES));
		struct pk_origin origin = { .file = file, .line = 200 + (int)k,
					    .func = g_strdup_printf("function_%u", g_rand_int_range(rand, 0, 5000)),
					    .format = g_strdup("%s: failed\n") };

		if (k < n_index) {
			struct pk_index_change *c = g_new0(struct pk_index_change, 1);

			*c = (struct pk_index_change){ .kind = change_kinds[k % 4], .old_level = 3, .new_level = 4,
				.old_format = message(rand, file, k), .new_format = message(rand, file, k),
				.origin = origin };
			g_ptr_array_add(index_changes, c);
		} else {
			struct pk_change *c = g_new0(struct pk_change, 1);

			*c = (struct pk_change){ .kind = change_kinds[k % 6], .old_level = 6, .new_level = 6,
				.old_text = message(rand, file, k), .new_text = message(rand, file, k),
				.origin = origin, .message = g_strdup("text changed") };
			g_ptr_array_add(changes, c);
		}
	}
	t.n_confirmations = n_static;
	mutate(after, base, n, rand);
	console = console_text(after);
	boot.console = console;
	model = models ? real_model(&p, &scan, &diffs, t.verdict, tip)
		: g_strdup_printf("{\"verdict\":\"%s\",\"subject\":\"%s\",\"findings\":%u,"
				  "\"changes\":%u,\"base\":\"base\",\"config\":\"bench\"}",
				  pk_verdict_name(t.verdict), subject, n_static, per_patch - n_static);
	body = g_strdup_printf("printkbot tested \"%s\" on base.\n\nVerdict: %s\n\n"
			       "%u static findings, %u changes at boot.\n", subject, pk_verdict_name(t.verdict),
			       n_static, per_patch - n_static);
	if (pk_store_begin(s, err) < 0)
		return -1;
	if (pk_store_add_patch(s, &patch, NULL, &p, &o, err) < 0 ||
	    pk_store_add_findings(s, patch, &scan, err) < 0 ||
	    pk_store_add_build(s, &build, tip, "base", "bench", "x86_64", &b, err) < 0 ||
	    pk_store_add_boot(s, &after_boot, build, &boot, err) < 0)
		goto fail;
	t.patch_id = patch;
	t.after_boot = after_boot;
	t.after_build = build;
	if (pk_store_add_test(s, &test, &t, err) < 0 ||
	    pk_store_add_review(s, &review, test, model, body, err) < 0)
		goto fail;
	return pk_store_commit(s, err);
fail:
	pk_store_rollback(s);
	return -1;
}

/* This process's CPU time: what a query costs whatever else the machine runs. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* YYYY-MM-DD as midnight UTC, as history reads it. */
static GDateTime *since_date(const char *v)
{
	g_autofree char *iso = g_strconcat(v, "T00:00:00Z", NULL);

	return g_date_time_new_from_iso8601(iso, NULL);
}

/* --query DB [--name VALUE]...: the best of five pk_store_history() runs. */
static int query(int argc, char **argv)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_store) s = NULL;
	struct pk_history_filter f = { 0 };
	double best = 1e9, best_cpu = 1e9;
	guint rows = 0;

	for (int i = 3; i + 1 < argc; i += 2) {
		const char *n = argv[i], *v = argv[i + 1];
		g_autoptr(GDateTime) t = NULL;

		if (!strcmp(n, "--file")) f.file = v;
		else if (!strcmp(n, "--func")) f.func = v;
		else if (!strcmp(n, "--grep")) f.grep = v;
		else if (!strcmp(n, "--kind")) f.kind = v;
		else if (!strcmp(n, "--verdict")) f.verdict = v;
		else if (!strcmp(n, "--author")) f.author = v;
		else if (!strcmp(n, "--stage")) f.stage = v;
		else if (!strcmp(n, "--message-id")) f.message_id = v;
		else if (!strcmp(n, "--since") && (t = since_date(v)))
			f.since = g_date_time_to_unix(t);
		else {
			fprintf(stderr, "store-fill: --query does not know %s %s\n", n, v);
			return 2;
		}
	}
	if (pk_store_open(&s, argv[2], &err) < 0)
		goto fail;
	for (int k = 0; k < 5; k++) {
		g_autoptr(GPtrArray) out = NULL;
		double t0 = pk_now(), c0 = cpu_now();

		if (pk_store_history(s, &out, &f, &err) < 0)
			goto fail;
		best = MIN(best, pk_now() - t0);
		best_cpu = MIN(best_cpu, cpu_now() - c0);
		rows = out->len;
	}
	printf("%.1f %.1f %u\n", best * 1000, best_cpu * 1000, rows);
	return 0;
fail:
	fprintf(stderr, "store-fill: %s\n", err->message);
	return 1;
}

int main(int argc, char **argv)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_store) s = NULL;
	g_autoptr(pk_capture) base = base_capture();
	g_autoptr(GRand) rand = g_rand_new_with_seed(42);
	unsigned patches = argc > 2 ? (unsigned)atoi(argv[2]) : 10000;
	unsigned per_patch = argc > 3 ? (unsigned)atoi(argv[3]) : 10;
	bool models = argc > 4 && !strcmp(argv[4], "models");
	struct pk_build_result b = { .ok = true, .seconds = 600 };
	g_autofree char *console = console_text(base);
	struct pk_boot_result boot = { .status = PK_BOOT_OK, .seconds = 6, .accel = "kvm",
				       .cmdline = "console=ttyS0 quiet", .console = console,
				       .capture = base };
	gint64 sources[3], build, base_boot;
	double t0 = pk_now();

	if (argc > 2 && !strcmp(argv[1], "--query"))
		return query(argc, argv);
	if (argc < 2 || !patches || per_patch < 2) {
		fprintf(stderr, "usage: store-fill DB [PATCHES] [CHANGES_PER_PATCH >= 2] [models]\n");
		return 2;
	}
	if (pk_store_open(&s, argv[1], &err) < 0 ||
	    pk_store_add_source(s, &sources[0], "mbox", "linux-kernel", "https://lore.kernel.org/lkml", &err) < 0 ||
	    pk_store_add_source(s, &sources[1], "imap", "netdev", "imaps://mail.example.org/netdev", &err) < 0 ||
	    pk_store_add_source(s, &sources[2], "git", "linux.git master", NULL, &err) < 0 ||
	    pk_store_add_build(s, &build, "base", "base", "bench", "x86_64", &b, &err) < 0 ||
	    pk_store_add_boot(s, &base_boot, build, &boot, &err) < 0)
		goto fail;
	for (unsigned n = 0; n < patches; n++) {
		if (fill_patch(s, n, per_patch, sources, base_boot, base, rand, models, &err) < 0)
			goto fail;
		if (n % 1000 == 999)
			pk_progress("filled %u of %u patches", n + 1, patches);
	}
	pk_info("filled %u patches (%u changes each) in %.1f s", patches, per_patch, pk_now() - t0);
	return 0;
fail:
	fprintf(stderr, "store-fill: %s\n", err->message);
	return 1;
}
