/*
 * lab.h - the kernel lab: where the bot's kernel tree, build dir and guest
 * initramfs live, and `printkbot setup`, which prepares them.
 *
 * Layout under the cache dir ($PRINTKBOT_CACHE, default ~/.cache/printkbot):
 *   linux/                 Debian's linux-source-6.12 as a git repository,
 *                          one base commit tagged printkbot-base
 *   build/<cfg>/           make O= dir for the (single) base and that config
 *   guest/init, initrd.cpio  the static guest init and its initramfs
 *
 * Every step checks whether its result is already there and complete, and
 * builds into a temporary name that is renamed into place when done, so an
 * interrupted setup is redone from the step it was in.
 */
#ifndef PK_LAB_H
#define PK_LAB_H

#include <glib.h>

struct pk_lab {
	char *cache;      /* the cache dir */
	char *srcdir;     /* printkbot's own source dir (qemu/kernel.config, qemu/init.c) */
	char *tree;       /* cache/linux */
	char *build_dir;  /* cache/build/<cfg> */
	char *initrd;     /* cache/guest/initrd.cpio */
	char *config_hash;/* first 12 hex of sha256(fragment) */
	int lock_fd;      /* held by pk_lab_lock(), -1 when not */
};

/* Fill in the paths (nothing is created but the cache dir).  Free with pk_lab_clear(). */
int pk_lab_open(struct pk_lab *out, GError **err);
void pk_lab_clear(struct pk_lab *lab);

/*
 * Take the lab for this process: one tree and one build dir cannot serve
 * two builds at once, so a second printkbot on the same cache waits here
 * (saying so on stderr) until the first is done.  Released by
 * pk_lab_clear() or process exit (it is a flock).
 */
int pk_lab_lock(struct pk_lab *lab, GError **err);

/*
 * What every command and job that builds or boots starts with: the lab
 * opened (pk_lab_open()), checked to be set up ("run 'printkbot setup'"
 * when it is not) and locked (pk_lab_lock(), waiting for another
 * printkbot).  *out is untouched on failure; clear it with pk_lab_clear().
 */
int pk_lab_take(struct pk_lab *out, GError **err);

/* Prepare tree, git base, kernel config and initramfs; idempotent. */
int pk_lab_setup(struct pk_lab *lab, GError **err);

/*
 * Write the build dir's kernel config for the tree as it is checked out:
 * tinyconfig, qemu/kernel.config merged on top, olddefconfig.  The config
 * is a function of the tree's Kconfig and the fragment only (not of the
 * config before), so a commit's build is the same whatever was built
 * before it.  Options of the fragment the tree does not have (an older
 * kernel without PRINTK_INDEX) are an error, or, when missing is not
 * NULL, appended to it as " CONFIG_X=y" words.  Setup does this once, at
 * the base; range.h's pk_range_sync_config() again for a tree whose
 * Kconfig differs.
 */
int pk_lab_configure(const struct pk_lab *lab, GString *missing, GError **err);

/* True when setup has been completed (tree, base commit, config, initrd). */
gboolean pk_lab_ready(struct pk_lab *lab);

/*
 * Check out rev (any git revision) in the lab's tree, detached.  git
 * rewrites only the files that differ, so the next build is incremental.
 */
int pk_lab_checkout(const struct pk_lab *lab, const char *rev, GError **err);

/* Run git in the lab's tree; its output is appended to out (may be NULL). */
int pk_lab_git(const struct pk_lab *lab, GString *out, GError **err, ...) G_GNUC_NULL_TERMINATED;

#define PK_LAB_BASE_TAG "printkbot-base"

#endif
