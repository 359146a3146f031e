/*
 * jobs.c - the job queue: the states a job goes through and the one
 * function that writes them, the questions the daemon asks of the queue,
 * and the workers' claims under a lease.  See store.h for the contracts.
 *
 * The SQL is plain enough for the PostgreSQL backend to share it (ON
 * CONFLICT, RETURNING, CASE rather than a boolean as a number; an optional
 * filter is "kind = ?1 OR ?1 IS NULL", in that order, so that PostgreSQL
 * learns ?1's type before it meets IS NULL); where a backend without
 * SQLite's one write lock needs more, a comment says so.
 */
#include "store/private.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

/* ---- job states and kinds ---------------------------------------------- */

/* The words of the jobs table (its CHECK constraint names the same states). */
static const char *const job_state_names[] = {
	[PK_JOB_QUEUED] = "queued",
	[PK_JOB_RUNNING] = "running",
	[PK_JOB_DONE] = "done",
	[PK_JOB_FAILED] = "failed",
	[PK_JOB_CANCELLED] = "cancelled",
};

static const char *const job_kind_names[] = {
	[PK_JOB_UNKNOWN] = "unknown",
	[PK_JOB_SERIES] = "series",
	[PK_JOB_REPLY] = "reply",
	[PK_JOB_PUSH] = "push",
	[PK_JOB_COMMAND] = "command",
};

const char *pk_job_state_name(enum pk_job_state state)
{
	return (unsigned)state < G_N_ELEMENTS(job_state_names) ? job_state_names[state] : "";
}

bool pk_job_state_parse(const char *name, enum pk_job_state *out)
{
	for (unsigned i = 0; name && i < G_N_ELEMENTS(job_state_names); i++)
		if (!strcmp(name, job_state_names[i])) {
			*out = (enum pk_job_state)i;
			return true;
		}
	return false;
}

const char *pk_job_kind_name(enum pk_job_kind kind)
{
	return (unsigned)kind < G_N_ELEMENTS(job_kind_names) ? job_kind_names[kind] : "";
}

bool pk_job_kind_parse(const char *name, enum pk_job_kind *out)
{
	for (unsigned i = PK_JOB_UNKNOWN + 1; name && i < G_N_ELEMENTS(job_kind_names); i++)
		if (!strcmp(name, job_kind_names[i])) {
			*out = (enum pk_job_kind)i;
			return true;
		}
	return false;
}

/* A kind that a job can have (not "any", not unknown). */
static bool job_kind_real(enum pk_job_kind kind)
{
	return kind > PK_JOB_UNKNOWN && (unsigned)kind < G_N_ELEMENTS(job_kind_names);
}

static bool job_state_real(enum pk_job_state state)
{
	return (unsigned)state < G_N_ELEMENTS(job_state_names);
}

static bool job_move_allowed(enum pk_job_state from, enum pk_job_state to)
{
	static const struct { enum pk_job_state from, to; } moves[] = {
		{ PK_JOB_QUEUED, PK_JOB_RUNNING }, { PK_JOB_QUEUED, PK_JOB_CANCELLED },
		{ PK_JOB_RUNNING, PK_JOB_DONE }, { PK_JOB_RUNNING, PK_JOB_FAILED },
		{ PK_JOB_RUNNING, PK_JOB_QUEUED },   /* the daemon died mid-job: run it again */
		{ PK_JOB_FAILED, PK_JOB_QUEUED },    /* retry */
	};

	for (size_t i = 0; i < G_N_ELEMENTS(moves); i++)
		if (from == moves[i].from && to == moves[i].to)
			return true;
	return false;
}

/* ---- reading jobs ------------------------------------------------------ */

void pk_store_job_free(struct pk_store_job *job)
{
	if (!job)
		return;
	g_free(job->payload);
	g_free(job->detail);
	g_free(job->series_key);
	g_free(job->worker);
	g_free(job->arch);
	g_free(job);
}

#define JOB_COLUMNS "id, kind, state, payload, detail, series_key, series_version, " \
		    "attempts, created, updated, not_before, worker, lease_until, arch"

/*
 * The job of a row of JOB_COLUMNS.  A kind this printkbot does not know
 * reads as PK_JOB_UNKNOWN (the daemon fails such a job); a state it does
 * not know is refused (the table's CHECK allows none).
 */
static struct pk_store_job *job_row(struct pk_store *s, store_stmt *st, GError **err)
{
	struct pk_store_job *j;
	enum pk_job_kind kind = PK_JOB_UNKNOWN;
	enum pk_job_state state;

	if (!pk_job_state_parse(col_str(st, 2), &state)) {
		pk_error(err, PK_ERROR_INPUT, "%s: job %" G_GINT64_FORMAT " has an unknown state",
			 s->path, (gint64)col_int(st, 0));
		return NULL;
	}
	pk_job_kind_parse(col_str(st, 1), &kind);
	j = g_new0(struct pk_store_job, 1);
	j->id = col_int(st, 0);
	j->kind = kind;
	j->state = state;
	j->payload = col_text(st, 3);
	j->detail = col_text(st, 4);
	j->series_key = col_text(st, 5);
	j->series_version = col_int(st, 6);
	j->attempts = col_int(st, 7);
	j->created = col_int(st, 8);
	j->updated = col_int(st, 9);
	j->not_before = col_int(st, 10);
	j->worker = col_text(st, 11);
	j->lease_until = col_int(st, 12);
	j->arch = col_text(st, 13);
	return j;
}

/* The first row of a prepared query of JOB_COLUMNS: 1 (*out new), 0 none. */
static int job_first(struct pk_store *s, store_stmt *st, struct pk_store_job **out,
		     GError **err)
{
	struct pk_store_job *j;
	int rc;

	if ((rc = step(s, st, err)) <= 0)
		return rc;
	if (!(j = job_row(s, st, err)))
		return -1;
	*out = j;
	return 1;
}

int pk_store_job_get(struct pk_store *store, gint64 job_id, struct pk_store_job **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?1", err);

	if (!st)
		return -1;
	bind_int(st, 1, job_id);
	return job_first(store, st, out, err);
}

int pk_store_job_state(struct pk_store *store, gint64 job_id, enum pk_job_state *out_state,
		       GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT state FROM jobs WHERE id = ?1", err);
	enum pk_job_state state;
	int rc;

	if (!st)
		return -1;
	bind_int(st, 1, job_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	if (!pk_job_state_parse(col_str(st, 0), &state))
		return pk_error(err, PK_ERROR_INPUT, "%s: job %" G_GINT64_FORMAT " has an unknown state",
				store->path, job_id);
	*out_state = state;
	return 1;
}

int pk_store_job_next(struct pk_store *store, struct pk_store_job **out, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT " JOB_COLUMNS " FROM jobs WHERE state = "
					  "'queued' ORDER BY id LIMIT 1", err);

	if (!st)
		return -1;
	return job_first(store, st, out, err);
}

int pk_store_jobs(struct pk_store *store, enum pk_job_state state, GPtrArray **out,
		  GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pk_store_job_free);
	int rc;

	if (state != PK_JOB_ANY_STATE && !job_state_real(state))
		return pk_error(err, PK_ERROR_INPUT, "unknown job state %d", (int)state);
	st = prep(store, "SELECT " JOB_COLUMNS " FROM jobs WHERE state = ?1 OR ?1 IS NULL "
		  "ORDER BY id", err);
	if (!st)
		return -1;
	bind_text(st, 1, state == PK_JOB_ANY_STATE ? NULL : pk_job_state_name(state));
	while ((rc = step(store, st, err)) > 0) {
		struct pk_store_job *j = job_row(store, st, err);

		if (!j)
			return -1;
		g_ptr_array_add(rows, j);
	}
	if (rc < 0)
		return -1;
	*out = g_steal_pointer(&rows);
	return 0;
}

/* Seconds until the first queued job of kind (NULL: any) is due, -1 when none is queued. */
/*
 * The claim's condition on a job's architecture, with a worker's arches
 * ("x86_64,arm64") bound as the placeholder p ("?3"): a job that needs
 * none, or one of them; any job for a worker without arches.
 */
#define JOB_ARCH_FITS(p) "(arch IS NULL OR CAST(" p " AS TEXT) IS NULL OR " \
			 "(',' || CAST(" p " AS TEXT) || ',') LIKE ('%,' || arch || ',%'))"

static int job_wait(struct pk_store *s, const char *kind, const char *arches, gint64 now, gint64 *out,
		    GError **err)
{
	g_autoptr(store_stmt) st = prep(s, "SELECT min(not_before) FROM jobs WHERE state = "
					  "'queued' AND (kind = ?1 OR ?1 IS NULL) AND " JOB_ARCH_FITS("?2"), err);

	if (!st)
		return -1;
	bind_text(st, 1, kind);
	bind_text(st, 2, arches);
	if (step(s, st, err) < 0)
		return -1;
	*out = col_null(st, 0) ? -1
	     : MAX(col_int(st, 0) - now, 0);
	return 0;
}

int pk_store_job_next_due(struct pk_store *store, enum pk_job_kind kind, gint64 now,
			  struct pk_store_job **out, gint64 *out_wait, GError **err)
{
	const char *name = kind == PK_JOB_ANY_KIND ? NULL : pk_job_kind_name(kind);
	g_autoptr(store_stmt) st = NULL;
	g_autoptr(pk_store_job) job = NULL;
	gint64 wait = 0;
	int rc;

	if (kind != PK_JOB_ANY_KIND && !job_kind_real(kind))
		return pk_error(err, PK_ERROR_INPUT, "unknown job kind %d", (int)kind);
	st = prep(store, "SELECT " JOB_COLUMNS " FROM jobs WHERE state = 'queued' AND "
		  "(kind = ?1 OR ?1 IS NULL) AND not_before <= ?2 ORDER BY id LIMIT 1", err);
	if (!st)
		return -1;
	bind_text(st, 1, name);
	bind_int(st, 2, now);
	if ((rc = job_first(store, st, &job, err)) < 0)
		return -1;
	/* nothing due: how long until the first queued job is */
	if (!rc && out_wait && job_wait(store, name, NULL, now, &wait, err) < 0)
		return -1;
	if (out_wait)
		*out_wait = wait;
	if (rc)
		*out = g_steal_pointer(&job);
	return rc;
}

/* ---- queueing and moving jobs ------------------------------------------ */

static int job_insert(struct pk_store *s, gint64 *out_id, enum pk_job_kind kind,
		      const char *series_key, int series_version, gint64 not_before, const char *payload,
		      GError **err)
{
	/* state is left to its default: only pk_store_job_set_state() writes it */
	g_autoptr(store_stmt) st = NULL;

	if (!job_kind_real(kind))
		return pk_error(err, PK_ERROR_INPUT, "a job of an unknown kind (%d) cannot be queued",
				(int)kind);
	st = prep(s, "INSERT INTO jobs (kind, payload, series_key, series_version, created, "
		  "updated, not_before) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6) RETURNING id", err);
	if (!st)
		return -1;
	bind_text(st, 1, pk_job_kind_name(kind));
	bind_text(st, 2, payload);
	bind_text(st, 3, series_key);
	if (series_key)
		bind_int(st, 4, series_version);
	bind_int(st, 5, unix_now());
	bind_int(st, 6, not_before);
	if (run_id(s, st, out_id, err) < 0)
		return -1;
	return 0;
}

int pk_store_job_add(struct pk_store *store, gint64 *out_id, enum pk_job_kind kind,
		     const char *payload, GError **err)
{
	return job_insert(store, out_id, kind, NULL, 0, 0, payload, err);
}

int pk_store_job_add_series(struct pk_store *store, gint64 *out_id, const char *series_key,
			    int series_version, const char *payload, GError **err)
{
	if (!series_key)
		return pk_error(err, PK_ERROR_INPUT, "a series job needs its series' key");
	return job_insert(store, out_id, PK_JOB_SERIES, series_key, series_version, 0, payload, err);
}

int pk_store_job_add_reply(struct pk_store *store, gint64 *out_id, const char *series_key,
			   int series_version, gint64 not_before, const char *payload, GError **err)
{
	return job_insert(store, out_id, PK_JOB_REPLY, series_key, series_version, MAX(not_before, 0), payload,
			  err);
}

/*
 * The one place a job's state is written.  A move to running takes
 * holder (its lease ends holder->lease seconds after the database's
 * clock says now: the caller's now is only the row's updated) and gives the claimed row
 * in *out_row (may be NULL); any other move drops the holder.  The UPDATE
 * is conditional on the state just read, so that a backend without
 * SQLite's write lock (PostgreSQL) still never moves a job twice.
 */
static int job_set_state_locked(struct pk_store *s, gint64 job_id, enum pk_job_state to,
				const char *detail, const struct pk_store_worker *holder, gint64 now,
				struct pk_store_job **out_row, GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	g_autofree char *sql = NULL;
	enum pk_job_state from;
	bool claim = to == PK_JOB_RUNNING;
	int rc;

	if ((rc = pk_store_job_state(s, job_id, &from, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_INPUT, "%s: no job %" G_GINT64_FORMAT,
					      s->path, job_id);
	if (!job_move_allowed(from, to) || (claim && !holder))
		return pk_error(err, PK_ERROR_INPUT, "job %" G_GINT64_FORMAT ": cannot go from %s to %s%s",
				job_id, pk_job_state_name(from), pk_job_state_name(to),
				claim && !holder ? " without a worker to hold it" : "");
	/* ?8, the lease's length, is NULL unless claimed: then lease_until is too */
	sql = g_strconcat("UPDATE jobs SET state = ?2, detail = ?3, updated = ?4, "
			  "attempts = attempts + CASE WHEN ?2 = 'running' THEN 1 ELSE 0 END, "
			  "worker = ?5, worker_machine = ?6, worker_pid = ?7, lease_until = ",
			  s->be->now_sql, " + ?8 WHERE id = ?1 AND state = ?9 RETURNING " JOB_COLUMNS, NULL);
	if (!(st = prep(s, sql, err)))
		return -1;
	bind_int(st, 1, job_id);
	bind_text(st, 2, pk_job_state_name(to));
	bind_text(st, 3, detail);
	bind_int(st, 4, now);
	bind_text(st, 5, claim ? holder->name : NULL);
	bind_text(st, 6, claim ? holder->machine : NULL);
	if (claim) {
		bind_int(st, 7, holder->pid);
		bind_int(st, 8, holder->lease);
	}
	bind_text(st, 9, pk_job_state_name(from));
	if ((rc = step(s, st, err)) < 0)
		return -1;
	if (!rc)
		return pk_error(err, PK_ERROR_TRANSIENT, "job %" G_GINT64_FORMAT " moved under us", job_id);
	if (out_row && !(*out_row = job_row(s, st, err)))
		return -1;
	return 0;
}

int pk_store_job_set_state(struct pk_store *store, gint64 job_id, enum pk_job_state state,
			   const char *detail, GError **err)
{
	if (!job_state_real(state))
		return pk_error(err, PK_ERROR_INPUT, "unknown job state %d", (int)state);
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, job_set_state_locked(store, job_id, state, detail, NULL, unix_now(),
						  NULL, err), err);
}

static int job_retry_locked(struct pk_store *s, gint64 job_id, gint64 not_before,
			    const char *detail, GError **err)
{
	g_autoptr(store_stmt) st = NULL;

	if (job_set_state_locked(s, job_id, PK_JOB_QUEUED, detail, NULL, unix_now(), NULL, err) < 0)
		return -1;
	if (!(st = prep(s, "UPDATE jobs SET not_before = ?2 WHERE id = ?1", err)))
		return -1;
	bind_int(st, 1, job_id);
	bind_int(st, 2, not_before);
	return run(s, st, err);
}

int pk_store_job_retry_at(struct pk_store *store, gint64 job_id, gint64 not_before,
			  const char *detail, GError **err)
{
	if (tx_begin(store, err) < 0)
		return -1;
	return tx_end(store, job_retry_locked(store, job_id, not_before, detail, err), err);
}

/* ---- workers and leases ------------------------------------------------- */

/* Seconds until the first running job's lease ends (by the database's clock), -1 when none runs. */
static int lease_wait(struct pk_store *s, gint64 *out, GError **err)
{
	g_autofree char *sql = g_strconcat("SELECT min(lease_until) - ", s->be->now_sql,
					   " FROM jobs WHERE state = 'running'", NULL);
	g_autoptr(store_stmt) st = prep(s, sql, err);

	if (!st || step(s, st, err) < 0)
		return -1;
	*out = col_null(st, 0) ? -1
	     : MAX(col_int(st, 0) + 1, 0);
	return 0;
}

static int job_claim_locked(struct pk_store *s, const struct pk_store_worker *w, const char *kind,
			    gint64 now, struct pk_store_job **out, GError **err)
{
	/*
	 * SQLite's BEGIN IMMEDIATE already serialises claims; on PostgreSQL,
	 * FOR UPDATE SKIP LOCKED holds the row and lets another worker's
	 * claim pass over it to the next job rather than wait.
	 */
	g_autofree char *sql = g_strconcat("SELECT id FROM jobs WHERE state = 'queued' AND "
					   "(kind = ?1 OR ?1 IS NULL) AND not_before <= ?2 AND "
					   JOB_ARCH_FITS("?3") " ORDER BY id LIMIT 1", s->be->skip_locked, NULL);
	g_autoptr(store_stmt) st = prep(s, sql, err);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, kind);
	bind_int(st, 2, now);
	bind_text(st, 3, w->arches);
	if ((rc = step(s, st, err)) <= 0)
		return rc;
	if (job_set_state_locked(s, col_int(st, 0), PK_JOB_RUNNING, NULL, w, now, out,
				 err) < 0)
		return -1;
	return 1;
}

int pk_store_job_claim(struct pk_store *store, const struct pk_store_worker *worker,
		       enum pk_job_kind kind, gint64 now, struct pk_store_job **out,
		       gint64 *out_wait, GError **err)
{
	const char *name = kind == PK_JOB_ANY_KIND ? NULL : pk_job_kind_name(kind);
	g_autoptr(pk_store_job) job = NULL;
	gint64 wait = -1, lease = -1;
	int rc;

	if (kind != PK_JOB_ANY_KIND && !job_kind_real(kind))
		return pk_error(err, PK_ERROR_INPUT, "unknown job kind %d", (int)kind);
	if (!worker || !worker->name || !worker->machine || worker->lease <= 0)
		return pk_error(err, PK_ERROR_INPUT, "a job is claimed by a worker with a name, a "
				"machine and a lease");
	if (tx_begin(store, err) < 0)
		return -1;
	rc = job_claim_locked(store, worker, name, now, &job, err);
	if (rc == 0 && out_wait &&
	    (job_wait(store, name, worker->arches, now, &wait, err) < 0 ||
	     lease_wait(store, &lease, err) < 0))
		rc = -1;
	if (tx_end(store, rc < 0 ? -1 : 0, err) < 0)
		return -1;
	if (out_wait)
		*out_wait = rc ? 0 : wait < 0 ? lease : lease < 0 ? wait : MIN(wait, lease);
	if (rc)
		*out = g_steal_pointer(&job);
	return rc;
}

/* Renew worker's lease on a job it holds, by the database's clock: 1 held, 0 lost. */
static int job_renew_locked(struct pk_store *s, gint64 job_id, const struct pk_store_worker *w,
			    GError **err)
{
	const char *now = s->be->now_sql;
	g_autofree char *sql = g_strconcat("UPDATE jobs SET lease_until = ", now, " + ?5 WHERE id = ?1 AND "
					   "state = 'running' AND worker = ?2 AND worker_machine = ?3 "
					   "AND worker_pid = ?4 AND lease_until >= ", now, " RETURNING id", NULL);
	g_autoptr(store_stmt) st = prep(s, sql, err);

	if (!st)
		return -1;
	bind_int(st, 1, job_id);
	bind_text(st, 2, w->name);
	bind_text(st, 3, w->machine);
	bind_int(st, 4, w->pid);
	bind_int(st, 5, w->lease);
	return step(s, st, err);
}

int pk_store_job_renew(struct pk_store *store, gint64 job_id, const struct pk_store_worker *worker,
		       GError **err)
{
	int rc;

	if (tx_begin(store, err) < 0)
		return -1;
	rc = job_renew_locked(store, job_id, worker, err);
	if (tx_end(store, rc < 0 ? -1 : 0, err) < 0)
		return -1;
	return rc;
}

int pk_store_job_need_arch(struct pk_store *store, gint64 job_id, const struct pk_store_worker *worker,
			   const char *arch, GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	int rc;

	if (tx_begin(store, err) < 0)
		return -1;
	if ((rc = job_renew_locked(store, job_id, worker, err)) > 0) {
		if (!(st = prep(store, "UPDATE jobs SET arch = ?2 WHERE id = ?1", err))) {
			rc = -1;
		} else {
			bind_int(st, 1, job_id);
			bind_text(st, 2, arch);
			rc = run(store, st, err) < 0 ? -1 : 1;
		}
	}
	if (tx_end(store, rc < 0 ? -1 : 0, err) < 0)
		return -1;
	return rc;
}

/* ---- what the workers' labs have ---------------------------------------- */

int pk_store_worker_advertise(struct pk_store *store, const struct pk_store_worker *worker, GError **err)
{
	g_autofree char *sql = NULL;
	g_autoptr(store_stmt) st = NULL;

	if (!worker->arches)
		return 0;
	/* both SQLite (3.24 on) and PostgreSQL take this upsert */
	sql = g_strconcat("INSERT INTO workers (name, machine, arches, seen) VALUES (?1, ?2, ?3, ",
			  store->be->now_sql, ") ON CONFLICT (name) DO UPDATE SET machine = excluded.machine, "
			  "arches = excluded.arches, seen = excluded.seen", NULL);
	if (!(st = prep(store, sql, err)))
		return -1;
	bind_text(st, 1, worker->name);
	bind_text(st, 2, worker->machine);
	bind_text(st, 3, worker->arches);
	return run(store, st, err);
}

int pk_store_workers_with_arch(struct pk_store *store, const struct pk_store_worker *worker, const char *arch,
			       gint64 within, gint64 *out, GError **err)
{
	g_autofree char *sql = g_strconcat("SELECT count(*) FROM workers WHERE seen >= ", store->be->now_sql,
					   " - ?1 AND name <> ?2 AND (',' || arches || ',') LIKE "
					   "('%,' || CAST(?3 AS TEXT) || ',%')", NULL);
	g_autoptr(store_stmt) st = prep(store, sql, err);

	if (!st)
		return -1;
	bind_int(st, 1, within);
	bind_text(st, 2, worker && worker->name ? worker->name : "");
	bind_text(st, 3, arch);
	if (step(store, st, err) < 0)
		return -1;
	*out = col_int(st, 0);
	return 0;
}

static int job_end_locked(struct pk_store *s, gint64 job_id, const struct pk_store_worker *w,
			  enum pk_job_state to, const char *detail, gint64 not_before, gint64 now,
			  GError **err)
{
	g_autoptr(store_stmt) st = NULL;
	int rc;

	if ((rc = job_renew_locked(s, job_id, w, err)) <= 0)
		return rc;
	if (job_set_state_locked(s, job_id, to, detail, NULL, now, NULL, err) < 0)
		return -1;
	if (to != PK_JOB_QUEUED)
		return 1;
	if (!(st = prep(s, "UPDATE jobs SET not_before = ?2 WHERE id = ?1", err)))
		return -1;
	bind_int(st, 1, job_id);
	bind_int(st, 2, not_before);
	return run(s, st, err) < 0 ? -1 : 1;
}

int pk_store_job_end(struct pk_store *store, gint64 job_id, const struct pk_store_worker *worker,
		     enum pk_job_state state, const char *detail, gint64 not_before, gint64 now,
		     GError **err)
{
	int rc;

	if (state != PK_JOB_DONE && state != PK_JOB_FAILED && state != PK_JOB_QUEUED)
		return pk_error(err, PK_ERROR_INPUT, "a job does not end %s",
				pk_job_state_name(state));
	if (tx_begin(store, err) < 0)
		return -1;
	rc = job_end_locked(store, job_id, worker, state, detail, not_before, now, err);
	if (tx_end(store, rc < 0 ? -1 : 0, err) < 0)
		return -1;
	return rc;
}

/*
 * Move every job the prepared query sel selects (its ids) to state to,
 * each through job_set_state_locked(), in one transaction: the question is
 * one query, the moves the one path.
 */
int store_jobs_move(struct pk_store *s, store_stmt *sel, enum pk_job_state to,
		    const char *detail, GArray **out_ids, GError **err)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	int rc;

	if (tx_begin(s, err) < 0)
		return -1;
	while ((rc = step(s, sel, err)) > 0) {
		gint64 id = col_int(sel, 0);

		g_array_append_val(ids, id);
	}
	for (guint i = 0; rc == 0 && i < ids->len; i++)
		rc = job_set_state_locked(s, g_array_index(ids, gint64, i), to, detail, NULL,
					  unix_now(), NULL, err);
	if (tx_end(s, rc, err) < 0)
		return -1;
	if (out_ids)
		*out_ids = g_steal_pointer(&ids);
	return 0;
}

int pk_store_jobs_cancel_superseded(struct pk_store *store, const char *series_key, int version,
				    const char *detail, GArray **out_ids, GError **err)
{
	g_autoptr(store_stmt) sel = prep(store, "SELECT id FROM jobs WHERE state = 'queued' AND "
					   "kind = 'series' AND series_key = ?1 AND "
					   "series_version < ?2 ORDER BY id", err);

	if (!sel)
		return -1;
	bind_text(sel, 1, series_key);
	bind_int(sel, 2, version);
	return store_jobs_move(store, sel, PK_JOB_CANCELLED, detail, out_ids, err);
}

int pk_store_job_newer_series(struct pk_store *store, const char *series_key, int version, gint64 after_id,
			      gint64 *out_id, GError **err)
{
	g_autoptr(store_stmt) st = prep(store, "SELECT id FROM jobs WHERE kind = 'series' AND series_key = ?1 AND "
					"series_version >= ?2 AND id > ?3 AND state <> 'cancelled' ORDER BY id LIMIT 1",
					err);
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, series_key);
	bind_int(st, 2, version);
	bind_int(st, 3, after_id);
	if ((rc = step(store, st, err)) <= 0)
		return rc;
	*out_id = col_int(st, 0);
	return 1;
}

/*
 * Queue again the running jobs of the query sel (its rows: id, worker,
 * worker_pid) that keep(row, data) selects (NULL: all), in one
 * transaction, each with the detail "why: its worker".
 */
static int jobs_requeue(struct pk_store *s, store_stmt *sel,
			bool (*keep)(store_stmt *row, const void *data), const void *data,
			const char *why, GArray **out_ids, GError **err)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	g_autoptr(GPtrArray) details = g_ptr_array_new_with_free_func(g_free);
	int rc;

	if (tx_begin(s, err) < 0)
		return -1;
	while ((rc = step(s, sel, err)) > 0) {
		gint64 id = col_int(sel, 0);
		const char *who = col_str(sel, 1);

		if (keep && !keep(sel, data))
			continue;
		g_array_append_val(ids, id);
		g_ptr_array_add(details, g_strdup_printf("%s: %s", why, who ? who : "a printkbot "
							 "before leases"));
	}
	for (guint i = 0; rc == 0 && i < ids->len; i++)
		rc = job_set_state_locked(s, g_array_index(ids, gint64, i), PK_JOB_QUEUED,
					  details->pdata[i], NULL, unix_now(), NULL, err);
	if (tx_end(s, rc, err) < 0)
		return -1;
	if (out_ids)
		*out_ids = g_steal_pointer(&ids);
	return 0;
}

int pk_store_jobs_requeue_expired(struct pk_store *store, GArray **out_ids, GError **err)
{
	g_autofree char *sql = g_strconcat("SELECT id, worker, worker_pid FROM jobs WHERE "
					   "state = 'running' AND (lease_until IS NULL OR "
					   "lease_until < ", store->be->now_sql, ") ORDER BY id", NULL);
	g_autoptr(store_stmt) sel = prep(store, sql, err);

	if (!sel)
		return -1;
	return jobs_requeue(store, sel, NULL, NULL, "requeued, the lease ended", out_ids, err);
}

/* A holder on this machine that is gone: no such process (or the asker itself). */
static bool holder_gone(store_stmt *row, const void *data)
{
	const struct pk_store_worker *w = data;
	gint64 pid = col_int(row, 2);

	if (pid == w->pid)
		return true;
	return pid <= 0 || pid > G_MAXINT || (kill((pid_t)pid, 0) < 0 && errno == ESRCH);
}

int pk_store_jobs_requeue_gone(struct pk_store *store, const struct pk_store_worker *worker,
			       const char *detail, GArray **out_ids, GError **err)
{
	g_autoptr(store_stmt) sel = prep(store, "SELECT id, worker, worker_pid FROM jobs WHERE "
					   "state = 'running' AND worker_machine = ?1 ORDER BY id", err);

	if (!sel)
		return -1;
	bind_text(sel, 1, worker->machine);
	return jobs_requeue(store, sel, holder_gone, worker, detail ? detail : "requeued, its worker "
			    "is gone", out_ids, err);
}

