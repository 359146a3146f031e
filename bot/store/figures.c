/*
 * figures.c - the store's figures for monitoring: the queue by kind and
 * state, and histograms of the seconds the store already records (mail to
 * review, mail to reply, builds, boots).  Reads only; no table of its own.
 * See store.h for the contracts.
 */
#include "store/private.h"

#include <string.h>

int pk_store_queue_figures(struct pk_store *store, struct pk_store_queue_figures *out,
			   GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT kind, state, count(*) FROM jobs "
					  "GROUP BY kind, state", err);
	g_autoptr(store_stmt) oldest = NULL;
	struct pk_store_queue_figures f = { 0 };
	int rc;

	if (!st)
		return -1;
	while ((rc = step(store, st, err)) > 0) {
		enum pk_job_kind kind = PK_JOB_UNKNOWN;
		enum pk_job_state state;

		pk_job_kind_parse(col_str(st, 0), &kind);
		if (pk_job_state_parse(col_str(st, 1), &state))   /* the table's CHECK allows no other */
			f.jobs[kind][state] += col_int(st, 2);
	}
	if (rc < 0 || !(oldest = prep(store, "SELECT min(created) FROM jobs WHERE state = 'queued'", err)) ||
	    step(store, oldest, err) < 0)
		return -1;
	f.oldest_queued = col_int(oldest, 0);
	*out = f;
	return 0;
}

void pk_store_reply_figure_free(struct pk_store_reply_figure *f)
{
	if (!f)
		return;
	g_free(f->list);
	g_free(f->rule);
	g_free(f);
}

int pk_store_reply_figures(struct pk_store *store, GPtrArray **out, GError **err)
{
	/* a row without a rule is a reply of before 011, or a command's answer: counted as none */
	g_autoptr(store_stmt) st = prep(store, "SELECT coalesce(list_name, ''), coalesce(rule, ''), "
					"CASE WHEN text IS NOT NULL AND held IS NULL THEN 1 ELSE 0 END, count(*) FROM replies "
					"GROUP BY 1, 2, 3 ORDER BY 1, 2, 3", err);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_reply_figure_free);
	int rc;

	if (!st)
		return -1;
	while ((rc = step(store, st, err)) > 0) {
		struct pk_store_reply_figure *f = g_new0(struct pk_store_reply_figure, 1);

		f->list = g_strdup(col_str(st, 0));
		f->rule = g_strdup(col_str(st, 1));
		f->mailed = col_int(st, 2) != 0;
		f->count = col_int(st, 3);
		g_ptr_array_add(rows, f);
	}
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}

void pk_store_histogram_free(struct pk_store_histogram *h)
{
	if (!h)
		return;
	g_free(h->group);
	g_free(h->le);
	g_free(h);
}

/* A measure: SQL fragments, constant; the bounds are bound. */
static const struct measure {
	const char *value;   /* a row's seconds */
	const char *group;   /* what a row is grouped by, or NULL: one histogram */
	const char *from;    /* the rows measured: FROM and WHERE */
} measures[] = {
	[PK_MEASURE_MAIL_TO_REVIEW] = {
		"v.created - m.received", NULL,
		"replies r JOIN mails m ON m.id = r.mail_id JOIN reviews v ON v.id = r.review_id",
	},
	[PK_MEASURE_MAIL_TO_REPLY] = {
		"r.sent - m.received", NULL,
		"replies r JOIN mails m ON m.id = r.mail_id WHERE r.sent IS NOT NULL",
	},
	[PK_MEASURE_BUILD] = { "COALESCE(seconds, 0)", "status", "builds" },
	[PK_MEASURE_BOOT] = { "COALESCE(seconds, 0)", "status", "boots" },
};

#define HISTOGRAM_MAX_BOUNDS 32

/*
 * SELECT group, count, sum, then one count per bound: ?i is bound i.  A
 * bound is bound as a real, which both engines compare with an integer
 * difference of times.
 */
static char *histogram_sql(const struct measure *m, guint n)
{
	GString *sql = g_string_new(NULL);

	g_string_append_printf(sql, "SELECT %s, count(*), sum(%s)", m->group ? m->group : "NULL", m->value);
	for (guint i = 0; i < n; i++)
		g_string_append_printf(sql, ", sum(CASE WHEN %s <= ?%u THEN 1 ELSE 0 END)", m->value, i + 1);
	g_string_append_printf(sql, " FROM %s", m->from);
	if (m->group)
		g_string_append_printf(sql, " GROUP BY %s ORDER BY %s", m->group, m->group);
	return g_string_free(sql, FALSE);
}

int pk_store_histogram(struct pk_store *store, enum pk_store_measure measure, const double *bounds,
		       guint n, GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_histogram_free);
	g_autoptr(store_stmt) st = NULL;
	g_autofree char *sql = NULL;
	const struct measure *m;
	int rc;

	if ((unsigned)measure >= G_N_ELEMENTS(measures))
		return pk_error(err, PK_ERROR_INPUT, "unknown measure %d", (int)measure);
	if (n > HISTOGRAM_MAX_BOUNDS)
		return pk_error(err, PK_ERROR_INPUT, "a histogram of %u bounds: %d at most", n,
				HISTOGRAM_MAX_BOUNDS);
	m = &measures[measure];
	sql = histogram_sql(m, n);
	if (!(st = prep(store, sql, err)))
		return -1;
	for (guint i = 0; i < n; i++)
		bind_double(st, (int)i + 1, bounds[i]);
	while ((rc = step(store, st, err)) > 0) {
		struct pk_store_histogram *h = g_new0(struct pk_store_histogram, 1);

		h->group = col_text(st, 0);
		h->count = col_int(st, 1);
		h->sum = col_double(st, 2);
		h->le = g_new0(gint64, MAX(n, 1));
		for (guint i = 0; i < n; i++)
			h->le[i] = col_int(st, 3 + (int)i);
		g_ptr_array_add(rows, h);
	}
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}
