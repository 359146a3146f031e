/*
 * tinyfs.h - a disk that fills up, for the tests of transient errors: a
 * child process in its own mount namespace (a user namespace too when not
 * root) mounts a tmpfs of a few KiB on a directory and runs a check on it;
 * the mount is gone with the child.  Or the directory as it is, read-only.  -1 when the system allows no such
 * namespace (the caller skips), else the check's exit status (0: passed).
 */
#ifndef PK_TEST_TINYFS_H
#define PK_TEST_TINYFS_H

/* the includer defines _GNU_SOURCE before its first include (unshare, CLONE_*) */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>

#define TINYFS_NO_NAMESPACE 77

/* Write "0 ID 1" to /proc/self/file: the caller's id as root inside. */
static inline int tinyfs_map(const char *file, unsigned id)
{
	g_autofree char *path = g_strdup_printf("/proc/self/%s", file);
	g_autofree char *line = g_strdup_printf("0 %u 1\n", id);

	return g_file_set_contents(path, line, -1, NULL) ? 0 : -1;
}

/* size NULL: dir bound read-only on itself instead of a tmpfs */
static inline int tinyfs_enter(const char *dir, const char *size)
{
	g_autofree char *opts = g_strdup_printf("size=%s", size ? size : "0");
	unsigned uid = getuid(), gid = getgid();

	if (geteuid() == 0 ? unshare(CLONE_NEWNS) < 0
			   : unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 || tinyfs_map("uid_map", uid) < 0 ||
			     !g_file_set_contents("/proc/self/setgroups", "deny", -1, NULL) ||
			     tinyfs_map("gid_map", gid) < 0)
		return -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	if (!size)
		return mount(dir, dir, NULL, MS_BIND, NULL) < 0 ||
		       mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0 ? -1 : 0;
	return mount("tmpfs", dir, "tmpfs", 0, opts) < 0 ? -1 : 0;
}

/* Fill the file system of dir to the last byte with the file dir/filler. */
static inline void tinyfs_fill(const char *dir)
{
	g_autofree char *path = g_build_filename(dir, "filler", NULL);
	static const char block[1024];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	while (fd >= 0 && write(fd, block, sizeof block) > 0)
		;
	while (fd >= 0 && write(fd, block, 1) > 0)
		;
	if (fd >= 0)
		close(fd);
}

/*
 * Run check(dir, data) in a child with a tmpfs of size on dir (size NULL:
 * dir read-only as it is): its exit status, or -1.
 */
static inline int tinyfs_run(const char *dir, const char *size, int (*check)(const char *, void *),
			     void *data)
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0)
		_exit(tinyfs_enter(dir, size) < 0 ? TINYFS_NO_NAMESPACE : check(dir, data));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1000;
	return WEXITSTATUS(status) == TINYFS_NO_NAMESPACE ? -1 : WEXITSTATUS(status);
}

#endif
