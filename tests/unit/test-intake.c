/*
 * test-intake.c - the mbox and Maildir backends and the store's queue:
 * mail appended to an mbox is read from where the last fetch stopped (and
 * once only, across a reopen, as after a restart), a Maildir's new mail is
 * seen through inotify and moved to cur/, a failing deliver leaves the
 * position where it was, and a reply job that is retried waits its turn.
 * And where a source starts: now (what it holds is not read, what comes
 * after is; a file replaced later is read again without its past), a
 * date, or a position kept from before.  And a hostile world (issue 15):
 * an mbox still being written, rewritten in place, with more than a GiB
 * unread; a Maildir holding FIFOs, symbolic links and mails over the limit.
 */
#define _GNU_SOURCE   /* F_OFD_SETLK */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "intake/intake.h"
#include "intake/mbox.h"
#include "store/store.h"
#include "store/queue.h"

#define MAIL(id) "From x@y Mon Jan  1 00:00:00 2024\nFrom: a@b\nSubject: m\nMessage-ID: <" id ">\n\nbody\n>From quoted\n\n"

/* A mail with a Date (NULL: none). */
#define DATED(id, date) "From x@y Mon Jan  1 00:00:00 2024\nFrom: a@b\nSubject: m\n" \
	"Date: " date "\nMessage-ID: <" id ">\n\nbody\n\n"
#define OLD "Mon, 6 Jan 2020 10:00:00 +0000"
#define NEW "Fri, 1 Jan 2099 10:00:00 +0000"

struct fixture {
	char *dir;
	struct pk_store *store;
};

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autofree char *db = NULL;

	f->dir = g_dir_make_tmp("pk-intake-XXXXXX", NULL);
	db = g_build_filename(f->dir, "t.db", NULL);
	assert_int_equal(pk_store_open(&f->store, db, NULL), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->dir);

	pk_store_close(f->store);
	g_assert(system(cmd) == 0);
	g_free(f->dir);
	g_free(f);
	return 0;
}

struct got {
	GPtrArray *mails;
	int fail_at;          /* deliver fails on this mail (1-based), 0 never */
};

static int collect(void *data, const char *raw, size_t len, const char *where, GError **err)
{
	struct got *g = data;

	if (g->fail_at && (int)g->mails->len + 1 == g->fail_at) {
		g_set_error(err, g_quark_from_static_string("test"), 1, "deliver failed");
		return -1;
	}
	g_ptr_array_add(g->mails, g_strndup(raw, len));
	return 0;
}

/* Date path's last write `ago` seconds back (a writer done with it that long ago). */
static void written_ago(const char *path, int ago)
{
	struct timeval t[2];

	gettimeofday(&t[0], NULL);
	t[0].tv_sec -= ago;
	t[1] = t[0];
	assert_int_equal(utimes(path, t), 0);
}

/* Append in place, as a delivery agent does (same inode), but not done yet. */
static void append_now(const char *path, const char *text)
{
	FILE *fp = fopen(path, "a");

	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

/* Append, as a delivery agent that is done with the file (its last mail is read at once). */
static void append(const char *path, const char *text)
{
	append_now(path, text);
	written_ago(path, 10);
}

/* Write a whole new file (another inode: written beside, renamed over), done with. */
static void replace(const char *path, const char *text)
{
	assert_true(g_file_set_contents(path, text, -1, NULL));
	written_ago(path, 10);
}

static unsigned fetch(struct pk_intake *in, struct got *g, int rc_want)
{
	g_autoptr(GError) err = NULL;
	unsigned n = 0;

	assert_int_equal(in->ops->fetch(in->state, collect, g, &n, &err), rc_want);
	return n;
}

/* As the daemon fetches: through pk_intake_fetch(), with the start rules. */
static unsigned fetch_started(struct pk_intake *in, struct got *g)
{
	g_autoptr(GError) err = NULL;
	unsigned n = 0;

	if (pk_intake_fetch(in, collect, g, &n, &err) < 0)
		fail_msg("fetch: %s", err->message);
	return n;
}

static bool got_id(struct got *g, guint i, const char *id)
{
	g_autofree char *want = g_strdup_printf("Message-ID: <%s>", id);

	return i < g->mails->len && strstr(g->mails->pdata[i], want);
}

static void test_mbox(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, "list.mbox", NULL);
	struct pk_source_config cfg = { .name = "t", .type = "mbox", .path = path, .poll_interval = 1 };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;
	struct pollfd p;

	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch(in, &g, 0), 0);          /* no file yet */
	append(path, MAIL("1@x") MAIL("2@x"));
	p = (struct pollfd){ in->ops->watch_fd(in->state), POLLIN, 0 };
	assert_int_equal(poll(&p, 1, 1000), 1);         /* the writer closed it: inotify says so */
	assert_int_equal(fetch(in, &g, 0), 2);
	assert_non_null(strstr(g.mails->pdata[0], "Message-ID: <1@x>"));
	assert_non_null(strstr(g.mails->pdata[1], "Message-ID: <2@x>"));
	assert_int_equal(fetch(in, &g, 0), 0);          /* nothing new */
	append(path, MAIL("3@x") MAIL("4@x"));
	g.fail_at = 4;                                   /* the second new one fails */
	assert_int_equal(fetch(in, &g, -1), 1);         /* counts what was handed over before */
	assert_int_equal(g.mails->len, 3);
	pk_intake_close(in);
	/* reopened, as after a restart: the failed mail comes again, nothing else */
	g.fail_at = 0;
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch(in, &g, 0), 1);
	assert_non_null(strstr(g.mails->pdata[3], "Message-ID: <4@x>"));
	/* a file replaced by a shorter one is read from its start */
	g_unlink(path);
	append(path, MAIL("5@x"));
	assert_int_equal(fetch(in, &g, 0), 1);
	assert_non_null(strstr(g.mails->pdata[4], "Message-ID: <5@x>"));
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

static void test_maildir(void **state)
{
	struct fixture *f = *state;
	g_autofree char *md = g_build_filename(f->dir, "Maildir", NULL);
	g_autofree char *tmp = g_build_filename(md, "tmp", "1.x", NULL);
	g_autofree char *newp = g_build_filename(md, "new", "1.x", NULL);
	g_autofree char *cur = g_build_filename(md, "cur", NULL);
	struct pk_source_config cfg = { .name = "m", .type = "maildir", .path = md, .poll_interval = 1 };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;
	struct pollfd p;
	g_autoptr(GDir) dir = NULL;

	for (const char *const *s = (const char *const[]){ "tmp", "new", "cur", NULL }; *s; s++) {
		g_autofree char *d = g_build_filename(md, *s, NULL);
		g_mkdir_with_parents(d, 0755);
	}
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch(in, &g, 0), 0);
	/* a delivery: written in tmp/, renamed into new/ */
	assert_true(g_file_set_contents(tmp, "From: a@b\nMessage-ID: <md@x>\n\nhi\n", -1, NULL));
	assert_int_equal(g_rename(tmp, newp), 0);
	p = (struct pollfd){ in->ops->watch_fd(in->state), POLLIN, 0 };
	assert_int_equal(poll(&p, 1, 1000), 1);
	assert_int_equal(fetch(in, &g, 0), 1);
	assert_non_null(strstr(g.mails->pdata[0], "<md@x>"));
	assert_false(g_file_test(newp, G_FILE_TEST_EXISTS));
	dir = g_dir_open(cur, 0, NULL);
	assert_string_equal(g_dir_read_name(dir), "1.x:2,S");
	assert_int_equal(fetch(in, &g, 0), 0);
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/*
 * An mbox with start = now: what it holds at the first look is not read,
 * what is appended after is, also after a reopen.  Replaced by another
 * file, it is read again without what is dated before the start; once
 * that read got to the end, mail is read by position again, whatever its
 * date.
 */
static void test_mbox_start_now(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, "list.mbox", NULL);
	struct pk_source_config cfg = { .name = "now", .type = "mbox", .path = path,
					.start = PK_START_NOW };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;

	append(path, DATED("old1@x", OLD) DATED("new0@x", NEW));
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch_started(in, &g), 0);
	assert_true(in->started_now);
	append(path, DATED("old2@x", OLD));   /* dated long ago, appended now: new to the source */
	assert_int_equal(fetch_started(in, &g), 1);
	assert_false(in->started_now);
	assert_true(got_id(&g, 0, "old2@x"));
	pk_intake_close(in);
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch_started(in, &g), 0);
	/* replaced (another inode: written beside, renamed over): read again, not its past */
	replace(path, DATED("old1@x", OLD) DATED("undated@x", "") DATED("new1@x", NEW));
	assert_int_equal(fetch_started(in, &g), 1);
	assert_true(got_id(&g, 1, "new1@x"));
	append(path, DATED("old3@x", OLD));
	assert_int_equal(fetch_started(in, &g), 1);
	assert_true(got_id(&g, 2, "old3@x"));
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/* start = <date>: only mails dated on or after it, always; start = now keeps a position kept before. */
static void test_mbox_start_date(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, "list.mbox", NULL);
	struct pk_source_config cfg = { .name = "date", .type = "mbox", .path = path,
					.start = PK_START_DATE, .start_date = 1709251200 /* 2024-03-01 */ };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;

	append(path, DATED("feb@x", "Thu, 29 Feb 2024 23:59:59 +0000")
	       DATED("mar@x", "Fri, 1 Mar 2024 00:00:00 +0000")
	       DATED("east@x", "Fri, 1 Mar 2024 08:30:00 +0900")   /* 2024-02-29T23:30Z */
	       DATED("none@x", "") DATED("later@x", NEW));
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch_started(in, &g), 2);
	assert_true(got_id(&g, 0, "mar@x"));
	assert_true(got_id(&g, 1, "later@x"));
	append(path, DATED("feb2@x", "Thu, 29 Feb 2024 10:00:00 +0000") DATED("apr@x", NEW));
	assert_int_equal(fetch_started(in, &g), 1);
	assert_true(got_id(&g, 2, "apr@x"));
	pk_intake_close(in);
	/* the same source, now start = now: it was read before, so it goes on from there */
	cfg.start = PK_START_NOW;
	append(path, DATED("next@x", OLD));
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch_started(in, &g), 1);
	assert_true(got_id(&g, 3, "next@x"));
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/* A Maildir with start = now: new/ is moved to cur/ unread, and what is delivered after is read. */
static void test_maildir_start_now(void **state)
{
	struct fixture *f = *state;
	g_autofree char *md = g_build_filename(f->dir, "Maildir", NULL);
	g_autofree char *old = g_build_filename(md, "new", "1.old", NULL);
	g_autofree char *newp = g_build_filename(md, "new", "2.new", NULL);
	g_autofree char *was = g_build_filename(md, "cur", "1.old:2,", NULL);
	struct pk_source_config cfg = { .name = "mnow", .type = "maildir", .path = md,
					.start = PK_START_NOW };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;

	for (const char *const *s = (const char *const[]){ "tmp", "new", "cur", NULL }; *s; s++) {
		g_autofree char *d = g_build_filename(md, *s, NULL);
		g_mkdir_with_parents(d, 0755);
	}
	assert_true(g_file_set_contents(old, DATED("backlog@x", NEW), -1, NULL));
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch_started(in, &g), 0);
	assert_true(g_file_test(was, G_FILE_TEST_EXISTS));   /* noticed, not Seen */
	assert_true(g_file_set_contents(newp, DATED("fresh@x", OLD), -1, NULL));
	assert_int_equal(fetch_started(in, &g), 1);
	assert_true(got_id(&g, 0, "fresh@x"));
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/* ---- an mbox read one mail at a time (mbox.h) ----------------------------- */

/* What the reader makes of text: one "offset+size" per mail, "!" without its bytes, "." when last. */
static char *split(const char *dir, const char *text, size_t len, size_t max_mail)
{
	g_autofree char *path = g_build_filename(dir, "split.mbox", NULL);
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GString) again = g_string_new(NULL);
	g_autoptr(pk_mbox_reader) r = NULL;
	struct pk_mbox_mail m;
	int fd, got;

	assert_true(g_file_set_contents(path, text, (gssize)len, NULL));
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	r = pk_mbox_reader_new(fd, 0, max_mail);
	while ((got = pk_mbox_next(r, &m, NULL)) > 0) {
		g_string_append_printf(out, "%s%" G_GINT64_FORMAT "+%" G_GINT64_FORMAT "%s%s",
				       out->len ? " " : "", m.offset, m.size, m.raw ? "" : "!",
				       m.followed ? "" : ".");
		if (m.raw) {
			assert_int_equal(m.len, m.size);
			assert_memory_equal(m.raw, text + m.offset, m.len);
		}
	}
	assert_int_equal(got, 0);
	close(fd);
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/*
 * The reader cuts where a line starts "From ", keeps what comes before
 * the first one, says which mail was the last, and hands out a mail over
 * the limit without its bytes.
 */
static void test_mbox_reader(void **state)
{
	static const struct {
		const char *text;
		size_t max_mail;
		const char *want;
	} cases[] = {
		{ "", 0, "" },
		{ "From a\nx\n", 0, "0+9." },
		{ "From a\nx\nFrom b\ny\n", 0, "0+9 9+9." },
		{ "From a\n>From quoted\nFrom b\n", 0, "0+20 20+7." },
		{ "From a\nxFrom not a line start\n", 0, "0+30." },
		{ "junk\nFrom a\n", 0, "0+5 5+7." },
		{ "From a\nFrom", 0, "0+11." },                          /* "From" without its space */
		{ "From a\n0123456789\nFrom b\nc\n", 10, "0+18! 18+9." },
		{ "From a\n0123456789\n", 10, "0+18!." },
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = split(f->dir, cases[i].text, strlen(cases[i].text), cases[i].max_mail);

		if (strcmp(got, cases[i].want))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, got, cases[i].want);
	}
	/* a separator across two reads of the reader (1 MiB each), and a long mail skipped in many */
	for (size_t first = (1u << 20) - 8; first <= (1u << 20) + 2; first++) {
		g_autoptr(GString) t = g_string_new("From a\n");
		g_autofree char *want = NULL, *got = NULL;

		while (t->len < first - 1)
			g_string_append_c(t, 'x');
		g_string_append(t, "\nFrom b\ny\n");
		want = g_strdup_printf("0+%zu %zu+9.", first, first);
		got = split(f->dir, t->str, t->len, 0);
		assert_string_equal(got, want);
		g_free(got);
		want = (g_free(want), g_strdup_printf("0+%zu! %zu+9.", first, first));
		got = split(f->dir, t->str, t->len, 1000);
		assert_string_equal(got, want);
	}
}

/* ---- an mbox being written ------------------------------------------------ */

#define MAIL_A MAIL("a@x")
#define MAIL_B MAIL("b@x")

enum lock { LOCK_NONE, LOCK_DOT, LOCK_DOT_STALE, LOCK_FCNTL };

/*
 * The writer may not be done: the mbox holds the first `cut` bytes of
 * MAIL_A MAIL_B, written `ago` seconds back, with a lock or none.  The
 * first fetch must hand over only whole mails (got); when the writer is
 * done (the rest written, the lock gone), the next fetch hands over the
 * rest: every mail once, none cut short.
 */
static void test_mbox_being_written(void **state)
{
	static const struct {
		const char *what;
		size_t cut;
		int ago;
		enum lock lock;
		unsigned got;
	} cases[] = {
		{ "the first mail cut short, just written", 30, 0, LOCK_NONE, 0 },
		{ "the second mail cut short, just written", sizeof MAIL_A - 1 + 40, 0, LOCK_NONE, 1 },
		{ "both whole, just written", sizeof MAIL_A MAIL_B - 1, 0, LOCK_NONE, 1 },
		{ "both whole, written 10 s ago", sizeof MAIL_A MAIL_B - 1, 10, LOCK_NONE, 2 },
		{ "a cut mail, written 10 s ago under a dotlock", sizeof MAIL_A - 1 + 40, 10, LOCK_DOT, 1 },
		{ "both whole, a dotlock held", sizeof MAIL_A MAIL_B - 1, 10, LOCK_DOT, 1 },
		{ "both whole, a stale dotlock", sizeof MAIL_A MAIL_B - 1, 10, LOCK_DOT_STALE, 2 },
		{ "both whole, an fcntl write lock held", sizeof MAIL_A MAIL_B - 1, 10, LOCK_FCNTL, 1 },
	};
	static const char full[] = MAIL_A MAIL_B;
	struct fixture *f = *state;

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *name = g_strdup_printf("w%zu", i);
		g_autofree char *path = g_build_filename(f->dir, name, NULL);
		g_autofree char *lock = g_strconcat(path, ".lock", NULL);
		struct pk_source_config cfg = { .name = name, .type = "mbox", .path = path };
		struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		struct pk_intake *in = NULL;
		int lock_fd = -1;

		assert_true(g_file_set_contents(path, full, (gssize)cases[i].cut, NULL));
		written_ago(path, cases[i].ago);
		if (cases[i].lock == LOCK_DOT || cases[i].lock == LOCK_DOT_STALE) {
			assert_true(g_file_set_contents(lock, "", 0, NULL));
			written_ago(lock, cases[i].lock == LOCK_DOT_STALE ? 3600 : 0);
		} else if (cases[i].lock == LOCK_FCNTL) {
			/* an OFD lock conflicts with a test from this very process, as a writer's would */
			lock_fd = open(path, O_RDWR);
			assert_int_equal(fcntl(lock_fd, F_OFD_SETLK, &fl), 0);
		}
		assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
		if (fetch(in, &g, 0) != cases[i].got)
			fail_msg("%s: %u mail(s) handed over, want %u", cases[i].what, g.mails->len, cases[i].got);
		/* the writer is done: the rest written, the lock given back */
		if (lock_fd >= 0)
			close(lock_fd);
		g_unlink(lock);
		append(path, full + cases[i].cut);
		fetch(in, &g, 0);
		assert_int_equal(g.mails->len, 2);
		assert_string_equal(g.mails->pdata[0], MAIL_A);
		assert_string_equal(g.mails->pdata[1], MAIL_B);
		pk_intake_close(in);
		g_ptr_array_unref(g.mails);
	}
}

/* A last mail held back is looked at again by itself: the watch descriptor says when. */
static void test_mbox_held_looked_at_again(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, "held.mbox", NULL);
	struct pk_source_config cfg = { .name = "held", .type = "mbox", .path = path };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;
	struct pollfd p;

	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	append_now(path, MAIL_A);
	assert_int_equal(fetch(in, &g, 0), 0);          /* just written: perhaps not done */
	p = (struct pollfd){ in->ops->watch_fd(in->state), POLLIN, 0 };
	assert_int_equal(poll(&p, 1, 3000), 1);         /* no new event needed to look again */
	assert_int_equal(fetch(in, &g, 0), 1);          /* untouched since: done */
	assert_string_equal(g.mails->pdata[0], MAIL_A);
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/*
 * Rewritten in place (same inode) and grown past the stored offset, as a
 * mail reader that expunges leaves it: read again from the start, so the
 * mails now before the old offset are not lost.  What was handed over
 * before comes again; the daemon drops it by Message-ID (inbox.c).
 */
static void test_mbox_rewritten_in_place(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, "list.mbox", NULL);
	struct pk_source_config cfg = { .name = "rw", .type = "mbox", .path = path };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;
	struct stat before, after;
	FILE *fp;

	append(path, MAIL("a@x") MAIL("b@x") MAIL("c@x"));
	assert_int_equal(stat(path, &before), 0);
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	assert_int_equal(fetch(in, &g, 0), 3);
	assert_non_null(fp = fopen(path, "w"));          /* truncated, same inode */
	fputs(MAIL("a@x") MAIL("d@x") MAIL("e@x") MAIL("f@x"), fp);
	assert_int_equal(fclose(fp), 0);
	written_ago(path, 10);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(fetch(in, &g, 0), 4);
	assert_true(got_id(&g, 3, "a@x"));
	assert_true(got_id(&g, 4, "d@x"));
	assert_true(got_id(&g, 5, "e@x"));
	assert_true(got_id(&g, 6, "f@x"));
	/* appended to afterwards, not rewritten: read on from the offset */
	append(path, MAIL("g@x"));
	assert_int_equal(fetch(in, &g, 0), 1);
	assert_true(got_id(&g, 7, "g@x"));
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/* stderr into a file while the test runs fn; returns what was written. */
static char *captured_stderr(const char *dir, void (*fn)(void *), void *arg)
{
	g_autofree char *path = g_build_filename(dir, "stderr", NULL);
	int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char *text = NULL;

	assert_true(saved >= 0 && fd >= 0);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

/* A fetch with stderr captured: asserting is for after, a failure must not go to the file. */
struct fetch_call {
	struct pk_intake *in;
	struct got *g;
	int rc;
	unsigned n;
	char *error;
};

static void fetch_call(void *arg)
{
	struct fetch_call *c = arg;
	g_autoptr(GError) err = NULL;

	c->rc = c->in->ops->fetch(c->in->state, collect, c->g, &c->n, &err);
	c->error = err ? g_strdup(err->message) : NULL;
}

/* fetch c->in with stderr captured: what was logged; fails unless want mails came. */
static char *fetch_logged(const char *dir, struct pk_intake *in, struct got *g, unsigned want)
{
	struct fetch_call c = { in, g, 0, 0, NULL };
	char *log = captured_stderr(dir, fetch_call, &c);

	if (c.rc < 0)
		fail_msg("fetch: %s\n%s", c.error, log);
	if (c.n != want)
		fail_msg("fetch: %u mail(s), want %u\n%s", c.n, want, log);
	return log;
}

static long peak_rss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

/*
 * More than 1 GiB unread (a sparse file: one mail of a GiB of zeros):
 * once that failed the source for ever.  It is read in chunks, the
 * huge mail skipped with a line naming the source, its place and size,
 * the mails around it handed over, and memory stays within max_mail and
 * a chunk (ASan's shadow included).
 */
#define BIG_HEAD "From x@y Mon Jan  1 00:00:00 2024\nMessage-ID: <big@x>\n\n"
static void test_mbox_backlog_over_1gib(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, "huge.mbox", NULL);
	struct pk_source_config cfg = { .name = "huge", .type = "mbox", .path = path };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;
	g_autofree char *log = NULL, *want = NULL;
	long before;
	gint64 big_at = sizeof MAIL_A - 1, big_size = (gint64)(sizeof BIG_HEAD - 1) + (1ll << 30);
	int fd;

	append_now(path, MAIL_A BIG_HEAD);
	fd = open(path, O_WRONLY);
	assert_int_equal(ftruncate(fd, big_at + big_size), 0);
	close(fd);
	append(path, "\n" MAIL_B);
	big_size++;   /* its last line's end */
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	in->ctx.max_mail = 4u << 20;   /* a mail is kept until it is over this: the bound */
	before = peak_rss_mb();
	log = fetch_logged(f->dir, in, &g, 2);
	assert_string_equal(g.mails->pdata[0], MAIL_A);
	assert_string_equal(g.mails->pdata[1], MAIL_B);
	want = g_strdup_printf("source huge: the mail at byte %" G_GINT64_FORMAT " of %s is %" G_GINT64_FORMAT
			       " bytes, over max_mail_mb", big_at, path, big_size);
	if (!strstr(log, want))
		fail_msg("log: %s\nwant: %s", log, want);
	/* what this fetch added to the process's peak (the earlier tests' is in it) */
	if (peak_rss_mb() - before > 32)
		fail_msg("peak RSS grew by %ld MB reading the GiB", peak_rss_mb() - before);
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/* ---- Maildir: what is no mail ---------------------------------------------- */

/*
 * Anything in new/ that is not a regular file is skipped with a log line
 * and moved out of the way: a FIFO (reading it blocked for ever), a
 * symbolic link to a file the bot must not read (it was queued), one to
 * /dev/zero (64 MiB read at every look), a directory; and a mail over
 * max_mail.  The mail beside them is read.
 */
static void test_maildir_not_regular(void **state)
{
	static const struct {
		const char *name;
		const char *log;
	} skipped[] = {
		{ "1.fifo", "new/1.fifo is not a regular file" },
		{ "2.secret", "new/2.secret is a symbolic link" },
		{ "3.zero", "new/3.zero is a symbolic link" },
		{ "4.dir", "new/4.dir is not a regular file" },
		{ "5.big", "new/5.big is 4196 bytes, over max_mail_mb (4096 bytes)" },
	};
	struct fixture *f = *state;
	g_autofree char *md = g_build_filename(f->dir, "Maildir", NULL);
	g_autofree char *secret = g_build_filename(f->dir, "secret", NULL);
	struct pk_source_config cfg = { .name = "odd", .type = "maildir", .path = md };
	struct got g = { g_ptr_array_new_with_free_func(g_free), 0 };
	struct pk_intake *in = NULL;
	g_autofree char *log = NULL;
	g_autofree char *big = g_strnfill(4196, 'x');

	for (const char *const *s = (const char *const[]){ "tmp", "new", "cur", "new/4.dir", NULL }; *s; s++) {
		g_autofree char *d = g_build_filename(md, *s, NULL);
		g_mkdir_with_parents(d, 0755);
	}
	g_autofree char *fifo = g_build_filename(md, "new", "1.fifo", NULL);
	g_autofree char *link1 = g_build_filename(md, "new", "2.secret", NULL);
	g_autofree char *link2 = g_build_filename(md, "new", "3.zero", NULL);
	g_autofree char *bigp = g_build_filename(md, "new", "5.big", NULL);
	g_autofree char *ok = g_build_filename(md, "new", "6.ok", NULL);
	assert_true(g_file_set_contents(secret, "From: root\nMessage-ID: <secret@x>\n\n", -1, NULL));
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(secret, link1), 0);
	assert_int_equal(symlink("/dev/zero", link2), 0);
	assert_true(g_file_set_contents(bigp, big, -1, NULL));
	assert_true(g_file_set_contents(ok, "From: a@b\nMessage-ID: <ok@x>\n\nhi\n", -1, NULL));
	assert_int_equal(pk_intake_open(&in, f->store, &cfg, NULL), 0);
	in->ctx.max_mail = 4096;
	alarm(30);   /* a blocking open fails the test instead of hanging it */
	log = fetch_logged(f->dir, in, &g, 1);
	alarm(0);
	assert_true(got_id(&g, 0, "ok@x"));
	for (size_t i = 0; i < G_N_ELEMENTS(skipped); i++) {
		g_autofree char *moved = g_strdup_printf("%s/cur/%s:2,", md, skipped[i].name);

		if (!strstr(log, skipped[i].log))
			fail_msg("log has no \"%s\":\n%s", skipped[i].log, log);
		assert_true(g_file_test(moved, G_FILE_TEST_EXISTS));   /* out of new/, unread */
	}
	g_clear_pointer(&log, g_free);
	log = fetch_logged(f->dir, in, &g, 0);
	assert_string_equal(log, "");   /* logged once, not at every look */
	pk_intake_close(in);
	g_ptr_array_unref(g.mails);
}

/* Mails by Message-ID, and the queue: next due job by kind, retries waiting. */
static void test_queue(void **state)
{
	struct fixture *f = *state;
	struct pk_store_mail m = { .message_id = "<a@x>", .subject = "[PATCH] a", .state = "pending",
				   .version = 1, .number = 1, .total = 1, .churn = 2 };
	g_autoptr(GPtrArray) pending = NULL;
	g_autoptr(pk_store_job) next = NULL;
	g_autofree char *raw = NULL;
	gint64 id, again, job_s, job_r, wait;
	bool existed;
	size_t len;

	assert_int_equal(pk_store_mail_add(f->store, &id, &existed, &m, "raw mail", 8, NULL), 0);
	assert_false(existed);
	m.message_id = "a@x";      /* the same mail without <>: found, not added */
	assert_int_equal(pk_store_mail_add(f->store, &again, &existed, &m, "other", 5, NULL), 0);
	assert_true(existed);
	assert_int_equal(again, id);
	assert_int_equal(pk_store_mail_raw(f->store, id, &raw, &len, NULL), 1);
	assert_string_equal(raw, "raw mail");
	assert_int_equal(pk_store_mails(f->store, "pending", &pending, NULL), 0);
	assert_int_equal(pending->len, 1);
	assert_int_equal(((struct pk_store_mail *)pending->pdata[0])->churn, 2);

	assert_int_equal(pk_store_job_add(f->store, &job_s, PK_JOB_SERIES, "{}", NULL), 0);
	assert_int_equal(pk_store_job_add(f->store, &job_r, PK_JOB_REPLY, "{\"reply\":1}", NULL), 0);
	assert_int_equal(pk_store_job_next_due(f->store, PK_JOB_REPLY, 1000, &next, &wait, NULL), 1);
	assert_int_equal(next->id, job_r);
	g_clear_pointer(&next, pk_store_job_free);
	/* the reply could not be sent: back in the queue until t=2000 */
	{
		struct pk_store_worker w = { "test:1", "test-machine", 1, 60 };

		assert_int_equal(pk_store_job_claim(f->store, &w, PK_JOB_REPLY, 1000, &next, NULL, NULL), 1);
		assert_int_equal(next->id, job_r);
		g_clear_pointer(&next, pk_store_job_free);
		assert_int_equal(pk_store_job_end(f->store, job_r, &w, PK_JOB_QUEUED, "server down", 2000,
						  1000, NULL), 1);
	}
	assert_int_equal(pk_store_job_next_due(f->store, PK_JOB_REPLY, 1000, &next, &wait, NULL), 0);
	assert_int_equal(wait, 1000);
	assert_int_equal(pk_store_job_next_due(f->store, PK_JOB_ANY_KIND, 1000, &next, &wait, NULL), 1);
	assert_int_equal(next->id, job_s);    /* the other job is due meanwhile */
	g_clear_pointer(&next, pk_store_job_free);
	assert_int_equal(pk_store_job_next_due(f->store, PK_JOB_REPLY, 2000, &next, &wait, NULL), 1);
	assert_int_equal(next->id, job_r);
	assert_int_equal(next->attempts, 1);
	g_clear_pointer(&next, pk_store_job_free);
	/* a retry is only a move the state machine allows: a queued job is not running */
	assert_int_equal(pk_store_job_retry_at(f->store, job_r, 3000, "x", NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mbox, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maildir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_start_now, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_start_date, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maildir_start_now, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_being_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_held_looked_at_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_rewritten_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_backlog_over_1gib, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maildir_not_regular, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
