/*
 * rules.h - log-monitor rules against what a kernel can print: which
 * messages each rule matches in a kernel, which rules match nothing of a
 * newer one, and which rules a patch breaks.
 *
 * Fleets watch the kernel log with rules (node-problem-detector's
 * kernel-monitor.json: one RE2 regular expression a rule, "\n" joining
 * consecutive lines); a reworded message silently breaks them.  A rule
 * file is either such a JSON file (its "rules" array, each with a
 * "pattern" and, as its name, a "reason") or a plain list of patterns,
 * one a line, '#' comments and blank lines skipped.
 *
 * A rule is matched against the printk index (every message the kernel
 * can print, booted or not) and against the boot records.  An index
 * entry is a format: the rule matches it when some text the format can
 * print matches (rules-private.h says how), so "Killed process \d+"
 * matches "%s: Killed process %d".  A rule of several lines matches the
 * index when each of its lines matches some message: the first line must
 * end its message, the last begin one, any between be a whole one; in
 * the boot records the lines must be consecutive records.
 *
 * Pure computation: the caller reads the file.  Everything returned is
 * new and owned by the caller unless said borrowed; a struct pk_rules
 * keeps work space for its matching, so one is not used from two
 * threads at once.
 */
#ifndef PK_RULES_H
#define PK_RULES_H

#include <glib.h>
#include <stdbool.h>

#include "analysis/kdiff.h"
#include "analysis/kmsg.h"

struct pk_re;
struct pk_re_scratch;

struct pk_rule {
	char *name;         /* node-problem-detector's "reason" ("OOMKilling"), else where */
	char *where;        /* where it is written: "rules[0]", "line 12" */
	char *pattern;      /* as written */
	char **lines;       /* the pattern's consecutive lines, NULL-ended; one for most rules */
	guint n_lines;
	struct pk_re *whole;    /* the whole pattern, searched in a run of records */
	struct pk_re **parts;   /* each line, anchored as its place says (see above) */
};

struct pk_rules {
	char *path;                     /* the file, as named */
	GPtrArray *rules;               /* struct pk_rule*, in file order */
	struct pk_re_scratch *scratch;  /* the matching's work space */
};

/*
 * Parse a rule file's text (path names it in errors).  -1 with err
 * (PK_ERROR_INPUT) naming the file and the rule ("rules[3] (TaskHung)",
 * "line 12") when the JSON does not parse, a rule has no "pattern"
 * string, a pattern is empty or is not RE2 syntax (and where), or the
 * file holds no rule.
 */
int pk_rules_parse(struct pk_rules **out, const char *path, const char *text, gsize len, GError **err);
void pk_rules_free(struct pk_rules *rules);
typedef struct pk_rules pk_rules;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_rules, pk_rules_free)

/* Whether line (0-based) of rule matches some record that format (an index format, unescaped) prints. */
bool pk_rule_matches_format(const struct pk_rules *rules, const struct pk_rule *rule, guint line,
			    const char *format);
/* Whether line of rule matches the one record text (as printed, without its newline). */
bool pk_rule_matches_record(const struct pk_rules *rules, const struct pk_rule *rule, guint line,
			    const char *text);

/* What one rule matches in one kernel's capture (pointers borrowed from it). */
struct pk_rule_hits {
	GPtrArray **lines;   /* per line of the rule: const struct pk_index_entry* it matches */
	GPtrArray *records;  /* const struct pk_record*: the first of each run of consecutive
	                        records the whole rule matched */
	bool matches;        /* every line matches some index entry, or some records matched */
};

/* One rule between two kernels (index-diff --rules). */
struct pk_rule_report {
	const struct pk_rule *rule;                /* borrowed from the rules */
	struct pk_rule_hits a, b;
	/*
	 * const struct pk_index_change* of the diff (borrowed) that took away
	 * a message a line of the rule matched in A: reworded so that it no
	 * longer matches, removed, or moved (removed where it was, and a
	 * message the line matches added elsewhere).
	 */
	GPtrArray *changed;
	/*
	 * Per line that matches nothing of B: the message of B with most of
	 * the line's words (at least three, and half), its likeliest new target;
	 * NULL for the other lines or when none is near.
	 */
	const struct pk_index_entry **nearest;
};

/*
 * Every rule between kernels a and b (captures borrowed, d their index
 * diff, borrowed): a new array of struct pk_rule_report*, in the rules'
 * order; free it with g_ptr_array_unref().
 */
GPtrArray *pk_rules_compare(const struct pk_rules *rules, const struct pk_capture *a,
			    const struct pk_capture *b, const struct pk_kdiff *d);

enum pk_rule_break_kind {
	PK_RULE_REWORDED,   /* the message's text changed and the rule no longer matches it */
	PK_RULE_REMOVED,    /* the message is gone, and no message the rule matches came in */
	PK_RULE_MOVED,      /* gone from here, and a message the rule matches came in elsewhere */
};

/* "reworded", "removed", "moved". */
const char *pk_rule_break_kind_name(enum pk_rule_break_kind kind);

/* A message a rule matched before a patch that the patch took from it; every string owned. */
struct pk_rule_break {
	char *rule;          /* the rule's name */
	char *where;         /* where the rule is written ("rules[0]") */
	char *pattern;       /* the line of the rule that matched ("" never: the whole when one line) */
	enum pk_rule_break_kind kind;
	bool boot_log;       /* a boot record's text changed (its format did not) */
	char *file;          /* where the message was printed from */
	int line;
	char *func;
	char *old_text;      /* the format (or the record) before */
	char *new_text;      /* after: reworded, moved (the message that came in); NULL: removed */
	char *moved_to;      /* moved: "file:line func()"; else NULL */
	bool still_matched;  /* the patched kernel has some other message the line matches */
};

void pk_rule_break_free(gpointer p);

/*
 * The messages a patch took from the rules: from d (the diff of before
 * and after, borrowed), its index changes and its boot-log changes that
 * no index change of the same place explains; after (borrowed) is the
 * patched kernel's capture, for still_matched.  A new array of struct
 * pk_rule_break* (empty when the patch breaks none), sorted by file
 * and line.
 */
GPtrArray *pk_rules_breaks(const struct pk_rules *rules, const struct pk_kdiff *d,
			   const struct pk_capture *after);

#endif
