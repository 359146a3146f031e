/*
 * range.h - the git intake: a range of commits read from the user's own
 * repository with libgit2 and brought into the lab's repository, where
 * lab/repo.h's pk_repo_commit_patch() reads each as a struct pk_patch.
 *
 * The user's repository is only read: no ref, index or file of it
 * changes.  The commits of a range (and the tree of the commit under the
 * oldest one) are copied object by object into the lab's repository, so
 * the lab checks them out in its own worktree, where only the files that
 * differ are rewritten and rebuilds stay incremental.
 *
 * Ranges are spelt the way git users spell them:
 *   A..B      commits reachable from B and not from A ("A.." is A..HEAD,
 *             "..B" is HEAD..B)
 *   B ^A      the same, as separate words (any number of ^X)
 *   B^!       the commit B alone
 *   B         B's commits not in the base: the first of opts->default_bases
 *             that the repository has
 * A...B (a symmetric difference) and more than one tip are refused: a
 * branch is reviewed along one line of history.
 *
 * The walk is topological, oldest first, along first parents unless
 * opts->all_parents: a merge on that line is listed (merge == true) and
 * its first parent is the line's next commit.
 *
 * Everything returned is owned by the caller: pk_range_free() (NULL is
 * fine).  On failure -1 is returned, err is set and *out is untouched.
 */
#ifndef PK_RANGE_H
#define PK_RANGE_H

#include <glib.h>
#include <stdbool.h>

#include "lab/lab.h"
#include "base/patch.h"

struct pk_range_commit {
	char *id;            /* full hex id */
	char *parent;        /* the first parent's id, NULL for a root commit */
	bool merge;          /* more than one parent */
	char *subject;       /* the message's first line */
	char *author;        /* "Name <email>" */
	char *committer;     /* "Name <email>" */
	gint64 time;         /* the author's date, Unix seconds */
};

struct pk_range {
	char *repo;          /* the repository as found: its worktree, else its git dir */
	char *spec;          /* the range as the user spelt it (words joined by spaces) */
	char *base;          /* the commit under the oldest one: the range's "before" side
	                        (hex), NULL when the oldest commit is a root */
	char *tip;           /* hex */
	GPtrArray *commits;  /* struct pk_range_commit*, oldest first */
	unsigned merges;     /* how many of them are merges */
	bool all_parents;
};

struct pk_range_opts {
	bool all_parents;                  /* every commit, not only the first-parent line */
	const char *const *default_bases;  /* NULL-terminated revisions tried, in order, as
	                                      the base of a range given as one revision;
	                                      NULL: such a range is an error */
};
#define PK_RANGE_OPTS_INIT { 0 }

/*
 * Open the repository at repo_dir (NULL: the current directory; parent
 * directories are searched, as git does) and read the range spelt by the
 * words of spec (NULL-terminated; a word may hold several, separated by
 * spaces).  A range that names no commit is an error that says so.
 */
int pk_range_read(struct pk_range **out, const char *repo_dir, const char *const *spec,
		  const struct pk_range_opts *opts, GError **err);
void pk_range_free(struct pk_range *range);
typedef struct pk_range pk_range;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_range, pk_range_free)

/* The commit of range with this id (borrowed), or NULL. */
const struct pk_range_commit *pk_range_find(const struct pk_range *range, const char *id);

/*
 * Whether the range's tip is a Linux kernel tree (a top-level Makefile,
 * Kconfig and init/main.c): 0 when it is, with *out_version (may be NULL)
 * the version its Makefile states ("6.12.57", caller frees), -1 with an
 * error naming the repository and the tip when it is not.
 */
int pk_range_check_kernel(const struct pk_range *range, char **out_version, GError **err);

/*
 * What default_bases a user's repository may have, from the kernel
 * version the lab's base commit states ("6.12.57"): the base commit
 * itself, then the tags v6.12.57 and v6.12 (a new strv).
 */
char **pk_range_default_bases(const struct pk_lab *lab, GError **err);

/*
 * Copy what the lab's repository lacks of the range into it
 * (pk_repo_import_commits()): every commit of it and of its base, with
 * their trees and blobs.  A ref refs/printkbot/run/<id> keeps the tip
 * and the base reachable; a base whose parents were not copied is listed
 * in the lab's .git/shallow, as a shallow fetch would.  *out_copied (may
 * be NULL) counts the objects written.  Nothing of the user's repository
 * changes.
 */
int pk_range_import(const struct pk_range *range, const struct pk_lab *lab,
		    unsigned *out_copied, GError **err);

/*
 * What run and bisect start with: the range read from repo_dir (the
 * default bases being pk_range_default_bases()), checked to be a kernel
 * tree, and imported into the lab.  Tells on stderr when the tree's
 * version is not the lab's (its config will be made again) and how many
 * objects were copied.
 */
int pk_range_load(struct pk_range **out, const struct pk_lab *lab, const char *repo_dir,
		  const char *const *spec, bool all_parents, GError **err);

#endif
