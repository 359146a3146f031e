/*
 * repo-git.h - repo.h's libgit2 side, for the lab's modules that hold the
 * lab's repository open through several steps (apply.c).  The rest of the
 * bot uses repo.h, which hands out plain strings.  Errors as in repo.h.
 */
#ifndef PK_REPO_GIT_H
#define PK_REPO_GIT_H

#include "base/gitutil.h"
#include "lab/lab.h"

/*
 * The lab's repository, opened by the lab's first call and held by the
 * lab (lab.h's repo) until pk_lab_clear(), so that a job opens it once;
 * opened again when the lab's tree is not the path it was opened on.
 * The lab's, not the caller's: the caller never frees it, and leaves it
 * as it found it (a diff's index of its own is dropped after the diff, a
 * checkout cut short drops the index: pk_repo_checkout_failed()).  A lab
 * made by hand without its repo is an error.
 */
int pk_repo_handle(git_repository **out, const struct pk_lab *lab, GError **err);

/* The commit rev names; the caller frees it with git_commit_free(). */
int pk_repo_lookup(git_commit **out, git_repository *repo, const char *rev, GError **err);

/* Check out commit as pk_repo_checkout() does: forced, only what differs from HEAD, HEAD detached. */
int pk_repo_checkout_commit(git_repository *repo, git_commit *commit, GError **err);

/*
 * A git_checkout_tree() on the lab's handle that failed: err says so
 * (-1), and the handle drops its index, which the checkout may have left
 * half changed in memory, so that the next use reads the index file.
 */
int pk_repo_checkout_failed(git_repository *repo, GError **err);

#endif
