/*
 * worker.c - the daemon as a worker of the queue: who it is for the
 * store's leases (its name, its machine, its process), the jobs a gone
 * worker of this machine left running, and the heartbeat that renews the
 * lease of the job it runs.  The heartbeat is a thread with a store
 * connection of its own: a build or a boot holds the loop for minutes,
 * and the lease must outlive it only while this process lives.  See
 * daemon.h.
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "base/util.h"

#include <string.h>
#include <unistd.h>

/* What the heartbeat thread and the loop share; lock guards job and quit. */
struct daemon_heartbeat {
	GThread *thread;
	GMutex lock;
	GCond cond;
	struct pk_store *store;         /* the thread's own connection */
	struct daemon_metrics *metrics; /* the daemon's: written from here while a job runs */
	struct pk_store_worker worker;  /* the daemon's, strings borrowed from it */
	gint64 every_us;                /* a renewal this often: a third of the lease */
	gint64 job;                     /* the job held, 0 between jobs */
	bool quit;
	gint lost;                      /* atomic: the lease of job was lost */
};

/*
 * The machine a process table belongs to: the kernel's boot id and this
 * process's pid namespace, so that "no process pid" is asked only where
 * pid means the same process (not after a reboot, not across containers).
 */
static char *machine_id(void)
{
	g_autofree char *boot = NULL, *ns = g_file_read_link("/proc/self/ns/pid", NULL);

	if (!g_file_get_contents("/proc/sys/kernel/random/boot_id", &boot, NULL, NULL))
		boot = g_strdup(g_get_host_name());
	g_strstrip(boot);
	return g_strdup_printf("%s/%s", boot, ns ? ns : "pid");
}

/* Renew the held job's lease: a lost one is flagged and logged.  h locked. */
static void heartbeat_renew(struct daemon_heartbeat *h, gint64 job)
{
	g_autoptr(GError) err = NULL;
	int rc;

	g_mutex_unlock(&h->lock);
	rc = pk_store_job_renew(h->store, job, &h->worker, &err);
	/* a worker busy with a long series is still about for the jobs its labs can run */
	if (rc >= 0 && pk_store_worker_advertise(h->store, &h->worker, &err) < 0)
		daemon_log(job, NULL, "the worker's architectures are not written now: %s", err->message);
	g_mutex_lock(&h->lock);
	if (rc < 0)
		daemon_log(job, NULL, "the lease is not renewed now: %s", err->message);
	if (rc == 0 && h->job == job) {
		g_atomic_int_set(&h->lost, 1);
		daemon_log(job, NULL, "the lease was lost: another worker may run this job; "
			   "its result here will be refused");
	}
}

/*
 * Renew the held job's lease every every_us until quit.  While a job
 * runs, the loop is in its build or boot: the figures for monitoring are
 * written from here when they are due.
 */
static gpointer heartbeat_main(gpointer data)
{
	struct daemon_heartbeat *h = data;
	gint64 renew_at = g_get_monotonic_time() + h->every_us;

	g_mutex_lock(&h->lock);
	while (!h->quit) {
		double metrics = h->job ? daemon_metrics_wait(h->metrics) : -1;
		gint64 until = renew_at, job;

		if (metrics >= 0)
			until = MIN(until, g_get_monotonic_time() + (gint64)(metrics * G_USEC_PER_SEC) + 1);
		if (g_cond_wait_until(&h->cond, &h->lock, until)) {
			/* woken early (a new job, quit): start the period again */
			renew_at = g_get_monotonic_time() + h->every_us;
			continue;
		}
		if (!(job = h->job)) {
			renew_at = g_get_monotonic_time() + h->every_us;
			continue;
		}
		if (g_get_monotonic_time() >= renew_at) {
			renew_at = g_get_monotonic_time() + h->every_us;
			if (!g_atomic_int_get(&h->lost))
				heartbeat_renew(h, job);
		}
		if (h->job) {
			g_mutex_unlock(&h->lock);
			daemon_metrics_refresh(h->metrics, h->store);
			g_mutex_lock(&h->lock);
		}
	}
	g_mutex_unlock(&h->lock);
	return NULL;
}

/* Jobs a worker of this machine left running when it died are queued again at once. */
static int recover_jobs(struct pk_daemon *d, GError **err)
{
	g_autoptr(GArray) requeued = NULL;

	if (pk_store_jobs_requeue_gone(d->store, &d->worker, "requeued: the daemon stopped while it ran",
				       &requeued, err) < 0)
		return -1;
	for (guint i = 0; i < requeued->len; i++)
		daemon_log(g_array_index(requeued, gint64, i), NULL,
			   "was running when the daemon stopped: queued again");
	return 0;
}

int daemon_worker_start(struct pk_daemon *d, GError **err)
{
	struct daemon_heartbeat *h;

	d->worker_name = g_strdup_printf("%s:%d", g_get_host_name(), (int)getpid());
	d->worker_machine = machine_id();
	/* the labs set up when it starts: `setup --arch` later needs a restart to count */
	d->worker_arches = pk_lab_ready_arches();
	d->worker = (struct pk_store_worker){ d->worker_name, d->worker_machine, getpid(),
					      MAX((gint64)d->config.daemon.lease, 1), d->worker_arches };
	if (recover_jobs(d, err) < 0 || pk_store_worker_advertise(d->store, &d->worker, err) < 0)
		return -1;
	daemon_log(0, NULL, "worker %s: its lab has %s", d->worker_name,
		   d->worker_arches ? d->worker_arches : "no architecture set up");
	h = g_new0(struct daemon_heartbeat, 1);
	g_mutex_init(&h->lock);
	g_cond_init(&h->cond);
	h->worker = d->worker;
	h->metrics = d->metrics;
	h->every_us = (gint64)(d->config.daemon.lease * G_USEC_PER_SEC / 3);
	if (pk_store_open(&h->store, pk_store_path(d->store), err) < 0) {
		g_mutex_clear(&h->lock);
		g_cond_clear(&h->cond);
		g_free(h);
		return -1;
	}
	h->thread = g_thread_new("lease", heartbeat_main, h);
	d->heartbeat = h;
	return 0;
}

void daemon_worker_stop(struct pk_daemon *d)
{
	struct daemon_heartbeat *h = d->heartbeat;

	if (h) {
		g_mutex_lock(&h->lock);
		h->quit = true;
		g_cond_signal(&h->cond);
		g_mutex_unlock(&h->lock);
		g_thread_join(h->thread);
		pk_store_close(h->store);
		g_mutex_clear(&h->lock);
		g_cond_clear(&h->cond);
		g_free(h);
		d->heartbeat = NULL;
	}
	g_clear_pointer(&d->worker_name, g_free);
	g_clear_pointer(&d->worker_machine, g_free);
	g_clear_pointer(&d->worker_arches, g_free);
}

/* Renew job_id's lease from now on (0: none, between jobs). */
static void heartbeat_set(struct pk_daemon *d, gint64 job_id)
{
	struct daemon_heartbeat *h = d->heartbeat;

	g_mutex_lock(&h->lock);
	h->job = job_id;
	g_atomic_int_set(&h->lost, 0);
	g_cond_signal(&h->cond);
	g_mutex_unlock(&h->lock);
}

void daemon_lease_hold(struct pk_daemon *d, gint64 job_id)
{
	heartbeat_set(d, job_id);
}

void daemon_lease_release(struct pk_daemon *d)
{
	heartbeat_set(d, 0);
}

bool daemon_lease_lost(struct pk_daemon *d)
{
	return d->heartbeat && g_atomic_int_get(&d->heartbeat->lost);
}

int daemon_lease_check(struct pk_daemon *d, gint64 job_id, GError **err)
{
	int rc = pk_store_job_renew(d->store, job_id, &d->worker, err);

	if (rc == 0)
		return pk_error(err, PK_ERROR_FAILED, "job %" G_GINT64_FORMAT ": the lease was lost "
				"(another worker runs it): nothing of it is stored here", job_id);
	return rc < 0 ? -1 : 0;
}
