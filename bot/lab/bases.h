/*
 * bases.h - the kernels the lab tests on.  Each is a named ref of the
 * lab's one repository, so builds, boots and noise masks, stored per
 * (commit, config), are shared by every base that has the same commit:
 *
 *   refs/tags/printkbot-debian-<ver>   Debian's linux-source-<ver>
 *                                      (`setup --source debian:<ver>`);
 *                                      the default, 6.12, is also
 *                                      PK_LAB_BASE_TAG
 *   refs/printkbot/trees/<tree>/<branch>  a branch of an operator's
 *                                      repository ([tree NAME]), fetched
 *                                      with libgit2 (the operator's
 *                                      repository is only read)
 *
 * A base is named "debian:6.1" or "<tree>/<branch>"; pk_bases_ref()
 * turns a name into the revision to resolve.
 */
#ifndef PK_BASES_H
#define PK_BASES_H

#include <glib.h>
#include <stdbool.h>

#include "base/patch.h"

#include "lab/lab.h"

/*
 * [tree NAME]: an operator's kernel repository the lab fetches branches
 * of.  The daemon watches some of them (config/config.h's struct pk_tree_group
 * holds what it mails about a push; this is what the lab needs).
 */
struct pk_tree_config {
	char *name;               /* NAME: the ref is refs/printkbot/trees/NAME/<branch> */
	char *url;                /* url =, or path = (a local repository), as libgit2 fetches it */
	char **branches;          /* branches = main, next (default: master) */
	char **watch;             /* watch = main next: branches watched (fetched too); NULL: none */
	bool trusted;             /* trusted = yes: its tips are built in place like a base's
	                             (lab/repo.h's pk_repo_head_trusted()); default no: in a layer */
};

/* Whether branch is one of t's watched branches. */
bool pk_tree_watches(const struct pk_tree_config *t, const char *branch);

#define PK_BASES_DEBIAN_TAG "printkbot-debian-"
#define PK_BASES_TREE_PREFIX "refs/printkbot/trees/"
#define PK_BASES_DEFAULT_SOURCE "debian:6.12"

/* One of Debian's kernel source packages, as setup imports it. */
struct pk_debian_source {
	char *name;       /* "debian:6.1" */
	char *version;    /* "6.1" */
	char *package;    /* "linux-source-6.1" */
	char *tarball;    /* "/usr/src/linux-source-6.1.tar.xz" */
	char *tag;        /* "printkbot-debian-6.1" */
};

/* "debian:6.1" (or "debian:6.12") read into *out; an error (PK_ERROR_INPUT) for anything else. */
int pk_bases_debian(struct pk_debian_source *out, const char *spec, GError **err);
void pk_debian_source_clear(struct pk_debian_source *src);

/*
 * The revision a base name stands for: "debian:6.1" the tag
 * printkbot-debian-6.1, "net-next/main" the fetched branch
 * refs/printkbot/trees/net-next/main, anything else itself (a tag, a
 * commit id).  A new string.
 */
char *pk_bases_ref(const char *name);

/*
 * The commit id a base name (as pk_bases_ref() reads it) names in the
 * lab; NULL with err saying what would bring it when it is not there (a
 * Debian base: the setup command that imports it).  A new string.
 */
char *pk_bases_resolve(const struct pk_lab *lab, const char *name, GError **err);

/*
 * What a command checks before it takes the lab, so that a typo is said
 * at once rather than after another printkbot's build: every name of
 * names (NULL-terminated; a NULL first: none) resolves in the lab, read
 * without its lock.  -1 with err (PK_ERROR_INPUT, what first, e.g.
 * "--base ") naming the first that does not and what it could be; 0
 * also when the lab is not set up (its set-up says so).
 */
int pk_bases_check_names(const char *const *names, const char *what, GError **err);

/* Where a series goes (pk_bases_choose()). */
struct pk_base_choice {
	char *name;       /* as a reply names it: "debian:6.1", "net/main", "base-commit 1a2b3c4d5e6f" */
	char *rev;        /* the revision the first patch is applied on */
	char *tried;      /* every base tried before and why it was passed over
	                     ("debian:6.12: patch 2/3: x.c: hunk 1 ... does not apply"), or NULL */
	bool applies;     /* the whole series applies on rev (false: on no base; rev is the first) */
	bool three_way;   /* on no base as it stands: on rev by a 3-way merge (apply.h) */
};
void pk_base_choice_clear(struct pk_base_choice *c);

/*
 * The bases a series may go on when the config names none: first (the
 * configured base), then every Debian base the lab holds (setup
 * --source), newest first, each commit once.  NULL-terminated, g_strfreev().
 */
char **pk_bases_default(const struct pk_lab *lab, const char *first);

/*
 * How often a base-commit the lab lacks makes the lab fetch the [tree]s
 * again (pk_bases_choose()): at most once every interval seconds, however
 * many mails name ids the lab lacks, so that mail cannot make the bot
 * fetch every tree per message.  The full ids that fetch did not bring
 * are remembered until the next one, for the reason to say so.  Set
 * interval in a zeroed struct; pk_bases_refetch_clear() frees what it holds.
 */
struct pk_bases_refetch {
	double interval;      /* seconds ([daemon] fetch_interval) */
	double last;          /* pk_now() at the last such fetch, when fetches > 0 */
	unsigned fetches;     /* the fetches made for base-commits */
	GHashTable *missed;   /* the ids the last one did not bring (a set of strings), or NULL */
};
void pk_bases_refetch_clear(struct pk_bases_refetch *r);

/*
 * Choose the base of a series of n patches: its base-commit (the cover
 * letter's or the first patch's; may be NULL) when it names a published
 * commit: a full id (PK_REPO_ID_HEX digits, not abbreviated: a short id
 * may name another object tomorrow) of a commit in the history of a base
 * or a fetched tree (repo.h: PK_REPO_ID_PUBLISHED), never an object the
 * lab holds only from its own work (a patch it applied), nor a blob, a
 * tree or a tag.  An id the lab lacks has the branches of trees (the
 * [tree NAME]s, struct pk_tree_config *; may be NULL) fetched once more
 * when refetch allows (the author may have based the series on a commit
 * pushed since the last fetch_interval; refetch NULL: never).  A
 * base-commit passed over is named in out->tried with why.  Otherwise
 * the first of bases on which the whole series applies as it stands
 * (checked in memory, the worktree untouched); otherwise the first on
 * which it applies by a 3-way merge from the blobs its index lines name
 * (three_way); otherwise the first base, applies false.  out->tried says
 * why each base passed over was, for a does-not-apply to name every base
 * tried.  -1 with err only when the repository cannot be used.
 */
int pk_bases_choose(struct pk_base_choice *out, const struct pk_lab *lab, const char *base_commit,
		    const GPtrArray *trees, struct pk_bases_refetch *refetch, const char *const *bases,
		    const struct pk_patch *const *patches, guint n, GError **err);

/*
 * A does-not-apply reason (*reason, replaced) with every base tried and
 * why, when the series applied on none (c->applies false).
 */
void pk_bases_tried_reason(char **reason, const struct pk_base_choice *c);

/*
 * Fetch the branches of [tree NAME] into the lab (with libgit2; the
 * tree's repository is only read): each branch B (of branches and of
 * watch) becomes refs/printkbot/trees/NAME/B, the base "NAME/B", and
 * nothing else is written: none of the tree's tags (a tag
 * printkbot-debian-99.0 pushed there would be a Debian base,
 * printkbot-base the default one).  A watched branch the repository no
 * longer has is removed from the lab too (the daemon reads that as its
 * deletion); the others are left as last fetched.
 */
int pk_bases_fetch_tree(const struct pk_lab *lab, const struct pk_tree_config *t, GError **err);

#endif
