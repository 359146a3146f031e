/* interrupted.c - undoing what an interrupted make left in a build dir; see interrupted.h. */
#define _GNU_SOURCE
#include "lab/interrupted.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab/state.h"
#include "base/beneath.h"
#include "base/util.h"

/* fixdep writes its output through stdio, in blocks of this size */
#define CMD_BLOCK 4096
/* how many removed files the log line names */
#define NAMED_MAX 3

struct repair {
	bool marked;                /* a make of this dir never ended */
	struct timespec started;    /* ...and started then: the mark's mtime */
	unsigned removed;
	GString *named;             /* the first NAMED_MAX removed, for the log */
};

static bool at_or_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/*
 * Files no make writes: the config, and the names the bot's own stamps and
 * build log had when they lived in the build dir (a lab made before they
 * moved to state.h's dir may still hold them).
 */
static bool bot_file(const char *rel, const char *name)
{
	return g_str_has_prefix(name, ".printkbot") || g_str_has_prefix(name, "printkbot-") ||
	       (!*rel && (!strcmp(name, ".config") || !strcmp(name, ".config.old")));
}

/*
 * Whether the .cmd file name in dirfd was cut short.  A whole one ends a
 * line, its last line continues nothing ("deps_x := \" lines do), and
 * when fixdep wrote it (the only writer of more than a line) its last
 * line of its own, "$(deps_<target>):", is in the last block: a cut at a
 * block's end that happens to end a line has lost that one.  A short
 * .cmd echoed by make whose size is a whole number of blocks is counted
 * cut too: its target is made again, nothing worse.
 */
static bool cmd_cut(int dirfd, const char *name, const struct stat *st)
{
	char tail[CMD_BLOCK];
	struct stat now;
	off_t from = st->st_size > CMD_BLOCK ? st->st_size - CMD_BLOCK : 0;
	ssize_t n;
	int fd;

	if (st->st_size == 0)
		return false;   /* nothing was written: Kbuild makes the target again */
	/* the sandbox writes here: a FIFO put in its place since it was listed must not block the open */
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return false;   /* gone since it was listed */
	if (fstat(fd, &now) < 0 || !S_ISREG(now.st_mode)) {
		close(fd);
		return false;
	}
	n = pread(fd, tail, sizeof tail, from);
	close(fd);
	if (n <= 0)
		return true;
	if (tail[n - 1] != '\n' || (n >= 2 && tail[n - 2] == '\\'))
		return true;
	return st->st_size % CMD_BLOCK == 0 && !memmem(tail, n, "\n$(deps_", 8);
}

static void remove_file(struct repair *r, int dirfd, const char *rel, const char *name)
{
	if (unlinkat(dirfd, name, 0) < 0) {
		if (errno != ENOENT)
			pk_info("%s%s%s: cannot remove what an interrupted make left: %s", rel, *rel ? "/" : "",
				name, g_strerror(errno));
		return;
	}
	if (r->removed++ < NAMED_MAX)
		g_string_append_printf(r->named, "%s%s%s%s", r->named->len ? ", " : "", rel, *rel ? "/" : "",
				       name);
}

/* The target a .cmd file (".<target>.cmd") is of; caller frees. */
static char *cmd_target(const char *name)
{
	return g_strndup(name + 1, strlen(name) - strlen(".cmd") - 1);
}

static bool cmd_name(const char *name)
{
	return name[0] == '.' && strlen(name) > strlen("..cmd") && g_str_has_suffix(name, ".cmd");
}

static void repair_file(struct repair *r, int dirfd, const char *rel, const char *name, const struct stat *st)
{
	g_autofree char *cmd = NULL;
	struct stat cst;

	if (bot_file(rel, name))
		return;
	if (cmd_name(name)) {
		g_autofree char *target = NULL;

		if (!cmd_cut(dirfd, name, st))
			return;
		target = cmd_target(name);
		remove_file(r, dirfd, rel, target);
		remove_file(r, dirfd, rel, name);
		return;
	}
	if (!r->marked || !at_or_after(&st->st_mtim, &r->started))
		return;
	/* written by the make that never ended: whole when its .cmd, whole, was written after it */
	cmd = g_strdup_printf(".%s.cmd", name);
	if (fstatat(dirfd, cmd, &cst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(cst.st_mode) &&
	    at_or_after(&cst.st_mtim, &st->st_mtim) && !cmd_cut(dirfd, cmd, &cst))
		return;
	remove_file(r, dirfd, rel, name);
}

/* Into every directory but the bot's own, and Kconfig's and filechk's (their files are replaced whole, by rename). */
static bool repair_enters(const char *rel, void *ctx)
{
	const char *slash = strrchr(rel, '/');

	(void)ctx;
	return !g_str_has_prefix(slash ? slash + 1 : rel, ".printkbot") && strcmp(rel, "include/config") &&
	       strcmp(rel, "include/generated");
}

static int repair_one(int dirfd, const char *rel, const char *name, const struct stat *st, void *ctx,
		      GError **err)
{
	(void)err;
	repair_file(ctx, dirfd, rel, name, st);
	return 0;
}

int pk_build_dir_repair(const char *build_dir, GError **err)
{
	g_autoptr(GString) named = g_string_new(NULL);
	struct repair r = { .named = named };
	struct stat st;
	int fd;

	if (pk_state_stat(build_dir, PK_STATE_MAKE_RUNNING, &st)) {
		r.marked = true;
		r.started = st.st_mtim;
	}
	fd = open(build_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return pk_error(err, pk_errno_code(errno), "%s: %s", build_dir, g_strerror(errno));
	}
	if (pk_beneath_walk(fd, "", repair_one, repair_enters, &r, err) < 0) {
		g_prefix_error(err, "%s: undoing an interrupted make: ", build_dir);
		return -1;
	}
	if (r.removed)
		pk_info("%s: removed %u file%s an interrupted make left (%s%s), to be made again", build_dir,
			r.removed, r.removed == 1 ? "" : "s", named->str, r.removed > NAMED_MAX ? ", ..." : "");
	if (r.marked && pk_state_remove(build_dir, PK_STATE_MAKE_RUNNING, err) < 0)
		return -1;
	return (int)MIN(r.removed, (unsigned)G_MAXINT);
}

int pk_make_started(const char *build_dir, GError **err)
{
	return pk_state_write(build_dir, PK_STATE_MAKE_RUNNING, "", 0, err);
}

void pk_make_ended(const char *build_dir, const struct pk_proc_result *pr)
{
	if (pr->end != PK_PROC_EXITED)
		return;
	pk_state_remove(build_dir, PK_STATE_MAKE_RUNNING, NULL);
}
