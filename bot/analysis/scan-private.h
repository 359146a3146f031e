/*
 * scan-private.h - what scan.c, prfmt.c and finding.c share and nobody
 * else uses: the state of scanning one file of a patch, a finding made,
 * the file's view from the tree, and the two steps of the pr_fmt()
 * findings.  Code outside bot/analysis uses scan.h.  The order of the
 * files: scan.c calls prfmt.c, both call finding.c.
 */
#ifndef PK_SCAN_PRIVATE_H
#define PK_SCAN_PRIVATE_H

#include "analysis/fold.h"
#include "analysis/lexer.h"
#include "analysis/scan.h"
#include "analysis/tree.h"

/* What scanning one file of a patch knows and collects. */
struct pk_scan_ctx {
	struct pk_scan *scan;
	const struct pk_diff_file *dfile;
	const char *file;
	unsigned pr_calls;      /* pr_*() calls (prefixed by pr_fmt) in the hunks' post-image */
	unsigned pr_touched;    /* those of them the patch adds or rewrites */
	int pr_delta;           /* those the patch adds minus those it removes */
	/* the pr_fmt() definitions the hunks remove and add (pk_scan_prfmt_lines()) */
	const GPtrArray *prfmt_olds, *prfmt_news;
	/* pk_scan_file_prefix()'s answers, once asked (prefixes_known) */
	gboolean prefixes_known;
	char *old_prefix, *new_prefix;
	char **old_prefix_args, **new_prefix_args;  /* their conversions' arguments (tree.h), or NULL */
	/* pk_scan_file_env()'s answers, once asked for a side (env_known[post]) */
	gboolean env_known[2];
	char *old_modname, *new_modname, *old_basename, *new_basename;
	/* functions the patch renames: old name -> new name (git names the old in hunk headers) */
	GHashTable *renamed;
	struct pk_tree *tree;   /* NULL without --tree */
	gboolean described;     /* the tree was asked about the file */
	struct pk_tree_file *old_desc, *new_desc;
	char *post_text;        /* the post-image file, NULL when the tree cannot give it */
	guint64 *pair_cells;    /* the scan's LCS cells left for pairing (scan.c's PAIR_CELLS) */
};

/* A new finding of kind in file (copied), its silence the kind's (finding.c); fields to fill. */
struct pk_finding *pk_finding_new(const char *file, enum pk_finding_kind kind);
/* Free a finding (a GDestroyNotify: the scan's array frees its findings so); NULL is nothing. */
void pk_finding_free(gpointer f);

/* Ask the tree about the file once: pre-image, post-image, their prefixes (prfmt.c). */
void pk_scan_ctx_describe(struct pk_scan_ctx *x);

/*
 * The prefix pr_*() calls of the file print before the patch (post FALSE)
 * or after it, borrowed; NULL when unknown.  From the pr_fmt() the patch
 * removes, adds or changes, else the tree's (old_desc, new_desc), else a
 * definition the hunks show as context; KBUILD_MODNAME from the tree, or
 * without one from the object name (pk_tree_guess_prefix()).  The prefix's
 * conversions known per call only (__func__) stay as written: their
 * arguments are then x->old_prefix_args or x->new_prefix_args.
 */
const char *pk_scan_file_prefix(struct pk_scan_ctx *x, gboolean post);

/*
 * What folding a call's format knows of the file on one side (fold.h):
 * KBUILD_MODNAME and KBUILD_BASENAME, from the tree or else from the
 * object name; env->func is the caller's to set.  Borrowed from x.
 */
void pk_scan_file_env(struct pk_scan_ctx *x, gboolean post, struct pk_fold_env *env);

/*
 * Add a finding of kind about the calls o (pre-image) and n (post-image),
 * either NULL, to x->scan; message (may be NULL) is taken.  Returns the
 * finding, owned by the scan, for the caller to adjust.
 */
struct pk_finding *pk_scan_add_finding(struct pk_scan_ctx *x, enum pk_finding_kind kind,
				       const struct pk_call *o, const struct pk_call *n,
				       char *message);

/*
 * The pr_fmt() definitions a file's hunks remove (*out_olds) and add
 * (*out_news): two new arrays the caller unrefs.  Done before the hunks
 * are scanned, which need to know whether the file's pr_fmt() changes.
 */
void pk_scan_prfmt_lines(const struct pk_diff_file *file, GPtrArray **out_olds,
			 GPtrArray **out_news);

/*
 * The pr_fmt-* finding of one file, from pk_scan_prfmt_lines()'s arrays
 * (borrowed), once its hunks are scanned (x->pr_calls, x->pr_delta).
 */
void pk_scan_prfmt(struct pk_scan_ctx *x, const GPtrArray *olds, const GPtrArray *news);

#endif
