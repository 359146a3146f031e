/*
 * pathkind.h - what a path of the kernel tree is to the build: a C source
 * or header, the build system, a file the build may read, or one no build
 * of vmlinux reads.  Pure, from the path alone: the policy (policy.h)
 * judges a patch by it, the applier (apply.h) leaves a stale hunk of an
 * inert file out, the coverage (coverage.h) says why such a file is not
 * built.
 */
#ifndef PK_PATHKIND_H
#define PK_PATHKIND_H

enum pk_path_kind {
	PK_PATH_C,             /* a C source (*.c) or header (*.h) */
	PK_PATH_BUILD_SYSTEM,  /* Makefile, Kbuild, Kconfig*, scripts/, tools/: run by the build */
	PK_PATH_INERT,         /* read by no build of vmlinux: documentation, MAINTAINERS */
	PK_PATH_OTHER,         /* anything else: the build may read it (*.S, *.lds, *.tbl...) */
};

/* What path (relative to the tree) is to the build. */
enum pk_path_kind pk_path_kind(const char *path);

#endif
