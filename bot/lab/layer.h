/*
 * layer.h - the throwaway layer over a build dir: nothing an untrusted
 * build writes outlives it.
 *
 * A build runs code of the tree it builds (Makefiles, Kconfig's
 * $(shell), the host programs of scripts/), and the build dir is kept
 * from one build to the next so that builds are incremental.  Whatever a
 * patch's build leaves there (a changed scripts/basic/fixdep, an object
 * with a mtime in the future, a stamp Kbuild trusts) would run in or
 * shape every later build.  So only builds of trusted published commits
 * (the tip of a base tag, a branch, or a fetched tree marked trusted:
 * repo.h's pk_repo_head_trusted()) write a build dir; any other checkout is
 * built in a layer: an overlayfs mounted on the build dir itself, the
 * build dir its lower layer, a fresh upper dir under
 * <cache>/layers/ taking every write.  Paths do not change (Kbuild's
 * .cmd files, the boot's vmlinux, coverage's reads all see the build as
 * it was made), and dropping the layer (unmount, remove the upper dir)
 * leaves the build dir as the last published build made it.
 *
 * The mounts live in a mount namespace of the bot's own
 * (pk_layer_namespace(): unshared, and marked a slave of the host's so
 * that nothing mounted here shows outside), so they end with the process
 * whatever way it ends, and another process on the same cache never sees
 * them; what a dead process leaves is its upper dirs, which
 * pk_layer_sweep() removes once the lab's lock is held.
 *
 * Kernel overlayfs needs root (CAP_SYS_ADMIN).  Elsewhere
 * pk_layer_usable() says why not, and the policy (policy.h) refuses what
 * only a layer makes safe to build (the build system, other files the
 * build reads).
 */
#ifndef PK_LAYER_H
#define PK_LAYER_H

#include <glib.h>
#include <stdbool.h>


/*
 * Put the calling thread (and so the children it starts) in a mount
 * namespace of its own, a slave of the host's, once.  main() calls it
 * before any thread starts, so the whole process is in it; later calls
 * do nothing.  0, or -1 with err when the namespace cannot be made (not
 * root): layers are then unusable.
 */
int pk_layer_namespace(GError **err);

/*
 * Whether layers can be made here: the namespace is ours and an overlay
 * mounts (probed once, on a scratch dir under cache).  When not, *why
 * (may be NULL; caller frees) says what is missing.
 */
bool pk_layer_usable(const char *cache, char **why);

/*
 * See build_dir (a build dir of the lab in cache) through a layer made
 * for commit: the one mounted when it was made for the same commit, else
 * a fresh one under cache/layers (the layer of another commit is dropped
 * first: the next patch never sees what the last one's build wrote).
 * The build dir must exist; it is handed to the sandbox user first
 * (sandbox.h), so that the layer copies nothing up for ownership.  0, or
 * -1 with err.
 */
int pk_layer_enter(const char *cache, const char *build_dir, const char *commit, GError **err);

/* Drop the layer over build_dir, if one is mounted: unmount it, remove its upper dir. */
int pk_layer_drop(const char *build_dir, GError **err);

/* Drop every layer this process has mounted (at the end of a lab's use). */
void pk_layer_drop_all(void);

/*
 * Whether build_dir is seen through a layer now, and when so the commit
 * it was made for (borrowed, valid until the layer is dropped; may be
 * NULL).
 */
bool pk_layer_over(const char *build_dir, const char **out_commit);

/*
 * The directory of the layer over build_dir (cache/layers/<name>.<pid>:
 * its upper/ and work/, and the bot's state while it lives, state.h), or
 * NULL when none is mounted.  Borrowed, valid until the layer is dropped.
 */
const char *pk_layer_dir(const char *build_dir);

/*
 * Remove the upper dirs of layers under cache/layers that no layer of
 * this process uses (a process that died left them; its mounts died
 * with it).  Called with the lab's lock held.
 */
int pk_layer_sweep(const char *cache, GError **err);

#endif
