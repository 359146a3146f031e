/*
 * test-reply.c - the head of the reply as the kernel test robot writes
 * its reports (base:, patch link:, config:, compiler:, reproduce:), the
 * tag block only when there is something to fix and in the robot's
 * words, Auto-Submitted on every reply, and the reproduce commands and
 * archive links built for it.  The answer to a command by mail: to whom
 * (its sender and the list, no one else), what of the command it quotes,
 * and no line in it or in a reply that gives a command.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <stdio.h>

#include "intake/mail.h"
#include "intake/mailcmd.h"
#include "report/reply.h"
#include "report/site.h"
#include "report/review.h"

static const char patch_mail[] =
	"From: Jane Dev <jane@example.org>\n"
	"To: linux-serial@vger.kernel.org\n"
	"Subject: [PATCH v2 2/3] serial: 8250: say which port\n"
	"Message-ID: <20261201.2.jane@example.org>\n"
	"Date: Tue, 1 Dec 2026 10:00:00 +0000\n"
	"\n"
	"Say it.\n"
	"---\n"
	"diff --git a/drivers/tty/serial/8250/8250_core.c b/drivers/tty/serial/8250/8250_core.c\n"
	"--- a/drivers/tty/serial/8250/8250_core.c\n"
	"+++ b/drivers/tty/serial/8250/8250_core.c\n"
	"@@ -10,3 +10,3 @@ void f(void)\n"
	" {\n"
	"-\tprintk(KERN_INFO \"serial: probed\\n\");\n"
	"+\tpr_info(\"serial: probed %d\\n\", port);\n"
	" }\n";

static const struct pk_reply_config reply_cfg = {
	.from = "printkbot <bot@example.org>", .cc_original = true,
};

static const char *const config_lines[] = { "CONFIG_64BIT=y", "CONFIG_PRINTK_INDEX=y", NULL };

static const struct pk_reply_info with_archive = {
	.base = "printkbot-base", .list = "linux-serial@vger.kernel.org", .date = 1767225600,
	.kernel = "Linux 6.12.118 (Debian linux-source-6.12), commit 514c34ece50e",
	.archive = "https://lore.kernel.org/linux-serial",
	.compiler = "gcc (Debian 12.2.0-14+deb12u1) 12.2.0",
	.config_lines = config_lines,
	.id_secret = "the store's secret",
};

/* The reply to a patch mail with the given verdict; its whole text (caller frees). */
/* config_derived of the next reply_text*() model, or NULL */
static const char *derived_lines;

static char *reply_text_to(const char *mail, const char *verdict, const struct pk_reply_info *info)
{
	static const struct pk_review_info rinfo = {
		"x.mbx", 2, 3, "printkbot-base", "3f2a1b4c5d6e",
		"b4 am -o - -v 2 -P 1-2 -- 20261201.2.jane@example.org | printkbot test -",
	};
	g_autoptr(pk_mail) m = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_test_result res = { .verdict = PK_VERDICT_NO_CHURN };
	struct pk_reply r = { 0 };
	char *text;

	assert_int_equal(pk_mail_parse(&m, mail, strlen(mail), &err), 0);
	res.scan = pk_scan(m->patch);
	res.before.commit = g_strdup("514c34ece50e09cf18cccbac90ea7a7c6dfa812f");
	model = pk_review_model(m->patch, &res, &rinfo);
	json_object_set_string_member(json_node_get_object(model), "verdict", verdict);
	if (derived_lines)
		json_object_set_string_member(json_node_get_object(model), "config_derived", derived_lines);
	assert_int_equal(pk_reply_build(&r, m, model, &reply_cfg, info, &err), 0);
	text = g_steal_pointer(&r.text);
	pk_reply_clear(&r);
	pk_test_result_clear(&res);
	return text;
}

static char *reply_text(const char *verdict, const struct pk_reply_info *info)
{
	return reply_text_to(patch_mail, verdict, info);
}

/* Whether text has a line that is exactly line. */
static bool has_line(const char *text, const char *line)
{
	g_auto(GStrv) lines = g_strsplit(text, "\r\n", -1);

	for (char **l = lines; *l; l++)
		if (!strcmp(*l, line))
			return true;
	return false;
}

static void test_head(void **state)
{
	g_autofree char *text = reply_text("console-changed", &with_archive);

	if (g_getenv("PK_TEST_SHOW"))
		fputs(text, stderr);
	assert_true(has_line(text, "Auto-Submitted: auto-generated"));
	assert_true(has_line(text, "[tested on printkbot-base]"));
	assert_true(has_line(text, "base:   Linux 6.12.118 (Debian linux-source-6.12), commit 514c34ece50e"));
	assert_true(has_line(text, "patch link:    https://lore.kernel.org/linux-serial/20261201.2.jane@example.org/"));
	assert_true(has_line(text, "patch subject: [PATCH v2 2/3] serial: 8250: say which port"));
	assert_true(has_line(text, "config: x86_64 tinyconfig + qemu/kernel.config 3f2a1b4c5d6e (below)"));
	assert_true(has_line(text, "compiler: gcc (Debian 12.2.0-14+deb12u1) 12.2.0"));
	assert_true(has_line(text, "reproduce:"));
	assert_true(has_line(text, "        b4 am -o - -v 2 -P 1-2 -- 20261201.2.jane@example.org | printkbot test -"));
	assert_true(has_line(text, "        CONFIG_PRINTK_INDEX=y"));
	/* a console change is no bug: no tags asked for, the review inside without its own footer */
	assert_null(strstr(text, "Reported-by:"));
	assert_null(strstr(text, "kindly add"));
	assert_non_null(strstr(text, "verdict: console-changed"));
	assert_null(strstr(text, "To reproduce:"));
	assert_null(strstr(text, "lore.kernel.org/r/"));
}

/* A config derived for the patch (lab/derive.h): its lines follow the fragment's. */
static void test_derived_config(void **state)
{
	g_autofree char *text = NULL;

	derived_lines = "CONFIG_PCI=y\nCONFIG_ATA=y\n";
	text = reply_text("console-changed", &with_archive);
	derived_lines = NULL;
	assert_true(has_line(text, "config: x86_64 tinyconfig + qemu/kernel.config + lines for this patch "
				   "3f2a1b4c5d6e (below)"));
	assert_true(has_line(text, "        CONFIG_PRINTK_INDEX=y"));
	assert_true(has_line(text, "        CONFIG_ATA=y"));
	assert_non_null(strstr(text, "CONFIG_PRINTK_INDEX=y\r\n        CONFIG_PCI=y\r\n"));
}

/* Something to fix: the robot's words, Closes: at the reply's own page in the archive. */
static void test_tags_when_something_to_fix(void **state)
{
	g_autofree char *text = reply_text("build-failed", &with_archive);
	g_autofree char *mid = pk_reply_message_id("20261201.2.jane@example.org", reply_cfg.from,
							 with_archive.id_secret);
	g_autofree char *closes = g_strdup_printf("| Closes: https://lore.kernel.org/linux-serial/%s/", mid);

	assert_non_null(strstr(text, "If you fix the issue in a separate patch/commit (i.e. not just a new\r\n"
				     "version of the same patch/commit), kindly add following tags\r\n"
				     "| Reported-by: printkbot <bot@example.org>\r\n"));
	assert_true(has_line(text, closes));
}

/*
 * The reply's Message-ID cannot be computed from the patch alone (a
 * stranger would send a mail under it first): keyed with the store's
 * secret, the same for the same secret, and none without one.
 */
static void test_message_id_keyed(void **state)
{
	const char *patch = "20261201.2.jane@example.org";
	g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, patch, -1);
	g_autofree char *guessed = g_strdup_printf("printkbot-%.24s@example.org", sum);
	g_autofree char *mid = pk_reply_message_id(patch, reply_cfg.from, "secret one");
	g_autofree char *again = pk_reply_message_id(patch, reply_cfg.from, "secret one");
	g_autofree char *other = pk_reply_message_id(patch, reply_cfg.from, "secret two");
	g_autofree char *text = reply_text("build-failed", &with_archive);
	g_autofree char *want = pk_reply_message_id(patch, reply_cfg.from, with_archive.id_secret);
	g_autofree char *header = g_strdup_printf("Message-Id: <%s>", want);
	struct pk_reply_info none = with_archive;
	g_autoptr(pk_mail) m = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_reply r = { 0 };
	struct pk_test_result res = { .verdict = PK_VERDICT_NO_CHURN };
	g_autoptr(JsonNode) model = NULL;

	assert_true(g_str_has_prefix(mid, "printkbot-"));
	assert_true(g_str_has_suffix(mid, "@example.org"));
	assert_string_not_equal(mid, guessed);
	assert_string_equal(mid, again);
	assert_string_not_equal(mid, other);
	assert_true(has_line(text, header));
	assert_null(strstr(text, guessed));
	/* without a secret no reply is built, rather than one with a guessable id */
	none.id_secret = NULL;
	assert_int_equal(pk_mail_parse(&m, patch_mail, strlen(patch_mail), &err), 0);
	res.scan = pk_scan(m->patch);
	res.before.commit = g_strdup("514c34ece50e09cf18cccbac90ea7a7c6dfa812f");
	model = pk_review_model(m->patch, &res, &(struct pk_review_info){ "x.mbx", 1, 1, "printkbot-base",
									  "3f2a1b4c5d6e", "b4 am" });
	assert_int_equal(pk_reply_build(&r, m, model, &reply_cfg, &none, &err), -1);
	assert_non_null(strstr(err->message, "secret"));
	pk_test_result_clear(&res);
}

/* With [site] url: "patch link:" is the series' page on the site; Closes: stays the archive's. */
static void test_site_link(void **state)
{
	struct pk_reply_info info = with_archive;
	g_autofree char *page = pk_site_series_url("https://bot.example.org", 42, 0);
	g_autofree char *text = NULL;

	assert_string_equal(page, "https://bot.example.org/series/j42.html");
	info.site_page = page;
	text = reply_text("build-failed", &info);
	assert_true(has_line(text, "patch link:    https://bot.example.org/series/j42.html"));
	assert_null(strstr(text, "patch link:    https://lore"));
	assert_non_null(strstr(text, "Closes: https://lore.kernel.org/linux-serial/"));
}

/* No archive configured: no link is made up, the Message-ID is named instead. */
static void test_no_archive(void **state)
{
	struct pk_reply_info info = with_archive;
	g_autofree char *text = NULL;

	info.archive = NULL;
	info.compiler = NULL;
	info.config_lines = NULL;
	text = reply_text("build-failed", &info);
	if (g_getenv("PK_TEST_SHOW"))
		fputs(text, stderr);
	assert_true(has_line(text, "message-id:    <20261201.2.jane@example.org>"));
	assert_null(strstr(text, "patch link:"));
	assert_null(strstr(text, "Closes:"));
	assert_null(strstr(text, "https://"));
	assert_null(strstr(text, "compiler:"));
	assert_true(has_line(text, "| Reported-by: printkbot <bot@example.org>"));
	assert_true(has_line(text, "config: x86_64 tinyconfig + qemu/kernel.config 3f2a1b4c5d6e"));
	assert_true(has_line(text, "Auto-Submitted: auto-generated"));
}

/*
 * Names outside ASCII: GMime encodes them in the headers (RFC 2047, read
 * back as they were), and the body is UTF-8 as its charset says, never
 * Latin-1 labelled UTF-8.
 */
static void test_non_ascii_names(void **state)
{
	/* shown: the To read back from the reply, as pk_mail_parse() writes a mailbox */
	static const struct { const char *from, *cc, *shown, *greeting; } cases[] = {
		{ "=?UTF-8?Q?J=C3=A9r=C3=B4me_Dev?= <jerome@example.org>", "=?UTF-8?B?w4VzYQ==?= <asa@example.org>",
		  "J\u00e9r\u00f4me Dev <jerome@example.org>", "J\u00e9r\u00f4me" },
		{ "\"M\u00fcller, J\u00f6rg\" <jm@example.org>", "\u674e\u96f7 <li@example.org>",
		  "\"M\u00fcller, J\u00f6rg\" <jm@example.org>", "M\u00fcller," },
		{ "=?UTF-8?B?5p2O6Zu3?= <li@example.org>", "O'Brien <ob@example.org>",
		  "\u674e\u96f7 <li@example.org>", "\u674e\u96f7" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *mail = g_strdup_printf("From: %s\nCc: %s\n%s", cases[i].from, cases[i].cc,
							 strchr(patch_mail, '\n') + 1);
		g_autofree char *text = reply_text_to(mail, "console-changed", &with_archive);
		g_autofree char *hello = g_strdup_printf("Hi %s,", cases[i].greeting);
		g_autoptr(pk_mail) back = NULL;
		g_autoptr(GError) err = NULL;
		const char *head_end = strstr(text, "\r\n\r\n");

		if (g_getenv("PK_TEST_SHOW"))
			fputs(text, stderr);
		assert_true(g_utf8_validate(text, -1, NULL));
		/* the headers are ASCII: the names encoded, no octal escapes */
		for (const char *p = text; p < head_end; p++)
			assert_true((unsigned char)*p < 0x80);
		assert_null(g_strstr_len(text, head_end - text, "\\3"));
		assert_true(has_line(text, "Content-Type: text/plain; charset=utf-8"));
		assert_non_null(strstr(text, hello));
		assert_int_equal(pk_mail_parse(&back, text, strlen(text), &err), 0);
		assert_int_equal(back->to->len, 1);
		print_message("To: %s\n", (char *)back->to->pdata[0]);
		assert_string_equal(back->to->pdata[0], cases[i].shown);
		assert_int_equal(back->cc->len, 2);   /* the list, and the Cc read back whole */
	}
}

/* A Cc of 10,000 and References of 5,000: the reply carries at most the caps, the right ones. */
static void test_caps(void **state)
{
	g_autoptr(GString) mail = g_string_new("From: Jane Dev <jane@example.org>\nCc: ");
	g_autoptr(pk_mail) back = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *text = NULL;

	for (int i = 0; i < 10000; i++)
		g_string_append_printf(mail, "%scc%d@example.org", i ? ",\n " : "", i);
	g_string_append(mail, "\nReferences:");
	for (int i = 0; i < 5000; i++)
		g_string_append_printf(mail, "\n <ref%d@example.org>", i);
	g_string_append_printf(mail, "\n%s", strchr(patch_mail, '\n') + 1);
	text = reply_text_to(mail->str, "console-changed", &with_archive);
	assert_int_equal(pk_mail_parse(&back, text, strlen(text), &err), 0);
	/* the author in To, the list and the first Cc'd in Cc */
	assert_int_equal(back->to->len + back->cc->len, PK_REPLY_MAX_RECIPIENTS);
	assert_string_equal(back->cc->pdata[0], "linux-serial@vger.kernel.org");
	assert_string_equal(back->cc->pdata[1], "cc0@example.org");
	assert_int_equal(back->references->len, PK_REPLY_MAX_REFERENCES);
	assert_string_equal(back->references->pdata[0], "ref0@example.org");
	assert_string_equal(back->references->pdata[PK_REPLY_MAX_REFERENCES - 2], "ref4999@example.org");
	assert_string_equal(back->references->pdata[PK_REPLY_MAX_REFERENCES - 1], "20261201.2.jane@example.org");
}

static void test_reproduce(void **state)
{
	static const struct { const char *mid, *subject, *base, *want; } cases[] = {
		{ "a@b", "[PATCH] x: y", NULL, "b4 am -o - -- a@b | printkbot test -" },
		{ "a@b", "[PATCH] x: y", "printkbot-base", "b4 am -o - -- a@b | printkbot test -" },
		{ "a@b", "[PATCH 1/3] x: y", NULL, "b4 am -o - -P 1 -- a@b | printkbot test -" },
		{ "a@b", "[PATCH v3 3/3] x: y", NULL, "b4 am -o - -v 3 -P 1-3 -- a@b | printkbot test -" },
		{ "a@b", "[PATCH v2] x: y", "514c34ece50e09cf18cccbac90ea7a7c6dfa812f",
		  "b4 am -o - -v 2 -- a@b | printkbot test --base 514c34ece50e09cf18cccbac90ea7a7c6dfa812f -" },
		/* a Message-ID is the sender's choice: what a shell would act on is quoted */
		{ "$(rm -rf ~)'x@evil", "[PATCH] x", NULL, "b4 am -o - -- '$(rm -rf ~)'\\''x@evil' | printkbot test -" },
		/* a Message-ID that starts with '-' would be an option of b4 (-m reads a local mbox) */
		{ "-m/tmp/evil.mbox@x", "[PATCH] x", NULL, "b4 am -o - -- -m/tmp/evil.mbox@x | printkbot test -" },
		{ "--use-local-mbox=/tmp/e@x", "[PATCH v2] x", "printkbot-base",
		  "b4 am -o - -v 2 -- --use-local-mbox=/tmp/e@x | printkbot test -" },
		{ "x+y=z%2F@host.example", "[PATCH] x", NULL, "b4 am -o - -- x+y=z%2F@host.example | printkbot test -" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = pk_reply_reproduce(cases[i].mid, cases[i].subject, cases[i].base, NULL);
		assert_string_equal(got, cases[i].want);
	}
	/* another arch than x86_64 is named, so the command tests where the bot did */
	g_autofree char *arm = pk_reply_reproduce("a@b", "[PATCH] x", NULL, pk_arch_by_name("arm64"));
	assert_string_equal(arm, "b4 am -o - -- a@b | printkbot test --arch arm64 -");
}

static void test_archive_link(void **state)
{
	g_autofree char *a = pk_reply_archive_link("https://lore.kernel.org/linux-serial/", "a.b@c.d");
	g_autofree char *b = pk_reply_archive_link("https://lore.kernel.org/linux-serial", "a.b@c.d");
	g_autofree char *c = pk_reply_archive_link("https://example.org/list/", "a/b?c#d%e@f");

	assert_string_equal(a, "https://lore.kernel.org/linux-serial/a.b@c.d/");
	assert_string_equal(b, a);
	assert_string_equal(c, "https://example.org/list/a%2Fb%3Fc%23d%25e@f/");
	assert_null(pk_reply_archive_link(NULL, "a@b"));
}

/*
 * The mail about a pushed commit: To its author, Cc its committer and the
 * tree's list, a thread of its own, the robot's head for a commit
 * (tree:, head:, commit:, author:, date:), a reproduce that names the
 * tree and the commit, "commit" in the robot's sentences; the same
 * Message-ID whenever it is built, another for another commit.
 */
static void test_commit_mail(void **state)
{
	static const struct pk_review_info rinfo = { "lab/main (commit 1a2b3c4d5e6f)", 1, 1, "its parent",
						     "3f2a1b4c5d6e", "printkbot run 1a2b3c4d5e6f^!" };
	struct pk_reply_commit c = {
		.tree = "lab", .branch = "main", .tree_url = "git://127.0.0.1:9418/lab.git",
		.head = "9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f",
		.commit = "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d", .subject = "init: say hello",
		.author = "Jane Dev <jane@example.org>", .committer = "Max Maint <max@example.org>",
		.date = "Tue, 1 Dec 2026 10:00:00 +0000", .index = 1, .total = 3, .list = "lab@example.org",
	};
	g_autoptr(pk_mail) m = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_test_result res = { .verdict = PK_VERDICT_NO_CHURN };
	struct pk_reply r = { 0 }, again = { 0 }, other = { 0 };
	g_autofree char *mid = NULL;

	assert_int_equal(pk_mail_parse(&m, patch_mail, strlen(patch_mail), &err), 0);
	res.scan = pk_scan(m->patch);
	res.before.commit = g_strdup("514c34ece50e09cf18cccbac90ea7a7c6dfa812f");
	model = pk_review_model(m->patch, &res, &rinfo);
	json_object_set_string_member(json_node_get_object(model), "verdict", "console-changed");
	assert_int_equal(pk_reply_build_commit(&r, &c, model, &reply_cfg, &with_archive, &err), 0);
	assert_int_equal(r.recipients->len, 3);
	assert_string_equal(r.recipients->pdata[0], "jane@example.org");
	assert_string_equal(r.recipients->pdata[1], "max@example.org");
	assert_string_equal(r.recipients->pdata[2], "lab@example.org");
	assert_true(has_line(r.text, "To: Jane Dev <jane@example.org>"));
	assert_true(has_line(r.text, "Cc: Max Maint <max@example.org>, lab@example.org"));
	assert_true(has_line(r.text, "Subject: [lab:main 1/3] init: say hello: console-changed"));
	assert_null(strstr(r.text, "In-Reply-To:"));
	assert_true(has_line(r.text, "Auto-Submitted: auto-generated"));
	assert_true(has_line(r.text, "Hi Jane,"));
	assert_non_null(strstr(r.text, "before and after this commit, and\r\nthe commit changes what"));
	assert_true(has_line(r.text, "tree:   git://127.0.0.1:9418/lab.git main"));
	assert_true(has_line(r.text, "head:   9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f9f"));
	assert_true(has_line(r.text, "commit: 1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d (\"init: say hello\")"));
	assert_true(has_line(r.text, "author: Jane Dev <jane@example.org>"));
	assert_true(has_line(r.text, "date:   Tue, 1 Dec 2026 10:00:00 +0000"));
	assert_true(has_line(r.text, "        git fetch --no-tags git://127.0.0.1:9418/lab.git main && "
			     "printkbot run 1a2b3c4d5e6f^!"));
	assert_true(has_line(r.text, "        CONFIG_PRINTK_INDEX=y"));
	assert_null(strstr(r.text, "patch link:"));
	/* built again: the same id; another commit: another */
	assert_int_equal(pk_reply_build_commit(&again, &c, model, &reply_cfg, &with_archive, &err), 0);
	assert_string_equal(again.message_id, r.message_id);
	c.commit = "2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d1a";
	c.committer = c.author;   /* the author committed it: mailed once */
	c.list = NULL;
	assert_int_equal(pk_reply_build_commit(&other, &c, model, &reply_cfg, &with_archive, &err), 0);
	assert_string_not_equal(other.message_id, r.message_id);
	assert_int_equal(other.recipients->len, 1);
	pk_reply_clear(&r);
	pk_reply_clear(&again);
	pk_reply_clear(&other);
	pk_test_result_clear(&res);
}

/* The body of a reply (after the headers), its lines counted. */
static unsigned body_lines(const char *text)
{
	const char *body = strstr(text, "\r\n\r\n");
	unsigned n = 0;

	assert_non_null(body);
	for (const char *p = body + 4; *p; p++)
		n += *p == '\n';
	return n;
}

/*
 * A reply over max_lines: the boot-log and index changes cut, whole ones,
 * as few as it takes, the reply saying how many and where they all are;
 * under the cap, nothing cut.
 */
static void test_reply_capped(void **state)
{
	static const struct pk_review_info rinfo = { "x.mbx", 1, 1, "printkbot-base", "3f2a1b4c5d6e", "reproduce" };
	struct pk_reply_info info = with_archive;
	g_autoptr(pk_mail) m = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_test_result res = { .verdict = PK_VERDICT_NO_CHURN };
	struct pk_reply r = { 0 }, whole = { 0 };
	JsonArray *console = json_array_new();

	assert_int_equal(pk_mail_parse(&m, patch_mail, strlen(patch_mail), &err), 0);
	res.scan = pk_scan(m->patch);
	model = pk_review_model(m->patch, &res, &rinfo);
	/* 60 boot-log changes of four lines each: some 240 lines */
	for (int i = 0; i < 60; i++) {
		JsonObject *c = json_object_new();
		JsonArray *lines = json_array_new();
		g_autofree char *where = g_strdup_printf("drivers/x.c:%d probe()", 100 + i);
		g_autofree char *old = g_strdup_printf("-<6>x: message %d", i), *new = g_strdup_printf("+<6>message %d", i);

		json_object_set_string_member(c, "where", where);
		json_object_set_string_member(c, "kind", "prefix-changed");
		json_array_add_string_element(lines, old);
		json_array_add_string_element(lines, new);
		json_object_set_array_member(c, "lines", lines);
		json_array_add_object_element(console, c);
	}
	json_object_set_string_member(json_node_get_object(model), "verdict", "console-changed");
	json_object_set_array_member(json_node_get_object(model), "console", console);
	json_object_set_boolean_member(json_node_get_object(model), "has_console", TRUE);
	info.site_page = "https://bot.example.org/series/12.html";
	assert_int_equal(pk_reply_build(&whole, m, model, &reply_cfg, &info, &err), 0);
	assert_true(body_lines(whole.text) > 240);
	assert_null(strstr(whole.text, "more change"));
	info.max_lines = 120;
	assert_int_equal(pk_reply_build(&r, m, model, &reply_cfg, &info, &err), 0);
	if (g_getenv("PK_TEST_SHOW"))
		fputs(r.text, stderr);
	assert_true(body_lines(r.text) <= 120);
	/* as many kept as fit: one more would not */
	assert_true(body_lines(r.text) > 120 - 5);
	assert_non_null(strstr(r.text, "drivers/x.c:100 probe(): prefix-changed"));
	assert_null(strstr(r.text, "drivers/x.c:159 probe()"));
	assert_non_null(strstr(r.text, "more changes of the boot log and the printk index"));
	assert_non_null(strstr(r.text, "https://bot.example.org/series/12.html"));
	/* the same Message-ID: the cut is the same mail */
	assert_string_equal(r.message_id, whole.message_id);
	pk_reply_clear(&r);
	pk_reply_clear(&whole);
	pk_test_result_clear(&res);
}

/*
 * A reply long for other reasons than its changes (a driver removed: every
 * file's coverage, the config's lines): past the changes, the config's
 * lines go first, then the coverage, each saying so.
 */
static void test_reply_capped_stages(void **state)
{
	static const struct pk_review_info rinfo = { "x.mbx", 1, 1, "printkbot-base", "3f2a1b4c5d6e", "reproduce" };
	g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
	struct pk_reply_info info = with_archive;
	g_autoptr(pk_mail) m = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_test_result res = { .verdict = PK_VERDICT_NO_CHURN };
	struct pk_reply r = { 0 };
	JsonArray *coverage = json_array_new();

	assert_int_equal(pk_mail_parse(&m, patch_mail, strlen(patch_mail), &err), 0);
	res.scan = pk_scan(m->patch);
	model = pk_review_model(m->patch, &res, &rinfo);
	for (int i = 0; i < 40; i++) {
		JsonObject *c = json_object_new();
		g_autofree char *line = g_strdup_printf("drivers/x/file%d.c: not-built (deleted)", i);

		json_object_set_string_member(c, "line", line);
		json_array_add_object_element(coverage, c);
	}
	json_object_set_string_member(json_node_get_object(model), "verdict", "not-built");
	json_object_set_array_member(json_node_get_object(model), "coverage", coverage);
	json_object_set_boolean_member(json_node_get_object(model), "has_coverage", TRUE);
	for (int i = 0; i < 30; i++)
		g_ptr_array_add(lines, g_strdup_printf("CONFIG_X%d=y", i));
	g_ptr_array_add(lines, NULL);
	info.config_lines = (const char *const *)lines->pdata;
	info.max_lines = 60;
	assert_int_equal(pk_reply_build(&r, m, model, &reply_cfg, &info, &err), 0);
	if (g_getenv("PK_TEST_SHOW"))
		fputs(r.text, stderr);
	assert_true(body_lines(r.text) <= 60);
	assert_non_null(strstr(r.text, "The 30 lines of the kernel config are left out to keep this mail"));
	assert_null(strstr(r.text, "CONFIG_X0=y"));
	assert_non_null(strstr(r.text, "drivers/x/file0.c: not-built"));
	assert_non_null(strstr(r.text, "more files of the patch, left out to keep this mail short:"));
	assert_non_null(strstr(r.text, "  https://lore.kernel.org/linux-serial/20261201.2.jane@example.org/\r\n"));
	pk_reply_clear(&r);
	pk_test_result_clear(&res);
}

/*
 * to_author = false: To the list; cc_list = false: the list left out, even
 * where the patch named it; a muted list (its group's reply is off) is not
 * Cc'd by the reply-all.
 */
static void test_policy_recipients(void **state)
{
	struct pk_reply_policy to_list = { .reply = PK_REPLY_CHANGES, .to_author = false, .cc_list = true };
	struct pk_reply_policy no_list = { .reply = PK_REPLY_CHANGES, .to_author = true, .cc_list = false };
	struct pk_reply_info info = with_archive;
	g_autofree char *a = NULL, *b = NULL;

	info.policy = &to_list;
	a = reply_text("console-changed", &info);
	assert_true(has_line(a, "To: linux-serial@vger.kernel.org"));
	assert_null(strstr(a, "Jane Dev <jane@example.org>\r\n"));
	info.policy = &no_list;
	b = reply_text("console-changed", &info);
	assert_true(has_line(b, "To: Jane Dev <jane@example.org>"));
	assert_null(strstr(b, "linux-serial@vger.kernel.org\r\n"));
	assert_null(strstr(b, "Cc: linux-serial"));
	{
		/* a list whose group says reply = off is not Cc'd from the patch's own Cc */
		static const char cross[] = "From: Jane Dev <jane@example.org>\nTo: linux-serial@vger.kernel.org\n"
					    "Cc: LKML <linux-kernel@vger.kernel.org>, Greg <greg@kernel.org>\n"
					    "Subject: [PATCH] x\nMessage-ID: <cross@example.org>\n\nx\n---\n"
					    "diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1,1 +1,1 @@\n-a\n+b\n";
		static const char *const muted[] = { "Linux-Kernel@vger.kernel.org", NULL };
		struct pk_reply_info plain = with_archive;
		g_autofree char *all = NULL, *some = NULL;

		all = reply_text_to(cross, "console-changed", &plain);
		assert_non_null(strstr(all, "linux-kernel@vger.kernel.org"));
		plain.muted = muted;
		some = reply_text_to(cross, "console-changed", &plain);
		assert_null(strstr(some, "linux-kernel@vger.kernel.org"));
		assert_non_null(strstr(some, "greg@kernel.org"));
	}
}

/* An earlier mail said it all: one sentence, threaded as any reply. */
static void test_same_as(void **state)
{
	struct pk_reply_info info = with_archive;
	g_autofree char *text = NULL;

	info.same_as = "This patch prints what \"[PATCH v1 2/3] serial: 8250: say which port\" printed: the boot "
		       "log, the printk index and the static findings are the same (the review of it: <x@y>).";
	text = reply_text("console-changed", &info);
	assert_true(has_line(text, "In-Reply-To: <20261201.2.jane@example.org>"));
	assert_true(has_line(text, "Hi Jane,"));
	assert_non_null(strstr(text, "This patch prints what \"[PATCH v1 2/3] serial: 8250: say which port\""));
	assert_null(strstr(text, "verdict:"));
	assert_true(body_lines(text) < 12);
}

/* The body of a whole mail (its CRLF text), borrowed from text. */
static const char *body_of(const char *text)
{
	const char *b = strstr(text, "\r\n\r\n");

	assert_non_null(b);
	return b + 4;
}

/*
 * The answer to a command goes To its sender and Cc the source's list,
 * never to the others its sender named (a forger's relay); without a
 * list, to the sender alone.  It quotes the command understood, not the
 * rest of its line, and no line of it reads as a command.
 */
static void test_command_answer(void **state)
{
	static const char command_mail[] =
		"From: Max Maint <max@example.org>\n"
		"To: printkbot <bot@example.org>, victim1@example.net, victim2@example.net\n"
		"Cc: linux-serial@vger.kernel.org, victim3@example.net\n"
		"Subject: Re: [PATCH v2 2/3] serial: 8250: say which port\n"
		"Message-ID: <cmd1@example.org>\n"
		"In-Reply-To: <20261201.2.jane@example.org>\n"
		"\n"
		"#printkbot help me, and BUY CHEAP PILLS at http://spam.example\n";
	struct pk_reply_info no_list = with_archive;
	g_autoptr(pk_mail) m = NULL;
	g_auto(pk_mailcmd_t) c = { 0 };

	no_list.list = NULL;
	assert_int_equal(pk_mail_parse(&m, command_mail, strlen(command_mail), NULL), 0);
	pk_mailcmd_parse(&c, m->body);
	assert_int_equal(c.kind, PK_MAILCMD_HELP);
	for (int pass = 0; pass < 2; pass++) {
		struct pk_reply_command cmd = { .line = c.line, .help = true };
		g_auto(pk_mailcmd_t) again = { 0 };
		struct pk_reply r = { 0 };
		g_autoptr(GError) err = NULL;

		assert_int_equal(pk_reply_build_command(&r, m, &cmd, &reply_cfg, pass ? &no_list : &with_archive,
							&err), 0);
		assert_string_equal(r.recipients->pdata[0], "max@example.org");
		if (pass) {
			assert_int_equal(r.recipients->len, 1);
			assert_null(strstr(r.text, "\r\nCc:"));
		} else {
			assert_int_equal(r.recipients->len, 2);
			assert_string_equal(r.recipients->pdata[1], "linux-serial@vger.kernel.org");
			assert_non_null(strstr(r.text, "\r\nCc: linux-serial@vger.kernel.org\r\n"));
		}
		assert_null(strstr(r.text, "victim"));
		assert_true(has_line(r.text, "> #printkbot help"));
		assert_null(strstr(r.text, "spam.example"));
		assert_null(strstr(r.text, "PILLS"));
		pk_mailcmd_parse(&again, body_of(r.text));
		assert_int_equal(again.kind, PK_MAILCMD_NONE);
		pk_reply_clear(&r);
	}
}

/*
 * A reply to a patch whose subject is a command (a one-patch series: the
 * review starts with the subject, on a line of its own) holds no line
 * that gives it.
 */
static void test_reply_defused(void **state)
{
	static const struct pk_review_info rinfo = { "x.mbx", 1, 1, "printkbot-base", "3f2a1b4c5d6e", "r" };
	g_autofree char *mail = g_strdup(patch_mail);
	g_auto(GStrv) parts = g_strsplit(mail, "Subject: [PATCH v2 2/3] serial: 8250: say which port\n", 2);
	g_autofree char *hostile = g_strjoin("Subject: #printkbot test\n", parts[0], parts[1], NULL);
	struct pk_test_result res = { .verdict = PK_VERDICT_NO_CHURN };
	g_autoptr(pk_mail) m = NULL;
	g_autoptr(JsonNode) model = NULL;
	g_auto(pk_mailcmd_t) c = { 0 };
	struct pk_reply r = { 0 };

	assert_int_equal(pk_mail_parse(&m, hostile, strlen(hostile), NULL), 0);
	res.scan = pk_scan(m->patch);
	model = pk_review_model(m->patch, &res, &rinfo);
	assert_int_equal(pk_reply_build(&r, m, model, &reply_cfg, &with_archive, NULL), 0);
	assert_true(has_line(r.text, "> #printkbot test"));
	pk_mailcmd_parse(&c, body_of(r.text));
	assert_int_equal(c.kind, PK_MAILCMD_NONE);
	pk_reply_clear(&r);
	pk_test_result_clear(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head),
		cmocka_unit_test(test_derived_config),
		cmocka_unit_test(test_tags_when_something_to_fix),
		cmocka_unit_test(test_message_id_keyed),
		cmocka_unit_test(test_site_link),
		cmocka_unit_test(test_no_archive),
		cmocka_unit_test(test_non_ascii_names),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_reproduce),
		cmocka_unit_test(test_archive_link),
		cmocka_unit_test(test_commit_mail),
		cmocka_unit_test(test_reply_capped),
		cmocka_unit_test(test_reply_capped_stages),
		cmocka_unit_test(test_policy_recipients),
		cmocka_unit_test(test_same_as),
		cmocka_unit_test(test_command_answer),
		cmocka_unit_test(test_reply_defused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
