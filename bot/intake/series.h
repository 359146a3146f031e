/*
 * series.h - which mails the daemon tests, and in what groups: the
 * subject's "[PATCH v3 2/5]" tag, the loop guard and the other reasons to
 * skip a mail, and the grouping of patches and cover letters into series.
 *
 * Pure functions over plain structs (no I/O, no GMime, no SQL), so the
 * rules can be tested on real list traffic.  Strings in the structs here
 * are owned by whoever filled them; pk_series_group() borrows the mails it
 * is given and its groups point at them.
 */
#ifndef PK_SERIES_H
#define PK_SERIES_H

#include <glib.h>
#include <stdbool.h>

/* What a subject says about the mail. */
struct pk_subject {
	int version;        /* vN (1 to 9999), 1 without */
	int number, total;  /* n/m; 1/1 without; number 0 is a cover letter */
	bool patch;         /* a [PATCH...] or [RFC...] tag */
	bool reply;         /* starts with Re:, Aw:, Fwd:... */
	bool pull;          /* a [GIT PULL] */
	/* an n/m no series has (3/2, 0/0, 2/10000, -1/-5), or such a vN (v0, v-1,
	   v10000): number and total stay 1/1, version 1 */
	bool malformed;
	char *title;        /* without reply prefixes and tags, lower case: matches versions */
};
void pk_subject_parse(struct pk_subject *out, const char *subject);
void pk_subject_clear(struct pk_subject *s);

/*
 * Whether a subject so parsed is a series' cover letter ("[PATCH v2
 * 0/7] ..."): never a patch to apply, though it may carry a diff (an
 * interdiff or a range-diff against another version), as b4 reads it.
 */
bool pk_subject_is_cover(const struct pk_subject *s);

/* One mail as the rules need it. */
struct pk_series_mail {
	gint64 id;                  /* the caller's (the store's) */
	const char *message_id;     /* without <> */
	const char *in_reply_to;    /* without <>, or NULL */
	const char *const *refs;    /* References without <>, NULL-terminated, or NULL */
	const char *subject;
	const char *from_addr;      /* lower case */
	bool bot_header;            /* X-Printkbot */
	bool auto_submitted;
	bool has_patch;
	gint64 received;
	/* from the subject, filled by pk_series_classify() */
	int version, number, total;
};

/* The loop guard: the bot's own addresses (lower case), NULL-terminated. */
struct pk_series_guard {
	const char *const *bot_addrs;
};

enum pk_series_kind {
	PK_SERIES_SKIP,       /* not to be tested: see the reason */
	PK_SERIES_PATCH,      /* a patch, alone or one of a series */
	PK_SERIES_COVER,      /* the 0/n of a series */
};

/*
 * Decide what a mail is.  Fills m's version, number and total from its
 * subject; *out_reason is a static sentence for a skipped mail, else NULL.
 * Our own mail (From one of the bot's addresses, or carrying X-Printkbot)
 * is always skipped, before anything else is looked at.
 */
enum pk_series_kind pk_series_classify(struct pk_series_mail *m, const struct pk_series_guard *guard,
				       const char **out_reason);

/* A series: mails of one version, threaded together. */
struct pk_series {
	GPtrArray *patches;         /* struct pk_series_mail*, by number, borrowed */
	struct pk_series_mail *cover;  /* or NULL */
	int version, total;
	bool complete;              /* every patch 1..total is there */
	unsigned prefix;            /* patches 1..prefix are there without a gap */
	gint64 last_received;       /* the newest mail of the series */
	char *subject;              /* the cover's subject, else the first patch's */
	char *key;                  /* author and title: the same series in another version */
};
void pk_series_free(struct pk_series *s);

/*
 * Group classified mails (struct pk_series_mail*, patches and cover
 * letters, borrowed) into series: two mails are of one series when one's
 * In-Reply-To or References names the other, they have the same version
 * and total and the same author; a patch without n/m is a series by
 * itself.  A second mail with a number already taken (a resend) is left
 * out.  *out is a new array of struct pk_series*, oldest first.
 */
void pk_series_group(GPtrArray **out, GPtrArray *mails);

/* A "[PATCH vN n/m] " prefix removed from a subject, for a reply's Subject; caller frees. */
char *pk_subject_strip_tags(const char *subject);

#endif
