/*
 * intake-maildir.c - a Maildir as a source.  New mail is noticed with
 * inotify on new/ (a delivery renames or links a file there from tmp/), not
 * by polling.  A mail handed over is moved to cur/ with the Seen flag, as
 * a mail reader does, so new/ holds exactly what is still to be read; when
 * the rename fails (a read-only Maildir) the mail stays and the caller's
 * Message-ID check drops it next time.  Starting now moves what new/
 * holds to cur/ unread (no Seen flag), as a mail reader does with mail
 * it has noticed but not opened: a list folder's backlog is not tested.
 * What new/ holds that is no mail to read (a FIFO, a symbolic link, a
 * device, a mail over max_mail) is logged and moved to cur/ unread too.
 */
#include "intake/intake.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

struct maildir {
	struct pk_intake_ctx *ctx;
	char *new_dir, *cur_dir;
	int ino_fd;
};

static int maildir_open(void **out, struct pk_intake_ctx *ctx, GError **err)
{
	struct maildir *m = g_new0(struct maildir, 1);

	m->ctx = ctx;
	m->new_dir = g_build_filename(ctx->cfg->path, "new", NULL);
	m->cur_dir = g_build_filename(ctx->cfg->path, "cur", NULL);
	m->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (m->ino_fd < 0 || inotify_add_watch(m->ino_fd, m->new_dir, IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE) < 0) {
		pk_error(err, PK_ERROR_FAILED, "source %s: %s is not a Maildir: %s", ctx->cfg->name,
			 ctx->cfg->path, g_strerror(errno));
		if (m->ino_fd >= 0)
			close(m->ino_fd);
		g_free(m->new_dir);
		g_free(m->cur_dir);
		g_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

static int maildir_watch_fd(void *state)
{
	return ((struct maildir *)state)->ino_fd;
}

static int by_name(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in new/, in arrival order. */
static int list_new(struct maildir *m, GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GDir) dir = NULL;
	g_autoptr(GError) e = NULL;
	const char *name;

	if (!(dir = g_dir_open(m->new_dir, 0, &e)))
		return pk_error(err, PK_ERROR_FAILED, "source %s: %s", m->ctx->cfg->name, e->message);
	while ((name = g_dir_read_name(dir)))
		if (name[0] != '.')
			g_ptr_array_add(names, g_strdup(name));
	/* delivery names start with the time: name order is arrival order */
	g_ptr_array_sort(names, by_name);
	*out = g_steal_pointer(&names);
	return 0;
}

/* Move new/name to cur/ with flags ("S" for seen, "" for noticed only). */
static void move_to_cur(struct maildir *m, const char *name, const char *flags)
{
	g_autofree char *path = g_build_filename(m->new_dir, name, NULL);
	g_autofree char *base = g_strdup(name);
	g_autofree char *dest = NULL;
	char *colon;

	if ((colon = strchr(base, ':')))
		*colon = '\0';
	dest = g_strdup_printf("%s/%s:2,%s", m->cur_dir, base, flags);
	if (rename(path, dest) < 0 && errno != ENOENT)
		pk_info("source %s: %s stays in new/: %s", m->ctx->cfg->name, name, g_strerror(errno));
}

/* What became of reading one file of new/. */
enum read_result {
	READ_OK,      /* *out holds the mail */
	READ_GONE,    /* taken away meanwhile (another reader): nothing to say */
	READ_SKIP,    /* never a mail to read (a FIFO, a symlink, over max_mail): logged */
	READ_LATER,   /* could not be read now (permissions, I/O): logged, left in new/ */
};

/* The bytes of fd, a regular file of size bytes; NULL when it cannot be read. */
static char *read_fd(int fd, size_t size, size_t *out_len)
{
	g_autofree char *buf = g_malloc(size + 1);
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return NULL;
		if (n == 0)
			break;   /* cut meanwhile: what is there */
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out_len = got;
	return g_steal_pointer(&buf);
}

/*
 * Read new/name.  Anyone who may write in new/ can put anything there, so
 * only a regular file is read: opened without following a symlink (a
 * root-only file linked in must not be read and queued) and without
 * blocking (a FIFO would stop the daemon for ever), then fstat()ed (a
 * device such as /dev/zero is never read) and its size checked before a
 * byte is read.
 */
static enum read_result read_mail(struct maildir *m, const char *name, char **out, size_t *out_len)
{
	g_autofree char *path = g_build_filename(m->new_dir, name, NULL);
	const char *cfg_name = m->ctx->cfg->name;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);

	if (fd < 0 && errno == ENOENT)
		return READ_GONE;
	if (fd < 0 && errno == ELOOP) {
		pk_info("source %s: new/%s is a symbolic link: not followed, skipped", cfg_name, name);
		return READ_SKIP;
	}
	if (fd < 0 || fstat(fd, &st) < 0) {
		pk_info("source %s: new/%s cannot be read: %s", cfg_name, name, g_strerror(errno));
		if (fd >= 0)
			close(fd);
		return READ_LATER;
	}
	if (!S_ISREG(st.st_mode) || (m->ctx->max_mail && (guint64)st.st_size > m->ctx->max_mail)) {
		if (!S_ISREG(st.st_mode))
			pk_info("source %s: new/%s is not a regular file: skipped", cfg_name, name);
		else
			pk_info("source %s: new/%s is %" G_GINT64_FORMAT " bytes, over max_mail_mb (%zu bytes): "
				"skipped", cfg_name, name, (gint64)st.st_size, m->ctx->max_mail);
		close(fd);
		return READ_SKIP;
	}
	*out = read_fd(fd, (size_t)st.st_size, out_len);
	if (!*out)
		pk_info("source %s: new/%s cannot be read: %s", cfg_name, name, g_strerror(errno));
	close(fd);
	return *out ? READ_OK : READ_LATER;
}

static int maildir_fetch(void *state, pk_intake_deliver_fn deliver, void *data, unsigned *out_count,
			 GError **err)
{
	struct maildir *m = state;
	char evbuf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	g_autoptr(GPtrArray) names = NULL;

	while (read(m->ino_fd, evbuf, sizeof evbuf) > 0)
		;
	*out_count = 0;
	if (list_new(m, &names, err) < 0)
		return -1;
	for (guint i = 0; i < names->len; i++) {
		g_autofree char *raw = NULL;
		size_t len = 0;

		switch (read_mail(m, names->pdata[i], &raw, &len)) {
		case READ_OK:
			break;
		case READ_SKIP:
			/* out of new/ unread, as start = now does: logged once, not at every look */
			move_to_cur(m, names->pdata[i], "");
			continue;
		default:
			continue;
		}
		{
			g_autofree char *where = g_build_filename(m->new_dir, names->pdata[i], NULL);

			if (deliver(data, raw, len, where, err) < 0)
				return -1;
		}
		move_to_cur(m, names->pdata[i], "S");
		(*out_count)++;
	}
	return 0;
}

static int maildir_start_now(void *state, GError **err)
{
	struct maildir *m = state;
	g_autoptr(GPtrArray) names = NULL;

	if (list_new(m, &names, err) < 0)
		return -1;
	for (guint i = 0; i < names->len; i++)
		move_to_cur(m, names->pdata[i], "");
	return 0;
}

static void maildir_close(void *state)
{
	struct maildir *m = state;

	if (!m)
		return;
	if (m->ino_fd >= 0)
		close(m->ino_fd);
	g_free(m->new_dir);
	g_free(m->cur_dir);
	g_free(m);
}

const struct pk_intake_ops pk_intake_maildir = {
	.type = "maildir",
	.kind = "maildir",
	.open = maildir_open,
	.start_now = maildir_start_now,
	.watch_fd = maildir_watch_fd,
	.fetch = maildir_fetch,
	.close = maildir_close,
};
