/*
 * intake-mbox.c - an mbox file as a source: mails appended to it are read
 * from the byte offset where the last fetch stopped, one at a time
 * (mbox.h), so a backlog of any size is read with memory bounded by its
 * largest mail.  A file that shrank, was replaced (another inode) or was
 * rewritten in place is read again from the start; the caller's
 * Message-ID check drops what it had already.  Starting now records the
 * file's size (a file not there yet is all new when it comes).
 *
 * A file being written: a mail is delivered once a "From " line follows
 * it (its writer has gone on to the next).  The last mail of the file has
 * no such line, so it waits until the writer is done with the file: no
 * dotlock PATH.lock (taken by procmail, postfix, exim, dovecot and mutt
 * before they append), no fcntl() write lock on it (postfix, dovecot and
 * mutt take one too), and nothing written for SETTLE seconds, for writers
 * that lock nothing (`cat >>`, `git format-patch >>`).  We only look for
 * the locks, never take one: a reader needs none, the daemon may not be
 * allowed to write in the spool directory, and a delivery never waits on
 * us.  Waiting only for the next "From " line would hold a quiet list's
 * last mail for hours; a lock alone misses writers that take none.
 * Until then the offset stays before that mail and the file is looked at
 * again every SETTLE seconds: a timerfd, polled with the inotify
 * descriptor through one epoll descriptor (the loop polls one per source).
 *
 * Rewritten in place (same inode, cut and grown again past the stored
 * offset, as a mail reader that expunges does): the stored offset then
 * points into other mail.  With the offset we keep a fingerprint, a hash
 * of the bytes just before it, and read the file again when they differ.
 */
#include "intake/intake.h"
#include "intake/mbox.h"
#include "store/store.h"
#include "store/queue.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* Seconds without a write after which a lockless writer is taken to be done. */
#define SETTLE 1
/* A dotlock older than this (procmail's LOCKTIMEOUT, the longest of the usual MDAs) is stale. */
#define STALE_LOCK 1024
/* Bytes before the offset that its fingerprint covers. */
#define FINGERPRINT_BYTES 4096

struct mbox {
	struct pk_intake_ctx *ctx;
	char *path, *lock;
	int ino_fd, timer_fd, epoll_fd;
	gint64 held_end;     /* the file's size when its last mail was first held back, or -1 */
	gint64 held_since;   /* since when (monotonic, µs) */
};

static void mbox_close(void *state)
{
	struct mbox *m = state;

	if (!m)
		return;
	if (m->ino_fd >= 0)
		close(m->ino_fd);
	if (m->timer_fd >= 0)
		close(m->timer_fd);
	if (m->epoll_fd >= 0)
		close(m->epoll_fd);
	g_free(m->path);
	g_free(m->lock);
	g_free(m);
}

static int watch(int epoll_fd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

static int mbox_open(void **out, struct pk_intake_ctx *ctx, GError **err)
{
	struct mbox *m = g_new0(struct mbox, 1);
	g_autofree char *dir = g_path_get_dirname(ctx->cfg->path);

	m->ctx = ctx;
	m->path = g_strdup(ctx->cfg->path);
	m->lock = g_strconcat(ctx->cfg->path, ".lock", NULL);
	m->held_end = -1;
	m->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	m->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	m->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	/* IN_DELETE: an MDA removing its dotlock is done */
	if (m->ino_fd < 0 || m->timer_fd < 0 || m->epoll_fd < 0 ||
	    inotify_add_watch(m->ino_fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE) < 0 ||
	    watch(m->epoll_fd, m->ino_fd) < 0 || watch(m->epoll_fd, m->timer_fd) < 0) {
		pk_error(err, PK_ERROR_FAILED, "source %s: cannot watch %s: %s", ctx->cfg->name, dir,
			 g_strerror(errno));
		mbox_close(m);
		return -1;
	}
	/* waited for (an MDA makes it on its first delivery), but said: a typo'd path looks the same */
	if (!g_file_test(m->path, G_FILE_TEST_EXISTS))
		pk_info("source %s: no mbox at %s yet: it is read once something is delivered there", ctx->cfg->name,
			m->path);
	*out = m;
	return 0;
}

static int mbox_watch_fd(void *state)
{
	return ((struct mbox *)state)->epoll_fd;
}

/* Drain the inotify queue and the timer; both only say "look again". */
static void drain(struct mbox *m)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(m->ino_fd, buf, sizeof buf) > 0)
		;
	while (read(m->timer_fd, buf, sizeof(guint64)) > 0)
		;
}

/* Look again in SETTLE seconds. */
static void look_again(struct mbox *m)
{
	struct itimerspec t = { .it_value = { SETTLE, 0 } };

	timerfd_settime(m->timer_fd, 0, &t, NULL);
}

/* Exactly len bytes of fd at offset into buf: 0, or -1 (a short file, an error). */
static int pread_all(int fd, char *buf, size_t len, gint64 offset)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)offset + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* "N:SHA-256" of the n bytes of buf, the fingerprint of the offset they end at. */
static char *fingerprint(const char *buf, size_t n)
{
	g_autofree char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)buf, n);

	return g_strdup_printf("%zu:%s", n, sum);
}

/* The fingerprint of the bytes of fd before offset, or NULL when they cannot be read. */
static char *fingerprint_at(int fd, gint64 offset)
{
	size_t n = (size_t)MIN(offset, FINGERPRINT_BYTES);
	g_autofree char *buf = g_malloc(n + 1);

	return pread_all(fd, buf, n, offset - (gint64)n) < 0 ? NULL : fingerprint(buf, n);
}

/* Whether the bytes before offset are still those its stored fingerprint was made of. */
static bool fingerprint_ok(struct mbox *m, int fd, gint64 offset)
{
	g_autofree char *kept = NULL, *now = NULL;
	size_t n;

	if (pk_store_source_state_get(m->ctx->store, m->ctx->source_id, "offset_sum", &kept, NULL) <= 0 ||
	    !kept || !*kept || !offset)
		return true;   /* kept by an older printkbot, or at the start: nothing to compare */
	n = (size_t)g_ascii_strtoull(kept, NULL, 10);
	if (n > (size_t)offset || n > FINGERPRINT_BYTES)
		return false;
	g_autofree char *buf = g_malloc(n + 1);
	if (pread_all(fd, buf, n, offset - (gint64)n) < 0)
		return false;
	now = fingerprint(buf, n);
	return !strcmp(now, kept);
}

/* Where the next mail starts, with its fingerprint, in one transaction. */
static int save_position(struct mbox *m, gint64 offset, const char *sum, GError **err)
{
	g_autofree char *value = g_strdup_printf("%" G_GINT64_FORMAT, offset);
	struct pk_store *store = m->ctx->store;

	if (pk_store_begin(store, err) < 0)
		return -1;
	if (pk_store_source_state_set(store, m->ctx->source_id, "offset", value, err) < 0 ||
	    pk_store_source_state_set(store, m->ctx->source_id, "offset_sum", sum ? sum : "", err) < 0 ||
	    pk_store_commit(store, err) < 0) {
		pk_store_rollback(store);
		return -1;
	}
	return 0;
}

/*
 * The offset to read on from: the stored one, or 0 for a file read the
 * first time, another file (inode), one cut short or rewritten in place.
 */
static int where_to_start(struct mbox *m, int fd, const struct stat *st, gint64 *out, GError **err)
{
	gint64 offset = pk_intake_state_int(m->ctx, "offset");
	gint64 inode = pk_intake_state_int(m->ctx, "inode");
	const char *why = NULL;

	if (inode && (gint64)st->st_ino != inode)
		why = "replaced";
	else if (st->st_size < offset)
		why = "cut short";
	else if (inode && !fingerprint_ok(m, fd, offset))
		why = "rewritten in place";
	else if (inode) {
		*out = offset;
		return 0;
	}
	if (why)
		pk_info("source %s: %s was %s: reading it again from its start", m->ctx->cfg->name,
			m->path, why);
	if ((inode && pk_intake_read_again(m->ctx, err) < 0) ||
	    pk_intake_state_set_int(m->ctx, "inode", (gint64)st->st_ino, err) < 0 ||
	    save_position(m, 0, NULL, err) < 0)
		return -1;
	*out = 0;
	return 0;
}

static gint64 mtime_us(const struct stat *st)
{
	return (gint64)st->st_mtim.tv_sec * G_USEC_PER_SEC + st->st_mtim.tv_nsec / 1000;
}

/* Whether the writer is done with the file whose last mail is last: see the head comment. */
static bool writer_done(struct mbox *m, int fd, const struct pk_mbox_mail *last)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
	gint64 end = last->offset + last->size, mono = g_get_monotonic_time();
	struct stat st, lst;

	if (fstat(fd, &st) < 0 || st.st_size != end)
		return false;   /* written to since it was read */
	if (m->held_end != end) {
		m->held_end = end;
		m->held_since = mono;
	}
	/* untouched for SETTLE seconds, by its mtime or (a clock that jumps) by our own looks */
	if (g_get_real_time() - mtime_us(&st) < SETTLE * G_USEC_PER_SEC &&
	    mono - m->held_since < SETTLE * G_USEC_PER_SEC)
		return false;
	if (stat(m->lock, &lst) == 0 && g_get_real_time() - mtime_us(&lst) < STALE_LOCK * G_USEC_PER_SEC)
		return false;
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
		return false;
	m->held_end = -1;
	return true;
}

/* Hand one mail over (a mail over max_mail is skipped with a log line) and move past it. */
static int deliver_one(struct mbox *m, int fd, const struct pk_mbox_mail *mail,
		       pk_intake_deliver_fn deliver, void *data, GError **err)
{
	gint64 end = mail->offset + mail->size;
	g_autofree char *sum = NULL;

	if (!mail->raw) {
		pk_info("source %s: the mail at byte %" G_GINT64_FORMAT " of %s is %" G_GINT64_FORMAT
			" bytes, over max_mail_mb (%zu bytes): skipped", m->ctx->cfg->name, mail->offset,
			m->path, mail->size, m->ctx->max_mail);
		sum = fingerprint_at(fd, end);
	} else {
		size_t n = MIN(mail->len, FINGERPRINT_BYTES);
		g_autofree char *where = g_strdup_printf("byte %" G_GINT64_FORMAT " of %s", mail->offset, m->path);

		if (deliver(data, mail->raw, mail->len, where, err) < 0)
			return -1;
		/* the bytes handed over, not the file's now: it may be rewritten meanwhile */
		sum = fingerprint(mail->raw + mail->len - n, n);
	}
	return save_position(m, end, sum, err);
}

static int mbox_fetch(void *state, pk_intake_deliver_fn deliver, void *data, unsigned *out_count,
		      GError **err)
{
	struct mbox *m = state;
	g_autoptr(pk_mbox_reader) r = NULL;
	struct pk_mbox_mail mail;
	struct stat st;
	gint64 offset;
	int fd, got = 0, rc = -1;

	drain(m);
	*out_count = 0;
	/* O_NONBLOCK: a FIFO put in its place must not stop the daemon */
	if ((fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return errno == ENOENT ? 0   /* nothing delivered yet */
				       : pk_error(err, PK_ERROR_FAILED, "%s: %s", m->path, g_strerror(errno));
	if (fstat(fd, &st) < 0) {
		pk_error(err, PK_ERROR_FAILED, "%s: %s", m->path, g_strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		pk_error(err, PK_ERROR_INPUT, "%s: not a regular file", m->path);
		goto out;
	}
	if (where_to_start(m, fd, &st, &offset, err) < 0)
		goto out;
	if (st.st_size > offset && lseek(fd, (off_t)offset, SEEK_SET) < 0) {
		pk_error(err, PK_ERROR_FAILED, "%s: %s", m->path, g_strerror(errno));
		goto out;
	}
	r = pk_mbox_reader_new(fd, offset, m->ctx->max_mail);
	while (st.st_size > offset && (got = pk_mbox_next(r, &mail, err)) > 0) {
		if (!mail.followed && !writer_done(m, fd, &mail)) {
			look_again(m);   /* and the offset stays before it */
			break;
		}
		if (deliver_one(m, fd, &mail, deliver, data, err) < 0)
			goto out;
		if (mail.raw)
			(*out_count)++;
		if (!mail.followed)
			break;   /* the file's end: what came since is read next time */
	}
	rc = got < 0 ? -1 : 0;
out:
	close(fd);
	return rc;
}

static int mbox_start_now(void *state, GError **err)
{
	struct mbox *m = state;
	g_autofree char *sum = NULL;
	struct stat st;
	int fd;

	if (pk_intake_state_int(m->ctx, "inode"))
		return 0;   /* read before: go on from there */
	if ((fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return errno == ENOENT ? 0 : pk_error(err, PK_ERROR_FAILED, "%s: %s", m->path, g_strerror(errno));
	if (fstat(fd, &st) < 0) {
		close(fd);
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", m->path, g_strerror(errno));
	}
	sum = S_ISREG(st.st_mode) ? fingerprint_at(fd, (gint64)st.st_size) : NULL;
	close(fd);
	if (pk_intake_state_set_int(m->ctx, "inode", (gint64)st.st_ino, err) < 0 ||
	    save_position(m, S_ISREG(st.st_mode) ? (gint64)st.st_size : 0, sum, err) < 0)
		return -1;
	return 0;
}

const struct pk_intake_ops pk_intake_mbox = {
	.type = "mbox",
	.kind = "mbox",
	.open = mbox_open,
	.start_now = mbox_start_now,
	.watch_fd = mbox_watch_fd,
	.fetch = mbox_fetch,
	.close = mbox_close,
};
