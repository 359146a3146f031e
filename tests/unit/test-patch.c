/*
 * test-patch.c - mail decoding (mboxrd, charsets), hunk sections,
 * post-images, the size limits a patch is held to.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "base/patch.h"
#include "base/settings.h"

/* A one-file diff of x.c whose hunk adds one line, for mail bodies. */
#define BODY_DIFF "---\n--- a/x.c\n+++ b/x.c\n@@ -1 +1,2 @@\n a\n+b\n"

/* Read buf as mails; exactly `want` patches are expected. */
static GPtrArray *read_mails(const char *buf, size_t len, guint want)
{
	GPtrArray *patches = NULL;
	g_autoptr(GError) err = NULL;
	unsigned skipped = 0;

	assert_int_equal(pk_patch_read_mails(&patches, &skipped, buf, len, &err), 0);
	assert_int_equal(patches->len, want);
	return patches;
}

struct from_case {
	const char *name;
	const char *mail;       /* headers and body, without the mbox "From " line */
	gboolean mbox;          /* prefix an mbox separator line */
	const char *want;       /* the commit message as read */
};

static const struct from_case from_cases[] = {
	{ "mboxrd: one '>' comes off",
	  "Subject: a\n\nFirst line.\n>From here on it is new.\n" BODY_DIFF,
	  TRUE, "First line.\nFrom here on it is new." },
	{ "mboxrd: a quoted From keeps one '>'",
	  "Subject: a\n\nHe wrote:\n>>From the start\n>>>From deeper\n" BODY_DIFF,
	  TRUE, "He wrote:\n>From the start\n>>From deeper" },
	{ "mboxrd: '>From' without a space and '> From' are text",
	  "Subject: a\n\n>Fromage\n> From x\n" BODY_DIFF,
	  TRUE, ">Fromage\n> From x" },
	{ "mboxrd: quoted-printable body is unquoted before decoding",
	  "Subject: a\nContent-Transfer-Encoding: quoted-printable\n\n"
	  ">From the caf=C3=A9\n" BODY_DIFF,
	  TRUE, "From the café" },
	{ "a single mail is not an mbox: nothing to undo",
	  "Subject: a\n\n>From here on\n" BODY_DIFF,
	  FALSE, ">From here on" },
};

static void test_mboxrd_from(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(from_cases); i++) {
		const struct from_case *c = &from_cases[i];
		g_autofree char *buf = g_strconcat(c->mbox ? "From x@y Mon Jan  1 00:00:00 2024\n" : "",
						   "From: A <a@x>\nMessage-Id: <1@x>\n", c->mail, NULL);
		g_autoptr(GPtrArray) patches = NULL;
		const struct pk_patch *p;

		print_message("case: %s\n", c->name);
		patches = read_mails(buf, strlen(buf), 1);
		p = patches->pdata[0];
		assert_string_equal(p->description, c->want);
	}
}

/* The escaped line must not split the mbox, and the mail after it is read. */
static void test_mboxrd_two_mails(void **state)
{
	const char *buf =
		"From x@y Mon Jan  1 00:00:00 2024\nSubject: one\n\n"
		">From 0fc61b6877e9beb20429effc599bc4bc6ec3a475 Mon Sep 17 00:00:00 2001\n"
		"From: B <b@x>\n" BODY_DIFF "\n"
		"From x@y Mon Jan  1 00:00:00 2024\nSubject: two\n\nsecond\n" BODY_DIFF;
	g_autoptr(GPtrArray) patches = read_mails(buf, strlen(buf), 2);
	const struct pk_patch *p = patches->pdata[0];

	assert_string_equal(p->subject, "one");
	assert_true(g_str_has_prefix(p->description, "From 0fc61b6877e9"));
	assert_string_equal(((struct pk_patch *)patches->pdata[1])->subject, "two");
}

struct charset_case {
	const char *name;
	const char *headers;    /* Content-Type and -Transfer-Encoding lines */
	const char *body;       /* the encoded commit message line */
	const char *want;       /* the message as UTF-8 */
};

static const struct charset_case charset_cases[] = {
	{ "iso-8859-1, quoted-printable",
	  "Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n",
	  "Signed-off-by: J=F6rg M=FCller", "Signed-off-by: Jörg Müller" },
	{ "ISO-8859-15, 8bit: the euro sign is 0xa4",
	  "Content-Type: text/plain; CHARSET=ISO-8859-15\nContent-Transfer-Encoding: 8bit\n",
	  "costs 5 \xa4", "costs 5 €" },
	{ "gbk, base64",
	  "Content-Type: text/plain; charset=gbk\nContent-Transfer-Encoding: base64\n",
	  NULL, "中文" },
	{ "windows-1252 quotes",
	  "Content-Type: text/plain; charset=windows-1252\nContent-Transfer-Encoding: 8bit\n",
	  "\x93quoted\x94", "\u201cquoted\u201d" },
	{ "utf-8, base64: unchanged",
	  "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n",
	  NULL, "naïve" },
	{ "no charset, 8bit latin-1: guessed, valid UTF-8",
	  "Content-Transfer-Encoding: 8bit\n",
	  "caf\xe9", "café" },
	{ "unknown charset, UTF-8 bytes: kept",
	  "Content-Type: text/plain; charset=x-no-such-charset\n",
	  "naïve", "naïve" },
};

/* Base64 bodies are built here: GBK and UTF-8 bytes of the wanted text. */
static char *charset_body(const struct charset_case *c)
{
	g_autofree char *bytes = NULL, *b64 = NULL;
	gsize n = 0;

	if (c->body)
		return g_strdup(c->body);
	if (strstr(c->headers, "gbk"))
		bytes = g_convert(c->want, -1, "GBK", "UTF-8", NULL, &n, NULL);
	else
		bytes = g_strdup(c->want), n = strlen(c->want);
	assert_non_null(bytes);
	g_autofree char *text = g_strdup_printf("%.*s\n" BODY_DIFF, (int)n, bytes);
	b64 = g_base64_encode((const guchar *)text, strlen(text));
	return g_steal_pointer(&b64);
}

static void test_charsets(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(charset_cases); i++) {
		const struct charset_case *c = &charset_cases[i];
		g_autofree char *body = charset_body(c);
		g_autofree char *buf = g_strconcat(
			"From: A <a@x>\nSubject: s\nMIME-Version: 1.0\n", c->headers, "\n",
			body, c->body ? "\n" BODY_DIFF : "\n", NULL);
		g_autoptr(GPtrArray) patches = NULL;
		const struct pk_patch *p;

		print_message("case: %s\n", c->name);
		patches = read_mails(buf, strlen(buf), 1);
		p = patches->pdata[0];
		assert_non_null(p->description);
		assert_true(g_utf8_validate(p->description, -1, NULL));
		assert_string_equal(p->description, c->want);
		assert_true(g_utf8_validate(p->diff, -1, NULL));
		assert_int_equal(p->files->len, 1);
	}
}

static void test_hunk_section(void **state)
{
	const char *diff = "--- a/x.c\n+++ b/x.c\n"
			   "@@ -10,2 +10,2 @@ static int foo_probe(struct device *dev)\n-a\n+b\n c\n"
			   "@@ -20 +20 @@\n-d\n+e\n";
	g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
	const struct pk_diff_file *f = p->files->pdata[0];

	assert_null(p->error);
	assert_int_equal(f->hunks->len, 2);
	assert_string_equal(((struct pk_hunk *)f->hunks->pdata[0])->section,
			    "static int foo_probe(struct device *dev)");
	assert_null(((struct pk_hunk *)f->hunks->pdata[1])->section);
}

struct apply_case {
	const char *name;
	const char *old;        /* the pre-image file */
	const char *hunks;      /* the diff's hunks for x.c */
	const char *want;       /* the post-image, NULL when it must not apply */
};

static const struct apply_case apply_cases[] = {
	{ "at its line", "a\nb\nc\nd\n", "@@ -2,2 +2,2 @@\n b\n-c\n+C\n", "a\nb\nC\nd\n" },
	{ "three lines further down", "x\ny\nz\na\nb\nc\nd\n", "@@ -2,2 +2,2 @@\n b\n-c\n+C\n",
	  "x\ny\nz\na\nb\nC\nd\n" },
	{ "insertion after line 1", "a\nb\n", "@@ -1,0 +2 @@\n+new\n", "a\nnew\nb\n" },
	{ "insertion at the top", "a\n", "@@ -0,0 +1 @@\n+top\n", "top\na\n" },
	{ "new file", "", "@@ -0,0 +1,2 @@\n+one\n+two\n", "one\ntwo\n" },
	{ "two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n",
	  "@@ -1,2 +1,2 @@\n-1\n+one\n 2\n@@ -7,2 +7,3 @@\n 7\n+7.5\n 8\n",
	  "one\n2\n3\n4\n5\n6\n7\n7.5\n8\n" },
	{ "context that is nowhere", "a\nb\nc\n", "@@ -2,2 +2,2 @@\n b\n-x\n+y\n", NULL },
	{ "no final newline", "a\nb", "@@ -2 +2 @@\n-b\n+B\n", "a\nB\n" },
};

static void test_apply(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(apply_cases); i++) {
		const struct apply_case *c = &apply_cases[i];
		g_autofree char *diff = g_strconcat("--- a/x.c\n+++ b/x.c\n", c->hunks, NULL);
		g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
		g_autofree char *got = NULL;

		print_message("case: %s\n", c->name);
		assert_null(p->error);
		got = pk_diff_file_apply(p->files->pdata[0], c->old);
		if (!c->want)
			assert_null(got);
		else
			assert_string_equal(got, c->want);
	}
}

/*
 * Mailer damage: a long line broken at a blank, the rest on a line of its
 * own.  The long lines below are longer than any mailer keeps (is_wrapped()).
 */
#define LONG_SECTION " @@ static int sched_domain_debug_one(struct sched_domain *sd, int cpu, int"
#define LONG_ADDED "+\tpr_err(\"sched: the domain of this cpu does not span the cpu itself, which"

struct damage_case {
	const char *name;
	const char *diff;
	const char *error;      /* expected start of patch->error, NULL for none */
	guint hunks;            /* hunks read in the first file */
	guint lines;            /* lines of its first hunk */
	const char *damage;     /* the repairs: "line:file_line" joined by ",", "" for none */
	const char *section;    /* the first hunk's section, NULL to skip */
	const char *text;       /* the text of the first hunk's line `at`, NULL to skip */
	guint at;
};

static const struct damage_case damage_cases[] = {
	{ "wrapped hunk header",
	  "--- a/k.c\n+++ b/k.c\n@@ -120,2 +120,2" LONG_SECTION "\nlevel, struct cpumask *groupmask)\n a\n-b\n+c\n",
	  NULL, 1, 3, "4:120", "static int sched_domain_debug_one(struct sched_domain *sd, int cpu, int "
	  "level, struct cpumask *groupmask)", NULL, 0 },
	{ "wrapped added line",
	  "--- a/k.c\n+++ b/k.c\n@@ -10,2 +10,3 @@\n a\n" LONG_ADDED "\nis a bug\\n\");\n b\n",
	  NULL, 1, 3, "6:11", NULL,
	  "\tpr_err(\"sched: the domain of this cpu does not span the cpu itself, which is a bug\\n\");", 1 },
	{ "a line wrapped twice",
	  "--- a/k.c\n+++ b/k.c\n@@ -10,2 +10,3 @@\n a\n" LONG_ADDED
	  "\nis a bug, and the rest of the text is long enough to be wrapped by the mailer\nonce more\\n\");\n b\n",
	  NULL, 1, 3, "6:11,7:11", NULL, NULL, 0 },
	{ "CRLF ends and a wrapped removed line",
	  "--- a/k.c\r\n+++ b/k.c\r\n@@ -10,2 +10,1 @@\r\n-\tpr_err(\"sched: the domain of this cpu does not span "
	  "the cpu itself, which\r\nis a bug\\n\");\r\n a\r\n",
	  NULL, 1, 2, "5:10", NULL, NULL, 0 },
	{ "prose after a hunk cut short is not a wrapped line",
	  "--- a/k.c\n+++ b/k.c\n@@ -10,4 +10,4 @@\n a\n-b\n+c\n\nThanks,\nA. Reviewer\n\n",
	  "line 8: hunk ends before its header says", 1, 4, "", NULL, NULL, 0 },
	{ "a wrap the counts do not confirm is left unread",
	  "--- a/k.c\n+++ b/k.c\n@@ -10,2 +10,2 @@\n-a\n" LONG_ADDED "\nis a bug\\n\");\n-x\n c\n",
	  "line 6: hunk ends before its header says", 1, 2, "", NULL, NULL, 0 },
	{ "tabs turned into blanks: reported, read as it is",
	  "--- a/k.c\n+++ b/k.c\n@@ -10,3 +10,3 @@\n        if (ret)\n-               return ret;\n"
	  "+               return -EIO;\n        return 0;\n",
	  NULL, 1, 4, "4:10", NULL, "               return -EIO;", 2 },
	{ "blanks that are the file's own indentation are no damage",
	  "--- a/k.py\n+++ b/k.py\n@@ -10,3 +10,3 @@\n     if ret:\n-        return ret\n"
	  "+        return -1\n     return 0\n",
	  NULL, 1, 4, "", NULL, NULL, 0 },
	{ "the unrepairable file keeps the hunks before it and the next file is read",
	  "--- a/k.c\n+++ b/k.c\n@@ -1 +1 @@\n-a\n+b\n@@ -10,3 +10,3 @@\n-a\n+b\n"
	  "diff --git a/l.c b/l.c\n--- a/l.c\n+++ b/l.c\n@@ -1 +1 @@\n-x\n+y\n",
	  "line 9: hunk ends before its header says", 2, 2, "", NULL, NULL, 0 },
};

static void test_damage(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(damage_cases); i++) {
		const struct damage_case *c = &damage_cases[i];
		g_autoptr(pk_patch) p = pk_patch_parse_diff(c->diff, strlen(c->diff));
		g_autoptr(GString) got = g_string_new(NULL);
		const struct pk_diff_file *f = p->files->pdata[0];
		const struct pk_hunk *h;

		print_message("case: %s\n", c->name);
		if (c->error)
			assert_true(p->error && g_str_has_prefix(p->error, c->error));
		else
			assert_null(p->error);
		assert_int_equal(f->hunks->len, c->hunks);
		h = f->hunks->pdata[0];
		assert_int_equal(h->lines->len, c->lines);
		for (guint j = 0; j < p->damage->len; j++) {
			const struct pk_patch_damage *d = p->damage->pdata[j];
			g_string_append_printf(got, "%s%d:%d", j ? "," : "", d->line, d->file_line);
			assert_string_equal(d->path, "k.c");
		}
		assert_string_equal(got->str, c->damage);
		if (c->section)
			assert_string_equal(h->section, c->section);
		if (c->text)
			assert_string_equal(((struct pk_diff_line *)h->lines->pdata[c->at])->text, c->text);
		/* what apply applies stays the text as sent */
		assert_memory_equal(p->diff, c->diff, strlen(c->diff));
	}
}

/* A damaged mail names the line of the mail, counted from its mbox "From " line. */
static void test_damage_mail_line(void **state)
{
	const char *mbox =
		"From 1 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\nSubject: [PATCH] k: x\n"
		"Date: Mon, 1 Jan 2024 00:00:00 +0000\n\nWhy.\n---\n k.c | 1 +\n\n"
		"diff --git a/k.c b/k.c\n--- a/k.c\n+++ b/k.c\n@@ -120,1 +120,2" LONG_SECTION "\nlevel)\n a\n+b\n-- \n2.40.0\n";
	g_autoptr(GPtrArray) mails = read_mails(mbox, strlen(mbox), 1);
	const struct pk_patch *p = mails->pdata[0];
	g_autofree char *what = NULL;

	assert_null(p->error);
	assert_int_equal(p->damage->len, 1);
	what = pk_patch_damage_describe(p, p->damage->pdata[0]);
	assert_string_equal(what, "line 14 (the end of a hunk header) was wrapped by the mailer");
}

#define MAIL_HEAD "From 1 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\nSubject: [PATCH] k: x\n" \
	"Date: Mon, 1 Jan 2024 00:00:00 +0000\n"

struct mail_damage_case {
	const char *name;
	const char *mail;
	const char *damage;     /* pk_patch_damage_describe() of the first repair, NULL for none */
	const char *added;      /* the text of the first hunk's '+' line */
};

static const struct mail_damage_case mail_damage_cases[] = {
	{ "quoted-printable the mail does not declare",
	  MAIL_HEAD "\nWhy.\n---\n--- a/k.c\n+++ b/k.c\n@@ -10,2 +10,2 @@\n \tint ret =3D 0;\n"
	  "-\tpr_info(\"k: probing the device that has a rather long name here %d\\n\", =\nret);\n"
	  "+\tpr_err(\"k: probing the device that has a rather long name here %d\\n\", r=\net);\n",
	  "line 11 (and the diff around it) is still quoted-printable, which the mail does not declare",
	  "\tpr_err(\"k: probing the device that has a rather long name here %d\\n\", ret);" },
	{ "a line of C that ends in '=' is no quoted-printable",
	  MAIL_HEAD "\nWhy.\n---\n--- a/k.c\n+++ b/k.c\n@@ -10,2 +10,3 @@\n \tint ret =\n+\t\tx;\n \t\t0;\n",
	  NULL, "\t\tx;" },
	{ "format=flowed is undone as git am does: no damage",
	  "From 1 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\nSubject: [PATCH] k: x\n"
	  "Content-Type: text/plain; charset=UTF-8; format=flowed\n\nWhy.\n---\n--- a/k.c\n+++ b/k.c\n"
	  "@@ -10,2 +10,2 @@ static int k_probe(struct \nplatform_device *pdev)\n  \tint a;\n"
	  "-\tpr_info(\"x\\n\");\n+\tpr_err(\"x\\n\");\n-- \n2.40.0\n",
	  NULL, "\tpr_err(\"x\\n\");" },
};

static void test_mail_damage(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(mail_damage_cases); i++) {
		const struct mail_damage_case *c = &mail_damage_cases[i];
		g_autoptr(GPtrArray) mails = NULL;
		const struct pk_patch *p;
		const struct pk_hunk *h;
		const char *added = NULL;

		print_message("case: %s\n", c->name);
		mails = read_mails(c->mail, strlen(c->mail), 1);
		p = mails->pdata[0];
		assert_null(p->error);
		if (c->damage) {
			g_autofree char *what = NULL;
			assert_true(p->damage->len >= 1);
			what = pk_patch_damage_describe(p, p->damage->pdata[0]);
			assert_string_equal(what, c->damage);
		} else {
			assert_int_equal(p->damage->len, 0);
		}
		h = ((struct pk_diff_file *)p->files->pdata[0])->hunks->pdata[0];
		for (guint j = 0; j < h->lines->len && !added; j++)
			if (((struct pk_diff_line *)h->lines->pdata[j])->kind == '+')
				added = ((struct pk_diff_line *)h->lines->pdata[j])->text;
		assert_string_equal(added, c->added);
	}
}

/*
 * The size limits every door asks before a scan: files and hunk lines
 * (context counts: it is read as the rest), 0 being none, the key named;
 * a patch its reader did not read whole says so itself.
 */
static void test_over_limits(void **state)
{
	static const char two[] = "--- a/a.c\n+++ b/a.c\n@@ -1 +1,2 @@\n a\n+b\n"
				  "--- a/b.c\n+++ b/b.c\n@@ -1 +1,2 @@\n a\n+b\n";
	static const struct {
		unsigned max_files, max_lines;
		const char *want;   /* NULL: within */
	} cases[] = {
		{ 2, 4, NULL },
		{ 0, 0, NULL },
		{ 1, 0, "the patch touches 2 files, more than the limit of 1 ([policy] max_files)" },
		{ 0, 3, "the diff has 4 lines, more than the limit of 3 ([policy] max_lines)" },
		{ 1, 3, "the patch touches 2 files, more than the limit of 1 ([policy] max_files)" },
	};
	g_autoptr(pk_patch) p = pk_patch_parse_diff(two, strlen(two));

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct pk_policy policy = PK_POLICY_DEFAULT;
		g_autofree char *over = NULL;

		policy.max_files = cases[i].max_files;
		policy.max_lines = cases[i].max_lines;
		over = pk_patch_over_limits(p, &policy);
		if (cases[i].want)
			assert_string_equal(over, cases[i].want);
		else
			assert_null(over);
	}
	p->over_limit = g_strdup("x.bin is 9 bytes, more than the limit of 8 bytes of a diff ([policy] max_mail_mb)");
	{
		struct pk_policy none = PK_POLICY_DEFAULT;
		g_autofree char *over = NULL;

		none.max_files = none.max_lines = 0;
		over = pk_patch_over_limits(p, &none);
		assert_string_equal(over, p->over_limit);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_over_limits),
		cmocka_unit_test(test_mboxrd_from),
		cmocka_unit_test(test_mboxrd_two_mails),
		cmocka_unit_test(test_charsets),
		cmocka_unit_test(test_hunk_section),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_damage),
		cmocka_unit_test(test_damage_mail_line),
		cmocka_unit_test(test_mail_damage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
