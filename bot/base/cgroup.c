/* cgroup.c - a pids cgroup per child; see cgroup.h. */
#include "base/cgroup.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CGROUP_FS "/sys/fs/cgroup"
#define OUR_DIR "printkbot"

/* Write text to dir/file; 0, or -1 with errno. */
static int write_to(const char *dir, const char *file, const char *text)
{
	g_autofree char *path = g_build_filename(dir, file, NULL);
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW), e;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Whether dir's cgroup.controllers lists pids: a v2 hierarchy that has the controller. */
static gboolean v2_has_pids(const char *dir)
{
	g_autofree char *path = g_build_filename(dir, "cgroup.controllers", NULL);
	g_autofree char *text = NULL;
	g_auto(GStrv) words = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return FALSE;
	words = g_strsplit_set(g_strstrip(text), " \n", -1);
	return g_strv_contains((const char *const *)words, "pids");
}

/*
 * The hierarchy's root with the pids controller, and whether it is v2:
 * the unified /sys/fs/cgroup, v1's /sys/fs/cgroup/pids, or a hybrid's
 * /sys/fs/cgroup/unified when pids is bound there.  NULL when none.
 */
static const char *pids_root(gboolean *out_v2)
{
	static const char *const v2_roots[] = { CGROUP_FS, CGROUP_FS "/unified" };

	for (size_t i = 0; i < G_N_ELEMENTS(v2_roots); i++)
		if (v2_has_pids(v2_roots[i])) {
			*out_v2 = TRUE;
			return v2_roots[i];
		}
	*out_v2 = FALSE;
	return g_file_test(CGROUP_FS "/pids/cgroup.procs", G_FILE_TEST_EXISTS) ? CGROUP_FS "/pids" : NULL;
}

/* Remove the cgroups a bot that is gone left under parent: rmdir only takes empty ones. */
static void sweep(const char *parent)
{
	g_autoptr(GDir) d = g_dir_open(parent, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		long pid = strtol(name, NULL, 10);
		g_autofree char *path = NULL;

		if (pid <= 0 || !strchr(name, '-') || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		path = g_build_filename(parent, name, NULL);
		g_rmdir(path);
	}
}

char *pk_cgroup_make(unsigned max_pids, GError **err)
{
	static unsigned made;
	gboolean v2;
	const char *root = geteuid() == 0 ? pids_root(&v2) : NULL;
	g_autofree char *parent = NULL, *dir = NULL, *max = g_strdup_printf("%u\n", max_pids);

	if (geteuid() != 0) {
		pk_error(err, PK_ERROR_FAILED, "pids cgroups need root");
		return NULL;
	}
	if (!root) {
		pk_error(err, PK_ERROR_FAILED, "no cgroup hierarchy with the pids controller under %s", CGROUP_FS);
		return NULL;
	}
	parent = g_build_filename(root, OUR_DIR, NULL);
	if (g_mkdir(parent, 0755) < 0 && errno != EEXIST) {
		pk_error(err, PK_ERROR_FAILED, "cannot make the cgroup %s: %s", parent, g_strerror(errno));
		return NULL;
	}
	/* v2: a cgroup's controllers are what its parent hands down; ours has no process of its own */
	if (v2 && (write_to(root, "cgroup.subtree_control", "+pids") < 0 ||
		   write_to(parent, "cgroup.subtree_control", "+pids") < 0)) {
		pk_error(err, PK_ERROR_FAILED, "cannot hand the pids controller down to %s: %s", parent,
			 g_strerror(errno));
		return NULL;
	}
	if (made == 0)
		sweep(parent);
	dir = g_strdup_printf("%s/%ld-%u", parent, (long)getpid(), made++);
	if (g_mkdir(dir, 0755) < 0) {
		pk_error(err, PK_ERROR_FAILED, "cannot make the cgroup %s: %s", dir, g_strerror(errno));
		return NULL;
	}
	if (write_to(dir, "pids.max", max) < 0) {
		pk_error(err, PK_ERROR_FAILED, "cannot cap %s/pids.max: %s", dir, g_strerror(errno));
		g_rmdir(dir);
		return NULL;
	}
	return g_steal_pointer(&dir);
}

void pk_cgroup_remove(const char *dir)
{
	int rc;

	/* a member reaped a moment ago may not have left it yet (EBUSY): a few short tries, no event says when */
	for (int i = 0; (rc = g_rmdir(dir)) < 0 && errno == EBUSY && i < 50; i++)
		g_usleep(10000);
	if (rc < 0 && errno != ENOENT)
		pk_info("cannot remove the cgroup %s: %s", dir, g_strerror(errno));
}
