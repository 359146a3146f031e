/*
 * metrics.c - the figures the daemon and each worker write for
 * monitoring: a file of Prometheus' text format (base/prom.h) in
 * [daemon] metrics_dir, which node_exporter's textfile collector serves
 * to Prometheus (doc/monitoring.md).
 *
 * One file per process, so that no two processes write one series:
 *   printkbot-daemon.prom       the intake (one per store): the store's
 *                               figures (the queue, mail to review and to
 *                               reply, builds, boots), the sources' last
 *                               successful read and reads, and, in a plain
 *                               daemon, its worker's figures;
 *   printkbot-worker-PID.prom   a `printkbot worker`: the jobs it ran and
 *                               the one it runs.
 * The file is replaced whole after every turn of the loop (the loop
 * calls daemon_metrics_write()), when a job starts, and at least every
 * metrics_interval seconds: the loop wakes for it, and during a job the
 * heartbeat thread (worker.c) writes it with its own store connection.
 * Hence the lock: both threads record and write.  A daemon stopped by a
 * signal removes its file (a stopped process exports nothing); one that
 * ends with --once leaves it, for the collector to serve until the next
 * run.  The files of workers of this machine whose process is gone are
 * removed when a process starts writing in the dir.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "intake/intake.h"
#include "base/prom.h"
#include "base/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* How a job this worker ran ended, as the figures name it. */
static const char *const end_names[] = {
	[JOB_DONE] = "done",
	[JOB_FAILED] = "failed",
	[JOB_INTERRUPTED] = "interrupted",
	[JOB_RETRY] = "retry",
};
#define END_REFUSED G_N_ELEMENTS(end_names)   /* the lease was lost: the end was refused */
#define END_COUNT (END_REFUSED + 1)

/* A source the intake reads, as the figures show it (a copy: the heartbeat thread reads it). */
struct source_figures {
	gint64 id;                /* its row in the store */
	char *name, *type;
	gint64 failures;          /* reads that failed, since the process started */
	gint64 mails;             /* mails handed over, since the process started */
};

struct daemon_metrics {
	GMutex lock;              /* every field: the loop and the heartbeat both record and write */
	bool intake;              /* the store's figures and the sources' */
	bool worker;              /* this process runs jobs */
	char *worker_name;        /* "host:pid", the figures' worker label */
	char *dir;                /* [daemon] metrics_dir, NULL: nothing written */
	char *written;            /* the file written last: removed when dir changes */
	double interval;          /* [daemon] metrics_interval */
	double next;              /* pk_now() when the file is due again */
	bool failing;             /* the last write failed (logged once until one succeeds) */
	GPtrArray *sources;       /* struct source_figures* */
	gint64 ran[PK_JOB_KINDS][END_COUNT];  /* jobs ended since the process started */
	gint64 busy_since;        /* Unix time the running job started, 0 between jobs */
	gint64 last_end;          /* Unix time the last job ended, 0 before the first */
};

/* Histogram bounds, seconds. */
static const double mail_bounds[] = { 60, 300, 600, 1200, 1800, 3600, 7200, 14400, 43200, 86400 };
static const double build_bounds[] = { 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200 };
static const double boot_bounds[] = { 1, 2, 5, 10, 20, 30, 60, 120, 300 };

/* The store's histograms, one family each. */
static const struct histogram_family {
	const char *name;
	enum pk_store_measure measure;
	const char *group_label;  /* the label of a group (a status), or NULL */
	const double *bounds;
	guint n;
	const char *help;
} histograms[] = {
	{ "printkbot_mail_to_review_seconds", PK_MEASURE_MAIL_TO_REVIEW, NULL, mail_bounds,
	  G_N_ELEMENTS(mail_bounds), "Seconds from a patch mail read from a source to its review stored." },
	{ "printkbot_mail_to_reply_seconds", PK_MEASURE_MAIL_TO_REPLY, NULL, mail_bounds,
	  G_N_ELEMENTS(mail_bounds), "Seconds from a patch mail read from a source to its reply sent." },
	{ "printkbot_build_seconds", PK_MEASURE_BUILD, "status", build_bounds,
	  G_N_ELEMENTS(build_bounds), "Seconds of each kernel build in the store, by status." },
	{ "printkbot_boot_seconds", PK_MEASURE_BOOT, "status", boot_bounds,
	  G_N_ELEMENTS(boot_bounds), "Seconds of each QEMU boot in the store, by status." },
};

static void source_figures_free(struct source_figures *s)
{
	g_free(s->name);
	g_free(s->type);
	g_free(s);
}

void daemon_metrics_new(struct pk_daemon *d)
{
	struct daemon_metrics *m = g_new0(struct daemon_metrics, 1);

	g_mutex_init(&m->lock);
	m->intake = !d->opts->worker;
	m->worker = !d->opts->queue_only;
	m->sources = g_ptr_array_new_with_free_func((GDestroyNotify)source_figures_free);
	d->metrics = m;
}

void daemon_metrics_free(struct pk_daemon *d)
{
	struct daemon_metrics *m = d->metrics;

	if (!m)
		return;
	g_mutex_clear(&m->lock);
	g_free(m->worker_name);
	g_free(m->dir);
	g_free(m->written);
	g_ptr_array_unref(m->sources);
	g_free(m);
	d->metrics = NULL;
}

/* This process's file in dir (new). */
static char *metrics_file(const struct daemon_metrics *m, const char *dir)
{
	g_autofree char *name = m->intake ? g_strdup("printkbot-daemon.prom")
				: g_strdup_printf("printkbot-worker-%d.prom", (int)getpid());

	return g_build_filename(dir, name, NULL);
}

/*
 * The files of workers of this machine whose process is gone (a crash,
 * kill -9) would be served for ever: removed.  A worker's pid is in its
 * file's name; metrics_dir is a directory of one machine, as the node
 * exporter reading it is.
 */
static void remove_gone_workers(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		char *end = NULL;
		gint64 pid;

		if (!g_str_has_prefix(name, "printkbot-worker-") || !g_str_has_suffix(name, ".prom"))
			continue;
		pid = g_ascii_strtoll(name + strlen("printkbot-worker-"), &end, 10);
		if (!end || strcmp(end, ".prom") || pid <= 0 || pid > G_MAXINT || pid == getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		g_autofree char *path = g_build_filename(dir, name, NULL);
		if (unlink(path) == 0)
			daemon_log(0, NULL, "metrics: %s removed: its worker (pid %" G_GINT64_FORMAT ") is gone",
				   path, pid);
	}
}

/* The counts of a source called name before the configuration was loaded again, or NULL. */
static struct source_figures *source_before(GPtrArray *old, const char *name)
{
	for (guint i = 0; i < old->len; i++) {
		struct source_figures *s = old->pdata[i];

		if (!strcmp(s->name, name))
			return s;
	}
	return NULL;
}

void daemon_metrics_configure(struct pk_daemon *d)
{
	struct daemon_metrics *m = d->metrics;
	const char *dir = d->config.daemon.metrics_dir;
	g_autoptr(GPtrArray) old = NULL;
	bool moved;

	g_mutex_lock(&m->lock);
	moved = g_strcmp0(dir, m->dir) != 0;
	if (moved && m->written) {
		unlink(m->written);   /* figures where nobody looks any more */
		g_clear_pointer(&m->written, g_free);
	}
	g_free(m->dir);
	m->dir = g_strdup(dir);
	m->interval = d->config.daemon.metrics_interval;
	m->next = 0;
	g_free(m->worker_name);
	m->worker_name = g_strdup(d->worker_name);
	old = g_steal_pointer(&m->sources);
	m->sources = g_ptr_array_new_with_free_func((GDestroyNotify)source_figures_free);
	for (guint i = 0; d->sources && i < d->sources->len; i++) {
		const struct pk_intake *in = d->sources->pdata[i];
		struct source_figures *s = g_new0(struct source_figures, 1);
		struct source_figures *was = source_before(old, in->ctx.cfg->name);

		s->id = in->ctx.source_id;
		s->name = g_strdup(in->ctx.cfg->name);
		s->type = g_strdup(in->ctx.cfg->type);
		s->failures = was ? was->failures : 0;
		s->mails = was ? was->mails : 0;
		g_ptr_array_add(m->sources, s);
	}
	g_mutex_unlock(&m->lock);
	if (moved && dir)
		remove_gone_workers(dir);
}

void daemon_metrics_source_read(struct pk_daemon *d, const struct pk_intake *in, bool ok,
				unsigned mails)
{
	struct daemon_metrics *m = d->metrics;

	g_mutex_lock(&m->lock);
	for (guint i = 0; i < m->sources->len; i++) {
		struct source_figures *s = m->sources->pdata[i];

		if (s->id == in->ctx.source_id) {
			s->failures += !ok;
			s->mails += mails;
		}
	}
	g_mutex_unlock(&m->lock);
}

void daemon_metrics_job_start(struct pk_daemon *d)
{
	g_mutex_lock(&d->metrics->lock);
	d->metrics->busy_since = daemon_now();
	g_mutex_unlock(&d->metrics->lock);
}

void daemon_metrics_job_end(struct pk_daemon *d, enum pk_job_kind kind, enum job_end end,
			    bool refused)
{
	struct daemon_metrics *m = d->metrics;

	g_mutex_lock(&m->lock);
	if ((unsigned)kind < PK_JOB_KINDS && (unsigned)end < G_N_ELEMENTS(end_names))
		m->ran[kind][refused ? END_REFUSED : end]++;
	m->busy_since = 0;
	m->last_end = daemon_now();
	g_mutex_unlock(&m->lock);
}

/* ---- the text ------------------------------------------------------------- */

/* The queue: every kind and state (zeros too, so a query finds 0 rather than nothing). */
static int queue_text(struct pk_prom *p, struct pk_store *store, gint64 now, GError **err)
{
	struct pk_store_queue_figures q;

	if (pk_store_queue_figures(store, &q, err) < 0)
		return -1;
	pk_prom_family(p, "printkbot_jobs", "gauge", "Jobs in the store's queue, by kind and state.");
	for (int k = PK_JOB_UNKNOWN; k < PK_JOB_KINDS; k++)
		for (int s = 0; s < PK_JOB_STATES; s++) {
			/* a kind this printkbot does not know only when there is one */
			if (k == PK_JOB_UNKNOWN && !q.jobs[k][s])
				continue;
			pk_prom_sample(p, (const char *const[]){ "kind", pk_job_kind_name(k), "state",
				       pk_job_state_name(s), NULL }, (double)q.jobs[k][s]);
		}
	pk_prom_family(p, "printkbot_oldest_queued_job_age_seconds", "gauge",
		       "Seconds since the oldest job still queued was queued; 0 when none is.");
	pk_prom_sample(p, NULL, q.oldest_queued ? (double)MAX(now - q.oldest_queued, 0) : 0);
	return 0;
}

static int histograms_text(struct pk_prom *p, struct pk_store *store, GError **err)
{
	for (size_t i = 0; i < G_N_ELEMENTS(histograms); i++) {
		const struct histogram_family *f = &histograms[i];
		g_autoptr(GPtrArray) hs = NULL;

		if (pk_store_histogram(store, f->measure, f->bounds, f->n, &hs, err) < 0)
			return -1;
		pk_prom_family(p, f->name, "histogram", f->help);
		for (guint j = 0; j < hs->len; j++) {
			const struct pk_store_histogram *h = hs->pdata[j];
			const char *labels[] = { f->group_label, h->group, NULL };

			pk_prom_histogram(p, f->group_label && h->group ? labels : NULL, f->bounds, h->le,
					  f->n, h->count, h->sum);
		}
	}
	return 0;
}

/* The store's last read of the source with id, 0 when never. */
static gint64 last_read(GPtrArray *rows, gint64 id)
{
	for (guint i = 0; i < rows->len; i++) {
		const struct pk_store_source *r = rows->pdata[i];

		if (r->id == id)
			return r->last_read;
	}
	return 0;
}

static int sources_text(struct pk_prom *p, const struct daemon_metrics *m, struct pk_store *store,
			GError **err)
{
	g_autoptr(GPtrArray) rows = NULL;

	if (pk_store_sources(store, &rows, err) < 0)
		return -1;
	pk_prom_family(p, "printkbot_source_last_read_timestamp_seconds", "gauge",
		       "Unix time of the source's last read to its end; 0 when never.");
	for (guint i = 0; i < m->sources->len; i++) {
		const struct source_figures *s = m->sources->pdata[i];

		pk_prom_sample(p, (const char *const[]){ "source", s->name, "type", s->type, NULL },
			       (double)last_read(rows, s->id));
	}
	pk_prom_family(p, "printkbot_source_read_failures_total", "counter",
		       "Reads of the source that failed, since the daemon started.");
	for (guint i = 0; i < m->sources->len; i++) {
		const struct source_figures *s = m->sources->pdata[i];

		pk_prom_sample(p, (const char *const[]){ "source", s->name, "type", s->type, NULL },
			       (double)s->failures);
	}
	pk_prom_family(p, "printkbot_source_mails_total", "counter",
		       "Mails the source handed over, since the daemon started.");
	for (guint i = 0; i < m->sources->len; i++) {
		const struct source_figures *s = m->sources->pdata[i];

		pk_prom_sample(p, (const char *const[]){ "source", s->name, "type", s->type, NULL },
			       (double)s->mails);
	}
	return 0;
}

static void worker_text(struct pk_prom *p, const struct daemon_metrics *m)
{
	const char *who = m->worker_name ? m->worker_name : "";
	const char *const label[] = { "worker", who, NULL };

	pk_prom_family(p, "printkbot_worker_jobs_total", "counter",
		       "Jobs this worker ran, by kind and how each ended, since it started.");
	for (int k = PK_JOB_SERIES; k < PK_JOB_KINDS; k++)
		for (unsigned e = 0; e < END_COUNT; e++)
			pk_prom_sample(p, (const char *const[]){ "worker", who, "kind", pk_job_kind_name(k),
				       "end", e == END_REFUSED ? "refused" : end_names[e], NULL },
				       (double)m->ran[k][e]);
	pk_prom_family(p, "printkbot_worker_busy", "gauge", "1 while this worker runs a job, else 0.");
	pk_prom_sample(p, label, m->busy_since ? 1 : 0);
	if (m->busy_since) {
		pk_prom_family(p, "printkbot_worker_job_started_timestamp_seconds", "gauge",
			       "Unix time the job this worker runs started.");
		pk_prom_sample(p, label, (double)m->busy_since);
	}
	if (m->last_end) {
		pk_prom_family(p, "printkbot_worker_last_job_end_timestamp_seconds", "gauge",
			       "Unix time this worker's last job ended.");
		pk_prom_sample(p, label, (double)m->last_end);
	}
}

/* What became of each tested patch's mail, by list and rule: mailed, or held (the bot's limit, a brake...). */
static int replies_text(struct pk_prom *p, struct pk_store *store, GError **err)
{
	g_autoptr(GPtrArray) rows = NULL;

	if (pk_store_reply_figures(store, &rows, err) < 0)
		return -1;
	pk_prom_family(p, "printkbot_replies", "gauge", "Tested patches and pushed commits by the list whose policy "
		       "decided their mail, the rule that held, and whether it was mailed or held.");
	for (guint i = 0; i < rows->len; i++) {
		const struct pk_store_reply_figure *f = rows->pdata[i];

		pk_prom_sample(p, (const char *const[]){ "list", f->list, "rule", f->rule, "outcome",
			       f->mailed ? "mailed" : "held", NULL }, (double)f->count);
	}
	return 0;
}

/* The whole text of this process's file. */
static int metrics_text(struct pk_prom *p, const struct daemon_metrics *m, struct pk_store *store,
			GError **err)
{
	if (m->intake && (queue_text(p, store, daemon_now(), err) < 0 ||
			  histograms_text(p, store, err) < 0 || sources_text(p, m, store, err) < 0 ||
			  replies_text(p, store, err) < 0))
		return -1;
	if (m->worker)
		worker_text(p, m);
	return 0;
}

/* ---- the file ------------------------------------------------------------- */

/* Write the file now, m locked; a failure is logged once, until a write succeeds again. */
static void write_locked(struct daemon_metrics *m, struct pk_store *store)
{
	g_autoptr(pk_prom) p = pk_prom_new();
	g_autoptr(GError) err = NULL;
	g_autofree char *path = NULL;

	if (!m->dir)
		return;
	path = metrics_file(m, m->dir);
	m->next = pk_now() + m->interval;
	if (metrics_text(p, m, store, &err) < 0 || pk_prom_write(p, path, &err) < 0) {
		if (!m->failing)
			daemon_log(0, NULL, "metrics: %s not written: %s (said once until it is again)", path,
				   err->message);
		m->failing = true;
		return;
	}
	if (m->failing)
		daemon_log(0, NULL, "metrics: %s written again", path);
	m->failing = false;
	g_free(m->written);
	m->written = g_steal_pointer(&path);
}

void daemon_metrics_write(struct pk_daemon *d)
{
	g_mutex_lock(&d->metrics->lock);
	write_locked(d->metrics, d->store);
	g_mutex_unlock(&d->metrics->lock);
}

void daemon_metrics_refresh(struct daemon_metrics *m, struct pk_store *store)
{
	g_mutex_lock(&m->lock);
	if (m->dir && pk_now() >= m->next)
		write_locked(m, store);
	g_mutex_unlock(&m->lock);
}

double daemon_metrics_wait(struct daemon_metrics *m)
{
	double wait;

	g_mutex_lock(&m->lock);
	wait = m->dir ? MAX(m->next - pk_now(), 0) : -1;
	g_mutex_unlock(&m->lock);
	return wait;
}

void daemon_metrics_remove(struct pk_daemon *d)
{
	struct daemon_metrics *m = d->metrics;

	g_mutex_lock(&m->lock);
	if (m->written && unlink(m->written) == 0)
		daemon_log(0, NULL, "metrics: %s removed", m->written);
	g_clear_pointer(&m->written, g_free);
	/* nothing more: a late write of the heartbeat would bring the file back */
	g_clear_pointer(&m->dir, g_free);
	g_mutex_unlock(&m->lock);
}
