/*
 * verdict.h - the verdicts (doc/testing.md): what printkbot says of one patch
 * or commit.  Code passes them as enum pk_verdict; the names (the stable
 * words of the JSON, the store and the replies) come only from here, so a
 * typo in a verdict no longer compiles.
 */
#ifndef PK_VERDICT_H
#define PK_VERDICT_H

#include <stdbool.h>

enum pk_verdict {
	PK_VERDICT_NONE,              /* not judged (yet): a commit run skipped */
	PK_VERDICT_NO_CHURN,          /* no printk-family call changed; not built */
	PK_VERDICT_NO_VISIBLE_CHANGE, /* built and booted, boot log and index as before */
	PK_VERDICT_CONSOLE_CHANGED,   /* the boot log or the printk index changed */
	PK_VERDICT_DOES_NOT_APPLY,    /* the patch does not apply to the base */
	PK_VERDICT_BUILD_FAILED,      /* the patched kernel does not build */
	PK_VERDICT_BOOT_FAILED,       /* the patched kernel panicked or hung */
	PK_VERDICT_REFUSED,           /* the policy refused to build it */
	PK_VERDICT_NOT_BUILT,         /* built and booted, nothing changed, but a touched C
	                                 file or header is not compiled in: nothing vouched */
};

/* The verdict's stable name ("console-changed"); "" for PK_VERDICT_NONE. */
const char *pk_verdict_name(enum pk_verdict verdict);

/* What the verdict means, one line ("" for PK_VERDICT_NONE). */
const char *pk_verdict_meaning(enum pk_verdict verdict);
/* How many values enum pk_verdict has, PK_VERDICT_NONE (0) included. */
unsigned pk_verdicts(void);

/* The verdict named name: true and *out set, or false (*out untouched). */
bool pk_verdict_parse(const char *name, enum pk_verdict *out);

/* Whether a verdict means the console (or the kernel) is not as before. */
bool pk_verdict_is_bad(enum pk_verdict verdict);

#endif
