/* outbox.c - the reply outbox, a Maildir; see outbox.h. */
#define _GNU_SOURCE
#include "report/outbox.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SENT_SUFFIX ":2,S"
#define REFUSED_SUFFIX ":2,T"   /* Maildir's "trashed": kept to be read, never sent */

char *pk_outbox_default_dir(const char *configured)
{
	g_autofree char *cache = NULL;

	if (configured && *configured)
		return g_strdup(configured);
	cache = pk_cache_dir();
	return g_build_filename(cache, "outbox", NULL);
}

int pk_outbox_open(struct pk_outbox **out, const char *dir, bool create, GError **err)
{
	static const char *const subs[] = { "tmp", "new", "cur" };
	struct pk_outbox *ob;

	for (size_t i = 0; create && i < G_N_ELEMENTS(subs); i++) {
		g_autofree char *sub = g_build_filename(dir, subs[i], NULL);
		if (g_mkdir_with_parents(sub, 0700) < 0)
			return pk_error(err, PK_ERROR_FAILED, "outbox %s: %s", sub, g_strerror(errno));
	}
	ob = g_new0(struct pk_outbox, 1);
	ob->dir = g_strdup(dir);
	*out = ob;
	return 0;
}

void pk_outbox_free(struct pk_outbox *ob)
{
	if (!ob)
		return;
	g_free(ob->dir);
	g_free(ob);
}

/* '/' and ':' may not appear in a Maildir name, '%' is the escape; the rest is kept readable. */
char *pk_outbox_name(const char *message_id)
{
	GString *s = g_string_new(NULL);

	for (const unsigned char *p = (const unsigned char *)message_id; *p; p++) {
		if (g_ascii_isalnum(*p) || strchr("@._+=-", *p))
			g_string_append_c(s, (char)*p);
		else
			g_string_append_printf(s, "%%%02X", *p);
	}
	return g_string_free(s, FALSE);
}

/* The Message-ID of a name in new/, or NULL for a name pk_outbox_name() never makes. */
static char *name_to_message_id(const char *name)
{
	GString *s = g_string_new(NULL);

	for (const char *p = name; *p; p++) {
		if (*p == '%' && g_ascii_isxdigit(p[1]) && g_ascii_isxdigit(p[2])) {
			g_string_append_c(s, (char)(g_ascii_xdigit_value(p[1]) * 16 + g_ascii_xdigit_value(p[2])));
			p += 2;
		} else if (g_ascii_isalnum(*p) || strchr("@._+=-", *p)) {
			g_string_append_c(s, *p);
		} else {
			g_string_free(s, TRUE);
			return NULL;
		}
	}
	return g_string_free(s, FALSE);
}

static char *new_path(const struct pk_outbox *ob, const char *message_id)
{
	g_autofree char *name = pk_outbox_name(message_id);

	return g_build_filename(ob->dir, "new", name, NULL);
}

static char *cur_path(const struct pk_outbox *ob, const char *message_id)
{
	g_autofree char *name = pk_outbox_name(message_id);
	g_autofree char *flagged = g_strconcat(name, SENT_SUFFIX, NULL);

	return g_build_filename(ob->dir, "cur", flagged, NULL);
}

enum pk_outbox_state pk_outbox_state(const struct pk_outbox *ob, const char *message_id)
{
	g_autofree char *n = new_path(ob, message_id);
	g_autofree char *c = cur_path(ob, message_id);

	if (access(c, F_OK) == 0)
		return PK_OUTBOX_SENT;
	if (access(n, F_OK) == 0)
		return PK_OUTBOX_WAITING;
	return PK_OUTBOX_ABSENT;
}

/* fsync a directory, so that a rename in it survives a power cut. */
static int sync_dir(const char *dir, GError **err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fsync(fd) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return pk_error(err, pk_errno_code(e), "outbox %s: %s", dir, g_strerror(e));
	}
	close(fd);
	return 0;
}

static int write_synced(const char *path, const char *text, size_t len, GError **err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	size_t done = 0;
	int e;

	if (fd < 0)
		return pk_error(err, pk_errno_code(errno), "outbox %s: %s", path, g_strerror(errno));
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		done += (size_t)n;
	}
	if (fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	return 0;
fail:
	e = errno;
	pk_error(err, pk_errno_code(e), "outbox %s: %s", path, g_strerror(e));
	if (fd >= 0)
		close(fd);
	unlink(path);
	return -1;
}

/* rename without replacing: renameat2(RENAME_NOREPLACE), or link+unlink where that is not supported. */
static int rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (link(from, to) < 0)
		return -1;
	unlink(from);
	return 0;
}

int pk_outbox_deliver(struct pk_outbox *ob, const char *message_id, const char *text, size_t len,
		      bool *out_added, GError **err)
{
	g_autofree char *name = pk_outbox_name(message_id);
	g_autofree char *uniq = g_strdup_printf("%s.%d", name, (int)getpid());
	g_autofree char *tmp = g_build_filename(ob->dir, "tmp", uniq, NULL);
	g_autofree char *dst = new_path(ob, message_id);
	g_autofree char *new_dir = g_build_filename(ob->dir, "new", NULL);

	if (pk_outbox_state(ob, message_id) != PK_OUTBOX_ABSENT) {
		if (out_added)
			*out_added = false;
		return 0;
	}
	unlink(tmp);   /* a leftover of this very pid's crash */
	if (write_synced(tmp, text, len, err) < 0)
		return -1;
	if (rename_noreplace(tmp, dst) < 0) {
		int e = errno;
		unlink(tmp);
		if (e != EEXIST)
			return pk_error(err, pk_errno_code(e), "outbox %s: %s", dst, g_strerror(e));
		if (out_added)
			*out_added = false;
		return 0;
	}
	if (sync_dir(new_dir, err) < 0)
		return -1;
	if (out_added)
		*out_added = true;
	return 0;
}

int pk_outbox_read(const struct pk_outbox *ob, const char *message_id, char **out, size_t *out_len,
		   GError **err)
{
	g_autofree char *path = new_path(ob, message_id);

	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (pk_read_file(out, out_len, path, 0, err) < 0)
		return -1;
	return 1;
}

int pk_outbox_mark_sent(struct pk_outbox *ob, const char *message_id, GError **err)
{
	g_autofree char *from = new_path(ob, message_id);
	g_autofree char *to = cur_path(ob, message_id);
	g_autofree char *cur_dir = g_build_filename(ob->dir, "cur", NULL);

	if (rename(from, to) < 0) {
		if (errno == ENOENT && access(to, F_OK) == 0)
			return 0;
		return pk_error(err, pk_errno_code(errno), "outbox: %s to %s: %s", from, to, g_strerror(errno));
	}
	return sync_dir(cur_dir, err);
}

int pk_outbox_mark_refused(struct pk_outbox *ob, const char *message_id, GError **err)
{
	g_autofree char *from = new_path(ob, message_id);
	g_autofree char *name = pk_outbox_name(message_id);
	g_autofree char *flagged = g_strconcat(name, REFUSED_SUFFIX, NULL);
	g_autofree char *to = g_build_filename(ob->dir, "cur", flagged, NULL);
	g_autofree char *cur_dir = g_build_filename(ob->dir, "cur", NULL);

	if (rename(from, to) < 0) {
		if (errno == ENOENT)
			return 0;
		return pk_error(err, pk_errno_code(errno), "outbox: %s to %s: %s", from, to, g_strerror(errno));
	}
	return sync_dir(cur_dir, err);
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pk_outbox_waiting(const struct pk_outbox *ob, GPtrArray **out, GError **err)
{
	g_autofree char *dir = g_build_filename(ob->dir, "new", NULL);
	g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) e = NULL;
	g_autoptr(GDir) d = g_dir_open(dir, 0, &e);
	const char *name;

	if (!d) {
		if (!g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			return pk_error(err, PK_ERROR_FAILED, "outbox %s: %s", dir, e->message);
		*out = g_steal_pointer(&ids);
		return 0;
	}
	while ((name = g_dir_read_name(d))) {
		char *id = name[0] == '.' ? NULL : name_to_message_id(name);
		if (id)
			g_ptr_array_add(ids, id);
	}
	g_ptr_array_sort(ids, cmp_str);
	*out = g_steal_pointer(&ids);
	return 0;
}
