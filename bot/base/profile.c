/* profile.c - stage times for bench/ (profile.h). */
#include "base/profile.h"

#include <stdio.h>

struct stage_time {
	guint count;
	gint64 usec;
};

static GMutex lock;
static GHashTable *stages;   /* stage name (static string) -> struct stage_time* */

bool pk_profile_on(void)
{
	static gsize checked;
	static bool on;

	if (g_once_init_enter(&checked)) {
		const char *path = g_getenv("PRINTKBOT_PROFILE");

		on = path && *path;
		g_once_init_leave(&checked, 1);
	}
	return on;
}

void pk_profile_end(struct pk_profile_span *span)
{
	struct stage_time *t;

	if (!span->start)
		return;
	g_mutex_lock(&lock);
	if (!stages)
		stages = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	if (!(t = g_hash_table_lookup(stages, span->stage))) {
		t = g_new0(struct stage_time, 1);
		g_hash_table_insert(stages, (gpointer)span->stage, t);
	}
	t->count++;
	t->usec += g_get_monotonic_time() - span->start;
	g_mutex_unlock(&lock);
	span->start = 0;
}

void pk_profile_write(void)
{
	const char *path = g_getenv("PRINTKBOT_PROFILE");
	GHashTableIter it;
	gpointer name, value;
	FILE *f;

	g_mutex_lock(&lock);
	if (stages && path && *path && (f = fopen(path, "a"))) {
		g_hash_table_iter_init(&it, stages);
		while (g_hash_table_iter_next(&it, &name, &value)) {
			const struct stage_time *t = value;

			fprintf(f, "%s\t%u\t%.3f\n", (const char *)name, t->count, t->usec / 1e6);
		}
		fclose(f);
	}
	g_clear_pointer(&stages, g_hash_table_unref);
	g_mutex_unlock(&lock);
}
