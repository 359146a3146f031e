/* test-html.c - the HTML pieces built in C (report/html.h): escaping, word marks, checked links. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "report/html.h"

static void test_escape(void **state)
{
	g_autofree char *a = pk_html_escape("<a href=\"x\" onclick='y'>&amp;</a>");
	g_autofree char *b = pk_html_escape(NULL);

	assert_string_equal(a, "&lt;a href=&quot;x&quot; onclick=&apos;y&apos;&gt;&amp;amp;&lt;/a&gt;");
	assert_string_equal(b, "");
}

/* Each row: old, new, and the two sides as marked. */
static const struct {
	const char *old_text, *new_text, *old_html, *new_html;
} diffs[] = {
	{ "<6>serial: ttyS0 at I/O 0x3f8", "<4>serial: ttyS0 at I/O 0x3f8",
	  "&lt;<del>6</del>&gt;serial: ttyS0 at I/O 0x3f8", "&lt;<ins>4</ins>&gt;serial: ttyS0 at I/O 0x3f8" },
	{ "e820: available for PCI devices", "e820: free for PCI devices",
	  "e820: <del>available</del> for PCI devices", "e820: <ins>free</ins> for PCI devices" },
	{ "same", "same", "same", "same" },
	{ "", "added <b>", "", "<ins>added &lt;b&gt;</ins>" },
	{ NULL, "only after <script>", "", "only after &lt;script&gt;" },
	{ "only before", NULL, "only before", "" },
	{ "a \"q\" b", "a 'q' b", "a <del>&quot;</del>q<del>&quot;</del> b", "a <ins>&apos;</ins>q<ins>&apos;</ins> b" },
	{ "caf\xc3\xa9 ok", "caf\xc3\xa8 ok", "<del>caf\xc3\xa9</del> ok", "<ins>caf\xc3\xa8</ins> ok" },
};

static void test_word_diff(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(diffs); i++) {
		g_autofree char *o = NULL, *n = NULL;

		pk_html_word_diff(diffs[i].old_text, diffs[i].new_text, &o, &n);
		assert_string_equal(o, diffs[i].old_html);
		assert_string_equal(n, diffs[i].new_html);
	}
}

/* Two sides longer than the limit are marked whole, and nothing of them is lost. */
static void test_word_diff_long(void **state)
{
	g_autoptr(GString) a = g_string_new(NULL), b = g_string_new(NULL);
	g_autofree char *o = NULL, *n = NULL;

	for (int i = 0; i < PK_HTML_DIFF_MAX_WORDS; i++) {
		g_string_append_printf(a, "w%d ", i);
		g_string_append_printf(b, "w%d ", i + 1);
	}
	pk_html_word_diff(a->str, b->str, &o, &n);
	assert_true(g_str_has_prefix(o, "<del>w0 w1 "));
	assert_true(g_str_has_suffix(n, "</ins>"));
	assert_int_equal(strlen(o), a->len + strlen("<del></del>"));
}

static void test_links(void **state)
{
	static const struct { const char *url, *html; } links[] = {
		{ "https://lore.kernel.org/r/x@y/", "<a href=\"https://lore.kernel.org/r/x@y/\">t&amp;</a>" },
		{ "http://a.example/?a=1&b=2", "<a href=\"http://a.example/?a=1&amp;b=2\">t&amp;</a>" },
		{ "javascript:alert(1)", "t&amp;" },
		{ "JAVASCRIPT://x", "t&amp;" },
		{ "data:text/html,<script>", "t&amp;" },
		{ "https://x.example/\"onmouseover=alert(1)", "t&amp;" },
		{ "https://x.example/ a", "t&amp;" },
		{ "//x.example/", "t&amp;" },
		{ NULL, "t&amp;" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(links); i++) {
		g_autofree char *h = pk_html_link(links[i].url, "t&");

		assert_string_equal(h, links[i].html);
	}
}

static void test_source_url(void **state)
{
	const char *p = "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git/tree/{path}?h={base}#n{line}";
	g_autofree char *a = pk_html_source_url(p, "drivers/tty/serial/8250/8250_port.c", 1234, NULL, "v6.12.3");
	g_autofree char *b = pk_html_source_url(p, "../../etc/passwd\"><x>#?", 1, NULL, "v6.12");
	g_autofree char *c = pk_html_source_url(p, "x.c", 1, "abc", NULL);
	g_autofree char *d = pk_html_source_url("{path}", "javascript:alert(1)", 1, NULL, NULL);
	g_autofree char *e = pk_html_source_url("https://x.example/{path}/{nope}#L{line}", "a b.c", 0, NULL, NULL);

	assert_string_equal(a, "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git/tree/"
			    "drivers/tty/serial/8250/8250_port.c?h=v6.12.3#n1234");
	/* the path stays a path: its quote, <, # and ? escaped (a ../ is the web server's to refuse) */
	assert_string_equal(b, "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git/tree/"
			    "../../etc/passwd%22%3E%3Cx%3E%23%3F?h=v6.12#n1");
	assert_null(c);   /* {base} named, and no base */
	assert_null(d);   /* not http(s) */
	assert_string_equal(e, "https://x.example/a%20b.c/{nope}#L1");
	assert_null(pk_html_source_url(NULL, "x.c", 1, NULL, NULL));
	assert_null(pk_html_source_url(p, NULL, 1, NULL, "v"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_word_diff),
		cmocka_unit_test(test_word_diff_long),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_source_url),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
