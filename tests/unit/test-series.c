/*
 * test-series.c - subject tags, the loop guard and series grouping, on
 * made-up cases and on the 1,500 real mails of linux-serial (read from
 * ../shared/corpus, never copied here).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "intake/mail.h"
#include "intake/series.h"

#define MBOX "../shared/corpus/linux-serial-1500.mbox.xz"

struct subject_case {
	const char *subject;
	int version, number, total;
	bool patch, reply;
	const char *title;
};

static const struct subject_case subject_cases[] = {
	{ "[PATCH] serial: 8250: fix", 1, 1, 1, true, false, "serial: 8250: fix" },
	{ "[PATCH v2 3/4] rust: add basic serial device bus abstractions", 2, 3, 4, true, false,
	  "rust: add basic serial device bus abstractions" },
	{ "[PATCH v4 0/7] 8250 DW UART fixes", 4, 0, 7, true, false, "8250 dw uart fixes" },
	{ "Re: [PATCH v2 2/4] serdev: add private data", 2, 2, 4, true, true, "serdev: add private data" },
	{ "RE: AW: [PATCH] x", 1, 1, 1, true, true, "x" },
	{ "[RFC PATCH 3/7] drivers/tty: ratelimit", 1, 3, 7, true, false, "drivers/tty: ratelimit" },
	{ "[PATCHv3 1/2] tty: n_gsm: fix", 3, 1, 2, true, false, "tty: n_gsm: fix" },
	{ "[PATCH RESEND v2] tty: vt: fix", 2, 1, 1, true, false, "tty: vt: fix" },
	{ "[PATCH 6.1.y 1/2] serial: backport", 1, 1, 2, true, false, "serial: backport" },
	{ "serial: no tag at all", 1, 1, 1, false, false, "serial: no tag at all" },
	{ "[PATCH 3/2] bad numbers", 1, 1, 1, true, false, "bad numbers" },
};

static void test_subjects(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(subject_cases); i++) {
		const struct subject_case *c = &subject_cases[i];
		struct pk_subject s;

		print_message("subject: %s\n", c->subject);
		pk_subject_parse(&s, c->subject);
		assert_int_equal(s.version, c->version);
		assert_int_equal(s.number, c->number);
		assert_int_equal(s.total, c->total);
		assert_int_equal(s.patch, c->patch);
		assert_int_equal(s.reply, c->reply);
		assert_string_equal(s.title, c->title);
		pk_subject_clear(&s);
	}
}

/* What `test` and the intake leave out of a series: its cover letter, even with a diff in it. */
static void test_cover_letter(void **state)
{
	static const struct {
		const char *subject;
		bool cover;
	} cases[] = {
		{ "[PATCH v1 RESEND 0/7] serial: imx: work-around for hardware RX flood", true },
		{ "[PATCH 0/2] a", true },
		{ "[RFC PATCH v3 00/13] Add RZ/G3E RSCI support", true },
		{ "[PATCH 1/7] serial: imx: factor-out common code", false },
		{ "[PATCH] x: y", false },
		{ "Re: [PATCH 0/7] serial: imx: work-around", false },   /* a reply to it */
		{ "[GIT PULL 0/2] tty", false },
		{ "[PATCH 0/0] nothing", false },                        /* malformed */
		{ "serial: imx: no tag 0/7", false },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct pk_subject s;

		pk_subject_parse(&s, cases[i].subject);
		if (pk_subject_is_cover(&s) != cases[i].cover)
			fail_msg("%s: cover %d", cases[i].subject, !cases[i].cover);
		pk_subject_clear(&s);
	}
}

/* The loop guard wins over everything: a perfect patch from the bot is still skipped. */
static void test_loop_guard(void **state)
{
	const char *bots[] = { "printkbot@example.org", NULL };
	struct pk_series_guard guard = { bots };
	struct pk_series_mail m = { .message_id = "a@b", .subject = "[PATCH] x: y",
				    .from_addr = "printkbot@example.org", .has_patch = true };
	const char *why = NULL;

	assert_int_equal(pk_series_classify(&m, &guard, &why), PK_SERIES_SKIP);
	assert_string_equal(why, "our own mail (loop guard)");
	m.from_addr = "PrintkBot@Example.ORG";
	assert_int_equal(pk_series_classify(&m, &guard, &why), PK_SERIES_SKIP);
	m.from_addr = "jane@example.org";
	assert_int_equal(pk_series_classify(&m, &guard, &why), PK_SERIES_PATCH);
	assert_null(why);
	m.bot_header = true;   /* relayed by a list that rewrites From: X-Printkbot still says so */
	assert_int_equal(pk_series_classify(&m, &guard, &why), PK_SERIES_SKIP);
	assert_string_equal(why, "our own mail (loop guard)");
	m.bot_header = false;
	m.subject = "Re: [PATCH] x: y";
	assert_int_equal(pk_series_classify(&m, &guard, &why), PK_SERIES_SKIP);
	assert_string_equal(why, "a reply");
	m.subject = "[PATCH] x: y";
	m.has_patch = false;
	assert_int_equal(pk_series_classify(&m, &guard, &why), PK_SERIES_SKIP);
	assert_string_equal(why, "no patch in it");
	m.subject = "[PATCH 0/2] x: the cover";
	assert_int_equal(pk_series_classify(&m, &guard, &why), PK_SERIES_COVER);
}

/* An n/m no series has is said to be one, not tested as a lone patch 1/1. */
static void test_malformed_numbers(void **state)
{
	static const struct { const char *subject; enum pk_series_kind kind; bool malformed; } cases[] = {
		{ "[PATCH 2/10000] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH 3/2] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH 0/0] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH v2 1/0] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH 99999999999999999999/3] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH 9999/9999] x: y", PK_SERIES_PATCH, false },
		{ "[PATCH 1/1] x: y", PK_SERIES_PATCH, false },
		{ "[PATCH 0/1] x: y", PK_SERIES_SKIP, false },   /* a cover of one patch: nothing to test */
		{ "[PATCH 2/3] x: y", PK_SERIES_PATCH, false },
		/* signed numbers are no series (not a lone 1/1), nor are versions out of range (not v1) */
		{ "[PATCH -1/-5] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH -1/5] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH 1/-5] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH +1/5] x: y", PK_SERIES_PATCH, false },
		{ "[PATCH v0 1/2] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH v-3 1/2] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH v10000 1/2] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH v99999999999999999999 1/2] x: y", PK_SERIES_SKIP, true },
		{ "[PATCH v1000 1/2] x: y", PK_SERIES_PATCH, false },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct pk_series_mail m = { .message_id = "a@b", .subject = (char *)cases[i].subject,
					    .from_addr = "jane@example.org", .has_patch = true };
		const char *why = NULL;

		assert_int_equal(pk_series_classify(&m, NULL, &why), cases[i].kind);
		print_message("%s: %s\n", cases[i].subject, why ? why : "a patch");
		assert_int_equal(why && strstr(why, "malformed series number"), cases[i].malformed);
	}
}

/* A version is read as written, not as v1 when it has four digits. */
static void test_version_numbers(void **state)
{
	static const struct { const char *subject; int version, number, total; } cases[] = {
		{ "[PATCH v1000 2/3] x: y", 1000, 2, 3 },
		{ "[PATCH v9999] x: y", 9999, 1, 1 },
		{ "[PATCHv12 1/2] x: y", 12, 1, 2 },
		{ "[PATCH v2-fixed 1/2] x: y", 1, 1, 2 },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct pk_subject s;

		pk_subject_parse(&s, cases[i].subject);
		assert_false(s.malformed);
		assert_int_equal(s.version, cases[i].version);
		assert_int_equal(s.number, cases[i].number);
		assert_int_equal(s.total, cases[i].total);
		pk_subject_clear(&s);
	}
}

/* Made-up threads: shallow (all under the cover), chained, no cover, two versions. */
static void test_grouping(void **state)
{
	const char *refs_cover[] = { "c@x", NULL };
	const char *refs_chain2[] = { "p1@y", NULL };
	const char *refs_chain3[] = { "p1@y", "p2@y", NULL };
	struct pk_series_mail mails[] = {
		{ 1, "c@x", NULL, NULL, "[PATCH v2 0/2] foo: the series", "jane@x", .has_patch = false, .received = 10 },
		{ 2, "p2@x", "c@x", refs_cover, "[PATCH v2 2/2] foo: two", "jane@x", .has_patch = true, .received = 12 },
		{ 3, "p1@x", "c@x", refs_cover, "[PATCH v2 1/2] foo: one", "jane@x", .has_patch = true, .received = 11 },
		{ 4, "p1@y", NULL, NULL, "[PATCH 1/3] bar: one", "joe@y", .has_patch = true, .received = 20 },
		{ 5, "p2@y", "p1@y", refs_chain2, "[PATCH 2/3] bar: two", "joe@y", .has_patch = true, .received = 21 },
		{ 6, "p3@y", "p2@y", refs_chain3, "[PATCH 3/3] bar: three", "joe@y", .has_patch = true, .received = 22 },
		{ 7, "s@z", "c@x", refs_cover, "[PATCH] baz: alone", "jane@x", .has_patch = true, .received = 30 },
		{ 8, "q2@x", "c@x", refs_cover, "[PATCH v2 2/2] foo: two (resent)", "jane@x", .has_patch = true, .received = 13 },
		{ 9, "o1@x", NULL, NULL, "[PATCH 1/2] foo: the series", "jane@x", .has_patch = true, .received = 5 },
	};
	g_autoptr(GPtrArray) in = g_ptr_array_new();
	g_autoptr(GPtrArray) groups = NULL;
	struct pk_series *s;
	const char *why;

	for (size_t i = 0; i < G_N_ELEMENTS(mails); i++) {
		assert_int_not_equal(pk_series_classify(&mails[i], NULL, &why), PK_SERIES_SKIP);
		g_ptr_array_add(in, &mails[i]);
	}
	pk_series_group(&groups, in);
	assert_int_equal(groups->len, 4);
	s = groups->pdata[0];     /* the v2 series: cover, 1, 2 (the resent 2/2 left out) */
	assert_non_null(s->cover);
	assert_int_equal(s->cover->id, 1);
	assert_int_equal(s->patches->len, 2);
	assert_int_equal(((struct pk_series_mail *)s->patches->pdata[0])->id, 3);
	assert_int_equal(((struct pk_series_mail *)s->patches->pdata[1])->id, 2);
	assert_true(s->complete);
	assert_int_equal(s->version, 2);
	assert_string_equal(s->subject, "[PATCH v2 0/2] foo: the series");
	assert_int_equal(s->last_received, 13);
	s = groups->pdata[1];     /* the chained series without a cover */
	assert_null(s->cover);
	assert_int_equal(s->patches->len, 3);
	assert_true(s->complete);
	assert_string_equal(s->subject, "[PATCH 1/3] bar: one");
	s = groups->pdata[2];     /* a single patch in the v2 thread is a series by itself */
	assert_int_equal(s->patches->len, 1);
	assert_int_equal(((struct pk_series_mail *)s->patches->pdata[0])->id, 7);
	s = groups->pdata[3];     /* v1 of foo, incomplete: same key as v2, lower version */
	assert_false(s->complete);
	assert_int_equal(s->prefix, 1);
	assert_string_equal(s->key, ((struct pk_series *)groups->pdata[0])->key);
}

static char *read_corpus(size_t *len)
{
	const char *argv[] = { "xz", "-dc", MBOX, NULL };
	g_autoptr(GError) err = NULL;
	char *out = NULL;
	int status = 0;

	if (!g_file_test(MBOX, G_FILE_TEST_EXISTS))
		return NULL;
	assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
				 &out, NULL, &status, &err));
	assert_true(g_spawn_check_wait_status(status, NULL));
	*len = strlen(out);
	return out;
}

struct corpus {
	GPtrArray *mails;     /* struct pk_mail* */
	GPtrArray *sm;        /* struct pk_series_mail*, one per mail */
	GPtrArray *refs;      /* char** kept alive for sm */
};

static int corpus_setup(void **state)
{
	size_t len = 0;
	g_autofree char *buf = read_corpus(&len);
	g_autoptr(GPtrArray) raw = NULL;
	struct corpus *c;

	if (!buf) {
		*state = NULL;
		return 0;
	}
	c = g_new0(struct corpus, 1);
	c->mails = g_ptr_array_new_with_free_func((GDestroyNotify)pk_mail_free);
	c->sm = g_ptr_array_new_with_free_func(g_free);
	c->refs = g_ptr_array_new_with_free_func(g_free);
	pk_mail_split_mbox(&raw, NULL, buf, len);
	for (guint i = 0; i < raw->len; i++) {
		gsize n;
		const char *b = g_bytes_get_data(raw->pdata[i], &n);
		struct pk_mail *m = NULL;
		struct pk_series_mail *s = g_new0(struct pk_series_mail, 1);

		assert_int_equal(pk_mail_parse(&m, b, n, NULL), 0);
		g_ptr_array_add(c->mails, m);
		g_ptr_array_add(m->references, NULL);   /* a strv view for the series rules */
		s->id = i + 1;
		s->message_id = m->message_id;
		s->in_reply_to = m->in_reply_to;
		s->refs = (const char *const *)m->references->pdata;
		s->subject = m->subject;
		s->from_addr = m->from_addr;
		s->bot_header = m->bot_header;
		s->auto_submitted = m->auto_submitted;
		s->has_patch = m->patch && m->patch->files->len > 0;
		s->received = i;
		g_ptr_array_add(c->sm, s);
	}
	*state = c;
	return 0;
}

static int corpus_teardown(void **state)
{
	struct corpus *c = *state;

	if (!c)
		return 0;
	g_ptr_array_unref(c->sm);
	g_ptr_array_unref(c->mails);
	g_ptr_array_unref(c->refs);
	g_free(c);
	return 0;
}

static struct pk_series *series_with(GPtrArray *groups, const char *message_id)
{
	for (guint i = 0; i < groups->len; i++) {
		struct pk_series *s = groups->pdata[i];
		if (s->cover && !strcmp(s->cover->message_id, message_id))
			return s;
		for (guint j = 0; j < s->patches->len; j++)
			if (!strcmp(((struct pk_series_mail *)s->patches->pdata[j])->message_id, message_id))
				return s;
	}
	return NULL;
}

/*
 * The real list: what is accepted, what is skipped and why, and two real
 * series grouped as their threads say.
 */
static void test_corpus_grouping(void **state)
{
	struct corpus *c = *state;
	g_autoptr(GPtrArray) accepted = g_ptr_array_new();
	g_autoptr(GPtrArray) groups = NULL;
	g_autoptr(GHashTable) reasons = g_hash_table_new(g_str_hash, g_str_equal);
	unsigned patches = 0, covers = 0, with_diff = 0, complete = 0, multi = 0;
	struct pk_series *s;

	if (!c)
		skip();
	assert_int_equal(c->mails->len, 1500);
	for (guint i = 0; i < c->sm->len; i++) {
		struct pk_series_mail *m = c->sm->pdata[i];
		const char *why = NULL;
		enum pk_series_kind k = pk_series_classify(m, NULL, &why);

		with_diff += m->has_patch;
		if (k == PK_SERIES_SKIP) {
			g_hash_table_insert(reasons, (gpointer)why,
					    GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(reasons, why)) + 1));
			continue;
		}
		/* nothing that answers a patch is taken for one */
		assert_false(g_ascii_strncasecmp(m->subject, "re:", 3) == 0);
		assert_true(k == PK_SERIES_COVER || m->has_patch);
		patches += k == PK_SERIES_PATCH;
		covers += k == PK_SERIES_COVER;
		g_ptr_array_add(accepted, m);
	}
	print_message("corpus: %u with a diff, %u patches and %u cover letters accepted; "
		      "skipped: %u replies, %u without a patch\n", with_diff, patches, covers,
		      GPOINTER_TO_UINT(g_hash_table_lookup(reasons, "a reply")),
		      GPOINTER_TO_UINT(g_hash_table_lookup(reasons, "no patch in it")));
	assert_int_equal(with_diff, 545);
	assert_int_equal(patches, 536);
	assert_int_equal(covers, 63);
	pk_series_group(&groups, accepted);
	for (guint i = 0; i < groups->len; i++) {
		s = groups->pdata[i];
		complete += s->complete;
		multi += s->total > 1;
		/* one series is one version, one author */
		for (guint j = 0; j < s->patches->len; j++) {
			struct pk_series_mail *m = s->patches->pdata[j];
			assert_int_equal(m->version, s->version);
			assert_string_equal(m->from_addr, ((struct pk_series_mail *)s->patches->pdata[0])->from_addr);
		}
	}
	print_message("corpus: %u series, %u of several patches, %u complete\n", groups->len, multi, complete);
	assert_int_equal(groups->len, 168);
	assert_int_equal(multi, 73);

	/* [PATCH v2 0/4] rust: add basic serial device bus abstractions, and its 4 patches */
	for (guint i = 0; i < accepted->len; i++) {
		struct pk_series_mail *m = accepted->pdata[i];
		if (m->number == 0 && strstr(m->subject, "rust: add basic serial device bus abstractions") &&
		    m->version == 2) {
			s = series_with(groups, m->message_id);
			assert_non_null(s);
			assert_ptr_equal(s->cover, m);
			assert_int_equal(s->total, 4);
			assert_int_equal(s->patches->len, 4);
			assert_true(s->complete);
			for (guint j = 0; j < 4; j++)
				assert_int_equal(((struct pk_series_mail *)s->patches->pdata[j])->number, j + 1);
			assert_string_equal(s->subject, m->subject);
			multi = 0;   /* found */
		}
	}
	assert_int_equal(multi, 0);
}

/* The loop guard on real mail: any real patch, re-sent as the bot, is skipped. */
static void test_corpus_loop_guard(void **state)
{
	struct corpus *c = *state;
	unsigned tried = 0;

	if (!c)
		skip();
	for (guint i = 0; i < c->sm->len && tried < 50; i++) {
		struct pk_series_mail m = *(struct pk_series_mail *)c->sm->pdata[i];
		const char *bots[] = { m.from_addr, NULL };
		struct pk_series_guard guard = { bots };
		const char *why = NULL;

		if (!m.from_addr || pk_series_classify(&m, NULL, &why) != PK_SERIES_PATCH)
			continue;
		assert_int_equal(pk_series_classify(&m, &guard, &why), PK_SERIES_SKIP);
		assert_string_equal(why, "our own mail (loop guard)");
		m.bot_header = true;
		assert_int_equal(pk_series_classify(&m, NULL, &why), PK_SERIES_SKIP);
		tried++;
	}
	assert_int_equal(tried, 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_subjects),
		cmocka_unit_test(test_cover_letter),
		cmocka_unit_test(test_loop_guard),
		cmocka_unit_test(test_malformed_numbers),
		cmocka_unit_test(test_version_numbers),
		cmocka_unit_test(test_grouping),
		cmocka_unit_test_setup_teardown(test_corpus_grouping, corpus_setup, corpus_teardown),
		cmocka_unit_test_setup_teardown(test_corpus_loop_guard, corpus_setup, corpus_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
