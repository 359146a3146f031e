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

/* What the rules say of one tested patch (struct pk_test_result's monitor). */
struct pk_monitor_check {
	char *rules_path;      /* the rule file, as named */
	guint rules;           /* how many rules were checked */
	GPtrArray *breaks;     /* struct pk_rule_break* (rules.h): the messages the patch took
	                          from them; empty when none */
};

/*
 * Check rules (borrowed) against a patch's diff d and its patched
 * kernel's capture after (both borrowed): a new check, freed with
 * pk_monitor_check_free() (NULL is fine).
 */
struct pk_monitor_check *pk_monitor_check(const struct pk_rules *rules, const struct pk_kdiff *d,
					  const struct pk_capture *after);
void pk_monitor_check_free(struct pk_monitor_check *check);

#endif
