/*
 * intake-mbox.c - an mbox file as a source: mails appended to it are read
 * from the byte offset where the last fetch stopped.  The file's directory
 * is watched with inotify (a writer closing the file, or a new file renamed
 * over it), so a mail is read once its writer is done with it.  A file
 * that shrank or was replaced is read again from the start; the caller's
 * Message-ID check drops what it had already.  Starting now records the
 * file's size (a file not there yet is all new when it comes).
 */
#include "intake/intake.h"
#include "intake/mail.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

struct mbox {
	struct pk_intake_ctx *ctx;
	char *path, *base;
	int ino_fd;
};

static int mbox_open(void **out, struct pk_intake_ctx *ctx, GError **err)
{
	struct mbox *m = g_new0(struct mbox, 1);
	g_autofree char *dir = g_path_get_dirname(ctx->cfg->path);

	m->ctx = ctx;
	m->path = g_strdup(ctx->cfg->path);
	m->base = g_path_get_basename(ctx->cfg->path);
	m->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (m->ino_fd < 0 || inotify_add_watch(m->ino_fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0) {
		pk_error(err, PK_ERROR_FAILED, "source %s: cannot watch %s: %s", ctx->cfg->name, dir,
			 g_strerror(errno));
		if (m->ino_fd >= 0)
			close(m->ino_fd);
		g_free(m->path);
		g_free(m->base);
		g_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

static int mbox_watch_fd(void *state)
{
	return ((struct mbox *)state)->ino_fd;
}

/* Drain the inotify queue; the events only say "look again". */
static void drain(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(fd, buf, sizeof buf) > 0)
		;
}

/* The bytes of path from offset to its end, capped. */
static int read_from(const char *path, gint64 offset, char **out, size_t *out_len, GError **err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t len, got = 0;
	char *buf;

	if (fd < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", path, g_strerror(errno));
	if (fstat(fd, &st) < 0 || lseek(fd, (off_t)offset, SEEK_SET) < 0) {
		close(fd);
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", path, g_strerror(errno));
	}
	len = (size_t)MAX(st.st_size - offset, 0);
	if (len > 16 * (size_t)PK_INTAKE_MAX_MAIL) {
		close(fd);
		return pk_error(err, PK_ERROR_LIMIT, "%s: %zu new bytes at once, more than printkbot reads", path, len);
	}
	buf = g_malloc(len + 1);
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	*out_len = got;
	return 0;
}

static int mbox_fetch(void *state, pk_intake_deliver_fn deliver, void *data, unsigned *out_count,
		      GError **err)
{
	struct mbox *m = state;
	g_autofree char *buf = NULL;
	g_autoptr(GPtrArray) mails = NULL;
	g_autoptr(GArray) offsets = g_array_new(FALSE, FALSE, sizeof(guint64));
	gint64 offset = pk_intake_state_int(m->ctx, "offset");
	gint64 inode = pk_intake_state_int(m->ctx, "inode");
	size_t len = 0;
	unsigned count = 0;
	struct stat st;

	drain(m->ino_fd);
	*out_count = 0;
	if (stat(m->path, &st) < 0) {
		if (errno == ENOENT)
			return 0;   /* nothing delivered yet */
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", m->path, g_strerror(errno));
	}
	if ((gint64)st.st_ino != inode || st.st_size < offset) {
		offset = 0;   /* another file, or one cut short: read it whole again */
		if ((inode && pk_intake_read_again(m->ctx, err) < 0) ||
		    pk_intake_state_set_int(m->ctx, "inode", (gint64)st.st_ino, err) < 0 ||
		    pk_intake_state_set_int(m->ctx, "offset", 0, err) < 0)
			return -1;
	}
	if (st.st_size == offset)
		return 0;
	if (read_from(m->path, offset, &buf, &len, err) < 0)
		return -1;
	pk_mail_split_mbox(&mails, offsets, buf, len);
	for (guint i = 0; i < mails->len; i++) {
		gsize n;
		const char *raw = g_bytes_get_data(mails->pdata[i], &n);
		guint64 end = i + 1 < offsets->len ? g_array_index(offsets, guint64, i + 1) : len;

		if (n <= PK_INTAKE_MAX_MAIL && deliver(data, raw, n, err) < 0)
			return -1;
		if (pk_intake_state_set_int(m->ctx, "offset", offset + (gint64)end, err) < 0)
			return -1;
		count++;
	}
	*out_count = count;
	return 0;
}

static int mbox_start_now(void *state, GError **err)
{
	struct mbox *m = state;
	struct stat st;

	if (pk_intake_state_int(m->ctx, "inode"))
		return 0;   /* read before: go on from there */
	if (stat(m->path, &st) < 0)
		return errno == ENOENT ? 0 : pk_error(err, PK_ERROR_FAILED, "%s: %s", m->path, g_strerror(errno));
	if (pk_intake_state_set_int(m->ctx, "inode", (gint64)st.st_ino, err) < 0 ||
	    pk_intake_state_set_int(m->ctx, "offset", (gint64)st.st_size, err) < 0)
		return -1;
	return 0;
}

static void mbox_close(void *state)
{
	struct mbox *m = state;

	if (!m)
		return;
	if (m->ino_fd >= 0)
		close(m->ino_fd);
	g_free(m->path);
	g_free(m->base);
	g_free(m);
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
