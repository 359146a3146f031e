/*
 * test-outbox.c - the reply outbox Maildir: names from Message-IDs,
 * delivery through tmp/ into new/, a second delivery of one Message-ID
 * adding nothing, the move to cur/ after a send, and what a restart finds.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "report/outbox.h"
#include "base/util.h"
#include "tinyfs.h"

static char *tmpdir;

static guint count_in(const char *sub)
{
	g_autofree char *dir = g_build_filename(tmpdir, "outbox", sub, NULL);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	guint n = 0;

	while (d && g_dir_read_name(d))
		n++;
	return n;
}

static struct pk_outbox *fresh(void)
{
	g_autofree char *dir = g_build_filename(tmpdir, "outbox", NULL);
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
	g_autoptr(GError) err = NULL;
	struct pk_outbox *ob = NULL;

	assert_int_equal(system(cmd), 0);
	if (pk_outbox_open(&ob, dir, true, &err) < 0)
		fail_msg("open: %s", err->message);
	return ob;
}

static void test_names(void **state)
{
	static const struct { const char *id, *name; } cases[] = {
		{ "printkbot-0123abcd@example.org", "printkbot-0123abcd@example.org" },
		{ "a/b:c@d", "a%2Fb%3Ac@d" },
		{ "x%y@z", "x%25y@z" },
		{ "sp ace@h", "sp%20ace@h" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *n = pk_outbox_name(cases[i].id);
		assert_string_equal(n, cases[i].name);
	}
}

static void test_deliver_once(void **state)
{
	g_autoptr(pk_outbox) ob = fresh();
	g_autoptr(GError) err = NULL;
	g_autofree char *text = NULL;
	const char *mid = "printkbot-1@example.org";
	bool added = false;
	size_t len = 0;

	assert_int_equal(pk_outbox_state(ob, mid), PK_OUTBOX_ABSENT);
	assert_int_equal(pk_outbox_read(ob, mid, &text, &len, &err), 0);
	assert_int_equal(pk_outbox_deliver(ob, mid, "first\r\n", 7, &added, &err), 0);
	assert_true(added);
	assert_int_equal(pk_outbox_state(ob, mid), PK_OUTBOX_WAITING);
	assert_int_equal(count_in("new"), 1);
	assert_int_equal(count_in("tmp"), 0);
	/* a re-render after a crash: same Message-ID, the first file stays */
	assert_int_equal(pk_outbox_deliver(ob, mid, "second\r\n", 8, &added, &err), 0);
	assert_false(added);
	assert_int_equal(count_in("new"), 1);
	assert_int_equal(count_in("tmp"), 0);
	assert_int_equal(pk_outbox_read(ob, mid, &text, &len, &err), 1);
	assert_int_equal(len, 7);
	assert_string_equal(text, "first\r\n");
}

static void test_sent_moves_to_cur(void **state)
{
	g_autoptr(pk_outbox) ob = fresh();
	g_autoptr(GError) err = NULL;
	g_autoptr(GPtrArray) waiting = NULL;
	g_autofree char *cur = g_build_filename(tmpdir, "outbox", "cur", "a%2Fb@h:2,S", NULL);
	g_autofree char *text = NULL;
	bool added = true;
	size_t len;

	assert_int_equal(pk_outbox_deliver(ob, "a/b@h", "x", 1, NULL, &err), 0);
	assert_int_equal(pk_outbox_deliver(ob, "c@h", "y", 1, NULL, &err), 0);
	assert_int_equal(pk_outbox_waiting(ob, &waiting, &err), 0);
	assert_int_equal(waiting->len, 2);
	assert_string_equal(waiting->pdata[0], "a/b@h");
	assert_string_equal(waiting->pdata[1], "c@h");
	assert_int_equal(pk_outbox_mark_sent(ob, "a/b@h", &err), 0);
	assert_true(g_file_test(cur, G_FILE_TEST_EXISTS));
	assert_int_equal(pk_outbox_state(ob, "a/b@h"), PK_OUTBOX_SENT);
	assert_int_equal(pk_outbox_read(ob, "a/b@h", &text, &len, &err), 0);
	/* moving twice is no error; a sent reply is never delivered again */
	assert_int_equal(pk_outbox_mark_sent(ob, "a/b@h", &err), 0);
	assert_int_equal(pk_outbox_deliver(ob, "a/b@h", "x", 1, &added, &err), 0);
	assert_false(added);
	assert_int_equal(count_in("new"), 1);
	assert_int_equal(count_in("cur"), 1);
	g_clear_pointer(&waiting, g_ptr_array_unref);
	assert_int_equal(pk_outbox_waiting(ob, &waiting, &err), 0);
	assert_int_equal(waiting->len, 1);
	assert_string_equal(waiting->pdata[0], "c@h");
	/* one never delivered cannot be marked sent */
	assert_int_equal(pk_outbox_mark_sent(ob, "never@h", &err), -1);
	assert_non_null(err);
}

/*
 * The crash window: sent and recorded, then killed before the move.  The
 * restart sees the file still in new/; the store says sent, so the daemon
 * moves it (what it does is this call) and the outbox is as after a clean
 * run.  A file nobody wrote (a stray name, a dot file) is not listed.
 */
static void test_restart(void **state)
{
	g_autoptr(pk_outbox) ob = fresh();
	g_autoptr(pk_outbox) again = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(GPtrArray) waiting = NULL;
	g_autofree char *dir = g_build_filename(tmpdir, "outbox", NULL);
	g_autofree char *stray = g_build_filename(dir, "new", "bad:name", NULL);
	g_autofree char *dot = g_build_filename(dir, "new", ".hidden", NULL);

	assert_int_equal(pk_outbox_deliver(ob, "sent@h", "s", 1, NULL, &err), 0);
	assert_int_equal(g_file_set_contents(stray, "?", 1, NULL), TRUE);
	assert_int_equal(g_file_set_contents(dot, "?", 1, NULL), TRUE);
	assert_int_equal(pk_outbox_open(&again, dir, false, &err), 0);
	assert_int_equal(pk_outbox_waiting(again, &waiting, &err), 0);
	assert_int_equal(waiting->len, 1);
	assert_string_equal(waiting->pdata[0], "sent@h");
	assert_int_equal(pk_outbox_mark_sent(again, "sent@h", &err), 0);
	assert_int_equal(pk_outbox_state(again, "sent@h"), PK_OUTBOX_SENT);
}

static void test_missing_outbox_is_empty(void **state)
{
	g_autofree char *dir = g_build_filename(tmpdir, "nowhere", NULL);
	g_autoptr(pk_outbox) ob = NULL;
	g_autoptr(GPtrArray) waiting = NULL;
	g_autoptr(GError) err = NULL;

	assert_int_equal(pk_outbox_open(&ob, dir, false, &err), 0);
	assert_false(g_file_test(dir, G_FILE_TEST_EXISTS));
	assert_int_equal(pk_outbox_waiting(ob, &waiting, &err), 0);
	assert_int_equal(waiting->len, 0);
}

/*
 * In the full disk (a child's tiny tmpfs): delivery fails with
 * PK_ERROR_TRANSIENT (the reply job retries it) and leaves nothing behind;
 * with room again it succeeds.  The exit status names the step that failed.
 */
static int deliver_on_full_disk(const char *dir, void *data)
{
	g_autofree char *box = g_build_filename(dir, "outbox", NULL);
	g_autofree char *filler = g_build_filename(dir, "filler", NULL);
	g_autofree char *text = g_strnfill(16384, 'x');
	g_autoptr(pk_outbox) ob = NULL;
	g_autoptr(GError) err = NULL;
	const char *mid = "printkbot-full@example.org";

	if (pk_outbox_open(&ob, box, true, &err) < 0)
		return 2;
	tinyfs_fill(dir);
	if (pk_outbox_deliver(ob, mid, text, strlen(text), NULL, &err) == 0)
		return 3;
	fprintf(stderr, "full disk: %s\n", err->message);
	if (!pk_error_transient(err) || !strstr(err->message, "No space left"))
		return 4;
	if (pk_outbox_state(ob, mid) != PK_OUTBOX_ABSENT)
		return 5;
	g_clear_error(&err);
	unlink(filler);
	if (pk_outbox_deliver(ob, mid, text, strlen(text), NULL, &err) < 0 ||
	    pk_outbox_state(ob, mid) != PK_OUTBOX_WAITING)
		return 6;
	return 0;
}

static void test_full_disk_is_transient(void **state)
{
	g_autofree char *dir = g_build_filename(tmpdir, "tiny", NULL);
	int rc;

	assert_int_equal(g_mkdir_with_parents(dir, 0700), 0);
	rc = tinyfs_run(dir, "64k", deliver_on_full_disk, NULL);
	if (rc < 0)
		skip();   /* no mount namespace here */
	assert_int_equal(rc, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_full_disk_is_transient),
		cmocka_unit_test(test_deliver_once),
		cmocka_unit_test(test_sent_moves_to_cur),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_missing_outbox_is_empty),
	};
	g_autofree char *cmd = NULL;
	int rc;

	tmpdir = g_dir_make_tmp("test-outbox-XXXXXX", NULL);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		rc = 1;
	g_free(tmpdir);
	return rc;
}
