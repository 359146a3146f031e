/*
 * kdiff.h - the diff stage: what changed in what the kernel printed (and
 * could print) between a boot before a patch and a boot after it.
 *
 * Input is two struct pk_capture (kmsg.h), borrowed and never kept, and
 * optionally a noise mask learnt from several boots of the base.  Output
 * is a new struct pk_kdiff the caller frees with pk_kdiff_free() (NULL is
 * fine); every string in it is owned by it.  Pure computation: no I/O.
 *
 * Records are normalised first (timestamps, caller ids, pointers and
 * addresses, clock/BogoMIPS figures, memory counts that vary, build stamps)
 * keeping level, facility and the continuation flag; then the before and
 * after record lists are aligned with libgit2's diff of buffers, and each
 * change is classified with the dynamic kinds of DESIGN.md and attributed
 * to the printk index entry whose format matches it.
 */
#ifndef PK_KDIFF_H
#define PK_KDIFF_H

#include <glib.h>
#include <stdbool.h>

#include "kmsg.h"
#include "scan.h"

/* Where an index entry lives; fields borrowed from the capture are copied. */
struct pk_origin {
	char *file;         /* "kernel/sched/topology.c", or NULL when unattributed */
	int line;
	char *func;
	char *format;       /* the index format, unescaped */
};

/*
 * One change in the boot log.  old_* describe the before side and new_* the
 * after side; a side that does not exist (message-added has no old side)
 * has level -1 and text NULL.  For line-split and lines-merged the texts
 * hold the records joined with "\n".
 */
struct pk_change {
	const char *kind;   /* static: message-added, message-removed, text-changed,
	                       prefix-changed, level-changed, line-split, lines-merged */
	int old_level, new_level;
	char *old_text, *new_text;      /* as printed (not normalised) */
	struct pk_origin origin;        /* after side's origin, the before side's when removed */
	char *message;                  /* one sentence: "kernel/...c:NN f(): text changed: `a` → `b`" */
};

/* One change in the printk index (messages the kernel can print). */
struct pk_index_change {
	const char *kind;   /* static: message-added, message-removed, level-changed, text-changed */
	int old_level, new_level;       /* -1 for "<c>" or a side that does not exist */
	char *old_format, *new_format;
	struct pk_origin origin;        /* after side, the before side when removed */
};

/* How a static (scan) finding shows up in the dynamic results. */
enum pk_confirmation {
	PK_SEEN_AT_BOOT,    /* a console change at that file (and call) was seen */
	PK_IN_INDEX_ONLY,   /* only the printk index changed there */
	PK_NOT_CONFIRMED,   /* neither */
};

/* Records that vary between boots of one kernel, as normalised keys. */
struct pk_noise;

struct pk_kdiff {
	GPtrArray *changes;         /* struct pk_change*, in after-boot order */
	GPtrArray *index_changes;   /* struct pk_index_change*, sorted by file, line */
	unsigned records_before, records_after;
	unsigned noise_dropped;     /* records ignored because the mask says they vary */
};

/*
 * The normalised form of a record's text: what is compared.  Caller frees.
 * Stable: the same input always gives the same output.
 */
char *pk_kdiff_normalise(const char *text);

/*
 * Learn run-to-run noise from n >= 2 captures of the same kernel: every
 * normalised record that is not present in all of them (same count, same
 * level) is noise.  Returns a new mask (pk_noise_free()).
 */
struct pk_noise *pk_noise_learn(const struct pk_capture *const *boots, unsigned n);
void pk_noise_free(struct pk_noise *noise);
/* The mask as sorted lines (for storing it); caller frees with g_strfreev. */
char **pk_noise_keys(const struct pk_noise *noise);
/* Rebuild a mask from pk_noise_keys() output. */
struct pk_noise *pk_noise_from_keys(const char *const *keys);

/* Diff two boots; noise may be NULL.  Never fails. */
struct pk_kdiff *pk_kdiff_captures(const struct pk_capture *before,
				   const struct pk_capture *after,
				   const struct pk_noise *noise);
void pk_kdiff_free(struct pk_kdiff *d);
typedef struct pk_kdiff pk_kdiff;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_kdiff, pk_kdiff_free)

/* Relate a static finding to the dynamic results. */
enum pk_confirmation pk_kdiff_confirm(const struct pk_kdiff *d,
				      const struct pk_finding *f);
/* "seen-at-boot", "in-index-only", "not-confirmed". */
const char *pk_confirmation_name(enum pk_confirmation c);

#endif
