/*
 * lab.h - the kernel lab: where the bot's kernel tree, build dir and guest
 * initramfs live, and the lock that makes one printkbot at a time use them.
 *
 * Layout under the cache dir ($PRINTKBOT_CACHE, default ~/.cache/printkbot):
 *   linux/                 Debian's linux-source-6.12 as a git repository,
 *                          one base commit tagged printkbot-base, the
 *                          commits of patches and ranges under test
 *   trees/<series>/        a worktree of that repository per other kernel
 *                          series (6.1, a [tree]'s 7.x: pk_lab_for_rev())
 *   build/<cfg>-<series>/  make O= dir for that config (each arch's is its
 *                          own: arch.h's fragment) and kernel series
 *                          (6.12: VERSION.PATCHLEVEL of the tree), so a
 *                          6.1 base never leaves its objects in 6.12's dir
 *                          (a switch still rewrites the files that differ);
 *                          only published builds write it (layer.h)
 *                          .printkbot-config when its .config was made from
 *                          the fragment, .printkbot-kconfig the commit the
 *                          .config was last made for
 *   build/<cfg>.ready      setup was completed for that config
 *   ccache/                the bot's ccache unless [build] ccache_dir names
 *                          another: only builds of published commits write
 *                          it (build.c)
 *   layers/<build dir>.<pid>/  a throwaway layer's upper and work dirs (layer.h)
 *   guest/init, initrd.cpio  the static guest init and its initramfs (x86_64's;
 *                          guest/<arch>/ another's: pk_lab_set_arch())
 *   accel                  whether QEMU can use KVM here (boot.c's probe)
 *   lock                   pk_lab_lock()'s flock
 *
 * The lab's other jobs, one header each (all in lab/):
 *   setup.h    `printkbot setup`: makes the above, step by step
 *   repo.h     every git operation on linux/ (resolve, checkout, import,
 *              a commit as a patch); apply.h a patch as a commit there
 *   kconfig.h  the build dir's .config, made again when Kconfig changes
 *   build.h    make vmlinux, in sandbox.h's sandbox (pk_sandbox_run())
 *   boot.h     QEMU, in the same sandbox
 *   policy.h   which patches may be built at all
 */
#ifndef PK_LAB_H
#define PK_LAB_H

#include <glib.h>

#include "lab/arch.h"
#include "lab/board.h"

struct pk_repo_cache;   /* repo.c's */

struct pk_lab {
	const struct pk_arch *arch; /* what it builds and boots for (arch.h): x86_64 unless
	                               pk_lab_set_arch() said otherwise */
	const struct pk_board *board; /* the QEMU board it boots on (board.h, pk_lab_set_board()),
	                                 NULL: arch's own machine */
	char *cache;      /* the cache dir */
	char *datadir;    /* pk_data_dir(): qemu/kernel.config, qemu/init.c */
	char *tree;       /* cache/linux */
	char *build_stem; /* cache/build/<cfg>: pk_lab_build_dir() adds the tree's kernel series */
	char *initrd;     /* cache/guest/initrd.cpio; another arch's cache/guest/<arch>/initrd.cpio */
	char *config_hash;/* first 12 hex of sha256(fragment), or of fragment + extra_config */
	char *extra_config;/* a derived config's CONFIG_X=y lines (derive.h), NULL for the lab's */
	char **qemu_args; /* QEMU arguments of the devices a patch's drivers need (derive.h), or NULL */
	int lock_fd;      /* held by pk_lab_lock(), -1 when not */
	/*
	 * The repository at tree, held open (repo.h): made empty by whatever
	 * makes a lab (pk_lab_open(), pk_lab_for_rev(), a derived config's
	 * lab), freed by pk_lab_clear().  Each lab its own: a copy gets a new
	 * one (pk_repo_cache_new()), never this pointer, which the lab's clear
	 * frees.  What it points at changes through a const lab, which every
	 * repo.h call takes: the handle is a cache, not the lab's state.
	 */
	struct pk_repo_cache *repo;
};

/* Asks the guest's init (qemu/init.c) to wait for a quiet log: boots with qemu_args get it. */
#define PK_LAB_SETTLE_CMDLINE "printkbot.settle=1"

/*
 * A config's name: the first 12 hex of sha256 of datadir's
 * qemu/kernel.config, then extra (a derived config's lines, derive.h),
 * the board (board.h, NULL: the architecture's own machine) and the QEMU
 * device arguments with the settle switch, when given.  NULL with err
 * when the fragment cannot be read.  Caller frees.
 */
char *pk_lab_config_name(const char *datadir, const struct pk_arch *arch, const struct pk_board *board,
			 const char *extra, char *const *qemu_args, GError **err);

/*
 * The make O= dir for the tree as checked out: build_stem + "-" + its
 * kernel series ("6.12", from VERSION and PATCHLEVEL of its Makefile), or
 * build_stem alone while there is no tree.  Caller frees.
 */
char *pk_lab_build_dir(const struct pk_lab *lab);

/*
 * The kernel series of the tree as checked out ("6.12"), from its top
 * Makefile (read as beneath.h reads: a pushed commit may put a link
 * there), or NULL when it has none that states one: nothing of such a
 * tree builds.  Caller frees.
 */
char *pk_lab_tree_series(const struct pk_lab *lab);

/*
 * The lab as it tests rev: a copy of lab (strings and repository handle
 * its own, no lock: clear it with pk_lab_clear(), which leaves lab's lock
 * and handle alone) whose tree is the one for rev's kernel series
 * (VERSION.PATCHLEVEL of its top Makefile):
 * linux/ for the series of the lab's base, trees/<series>/ (a worktree of
 * the same repository, made the first time, pk_repo_worktree()) for any
 * other, so that switching from a 6.1 series to a 6.12 one rewrites no
 * file of either tree and each build dir stays incremental.  A worktree
 * a test left without its top Makefile is checked out whole again.  A rev
 * whose Makefile states no series goes to linux/.
 */
int pk_lab_for_rev(struct pk_lab *out, const struct pk_lab *lab, const char *rev, GError **err);

/*
 * The lab as another architecture tests (arch.h): a copy of lab (strings
 * and repository handle its own, no lock: lab's lock is the cache's, so
 * the copy serves while lab is held) made arch's (pk_lab_set_arch()), the
 * same tree.  0; 1 when that architecture's lab is not set up here
 * (`printkbot setup --arch`), *why saying what it lacks; -1 with err.
 * Clear *out with pk_lab_clear() on 0 only.
 */
int pk_lab_for_arch(struct pk_lab *out, const struct pk_lab *lab, const struct pk_arch *arch, char **why,
		    GError **err);

/* Where pk_lab_for_rev() keeps the trees of the other series: cache/trees/<series>. */
#define PK_LAB_TREES_DIR "trees"

/* Fill in the paths (nothing is created but the cache dir).  Free with pk_lab_clear(). */
int pk_lab_open(struct pk_lab *out, GError **err);

/* The lab's architecture: x86_64 for a lab made by hand (a test's) without one. */
static inline const struct pk_arch *pk_lab_arch(const struct pk_lab *lab)
{
	return lab->arch ? lab->arch : &pk_arch_x86_64;
}

/*
 * Make an opened lab (pk_lab_open(), no derived config yet) arch's: its
 * config's name and build dirs (arch's fragment), its initramfs
 * (guest/<arch>/, x86_64's guest/ as always).  The tree is the same.
 */
int pk_lab_set_arch(struct pk_lab *lab, const struct pk_arch *arch, GError **err);

/*
 * Make a lab of board's architecture (pk_lab_set_arch()) boot on board:
 * its config's name says the board (so its boots and noise masks are the
 * board's), its build dirs stay the architecture's (a config derived on
 * it is named with the board: its build dir is its own, derive.h).
 */
int pk_lab_set_board(struct pk_lab *lab, const struct pk_board *board, GError **err);
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
 * opened (pk_lab_open()), made arch's (pk_lab_set_arch(); NULL: x86_64's), checked to be set up ("run 'printkbot setup'"
 * when it is not) and locked (pk_lab_lock(), waiting for another
 * printkbot).  *out is untouched on failure; clear it with pk_lab_clear().
 */
int pk_lab_take(struct pk_lab *out, const struct pk_arch *arch, GError **err);

/*
 * Whether the lab can test (an opened lab: pk_lab_open()): the kernel
 * tree is there (its Makefile), setup was completed for the lab's config
 * (its stamp) and the guest initramfs is there.  0, or -1 with err
 * saying which is missing (lower case, without "run setup": the caller
 * says what to do).
 */
int pk_lab_check(const struct pk_lab *lab, GError **err);

/*
 * The architectures whose lab is set up in the cache (pk_lab_check() of
 * each), comma-separated in arch.h's order ("x86_64,arm64"), or NULL
 * when none is.  Caller frees.
 */
char *pk_lab_ready_arches(void);

/* True when setup has been completed (tree, base commit, config, initrd): pk_lab_check() passes. */
gboolean pk_lab_ready(struct pk_lab *lab);

/* Where setup's last step notes that it was completed for the lab's config.  Caller frees. */
char *pk_lab_ready_stamp(const struct pk_lab *lab);

#define PK_LAB_BASE_TAG "printkbot-base"

/* The bot's ccache under the cache dir, when [build] ccache_dir is not set. */
#define PK_LAB_CCACHE_DIR "ccache"

#endif
