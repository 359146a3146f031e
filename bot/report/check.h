/*
 * check.h - what `printkbot check` prints: b4's per-patch check protocol
 * (b4 am/shazam --check with b4.am-perpatch-check-cmd, b4 prep --check
 * with b4.prep-perpatch-check-cmd, since b4 0.14).
 *
 * b4 hands the command one patch mail and shows each line it prints as a
 * finding: a line holding "ERROR:" is a failure, any other a warning; no
 * line (and exit 0) is "passed all checks".  So a line here is a whole
 * finding on one line: no newline or control character inside, and
 * "ERROR: " first only for what changes what the kernel prints; advice
 * (what checkpatch.pl would warn about, a call converted that prints the
 * same) is a warning.
 *
 * Findings are grouped as scan and the review group them
 * (analysis/digest.h), a line a group: the findings of one cause in one
 * file ("drivers/x.c: message-added: 11 messages are added: dev_err() and
 * dev_info() of "a", "b", "c" and 8 more (lines 221, 233, 429 and 8
 * more)"); a group of one is the finding's own sentence.
 *
 * Lines are struct pk_check_line in new arrays the caller unrefs (each
 * line owned by its array).  This file reads the static findings only
 * (front.c runs it without the rest of the bot); check-test.c adds a
 * tested patch's lines.
 */
#ifndef PK_CHECK_H
#define PK_CHECK_H

#include <glib.h>
#include <stdbool.h>

#include "analysis/scan.h"

struct pk_check_line {
	bool error;     /* it changes what the kernel prints: "ERROR: " before it */
	char *text;     /* the finding, one line, without "ERROR: " */
};

/* A new empty array of lines (struct pk_check_line*, freed with it). */
GPtrArray *pk_check_lines_new(void);

/* Append one line (text: printf-style; newlines and controls become spaces). */
void pk_check_add(GPtrArray *lines, bool error, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/*
 * The lines of findings (struct pk_finding*, borrowed), grouped by cause
 * and file (pk_digest()), appended to lines: the changes in the order
 * each group first appears, then the advice.
 * only_silent: just the findings that change nothing on the console (the
 * advice), for a caller that says the rest from a build and a boot.
 */
void pk_check_group(GPtrArray *lines, const GPtrArray *findings, bool only_silent);

struct pk_test_result;

/*
 * The lines of a patch tested as `test` tests it (check-test.c): the
 * verdict on base (the base as named), a does-not-apply or refused patch
 * as one warning line and nothing more; then the boot log's and the
 * printk index's changes, a line a kind and file, each an error; the
 * monitor rules the patch breaks; the advice of its static findings.
 * No-churn and no-visible-change give no verdict line: b4 says "passed
 * all checks" when nothing else is said.
 */
void pk_check_test_lines(GPtrArray *lines, const struct pk_test_result *res, const char *base);

/* A line as b4 reads it: "ERROR: text" or "text". Caller frees. */
char *pk_check_line_format(const struct pk_check_line *line);

#endif
