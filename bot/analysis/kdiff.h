/*
 * kdiff.h - the diff stage: what changed in what the kernel printed (and
 * could print) between a boot before a patch and a boot after it.
 *
 * Input is two struct pk_capture (kmsg.h), borrowed and never kept, and
 * optionally a noise mask learnt from several boots of the base
 * (noise.h).  Output is a new struct pk_kdiff the caller frees with
 * pk_kdiff_free() (NULL is fine); every string in it is owned by it.  Pure
 * computation: no I/O.
 *
 * Records are normalised first (timestamps, caller ids, pointers and
 * addresses, clock/BogoMIPS figures, memory counts that vary, build stamps)
 * keeping level, facility and the continuation flag; then the before and
 * after record lists are aligned with libgit2's diff of buffers, and each
 * change is classified with the dynamic kinds (doc/testing.md) and attributed
 * to the printk index entry whose format matches it.  Records that only
 * moved (same key, another place: concurrent initcalls) are no change.
 *
 * Attribution turns every index format of a capture into a matcher: the
 * conversions (%d, %llx, %*pbl, %pS, ...) become what they can print, an
 * unknown "prefix: " may come first, a format without a trailing newline
 * may go on with pr_cont() text, and the match with the most literal text
 * wins.  Formats with no letter or digit of their own ("%s\n") attribute
 * nothing: they would match any record.
 *
 * Change kinds are enum pk_change_kind; their names (the stable words of
 * the JSON, the store and the replies) come only from pk_change_kind_name().
 *
 * libgit2 is initialised and shut down around each diff (its init is
 * reference-counted), so callers need not know it is there.
 *
 * The stage is six files: normalise.c (the compared text and key),
 * noise.c (noise.h), attribute.c (index entries as matchers), kdiff.c
 * (alignment and classification), kdiff-index.c (the index diff) and
 * confirm.c (pk_kdiff_confirm()); kdiff-private.h is what they share.
 */
#ifndef PK_KDIFF_H
#define PK_KDIFF_H

#include <glib.h>
#include <stdbool.h>

#include "analysis/kmsg.h"
#include "analysis/noise.h"
#include "analysis/scan.h"

/* The dynamic kinds: what changed in the boot log or the index. */
enum pk_change_kind {
	PK_CHANGE_MESSAGE_ADDED,    /* a record (an entry) exists after only */
	PK_CHANGE_MESSAGE_REMOVED,  /* a record (an entry) exists before only */
	PK_CHANGE_TEXT_CHANGED,     /* same origin, other text */
	PK_CHANGE_PREFIX_CHANGED,   /* same text after a changed "prefix: " */
	PK_CHANGE_LEVEL_CHANGED,    /* same text, other level (or flags) */
	PK_CHANGE_LINE_SPLIT,       /* one record became several (boot log only) */
	PK_CHANGE_LINES_MERGED,     /* several records became one (boot log only) */
};

/* The kind's stable name ("text-changed"); "" for a value out of range. */
const char *pk_change_kind_name(enum pk_change_kind kind);
/* The kind named name: true and *out set, or false (*out untouched). */
bool pk_change_kind_parse(const char *name, enum pk_change_kind *out);

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
	enum pk_change_kind kind;
	int old_level, new_level;
	char *old_text, *new_text;      /* as printed (not normalised) */
	struct pk_origin origin;        /* the after side's origin; the before side's when the
	                                   after side has none (a removed message) */
	char *message;                  /* one sentence: "kernel/...c:NN f(): text changed: `a` → `b`";
	                                   without "file:line f(): " when unattributed */
};

/*
 * One change in the printk index (messages the kernel can print).  Entries
 * are paired by file, function and format whatever their line, so an entry
 * a patch only moved is no change (or level-changed when its level or
 * continuation flag differs); the rest pair by file and function at about
 * the same line, after the shift of nearby unchanged entries, as
 * text-changed; what is left was added or removed.
 */
struct pk_index_change {
	enum pk_change_kind kind;   /* message-added, message-removed, level-changed, text-changed */
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

struct pk_kdiff {
	GPtrArray *changes;         /* struct pk_change*, in after-boot order */
	GPtrArray *index_changes;   /* struct pk_index_change*, sorted by file, line */
	unsigned records_before, records_after;
	unsigned noise_dropped;     /* records ignored because the mask says they vary */
};

/*
 * The normalised form of a record's text: what is compared.  Caller frees.
 * Stable: the same input always gives the same output, and normalising
 * twice changes nothing more.  Masked numbers read "<N>" ("0x<N>" keeps
 * its prefix, "<N>K" its unit), dates "<date>": "BIOS-e820: [mem
 * 0x<N>-0x<N>] usable", "tsc: Detected <N> MHz processor".
 */
char *pk_kdiff_normalise(const char *text);

/*
 * Diff two boots; noise may be NULL.  Never fails.  With a mask, the
 * records it names and those whose presence follows the host's timing
 * under TCG (tsc:, clocksource:, sched_clock:, the delay loop) are left
 * out; without one every record is compared.  records_before and
 * records_after count every record of each capture, noise_dropped the
 * records of both that were left out.
 */
struct pk_kdiff *pk_kdiff_captures(const struct pk_capture *before,
				   const struct pk_capture *after,
				   const struct pk_noise *noise);
void pk_kdiff_free(struct pk_kdiff *d);
typedef struct pk_kdiff pk_kdiff;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_kdiff, pk_kdiff_free)

/*
 * Whether every boot-log change of d is one the printk index explains: a
 * change of the same kind (a text or prefix change for a text-changed
 * entry) at an entry whose format the patch added, removed or changed,
 * matched by file, line and format.  Such a record cannot come from the
 * host's timing: its format is in one kernel only.  False when d has no
 * boot-log change or one the index does not explain.
 */
bool pk_kdiff_explained_by_index(const struct pk_kdiff *d);

/*
 * Which files printed the records of one boot, as the diff attributes a
 * record to its printk index entry: a new table (caller unrefs) from file
 * ("kernel/printk/printk.c") to the number of cap's records attributed to
 * an entry of that file, as GUINT_TO_POINTER().  Records no entry matches
 * count nowhere; cap may be NULL (an empty table).
 */
GHashTable *pk_kdiff_records_by_file(const struct pk_capture *cap);

/*
 * Relate a static finding (borrowed) to the dynamic results: seen at boot
 * when a console change is attributed to the finding's file, at a line
 * within a few of the finding's or with the finding's old or new text
 * (unescaped; the index format may carry a pr_fmt() prefix before it) as
 * its format; in the index only when just an index change matches that
 * way.  A pr_fmt-* finding matches any change in its file.
 */
enum pk_confirmation pk_kdiff_confirm(const struct pk_kdiff *d,
				      const struct pk_finding *f);
/* "seen-at-boot", "in-index-only", "not-confirmed". */
const char *pk_confirmation_name(enum pk_confirmation c);

#endif
