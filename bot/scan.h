/*
 * scan.h - static logging-churn findings from a parsed patch, no build.
 *
 * pk_scan() reads the hunks of a struct pk_patch (borrowed, not kept) and
 * returns a new struct pk_scan the caller frees with pk_scan_free(), which
 * accepts NULL.  Every string in a finding is owned by the finding.  Kind
 * names are the stable ones of DESIGN.md, plus message-added and
 * message-removed for a call with no counterpart on the other side.
 */
#ifndef PK_SCAN_H
#define PK_SCAN_H

#include "patch.h"

#include <glib.h>

struct pk_finding {
	char *file;
	int line;           /* post-image line, pre-image for removed calls */
	const char *kind;   /* static string: "level-changed", ... */
	char *old_call;     /* the call as written (whitespace folded), or NULL */
	char *new_call;
	const char *old_level;  /* "err", "warn", ..., "default", or NULL */
	const char *new_level;
	char *old_text;     /* the format text, C escapes kept */
	char *new_text;
	char *message;      /* one readable sentence */
};

struct pk_scan {
	const char *verdict;    /* "no-churn", "no-visible-change", "console-changed" */
	unsigned calls_changed; /* printk-family calls the patch touches */
	GPtrArray *findings;    /* struct pk_finding* */
};

/* Scan a patch; never fails (a partial patch gives partial findings). */
struct pk_scan *pk_scan(const struct pk_patch *patch);
void pk_scan_free(struct pk_scan *s);
typedef struct pk_scan pk_scan_result;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_scan_result, pk_scan_free)

/* Whether a finding kind changes nothing on the console by itself. */
gboolean pk_finding_is_silent(const char *kind);

#endif
