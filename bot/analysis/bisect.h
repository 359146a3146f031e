/*
 * bisect.h - the search of `printkbot bisect`: the first commit of a line
 * of history at which something stops being as it was at the base, in
 * O(log n) tests, the way `git bisect run` finds it.
 *
 * The line is indices 0..n: 0 is the base (good by definition), n the tip
 * (bad by definition), 1..n-1 the commits between, oldest first.  The
 * search asks a callback for the state of one index at a time.  A commit
 * that cannot be judged (it does not build or boot) is PK_BISECT_SKIP,
 * what `git bisect run` calls exit status 125: the search goes on with its
 * neighbours, and when skipped commits are left between the last good and
 * the first bad one, the result says the first bad one is ambiguous and
 * names them.  As in git, the state is assumed to change once along the
 * line (good, then bad).
 *
 * Commits whose state costs nothing to learn (already built and booted:
 * in memory or in the store) are marked free by the caller; the search
 * narrows the interval with them first, so a test that needs a build is
 * only asked for when the free commits cannot narrow it more.
 *
 * Pure: no I/O but through the callback.
 */
#ifndef PK_BISECT_H
#define PK_BISECT_H

#include <glib.h>
#include <stdbool.h>

enum pk_bisect_state {
	PK_BISECT_GOOD,    /* as at the base */
	PK_BISECT_BAD,     /* as at the tip (or anyway not as at the base) */
	PK_BISECT_SKIP,    /* cannot be judged: git bisect run's 125 */
};

/*
 * The state of index i (0 < i < n) into *out; -1 with err set only when
 * the search must stop (the bot cannot work).
 */
typedef int (*pk_bisect_test_fn)(void *data, unsigned i, enum pk_bisect_state *out, GError **err);

struct pk_bisect_result {
	unsigned first;     /* the first bad index (1..n); with skips, the first that is surely bad */
	unsigned last_good; /* the last good index before it (0..first-1) */
	GArray *skipped;    /* unsigned: the skipped indices between them, oldest first; when
	                       not empty, any of them may be the first bad one instead */
	unsigned tests;     /* how many times the callback was called */
};

/*
 * Search 0..n (n >= 1).  free_ (n + 1 entries, may be NULL) marks the
 * indices whose test is free.  On success *out is filled; clear it with
 * pk_bisect_result_clear().
 */
int pk_bisect_run(struct pk_bisect_result *out, unsigned n, const bool *free_,
		  pk_bisect_test_fn test, void *data, GError **err);
void pk_bisect_result_clear(struct pk_bisect_result *res);

/* Whether the result is ambiguous (skipped commits could be the first bad one). */
static inline bool pk_bisect_ambiguous(const struct pk_bisect_result *res)
{
	return res->skipped && res->skipped->len > 0;
}

#endif
