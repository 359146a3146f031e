/*
 * test-mail.c - the reply's headers: threading and addressing built from
 * real patch mails of linux-serial (../shared/corpus, read in place), a
 * Message-ID that stays the same however often the reply is built, and
 * headers from hostile input that must not smuggle a line in.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "intake/mail.h"
#include "report/compose.h"
#include "report/reply.h"
#include "report/review.h"
#include "intake/series.h"

#define MBOX "../shared/corpus/linux-serial-1500.mbox.xz"

static const struct pk_reply_config reply_cfg = {
	.from = "printkbot <bot@printkbot.example>", .cc_original = true,
};

/*
 * The review model of a patch the bot read but did not build (review.h),
 * its verdict then set to the one a test wants: what templates/reply.txt
 * and review.txt read, without a kernel.
 */
static JsonNode *model_for(const struct pk_mail *m, const char *verdict)
{
	static const struct pk_review_info info = { "x.mbx", 1, 1, "printkbot-base", "cfg" };
	struct pk_test_result res = { .verdict = PK_VERDICT_NO_CHURN };
	JsonNode *model;

	res.scan = pk_scan(m->patch);
	res.before.commit = g_strdup("0123456789abcdef0123456789abcdef01234567");
	model = pk_review_model(m->patch, &res, &info);
	json_object_set_string_member(json_node_get_object(model), "verdict", verdict);
	pk_test_result_clear(&res);
	return model;
}

static const struct pk_reply_info reply_info = {
	.base = "printkbot-base", .list = "linux-serial@vger.kernel.org", .date = 1767225600,
	.id_secret = "the store's secret",
};

/* The header block of a composed mail, unfolded: one "Name: value" per element. */
static GPtrArray *header_lines(const char *text)
{
	GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
	const char *end = strstr(text, "\r\n\r\n");
	g_autofree char *head = g_strndup(text, end ? (gsize)(end - text) : strlen(text));
	g_auto(GStrv) raw = g_strsplit(head, "\r\n", -1);

	for (int i = 0; raw[i]; i++) {
		/* nothing but CRLF ends a line: a bare CR or LF would be a smuggled one */
		assert_null(strpbrk(raw[i], "\r\n"));
		if ((raw[i][0] == ' ' || raw[i][0] == '\t') && lines->len) {
			char *prev = lines->pdata[lines->len - 1];
			lines->pdata[lines->len - 1] = g_strconcat(prev, raw[i], NULL);
			g_free(prev);
		} else {
			g_ptr_array_add(lines, g_strdup(raw[i]));
		}
	}
	return lines;
}

static const char *header(GPtrArray *lines, const char *name)
{
	size_t n = strlen(name);

	for (guint i = 0; i < lines->len; i++) {
		const char *l = lines->pdata[i];
		if (!g_ascii_strncasecmp(l, name, n) && l[n] == ':')
			return l + n + 1 + (l[n + 1] == ' ');
	}
	return NULL;
}

/* Build a reply to m and read it back as a mail: what a list member's client sees. */
static void check_reply(const struct pk_mail *m)
{
	g_autoptr(JsonNode) model = model_for(m, "console-changed");
	struct pk_reply r = { 0 }, again = { 0 };
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_mail) back = NULL;
	g_autoptr(GPtrArray) lines = NULL;
	g_autofree char *want_subject = NULL, *want_id = NULL;
	const char *body;

	assert_int_equal(pk_reply_build(&r, m, model, &reply_cfg, &reply_info, &err), 0);
	assert_int_equal(pk_reply_build(&again, m, model, &reply_cfg, &reply_info, &err), 0);
	/* rendered twice, one Message-ID and the same bytes: a resend is the same mail */
	assert_string_equal(r.message_id, again.message_id);
	assert_string_equal(r.text, again.text);
	want_id = pk_reply_message_id(m->message_id, reply_cfg.from, reply_info.id_secret);
	assert_string_equal(r.message_id, want_id);
	assert_string_equal(r.sender, "bot@printkbot.example");

	lines = header_lines(r.text);
	assert_null(header(lines, "Bcc"));
	assert_non_null(header(lines, "X-Printkbot"));
	assert_int_equal(pk_mail_parse(&back, r.text, strlen(r.text), &err), 0);
	want_subject = g_strdup_printf("Re: %s", m->subject);
	assert_string_equal(back->subject, want_subject);
	assert_string_equal(back->message_id, r.message_id);
	assert_string_equal(back->in_reply_to, m->message_id);
	/* References: the patch's own chain, then the patch */
	assert_int_equal(back->references->len, m->references->len + 1);
	for (guint i = 0; i < m->references->len; i++)
		assert_string_equal(back->references->pdata[i], m->references->pdata[i]);
	assert_string_equal(back->references->pdata[m->references->len], m->message_id);
	/* To the author; the list and the patch's recipients in Cc, each once, never the bot */
	assert_int_equal(back->to->len, 1);
	assert_string_equal(back->from_addr, "bot@printkbot.example");
	assert_true(back->bot_header);
	assert_string_equal(r.recipients->pdata[0], m->from_addr);
	for (guint i = 0; i < r.recipients->len; i++) {
		for (guint j = i + 1; j < r.recipients->len; j++)
			assert_string_not_equal(r.recipients->pdata[i], r.recipients->pdata[j]);
		assert_string_not_equal(r.recipients->pdata[i], "bot@printkbot.example");
	}
	assert_true(g_ptr_array_find_with_equal_func(r.recipients, "linux-serial@vger.kernel.org", g_str_equal, NULL));
	for (guint i = 0; i < m->cc_addrs->len; i++)
		assert_true(g_ptr_array_find_with_equal_func(r.recipients, m->cc_addrs->pdata[i], g_str_equal, NULL) ||
			    !strcmp(m->cc_addrs->pdata[i], "bot@printkbot.example"));
	/* the body: plain UTF-8 text, the review inside, kernel test robot's first lines */
	assert_non_null(strstr(r.text, "Content-Type: text/plain; charset=utf-8"));
	body = strstr(r.text, "\r\n\r\n");
	assert_non_null(body);
	assert_non_null(strstr(body, "[tested on printkbot-base]"));
	assert_non_null(strstr(body, "verdict: console-changed"));   /* the review, inside */
	assert_null(strstr(body, "Reported-by:"));   /* a console change is not a bug to fix */
	pk_reply_clear(&r);
	pk_reply_clear(&again);
}

static void test_corpus_replies(void **state)
{
	const char *argv[] = { "xz", "-dc", MBOX, NULL };
	g_autofree char *buf = NULL;
	g_autoptr(GPtrArray) raw = NULL;
	g_autoptr(GError) err = NULL;
	unsigned checked = 0, with_cc = 0, threaded = 0, encoded = 0;
	int status = 0;

	if (!g_file_test(MBOX, G_FILE_TEST_EXISTS))
		skip();
	assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
				 &buf, NULL, &status, &err));
	pk_mail_split_mbox(&raw, NULL, buf, strlen(buf));
	assert_int_equal(raw->len, 1500);
	for (guint i = 0; i < raw->len && checked < 200; i++) {
		gsize n;
		const char *b = g_bytes_get_data(raw->pdata[i], &n);
		g_autoptr(pk_mail) m = NULL;
		struct pk_series_mail sm = { 0 };
		const char *why;

		assert_int_equal(pk_mail_parse(&m, b, n, NULL), 0);
		sm.message_id = m->message_id;
		sm.subject = m->subject;
		sm.from_addr = m->from_addr;
		sm.has_patch = m->patch != NULL;
		if (pk_series_classify(&sm, NULL, &why) != PK_SERIES_PATCH)
			continue;
		with_cc += m->cc->len > 0;
		threaded += m->references->len > 0;
		encoded += !g_str_is_ascii(m->subject) || (m->from_name && !g_str_is_ascii(m->from_name));
		check_reply(m);
		checked++;
	}
	print_message("replies built to %u real patches (%u with Cc, %u in a thread, %u with non-ASCII names)\n",
		      checked, with_cc, threaded, encoded);
	assert_int_equal(checked, 200);
	assert_true(with_cc > 100 && threaded > 50);
}

/* Hostile headers in a patch mail: encoded CR/LF must not become a header line. */
static void test_hostile_patch(void **state)
{
	static const char mail[] =
		"From: =?utf-8?q?Eve=0D=0ABcc=3A_spy=40evil=2Eexample?= <eve@example.org>\n"
		"To: list@example.org\n"
		"Cc: =?utf-8?q?x=0D=0ABcc=3A_y=40evil=2Eexample?= <cc@example.org>\n"
		"Subject: =?utf-8?q?[PATCH]_x=0D=0ABcc=3A_spy=40evil=2Eexample=0D=0A=0D=0Abody?=\n"
		"Message-ID: <hostile@example.org>\n"
		"References: <ok@example.org> <not an id> <evil@x>\n"
		"\n"
		"text\n---\n--- a/x.c\n+++ b/x.c\n@@ -1 +1,2 @@\n a\n+b\n";
	g_autoptr(pk_mail) m = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autoptr(GPtrArray) lines = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_reply r = { 0 };

	assert_int_equal(pk_mail_parse(&m, mail, sizeof mail - 1, &err), 0);
	assert_null(strpbrk(m->subject, "\r\n"));
	model = model_for(m, "build-failed");
	assert_int_equal(pk_reply_build(&r, m, model, &reply_cfg, &reply_info, &err), 0);
	lines = header_lines(r.text);
	assert_null(header(lines, "Bcc"));
	for (guint i = 0; i < r.recipients->len; i++)
		assert_null(strstr(r.recipients->pdata[i], "evil"));
	assert_non_null(strstr(r.text, "Reported-by: printkbot <bot@printkbot.example>"));  /* build failed: a fix is due */
	pk_reply_clear(&r);
}

/*
 * A NUL in a Message-ID (or In-Reply-To, References) would cut it short:
 * <a@b\0evil> read as a@b, another mail's id.  The mail is refused.
 */
static void test_nul_in_message_id(void **state)
{
	static const char *const headers[] = {
		"Message-ID: <victim@example.org\0.evil>\n",
		"Message-ID: <x@example.org>\nIn-Reply-To: <victim@example.org\0.evil>\n",
		"Message-ID: <x@example.org>\nReferences: <a@example.org> <victim@example.org\0.evil>\n",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(headers); i++) {
		g_autoptr(GString) mail = g_string_new("From: Eve <eve@example.org>\nSubject: [PATCH] x\n");
		g_autoptr(pk_mail) m = NULL;
		g_autoptr(GError) err = NULL;

		/* the headers hold a NUL: appended with their length, not as a C string */
		g_string_append_len(mail, headers[i], (gssize)strlen(headers[i]) + 1 +
				    (gssize)strlen(headers[i] + strlen(headers[i]) + 1));
		g_string_append(mail, "\ntext\n---\n--- a/x.c\n+++ b/x.c\n@@ -1 +1,2 @@\n a\n+b\n");
		assert_int_equal(pk_mail_parse(&m, mail->str, mail->len, &err), -1);
		assert_null(m);
		assert_non_null(strstr(err->message, "NUL"));
	}
}

/*
 * What says who sent a mail: its Authentication-Results as written
 * (folded, CRLF read as LF), topmost first, whatever their case; the
 * mailboxes of its From: fields, two fields counting two.
 */
static void test_trace_headers(void **state)
{
	static const struct {
		const char *headers;
		unsigned from_count, n_ar;
		const char *first, *second;
	} cases[] = {
		{ "From: Max <max@example.org>\r\nAuthentication-Results: mx.example.org;\r\n\tdkim=pass "
		  "header.d=example.org\r\nSubject: x\r\nauthentication-results: evil; dkim=pass\r\n", 1, 2,
		  " mx.example.org;\n\tdkim=pass header.d=example.org", " evil; dkim=pass" },
		{ "From: Max <max@example.org>\nSubject: x\n", 1, 0 },
		{ "From: max@example.org\nFrom: eve@evil.example\nSubject: x\n", 2, 0 },
		{ "From: max@example.org, eve@evil.example\nSubject: x\n", 2, 0 },
		{ "Subject: x\n", 0, 0 },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *mail = g_strdup_printf("%sMessage-ID: <t%zu@example.org>\n\ntext\n", cases[i].headers, i);
		g_autoptr(pk_mail) m = NULL;

		assert_int_equal(pk_mail_parse(&m, mail, strlen(mail), NULL), 0);
		if (m->from_count != cases[i].from_count || m->auth_results->len != cases[i].n_ar)
			fail_msg("case %zu: %u From mailboxes, %u Authentication-Results", i, m->from_count,
				 m->auth_results->len);
		if (cases[i].first)
			assert_string_equal(g_strchomp(m->auth_results->pdata[0]), cases[i].first);
		if (cases[i].second)
			assert_string_equal(g_strchomp(m->auth_results->pdata[1]), cases[i].second);
	}
}

/* pk_mail_compose refuses, never cleans, a value with a line break. */
static void test_compose_refuses(void **state)
{
	const char *to[] = { "jane@example.org", NULL };
	const char *two[] = { "jane@example.org, spy@evil.example", NULL };
	const char *bad_refs[] = { "a@b", "c d@e", NULL };
	struct pk_mail_out base = { .from = "bot@example.org", .to = to, .subject = "Re: x",
				    .message_id = "r@example.org", .date = 0, .body = "hi\n" };
	g_autofree char *clean = NULL;
	struct pk_mail_out m;
	g_autoptr(GError) err = NULL;
	g_autofree char *ok = pk_mail_compose(&base, &err);

	assert_non_null(ok);
	assert_non_null(strstr(ok, "Message-Id: <r@example.org>"));
	m = base;
	m.subject = "Re: x\r\nBcc: spy@evil.example";
	assert_null(pk_mail_compose(&m, &err));
	assert_non_null(strstr(err->message, "Subject"));
	g_clear_error(&err);
	m = base;
	m.extra = (const char *const[]){ "X-Printkbot: v\nBcc: spy@evil.example", NULL };
	assert_null(pk_mail_compose(&m, &err));
	g_clear_error(&err);
	m = base;
	m.to = two;   /* one string, two mailboxes: the envelope would not say so */
	assert_null(pk_mail_compose(&m, &err));
	g_clear_error(&err);
	m = base;
	m.references = bad_refs;
	assert_null(pk_mail_compose(&m, &err));
	g_clear_error(&err);
	m = base;
	m.message_id = "no-at-sign";
	assert_null(pk_mail_compose(&m, &err));
	assert_false(pk_mail_header_ok("a\rb"));
	assert_false(pk_mail_header_ok("a\nb"));
	assert_true(pk_mail_header_ok("ünïcödé\tok"));
	clean = pk_mail_clean_subject("a\r\n  b\t\tc ");
	assert_string_equal(clean, "a b c");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compose_refuses),
		cmocka_unit_test(test_trace_headers),
		cmocka_unit_test(test_hostile_patch),
		cmocka_unit_test(test_nul_in_message_id),
		cmocka_unit_test(test_corpus_replies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
