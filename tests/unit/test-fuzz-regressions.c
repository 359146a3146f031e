/*
 * test-fuzz-regressions.c - every input in tests/data/fuzz-regressions/
 * through the calls of the fuzz target it was found by (tests/fuzz/),
 * with the same checks.  Plainly it must not crash; under `make unit-asan`
 * it must not leak or touch memory it should not either.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config/config.h"
#include "analysis/kmsg.h"
#include "base/patch.h"
#include "analysis/scan.h"
#include "base/util.h"
#include "lab/apply.h"
#include "lab/policy.h"

static void replay_mail(const char *buf, size_t len)
{
	GPtrArray *patches = NULL;

	if (pk_patch_read_mails(&patches, NULL, buf, len, NULL) != 0)
		return;
	/* what fuzz-mail checks: every string of a patch is valid UTF-8 */
	for (guint i = 0; i < patches->len; i++) {
		const struct pk_patch *p = patches->pdata[i];
		const char *strs[] = { p->subject, p->author, p->author_name, p->author_email,
				       p->description, p->message_id, p->date };

		for (size_t k = 0; k < G_N_ELEMENTS(strs); k++)
			assert_true(!strs[k] || g_utf8_validate(strs[k], -1, NULL));
	}
	g_ptr_array_unref(patches);
}

static void replay_scan(const char *buf, size_t len)
{
	struct pk_patch *patch = pk_patch_parse_diff(buf, len);
	struct pk_scan *scan = pk_scan(patch);

	assert_true(scan->verdict != PK_VERDICT_NONE);
	for (guint i = 0; i < patch->files->len && i < 8; i++)
		g_free(pk_diff_file_apply(patch->files->pdata[i], ""));
	pk_scan_free(scan);
	pk_patch_free(patch);
}

static void replay_capture(const char *buf, size_t len)
{
	pk_capture_free(pk_capture_parse(buf, len));
}

static void replay_record(const char *buf, size_t len)
{
	char *why = NULL;
	struct pk_record *rec = pk_record_parse(buf, len, &why);

	assert_true(!rec != !why);
	pk_record_free(rec);
	g_free(why);
}

static void replay_index(const char *buf, size_t len)
{
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	g_autoptr(GString) problems = g_string_new(NULL);

	pk_index_parse(out, buf, len, problems);
}

static void replay_config(const char *buf, size_t len)
{
	g_autofree char *path = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_config c;
	int fd = g_file_open_tmp("printkbot-fuzz-XXXXXX.conf", &path, NULL);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	if (pk_config_load(&c, path, &err) == 0)
		pk_config_clear(&c);
	unlink(path);
}

/* what fuzz-policy-apply checks: libgit2 reads an allowed patch as the policy saw it */
static void replay_policy_apply(const char *buf, size_t len)
{
	struct pk_policy policy = PK_POLICY_DEFAULT;
	g_autoptr(pk_patch) patch = pk_patch_parse_diff(buf, len);
	g_autofree char *reason = NULL;

	policy.sandbox = PK_SANDBOX_OFF;
	if (pk_policy_allows(&policy, patch, &reason)) {
		g_autofree char *why = pk_apply_refusal(patch);
		assert_null(why);
	} else {
		assert_non_null(reason);
	}
}

static const struct {
	const char *dir;
	void (*replay)(const char *buf, size_t len);
} targets[] = {
	{ "mail", replay_mail },
	{ "scan", replay_scan },
	{ "capture", replay_capture },
	{ "record", replay_record },
	{ "index", replay_index },
	{ "config", replay_config },
	{ "policy-apply", replay_policy_apply },
};

static void test_replay(void **state)
{
	unsigned n = 0;

	for (size_t t = 0; t < G_N_ELEMENTS(targets); t++) {
		g_autofree char *dir = g_build_filename(PK_SRCDIR, "tests", "data", "fuzz-regressions",
							targets[t].dir, NULL);
		g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
		const char *name;

		while (d && (name = g_dir_read_name(d))) {
			g_autofree char *path = g_build_filename(dir, name, NULL);
			g_autofree char *buf = NULL;
			size_t len = 0;

			assert_int_equal(pk_read_file(&buf, &len, path, 16 << 20, NULL), 0);
			print_message("%s/%s (%zu bytes)\n", targets[t].dir, name, len);
			targets[t].replay(buf, len);
			n++;
		}
	}
	assert_true(n > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay),
	};

	return cmocka_run_group_tests_name("fuzz-regressions", tests, NULL, NULL);
}
