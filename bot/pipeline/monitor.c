/* monitor.c - a log-monitor rule file, read, and what its rules say of a patch (monitor.h). */
#include "pipeline/monitor.h"
#include "base/util.h"

#define RULES_MAX_BYTES (16u << 20)   /* node-problem-detector's own files are a few KiB */

int pk_monitor_rules_load(struct pk_rules **out, const char *path, GError **err)
{
	g_autofree char *text = NULL;
	size_t len = 0;

	if (pk_read_file(&text, &len, path, RULES_MAX_BYTES, err) < 0)
		return -1;
	return pk_rules_parse(out, path, text, len, err);
}

struct pk_monitor_check *pk_monitor_check(const struct pk_rules *rules, const struct pk_kdiff *d,
					  const struct pk_capture *after)
{
	struct pk_monitor_check *c = g_new0(struct pk_monitor_check, 1);

	c->rules_path = g_strdup(rules->path);
	c->rules = rules->rules->len;
	c->breaks = pk_rules_breaks(rules, d, after);
	return c;
}

void pk_monitor_check_free(struct pk_monitor_check *check)
{
	if (!check)
		return;
	g_free(check->rules_path);
	g_ptr_array_unref(check->breaks);
	g_free(check);
}
