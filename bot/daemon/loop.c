/*
 * loop.c - the daemon's loop: start (configuration, store, lock, outbox,
 * sources), then read the sources, assemble series and run due jobs
 * until a signal or, with once, until nothing is due; SIGHUP reloads the
 * configuration.  See daemon.h.
 */
#define _GNU_SOURCE
#include "daemon/private.h"
#include "daemon/log.h"
#include "intake/intake.h"
#include "lab/lab.h"
#include "lab/sandbox.h"
#include "pipeline/monitor.h"
#include "report/outbox.h"
#include "base/proc.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- jobs ---------------------------------------------------------------- */

/* A job's payload as a JSON object (owned by p), or NULL: none, or not an object. */
static JsonObject *parse_payload(JsonParser *p, const char *payload)
{
	JsonNode *root;

	if (!payload || !json_parser_load_from_data(p, payload, -1, NULL))
		return NULL;
	root = json_parser_get_root(p);
	return root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
}

/* The store's state for a job's end (JOB_RETRY and JOB_INTERRUPTED: queued again). */
static enum pk_job_state end_state(enum job_end end)
{
	return end == JOB_DONE ? PK_JOB_DONE : end == JOB_FAILED ? PK_JOB_FAILED : PK_JOB_QUEUED;
}

/*
 * Write how a job ended to the store (retry: when a JOB_RETRY runs again),
 * while this worker still holds it: a result that comes after the lease
 * (another worker has the job now) is refused and logged.  Counted in
 * the worker's figures either way.  1, or -1.
 */
static int job_finish(struct pk_daemon *d, const struct pk_store_job *job, enum job_end end,
		      const char *detail, gint64 retry, GError **err)
{
	const char *what = end == JOB_INTERRUPTED ? "interrupted by a signal" : detail;
	gint64 id = job->id;
	int rc;

	rc = pk_store_job_end(d->store, id, &d->worker, end_state(end), what,
			      end == JOB_RETRY ? retry : 0, daemon_now(), err);
	/* an end not written (the store failed) is not counted, but the worker is no longer busy */
	daemon_metrics_job_end(d, rc < 0 ? PK_JOB_ANY_KIND : job->kind, end, rc == 0);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		daemon_log(id, NULL, "the lease was lost: this result is refused (%s: %s)",
			   end == JOB_DONE ? "done" : end == JOB_FAILED ? "failed" : "queued again", what);
		return 1;
	}
	switch (end) {
	case JOB_DONE:
		daemon_log(id, NULL, "done: %s", detail);
		break;
	case JOB_FAILED:
		daemon_log(id, NULL, "failed: %s", detail);
		break;
	case JOB_RETRY:
		daemon_log(id, NULL, "%s", detail);
		break;
	case JOB_INTERRUPTED:
		daemon_log(id, NULL, "interrupted by a signal: back in the queue");
		break;
	}
	return 1;
}

/* Whether this worker's lab can test a series ([test] arch's): 0, or -1 with err saying what is missing. */
static int lab_usable(const struct pk_arch *arch, GError **err)
{
	struct pk_lab lab = { .lock_fd = -1 };
	int rc;

	if (pk_lab_open(&lab, err) < 0)
		return -1;
	rc = arch ? pk_lab_set_arch(&lab, arch, err) : 0;
	if (rc == 0)
		rc = pk_lab_check(&lab, err);
	pk_lab_clear(&lab);
	return rc;
}

/*
 * Without a lab, a worker sends replies (they need none) but claims no
 * series, push or command: it would fail each at once, for good, and empty the
 * queue of the workers that can test.  When one is due, it stops with
 * the reason and leaves it queued.  0 (*out_wait: seconds until one is
 * due, -1 none queued), or -1 with err.
 */
static int claim_no_series(struct pk_daemon *d, const GError *why, gint64 *out_wait, GError **err)
{
	static const enum pk_job_kind testing[] = { PK_JOB_SERIES, PK_JOB_PUSH, PK_JOB_COMMAND };

	*out_wait = -1;
	for (size_t i = 0; i < G_N_ELEMENTS(testing); i++) {
		g_autoptr(pk_store_job) due = NULL;
		gint64 wait = -1;
		int rc = pk_store_job_next_due(d->store, testing[i], daemon_now(), &due, &wait, err);

		if (rc < 0)
			return -1;
		if (rc > 0)
			return pk_error(err, PK_ERROR_FAILED, "%s job %" G_GINT64_FORMAT " is due and this worker "
					"cannot test it: the kernel lab is not set up (%s): run 'printkbot setup'; "
					"the job stays queued for a worker that can", pk_job_kind_name(testing[i]),
					due->id, why->message);
		if (wait >= 0)
			*out_wait = *out_wait < 0 ? wait : MIN(*out_wait, wait);
	}
	return 0;
}

/*
 * Claim the next due job (replies first: they are quick and people wait
 * for them), after the jobs whose lease ended went back to the queue.
 * A series only when the lab can test it (claim_no_series()).
 * 1 claimed, 0 none (*out_wait: seconds until one may be, -1 never).
 */
static int claim_next(struct pk_daemon *d, struct pk_store_job **out, gint64 *out_wait, GError **err)
{
	g_autoptr(GArray) expired = NULL;
	g_autoptr(GError) no_lab = NULL;
	gint64 wait_reply = -1, wait_any = -1;
	int rc;

	if (pk_store_jobs_requeue_expired(d->store, &expired, err) < 0)
		return -1;
	for (guint i = 0; i < expired->len; i++)
		daemon_log(g_array_index(expired, gint64, i), NULL,
			   "its worker's lease ended: queued again");
	/* said before each claim: the workers about, and what their labs have (a job may need one) */
	if (pk_store_worker_advertise(d->store, &d->worker, err) < 0)
		return -1;
	rc = pk_store_job_claim(d->store, &d->worker, PK_JOB_REPLY, daemon_now(), out, &wait_reply, err);
	if (rc == 0 && lab_usable(d->config.test.arch, &no_lab) < 0)
		rc = claim_no_series(d, no_lab, &wait_any, err);
	else if (rc == 0)
		rc = pk_store_job_claim(d->store, &d->worker, PK_JOB_ANY_KIND, daemon_now(), out,
					&wait_any, err);
	if (rc == 0)
		*out_wait = wait_reply < 0 ? wait_any : wait_any < 0 ? wait_reply : MIN(wait_reply, wait_any);
	return rc;
}

/* Claim and run the next due job, its lease renewed while it runs.  1 ran, 0 none. */
static int run_next_job(struct pk_daemon *d, gint64 *out_wait, GError **err)
{
	g_autoptr(pk_store_job) job = NULL;
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autofree char *detail = NULL;
	gint64 retry = 0;
	JsonObject *payload;
	enum job_end end;
	gint64 kcidb_mark;
	int rc;

	if ((rc = claim_next(d, &job, out_wait, err)) <= 0)
		return rc;
	kcidb_mark = daemon_kcidb_mark(d);
	/* the figures say at once that this worker is busy: a build holds the loop for minutes */
	daemon_metrics_job_start(d);
	daemon_metrics_write(d);
	daemon_lease_hold(d, job->id);
	payload = parse_payload(parser, job->payload);
	switch (job->kind) {
	case PK_JOB_SERIES:
		end = daemon_run_series(d, job, payload, &detail, &retry);
		break;
	case PK_JOB_REPLY:
		end = daemon_run_reply(d, job, payload, &detail, &retry);
		break;
	case PK_JOB_PUSH:
		end = daemon_run_push(d, job, payload, &detail, &retry);
		break;
	case PK_JOB_COMMAND:
		end = daemon_run_command(d, job, payload, &detail, &retry);
		break;
	default:
		detail = g_strdup("unknown job kind (not series, reply, push or command)");
		end = JOB_FAILED;
		break;
	}
	daemon_lease_release(d);
	rc = job_finish(d, job, end, detail, retry, err);
	daemon_kcidb_post(d, job->id, kcidb_mark);
	return rc;
}

/* ---- start, reload, stop -------------------------------------------------- */

/*
 * One daemon per database: a lock named after the database file's device
 * and inode, in the bot's runtime dir (util.h's pk_runtime_dir(), which no
 * other user can write: a lock another user took first would stop the
 * daemon), so that the same store reached by another name (a symlink, a
 * hard link, a bind mount) is still one store.  Not a lock on the
 * database itself: closing any other descriptor of it would drop
 * SQLite's own POSIX locks.  The holder removes the file when it lets go
 * (daemon_unlock()), or every store a test or a scratch run opened would
 * leave one behind; so a lock is only taken on the file the name still
 * names: one taken on a file removed meanwhile is let go and taken again.
 */
static int daemon_lock(const char *db_path, char **out_path, GError **err)
{
	g_autofree char *dir = pk_runtime_dir(err);
	g_autofree char *path = NULL;
	struct stat st, held, named;
	int fd, tries;

	if (!dir)
		return -1;
	if (stat(db_path, &st) < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", db_path, g_strerror(errno));
	path = g_strdup_printf("%s/printkbot-store-%llx-%llx.lock", dir, (unsigned long long)st.st_dev,
			       (unsigned long long)st.st_ino);
	for (tries = 0; tries < 8; tries++) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return pk_error(err, PK_ERROR_FAILED, "%s: %s", path, g_strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			close(fd);
			return pk_error(err, PK_ERROR_FAILED, "another printkbot daemon uses %s (%s is locked)",
					db_path, path);
		}
		if (fstat(fd, &held) == 0 && lstat(path, &named) == 0 && held.st_dev == named.st_dev &&
		    held.st_ino == named.st_ino) {
			*out_path = g_steal_pointer(&path);
			return fd;
		}
		close(fd);   /* its holder removed it as we opened it: take the one the name names now */
	}
	return pk_error(err, PK_ERROR_FAILED, "%s: removed again each time it was locked", path);
}

/* Let the store's lock go, removing its file first (daemon_lock()). */
static void daemon_unlock(struct pk_daemon *d)
{
	if (d->lock_fd < 0)
		return;
	if (d->lock_path)
		unlink(d->lock_path);
	close(d->lock_fd);
	d->lock_fd = -1;
	g_clear_pointer(&d->lock_path, g_free);
}

/* One intake per store: the database's own lock, else a file lock for the SQLite file. */
static int intake_lock(struct pk_daemon *d, GError **err)
{
	int rc;

	if (d->lock_fd >= 0)
		return 0;   /* taken before the store was opened (file_lock_first()) */
	if ((rc = pk_store_intake_lock(d->store, err)) != 0)
		return rc < 0 ? -1 : 0;
	d->lock_fd = daemon_lock(pk_store_path(d->store), &d->lock_path, err);
	return d->lock_fd < 0 ? -1 : 0;
}

/*
 * A SQLite file that exists is locked before it is opened: opened by a
 * second name (a hard link), SQLite keeps a WAL of that name, and a
 * second daemon would then read and write the store beside the first.
 */
static int file_lock_first(struct pk_daemon *d, const char *where, GError **err)
{
	if (d->opts->worker || !where || g_str_has_prefix(where, "postgresql://") ||
	    g_str_has_prefix(where, "postgres://") || !g_file_test(where, G_FILE_TEST_EXISTS))
		return 0;
	d->lock_fd = daemon_lock(where, &d->lock_path, err);
	return d->lock_fd < 0 ? -1 : 0;
}

int pk_daemon_open(struct pk_daemon **out, const struct pk_daemon_opts *opts, GError **err)
{
	struct pk_daemon *d = g_new0(struct pk_daemon, 1);

	d->opts = opts;
	d->lock_fd = -1;
	if (pk_config_load(&d->config, opts->config_path, err) < 0) {
		g_free(d);
		return -1;
	}
	if (pk_config_check_daemon(&d->config, err) < 0 ||
	    (d->config.test.rules && pk_monitor_rules_load(&d->rules, d->config.test.rules, err) < 0)) {
		pk_config_clear(&d->config);
		g_free(d);
		return -1;
	}
	pk_sandbox_configure(&d->config.sandbox);
	daemon_metrics_new(d);
	/* a worker reads no source: it has an empty list, and no intake lock */
	d->sources = g_ptr_array_new();
	if (file_lock_first(d, opts->db ? opts->db : d->config.db, err) < 0 ||
	    pk_store_open(&d->store, opts->db ? opts->db : d->config.db, err) < 0 ||
	    (!opts->worker && intake_lock(d, err) < 0) ||
	    daemon_open_outbox(d, err) < 0 || daemon_reconcile_outbox(d, err) < 0 ||
	    (!opts->queue_only && daemon_worker_start(d, err) < 0) ||
	    (!opts->worker && daemon_open_sources(d, err) < 0)) {
		pk_daemon_close(d);
		return -1;
	}
	daemon_metrics_configure(d);
	*out = d;
	return 0;
}

void pk_daemon_close(struct pk_daemon *d)
{
	if (!d)
		return;
	daemon_close_sources(d);
	daemon_worker_stop(d);   /* before the metrics: the heartbeat writes them */
	daemon_metrics_free(d);
	pk_store_close(d->store);
	pk_outbox_free(d->outbox);
	daemon_unlock(d);
	pk_config_clear(&d->config);
	pk_rules_free(d->rules);
	pk_bases_refetch_clear(&d->refetch);
	g_free(d);
}

/* The new configuration failed: back to old (its sources opened again). */
static void reload_undo(struct pk_daemon *d, struct pk_config *old)
{
	g_autoptr(GError) err = NULL;

	daemon_close_sources(d);
	pk_config_clear(&d->config);
	d->config = *old;
	d->sources = g_ptr_array_new();
	if (!d->opts->worker && daemon_open_sources(d, &err) < 0)
		daemon_log(0, NULL, "and the old sources fail too: %s", err->message);
	daemon_metrics_configure(d);
}

/*
 * Whether config names another store than the one open: the store is
 * opened once (its lock, the jobs this process holds), so a changed
 * [store] waits for a restart.  --db fixes the store whatever the file says.
 */
static bool store_moved(const struct pk_daemon *d, const struct pk_config *config)
{
	g_autofree char *where = config->db ? g_strdup(config->db) : pk_store_default_path();

	return !d->opts->db && strcmp(where, pk_store_path(d->store)) != 0;
}

int pk_daemon_reload(struct pk_daemon *d)
{
	struct pk_config fresh = { 0 };
	struct pk_config old = d->config;
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_rules) rules = NULL;
	bool moved;

	if (pk_config_load(&fresh, d->opts->config_path, &err) < 0 ||
	    pk_config_check_daemon(&fresh, &err) < 0 ||
	    (fresh.test.rules && pk_monitor_rules_load(&rules, fresh.test.rules, &err) < 0)) {
		daemon_log(0, NULL, "SIGHUP: the configuration is not reloaded: %s", err->message);
		pk_config_clear(&fresh);
		return -1;
	}
	if ((moved = store_moved(d, &fresh))) {
		g_autofree char *where = fresh.db ? g_strdup(fresh.db) : pk_store_default_path();
		g_autofree char *shown = pk_url_redact(where);

		daemon_log(0, NULL, "SIGHUP: [store] now names %s: not applied, %s stays in use until "
			   "printkbot is restarted", shown, pk_store_name(d->store));
	}
	daemon_close_sources(d);
	d->config = fresh;
	d->sources = g_ptr_array_new();
	if (!d->opts->worker && daemon_open_sources(d, &err) < 0) {
		daemon_log(0, NULL, "SIGHUP: %s; the old configuration is kept", err->message);
		reload_undo(d, &old);
		return -1;
	}
	pk_config_clear(&old);
	pk_rules_free(d->rules);
	d->rules = g_steal_pointer(&rules);
	/* only now, the new configuration in force: a failure above kept the old limits too */
	pk_sandbox_configure(&d->config.sandbox);
	daemon_metrics_configure(d);
	if (daemon_open_outbox(d, &err) < 0 || daemon_reconcile_outbox(d, &err) < 0) {
		daemon_log(0, NULL, "SIGHUP: %s; the outbox %s is kept", err->message, d->outbox->dir);
		g_clear_error(&err);
	}
	daemon_log(0, NULL, "SIGHUP: configuration reloaded (%u source(s))%s", d->sources->len,
		   moved ? ", but for [store]: that needs a restart" : "");
	return 0;
}

/* ---- the loop ------------------------------------------------------------ */

/*
 * Fetch the sources that are due: all at first, then those whose watch
 * fired or poll time came.  A watched source (inotify) is looked at every
 * poll_interval too: its last successful read then says it can still be
 * read, for monitoring, and an event the kernel dropped is made up for.
 */
static void fetch_due(struct pk_daemon *d, bool first, double now)
{
	for (guint i = 0; i < d->sources->len; i++) {
		struct pk_intake *in = d->sources->pdata[i];
		int fd = in->ops->watch_fd(in->state);
		struct pollfd p = { fd, POLLIN, 0 };
		bool due = first || (!d->opts->once && now >= in->next_poll);

		if (!due && fd >= 0 && !d->opts->once && poll(&p, 1, 0) > 0)
			due = true;
		if (due)
			daemon_fetch_source(d, in);
	}
}

/* Nothing to do: sleep until mail, a signal, a poll or a job is due (waits: -1 for none). */
static void sleep_until_due(struct pk_daemon *d, int wake_rd, double now, double series_wait,
			    double job_wait)
{
	g_autoptr(GArray) fds = g_array_new(FALSE, TRUE, sizeof(struct pollfd));
	struct pollfd wake = { wake_rd, POLLIN, 0 };
	double timeout = -1;

	g_array_append_val(fds, wake);
	for (guint i = 0; i < d->sources->len; i++) {
		struct pk_intake *in = d->sources->pdata[i];
		int fd = in->ops->watch_fd(in->state);
		struct pollfd p = { fd, POLLIN, 0 };

		if (fd >= 0)
			g_array_append_val(fds, p);
		timeout = timeout < 0 ? in->next_poll - now : MIN(timeout, in->next_poll - now);
	}
	if (series_wait >= 0)
		timeout = timeout < 0 ? series_wait : MIN(timeout, series_wait);
	if (d->config.trees && d->config.trees->len)
		timeout = timeout < 0 ? d->next_tree_fetch - now : MIN(timeout, d->next_tree_fetch - now);
	if (job_wait >= 0)
		timeout = timeout < 0 ? job_wait : MIN(timeout, job_wait);
	if (poll((struct pollfd *)fds->data, fds->len,
		 timeout < 0 ? -1 : (int)(MAX(timeout, 0) * 1000) + 1) > 0) {
		char buf[64];

		while (read(wake_rd, buf, sizeof buf) > 0)
			;
	}
}

/*
 * The store failed in the loop.  For good: -1, the daemon stops.  For a
 * while (a full disk, an I/O error, a lock held too long): 0 after
 * retry_min seconds (a signal ends the wait), with the job that was
 * running here, if its end was not written, queued again.
 */
static int store_failed(struct pk_daemon *d, int wake_rd, GError **err)
{
	struct pollfd wake = { wake_rd, POLLIN, 0 };
	g_autoptr(GError) again = NULL;

	if (!pk_error_transient(*err) || d->opts->once)
		return -1;
	daemon_log(0, NULL, "the store failed for a while: %s; tried again in %.0f s", (*err)->message,
		   d->config.daemon.retry_min);
	g_clear_error(err);
	if (poll(&wake, 1, (int)(d->config.daemon.retry_min * 1000)) > 0) {
		char buf[64];

		while (read(wake_rd, buf, sizeof buf) > 0)
			;
	}
	if (!d->opts->queue_only &&
	    pk_store_jobs_requeue_gone(d->store, &d->worker, "requeued: the store failed as it ended",
				       NULL, &again) < 0)
		daemon_log(0, NULL, "and again: %s", again->message);
	return 0;
}

/*
 * The intake's part of a turn: read the sources that are due and queue
 * the series that are ready (*series_wait: seconds until the next one is).
 * 0, or -1 when the store failed.
 */
static int intake_turn(struct pk_daemon *d, bool first, double now, double *series_wait, GError **err)
{
	if (d->opts->worker)
		return 0;
	/* two intakes would queue each series twice: a non-transient error, so the daemon stops */
	if (pk_store_intake_lost(d->store))
		return pk_error(err, PK_ERROR_FAILED, "the connection to %s was made again and the intake's "
				"lock could not be taken again: another intake runs on this store",
				pk_store_name(d->store));
	fetch_due(d, first, now);
	return daemon_assemble(d, series_wait, err);
}

/*
 * Until a signal (or, with once, until nothing is due): 0, or -1 when the
 * store fails for good.  The intake (not a worker) reads and queues; the
 * worker (not queue-only) claims and runs jobs; a plain daemon does both.
 * A worker asks the queue again every worker_poll seconds: others fill it.
 */
static int daemon_loop(struct pk_daemon *d, int wake_rd, GError **err)
{
	bool first = true;

	while (!daemon_stopping()) {
		double series_wait = -1, now = pk_now(), wait, metrics_wait;
		gint64 job_wait = -1;
		int ran = 0, rc;

		/* the sources were opened again (the old ones too when it failed), each watch new:
		   what they hold now no watch will report, so all are read as at start */
		if (daemon_reload_requested()) {
			pk_daemon_reload(d);
			d->next_tree_fetch = 0;   /* a [tree] added or changed is fetched at once */
			first = true;
		}
		rc = intake_turn(d, first, now, &series_wait, err);
		/* the lab fetches the [tree]s it tests on: a worker's (not the queue-only intake's) */
		if (!d->opts->queue_only)
			daemon_fetch_trees(d, now);
		first = false;
		if (rc < 0) {
			if (store_failed(d, wake_rd, err) < 0)
				return -1;
			continue;
		}
		if (!d->opts->queue_only && (ran = run_next_job(d, &job_wait, err)) < 0) {
			if (store_failed(d, wake_rd, err) < 0)
				return -1;
			continue;
		}
		daemon_metrics_write(d);
		if (ran)
			continue;
		if (d->opts->once)
			break;
		wait = (double)job_wait;
		if (d->opts->worker)
			wait = wait < 0 ? d->config.daemon.worker_poll : MIN(wait, d->config.daemon.worker_poll);
		/* the figures age (the oldest job's age, others' jobs): written again when due */
		if ((metrics_wait = daemon_metrics_wait(d->metrics)) >= 0)
			wait = wait < 0 ? metrics_wait : MIN(wait, metrics_wait);
		sleep_until_due(d, wake_rd, now, series_wait, wait);
	}
	return 0;
}

int pk_daemon_run(const struct pk_daemon_opts *opts, GError **err)
{
	struct pk_daemon *d = NULL;
	g_autofree char *exposed = NULL;
	int pipefd[2] = { -1, -1 }, rc = -1;

	if (pk_daemon_open(&d, opts, err) < 0)
		return -1;
	if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
		pk_error(err, PK_ERROR_FAILED, "pipe: %s", g_strerror(errno));
		goto out;
	}
	daemon_signals_install(pipefd[1]);
	daemon_log(0, NULL, "started%s%s: %u source(s), database %s, outbox %s%s",
		   opts->worker ? " as worker " : opts->queue_only ? " (intake only)" : "",
		   opts->worker ? d->worker_name : "", d->sources->len, pk_store_name(d->store),
		   d->outbox->dir, opts->once ? ", once" : "");
	/* a daemon with nothing to read only works off the queue: say so, or it looks like a quiet list */
	if (!opts->worker && !d->sources->len && !(d->config.trees && d->config.trees->len))
		daemon_log(0, NULL, "warning: no [source] and no [tree] to read in %s: only jobs already queued "
			   "are worked on (config.example, in printkbot's source and in share/doc/printkbot, "
			   "shows a configuration; --config FILE names one)",
			   d->config.path ? d->config.path : "(no configuration file: none given, "
			   "$PRINTKBOT_CONFIG unset, no /etc/printkbot.conf)");
	if ((exposed = pk_config_secret_exposed(&d->config)))
		daemon_log(0, NULL, "warning: %s", exposed);
	if (daemon_loop(d, pipefd[0], err) < 0)
		goto out;
	/* stopped: a process that is not running exports nothing; --once leaves what it saw */
	if (daemon_stopping())
		daemon_metrics_remove(d);
	daemon_log(0, NULL, daemon_stopping() ? "stopped by a signal" : "nothing more to do");
	rc = 0;
out:
	daemon_signals_restore();
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	pk_daemon_close(d);
	return rc;
}
