/* relocate.c - a build dir under a name its tools/ build did not record; see relocate.h. */
#define _GNU_SOURCE
#include "lab/relocate.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/util.h"

/* tools/ holds a few dirs (objtool, its arch/ and libsubcmd): deeper is not Kbuild's */
#define WALK_DEPTH 8
/* a tools/ .cmd file is a few KiB; fixdep's largest are well under this */
#define CMD_CAP (4u << 20)

/* The files tools/build's fixdep and gcc -MD write: ".<target>.cmd", ".<target>.d". */
static bool dep_file(const char *name)
{
	return name[0] == '.' && (g_str_has_suffix(name, ".cmd") || g_str_has_suffix(name, ".d")) &&
	       strlen(name) > strlen("..d");
}

/* Into tools/'s few levels (objtool, its arch/ and libsubcmd), no deeper: nothing of Kbuild's is. */
static bool tools_enters(const char *rel, void *ctx)
{
	unsigned depth = 0;

	(void)ctx;
	for (const char *c = rel; *c; c++)
		depth += *c == '/';
	return depth <= WALK_DEPTH;
}

/*
 * Open name in dirfd to read and write it, when it is a plain file of its
 * own (no symlink, no FIFO, one link: the sandbox's builds wrote it).  -2
 * when it is something else or gone.
 */
static int open_plain(int dirfd, const char *name, struct stat *st)
{
	int fd = openat(dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -2;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_nlink != 1) {
		close(fd);
		return -2;
	}
	return fd;
}

/* The whole text of name in dirfd (NULL, no error, when it is not a plain file of its own). */
static int read_plain(char **out, int *out_fd, struct stat *st, int dirfd, const char *rel, const char *name,
		      GError **err)
{
	g_autofree char *path = g_strconcat(rel, "/", name, NULL);
	int fd = open_plain(dirfd, name, st);

	*out = NULL;
	if (fd < 0)
		return 0;
	if (pk_read_fd(out, NULL, fd, path, CMD_CAP, err) < 0) {
		close(fd);
		return -1;
	}
	if (out_fd)
		*out_fd = fd;
	else
		close(fd);
	return 0;
}

struct recorded {
	char *prefix;   /* the build dir the tools/ build was made in */
};

/*
 * From the first .cmd whose "cmd_<path> :=" line names its own target
 * (".check.o.cmd" in tools/objtool: ".../tools/objtool/check.o"), the
 * part of the path before tools/: the build dir its make had as OUTPUT.
 */
static int find_recorded(int dirfd, const char *rel, const char *name, const struct stat *lst, void *ctx,
			 GError **err)
{
	struct recorded *r = ctx;
	g_autofree char *text = NULL, *target = NULL, *own = NULL;
	struct stat st;
	const char *line;

	if (!dep_file(name) || !g_str_has_suffix(name, ".cmd"))
		return 0;
	if (read_plain(&text, NULL, &st, dirfd, rel, name, err) < 0)
		return -1;
	if (!text)
		return 0;
	target = g_strndup(name + 1, strlen(name) - strlen(".cmd") - 1);
	own = g_strconcat("/", rel, "/", target, " := ", NULL);
	for (line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *end;

		if (!g_str_has_prefix(line, "cmd_/"))
			continue;
		end = strstr(line, " := ");
		if (!end || memchr(line, '\n', end - line))
			continue;
		end += strlen(" := ");
		/* "cmd_" + prefix + own: the target named where it was made */
		if ((size_t)(end - line) > strlen("cmd_") + strlen(own) &&
		    !strncmp(end - strlen(own), own, strlen(own))) {
			r->prefix = g_strndup(line + strlen("cmd_"), end - line - strlen("cmd_") - strlen(own));
			return 1;
		}
	}
	return 0;
}

struct rewrite {
	const char *from;   /* "<old build dir>/" */
	const char *to;     /* "<build dir>/" */
	unsigned files;
};

/* Rewrite the old build dir's path to the new one's in a .cmd or .d file, keeping its times. */
static int rewrite_file(int dirfd, const char *rel, const char *name, const struct stat *lst, void *ctx,
			GError **err)
{
	struct rewrite *w = ctx;
	g_autofree char *text = NULL;
	g_autoptr(GString) out = NULL;
	struct stat st;
	struct timespec times[2];
	int fd = -1, e = 0;
	ssize_t n;

	if (!dep_file(name))
		return 0;
	if (read_plain(&text, &fd, &st, dirfd, rel, name, err) < 0)
		return -1;
	if (!text)
		return 0;
	if (!strstr(text, w->from)) {
		close(fd);
		return 0;
	}
	out = g_string_new(text);
	g_string_replace(out, w->from, w->to, 0);
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	n = pwrite(fd, out->str, out->len, 0);
	if (n < 0)
		e = errno;
	else if (n != (ssize_t)out->len)
		e = EIO;   /* a short write to a local file: the disk is full */
	else if (ftruncate(fd, out->len) < 0 || futimens(fd, times) < 0)
		e = errno;
	close(fd);
	if (e)
		return pk_error(err, pk_errno_code(e), "%s/%s: %s", rel, name, g_strerror(e));
	w->files++;
	return 0;
}

int pk_build_dir_relocate(const char *build_dir, GError **err)
{
	struct recorded r = { NULL };
	g_autofree char *from = NULL, *from_slash = NULL, *to_slash = NULL;
	struct rewrite w;
	int root, tools;

	root = open(build_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (root < 0)
		return errno == ENOENT ? 0 : pk_error(err, pk_errno_code(errno), "%s: %s", build_dir, g_strerror(errno));
	tools = openat(root, "tools", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (tools < 0) {
		int e = errno;

		close(root);
		return e == ENOENT ? 0 : pk_error(err, pk_errno_code(e), "%s/tools: %s", build_dir, g_strerror(e));
	}
	if (pk_beneath_walk(tools, "tools", find_recorded, tools_enters, &r, err) < 0) {
		close(root);
		g_free(r.prefix);
		return -1;
	}
	from = r.prefix;
	if (!from || !strcmp(from, build_dir)) {
		close(root);
		return 0;
	}
	tools = openat(root, "tools", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (tools < 0) {
		int e = errno;

		close(root);
		return pk_error(err, pk_errno_code(e), "%s/tools: %s", build_dir, g_strerror(e));
	}
	close(root);
	from_slash = g_strconcat(from, "/", NULL);
	to_slash = g_strconcat(build_dir, "/", NULL);
	w = (struct rewrite){ from_slash, to_slash, 0 };
	if (pk_beneath_walk(tools, "tools", rewrite_file, tools_enters, &w, err) < 0) {
		g_prefix_error(err, "%s: naming it in its tools/ build: ", build_dir);
		return -1;
	}
	pk_info("%s: its tools/ build had been made as %s (a copy, or a moved cache): %u files now name this dir, "
		"so that objtool, and every object with it, is not made again", build_dir, from, w.files);
	return (int)MIN(w.files, (unsigned)G_MAXINT);
}
