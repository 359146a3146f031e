/* beneath.c - reading files in a directory someone less trusted can write; see beneath.h. */
#define _GNU_SOURCE
#include "base/beneath.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CAP (16u << 20)

int pk_beneath_open_dir(const char *dir, GError **err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return pk_error(err, pk_errno_code(errno), "%s: %s", dir, g_strerror(errno));
	return fd;
}

/* What st is, for an error that says why a path was not read. */
static const char *kind_of(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFDIR: return "a directory";
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFSOCK: return "a socket";
	case S_IFLNK: return "a symbolic link";
	default: return "not a regular file";
	}
}

/*
 * Why an openat() of name with O_NOFOLLOW failed, as an error: ELOOP is
 * a symlink (O_NOFOLLOW's answer for one), ENXIO a FIFO without a writer
 * or a socket (O_NONBLOCK's), ENOTDIR a file where a directory was
 * wanted.  -2 for an absent one.
 */
static int open_failed(int dirfd, const char *rel, const char *name, GError **err)
{
	int e = errno;
	struct stat st;

	/* a name too long for any file system (a patch's path past NAME_MAX) names no file either */
	if (e == ENOENT || e == ENAMETOOLONG)
		return -2;
	if (e == ENOTDIR && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(st.st_mode))
		return -2;   /* a file where the path wants a directory: the path is not there */
	if (e == ELOOP || e == ENOTDIR || e == ENXIO) {
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return pk_error(err, PK_ERROR_INPUT, "%s: not read: it is %s", rel, kind_of(&st));
	}
	return pk_error(err, pk_errno_code(e), "%s: %s", rel, g_strerror(e));
}

int pk_beneath_open(int dirfd, const char *rel, struct stat *out_st, GError **err)
{
	g_auto(GStrv) names = g_strsplit(rel, "/", -1);
	int at = dirfd, fd = -1;
	struct stat st;

	if (!*rel || *rel == '/')
		return pk_error(err, PK_ERROR_FAILED, "'%s' is not a relative path", rel);
	for (char **n = names; *n; n++) {
		bool last = !n[1];
		int flags = last ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
				 : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

		if (!**n || !strcmp(*n, ".") || !strcmp(*n, "..")) {
			fd = pk_error(err, PK_ERROR_FAILED, "'%s': no empty, '.' or '..' name allowed", rel);
			break;
		}
		fd = openat(at, *n, flags);
		if (fd < 0)
			fd = open_failed(at, rel, *n, err);
		if (at != dirfd)
			close(at);
		at = fd;
		if (fd < 0)
			break;
	}
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return pk_error(err, pk_errno_code(e), "%s: %s", rel, g_strerror(e));
	}
	/* after the open, on what was opened: nothing can swap it between a check and the open */
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return pk_error(err, PK_ERROR_INPUT, "%s: not read: it is %s", rel, kind_of(&st));
	}
	if (st.st_nlink > 1) {
		close(fd);
		return pk_error(err, PK_ERROR_INPUT, "%s: not read: it has %lu hard links (a file of elsewhere?)",
				rel, (unsigned long)st.st_nlink);
	}
	if (out_st)
		*out_st = st;
	return fd;
}

int pk_beneath_read(char **out, size_t *out_len, int dirfd, const char *rel, size_t cap, GError **err)
{
	struct stat st;
	int fd = pk_beneath_open(dirfd, rel, &st, err), rc;

	if (fd == -2)
		return 0;
	if (fd < 0)
		return -1;
	if (!cap)
		cap = DEFAULT_CAP;
	if ((guint64)st.st_size > cap) {
		close(fd);
		return pk_error(err, PK_ERROR_LIMIT, "%s: not read: %jd bytes, more than the limit of %zu",
				rel, (intmax_t)st.st_size, cap);
	}
	rc = pk_read_fd(out, out_len, fd, rel, cap, err);
	close(fd);
	return rc < 0 ? -1 : 1;
}

int pk_beneath_read_at(char **out, size_t *out_len, const char *dir, const char *rel, size_t cap,
		       GError **err)
{
	int dirfd = pk_beneath_open_dir(dir, err), rc;

	if (dirfd < 0)
		return -1;
	rc = pk_beneath_read(out, out_len, dirfd, rel, cap, err);
	if (rc < 0)
		g_prefix_error(err, "%s/", dir);
	close(dirfd);
	return rc;
}

/* pk_beneath_open() of rel beneath the directory dir: the fd, -2 absent, -1 with err naming dir. */
static int open_at_path(const char *dir, const char *rel, struct stat *out_st, GError **err)
{
	int dirfd = pk_beneath_open_dir(dir, err), fd;

	if (dirfd < 0)
		return -1;
	fd = pk_beneath_open(dirfd, rel, out_st, err);
	close(dirfd);
	if (fd == -1)
		g_prefix_error(err, "%s/", dir);
	return fd;
}

int pk_beneath_regular(const char *dir, const char *rel, struct stat *out_st, GError **err)
{
	int fd = open_at_path(dir, rel, out_st, err);

	if (fd < 0)
		return fd == -2 ? 0 : -1;
	close(fd);
	return 1;
}

/* Write all of fd_in's bytes to fd_out, at most cap (0: no cap): 0, or -1 with errno (EFBIG over the cap). */
static int copy_fd(int fd_out, int fd_in, guint64 cap)
{
	char buf[1 << 16];
	guint64 total = 0;

	for (;;) {
		ssize_t n = read(fd_in, buf, sizeof buf), w;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		if (cap && (total += (guint64)n) > cap) {
			errno = EFBIG;
			return -1;
		}
		for (char *p = buf; n > 0; p += w, n -= w) {
			w = write(fd_out, p, (size_t)n);
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				return -1;
		}
	}
}

int pk_beneath_copy(const char *dir, const char *rel, const char *dest, guint64 cap, GError **err)
{
	int in = open_at_path(dir, rel, NULL, err), out, e;

	if (in < 0)
		return in == -2 ? 0 : -1;
	/* unlinked first: O_TRUNC of a file someone else also holds open would change theirs */
	if ((unlink(dest) < 0 && errno != ENOENT) ||
	    (out = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
		e = errno;
		close(in);
		return pk_error(err, pk_errno_code(e), "%s: %s", dest, g_strerror(e));
	}
	if (copy_fd(out, in, cap) < 0) {
		e = errno;
		close(in);
		close(out);
		unlink(dest);
		if (e == EFBIG)
			return pk_error(err, PK_ERROR_LIMIT, "%s/%s: not copied: more than the limit of %"
					G_GUINT64_FORMAT " bytes", dir, rel, cap);
		return pk_error(err, pk_errno_code(e), "copying %s/%s to %s: %s", dir, rel, dest, g_strerror(e));
	}
	close(in);
	if (close(out) < 0) {
		e = errno;
		unlink(dest);
		return pk_error(err, pk_errno_code(e), "%s: %s", dest, g_strerror(e));
	}
	return 1;
}

int pk_beneath_walk(int dirfd, const char *rel, pk_beneath_file_fn on_file, pk_beneath_enter_fn enter, void *ctx,
		    GError **err)
{
	DIR *dir = fdopendir(dirfd);
	struct dirent *e;
	int rc = 0;

	if (!dir) {
		int e = errno;

		close(dirfd);
		return pk_error(err, pk_errno_code(e), "%s: %s", *rel ? rel : ".", g_strerror(e));
	}
	while (rc == 0 && (e = readdir(dir))) {
		g_autofree char *sub = NULL;
		struct stat st;
		int fd;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			rc = on_file(dirfd, rel, e->d_name, &st, ctx, err);
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		sub = *rel ? g_strconcat(rel, "/", e->d_name, NULL) : g_strdup(e->d_name);
		if (enter && !enter(sub, ctx))
			continue;
		fd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			rc = pk_error(err, pk_errno_code(errno), "%s: %s", sub, g_strerror(errno));
		else
			rc = pk_beneath_walk(fd, sub, on_file, enter, ctx, err);
	}
	closedir(dir);
	return rc;
}
