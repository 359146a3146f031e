/*
 * intake-maildir.c - a Maildir as a source.  New mail is noticed with
 * inotify on new/ (a delivery renames or links a file there from tmp/), not
 * by polling.  A mail handed over is moved to cur/ with the Seen flag, as
 * a mail reader does, so new/ holds exactly what is still to be read; when
 * the rename fails (a read-only Maildir) the mail stays and the caller's
 * Message-ID check drops it next time.  Starting now moves what new/
 * holds to cur/ unread (no Seen flag), as a mail reader does with mail
 * it has noticed but not opened: a list folder's backlog is not tested.
 */
#include "intake/intake.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
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
		g_autofree char *path = g_build_filename(m->new_dir, names->pdata[i], NULL);
		g_autofree char *raw = NULL;
		size_t len;

		if (pk_read_file(&raw, &len, path, PK_INTAKE_MAX_MAIL, NULL) < 0)
			continue;   /* gone meanwhile, or too large: not ours to read */
		if (deliver(data, raw, len, err) < 0)
			return -1;
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
