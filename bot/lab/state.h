/*
 * state.h - the bot's own files about a build dir, kept where no build
 * can reach them.
 *
 * The bot keeps a few files per build dir: which commit its .config was
 * made for, that setup made it, the mark of a make that is running, a
 * derived config's lines, the last make's log.  The sandbox user writes
 * the build dir, and a build runs the code of the patch it builds
 * (Kconfig's $(shell), a host program), which could put a symlink where
 * the bot is about to write as root.  So none of these is in the build
 * dir: each build dir has a state dir of root's,
 *
 *   <build dir>.state/   for the build dir as published builds left it
 *                        (beside it in the cache's build/, which no
 *                        sandbox binds);
 *   <layer dir>/state/   while a throwaway layer is over the build dir
 *                        (layer.h): what is written then goes there and
 *                        is dropped with the layer, as the build's own
 *                        writes are; a name not written there is read
 *                        from the build dir's own state dir, as the layer
 *                        shows the build dir's files.
 *
 * Names are plain file names (the PK_STATE_* below).  Functions take the
 * build dir's path as pk_lab_build_dir() gives it; -1 comes with err set.
 */
#ifndef PK_STATE_H
#define PK_STATE_H

#include <glib.h>
#include <stddef.h>
#include <sys/stat.h>

/* The commit the build dir's .config was last made for (kconfig.h). */
#define PK_STATE_KCONFIG "kconfig-made-for"
/* Setup made the build dir's .config from the fragment (its config hash). */
#define PK_STATE_SETUP_CONFIG "setup-config"
/* A published build brought the build dir up to the tree then (its mtime; pipeline/test.c). */
#define PK_STATE_CAUGHT_UP "caught-up"
/* A make of the build dir started then and has not ended by itself (interrupted.h). */
#define PK_STATE_MAKE_RUNNING "make-running"
/* A derived config's own lines (derive.h), which the config steps merge; also marks the dir as derived. */
#define PK_STATE_DERIVED_FRAGMENT "derived.config"
/* The last make's output (build.h). */
#define PK_STATE_BUILD_LOG "build.log"

/* The state dir writes go to now (made when missing: 0755, root's).  Caller frees. */
char *pk_state_dir(const char *build_dir, GError **err);

/* The path of name in pk_state_dir(): for a file a child writes or reads.  Caller frees. */
char *pk_state_path(const char *build_dir, const char *name, GError **err);

/* Read name (at most cap bytes): 1 with *out (caller frees), 0 when there is none, -1. */
int pk_state_read(char **out, const char *build_dir, const char *name, size_t cap, GError **err);

/* Whether there is a name, and its stat (may be NULL). */
gboolean pk_state_stat(const char *build_dir, const char *name, struct stat *out_st);

/* Write name whole (a temporary file renamed over it). */
int pk_state_write(const char *build_dir, const char *name, const char *data, size_t len, GError **err);

/* Remove name from the state dir writes go to, if it is there. */
int pk_state_remove(const char *build_dir, const char *name, GError **err);

/* Remove the build dir's own state dir (with the build dir itself). */
int pk_state_remove_all(const char *build_dir, GError **err);

#endif
