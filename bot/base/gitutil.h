/*
 * gitutil.h - what the modules that hold a libgit2 repository open for
 * the whole process share: one library init, and libgit2's last error
 * turned into a GError.  Only git modules include this (it brings git2.h).
 */
#ifndef PK_GITUTIL_H
#define PK_GITUTIL_H

#include <git2.h>
#include <glib.h>

/* git_libgit2_init() once per process; never shut down (repositories may outlive any caller). */
void pk_git_init(void);

/* Set err to "what: <libgit2's last error>" and return -1. */
int pk_git_fail(GError **err, const char *what);

#endif
