/*
 * coverage-private.h - what coverage.c (what was built) and coverage-why.c
 * (why a file was not) share and nobody else uses; coverage-view.c has
 * the reading of the build dir both do.
 */
#ifndef PK_COVERAGE_PRIVATE_H
#define PK_COVERAGE_PRIVATE_H

#include "lab/coverage.h"

/* The build dir as read once for one patch. */
struct pk_build_view {
	const char *build_dir, *tree;   /* borrowed */
	GHashTable *linked;     /* object ("kernel/printk/printk.o") -> interned name of its archive */
	bool have_archive;      /* vmlinux.a (or built-in.a) was there */
	GHashTable *includers;  /* wanted file -> GPtrArray of char* objects that read it */
	GHashTable *config;     /* the build's .config, symbol ("ATA") -> value ("y"); read when needed */
};

/*
 * Read rel, a file of the build dir (a .cmd file, an archive), into *out
 * (and *out_len, may be NULL): 1, or 0 when it does not exist, or -1 with
 * err.  The sandbox writes there: read as beneath.h reads (no link
 * followed, regular files only, a cap).
 */
int pk_coverage_read_built(const struct pk_build_view *v, const char *rel, char **out, gsize *out_len,
			   GError **err);

/* The .cmd file of object ("kernel/printk/printk.o"), relative to the build dir; caller frees. */
char *pk_coverage_cmd_path(const char *object);

/*
 * Why source file (relative to the tree; object is its .o, or NULL) is not
 * linked into vmlinux, as one clause in *out (caller frees): compiled but
 * not linked, its directory or its object not added by the Makefile under
 * the build's .config (naming the symbols), or not compiled by the lab's
 * config.  -1 with err only when a file that is there cannot be read.
 */
int pk_coverage_why_not(struct pk_build_view *v, const char *file, const char *object, char **out,
			GError **err);

#endif
