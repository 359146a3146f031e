/*
 * repo-git.h - repo.h's libgit2 side, for the lab's modules that hold the
 * lab's repository open through several steps (apply.c).  The rest of the
 * bot uses repo.h, which hands out plain strings.  Errors as in repo.h.
 */
#ifndef PK_REPO_GIT_H
#define PK_REPO_GIT_H

#include "base/gitutil.h"
#include "lab/lab.h"

/* Open the lab's repository; the caller frees it with git_repository_free(). */
int pk_repo_open(git_repository **out, const struct pk_lab *lab, GError **err);

/* The commit rev names; the caller frees it with git_commit_free(). */
int pk_repo_lookup(git_commit **out, git_repository *repo, const char *rev, GError **err);

/* Check out commit as pk_repo_checkout() does: forced, only what differs from HEAD, HEAD detached. */
int pk_repo_checkout_commit(git_repository *repo, git_commit *commit, GError **err);

#endif
