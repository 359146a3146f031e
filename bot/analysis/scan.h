/*
 * scan.h - static logging-churn findings from a parsed patch, no build.
 *
 * pk_scan() reads the hunks of a struct pk_patch (borrowed, not kept) and
 * returns a new struct pk_scan the caller frees with pk_scan_free(), which
 * accepts NULL.  Every string in a finding is owned by the finding.
 *
 * The printk family is checkpatch.pl's $logFunctions that print to the
 * console: printk() (and _once, _ratelimited, _deferred, _printk()),
 * pr_*(), dev_*(), netdev_*() and the <subsys>_<level>() wrappers
 * (drm_err(), pci_info(), btrfs_err()...) with their _once and
 * _ratelimited forms, <subsys>_printk(), dev_err_probe() and
 * dev_warn_probe(), panic(), and WARN(), WARN_ONCE(), WARN_RATELIMIT(),
 * WARN_TAINT(), WARN_TAINT_ONCE() and <subsys>_WARN(), whose format prints
 * at the default level after the "WARNING:" line (WARN_ON() has no format
 * of its own).  lexer.h says how each is classified.
 *
 * A patch is read as a whole: a rewritten call is judged as it prints,
 * prefix and format together, the prefix being the file's pr_fmt() before
 * and after the patch (scan-private.h's pk_scan_file_prefix()).  What the
 * compiler knows is folded into both first (fold.h): string literals,
 * __func__ (the enclosing function, under its new name after a rename the
 * patch shows) and KBUILD_MODNAME, glued to the format or passed for a
 * "%s", here as in pr_fmt() bodies.  Printed text unchanged is silent
 * whatever moved between format, arguments and pr_fmt(): a call whose
 * format changed but prints the same is call-converted, saying so.  A call
 * on an unchanged line of a renamed function whose printed text changes
 * that way (__func__) is a rewritten call too.
 *
 * Kind names are stable (finding.c has each with what it means; `printkbot
 * help findings` and doc/scan.md list them); among them:
 *   message-added / message-removed   a call with no counterpart on the
 *                                     other side of its hunk
 *   warn-converted                    WARN*() <-> another call: the message
 *                                     stays, the WARNING: line, backtrace and
 *                                     taint go (or come); panic() <-> another
 *                                     call: the kernel stops (or no longer)
 *   pairing-capped                    a hunk had so many changed calls that
 *                                     comparing their texts was cut short;
 *                                     calls left unpaired are reported as
 *                                     added and removed
 *   patch-corrupt                     the mail was damaged by the mailer (a
 *                                     wrapped line, patch.h) and repaired to
 *                                     be read; git am rejects it as sent.
 *                                     The file and line are those of the
 *                                     damaged hunk; the message names the
 *                                     line of the mail.  It alone is no churn
 *   prefix-changed                    a rewritten call's printed prefix
 *                                     appears, vanishes or changes (pr_fmt()
 *                                     before and after the patch, or another
 *                                     wrapper's own prefix)
 * and four that mirror checkpatch.pl warnings on added lines of a call, so
 * that every printk-related checkpatch warning has a finding on its line
 * (all four change nothing on the console by themselves):
 *   logging-continuation         LOGGING_CONTINUATION: the line calls
 *                                pr_cont() or printk(KERN_CONT ...)
 *   prefer-pr-level              PREFER_PR_LEVEL: printk(KERN_<LEVEL> ...)
 *                                where pr_<level>() would do; the sentence
 *                                names the prefix that one would print only
 *                                when the post-image file's pr_fmt() is known
 *                                (none for KERN_CONT: pr_cont() takes none)
 *   embedded-function-name       EMBEDDED_FUNCTION_NAME: the format spells
 *                                the enclosing function's name; "%s", __func__
 *                                survives a rename
 *   whitespace-before-newline    QUOTED_WHITESPACE_BEFORE_NEWLINE: a blank
 *                                right before "\n" (invisible trailing space)
 * and, for the other three checkpatch types: PRINTK_WITHOUT_KERN_LEVEL is
 * level-missing, SPLIT_STRING is string-split (one finding per line where a
 * literal continues the one of the line above, unless that one ends in an
 * escape such as \n, as checkpatch excepts).
 *
 * level-missing is given for every added printk() with neither a KERN_
 * level nor KERN_CONT: since Linux 4.9 only KERN_CONT continues a line, so
 * such a call starts a line of its own at the default level, also after a
 * printk() or pr_*() of its function that left its line open (the sentence
 * then names that line: the author likely meant to continue it).  It is
 * silent when the call it rewrites printed at the default level on a line
 * of its own already.
 *
 * Sentences are true of the patch's after state: a prefix is named as the
 * file's only when the post-image has it, one the patch takes away is the
 * one "pr_fmt() gave" the message.
 *
 * With a kernel tree (pk_scan_tree()), findings also carry the prefix the
 * message prints before and after (pr_fmt() evaluated with the file's
 * KBUILD_MODNAME, see tree.h), and a pr_fmt-* finding counts the pr_*()
 * calls of the post-image file (and of the .c files it #includes) instead of
 * those the patch's hunks happen to show; either way only the calls the
 * patch does not add or rewrite, which are judged each on its own.
 *
 * Kinds are enum pk_finding_kind; their names (the stable words of the
 * JSON, the store and the replies) come only from pk_finding_kind_name().
 *
 * The scanner is four files: lexer.c finds the printk-family calls of a
 * hunk (lexer.h), fold.c folds what the compiler knows into a format
 * (fold.h, tree.c's too), scan.c pairs the calls and says what changed,
 * prfmt.c judges the pr_fmt() definitions (scan-private.h is what the last
 * two share).
 */
#ifndef PK_SCAN_H
#define PK_SCAN_H

#include "base/patch.h"
#include "base/verdict.h"

#include <glib.h>

struct pk_tree;

/* The static kinds (finding.c names each and says what it means). */
enum pk_finding_kind {
	PK_FINDING_PR_FMT_ADDED,
	PK_FINDING_PR_FMT_REMOVED,
	PK_FINDING_PR_FMT_CHANGED,
	PK_FINDING_CALL_CONVERTED,
	PK_FINDING_LEVEL_CHANGED,
	PK_FINDING_LEVEL_MISSING,
	PK_FINDING_DEBUG_COMPILED_OUT,
	PK_FINDING_NEWLINE_LOST,
	PK_FINDING_NEWLINE_ADDED,
	PK_FINDING_CONT_BROKEN,
	PK_FINDING_CONT_ADDED,
	PK_FINDING_STRING_SPLIT,
	PK_FINDING_TEXT_CHANGED,
	PK_FINDING_DEVICE_PREFIX_LOST,
	PK_FINDING_DEVICE_PREFIX_ADDED,
	PK_FINDING_MESSAGE_ADDED,
	PK_FINDING_MESSAGE_REMOVED,
	PK_FINDING_WARN_CONVERTED,
	PK_FINDING_PREFIX_CHANGED,
	PK_FINDING_LOGGING_CONTINUATION,
	PK_FINDING_PREFER_PR_LEVEL,
	PK_FINDING_EMBEDDED_FUNCTION_NAME,
	PK_FINDING_WHITESPACE_BEFORE_NEWLINE,
	PK_FINDING_PAIRING_CAPPED,
	PK_FINDING_PATCH_CORRUPT,
};

/* The kind's stable name ("level-changed"); "" for a value out of range. */
const char *pk_finding_kind_name(enum pk_finding_kind kind);
/* The kind named name: true and *out set, or false (*out untouched). */
gboolean pk_finding_kind_parse(const char *name, enum pk_finding_kind *out);
/* Whether a finding kind changes nothing on the console by itself. */
gboolean pk_finding_is_silent(enum pk_finding_kind kind);
/* Whether a kind is one of pr_fmt-added, pr_fmt-removed, pr_fmt-changed. */
gboolean pk_finding_is_pr_fmt(enum pk_finding_kind kind);
/* What a kind means, one line (`printkbot help findings`, the manual); "" out of range. */
const char *pk_finding_kind_meaning(enum pk_finding_kind kind);
/* How many kinds there are: 0 .. pk_finding_kinds() - 1 are the enum's values. */
unsigned pk_finding_kinds(void);

struct pk_finding {
	char *file;
	int line;           /* post-image line, pre-image for removed calls */
	enum pk_finding_kind kind;
	gboolean silent;    /* by itself it changes nothing on the console */
	char *old_call;     /* the call as written (whitespace folded), or NULL */
	char *new_call;
	const char *old_level;  /* "err", "warn", ..., "default", or NULL */
	const char *new_level;
	char *old_text;     /* the format text, C escapes kept; for pr_fmt-*: */
	char *new_text;     /* the pr_fmt() bodies, parameter named fmt */
	/*
	 * The prefix printed before the text ("build_utility: ", "" for none),
	 * NULL when unknown or device-dependent (dev_*(), drm_err()...).
	 * Without a tree, known only from a pr_fmt() the patch shows.
	 */
	char *old_prefix;
	char *new_prefix;
	/*
	 * pr_fmt-*: the pr_*() calls whose prefix the change moves and that the
	 * patch does not add or rewrite: with a tree those of the post-image
	 * file and its #included .c files, else those in the patch's hunks
	 * (affected_whole_file says which).  0 otherwise.
	 */
	unsigned affected;
	gboolean affected_whole_file;
	char *message;      /* one readable sentence */
};

struct pk_scan {
	enum pk_verdict verdict; /* no-churn, no-visible-change or console-changed */
	unsigned calls_changed; /* printk-family calls the patch touches */
	GPtrArray *findings;    /* struct pk_finding* */
	gboolean canceled;      /* stopped early, base/proc.h's cancel flag being set (a
	                           signal): the findings are partial, the verdict is none */
};

/*
 * Scan a patch; never fails (a partial patch gives partial findings).  A
 * scan's cost grows with the diff (about 50 bytes of memory a byte of a
 * diff of calls), so a caller holds the patch to its size limits first
 * (base/patch.h's pk_patch_over_limits()); and it stops early, canceled,
 * when the process is asked to stop (pk_proc_canceled()).
 */
struct pk_scan *pk_scan(const struct pk_patch *patch);

/*
 * The same with what a kernel tree knows (tree may be NULL: then exactly
 * pk_scan()).  The tree is borrowed; it caches what it reads, so one tree
 * serves a whole mailbox.
 */
struct pk_scan *pk_scan_tree(const struct pk_patch *patch, struct pk_tree *tree);

void pk_scan_free(struct pk_scan *s);
typedef struct pk_scan pk_scan_result;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_scan_result, pk_scan_free)

#endif
