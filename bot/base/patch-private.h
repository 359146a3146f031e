/*
 * patch-private.h - what patch.c and patch-repair.c share; nothing else
 * includes it.
 */
#ifndef PK_PATCH_PRIVATE_H
#define PK_PATCH_PRIVATE_H

#include "base/patch.h"

/* A new repair record (path copied). */
struct pk_patch_damage *pk_patch_damage_new(int lineno, const char *path, int file_line, const char *what);
/* The number of lines that start in s[0..n). */
int pk_count_lines(const char *s, size_t n);
/* A format=flowed text unflowed as git mailinfo does it; caller frees. */
char *pk_patch_unflow(const char *text, gboolean delsp);
/*
 * p (parsed from diff), or, when diff is quoted-printable its mail does
 * not declare and only the decoded text reads whole, the decoded reading
 * with that damage first.  Takes p.
 */
struct pk_patch *pk_patch_leftover_qp(const char *diff, struct pk_patch *p);

#endif
