/*
 * apply.h - the apply stage: a patch becomes a commit on top of a parent
 * in the lab's kernel tree, and the tree is checked out at it.
 *
 * Everything goes through libgit2: the diff is applied to the parent's
 * tree in memory, the result is committed with the patch's author, date
 * and message, detached (no branch moves), and checked out as repo.h's
 * pk_repo_checkout() does (only files that differ are rewritten, so the
 * next build is incremental).  Checking out or resolving any other
 * revision is repo.h's.  A patch that does not apply is a result (applied
 * == false and failure says which file and hunk), not an error; the tree
 * is then left at the parent.
 */
#ifndef PK_APPLY_H
#define PK_APPLY_H

#include <stdbool.h>

#include "lab/lab.h"
#include "base/patch.h"

struct pk_apply_result {
	bool applied;
	char *commit;     /* the new commit's id (hex) when applied */
	char *failure;    /* "drivers/x.c: hunk 2 (@@ -10,3 +10,4 @@) does not apply", or NULL */
	bool refused;     /* failure is a refusal: git reads the diff as something the bot never
	                     applies (a rename, a copy, a symlink, a path the policy did not see) */
	bool three_way;   /* applied by a 3-way merge, as `git am -3`: the hunks did not apply
	                     as they stand, but on the blobs the patch's index lines name (the
	                     lab has them), and that change merged without a conflict */
	char *left_out;   /* files no build reads whose hunks did not apply, left out, and why
	                     ("MAINTAINERS: hunk 2 (...) does not apply: ..."; "; " between), or NULL */
};

/*
 * Apply patch on parent_rev (any revision: a tag, a commit id) and check
 * the result out; when its hunks do not apply as they stand, by a 3-way
 * merge from the blobs of its index lines (three_way).  Returns -1 with err set only when the repository itself
 * cannot be used; a patch that does not apply gives 0 with applied false.
 */
int pk_apply_patch(struct pk_apply_result *out, const struct pk_lab *lab,
		   const char *parent_rev, const struct pk_patch *patch, GError **err);
void pk_apply_result_clear(struct pk_apply_result *res);

/*
 * The text pk_apply_patch() gives libgit2's git_diff_from_buffer() for
 * patch, without a tree to relocate hunks in (their headers stay as
 * written): for checks of what libgit2 reads from a patch
 * (tests/fuzz/fuzz-policy-apply.c).  NULL without a diff; caller frees.
 */
char *pk_apply_diff_text(const struct pk_patch *patch);

/*
 * Why libgit2 reads patch as something other than the parsed patch says
 * (a rename, a copy, a symlink or other non-file mode, a path the patch
 * names nowhere), so that the bot never applies it; NULL when it reads the
 * same, or cannot read it (pk_apply_patch() then fails).  The policy
 * (policy.h) asks this, so what it allows is what it judged.  Caller frees.
 */
char *pk_apply_refusal(const struct pk_patch *patch);

/*
 * Whether the n patches, each on the one before, all apply on rev: in
 * memory only (no commit, no checkout, the worktree untouched).  1 when
 * they do, 0 with *out_failure ("patch 2/3: x.c: hunk 1 ... does not
 * apply"; the patch's number only in a series of more than one), -1 with
 * err set when the repository cannot be used.  With three_way, a patch
 * may apply by a 3-way merge as pk_apply_patch() does; without, only as
 * it stands.
 */
int pk_apply_series_check(char **out_failure, const struct pk_lab *lab, const char *rev,
			  const struct pk_patch *const *patches, guint n, bool three_way, GError **err);

#endif
