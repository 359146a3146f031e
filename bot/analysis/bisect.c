/* bisect.c - the first bad commit of a line, with skips; see bisect.h. */
#include "analysis/bisect.h"

#include <string.h>

void pk_bisect_result_clear(struct pk_bisect_result *res)
{
	if (res->skipped)
		g_array_unref(res->skipped);
	memset(res, 0, sizeof *res);
}

/*
 * The untested, unskipped index in (lo, hi) nearest to their middle
 * (among the free ones only when only_free), or 0 when there is none.
 * Ties go to the older commit, as the middle does.
 */
static unsigned pick(unsigned lo, unsigned hi, const bool *tested, const bool *free_, bool only_free)
{
	unsigned mid = lo + (hi - lo) / 2;

	for (unsigned d = 0; d < hi - lo; d++) {
		unsigned cand[2] = { mid - d, mid + d + 1 };

		for (int k = 0; k < 2; k++) {
			unsigned i = cand[k];
			if (i <= lo || i >= hi || tested[i])
				continue;
			if (only_free && !(free_ && free_[i]))
				continue;
			return i;
		}
	}
	return 0;
}

int pk_bisect_run(struct pk_bisect_result *out, unsigned n, const bool *free_,
		  pk_bisect_test_fn test, void *data, GError **err)
{
	g_autofree enum pk_bisect_state *state = g_new0(enum pk_bisect_state, n + 1);
	g_autofree bool *tested = g_new0(bool, n + 1);
	struct pk_bisect_result res = { 0 };
	unsigned lo = 0, hi = n;
	bool only_free = true;

	state[0] = PK_BISECT_GOOD;
	state[n] = PK_BISECT_BAD;
	tested[0] = tested[n] = true;
	for (;;) {
		unsigned i = pick(lo, hi, tested, free_, only_free);

		if (!i) {
			if (!only_free)
				break;
			only_free = false;   /* the free commits narrowed what they could */
			continue;
		}
		if (test(data, i, &state[i], err) < 0)
			return -1;
		tested[i] = true;
		res.tests++;
		if (state[i] == PK_BISECT_GOOD)
			lo = i;
		else if (state[i] == PK_BISECT_BAD)
			hi = i;
	}
	res.first = hi;
	res.last_good = lo;
	res.skipped = g_array_new(FALSE, FALSE, sizeof(unsigned));
	for (unsigned i = lo + 1; i < hi; i++)
		if (state[i] == PK_BISECT_SKIP)
			g_array_append_val(res.skipped, i);
	*out = res;
	return 0;
}
