/*
 * confirm.c - how a static (scan) finding shows up in the dynamic results
 * of a diff (pk_kdiff_confirm() in kdiff.h).
 */
#include "analysis/kdiff.h"

#include <stdlib.h>
#include <string.h>

#define CONFIRM_NEAR 3      /* lines between a finding and an origin that still confirm it */

/*
 * Whether an index format is what a finding's C-escaped text says: the
 * same text once unescaped, maybe after a prefix (the index holds the
 * expanded pr_fmt(), the source does not), trailing newlines aside.
 */
static bool format_is(const char *format, const char *c_text)
{
	g_autofree char *text = NULL;
	size_t fl, tl;

	if (!format || !c_text)
		return false;
	text = g_strcompress(c_text);
	fl = strlen(format);
	tl = strlen(text);
	while (fl && format[fl - 1] == '\n')
		fl--;
	while (tl && text[tl - 1] == '\n')
		tl--;
	if (tl == fl)
		return memcmp(format, text, fl) == 0;
	return tl >= 4 && tl < fl && memcmp(format + fl - tl, text, tl) == 0;
}

/*
 * Whether an origin is the finding's: same file, and the format is the
 * finding's old or new text or the line is within a few of its line.  A
 * pr_fmt() finding is about every message of its file.
 */
static bool origin_is(const struct pk_origin *o, const char *old_format, const char *new_format,
		      const struct pk_finding *f)
{
	if (!o->file || strcmp(o->file, f->file))
		return false;
	if (pk_finding_is_pr_fmt(f->kind))
		return true;
	if (abs(o->line - f->line) <= CONFIRM_NEAR)
		return true;
	return format_is(old_format, f->old_text) || format_is(old_format, f->new_text) ||
	       format_is(new_format, f->old_text) || format_is(new_format, f->new_text);
}

enum pk_confirmation pk_kdiff_confirm(const struct pk_kdiff *d, const struct pk_finding *f)
{
	if (!d || !f || !f->file)
		return PK_NOT_CONFIRMED;
	for (guint i = 0; i < d->changes->len; i++) {
		const struct pk_change *c = d->changes->pdata[i];

		if (origin_is(&c->origin, c->origin.format, NULL, f))
			return PK_SEEN_AT_BOOT;
	}
	for (guint i = 0; i < d->index_changes->len; i++) {
		const struct pk_index_change *c = d->index_changes->pdata[i];

		if (origin_is(&c->origin, c->old_format, c->new_format, f))
			return PK_IN_INDEX_ONLY;
	}
	return PK_NOT_CONFIRMED;
}

static const char *const confirmation_names[] = {
	[PK_SEEN_AT_BOOT] = "seen-at-boot",
	[PK_IN_INDEX_ONLY] = "in-index-only",
	[PK_NOT_CONFIRMED] = "not-confirmed",
};

const char *pk_confirmation_name(enum pk_confirmation c)
{
	return (unsigned)c < G_N_ELEMENTS(confirmation_names) ? confirmation_names[c] : "not-confirmed";
}
