/*
 * interrupted.h - what a make that did not end by itself leaves in a
 * build dir, and undoing it before the next make.
 *
 * Kbuild writes each object's .cmd file (the command line and the
 * dependencies, which every later make includes) after the object, with
 * `fixdep ... > .foo.o.cmd`.  A make ended by a signal (the build's
 * timeout, a cancelled job, a worker killed with kill -9, ^C) can leave:
 * - a .cmd cut at one of fixdep's 4 KiB writes, which stops every later
 *   make of that build dir with "unterminated call to function
 *   'wildcard'": one killed build, and each build after it fails;
 * - after SIGKILL, which gives make no time to delete what it was
 *   writing, an object or a link only half written, with the .cmd of the
 *   build before, which later makes take as up to date.
 *
 * So every make of a build dir runs between pk_make_started(), which
 * writes a mark in its state dir (state.h), and pk_make_ended(), which
 * removes the mark when
 * make exited by itself (a failed compile included: make deletes what it
 * could not finish).  pk_build_dir_repair(), run before each make, finds
 * the mark of a make that never ended and removes each file written
 * since that is not shown whole by a .cmd written after it; in every
 * build dir, mark or not, it removes the cut .cmd files (with their
 * targets).  Kbuild makes again whatever is missing, so a removal costs
 * a rebuild of that file, never a wrong kernel.
 */
#ifndef PK_INTERRUPTED_H
#define PK_INTERRUPTED_H

#include <glib.h>
#include "base/proc.h"

/* Write the mark of build_dir (which exists), PK_STATE_MAKE_RUNNING: its mtime is when make started; -1 with err. */
int pk_make_started(const char *build_dir, GError **err);

/* Remove the mark when pr says make exited by itself; else keep it for the next repair. */
void pk_make_ended(const char *build_dir, const struct pk_proc_result *pr);

/*
 * Undo what an interrupted make left in build_dir (see above).  Never
 * touched: .config and .config.old, files named as the bot's own were
 * (.printkbot*, printkbot-*), include/config/ and include/generated/ (Kconfig and
 * filechk replace those files whole, by rename).  Returns the number of
 * files removed, -1 with err when the build dir cannot be read.
 */
int pk_build_dir_repair(const char *build_dir, GError **err);

#endif
