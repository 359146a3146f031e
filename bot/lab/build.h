/*
 * build.h - the build stage: `make O=<build dir> vmlinux` in the lab's tree.
 *
 * Builds are reproducible (KBUILD_BUILD_TIMESTAMP/_USER/_HOST/_VERSION are
 * fixed), so two builds of the same source print the same `Linux version`
 * line, and incremental (the build dir is kept).  ccache is used when it is
 * installed.  A failed build is a result, not an error: ok == false with the
 * compiler's first error lines in errors.
 *
 * make runs in sandbox.h's sandbox when it is active (the default): the
 * tree read-only, the build dir the one writable path (handed to the
 * sandbox user first), ccache read-only, no network, the [policy] limits
 * on every process and the build's wall time.  When a sandboxed build
 * fails with a sign of a denied operation in its log (a read-only file
 * system, an unreachable network...), errors says so and quotes the line,
 * so that a review shows what a patch's host program tried.
 */
#ifndef PK_BUILD_H
#define PK_BUILD_H

#include <stdbool.h>
#include "lab/lab.h"

struct pk_build_result {
	bool ok;
	bool sandboxed;  /* make ran in the sandbox */
	bool layered;    /* ...writing a throwaway layer over the build dir (layer.h) */
	double seconds;
	char *errors;    /* first error lines (file:line: error: ...), or NULL */
	char *log_path;  /* the full (capped) make log */
	char *vmlinux;   /* the kernel to boot when ok */
	char *config;    /* the .config it was built with, or NULL when it could not be read */
};

/*
 * Make the lab's build dir if it is not there.  A new one is marked as
 * having built only published commits, which lets its builds write the
 * bot's ccache ([build] ccache_dir) until a build of anything else runs
 * there (build.c's may_write_ccache()).
 */
int pk_build_dir_make(const struct pk_lab *lab, GError **err);

/*
 * A build dir just copied from another, from (derive.h: a derived
 * config's dir starts as a copy of the nearest build dir of its series),
 * keeps the source's mark of having built only published commits, so
 * that its own builds of a published commit write the ccache too;
 * without one in the source, a mark there was is removed.  Call with the
 * source's layer dropped: the copy is then of published builds only.
 */
int pk_build_dir_copy_mark(const struct pk_lab *to, const char *from, GError **err);

/* Remove a build dir: its mark first (a new dir of that name must not inherit it), its layer, its files. */
int pk_build_dir_remove(const char *build_dir, GError **err);

/*
 * Where the tree as checked out may be built: the build dir itself when
 * HEAD is a trusted published tip (pk_repo_head_trusted(): a base, or a
 * [tree] marked trusted; a layer over it is dropped
 * first), else a throwaway layer over it made for HEAD (layer.h), which
 * stays until another commit is built there or the lab is let go.
 * Without layers (pk_layer_usable() false: not root) an unpublished
 * checkout builds in the build dir as it is; the policy has refused what
 * only a layer makes safe.  Every step and make of the build dir starts
 * here (the new dir made first); *out_layered says which it was.
 */
int pk_build_dir_enter(const struct pk_lab *lab, bool *out_layered, GError **err);

/* Build the kernel; returns -1 only when make could not be run at all. */
int pk_build_kernel(struct pk_build_result *out, const struct pk_lab *lab, GError **err);
void pk_build_result_clear(struct pk_build_result *res);

/*
 * Run one step of making the kernel config in the lab's tree (make
 * tinyconfig, scripts/kconfig/merge_config.sh, make olddefconfig: each
 * builds and runs host programs of the tree, which a patch may change) as
 * pk_build_kernel() runs make: in the sandbox when it is active, the
 * build dir writable, the tree and extra_ro (NULL-terminated, at most 6;
 * may be NULL) read-only, in cwd (NULL: the tree; a step that writes
 * temporary files where it runs needs the build dir).  0 when it exited
 * 0, else -1 with err naming what and quoting the end of its output.
 */
int pk_build_step(const struct pk_lab *lab, const char *what, const char *cwd, const char *const *argv,
		  const char *const *extra_ro, GError **err);

/*
 * The error lines of a make log (at most max_lines): errors with their
 * function and the macro expansion site, and the make line of the failed
 * object; paths under tree (may be NULL) made relative.  Caller frees;
 * NULL when the log holds no error line.
 */
char *pk_build_errors(const char *log, unsigned max_lines, const char *tree);

#endif
