/* test-kmsg.c - the capture stream, /dev/kmsg record and printk index parsers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/kmsg.h"

/* Build a capture stream from records and index text, as qemu/init.c frames it. */
static GString *stream(const char *const *records, const char *index, gboolean trailer)
{
	GString *s = g_string_new("firmware noise\r\n@PKB 1\n");
	unsigned n = 0;

	for (const char *const *r = records; *r; r++, n++)
		g_string_append_printf(s, "@K %zu\n%s\n", strlen(*r), *r);
	if (index)
		g_string_append_printf(s, "@I %zu\n%s\n", strlen(index), index);
	if (trailer)
		g_string_append_printf(s, "@E %u %zu\n", n, index ? strlen(index) : 0);
	return s;
}

struct record_case {
	const char *raw;
	int level, facility;
	guint64 seq, ts;
	gboolean cont;
	const char *caller, *text, *dict0;
};

static const struct record_case record_cases[] = {
	{ "5,0,0,-,caller=T0;Linux version 6.12.118\n", 5, 0, 0, 0, FALSE, "T0",
	  "Linux version 6.12.118", NULL },
	{ "6,17,12345,-;rcu: Hierarchical RCU implementation.\n", 6, 0, 17, 12345, FALSE, NULL,
	  "rcu: Hierarchical RCU implementation.", NULL },
	/* facility 1 (user), level 4: prio 12 */
	{ "12,3,99,c,caller=C1; done\n", 4, 1, 3, 99, TRUE, "C1", " done", NULL },
	/* escaped bytes: tab, backslash, a byte >= 0x7f */
	{ "6,4,5,-;a\\x09b\\x5cc\\xc3\\xa9\n", 6, 0, 4, 5, FALSE, NULL, "a\tb\\c\xc3\xa9", NULL },
	/* dictionary lines */
	{ "3,5,6,-;serial8250: too much work\n SUBSYSTEM=platform\n DEVICE=+platform:serial8250\n",
	  3, 0, 5, 6, FALSE, NULL, "serial8250: too much work", "SUBSYSTEM=platform" },
	/* an escape cut at the end stays literal */
	{ "6,6,7,-;cut \\x4\n", 6, 0, 6, 7, FALSE, NULL, "cut \\x4", NULL },
};

static void test_record_table(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(record_cases); i++) {
		const struct record_case *c = &record_cases[i];
		char *why = NULL;
		struct pk_record *r = pk_record_parse(c->raw, strlen(c->raw), &why);

		assert_non_null(r);
		assert_int_equal(r->level, c->level);
		assert_int_equal(r->facility, c->facility);
		assert_int_equal(r->seq, c->seq);
		assert_int_equal(r->ts_usec, c->ts);
		assert_int_equal(r->cont, c->cont);
		if (c->caller)
			assert_string_equal(r->caller, c->caller);
		else
			assert_null(r->caller);
		assert_string_equal(r->text, c->text);
		if (c->dict0) {
			assert_int_equal(r->dict->len, 2);
			assert_string_equal(r->dict->pdata[0], c->dict0);
		} else {
			assert_int_equal(r->dict->len, 0);
		}
		pk_record_free(r);
	}
}

static void test_record_malformed(void **state)
{
	static const char *const bad[] = { "no semicolon here\n", "x,1,2,-;text\n", "6,1;short\n",
					   "6,1,2;three fields\n", "99999999999999999999,1,2,-;t\n" };

	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		char *why = NULL;

		assert_null(pk_record_parse(bad[i], strlen(bad[i]), &why));
		assert_non_null(why);
		g_free(why);
	}
}

static const char index_text[] =
	"# <level/flags> filename:line function \"format\"\n"
	"<5> init/main.c:928 start_kernel \"Kernel command line: %s\\n\"\n"
	"<c> kernel/printk/printk.c:100 foo \" done\\n\"\n"
	"<4,c> lib/x.c:7 bar \"quote \\\" back\\\\slash tab\\t oct\\001\"\n"
	"<6> kernel/rcu/tree.c:5000 rcu_init \"rcu: Hierarchical RCU implementation.\\n\"\n"
	"garbage line\n"
	"<-1> mm/percpu.c:3000 pcpu_dump_alloc_info \"%spcpu-alloc: \"\n"
	"<-2> bad/level.c:1 f \"x\"\n";

static void test_index(void **state)
{
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	g_autoptr(GString) problems = g_string_new(NULL);
	struct pk_index_entry *e;

	pk_index_parse(out, index_text, strlen(index_text), problems);
	assert_int_equal(out->len, 5);
	e = out->pdata[0];
	assert_int_equal(e->level, 5);
	assert_false(e->cont);
	assert_string_equal(e->file, "init/main.c");
	assert_int_equal(e->line, 928);
	assert_string_equal(e->func, "start_kernel");
	assert_string_equal(e->format, "Kernel command line: %s\n");
	e = out->pdata[1];
	assert_int_equal(e->level, -1);
	assert_true(e->cont);
	e = out->pdata[2];
	assert_int_equal(e->level, 4);
	assert_true(e->cont);
	assert_string_equal(e->format, "quote \" back\\slash tab\t oct\001");
	e = out->pdata[3];
	assert_string_equal(e->format, "rcu: Hierarchical RCU implementation.\n");
	e = out->pdata[4];   /* printk() without a KERN_ level */
	assert_int_equal(e->level, -1);
	assert_false(e->cont);
	assert_string_equal(e->func, "pcpu_dump_alloc_info");
	assert_non_null(strstr(problems->str, "line 6"));
	assert_non_null(strstr(problems->str, "line 8"));
}

static void test_capture_complete(void **state)
{
	static const char *const recs[] = { "5,0,0,-;Linux version 6.12\n", "6,1,10,-;two\n", NULL };
	g_autoptr(GString) s = stream(recs, index_text, TRUE);
	g_autoptr(pk_capture) cap = pk_capture_parse(s->str, s->len);

	assert_true(cap->complete);
	assert_int_equal(cap->records->len, 2);
	assert_int_equal(cap->index->len, 5);
	assert_string_equal(((struct pk_record *)cap->records->pdata[1])->text, "two");
}

/* A record whose text holds "@K" and newlines-as-escapes must not confuse framing. */
static void test_capture_payload_lookalike(void **state)
{
	static const char *const recs[] = { "6,0,0,-;@E 0 0\n@K 3\n", "6,1,1,-;after\n", NULL };
	g_autoptr(GString) s = stream(recs, NULL, TRUE);
	g_autoptr(pk_capture) cap = pk_capture_parse(s->str, s->len);

	assert_true(cap->complete);
	assert_int_equal(cap->records->len, 2);
	assert_string_equal(((struct pk_record *)cap->records->pdata[1])->text, "after");
}

static void test_capture_truncated(void **state)
{
	static const char *const recs[] = { "5,0,0,-;one\n", "6,1,1,-;two is long\n", NULL };
	g_autoptr(GString) s = stream(recs, NULL, TRUE);

	/* cut every way: each prefix parses, never more records than were whole */
	for (size_t cut = 0; cut < s->len; cut++) {
		g_autoptr(pk_capture) cap = pk_capture_parse(s->str, cut);

		assert_false(cap->complete);
		assert_true(cap->records->len <= 2);
	}
}

static void test_capture_missing_header(void **state)
{
	g_autoptr(pk_capture) cap = pk_capture_parse("garbage", 7);

	assert_false(cap->complete);
	assert_int_equal(cap->records->len, 0);
	assert_non_null(strstr(cap->problems->str, "never ran"));
}

static void test_capture_count_mismatch(void **state)
{
	const char *s = "@PKB 1\n@K 6\n6,0,0,\n@E 2 0\n";
	g_autoptr(pk_capture) cap = pk_capture_parse(s, strlen(s));

	assert_false(cap->complete);
	assert_int_equal(cap->records->len, 0);
	assert_non_null(strstr(cap->problems->str, "record at byte"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_table),
		cmocka_unit_test(test_record_malformed),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_capture_complete),
		cmocka_unit_test(test_capture_payload_lookalike),
		cmocka_unit_test(test_capture_truncated),
		cmocka_unit_test(test_capture_missing_header),
		cmocka_unit_test(test_capture_count_mismatch),
	};

	return cmocka_run_group_tests_name("kmsg", tests, NULL, NULL);
}
