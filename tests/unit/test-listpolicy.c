/*
 * test-listpolicy.c - which list a mail is of, and whose a tested
 * patch's outcome is (report/listpolicy.h): the matcher's order, the
 * subject prefixes, every rule of pk_reply_judge() on review models as
 * review.h makes them (verdict, before, after, relinked), the compiler's
 * missing names (gcc's words in C and UTF-8 locales, ld's), and the
 * effect key that makes a resend the same change.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "base/patch.h"
#include "report/listpolicy.h"

static char *write_tmp(const char *text)
{
	char *path = NULL;
	int fd = g_file_open_tmp("printkbot-lists-XXXXXX.conf", &path, NULL);

	assert_true(fd >= 0);
	assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* List-Id first, then To/Cc in the file's order, then the source's list; none: [daemon] reply_on. */
static void test_match(void **state)
{
	g_autofree char *path = write_tmp(
		"[daemon]\nreply_on = always\n"
		"[list serial]\naddress = linux-serial@vger.kernel.org\n"
		"[list lkml]\naddress = linux-kernel@vger.kernel.org\nreply = off\n"
		"[list net]\naddress = netdev@vger.kernel.org\nlist_id = netdev.example.org\npositive = true\n");
	const char *const both[] = { "Linux-Kernel@vger.kernel.org", "linux-serial@VGER.kernel.org", NULL };
	const char *const lkml[] = { "linux-kernel@vger.kernel.org", NULL };
	const char *const none[] = { "someone@example.org", NULL };
	struct pk_list_match m;
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	/* the copy linux-serial delivered, though LKML comes first in the To */
	pk_list_match(&m, c.lists, c.daemon.reply_on, "Linux Serial <linux-serial.vger.kernel.org>", both, NULL);
	assert_string_equal(m.list->name, "serial");
	assert_string_equal(m.how, "List-Id");
	assert_int_equal(m.policy.reply, PK_REPLY_CHANGES);
	assert_string_equal(m.address, "linux-serial@vger.kernel.org");
	/* a List-Id given, not the vger form */
	pk_list_match(&m, c.lists, c.daemon.reply_on, "<NetDev.Example.org>", none, NULL);
	assert_string_equal(m.list->name, "net");
	assert_true(m.policy.positive);
	/* no List-Id (a mail sent to the bot straight): the first group of the file in To/Cc */
	pk_list_match(&m, c.lists, c.daemon.reply_on, NULL, both, NULL);
	assert_string_equal(m.list->name, "serial");
	assert_string_equal(m.how, "To/Cc");
	pk_list_match(&m, c.lists, c.daemon.reply_on, "other.example.org", lkml, NULL);
	assert_string_equal(m.list->name, "lkml");
	assert_int_equal(m.policy.reply, PK_REPLY_OFF);
	/* the source's list = names the list when the mail does not */
	pk_list_match(&m, c.lists, c.daemon.reply_on, NULL, none, "Netdev <netdev@vger.kernel.org>");
	assert_string_equal(m.list->name, "net");
	assert_string_equal(m.how, "the source's list");
	/* none: [daemon] reply_on, with a group's defaults, the source's list to Cc */
	pk_list_match(&m, c.lists, c.daemon.reply_on, "<x.example.org>", none, "x@example.org");
	assert_null(m.list);
	assert_int_equal(m.policy.reply, PK_REPLY_ALWAYS);
	assert_true(m.policy.to_author && m.policy.cc_list);
	assert_int_equal(m.policy.max_per_day, 50);
	assert_string_equal(m.address, "x@example.org");
	pk_config_clear(&c);
	unlink(path);

	/* the default: a list without a group is not answered */
	path = (g_free(path), write_tmp("[list serial]\naddress = linux-serial@vger.kernel.org\n"));
	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	pk_list_match(&m, c.lists, c.daemon.reply_on, NULL, lkml, NULL);
	assert_null(m.list);
	assert_int_equal(m.policy.reply, PK_REPLY_OFF);
	pk_config_clear(&c);
	unlink(path);
}

static void test_subject_prefixes(void **state)
{
	const char *const tty[] = { "tty-next", "tty-linus", NULL };

	assert_true(pk_list_subject_ok(NULL, "[PATCH] anything"));
	assert_true(pk_list_subject_ok(tty, "[PATCH tty-next v2 1/3] serial: 8250: reword"));
	assert_true(pk_list_subject_ok(tty, "[PATCH v2] [TTY-LINUS] serial: fix"));
	assert_true(pk_list_subject_ok(tty, "[RFC PATCH tty-next,v3] x"));
	assert_false(pk_list_subject_ok(tty, "[PATCH v2 1/3] serial: 8250: tty-next in the title"));
	assert_false(pk_list_subject_ok(tty, "serial: no tag"));
	assert_false(pk_list_subject_ok(tty, "[PATCH tty-next-ish] x"));
	assert_false(pk_list_subject_ok(tty, NULL));
	assert_false(pk_list_subject_ok(tty, "[PATCH tty-next"));
}

/* A review model's members as review.h writes them (only those the rules read). */
static JsonObject *model(const char *verdict, bool built, const char *boot_status, const char *errors,
			 const char *after_boot, const char *console)
{
	g_autofree char *text = NULL;
	g_autoptr(JsonBuilder) b = json_builder_new();
	JsonNode *root;
	JsonObject *o;

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "verdict");
	json_builder_add_string_value(b, verdict);
	json_builder_set_member_name(b, "reason");
	json_builder_add_string_value(b, "why");
	json_builder_set_member_name(b, "before");
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "built");
	json_builder_add_boolean_value(b, built);
	json_builder_set_member_name(b, "boot_status");
	boot_status ? json_builder_add_string_value(b, boot_status) : json_builder_add_null_value(b);
	json_builder_end_object(b);
	json_builder_set_member_name(b, "after");
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "build_errors");
	errors ? json_builder_add_string_value(b, errors) : json_builder_add_null_value(b);
	json_builder_set_member_name(b, "boot_status");
	after_boot ? json_builder_add_string_value(b, after_boot) : json_builder_add_null_value(b);
	json_builder_set_member_name(b, "console_tail");
	console ? json_builder_add_string_value(b, console) : json_builder_add_null_value(b);
	json_builder_end_object(b);
	json_builder_end_object(b);
	root = json_builder_get_root(b);
	o = json_object_ref(json_node_get_object(root));
	json_node_unref(root);
	return o;
}

struct judge_case {
	const char *name;
	JsonObject *model;
	const char *const *absent;
	bool own_base;
	enum pk_reply_class cls;
	const char *rule;
	const char *why_has;
};

static void test_judge(void **state)
{
	static const char *const files[] = { "drivers/tty/serial/8250/8250_port.c", "include/linux/serial_8250.h",
					     NULL };
	static const char *const functions[] = { "serial8250_config_port", NULL };
	static const char *const lacks[] = { "irq_get_nr_irqs", NULL };
	const char *err_ours = "drivers/tty/serial/8250/8250_port.c: In function 'serial8250_do_startup':\n"
			       "drivers/tty/serial/8250/8250_port.c:2301:9: error: expected ';' before 'return'\n";
	const char *err_other = "drivers/tty/serial/8250/8250_core.c:12:3: error: 'foo' undeclared\n";
	const char *err_link = "ld: vmlinux.o: in function `x':\n8250_port.c:(.text+0x1c): undefined reference "
			       "to `crc8'\n";
	const char *sandbox = "scripts/x.sh: Read-only file system\nThe build ran in printkbot's sandbox (no "
			      "network, ...), and something was denied there: cp: Read-only file system\n";
	struct judge_case cases[] = {
		{ "console-changed", model("console-changed", true, "ok", NULL, "ok", NULL), NULL, false,
		  PK_REPLY_AUTHORS, "console-changed", "changes what the kernel prints" },
		{ "no-visible-change", model("no-visible-change", true, "ok", NULL, "ok", NULL), NULL, false,
		  PK_REPLY_POSITIVE, "no-visible-change", NULL },
		{ "does-not-apply", model("does-not-apply", false, NULL, NULL, NULL, NULL), NULL, false,
		  PK_REPLY_LIMIT, "does-not-apply", "no base the bot has takes it: why" },
		{ "not-built", model("not-built", true, "ok", NULL, "ok", NULL), NULL, false,
		  PK_REPLY_LIMIT, "not-built", NULL },
		{ "refused", model("refused", false, NULL, NULL, NULL, NULL), NULL, false,
		  PK_REPLY_LIMIT, "refused", "policy" },
		{ "no-churn", model("no-churn", false, NULL, NULL, NULL, NULL), NULL, false,
		  PK_REPLY_LIMIT, "no-churn", NULL },
		{ "the base did not build", model("build-failed", false, NULL, err_ours, NULL, NULL), NULL, false,
		  PK_REPLY_LIMIT, "base-broken", "does not build itself" },
		{ "the base did not boot", model("boot-failed", true, "panic", NULL, "panic", NULL), NULL, false,
		  PK_REPLY_LIMIT, "base-broken", "does not boot itself" },
		{ "errors in the patch's file", model("build-failed", true, "ok", err_ours, NULL, NULL), NULL, false,
		  PK_REPLY_AUTHORS, "build-broken", "8250_port.c" },
		{ "errors elsewhere", model("build-failed", true, "ok", err_other, NULL, NULL), NULL, false,
		  PK_REPLY_LIMIT, "errors-elsewhere", NULL },
		{ "the linker names the patch's file", model("build-failed", true, "ok", err_link, NULL, NULL), NULL,
		  false, PK_REPLY_AUTHORS, "build-broken", NULL },
		{ "the base lacks a name", model("build-failed", true, "ok", err_ours, NULL, NULL), lacks, false,
		  PK_REPLY_LIMIT, "base-lacks", "(irq_get_nr_irqs) occur in no C source or header" },
		{ "the series' own base lacks it: a typo", model("build-failed", true, "ok", err_ours, NULL, NULL),
		  lacks, true, PK_REPLY_AUTHORS, "build-broken", NULL },
		{ "the sandbox denied it", model("build-failed", true, "ok", sandbox, NULL, NULL), NULL, false,
		  PK_REPLY_LIMIT, "lab-failed", "sandbox" },
		{ "QEMU failed", model("boot-failed", true, "ok", NULL, "failed", "qemu: could not open"), NULL,
		  false, PK_REPLY_LIMIT, "lab-failed", NULL },
		{ "a panic in the patch's function", model("boot-failed", true, "ok", NULL, "panic",
		  "BUG: kernel NULL pointer dereference\nRIP: 0010:serial8250_config_port+0x1c/0x90\n"), NULL, false,
		  PK_REPLY_AUTHORS, "boot-broken", "serial8250_config_port()" },
		{ "a WARN at the patch's file", model("boot-failed", true, "ok", NULL, "timeout",
		  "WARNING: CPU: 0 PID: 1 at drivers/tty/serial/8250/8250_port.c:123 x+0x5\n"), NULL, false,
		  PK_REPLY_AUTHORS, "boot-broken", "8250_port.c" },
		{ "a hang that names nothing", model("boot-failed", true, "ok", NULL, "timeout", "Freeing unused "
		  "kernel memory\n"), NULL, false, PK_REPLY_LIMIT, "console-elsewhere", NULL },
		/* a function's name inside another's is no mention of it */
		{ "a longer name", model("boot-failed", true, "ok", NULL, "panic",
		  "RIP: 0010:my_serial8250_config_port_x+0x1c/0x90\n"), NULL, false, PK_REPLY_LIMIT,
		  "console-elsewhere", NULL },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct pk_reply_facts facts = { files, functions, cases[i].absent, cases[i].own_base, NULL };
		struct pk_reply_judgement j;

		pk_reply_judge(&j, cases[i].model, &facts);
		if (j.cls != cases[i].cls || strcmp(j.rule, cases[i].rule) ||
		    (cases[i].why_has && !strstr(j.why, cases[i].why_has)))
			fail_msg("%s: %d %s (%s), wanted %d %s", cases[i].name, j.cls, j.rule, j.why, cases[i].cls,
				 cases[i].rule);
		pk_reply_judgement_clear(&j);
		json_object_unref(cases[i].model);
	}
	{
		/* a series no base takes whole: whatever its patches did, not on the author's tree */
		static const char *const verdicts[] = { "console-changed", "build-failed", "no-visible-change" };
		struct pk_reply_facts facts = { files, functions, NULL, false, "printkbot-base: patch 1/3: a.c: hunk 1 "
						"does not apply" };

		for (size_t i = 0; i < G_N_ELEMENTS(verdicts); i++) {
			JsonObject *m = model(verdicts[i], true, "ok", err_ours, "ok", NULL);
			struct pk_reply_judgement j;

			pk_reply_judge(&j, m, &facts);
			assert_int_equal(j.cls, PK_REPLY_LIMIT);
			assert_string_equal(j.rule, "series-does-not-apply");
			assert_non_null(strstr(j.why, "patch 1/3: a.c: hunk 1 does not apply"));
			pk_reply_judgement_clear(&j);
			json_object_unref(m);
		}
		/* the patch that did not apply is does-not-apply itself */
		{
			JsonObject *m = model("does-not-apply", false, NULL, NULL, NULL, NULL);
			struct pk_reply_judgement j;

			pk_reply_judge(&j, m, &facts);
			assert_string_equal(j.rule, "does-not-apply");
			pk_reply_judgement_clear(&j);
			json_object_unref(m);
		}
	}
	{
		/* a kernel that did not link for an option the patch does not select: the author's */
		JsonObject *m = model("build-failed", true, "ok", err_other, NULL, NULL);
		struct pk_reply_facts facts = { files, functions, NULL, false, NULL };
		struct pk_reply_judgement j;

		json_object_set_object_member(m, "relinked", json_object_new());
		pk_reply_judge(&j, m, &facts);
		assert_int_equal(j.cls, PK_REPLY_AUTHORS);
		assert_string_equal(j.rule, "missing-select");
		pk_reply_judgement_clear(&j);
		json_object_unref(m);
	}
}

/* off mails nothing, changes the author's (and positive ones when asked), always all. */
static void test_policy_mails(void **state)
{
	struct pk_reply_judgement authors = { PK_REPLY_AUTHORS, "console-changed", NULL };
	struct pk_reply_judgement positive = { PK_REPLY_POSITIVE, "no-visible-change", NULL };
	struct pk_reply_judgement limit = { PK_REPLY_LIMIT, "does-not-apply", NULL };
	struct pk_reply_policy p = { .reply = PK_REPLY_OFF };

	assert_false(pk_reply_policy_mails(&p, &authors));
	p.reply = PK_REPLY_CHANGES;
	assert_true(pk_reply_policy_mails(&p, &authors));
	assert_false(pk_reply_policy_mails(&p, &positive));
	assert_false(pk_reply_policy_mails(&p, &limit));
	p.positive = true;
	assert_true(pk_reply_policy_mails(&p, &positive));
	assert_false(pk_reply_policy_mails(&p, &limit));
	p.reply = PK_REPLY_ALWAYS;
	assert_true(pk_reply_policy_mails(&p, &limit));
}

static void test_missing_names(void **state)
{
	/* as gcc 12 writes them in a UTF-8 locale and in C, and ld */
	const char *errors =
		"drivers/tty/serial/8250/8250_port.c:12:9: error: implicit declaration of function "
		"‘irq_get_nr_irqs’; did you mean ‘irq_get_irq_data’? [-Werror=implicit-function-declaration]\n"
		"drivers/a.c:3:5: error: 'UART_FOO' undeclared (first use in this function)\n"
		"drivers/a.c:4:5: error: ‘UART_FOO’ undeclared (first use in this function)\n"
		"drivers/a.c:9:1: error: unknown type name 'timer_thing_t'\n"
		"drivers/a.c:10:1: error: implicit declaration of function 'timer_container_of'\n"
		"8250_port.c:(.text+0x1c): undefined reference to `crc8'\n"
		"drivers/a.c:11:1: error: expected ';' before 'return'\n";
	g_autoptr(GPtrArray) names = pk_reply_missing_names(errors);

	assert_int_equal(names->len, 5);
	assert_string_equal(names->pdata[0], "irq_get_nr_irqs");
	assert_string_equal(names->pdata[1], "UART_FOO");
	assert_string_equal(names->pdata[2], "timer_thing_t");
	assert_string_equal(names->pdata[3], "timer_container_of");
	assert_string_equal(names->pdata[4], "crc8");
	g_ptr_array_unref(g_steal_pointer(&names));
	names = pk_reply_missing_names(NULL);
	assert_int_equal(names->len, 0);
}

static void test_patch_functions(void **state)
{
	const char *diff =
		"diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n"
		"@@ -10,3 +10,3 @@ static int serial8250_probe(struct platform_device *dev)\n"
		" {\n-\tpr_info(\"a\\n\");\n+\tpr_info(\"b\\n\");\n"
		"@@ -40,3 +40,3 @@ struct uart_ops serial8250_pops = {\n a\n-b\n+c\n"
		"@@ -60,3 +60,3 @@ void __init\tserial8250_init (void)\n a\n-b\n+c\n"
		"@@ -80,3 +80,3 @@ static int serial8250_probe(struct platform_device *dev)\n a\n-b\n+c\n"
		"@@ -99,3 +99,3 @@ if (x)\n a\n-b\n+c\n";
	g_autoptr(pk_patch) p = pk_patch_parse_diff(diff, strlen(diff));
	g_autoptr(GPtrArray) f = pk_reply_patch_functions(p->files);

	assert_int_equal(f->len, 2);
	assert_string_equal(f->pdata[0], "serial8250_probe");
	assert_string_equal(f->pdata[1], "serial8250_init");
}

/* A member set in a model given as JSON text. */
static JsonObject *parse(const char *json)
{
	g_autoptr(JsonParser) p = json_parser_new();

	assert_true(json_parser_load_from_data(p, json, -1, NULL));
	return json_object_ref(json_node_get_object(json_parser_get_root(p)));
}

/* The same effect whatever the line numbers and the order; another text or file is another. */
static void test_effect_key(void **state)
{
	JsonObject *v1 = parse("{\"verdict\":\"console-changed\",\"findings\":["
			       "{\"kind\":\"text-changed\",\"file\":\"a.c\",\"line\":10,\"old_text\":\"x\",\"new_text\":\"y\"},"
			       "{\"kind\":\"level-changed\",\"file\":\"a.c\",\"line\":20,\"old_level\":\"err\",\"new_level\":\"info\"}],"
			       "\"console\":[{\"kind\":\"text-changed\",\"file\":\"a.c\",\"line\":10,\"func\":\"f\","
			       "\"old_side\":\"<6>x\",\"new_side\":\"<6>y\"}],\"index\":[]}");
	JsonObject *v2 = parse("{\"verdict\":\"console-changed\",\"findings\":["
			       "{\"kind\":\"level-changed\",\"file\":\"a.c\",\"line\":22,\"old_level\":\"err\",\"new_level\":\"info\"},"
			       "{\"kind\":\"text-changed\",\"file\":\"a.c\",\"line\":12,\"old_text\":\"x\",\"new_text\":\"y\"}],"
			       "\"console\":[{\"kind\":\"text-changed\",\"file\":\"a.c\",\"line\":12,\"func\":\"f\","
			       "\"old_side\":\"<6>x\",\"new_side\":\"<6>y\"}],\"index\":[]}");
	JsonObject *other = parse("{\"verdict\":\"console-changed\",\"findings\":["
				  "{\"kind\":\"text-changed\",\"file\":\"a.c\",\"line\":10,\"old_text\":\"x\",\"new_text\":\"z\"},"
				  "{\"kind\":\"level-changed\",\"file\":\"a.c\",\"line\":20,\"old_level\":\"err\",\"new_level\":\"info\"}],"
				  "\"console\":[{\"kind\":\"text-changed\",\"file\":\"a.c\",\"line\":10,\"func\":\"f\","
				  "\"old_side\":\"<6>x\",\"new_side\":\"<6>z\"}],\"index\":[]}");
	g_autofree char *k1 = pk_reply_effect_key(v1), *k2 = pk_reply_effect_key(v2);
	g_autofree char *k3 = pk_reply_effect_key(other);

	assert_int_equal(strlen(k1), 64);
	assert_string_equal(k1, k2);
	assert_string_not_equal(k1, k3);
	json_object_unref(v1);
	json_object_unref(v2);
	json_object_unref(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_subject_prefixes),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_policy_mails),
		cmocka_unit_test(test_missing_names),
		cmocka_unit_test(test_patch_functions),
		cmocka_unit_test(test_effect_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
