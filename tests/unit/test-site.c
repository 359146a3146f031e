/*
 * test-site.c - `report --site` (report/site.h): the pages of a store of
 * reviews, every string of a hostile patch escaped (subject, author,
 * Message-ID, boot lines, file names), page names that stay in the site,
 * links planted in the site's directory never followed, and runs that
 * write only what changed.  On SQLite, then PostgreSQL
 * when there is one (store-fixture.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "cmd/commands.h"
#include "store-fixture.h"
#include "report/review.h"
#include "report/site.h"
#include "pipeline/test.h"
#include "lab/boot.h"
#include "lab/build.h"

/* A patch mail: subject, author and Message-ID as given, one hunk to file. */
static char *mail(const char *subject, const char *from, const char *mid, const char *file)
{
	return g_strdup_printf("From: %s\nSubject: %s\nMessage-ID: <%s>\nDate: Tue, 1 Dec 2026 10:00:00 +0000\n\n"
			       "Reword.\n---\ndiff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -10,3 +10,3 @@ void f(void)\n"
			       " {\n-\tpr_info(\"old words here\\n\");\n+\tpr_info(\"new words here\\n\");\n }\n",
			       from, subject, mid, file, file, file, file);
}

/*
 * Store one tested patch (mail as above) with a console change in file
 * whose after side is new_text, and its review (the model `test` keeps):
 * the patch id.
 */
static gint64 add_reviewed_on(struct pk_store *s, const char *subject, const char *from, const char *mid,
			      const char *file, const char *new_text, gint64 source_id,
			      const struct pk_store_test *on)
{
	g_autofree char *text = mail(subject, from, mid, file);
	g_autoptr(GPtrArray) patches = NULL, changes = g_ptr_array_new(), index = g_ptr_array_new();
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autofree char *model_json = NULL;
	struct pk_change c = { .kind = PK_CHANGE_TEXT_CHANGED, .old_level = 6, .new_level = 6,
			       .old_text = "serial: old words here", .new_text = (char *)new_text,
			       .origin = { .file = (char *)file, .line = 11, .func = "f", .format = "%s" },
			       .message = "the text changed" };
	struct pk_kdiff diff = { .changes = changes, .index_changes = index, .records_before = 10,
				 .records_after = 10 };
	const struct pk_review_info info = { "t.mbox", 1, 1, "printkbot-base", "427fcf303d87" };
	struct pk_store_patch_opts o = PK_STORE_PATCH_OPTS_INIT;
	struct pk_test_result res = { .verdict = PK_VERDICT_CONSOLE_CHANGED, .diff = &diff };
	struct pk_store_test t = { .verdict = PK_VERDICT_CONSOLE_CHANGED, .diff = &diff };
	gint64 test, review;
	unsigned skipped;

	if (on) {   /* the builds and boots it compared */
		t.before_build = on->before_build;
		t.after_build = on->after_build;
		t.before_boot = on->before_boot;
		t.after_boot = on->after_boot;
	}
	g_ptr_array_add(changes, &c);
	assert_int_equal(pk_patch_read_mails(&patches, &skipped, text, strlen(text), NULL), 0);
	assert_int_equal(patches->len, 1);
	res.scan = pk_scan(patches->pdata[0]);
	res.before.commit = "514c34e2f1d7a9b0c3e4f5a6b7c8d9e0f1a2b3c4";
	model = pk_review_model(patches->pdata[0], &res, &info);
	model_json = json_to_string(model, FALSE);
	o.source_id = source_id;
	assert_int_equal(pk_store_add_patch(s, &t.patch_id, NULL, patches->pdata[0], &o, &err), 0);
	assert_int_equal(pk_store_add_test(s, &test, &t, &err), 0);
	assert_int_equal(pk_store_add_review(s, &review, test, model_json, "body", &err), 0);
	res.before.commit = NULL;
	res.diff = NULL;
	pk_scan_free(res.scan);
	return t.patch_id;
}

static gint64 add_reviewed(struct pk_store *s, const char *subject, const char *from, const char *mid,
			   const char *file, const char *new_text, gint64 source_id)
{
	return add_reviewed_on(s, subject, from, mid, file, new_text, source_id, NULL);
}

static char *site_file(const char *dir, const char *page)
{
	g_autofree char *path = g_build_filename(dir, page, NULL);
	char *text = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		fail_msg("no page %s", page);
	return text;
}

static void rm_rf(const char *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	const char *name;

	while (dir && (name = g_dir_read_name(dir))) {
		g_autofree char *p = g_build_filename(path, name, NULL);

		if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
			rm_rf(p);
		else
			g_unlink(p);
	}
	g_rmdir(path);
}

/* Every regular file under dir, relative to it: the pages a run left. */
static void list_files(GPtrArray *out, const char *dir, const char *rel)
{
	g_autofree char *path = g_build_filename(dir, rel, NULL);
	g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree char *r = *rel ? g_build_filename(rel, name, NULL) : g_strdup(name);
		g_autofree char *p = g_build_filename(dir, r, NULL);

		if (g_file_test(p, G_FILE_TEST_IS_DIR))
			list_files(out, dir, r);
		else
			g_ptr_array_add(out, g_steal_pointer(&r));
	}
}

static const char hostile_subject[] =
	"[PATCH] tty: <script>alert(1)</script> \"onmouseover=alert(2) x=\" <a href=\"javascript:alert(3)\">j</a>";

static void test_page_names(void **state)
{
	static const struct { const char *path, *page; } names[] = {
		{ "drivers/tty/serial/8250/8250_port.c", "files/drivers/tty/serial/8250/8250_port.c.html" },
		{ "kernel/sched/topology.c", "files/kernel/sched/topology.c.html" },
		{ "Makefile", "files/Makefile.html" },
	};
	static const char *const hostile[] = {
		"../../etc/passwd", "a/../../b.c", "/etc/passwd", "./x.c", "a//b.c", "-rf.c", ".hidden/x.c",
		"_/x.c", "a/b\"><script>.c", "a/b c.c", "a/b?c.c", "a/b#c.c", "a/b%2e%2e.c", "a\\b.c", "",
		"caf\xc3\xa9.c",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *page = pk_site_file_page(names[i].path);

		assert_string_equal(page, names[i].page);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(hostile); i++) {
		g_autofree char *page = pk_site_file_page(hostile[i]);

		assert_true(g_str_has_prefix(page, "files/_/"));
		assert_int_equal(strlen(page), strlen("files/_/") + 64 + strlen(".html"));
		assert_int_equal(strspn(page + 8, "0123456789abcdef"), 64);
	}
	{
		g_autofree char *a = pk_site_series_page(12, 7), *b = pk_site_series_page(0, 7);
		g_autofree char *u = pk_site_series_url("https://x.example/bot/", 12, 0);

		assert_string_equal(a, "series/j12.html");
		assert_string_equal(b, "series/p7.html");
		assert_string_equal(u, "https://x.example/bot/series/j12.html");
		assert_null(pk_site_series_url(NULL, 1, 0));
	}
}

/*
 * A store with a hostile patch: its subject, author, Message-ID, boot
 * line and file name are markup or try to be, and each is text on every
 * page; the file's page name stays in files/; data.js holds no <.
 */
static void test_site_escapes(void **state)
{
	g_autofree char *path = db_path("site-escapes.db");
	g_autofree char *dir = g_build_filename(tmpdir, "site-escapes", NULL);
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
	struct pk_site_config config = { .source_url = "https://git.example.org/tree/{path}?id={commit}#n{line}",
					 .archives = g_hash_table_new(g_str_hash, g_str_equal) };
	struct pk_site_opts opts = { .dir = dir, .config = &config };
	struct pk_site_stats st;
	g_autofree char *index = NULL, *data = NULL, *page = NULL, *fpage = NULL, *file_html = NULL;
	g_autofree char *series = NULL, *listing = NULL;
	gint64 source, hostile;

	g_hash_table_insert(config.archives, "lkml", "https://lore.kernel.org/lkml/");
	assert_int_equal(pk_store_add_source(s, &source, "mbox", "lkml", NULL, &err), 0);
	add_reviewed(s, "[PATCH] serial: reword", "Jane Doe <jane@example.org>", "plain@example.org",
		     "drivers/tty/serial/8250/8250_port.c", "serial: new words here", source);
	hostile = add_reviewed(s, hostile_subject, "\"<img src=x onerror=alert(4)>\" <evil@example.org>",
			       "\"><script>alert(5)</script>@example.org", "../../a/b\"><svg onload=alert(6)>.c",
			       "serial: <script>alert(7)</script></td> new words", source);
	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	assert_int_equal(st.series, 2);
	assert_int_equal(st.series_written, 2);
	assert_int_equal(st.files, 2);
	assert_int_equal(st.failed, 0);

	/* nothing was written outside the site, and every page name is one the site makes */
	list_files(files, dir, "");
	for (guint i = 0; i < files->len; i++) {
		const char *f = files->pdata[i];

		assert_null(strstr(f, ".."));
		assert_true(g_str_has_prefix(f, "series/") || g_str_has_prefix(f, "files/") ||
			    g_str_has_prefix(f, ".printkbot-site") || !strchr(f, '/'));
	}
	fpage = pk_site_file_page("../../a/b\"><svg onload=alert(6)>.c");
	assert_true(g_str_has_prefix(fpage, "files/_/"));

	index = site_file(dir, "index.html");
	data = site_file(dir, "data.js");
	series = g_strdup_printf("series/p%" G_GINT64_FORMAT ".html", hostile);
	page = site_file(dir, series);
	file_html = site_file(dir, fpage);
	listing = site_file(dir, "files.html");
	for (const char *const *p = (const char *const[]){ index, page, file_html, listing, NULL }; *p; p++) {
		/* the only elements are the templates': no script but site.js and data.js, no img, svg, handler */
		const char *at = *p;
		unsigned scripts = 0;

		while ((at = strstr(at, "<script"))) {
			assert_true(g_str_has_prefix(at, "<script src=\"data.js\"></script>") ||
				    g_str_has_prefix(at, "<script src=\"site.js\"></script>"));
			scripts++;
			at++;
		}
		assert_true(scripts == 0 || *p == index);
		assert_null(strstr(*p, "<img"));
		assert_null(strstr(*p, "<svg"));
		assert_null(strstr(*p, "href=\"javascript:"));
		assert_null(strstr(*p, "\"onmouseover"));   /* a quote that ended an attribute */
	}
	/* the filters: "any" the only empty choice, none blank; a way back to no filter */
	assert_non_null(strstr(index, "<option value=\"\">any</option>"));
	assert_null(strstr(strstr(index, "<option value=\"\">any</option>") + 1, "<option value=\"\""));
	assert_non_null(strstr(index, "<button id=\"f-clear\" type=\"button\">clear filters</button>"));
	assert_non_null(strstr(index, "&lt;script&gt;alert(1)&lt;/script&gt; &quot;onmouseover=alert(2) x=&quot; "
				      "&lt;a href=&quot;javascript:alert(3)&quot;&gt;j&lt;/a&gt;"));
	assert_non_null(strstr(page, "<h1>[PATCH] tty: &lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(page, "&lt;img src=x onerror=alert(4)&gt;"));
	/* the boot line: escaped inside its mark */
	assert_non_null(strstr(page, "<ins>&lt;script&gt;alert(7)&lt;/script&gt;&lt;/td&gt;</ins>"));
	/* the archive link: the Message-ID escaped for the URL, the URL for the attribute */
	assert_non_null(strstr(page, "<a href=\"https://lore.kernel.org/lkml/%22%3E%3Cscript%3Ealert(5)%3C%2Fscript%3E"
				     "@example.org/\">"));
	if (g_getenv("PK_TEST_SHOW"))
		fputs(page, stderr);
	/* the source link: the hostile path escaped for the URL, shown as text */
	assert_non_null(strstr(page, "<a href=\"https://git.example.org/tree/../../a/b%22%3E%3Csvg%20onload%3Dalert%286%29%3E.c"
				     "?id=514c34e2f1d7a9b0c3e4f5a6b7c8d9e0f1a2b3c4#n11\">"));
	assert_non_null(strstr(file_html, "<code>../../a/b&quot;&gt;&lt;svg onload=alert(6)&gt;.c</code>"));
	assert_null(strchr(data + strlen("// written by"), '<'));
	assert_non_null(strstr(data, "\\u003cscript>alert(1)\\u003c/script>"));
	assert_non_null(strstr(data, "\"drivers/tty/serial/8250/8250_port.c\",\"files/drivers/tty/serial/8250/8250_port.c.html\""));
	g_hash_table_unref(config.archives);
	rm_rf(dir);
}

static gint64 mtime_ns(const char *dir, const char *page)
{
	g_autofree char *path = g_build_filename(dir, page, NULL);
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (gint64)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

/*
 * A second run writes nothing; a new review of one series renders that
 * series and the file pages it names, and leaves the other pages alone
 * (same mtime); --full renders all and writes none; a page removed by
 * hand is made again; a state file that is not ours is no harm.
 */
static void test_site_incremental(void **state)
{
	g_autofree char *path = db_path("site-incr.db");
	g_autofree char *dir = g_build_filename(tmpdir, "site-incr", NULL);
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	struct pk_site_opts opts = { .dir = dir };
	struct pk_site_stats st;
	g_autofree char *p1 = NULL, *p2 = NULL, *p3 = NULL, *p1_path = NULL, *state_path = NULL;
	gint64 a, b, c, t_a, t_b, t_file_b;

	a = add_reviewed(s, "[PATCH] a", "A <a@example.org>", "a@example.org", "a/a.c", "serial: a", 0);
	b = add_reviewed(s, "[PATCH] b", "B <b@example.org>", "b@example.org", "b/b.c", "serial: b", 0);
	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	assert_int_equal(st.series_written, 2);
	assert_int_equal(st.files_written, 2);
	assert_int_equal(st.other_written, 5);
	p1 = g_strdup_printf("series/p%" G_GINT64_FORMAT ".html", a);
	p2 = g_strdup_printf("series/p%" G_GINT64_FORMAT ".html", b);
	t_a = mtime_ns(dir, p1);
	t_b = mtime_ns(dir, p2);
	t_file_b = mtime_ns(dir, "files/b/b.c.html");

	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	assert_int_equal(st.series_rendered + st.series_written + st.files_rendered + st.files_written +
			 st.other_written + st.removed, 0);

	/* a new patch naming a/a.c: its own page, a/a.c's page, the index and its data */
	c = add_reviewed(s, "[PATCH] c", "C <c@example.org>", "c@example.org", "a/a.c", "serial: c", 0);
	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	assert_int_equal(st.series, 3);
	assert_int_equal(st.series_rendered, 1);
	assert_int_equal(st.series_written, 1);
	assert_int_equal(st.files_rendered, 1);
	assert_int_equal(st.files_written, 1);
	assert_int_equal(st.other_written, 3);   /* index.html, data.js, files.html (a/a.c's count) */
	assert_true(mtime_ns(dir, p1) == t_a && mtime_ns(dir, p2) == t_b &&
		    mtime_ns(dir, "files/b/b.c.html") == t_file_b);
	p3 = g_strdup_printf("series/p%" G_GINT64_FORMAT ".html", c);
	g_free(site_file(dir, p3));

	opts.full = true;
	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	assert_int_equal(st.series_rendered, 3);
	assert_int_equal(st.files_rendered, 2);
	assert_int_equal(st.series_written + st.files_written + st.other_written, 0);
	opts.full = false;

	p1_path = g_build_filename(dir, p1, NULL);
	assert_int_equal(g_unlink(p1_path), 0);
	state_path = g_build_filename(dir, ".printkbot-site", NULL);
	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	assert_int_equal(st.series_rendered, 1);
	assert_true(g_file_test(p1_path, G_FILE_TEST_IS_REGULAR));

	assert_true(g_file_set_contents(state_path, "not ours\nseries/../../x\tzz\n", -1, NULL));
	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	assert_int_equal(st.series_rendered, 3);
	assert_int_equal(st.series_written, 0);
	rm_rf(dir);
}

/* What outside/NAME holds, or "(gone)". */
static char *outside_text(const char *outside, const char *name)
{
	g_autofree char *path = g_build_filename(outside, name, NULL);
	char *text = NULL;

	return g_file_get_contents(path, &text, NULL, NULL) ? text : g_strdup("(gone)");
}

static void plant_link(const char *dir, const char *name, const char *target)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);

	assert_int_equal(symlink(target, path), 0);
}

/*
 * Links planted in DIR never take the site outside it.  Two page names
 * and the state file as links to a file outside:
 * replaced by the pages, the files outside unchanged.  A stale page
 * listed in the state under a subdirectory that is a link outside: not
 * removed.  series/ a link to a directory outside: the run fails naming
 * it, and nothing is written there.
 */
/*
 * What a review compared, whole, as the kernel test robot links it: the
 * two boot logs and the patched kernel's .config, each a page of its
 * own written once; the index names the base by the version its .config
 * says.  A build from before builds kept their .config: no link, the
 * commit on the index.
 */
static gint64 add_build_with(struct pk_store *s, const char *commit, char *config)
{
	struct pk_build_result b = { .ok = true, .seconds = 1, .config = config };
	g_autoptr(GError) err = NULL;
	gint64 id = 0;

	assert_int_equal(pk_store_add_build(s, &id, commit, commit, "427fcf303d87", "x86_64", &b, &err), 0);
	return id;
}

static gint64 add_boot_with(struct pk_store *s, gint64 build, char *console)
{
	struct pk_boot_result r = { .status = PK_BOOT_OK, .seconds = 1, .accel = "tcg", .console = console };
	g_autoptr(GError) err = NULL;
	gint64 id = 0;

	assert_int_equal(pk_store_add_boot(s, &id, build, &r, &err), 0);
	return id;
}

static void test_site_texts(void **state)
{
	static char config[] = "#\n# Automatically generated file; DO NOT EDIT.\n"
			       "# Linux/x86 6.12.118 Kernel Configuration\n#\nCONFIG_PRINTK=y\n";
	static char before_console[] = "[    0.000000] Linux version 6.12.118 <b>before</b>\n";
	static char after_console[] = "[    0.000000] Linux version 6.12.118 after\n";
	g_autofree char *path = db_path("site-texts.db");
	g_autofree char *dir = g_build_filename(tmpdir, "site-texts", NULL);
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	struct pk_site_opts opts = { .dir = dir };
	struct pk_site_stats st;
	struct pk_store_test t = { 0 };
	g_autofree char *page = NULL, *index = NULL, *series = NULL, *kept = NULL, *text = NULL;
	g_autofree char *boot_page = NULL, *config_page = NULL, *old_page = NULL;
	gint64 a, old, old_build, after_boot, after_build;

	t.before_build = add_build_with(s, "1111111111111111111111111111111111111111", config);
	t.after_build = add_build_with(s, "2222222222222222222222222222222222222222", config);
	t.before_boot = add_boot_with(s, t.before_build, before_console);
	t.after_boot = add_boot_with(s, t.after_build, after_console);
	after_boot = t.after_boot;
	after_build = t.after_build;
	a = add_reviewed_on(s, "[PATCH] a", "A <a@example.org>", "a@example.org", "a/a.c", "serial: a", 0, &t);
	/* an older build kept no .config */
	old_build = add_build_with(s, "3333333333333333333333333333333333333333", NULL);
	assert_int_equal(pk_store_build_config(s, old_build, &kept, &err), 0);
	assert_int_equal(pk_store_build_config(s, after_build, &kept, &err), 1);
	assert_string_equal(kept, config);
	t = (struct pk_store_test){ .before_build = old_build, .after_build = old_build };
	old = add_reviewed_on(s, "[PATCH] old", "O <o@example.org>", "o@example.org", "o/o.c", "serial: o", 0, &t);

	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	boot_page = g_strdup_printf("boot/%" G_GINT64_FORMAT ".txt", after_boot);
	page = g_strdup_printf("series/p%" G_GINT64_FORMAT ".html", a);
	series = site_file(dir, page);
	assert_non_null(strstr(series, "the boot log before</a>"));
	assert_non_null(strstr(series, "the boot log after</a>"));
	config_page = g_strdup_printf("href=\"../config/%" G_GINT64_FORMAT ".txt\"", after_build);
	assert_non_null(strstr(series, config_page));
	text = site_file(dir, boot_page);
	assert_string_equal(text, after_console);   /* the console as it was, whole */
	index = site_file(dir, "index.html");
	assert_non_null(strstr(index, "<code>6.12.118</code>"));
	assert_non_null(strstr(index, "<code>333333333333</code>"));   /* no .config: the commit */
	old_page = g_strdup_printf("series/p%" G_GINT64_FORMAT ".html", old);
	g_free(series);
	series = site_file(dir, old_page);
	assert_null(strstr(series, ".config</a>"));

	/* written once: a run after it writes nothing */
	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	assert_int_equal(st.series_written + st.files_written + st.other_written + st.removed, 0);
	rm_rf(dir);
}

static void test_site_symlinks(void **state)
{
	g_autofree char *path = db_path("site-links.db");
	g_autofree char *dir = g_build_filename(tmpdir, "site-links", NULL);
	g_autofree char *outside = g_build_filename(tmpdir, "outside", NULL);
	g_autofree char *victim = g_build_filename(outside, "victim.html", NULL);
	g_autofree char *sdir = g_build_filename(outside, "sdir", NULL);
	g_autofree char *xdir = g_build_filename(outside, "xdir", NULL);
	g_autofree char *gone = g_build_filename(xdir, "gone.html", NULL);
	g_autofree char *state_path = g_build_filename(dir, ".printkbot-site", NULL);
	g_autofree char *series = g_build_filename(dir, "series", NULL);
	g_autofree char *files_x = g_build_filename(dir, "files", "x", NULL);
	g_autofree char *state_text = NULL, *more = NULL;
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	struct pk_site_opts opts = { .dir = dir };
	struct pk_site_stats st;
	g_autoptr(GDir) empty = NULL;
	struct stat lst;

	add_reviewed(s, "[PATCH] a", "A <a@example.org>", "a@example.org", "a/a.c", "serial: a", 0);
	assert_int_equal(g_mkdir_with_parents(sdir, 0755), 0);
	assert_int_equal(g_mkdir_with_parents(xdir, 0755), 0);
	assert_int_equal(g_mkdir_with_parents(dir, 0755), 0);
	assert_true(g_file_set_contents(victim, "precious", -1, NULL));
	assert_true(g_file_set_contents(gone, "precious too", -1, NULL));
	plant_link(dir, "index.html", victim);
	plant_link(dir, "data.js", victim);
	plant_link(dir, ".printkbot-site", victim);

	/* 1: page names and the state as links: replaced, never followed */
	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	state_text = outside_text(outside, "victim.html");
	assert_string_equal(state_text, "precious");
	for (const char *const *n = (const char *const[]){ "index.html", "data.js", ".printkbot-site", NULL }; *n; n++) {
		g_autofree char *p = g_build_filename(dir, *n, NULL);

		assert_int_equal(lstat(p, &lst), 0);
		assert_true(S_ISREG(lst.st_mode));
	}

	/* 2: a stale page under a subdirectory that is a link outside: left alone */
	assert_int_equal(symlink(xdir, files_x), 0);
	g_clear_pointer(&state_text, g_free);
	assert_true(g_file_get_contents(state_path, &state_text, NULL, NULL));
	more = g_strconcat(state_text, "files/x/gone.html\tffff\n", NULL);
	assert_true(g_file_set_contents(state_path, more, -1, NULL));
	assert_int_equal(pk_site_write(s, &opts, &st, &err), 0);
	g_clear_pointer(&state_text, g_free);
	state_text = outside_text(xdir, "gone.html");
	assert_string_equal(state_text, "precious too");

	/* 3: series/ a link to a directory outside: refused, nothing written there */
	rm_rf(series);
	assert_int_equal(symlink(sdir, series), 0);
	opts.full = true;
	assert_int_equal(pk_site_write(s, &opts, &st, &err), -1);
	print_message("%s\n", err->message);
	assert_non_null(strstr(err->message, "/series is a symbolic link or not a directory"));
	empty = g_dir_open(sdir, 0, NULL);
	assert_non_null(empty);
	assert_null(g_dir_read_name(empty));
	unlink(series);
	unlink(files_x);
	rm_rf(dir);
	rm_rf(outside);
}

/* report --site through the command: its line, and its usage errors. */
static int cmd_report(int argc, char **argv) { return pk_command_main(pk_command_find("report"), argc, argv); }

static void test_command(void **state)
{
	g_autofree char *path = db_path("site-cmd.db");
	g_autofree char *dir = g_build_filename(tmpdir, "site-cmd", NULL);
	g_autoptr(pk_store) s = open_ok(path);

	add_reviewed(s, "[PATCH] a", "A <a@example.org>", "a@example.org", "a/a.c", "serial: a", 0);
	pk_store_close(g_steal_pointer(&s));
	g_unsetenv("PRINTKBOT_CONFIG");   /* no config: no [site], no archives */
	{
		char *argv[] = { "report", "--db", path, "--site", dir, NULL };

		assert_int_equal(cmd_report(5, argv), 0);
	}
	{
		char *argv[] = { "report", "--db", path, "--site", dir, "1", NULL };

		assert_int_equal(cmd_report(6, argv), 2);
	}
	{
		char *argv[] = { "report", "--db", path, "--full", "1", NULL };

		assert_int_equal(cmd_report(5, argv), 2);
	}
	g_free(site_file(dir, "index.html"));
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_names),
		cmocka_unit_test(test_site_escapes),
		cmocka_unit_test(test_site_incremental),
		cmocka_unit_test(test_site_texts),
		cmocka_unit_test(test_site_symlinks),
		cmocka_unit_test(test_command),
	};
	const struct CMUnitTest pg_tests[] = {
		cmocka_unit_test(test_site_escapes),
		cmocka_unit_test(test_site_incremental),
		cmocka_unit_test(test_site_texts),
	};

	return run_both(tests, pg_tests, setup, teardown);
}
