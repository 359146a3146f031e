/*
 * repo.h - the lab's git repository (the cache's linux/): every git
 * operation on it, through libgit2.
 *
 * The repository is the bot's own.  Setup imports the extracted kernel
 * as one base commit, tagged PK_LAB_BASE_TAG; apply.h adds a commit per
 * patch under test; intake/range.h has the commits of a user's range
 * copied in.  The worktree is checked out detached, and a checkout
 * rewrites only the files that differ from HEAD, so builds stay
 * incremental.  No ref moves but HEAD and the ones named below.
 *
 * A revision (rev) is anything git rev-parse takes that names a commit: a
 * tag, a full or short id, "printkbot-base~1".  The repository is opened
 * by a lab's first call and held by the lab until pk_lab_clear() (lab.h's
 * repo): a patch's test makes some thirty calls.  What another process
 * writes there meanwhile (git worktree) is seen all the same: libgit2
 * reads HEAD, refs and loose objects from disk on each call, looks for
 * new packs when an object is missing, and a checkout reads the index
 * again when its file changed.  What is returned is the caller's
 * (g_free(), g_ptr_array_unref(), pk_patch_free()); on failure -1 or
 * NULL comes back with err set and no output written.  A rev that names
 * no commit is a PK_ERROR_INPUT error ("'x' is not a revision of the
 * kernel tree"); the rest are PK_ERROR_FAILED.
 */
#ifndef PK_REPO_H
#define PK_REPO_H

#include <glib.h>
#include <stdbool.h>

#include "lab/lab.h"
#include "base/patch.h"
#include "base/settings.h"

/*
 * What a lab holds of its repository (lab.h's repo): empty when made, the
 * handle once a call opened it.  Each lab its own, freed with the lab.
 */
struct pk_repo_cache *pk_repo_cache_new(void);
void pk_repo_cache_free(struct pk_repo_cache *cache);

/*
 * Close the handle the lab holds, if any: the next call opens the
 * repository again.  For when the repository is made anew under it
 * (pk_repo_import_tree() does it itself).
 */
void pk_repo_forget(const struct pk_lab *lab);

/* The full (hex) id of the commit rev names. */
char *pk_repo_resolve(const struct pk_lab *lab, const char *rev, GError **err);

/*
 * Check out rev, forced, HEAD detached at it.  Only the paths that differ
 * between HEAD and rev are written: a whole-tree checkout stats all
 * 80,000 files of the kernel (about a second), this takes milliseconds.
 */
int pk_repo_checkout(const struct pk_lab *lab, const char *rev, GError **err);

/* The content of path in rev's tree into *out (NUL-terminated), its length into *out_len (may be NULL). */
int pk_repo_read_file(char **out, size_t *out_len, const struct pk_lab *lab, const char *rev,
		      const char *path, GError **err);

/*
 * Setup's import: make the lab's tree, which has no .git yet, a
 * repository with one commit of every file in it (its ignore-everything
 * .gitignore does not apply) and the message given, tagged
 * PK_LAB_BASE_TAG.  Author, committer and dates are fixed (printkbot,
 * 2024-01-01), so the same tree and message give the same commit id on
 * every machine.  gc is off: objects stay loose, the bot never runs gc.
 */
int pk_repo_import_tree(const struct pk_lab *lab, const char *message, GError **err);

/*
 * Another base in the same repository: every file under dir (a kernel
 * tree extracted elsewhere) as a root commit with message, made as
 * pk_repo_import_tree() makes its own, and tagged tag.  HEAD and the
 * worktree do not move.
 */
int pk_repo_import_dir(const struct pk_lab *lab, const char *dir, const char *message, const char *tag,
		       GError **err);

/* The lightweight tag tag (a name under refs/tags/) set to rev's commit, replacing one there. */
int pk_repo_tag(const struct pk_lab *lab, const char *tag, const char *rev, GError **err);

/*
 * The kernel version the top-level Makefile text states ("6.12.57",
 * "6.12" for SUBLEVEL 0, with EXTRAVERSION appended), or NULL when it
 * states none.  Plain text in: setup reads it from the extracted tree,
 * range.c from a user's commit.
 */
char *pk_repo_makefile_version(const char *makefile);

/* The kernel series the Makefile text states ("6.12": VERSION.PATCHLEVEL), or NULL. */
char *pk_repo_makefile_series(const char *makefile);

/* The kernel version rev's top-level Makefile states (pk_repo_makefile_version()). */
char *pk_repo_kernel_version(const struct pk_lab *lab, const char *rev, GError **err);

/*
 * The paths where the trees of commits from and to differ: files, and
 * the directories one side has where the other has nothing or a file,
 * which end in '/' (a new directory may hold Kconfig files of its own).
 * Subtrees with the same id are skipped, so two commits that differ in a
 * few files cost a few tree reads.  *out is a new array of strings.
 */
int pk_repo_changed_paths(GPtrArray **out, const struct pk_lab *lab, const char *from, const char *to,
			  GError **err);

/*
 * A commit as a patch: its diff against its first parent (renames found,
 * 3 lines of context, as `git show` writes it) read by
 * pk_patch_parse_diff(), with the commit's author, date, subject and
 * message.  *out_parent gets the first parent's id (caller frees).  A
 * root commit is an error.  Free with pk_patch_free().
 *
 * The diff is held to policy's limits as a mail is (NULL: none): files
 * that add up to more than max_mail_mb (each at its larger side, seen
 * from the blobs' headers before anything reads them), more files than
 * max_files, a text longer than max_mail_mb or max_lines, and the diff is
 * read no further: the patch then lists the commit's files without hunks
 * and over_limit says which limit, naming its key.  A stop asked for
 * (base/proc.h) ends the diff, line by line, as an error.
 */
struct pk_patch *pk_repo_commit_patch(const struct pk_lab *lab, const char *commit, const struct pk_policy *policy,
				      char **out_parent, GError **err);

/*
 * What says that two commits bring the same change to the same tree, so
 * that one tested need not be tested again: the patch-id of commit's diff
 * against its first parent (as `git patch-id --stable` reads a diff:
 * whitespace and line numbers left out) and the parent's tree id, as
 * "<patch-id> <tree>" into *out (caller frees).  A root commit is an error.
 * A commit over policy's max_files, or whose files add up to more than
 * its max_mail_mb (pk_repo_commit_patch()), has no key: *out is NULL,
 * nothing was read.
 */
int pk_repo_patch_key(char **out, const struct pk_lab *lab, const char *commit, const struct pk_policy *policy,
		      GError **err);

/* 1 when ancestor is rev or in its history, 0 when not, -1 with err (either is not a commit). */
int pk_repo_is_ancestor(const struct pk_lab *lab, const char *ancestor, const char *rev, GError **err);

/* The diff between commits from and to, as pk_repo_commit_patch() makes one, without a header. */
struct pk_patch *pk_repo_diff_patch(const struct pk_lab *lab, const char *from, const char *to,
				    const struct pk_policy *policy, GError **err);

/*
 * Copy commits (ids of the repository at src_dir, NULL-terminated, each
 * after those of its parents that are listed) into the lab's repository
 * with their trees and blobs, children before parents, so that an object
 * the lab has is complete.  Only what the lab lacks is read; the source
 * repository is not changed.  A listed commit whose parents the lab does
 * not have is written to the lab's .git/shallow, as a shallow fetch
 * would; a ref refs/printkbot/run/<id> is made for each id of keep
 * (NULL-terminated, may be NULL) so that gc would never drop them.
 * *out_copied (may be NULL) counts the objects written.
 */
int pk_repo_import_commits(unsigned *out_copied, const struct pk_lab *lab, const char *src_dir,
			   const char *const *commits, const char *const *keep, GError **err);

/* rev's whole commit message. */
char *pk_repo_commit_message(const struct pk_lab *lab, const char *rev, GError **err);

/*
 * rev as `git describe` names it from the lab's annotated tags under
 * refs/tags/ ("v6.13-rc1-57-g1a2b3c4d5e6f", 12 hex), or NULL when no
 * such tag is behind it (Debian's imports have none, and a fetched
 * tree's tags are not fetched: pk_repo_fetch()).
 */
char *pk_repo_describe(const struct pk_lab *lab, const char *rev);

/*
 * The first ref under prefix ("refs/printkbot/trees/") that points at
 * rev's commit, without the prefix ("net-next/main"), or NULL.
 */
char *pk_repo_ref_at(const struct pk_lab *lab, const char *rev, const char *prefix);

/*
 * The refs of what the lab was given, not made: its base tags, branches
 * and fetched [tree]s; never refs/printkbot/run/, the bot's own commits.
 */
#define PK_REPO_PUBLISHED_PREFIXES "refs/tags/", "refs/heads/", "refs/printkbot/trees/"

/* Whether HEAD (what is checked out) is the tip of a published ref (above). */
bool pk_repo_head_published(const struct pk_lab *lab);

/*
 * Whether HEAD is the tip of a published ref that is trusted to be built
 * in place (build.h: in the build dir itself, writing the ccache): a base
 * tag or branch of the lab's, or a branch of a [tree] the config marks
 * trusted (the sandbox settings' trusted_trees).  Any other tree's tip
 * is chosen by whoever can push to it, and is built in a layer.
 */
bool pk_repo_head_trusted(const struct pk_lab *lab);

/* pk_repo_published_ancestor() among the trusted refs only (pk_repo_head_trusted()). */
char *pk_repo_trusted_ancestor(const struct pk_lab *lab, const char *rev, unsigned max_depth);

/*
 * The nearest commit along rev's first parents (rev itself included, at
 * most max_depth parents up) that is the tip of a published ref, as a hex
 * id (caller frees), or NULL: the base a series' commits stand on.
 */
char *pk_repo_published_ancestor(const struct pk_lab *lab, const char *rev, unsigned max_depth);

/*
 * Put the tree back where no patch under test has changed it: checked out
 * at the nearest published ancestor of rev (pk_repo_published_ancestor(),
 * at most 256 parents up), or at rev itself when none is that near (a
 * user's range of its own).  rev NULL is HEAD, and then the fallback is
 * HEAD when its worktree is whole, else the base tag.  The worktree is
 * checked out whole, every file compared and written again where it
 * differs or is missing (about a second), when its top Makefile is
 * missing (a patch or a pushed commit that deleted it, a checkout cut
 * short) or when whole is set; else only the paths that differ from HEAD
 * are written.  What a job starts with (lab.h's pk_lab_take()), what a
 * test ends with, and setup's repair.
 */
int pk_repo_rest(const struct pk_lab *lab, const char *rev, bool whole, GError **err);

/*
 * A worktree of the lab's repository at path (a tree of its own for
 * another kernel series, lab.h's pk_lab_for_rev()), checked out at rev,
 * HEAD detached.  Made under path.partial and moved into place whole, so
 * that a path that is there holds a whole checkout; a worktree already
 * at path is kept.  git worktree does it (libgit2 1.5 cannot detach a new
 * worktree's HEAD).
 */
int pk_repo_worktree(const struct pk_lab *lab, const char *path, const char *rev, GError **err);

/* The hex digits of a full id: the lab's repository is SHA-1 (the only kind libgit2 1.5 reads). */
#define PK_REPO_ID_HEX 40

/* What a full object id is to the lab (pk_repo_id_published()). */
enum pk_repo_id_kind {
	PK_REPO_ID_ABSENT,        /* no object of the lab has it */
	PK_REPO_ID_NOT_COMMIT,    /* a blob, a tree or a tag */
	PK_REPO_ID_UNPUBLISHED,   /* a commit outside the history of every published ref: the bot's
	                             own (a patch it applied, a range under refs/printkbot/run/), or
	                             one a tree's branch no longer has */
	PK_REPO_ID_PUBLISHED,     /* a commit in the history of a published ref */
};

/*
 * What hex, a full id (PK_REPO_ID_HEX lower-case hex digits), is to the
 * lab, into *out; *out_type (may be NULL) gets the object's type for
 * PK_REPO_ID_NOT_COMMIT ("blob", a static string).  The history is walked
 * from the published refs' tips no further back than commits dated a
 * month before the commit's own date (a commit is normally dated after
 * its parents), so a commit of the bot's own costs a month of history,
 * not the whole of it.  A hex that is no full id is a PK_ERROR_INPUT
 * error; nothing is written to the outputs on failure.
 */
int pk_repo_id_published(enum pk_repo_id_kind *out, const char **out_type, const struct pk_lab *lab,
			 const char *hex, GError **err);

/* The names of the refs under prefix, without it (none: an empty array). */
GPtrArray *pk_repo_refs(const struct pk_lab *lab, const char *prefix);

/*
 * Fetch from url (a repository's path or URL, as libgit2 takes it; only
 * read) with refspecs ("+refs/heads/main:refs/printkbot/trees/net/main"),
 * and nothing else: no tag is followed, so a fetch writes only the refs
 * its refspecs name (never refs/tags/, where the lab's own names are).
 * A refspec whose source the remote does not have writes nothing.
 * *out_heads (may be NULL) gets the remote's branches as it listed them
 * ("main", without refs/heads/; a new array).  An error names url with
 * its password or token as *** (pk_url_redact()).
 */
int pk_repo_fetch(const struct pk_lab *lab, const char *url, const char *const *refspecs,
		  GPtrArray **out_heads, GError **err);

/* Remove the ref name (a full name, "refs/printkbot/trees/net/main"); one not there is fine. */
int pk_repo_delete_ref(const struct pk_lab *lab, const char *name, GError **err);

#endif
