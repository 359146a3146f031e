/*
 * trees.c - the operator's kernel trees ([tree NAME]) fetched into the
 * lab at start and every fetch_interval, so the next series can go on
 * what was pushed there, without a restart, and each watched branch is
 * compared with what the store saw of it (watch.c); see daemon.h.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "lab/bases.h"
#include "lab/lab.h"
#include "lab/repo.h"
#include "base/util.h"

#include <string.h>

/* Add branch b of t as the lab has it to s: "main 1a2b3c4d5e6f", "next (none)". */
static void tree_head(GString *s, const struct pk_lab *lab, const struct pk_tree_group *t, const char *b)
{
	g_autofree char *name = g_strdup_printf("%s/%s", t->tree.name, b);
	g_autofree char *ref = pk_bases_ref(name);
	g_autofree char *id = pk_repo_resolve(lab, ref, NULL);

	g_string_append_printf(s, "%s%s %.12s", s->len ? ", " : "", b, id ? id : "(none)");
}

/* Each branch of t (its branches, then the watched ones) as the lab has it. */
static char *tree_heads(const struct pk_lab *lab, const struct pk_tree_group *t)
{
	GString *s = g_string_new(NULL);

	for (char **b = t->tree.branches; b && *b; b++)
		tree_head(s, lab, t, *b);
	for (char **b = t->tree.watch; b && *b; b++)
		if (!t->tree.branches || !g_strv_contains((const char *const *)t->tree.branches, *b))
			tree_head(s, lab, t, *b);
	return g_string_free(s, FALSE);
}

void daemon_fetch_trees(struct pk_daemon *d, double now)
{
	struct pk_lab lab = { .lock_fd = -1 };
	g_autoptr(GError) err = NULL;

	if (!d->config.trees || !d->config.trees->len || now < d->next_tree_fetch)
		return;
	d->next_tree_fetch = now + d->config.daemon.fetch_interval;
	/* the lab's lock: a fetch writes refs another printkbot may be resolving */
	if (pk_lab_take(&lab, d->config.test.arch, &err) < 0) {
		daemon_log(0, NULL, "trees not fetched: %s", err->message);
		return;
	}
	for (guint i = 0; i < d->config.trees->len; i++) {
		const struct pk_tree_group *t = d->config.trees->pdata[i];
		g_autofree char *before = tree_heads(&lab, t), *after = NULL;
		g_autofree char *shown = pk_url_redact(t->tree.url);
		double t0 = pk_now();

		if (pk_bases_fetch_tree(&lab, &t->tree, &err) < 0) {
			daemon_log(0, NULL, "tree %s: %s", t->tree.name, err->message);
			g_clear_error(&err);
		} else {
			/* only what moved is news: a fetch every fetch_interval would fill the log */
			if (strcmp(before, (after = tree_heads(&lab, t))))
				daemon_log(0, NULL, "tree %s fetched from %s in %.1f s: %s", t->tree.name, shown,
					   pk_now() - t0, after);
			/* each watched branch against the tip the store saw: a push is a job */
			daemon_watch_tree(d, &lab, t);
		}
	}
	pk_lab_clear(&lab);
}
