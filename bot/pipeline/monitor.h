/*
 * monitor.h - the log-monitor rules a test checks (analysis/rules.h):
 * read from their file, as `index-diff --rules`, `test --rules` and the
 * daemon's [test] rules name it.
 */
#ifndef PK_MONITOR_H
#define PK_MONITOR_H

#include "analysis/rules.h"

/*
 * Read and parse the rule file at path (at most 16 MiB) into *out (free
 * with pk_rules_free()); -1 with err saying what is wrong and where (the
 * file, the rule, the offset in its pattern).
 */
int pk_monitor_rules_load(struct pk_rules **out, const char *path, GError **err);

#endif
