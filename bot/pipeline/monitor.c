/* monitor.c - a log-monitor rule file, read (monitor.h). */
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
