/*
 * range-bisect.h - the worker of `printkbot bisect`: build and boot the two
 * ends of a range, compare what they print, and for each change between
 * them (or only what matches a message) find the first commit that brought
 * it, by bisection along the first parents (analysis/bisect.h does the
 * search; this feeds it built and booted commits).  Every build and boot
 * is stored, and commits already in the store narrow the search for free.
 */
#ifndef PK_RANGE_BISECT_H
#define PK_RANGE_BISECT_H

#include <glib.h>
#include <stdbool.h>

#include "analysis/bisect.h"
#include "intake/range.h"
#include "lab/derive.h"
#include "lab/lab.h"
#include "pipeline/test.h"

struct pk_store;

/* A commit of the line, built and booted (or found not to build or boot). */
struct pk_bisect_tested {
	struct pk_test_side side;
	GHashTable *counts;   /* profile key -> count, when it booted */
};

/* One change between the ends, and where it came from. */
struct pk_bisect_target {
	const char *stage;    /* "boot", "index" or "message" */
	const char *kind;     /* static */
	char *what;           /* the change in one sentence */
	GPtrArray *keys;      /* char*: the profile keys it is judged by; NULL: by the message */
	char *base_profile;   /* its profile at the base */
	struct pk_bisect_result result;
	bool searched;        /* false: the tip's profile equals the base's (it prints elsewhere too) */
};

struct pk_range_bisect {
	struct pk_lab lab;        /* owned; on a config derived for the range's diff when it needs one */
	struct pk_derived derived;/* what derive.h found for the range's diff */
	struct pk_store *store;   /* owned */
	struct pk_test_opts opts;
	struct pk_range *range;
	const char *message;      /* only what matches it, or NULL for every change */
	GPtrArray *line;          /* char*: 0 the base, 1..n the commits, n the tip */
	struct pk_bisect_tested **tested;   /* n + 1 entries, NULL until tested */
	struct pk_noise *noise;
	GPtrArray *targets;       /* struct pk_bisect_target* */
	unsigned builds, builds_ends, from_store;
	unsigned step;            /* tests asked so far, for the progress line */
	double start;
};

/*
 * Take lab and store (they are cleared in the caller's hands), read the
 * range spec of repo (NULL: the current directory's) into the lab and
 * make the line of first parents.  When the range's diff touches files
 * the lab's config does not compile, or drivers of qemu/devices, the lab
 * becomes one on a config derived for that diff (derive.h), as a test
 * of the whole range as one patch would: a message of a driver the lab
 * does not build could not be bisected at all.  opts is copied; its
 * progress is the worker's own.  -1 with err set for a bad range.  Clear with
 * pk_range_bisect_clear() in any case.
 */
int pk_range_bisect_open(struct pk_range_bisect *b, struct pk_lab *lab, struct pk_store *store,
			 const struct pk_test_opts *opts, const char *repo, const char *const *spec,
			 const char *message, GError **err);

/*
 * Test the ends, find the targets and search each: 0 when done (targets
 * may be empty: the ends print the same), 1 when an end does not build
 * or boot (said in err), -1 when the bot cannot work.
 */
int pk_range_bisect_run(struct pk_range_bisect *b, GError **err);
void pk_range_bisect_clear(struct pk_range_bisect *b);

/* Why line index i cannot be judged ("does not build"/"does not boot"), or NULL when it can. */
const char *pk_range_bisect_skip_reason(const struct pk_range_bisect *b, unsigned i);

#endif
