/*
 * trees.c - the operator's kernel trees ([tree NAME]) fetched into the
 * lab at start and every fetch_interval, so the next series can go on
 * what was pushed there, without a restart; see daemon.h.
 */
#include "daemon/private.h"
#include "lab/bases.h"
#include "lab/lab.h"
#include "base/util.h"

void daemon_fetch_trees(struct pk_daemon *d, double now)
{
	struct pk_lab lab = { .lock_fd = -1 };
	g_autoptr(GError) err = NULL;

	if (!d->config.trees || !d->config.trees->len || now < d->next_tree_fetch)
		return;
	d->next_tree_fetch = now + d->config.daemon.fetch_interval;
	/* the lab's lock: a fetch writes refs another printkbot may be resolving */
	if (pk_lab_take(&lab, &err) < 0) {
		daemon_log(0, NULL, "trees not fetched: %s", err->message);
		return;
	}
	for (guint i = 0; i < d->config.trees->len; i++) {
		const struct pk_tree_config *t = d->config.trees->pdata[i];
		double t0 = pk_now();

		if (pk_bases_fetch_tree(&lab, t, &err) < 0) {
			daemon_log(0, NULL, "tree %s: %s", t->name, err->message);
			g_clear_error(&err);
		} else {
			daemon_log(0, NULL, "tree %s fetched from %s in %.1f s", t->name, t->url, pk_now() - t0);
		}
	}
	pk_lab_clear(&lab);
}
