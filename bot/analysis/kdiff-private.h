/*
 * kdiff-private.h - what the files of the diff stage share with each other
 * and with nobody else: normalise.c, noise.c, attribute.c, kdiff.c and
 * kdiff-index.c.  Code outside bot/analysis uses kdiff.h (and noise.h).
 */
#ifndef PK_KDIFF_PRIVATE_H
#define PK_KDIFF_PRIVATE_H

#include <string.h>

#include "analysis/kdiff.h"

/* ---------------------------------------------------------------- normalise.c */

/*
 * The normalising rules, compiled: make one per diff (or per noise
 * learning) so that no regex is compiled per record.  pk_normaliser_free()
 * accepts NULL.
 */
struct pk_normaliser;
struct pk_normaliser *pk_normaliser_new(void);
void pk_normaliser_free(struct pk_normaliser *n);
/* pk_kdiff_normalise() of text with n's compiled rules; caller frees. */
char *pk_normaliser_apply(const struct pk_normaliser *n, const char *text);

/*
 * The compared key of record r whose normalised text is norm: "level,
 * facility,flag;" then norm on one line, as /dev/kmsg writes a record.
 * These are the keys of a noise mask.  Caller frees.
 */
char *pk_kdiff_record_key(const struct pk_record *r, const char *norm);

/* ---------------------------------------------------------------- noise.c */

/*
 * Whether the diff leaves a record out: with a mask (noise not NULL), the
 * records it names (key) and those whose presence follows the host's
 * timing under TCG (norm: tsc:, clocksource:, ...).  Without one, none.
 */
bool pk_noise_drops(const struct pk_noise *noise, const char *norm, const char *key);

/* ---------------------------------------------------------------- attribute.c */

/*
 * The printk index of one capture as matchers (kdiff.h says how a format
 * becomes one).  The index and its entries are borrowed and must outlive
 * the attributor; pk_attributor_free() accepts NULL.
 */
struct pk_attributor;
struct pk_attributor *pk_attributor_new(const GPtrArray *index);
void pk_attributor_free(struct pk_attributor *a);
/*
 * The most specific index entry whose format prints record r, or NULL.
 * Borrowed from the index.  Not const: matchers compile their regex the
 * first time they are tried.
 */
const struct pk_index_entry *pk_attributor_match(struct pk_attributor *a, const struct pk_record *r);

/* ---------------------------------------------------------------- kdiff.c */

/* Copy where entry e lives into o (nothing when e is NULL); pk_origin_clear() frees it. */
void pk_origin_set(struct pk_origin *o, const struct pk_index_entry *e);
void pk_origin_clear(struct pk_origin *o);

/* ---------------------------------------------------------------- kdiff-index.c */

/*
 * The printk index diff: append to out (which frees them with
 * pk_index_change_free()) the struct pk_index_change of entries before
 * and after (borrowed), sorted by file, line and kind name.
 */
void pk_kdiff_index(GPtrArray *out, const GPtrArray *before, const GPtrArray *after);
void pk_index_change_free(gpointer p);

/* ---------------------------------------------------------------- shared */

/* qsort() order of two char* (noise keys, the words of a text). */
static inline int pk_kdiff_compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

#endif
