/*
 * absent.h - the names a tree of the lab does not have: the evidence
 * that a series was written for a newer kernel than the base it went on
 * (report/listpolicy.h, base-lacks), not a guess from dates or subjects.
 */
#ifndef PK_ABSENT_H
#define PK_ABSENT_H

#include <glib.h>

#include "lab/lab.h"

/*
 * Of names (C identifiers, NULL-terminated, at most 32 are looked for),
 * those that occur as a word in no C source or header (*.c, *.h) of
 * rev's tree, in names' order, into *out (a new array of strings, empty
 * when every name is there).  A name the tree never mentions is defined
 * nowhere in it.  Read from the commit (git grep), not the worktree, so
 * what a patch applied there adds is not counted; about 15 s for a
 * kernel tree's 60,000 files on a busy 2-CPU machine.  -1 with err when
 * git could not search it.
 */
int pk_absent_names(GPtrArray **out, const struct pk_lab *lab, const char *rev, const char *const *names,
		    GError **err);

#endif
