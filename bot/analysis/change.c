/*
 * change.c - what kdiff.c (the boot log) and kdiff-index.c (the printk
 * index) say of a change alike: the stable names of its kinds, and where
 * the message comes from (its printk index entry).  See kdiff.h.
 */
#include "analysis/kdiff-private.h"

#include <string.h>

static const char *const change_kind_names[] = {
	[PK_CHANGE_MESSAGE_ADDED] = "message-added",
	[PK_CHANGE_MESSAGE_REMOVED] = "message-removed",
	[PK_CHANGE_TEXT_CHANGED] = "text-changed",
	[PK_CHANGE_PREFIX_CHANGED] = "prefix-changed",
	[PK_CHANGE_LEVEL_CHANGED] = "level-changed",
	[PK_CHANGE_LINE_SPLIT] = "line-split",
	[PK_CHANGE_LINES_MERGED] = "lines-merged",
};

const char *pk_change_kind_name(enum pk_change_kind kind)
{
	return (unsigned)kind < G_N_ELEMENTS(change_kind_names) ? change_kind_names[kind] : "";
}

bool pk_change_kind_parse(const char *name, enum pk_change_kind *out)
{
	for (unsigned i = 0; name && i < G_N_ELEMENTS(change_kind_names); i++)
		if (!strcmp(name, change_kind_names[i])) {
			*out = i;
			return true;
		}
	return false;
}

void pk_origin_set(struct pk_origin *o, const struct pk_index_entry *e)
{
	if (!e)
		return;
	o->file = g_strdup(e->file);
	o->line = e->line;
	o->func = g_strdup(e->func);
	o->format = g_strdup(e->format);
}

void pk_origin_clear(struct pk_origin *o)
{
	g_free(o->file);
	g_free(o->func);
	g_free(o->format);
}
