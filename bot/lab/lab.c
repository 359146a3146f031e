/* lab.c - the lab's paths and lock; see lab.h. */
#include "lab/lab.h"
#include "lab/layer.h"
#include "lab/repo.h"
#include "base/beneath.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

char *pk_lab_config_name(const char *datadir, const struct pk_arch *arch, const struct pk_board *board,
			 const char *extra, char *const *qemu_args, GError **err)
{
	/* x86_64's name is its fragment's alone, as before there were others: its build dirs stay */
	g_autofree char *frag_path = g_build_filename(datadir, "qemu", arch->fragment, NULL);
	g_autofree char *fragment = NULL;
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	size_t len;

	if (pk_read_file(&fragment, &len, frag_path, 1 << 20, err) < 0)
		return NULL;
	g_checksum_update(sum, (const guchar *)fragment, (gssize)len);
	if (extra)
		g_checksum_update(sum, (const guchar *)extra, -1);
	if (board) {
		/* what the board boots with; its symbols are in extra */
		g_autofree char *how = g_strdup_printf("\n# qemu/boards\n%s dtb=%s console=%s capture=%s "
						       "capture_first=%d memory=%s smp=%s\n", board->machine,
						       board->dtb ?: "", board->console ?: "",
						       board->capture_port ?: "", board->capture_first,
						       board->memory ?: "", board->smp ?: "");

		g_checksum_update(sum, (const guchar *)how, -1);
	}
	if (qemu_args && *qemu_args) {
		g_checksum_update(sum, (const guchar *)"\n# qemu/devices\n", -1);
		for (char *const *a = qemu_args; *a; a++) {
			g_checksum_update(sum, (const guchar *)*a, -1);
			g_checksum_update(sum, (const guchar *)" ", 1);
		}
		/* boots with devices wait for a quiet log: not the same boots as before they did */
		g_checksum_update(sum, (const guchar *)PK_LAB_SETTLE_CMDLINE, -1);
	}
	return g_strndup(g_checksum_get_string(sum), 12);
}

int pk_lab_open(struct pk_lab *out, GError **err)
{
	struct pk_lab lab = { .arch = &pk_arch_x86_64, .lock_fd = -1, .repo = pk_repo_cache_new() };

	lab.cache = pk_cache_dir();
	lab.datadir = pk_data_dir();
	if (!(lab.config_hash = pk_lab_config_name(lab.datadir, lab.arch, NULL, NULL, NULL, err))) {
		pk_lab_clear(&lab);
		return -1;
	}
	lab.tree = g_build_filename(lab.cache, "linux", NULL);
	lab.initrd = g_build_filename(lab.cache, "guest", "initrd.cpio", NULL);
	lab.build_stem = g_build_filename(lab.cache, "build", lab.config_hash, NULL);
	*out = lab;
	return 0;
}

int pk_lab_set_arch(struct pk_lab *lab, const struct pk_arch *arch, GError **err)
{
	char *hash = pk_lab_config_name(lab->datadir, arch, NULL, NULL, NULL, err);

	if (!hash)
		return -1;
	g_free(lab->config_hash);
	g_free(lab->build_stem);
	g_free(lab->initrd);
	lab->arch = arch;
	lab->board = NULL;
	lab->config_hash = hash;
	lab->build_stem = g_build_filename(lab->cache, "build", hash, NULL);
	lab->initrd = arch == &pk_arch_x86_64 ? g_build_filename(lab->cache, "guest", "initrd.cpio", NULL)
					      : g_build_filename(lab->cache, "guest", arch->name, "initrd.cpio", NULL);
	return 0;
}

int pk_lab_set_board(struct pk_lab *lab, const struct pk_board *board, GError **err)
{
	char *hash = pk_lab_config_name(lab->datadir, pk_lab_arch(lab), board, lab->extra_config, lab->qemu_args,
					err);

	if (!hash)
		return -1;
	g_free(lab->config_hash);
	lab->config_hash = hash;
	lab->board = board;
	return 0;
}

void pk_lab_clear(struct pk_lab *lab)
{
	g_free(lab->cache);
	g_free(lab->datadir);
	g_free(lab->build_stem);
	g_free(lab->initrd);
	g_free(lab->config_hash);
	g_free(lab->extra_config);
	g_strfreev(lab->qemu_args);
	/* tree is set only by a successful pk_lab_open(): a zeroed lab holds no fd 0 */
	if (lab->tree && lab->lock_fd >= 0) {
		/* the next holder of the lock builds on the build dirs as published builds left them */
		pk_layer_drop_all();
		if (ftruncate(lab->lock_fd, 0) < 0)
			pk_info("the lab's lock file still names this process: %s", g_strerror(errno));
		close(lab->lock_fd);
	}
	g_free(lab->tree);
	pk_repo_cache_free(lab->repo);
	memset(lab, 0, sizeof(*lab));
	lab->lock_fd = -1;
}

/* The lock file's text while it is held: "<pid> <unix time taken> <command line>\n" (pk_lab_lock()). */
static void say_holder(int fd)
{
	g_autofree char *cmdline = NULL, *line = NULL;
	gsize len = 0;

	if (g_file_get_contents("/proc/self/cmdline", &cmdline, &len, NULL))
		for (gsize i = 0; i + 1 < len; i++)
			if (!cmdline[i])
				cmdline[i] = ' ';
	line = g_strdup_printf("%ld %" G_GINT64_FORMAT " %.300s\n", (long)getpid(),
			       g_get_real_time() / G_USEC_PER_SEC, cmdline ? cmdline : "printkbot");
	if (ftruncate(fd, 0) == 0 && pwrite(fd, line, strlen(line), 0) < 0)
		return;   /* only a courtesy to whoever waits */
}

/*
 * Who holds the lab, as its lock file says: "printkbot test x.patch (pid
 * 123, for 3 min)", or NULL when it does not say (a holder of an older
 * printkbot, a test's flock) or that process is gone.  Caller frees.
 */
static char *holder_of(int fd)
{
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	long pid = 0;
	gint64 since = 0;
	int used = 0;
	g_autofree char *what = NULL;

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	if (sscanf(buf, "%ld %" G_GINT64_FORMAT " %n", &pid, &since, &used) < 2 || pid <= 0 || used <= 0 ||
	    kill((pid_t)pid, 0) < 0)
		return NULL;
	what = pk_text_for_terminal(g_strchomp(buf + used));
	return g_strdup_printf("%s (pid %ld, for %" G_GINT64_FORMAT " s)", what, pid,
			       g_get_real_time() / G_USEC_PER_SEC - since);
}

int pk_lab_lock(struct pk_lab *lab, GError **err)
{
	g_autofree char *path = g_build_filename(lab->cache, "lock", NULL);
	int fd;

	if (lab->lock_fd >= 0)
		return 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", path, g_strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		g_autofree char *holder = NULL;

		if (errno != EWOULDBLOCK) {
			close(fd);
			return pk_error(err, PK_ERROR_FAILED, "%s: %s", path, g_strerror(errno));
		}
		holder = holder_of(fd);
		pk_info("waiting for %s, which holds the lab %s", holder ? holder : "another printkbot", lab->cache);
		while (flock(fd, LOCK_EX) < 0) {
			if (errno != EINTR) {
				close(fd);
				return pk_error(err, PK_ERROR_FAILED, "%s: %s", path, g_strerror(errno));
			}
		}
	}
	lab->lock_fd = fd;
	say_holder(fd);
	/* what a process that died left of its layers (their mounts died with it) */
	return pk_layer_sweep(lab->cache, err);
}

/*
 * Every job starts with the tree on a base (pk_repo_rest()): one that a
 * killed test left at a patch's commit, or without its top Makefile,
 * would otherwise make every later job fail, and the daemon with them.
 */
static int lab_rest(struct pk_lab *lab, GError **err)
{
	g_autofree char *head = pk_repo_resolve(lab, "HEAD", NULL);
	g_autofree char *after = NULL;

	if (pk_repo_rest(lab, NULL, false, err) < 0)
		return -1;
	after = pk_repo_resolve(lab, "HEAD", NULL);
	if (g_strcmp0(head, after))
		pk_info("the kernel tree was left at %.12s: back on %.12s", head ? head : "nothing", after);
	return 0;
}

int pk_lab_take(struct pk_lab *out, const struct pk_arch *arch, GError **err)
{
	g_autoptr(GError) why = NULL;
	struct pk_lab lab;

	if (pk_lab_open(&lab, err) < 0)
		return -1;
	if (arch && pk_lab_set_arch(&lab, arch, err) < 0) {
		pk_lab_clear(&lab);
		return -1;
	}
	if (pk_lab_check(&lab, &why) < 0) {
		const char *name = pk_lab_arch(&lab)->name;
		bool own = pk_lab_arch(&lab) == &pk_arch_x86_64;

		pk_lab_clear(&lab);
		return pk_error(err, PK_ERROR_FAILED, "the kernel lab is not set up%s%s (%s): run 'printkbot setup%s%s'",
				own ? "" : " for ", own ? "" : name, why->message, own ? "" : " --arch ", own ? "" : name);
	}
	if (pk_lab_lock(&lab, err) < 0 || lab_rest(&lab, err) < 0) {
		pk_lab_clear(&lab);
		return -1;
	}
	*out = lab;
	return 0;
}

/* A copy of lab without its lock: its strings and repository handle its own. */
static struct pk_lab lab_copy(const struct pk_lab *lab)
{
	return (struct pk_lab){
		.arch = lab->arch,
		.board = lab->board,
		.cache = g_strdup(lab->cache),
		.datadir = g_strdup(lab->datadir),
		.tree = g_strdup(lab->tree),
		.build_stem = g_strdup(lab->build_stem),
		.initrd = g_strdup(lab->initrd),
		.config_hash = g_strdup(lab->config_hash),
		.extra_config = g_strdup(lab->extra_config),
		.qemu_args = g_strdupv(lab->qemu_args),
		.repo = pk_repo_cache_new(),   /* its own: lab's is lab's to free */
		.lock_fd = -1,
	};
}

int pk_lab_for_arch(struct pk_lab *out, const struct pk_lab *lab, const struct pk_arch *arch, char **why,
		    GError **err)
{
	struct pk_lab l = lab_copy(lab);
	g_autoptr(GError) missing = NULL;

	/* the lab's own config, not a derived one: the other architecture derives its own */
	g_clear_pointer(&l.extra_config, g_free);
	g_clear_pointer(&l.qemu_args, g_strfreev);
	if (pk_lab_set_arch(&l, arch, err) < 0) {
		pk_lab_clear(&l);
		return -1;
	}
	if (pk_lab_check(&l, &missing) < 0) {
		*why = g_strdup(missing->message);
		pk_lab_clear(&l);
		return 1;
	}
	*out = l;
	return 0;
}

/* The series rev's top Makefile states, from the repository (not a worktree): NULL when none. */
static char *rev_series(const struct pk_lab *lab, const char *rev)
{
	g_autofree char *makefile = NULL;

	/* the first lines are enough, and a pushed commit's Makefile is no bigger than any other */
	if (pk_repo_read_file(&makefile, NULL, lab, rev, "Makefile", NULL) < 0)
		return NULL;
	return pk_repo_makefile_series(makefile);
}

int pk_lab_for_rev(struct pk_lab *out, const struct pk_lab *lab, const char *rev, GError **err)
{
	g_autofree char *series = rev_series(lab, rev), *base = rev_series(lab, PK_LAB_BASE_TAG);
	g_autofree char *tree = NULL, *dir = NULL;
	struct pk_lab l;

	if (series && base && strcmp(series, base)) {
		dir = g_build_filename(lab->cache, PK_LAB_TREES_DIR, NULL);
		tree = g_build_filename(dir, series, NULL);
		if (!g_file_test(tree, G_FILE_TEST_IS_DIR))
			pk_info("the kernel %s gets a tree of its own, %s, beside %s's: switching between them "
				"rewrites no file of either (made once; its first build starts cold)", series, tree,
				base);
		if (pk_repo_worktree(lab, tree, rev, err) < 0)
			return -1;
	}
	l = lab_copy(lab);
	if (tree) {
		g_free(l.tree);
		l.tree = g_steal_pointer(&tree);
	}
	/* a worktree a killed test left without its top Makefile: whole again */
	if (strcmp(l.tree, lab->tree) && !(series = (g_free(series), pk_lab_tree_series(&l))) &&
	    pk_repo_rest(&l, rev, true, err) < 0) {
		pk_lab_clear(&l);
		return -1;
	}
	*out = l;
	return 0;
}

char *pk_lab_tree_series(const struct pk_lab *lab)
{
	char head[1024];
	ssize_t n = 0;
	int dirfd = open(lab->tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;

	/* what a commit checked out put there (a pushed one may hold a link): as beneath.h reads */
	if (dirfd >= 0 && (fd = pk_beneath_open(dirfd, "Makefile", NULL, NULL)) >= 0) {
		while ((n = read(fd, head, sizeof(head) - 1)) < 0 && errno == EINTR)
			;
		close(fd);
	}
	if (dirfd >= 0)
		close(dirfd);
	head[n > 0 ? n : 0] = '\0';    /* VERSION and PATCHLEVEL are in the Makefile's first lines */
	return pk_repo_makefile_series(head);
}

char *pk_lab_build_dir(const struct pk_lab *lab)
{
	g_autofree char *series = pk_lab_tree_series(lab);

	if (!series)
		return g_strdup(lab->build_stem);
	return g_strdup_printf("%s-%s", lab->build_stem, series);
}

char *pk_lab_ready_stamp(const struct pk_lab *lab)
{
	return g_strconcat(lab->build_stem, ".ready", NULL);
}

int pk_lab_check(const struct pk_lab *lab, GError **err)
{
	g_autofree char *stamp = pk_lab_ready_stamp(lab);
	g_autofree char *base = NULL;

	/*
	 * The tree first: a stamp outlives a kernel tree someone removed.  Its
	 * base commit, not its worktree: a worktree a patch left without its
	 * top Makefile is repaired when the lab is taken (pk_lab_take()), not
	 * a lab to set up again.
	 */
	if (!(base = pk_repo_resolve(lab, PK_LAB_BASE_TAG, NULL)))
		return pk_error(err, PK_ERROR_FAILED, "no kernel tree at %s (no commit %s)", lab->tree,
				PK_LAB_BASE_TAG);
	if (!g_file_test(stamp, G_FILE_TEST_EXISTS))
		return pk_error(err, PK_ERROR_FAILED, "setup did not finish for config %s (no %s)",
				lab->config_hash, stamp);
	if (!g_file_test(lab->initrd, G_FILE_TEST_EXISTS))
		return pk_error(err, PK_ERROR_FAILED, "no guest initramfs at %s", lab->initrd);
	return 0;
}

gboolean pk_lab_ready(struct pk_lab *lab)
{
	return pk_lab_check(lab, NULL) == 0;
}

char *pk_lab_ready_arches(void)
{
	g_autoptr(GString) names = g_string_new(NULL);
	struct pk_lab lab;

	if (pk_lab_open(&lab, NULL) < 0)
		return NULL;
	for (size_t i = 0; pk_arch_nth(i); i++)
		if (pk_lab_set_arch(&lab, pk_arch_nth(i), NULL) == 0 && pk_lab_check(&lab, NULL) == 0)
			g_string_append_printf(names, "%s%s", names->len ? "," : "", pk_arch_nth(i)->name);
	pk_lab_clear(&lab);
	return names->len ? g_string_free(g_steal_pointer(&names), FALSE) : NULL;
}
