/*
 * digest.h - a patch's static findings (scan.h) as a maintainer reads
 * them in one screen: grouped by cause and file, advice after.
 *
 * A large conversion gives a finding per call and per cause: a revert
 * that drops a pr_fmt() from a file with 25 calls is 25 prefix-changed
 * findings and 25 prefer-pr-level ones, the same sentence each time.
 * The digest says each cause once, "25 calls lose the prefix
 * "clocksource: " pr_fmt() gave them", with the first lines named and
 * how many more (a driver removed whole: "20 messages are removed:
 * printk() of "a", "b", "c" and 17 more"); then the advice (the four kinds that mirror
 * checkpatch.pl and print nothing different: logging-continuation,
 * prefer-pr-level, embedded-function-name, whitespace-before-newline),
 * one group per kind over every file, with its count.  A finding alone
 * in its group reads as before.  `scan` prints it, the review (and so
 * the reply) shows it; `--json` and the stored review model keep every
 * finding; `printkbot check` prints a line a group for b4 (report/check.h).
 *
 * Pure: findings are borrowed, everything returned is new.
 */
#ifndef PK_DIGEST_H
#define PK_DIGEST_H

#include <glib.h>
#include <stdbool.h>

#include "analysis/scan.h"

/* One group of findings of one cause. */
struct pk_digest_group {
	enum pk_finding_kind kind;
	bool advice;          /* one of the four checkpatch kinds: after the changes */
	bool silent;          /* every finding of it prints the same as before (scan.h's silent) */
	unsigned count;       /* findings in it */
	char *where;          /* "file:line" for one finding (or one line), "file" for one file,
				 else "file:line, file:line" of the first ones */
	char *lines;          /* "lines 263, 283, 288 and 22 more", "(...)" of several; NULL for one */
	char *sentence;       /* the cause, said once: the finding's own sentence for one */
	char *note;           /* the confirmations (test.h), " (seen-at-boot)", " (3 seen-at-boot, 2
				 not-confirmed)"; "" when none was given */
};
void pk_digest_group_free(struct pk_digest_group *g);

/* At most this many lines of a group are named; the others are counted. */
#define PK_DIGEST_LINES_NAMED 3

/*
 * The groups of findings (struct pk_finding*, in scan order): the
 * changes first, in the order of each group's first finding, then the
 * advice.  notes (may be NULL) is one confirmation name per finding
 * (NULL entries for none): a group with them says them, counted.  A new
 * array of struct pk_digest_group*.
 */
GPtrArray *pk_digest(const GPtrArray *findings, const char *const *notes);

/*
 * A group as one line of text, as `scan` prints it: "where: kind:
 * sentence (lines)" (the advice: "advice: kind: ..."), no newline.
 */
char *pk_digest_line(const struct pk_digest_group *g);

#endif
