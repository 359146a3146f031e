/*
 * test-queue.c - the store's job queue: the states a job goes through and
 * the moves allowed between them, the names of states and kinds, and the
 * questions the daemon asks in one call (which jobs a newer series
 * supersedes, which a dead daemon left running, the next due job); and
 * workers: a job claimed atomically under a lease, renewed, taken back
 * only when the lease ended, a late result refused, two processes never
 * claiming the one job, a worker killed mid-job (kill -9) whose job is
 * taken over after its lease.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "store-fixture.h"

/*
 * Workers of the tests: two machines; the lease is a minute.  The times
 * they pass are made up (when a job is due, its updated); their leases
 * run on the database's clock, and a test moves a lease's end there
 * (lease_ends_in()) for the time that passes.
 */
/*
 * Process ids no process can have (above the kernel's PID_MAX_LIMIT,
 * 4194304): a job these workers hold is one whose holder is gone.  With
 * 100 and 200 a fresh CI machine (pid_max 32768, wrapped by the kernel
 * builds beside the unit tests) had a process 100, and test_job_questions
 * found the holder alive.
 */
#define NO_SUCH_PID(n) (4194304 + (n))
static const struct pk_store_worker worker_a = { "host-a:100", "machine-a", NO_SUCH_PID(100), 60 };
static const struct pk_store_worker worker_b = { "host-b:200", "machine-b", NO_SUCH_PID(200), 60 };

/* The database's clock as SQL, for the run at hand (as sql-sqlite.c and sql-pg.c write it). */
static const char *db_now_sql(void)
{
	return pg_admin ? "CAST(floor(extract(epoch FROM clock_timestamp())) AS BIGINT)"
			: "CAST(strftime('%s', 'now') AS INTEGER)";
}

/* Time passes for job_id's lease: it ends seconds from the database's now (negative: ended). */
static void lease_ends_in(const char *path, gint64 job_id, int seconds)
{
	g_autofree char *sql = g_strdup_printf("UPDATE jobs SET lease_until = %s + (%d) WHERE id = %"
					       G_GINT64_FORMAT, db_now_sql(), seconds, job_id);

	raw_exec(path, sql);
}

/* Unix seconds by this machine's clock (the database's too, in these tests). */
static gint64 real_now(void)
{
	return g_get_real_time() / G_USEC_PER_SEC;
}

/* A renewed lease of a minute has at least this many seconds left (a slow machine's margin). */
#define LEASE_LEFT_MIN 58

/* Seconds left of the lease of running job id. */
static gint64 job_lease_left(struct pk_store *s, gint64 id)
{
	g_autoptr(GPtrArray) jobs = NULL;

	assert_int_equal(pk_store_jobs(s, PK_JOB_RUNNING, &jobs, NULL), 0);
	for (guint i = 0; i < jobs->len; i++) {
		const struct pk_store_job *j = jobs->pdata[i];

		if (j->id == id)
			return j->lease_until - real_now();
	}
	fail_msg("job %" G_GINT64_FORMAT " is not running", id);
	return 0;
}

/* Claim job_id as w at now (it must be the one due); the job stays with the caller's store. */
static void claim_ok(struct pk_store *s, const struct pk_store_worker *w, gint64 now, gint64 job_id)
{
	g_autoptr(pk_store_job) job = NULL;
	g_autoptr(GError) err = NULL;

	if (pk_store_job_claim(s, w, PK_JOB_ANY_KIND, now, &job, NULL, &err) != 1)
		fail_msg("claim by %s: %s", w->name, err ? err->message : "nothing due");
	assert_int_equal(job->id, job_id);
	assert_int_equal(job->state, PK_JOB_RUNNING);
	assert_string_equal(job->worker, w->name);
	/* a lease from the database's clock (the same as ours here), whatever now the worker said */
	assert_in_range(job->lease_until, real_now() + w->lease - 2, real_now() + w->lease);
}

/* ---- the job queue ------------------------------------------------------ */

static void test_jobs(void **state)
{
	g_autofree char *path = db_path("jobs.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_store_job) next = NULL;
	enum pk_job_state st = PK_JOB_QUEUED;
	gint64 a, b;

	assert_int_equal(pk_store_job_add(s, &a, PK_JOB_SERIES, "{\"patch\":1}", &err), 0);
	assert_int_equal(pk_store_job_add(s, &b, PK_JOB_SERIES, NULL, &err), 0);
	assert_int_equal(pk_store_job_next(s, &next, &err), 1);
	assert_int_equal(next->id, a);
	assert_string_equal(next->payload, "{\"patch\":1}");
	/* running has a holder: only a claim moves a job there */
	assert_int_equal(pk_store_job_set_state(s, a, PK_JOB_RUNNING, NULL, &err), -1);
	assert_non_null(strstr(err->message, "without a worker"));
	g_clear_error(&err);
	claim_ok(s, &worker_a, 1000, a);
	assert_int_equal(pk_store_job_state(s, a, &st, &err), 1);
	assert_int_equal(st, PK_JOB_RUNNING);
	g_clear_pointer(&next, pk_store_job_free);
	assert_int_equal(pk_store_job_next(s, &next, &err), 1);
	assert_int_equal(next->id, b);
	assert_int_equal(pk_store_job_set_state(s, a, PK_JOB_DONE, "review 3", &err), 0);
	/* done is final */
	assert_int_equal(pk_store_job_set_state(s, a, PK_JOB_QUEUED, NULL, &err), -1);
	assert_non_null(strstr(err->message, "cannot go from done to queued"));
	g_clear_error(&err);
	/* a state that is none of the table's ("sleeping") is refused */
	assert_false(pk_job_state_parse("sleeping", &st));
	assert_int_equal(pk_store_job_set_state(s, b, (enum pk_job_state)42, NULL, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_ANY_STATE, NULL, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_job_set_state(s, 99, PK_JOB_DONE, NULL, &err), -1);
	g_clear_error(&err);
	claim_ok(s, &worker_a, 1000, b);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_FAILED, "boot timed out", &err), 0);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_QUEUED, NULL, &err), 0);
	assert_int_equal(pk_store_job_state(s, 99, &st, &err), 0);
}

/*
 * Workers and architectures: a worker says which its lab has; a job that
 * needs arm64's lab (set by the worker that found it could not serve it)
 * goes back to the queue and is claimed only by a worker that has it,
 * while an x86_64-only worker takes the next job and is not told to wait
 * for the one it cannot run; a worker without arches takes any job.
 */
static void test_worker_arches(void **state)
{
	g_autofree char *path = db_path("arches.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_store_job) job = NULL;
	struct pk_store_worker x86 = worker_a, both = worker_b;
	struct pk_store_worker anyone = { "anyone:1", "machine-c", NO_SUCH_PID(1), 60 };
	gint64 a, b, n = -1, wait = -1;

	x86.arches = "x86_64";
	both.arches = "x86_64,arm64";
	assert_int_equal(pk_store_worker_advertise(s, &x86, &err), 0);
	assert_int_equal(pk_store_workers_with_arch(s, &x86, "arm64", 60, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(pk_store_worker_advertise(s, &both, &err), 0);
	/* said twice: one row */
	assert_int_equal(pk_store_worker_advertise(s, &both, &err), 0);
	assert_int_equal(pk_store_workers_with_arch(s, &x86, "arm64", 60, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pk_store_workers_with_arch(s, &both, "arm64", 60, &n, &err), 0);
	assert_int_equal(n, 0);    /* itself left out */
	assert_int_equal(pk_store_workers_with_arch(s, NULL, "x86_64", 60, &n, &err), 0);
	assert_int_equal(n, 2);
	/* "arm" is no architecture of "x86_64,arm64": whole names only */
	assert_int_equal(pk_store_workers_with_arch(s, NULL, "arm", 60, &n, &err), 0);
	assert_int_equal(n, 0);
	/* a worker not seen for a while is not about */
	raw_exec(path, "UPDATE workers SET seen = seen - 600 WHERE name = 'host-b:200'");
	assert_int_equal(pk_store_workers_with_arch(s, &x86, "arm64", 60, &n, &err), 0);
	assert_int_equal(n, 0);

	assert_int_equal(pk_store_job_add(s, &a, PK_JOB_SERIES, NULL, &err), 0);
	assert_int_equal(pk_store_job_add(s, &b, PK_JOB_SERIES, NULL, &err), 0);
	claim_ok(s, &x86, 1000, a);
	/* only its holder says what it needs */
	assert_int_equal(pk_store_job_need_arch(s, a, &both, "arm64", &err), 0);
	assert_int_equal(pk_store_job_need_arch(s, a, &x86, "arm64", &err), 1);
	assert_int_equal(pk_store_job_end(s, a, &x86, PK_JOB_QUEUED, "needs arm64", 0, 1000, &err), 1);
	/* the x86_64 worker passes over it to the next, and then finds nothing it can run */
	claim_ok(s, &x86, 1000, b);
	assert_int_equal(pk_store_job_claim(s, &x86, PK_JOB_ANY_KIND, 1000, &job, &wait, &err), 0);
	assert_true(wait != 0);
	/* the arm64 worker takes it, and sees what it needs */
	assert_int_equal(pk_store_job_claim(s, &both, PK_JOB_ANY_KIND, 1000, &job, NULL, &err), 1);
	assert_int_equal(job->id, a);
	assert_string_equal(job->arch, "arm64");
	assert_int_equal(pk_store_job_end(s, a, &both, PK_JOB_QUEUED, "again", 0, 1000, &err), 1);
	g_clear_pointer(&job, pk_store_job_free);
	/* one that does not say its arches takes any */
	assert_int_equal(pk_store_job_claim(s, &anyone, PK_JOB_ANY_KIND, 1000, &job, NULL, &err), 1);
	assert_int_equal(job->id, a);
	/* nothing written for it */
	assert_int_equal(pk_store_worker_advertise(s, &anyone, &err), 0);
	assert_int_equal(pk_store_workers_with_arch(s, NULL, "x86_64", 60, &n, &err), 0);
	assert_int_equal(n, 1);
}

/* The names of states and kinds: each enum value and its word, both ways. */
static void test_job_names(void **state)
{
	static const struct { enum pk_job_state state; const char *name; } states[] = {
		{ PK_JOB_QUEUED, "queued" }, { PK_JOB_RUNNING, "running" }, { PK_JOB_DONE, "done" },
		{ PK_JOB_FAILED, "failed" }, { PK_JOB_CANCELLED, "cancelled" },
	};
	static const struct { enum pk_job_kind kind; const char *name; } kinds[] = {
		{ PK_JOB_SERIES, "series" }, { PK_JOB_REPLY, "reply" }, { PK_JOB_PUSH, "push" },
		{ PK_JOB_COMMAND, "command" },
	};
	enum pk_job_state st;
	enum pk_job_kind kind;

	for (size_t i = 0; i < G_N_ELEMENTS(states); i++) {
		assert_string_equal(pk_job_state_name(states[i].state), states[i].name);
		assert_true(pk_job_state_parse(states[i].name, &st));
		assert_int_equal(st, states[i].state);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
		assert_string_equal(pk_job_kind_name(kinds[i].kind), kinds[i].name);
		assert_true(pk_job_kind_parse(kinds[i].name, &kind));
		assert_int_equal(kind, kinds[i].kind);
	}
	assert_string_equal(pk_job_state_name(PK_JOB_ANY_STATE), "");
	assert_string_equal(pk_job_kind_name(PK_JOB_ANY_KIND), "");
	assert_string_equal(pk_job_kind_name(PK_JOB_UNKNOWN), "unknown");
	kind = PK_JOB_REPLY;
	assert_false(pk_job_kind_parse("unknown", &kind));
	assert_false(pk_job_kind_parse(NULL, &kind));
	assert_int_equal(kind, PK_JOB_REPLY);   /* untouched */
}

/*
 * The questions the daemon asks in one call: the series jobs a newer
 * version supersedes (only queued ones of that series, only older
 * versions), the jobs a dead daemon left running, the next due job with
 * its attempts; a kind the store does not know reads as unknown.
 */
static void test_job_questions(void **state)
{
	g_autofree char *path = db_path("job-questions.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(GArray) ids = NULL;
	g_autoptr(GPtrArray) jobs = NULL;
	g_autoptr(pk_store_job) job = NULL;
	enum pk_job_state st;
	gint64 v1, v2, other, v3, running, reply, wait = -2, stray;

	assert_int_equal(pk_store_job_add_series(s, &v1, "key-a", 1, "{}", &err), 0);
	assert_int_equal(pk_store_job_add_series(s, &v2, "key-a", 2, "{}", &err), 0);
	assert_int_equal(pk_store_job_add_series(s, &other, "key-b", 1, "{}", &err), 0);
	assert_int_equal(pk_store_job_add_series(s, &running, "key-a", 1, "{}", &err), 0);
	/* v1 and v2 wait with a later not_before: the claim takes the one due */
	raw_exec(path, "UPDATE jobs SET not_before = 5000 WHERE id IN (1, 2, 3)");
	claim_ok(s, &worker_a, 1000, running);
	raw_exec(path, "UPDATE jobs SET not_before = 0 WHERE id IN (1, 2, 3)");
	assert_int_equal(pk_store_job_add_series(s, &v3, "key-a", 3, "{}", &err), 0);
	assert_int_equal(pk_store_job_add_series(s, &stray, NULL, 1, "{}", &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_job_add(s, &stray, PK_JOB_UNKNOWN, "{}", &err), -1);
	g_clear_error(&err);

	assert_int_equal(pk_store_jobs_cancel_superseded(s, "key-a", 3, "superseded by v3", &ids, &err), 0);
	assert_int_equal(ids->len, 2);
	assert_int_equal(g_array_index(ids, gint64, 0), v1);
	assert_int_equal(g_array_index(ids, gint64, 1), v2);
	assert_int_equal(pk_store_job_state(s, v1, &st, &err), 1);
	assert_int_equal(st, PK_JOB_CANCELLED);
	assert_int_equal(pk_store_job_state(s, other, &st, &err), 1);
	assert_int_equal(st, PK_JOB_QUEUED);     /* another series */
	assert_int_equal(pk_store_job_state(s, running, &st, &err), 1);
	assert_int_equal(st, PK_JOB_RUNNING);    /* not waiting: not cancelled */
	assert_int_equal(pk_store_job_state(s, v3, &st, &err), 1);
	assert_int_equal(st, PK_JOB_QUEUED);     /* the newest itself */
	g_clear_pointer(&ids, g_array_unref);
	assert_int_equal(pk_store_jobs_cancel_superseded(s, "key-a", 3, "again", &ids, &err), 0);
	assert_int_equal(ids->len, 0);
	g_clear_pointer(&ids, g_array_unref);

	/* its worker is gone: a worker on the same machine queues it again at once */
	{
		struct pk_store_worker same = worker_b;

		same.machine = worker_a.machine;
		assert_int_equal(pk_store_jobs_requeue_gone(s, &worker_b, "requeued", &ids, &err), 0);
		assert_int_equal(ids->len, 0);   /* another machine: it cannot tell */
		g_clear_pointer(&ids, g_array_unref);
		assert_int_equal(pk_store_jobs_requeue_gone(s, &same, "requeued", &ids, &err), 0);
	}
	assert_int_equal(ids->len, 1);
	assert_int_equal(g_array_index(ids, gint64, 0), running);
	assert_int_equal(pk_store_jobs(s, PK_JOB_CANCELLED, &jobs, &err), 0);
	assert_int_equal(jobs->len, 2);
	assert_int_equal(((struct pk_store_job *)jobs->pdata[0])->kind, PK_JOB_SERIES);
	assert_string_equal(((struct pk_store_job *)jobs->pdata[0])->series_key, "key-a");
	assert_string_equal(((struct pk_store_job *)jobs->pdata[1])->detail, "superseded by v3");
	assert_int_equal(((struct pk_store_job *)jobs->pdata[1])->series_version, 2);
	g_clear_pointer(&jobs, g_ptr_array_unref);

	/* the next due job carries the attempts it had so far */
	assert_int_equal(pk_store_job_next_due(s, PK_JOB_SERIES, 1000, &job, &wait, &err), 1);
	assert_int_equal(job->id, other);
	assert_int_equal(wait, 0);
	g_clear_pointer(&job, pk_store_job_free);
	assert_int_equal(pk_store_job_add(s, &reply, PK_JOB_REPLY, "{\"reply\":1}", &err), 0);
	raw_exec(path, "UPDATE jobs SET not_before = 5000 WHERE state = 'queued' AND kind = 'series'");
	claim_ok(s, &worker_a, 1000, reply);
	raw_exec(path, "UPDATE jobs SET not_before = 0 WHERE state = 'queued' AND kind = 'series'");
	assert_int_equal(pk_store_job_retry_at(s, reply, 900, "server down", &err), 0);
	assert_int_equal(pk_store_job_next_due(s, PK_JOB_REPLY, 1000, &job, NULL, &err), 1);
	assert_int_equal(job->id, reply);
	assert_int_equal(job->attempts, 1);
	assert_int_equal(job->state, PK_JOB_QUEUED);
	g_clear_pointer(&job, pk_store_job_free);
	assert_int_equal(pk_store_job_next_due(s, PK_JOB_UNKNOWN, 1000, &job, NULL, &err), -1);
	g_clear_error(&err);

	/* a kind written by something else is listed, as unknown */
	raw_exec(path, "INSERT INTO jobs (kind, created, updated) VALUES ('test', 1, 1)");
	assert_int_equal(pk_store_jobs(s, PK_JOB_ANY_STATE, &jobs, &err), 0);
	assert_int_equal(jobs->len, 7);
	assert_int_equal(((struct pk_store_job *)jobs->pdata[6])->kind, PK_JOB_UNKNOWN);
	assert_null(((struct pk_store_job *)jobs->pdata[6])->series_key);
}

/* ---- workers and leases ------------------------------------------------- */

/*
 * A claim holds its job under a lease: no other worker claims it while
 * the lease holds (however late), a renewal extends it, and only when it
 * ended does the job go back to the queue.  The late worker then finds
 * its lease lost: its renewal and its result are refused, and the new
 * holder's are written.
 */
static void test_lease(void **state)
{
	g_autofree char *path = db_path("lease.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(GArray) ids = NULL;
	g_autoptr(pk_store_job) job = NULL, none = NULL;
	enum pk_job_state st;
	gint64 id, wait = -2;

	assert_int_equal(pk_store_job_claim(s, &worker_a, PK_JOB_ANY_KIND, 1000, &none, &wait, &err), 0);
	assert_int_equal(wait, -1);   /* nothing queued, nothing running */
	assert_int_equal(pk_store_job_add(s, &id, PK_JOB_SERIES, "{}", &err), 0);
	claim_ok(s, &worker_a, 1000, id);
	/* held: B finds nothing, and is told when A's lease ends (a minute, and one second past it) */
	lease_ends_in(path, id, 30);
	assert_int_equal(pk_store_job_claim(s, &worker_b, PK_JOB_ANY_KIND, 1030, &none, &wait, &err), 0);
	assert_in_range(wait, 30, 31);
	lease_ends_in(path, id, 2);
	assert_int_equal(pk_store_jobs_requeue_expired(s, &ids, &err), 0);
	assert_int_equal(ids->len, 0);   /* ends in 2 s: still held */
	g_clear_pointer(&ids, g_array_unref);
	/* A renews: held for a minute again */
	assert_int_equal(pk_store_job_renew(s, id, &worker_a, &err), 1);
	assert_int_equal(pk_store_job_renew(s, id, &worker_b, &err), 0);   /* not B's */
	assert_true(job_lease_left(s, id) >= LEASE_LEFT_MIN);
	assert_int_equal(pk_store_jobs_requeue_expired(s, &ids, &err), 0);
	assert_int_equal(ids->len, 0);
	g_clear_pointer(&ids, g_array_unref);
	/* A stalls: its lease has ended, the job is queued again and B claims it */
	lease_ends_in(path, id, -2);
	assert_int_equal(pk_store_jobs_requeue_expired(s, &ids, &err), 0);
	assert_int_equal(ids->len, 1);
	assert_int_equal(pk_store_job_state(s, id, &st, &err), 1);
	assert_int_equal(st, PK_JOB_QUEUED);
	claim_ok(s, &worker_b, 1112, id);
	/* A wakes up: its renewal and its result are refused, B's stands */
	assert_int_equal(pk_store_job_renew(s, id, &worker_a, &err), 0);
	assert_int_equal(pk_store_job_end(s, id, &worker_a, PK_JOB_DONE, "late", 0, 1113, &err), 0);
	assert_int_equal(pk_store_job_state(s, id, &st, &err), 1);
	assert_int_equal(st, PK_JOB_RUNNING);
	/* a result after the lease, nobody else holding it yet, is refused too */
	lease_ends_in(path, id, -2);
	assert_int_equal(pk_store_job_end(s, id, &worker_b, PK_JOB_DONE, "too late", 0, 1200, &err), 0);
	lease_ends_in(path, id, 30);
	assert_int_equal(pk_store_job_end(s, id, &worker_b, PK_JOB_DONE, "tested", 0, 1150, &err), 1);
	assert_int_equal(pk_store_job_next_due(s, PK_JOB_ANY_KIND, 1150, &job, NULL, &err), 0);
	assert_int_equal(pk_store_job_state(s, id, &st, &err), 1);
	assert_int_equal(st, PK_JOB_DONE);
	/* attempts: one per claim */
	{
		g_autoptr(GPtrArray) jobs = NULL;
		const struct pk_store_job *j;

		assert_int_equal(pk_store_jobs(s, PK_JOB_DONE, &jobs, &err), 0);
		j = jobs->pdata[0];
		assert_int_equal(j->attempts, 2);
		assert_string_equal(j->detail, "tested");
		assert_null(j->worker);
	}
	/* an end back to the queue keeps its retry time (the workers' clock: when a job is due) */
	assert_int_equal(pk_store_job_add(s, &id, PK_JOB_REPLY, "{}", &err), 0);
	claim_ok(s, &worker_a, 2000, id);
	assert_int_equal(pk_store_job_end(s, id, &worker_a, PK_JOB_QUEUED, "server down", 2500, 2001,
					  &err), 1);
	assert_int_equal(pk_store_job_claim(s, &worker_b, PK_JOB_REPLY, 2002, &none, &wait, &err), 0);
	assert_int_equal(wait, 498);
	claim_ok(s, &worker_b, 2500, id);
	assert_int_equal(pk_store_job_end(s, id, &worker_b, PK_JOB_CANCELLED, NULL, 0, 2501, &err), -1);
	g_clear_error(&err);
}

/*
 * A worker whose clock runs an hour ahead (or behind) of the others and
 * of the database cannot take a live job: leases are written and ended
 * by the database's clock, whatever time a worker passes.  A's clock is
 * an hour behind when it claims (its lease still runs a minute from the
 * database's now), B's an hour ahead when it looks for expired leases
 * and claims: the job stays A's, and A's renewal and result stand.
 */
static void test_lease_skewed_clock(void **state)
{
	g_autofree char *path = db_path("skew.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(GArray) ids = NULL;
	g_autoptr(pk_store_job) none = NULL;
	gint64 id, wait = -2, now = real_now();
	enum pk_job_state st;

	assert_int_equal(pk_store_job_add(s, &id, PK_JOB_SERIES, "{}", &err), 0);
	claim_ok(s, &worker_a, now - 3600, id);
	assert_int_equal(pk_store_jobs_requeue_expired(s, &ids, &err), 0);
	assert_int_equal(ids->len, 0);
	g_clear_pointer(&ids, g_array_unref);
	assert_int_equal(pk_store_job_claim(s, &worker_b, PK_JOB_ANY_KIND, now + 3600, &none, &wait, &err), 0);
	assert_in_range(wait, 59, 61);   /* the lease as the database counts it, not B's hour */
	assert_int_equal(pk_store_job_renew(s, id, &worker_a, &err), 1);
	assert_int_equal(pk_store_job_end(s, id, &worker_a, PK_JOB_DONE, "tested", 0, now - 3599, &err), 1);
	assert_int_equal(pk_store_job_state(s, id, &st, &err), 1);
	assert_int_equal(st, PK_JOB_DONE);
}

/* In a child: claim and end jobs as worker w until none is left, each claimed id on fd. */
static int claim_all(const char *path, int fd, const struct pk_store_worker *w)
{
	g_autoptr(pk_store) s = NULL;
	g_autoptr(GError) err = NULL;
	int rc;

	if (pk_store_open(&s, path, &err) < 0)
		return 2;
	for (;;) {
		g_autoptr(pk_store_job) job = NULL;
		g_autofree char *line = NULL;

		rc = pk_store_job_claim(s, w, PK_JOB_ANY_KIND, 1000, &job, NULL, &err);
		if (rc < 0 && pk_error_transient(err)) {
			g_clear_error(&err);   /* the write lock was held too long: ask again */
			continue;
		}
		if (rc <= 0)
			return rc < 0 ? 3 : 0;
		line = g_strdup_printf("%" G_GINT64_FORMAT " %s\n", job->id, w->name);
		if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
			return 4;
		if (pk_store_job_end(s, job->id, w, PK_JOB_DONE, w->name, 0, 1001, &err) != 1)
			return 5;
	}
}

/*
 * Four processes claim from one SQLite file at once: every job is claimed
 * once, by one of them, and ended by it.
 */
static void test_claim_race(void **state)
{
	enum { N_JOBS = 120, N_WORKERS = 4 };
	g_autofree char *path = db_path("race.db");
	g_autoptr(GError) err = NULL;
	g_autoptr(GString) all = g_string_new(NULL);
	char *seen = g_new0(char, N_JOBS + 1);
	pid_t kids[N_WORKERS];
	int pipefd[2];
	char buf[4096];
	ssize_t n;

	{
		g_autoptr(pk_store) s = open_ok(path);
		gint64 id;

		for (int i = 0; i < N_JOBS; i++)
			assert_int_equal(pk_store_job_add(s, &id, PK_JOB_SERIES, "{}", &err), 0);
	}
	assert_int_equal(pipe(pipefd), 0);
	for (int k = 0; k < N_WORKERS; k++) {
		kids[k] = fork();
		assert_true(kids[k] >= 0);
		if (kids[k] == 0) {
			g_autofree char *name = g_strdup_printf("w%d", k);
			struct pk_store_worker w = { name, "machine", 1000 + k, 60 };

			close(pipefd[0]);
			_exit(claim_all(path, pipefd[1], &w));
		}
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], buf, sizeof buf)) > 0)
		g_string_append_len(all, buf, n);
	close(pipefd[0]);
	for (int k = 0; k < N_WORKERS; k++) {
		int status = 0;

		assert_int_equal(waitpid(kids[k], &status, 0), kids[k]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	{
		g_auto(GStrv) lines = g_strsplit(all->str, "\n", -1);
		g_autoptr(pk_store) s = open_ok(path);
		g_autoptr(GPtrArray) done = NULL;
		guint claims = 0;

		for (char **l = lines; *l && **l; l++, claims++) {
			gint64 id = g_ascii_strtoll(*l, NULL, 10);

			assert_true(id >= 1 && id <= N_JOBS);
			if (seen[id])
				fail_msg("job %" G_GINT64_FORMAT " claimed twice", id);
			seen[id] = 1;
		}
		assert_int_equal(claims, N_JOBS);
		assert_int_equal(pk_store_jobs(s, PK_JOB_DONE, &done, &err), 0);
		assert_int_equal(done->len, N_JOBS);
		for (guint i = 0; i < done->len; i++)
			assert_int_equal(((struct pk_store_job *)done->pdata[i])->attempts, 1);
	}
	g_free(seen);
}

/*
 * A worker killed (kill -9) with a job claimed: another machine's worker
 * cannot tell it is gone, so it takes the job over once the lease ended,
 * and not before; a worker on the killed one's machine sees its process
 * gone and takes the job back at once.
 */
static void test_killed_worker(void **state)
{
	g_autofree char *path = db_path("killed.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(GArray) ids = NULL;
	g_autoptr(pk_store_job) none = NULL;
	gint64 id, second;
	int ready[2], status = 0;
	char c;
	pid_t kid;

	assert_int_equal(pk_store_job_add(s, &id, PK_JOB_SERIES, "{}", &err), 0);
	for (int round = 0; round < 2; round++) {
		gint64 job_id = id;

		if (round) {
			assert_int_equal(pk_store_job_add(s, &second, PK_JOB_SERIES, "{}", &err), 0);
			job_id = second;
		}

		assert_int_equal(pipe(ready), 0);
		kid = fork();
		assert_true(kid >= 0);
		if (kid == 0) {
			struct pk_store_worker w = { "killed", "machine-k", getpid(), 60 };
			g_autoptr(pk_store) mine = NULL;
			g_autoptr(pk_store_job) job = NULL;

			if (pk_store_open(&mine, path, NULL) < 0 ||
			    pk_store_job_claim(mine, &w, PK_JOB_ANY_KIND, 1000, &job, NULL, NULL) != 1)
				_exit(1);
			if (write(ready[1], "x", 1) != 1)
				_exit(1);
			pause();   /* mid-job */
			_exit(0);
		}
		close(ready[1]);
		assert_int_equal(read(ready[0], &c, 1), 1);
		close(ready[0]);
		kill(kid, SIGKILL);
		assert_int_equal(waitpid(kid, &status, 0), kid);
		assert_true(WIFSIGNALED(status));
		if (round == 0) {
			/* another machine: held for its lease, then B takes it over */
			assert_int_equal(pk_store_job_claim(s, &worker_b, PK_JOB_SERIES, 1059, &none, NULL, &err), 0);
			assert_int_equal(pk_store_jobs_requeue_expired(s, &ids, &err), 0);
			assert_int_equal(ids->len, 0);
			g_clear_pointer(&ids, g_array_unref);
			lease_ends_in(path, job_id, -1);   /* a minute later */
			assert_int_equal(pk_store_jobs_requeue_expired(s, &ids, &err), 0);
			assert_int_equal(ids->len, 1);
			g_clear_pointer(&ids, g_array_unref);
			claim_ok(s, &worker_b, 1061, job_id);
			assert_int_equal(pk_store_job_end(s, job_id, &worker_b, PK_JOB_DONE, "ok", 0, 1062, &err), 1);
		} else {
			/* the same machine: its process is gone, taken back at once */
			struct pk_store_worker here = { "here", "machine-k", getpid(), 60 };

			assert_int_equal(pk_store_jobs_requeue_gone(s, &here, NULL, &ids, &err), 0);
			assert_int_equal(ids->len, 1);
			assert_int_equal(g_array_index(ids, gint64, 0), job_id);
			g_clear_pointer(&ids, g_array_unref);
			claim_ok(s, &here, 1001, job_id);
			/* and a live holder of this machine (this process) is not "gone" to another */
			{
				struct pk_store_worker other = { "other", "machine-k", 1, 60 };

				assert_int_equal(pk_store_jobs_requeue_gone(s, &other, NULL, &ids, &err), 0);
				assert_int_equal(ids->len, 0);
				g_clear_pointer(&ids, g_array_unref);
			}
		}
	}
}

/*
 * The daemon's mail side, on each backend: a mail stored once (raw bytes
 * kept, a 0xff among them), found, listed by state, moved; its
 * reply found three ways and sent once; how far a source was read.
 */
static void test_mails_and_replies(void **state)
{
	g_autofree char *path = db_path("mails.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	static const char raw[] = "From: a@b\r\nSubject: x\r\n\r\nbody \xff tail\r\n";
	struct pk_store_mail m = { .message_id = "m1@x", .subject = "[PATCH] x", .version = 2,
				   .number = 1, .total = 1, .churn = 3, .state = "pending" };
	struct pk_store_reply r = { .message_id = "reply1@bot", .sender = "bot@x",
				    .recipients = "a@b\nlist@x", .text = "reply text\r\n" };
	g_autoptr(GPtrArray) pending = NULL;
	g_autofree char *back = NULL, *value = NULL;
	struct pk_store_mail *got = NULL;
	struct pk_store_reply *rep = NULL;
	gint64 mail, again, found, reply, source;
	bool existed = true;
	size_t len = 0;

	assert_int_equal(pk_store_add_source(s, &source, "maildir", "local", NULL, &err), 0);
	m.source_id = source;
	assert_int_equal(pk_store_mail_add(s, &mail, &existed, &m, raw, sizeof(raw) - 1, &err), 0);
	assert_false(existed);
	assert_int_equal(pk_store_mail_add(s, &again, &existed, &m, NULL, 0, &err), 0);
	assert_true(existed);
	assert_int_equal(again, mail);
	assert_int_equal(pk_store_mail_find(s, "<m1@x>", &found, &err), 1);
	assert_int_equal(found, mail);
	assert_int_equal(pk_store_mail_raw(s, mail, &back, &len, &err), 1);
	assert_int_equal(len, sizeof(raw) - 1);
	assert_memory_equal(back, raw, len);
	assert_int_equal(pk_store_mails(s, "pending", &pending, &err), 0);
	assert_int_equal(pending->len, 1);
	assert_int_equal(pk_store_mail_set_state(s, mail, "skipped", "not a patch", 0, &err), 0);
	assert_int_equal(pk_store_mail_get(s, mail, &got, &err), 1);
	assert_string_equal(got->state, "skipped");
	assert_string_equal(got->reason, "not a patch");
	assert_int_equal(got->version, 2);
	assert_int_equal(got->churn, 3);
	pk_store_mail_free(got);
	g_clear_pointer(&back, g_free);
	assert_int_equal(pk_store_mail_raw(s, mail, &back, &len, &err), 0);   /* skipped: dropped */

	r.mail_id = mail;
	assert_int_equal(pk_store_reply_add(s, &reply, &r, &err), 0);
	assert_int_equal(pk_store_reply_add(s, &again, &r, &err), -1);   /* one reply a mail */
	g_clear_error(&err);
	assert_int_equal(pk_store_reply_for_mail(s, mail, &rep, &err), 1);
	assert_int_equal(rep->id, reply);
	assert_int_equal(rep->sent, 0);
	pk_store_reply_free(rep);
	assert_int_equal(pk_store_reply_sent(s, reply, 1234, &err), 0);
	assert_int_equal(pk_store_reply_by_message_id(s, "reply1@bot", &rep, &err), 1);
	assert_int_equal(rep->sent, 1234);
	assert_string_equal(rep->recipients, "a@b\nlist@x");
	pk_store_reply_free(rep);
	assert_int_equal(pk_store_reply_get(s, reply + 1, &rep, &err), 0);

	assert_int_equal(pk_store_source_state_set(s, source, "uidnext", "41", &err), 0);
	assert_int_equal(pk_store_source_state_set(s, source, "uidnext", "42", &err), 0);
	assert_int_equal(pk_store_source_state_get(s, source, "uidnext", &value, &err), 1);
	assert_string_equal(value, "42");
}

/* A pending mail of author with a Message-ID, stored: its id. */
static gint64 add_mail(struct pk_store *s, const char *message_id, const char *author)
{
	struct pk_store_mail m = { .message_id = (char *)message_id, .subject = "[PATCH] x", .author_email = (char *)author,
				   .version = 1, .number = 1, .total = 1, .state = "pending" };
	gint64 id;

	assert_int_equal(pk_store_mail_add(s, &id, NULL, &m, "x", 1, NULL), 0);
	return id;
}

/*
 * What the lists' policy keeps of each reply, on each backend: the rows
 * a brake counts (by list, a list of no group too, and by author, in the
 * last 24 hours, a mail and nothing held), the first mailed reply of an
 * effect, a reply job that waits (not before its time, keyed by its
 * series) replaced by a later version or a resend and its row held, and
 * the newer series job a due mail asks about.
 */
static void test_reply_policy_rows(void **state)
{
	g_autofree char *path = db_path("policy.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(GArray) ids = NULL;
	g_autoptr(GPtrArray) figures = NULL;
	struct pk_store_reply *got = NULL;
	struct pk_store_job *job = NULL;
	gint64 now = g_get_real_time() / G_USEC_PER_SEC, n = -1, r1, r2, r3, r4, j1, j2, series1, series2, newer = 0;
	struct pk_store_reply a = { .mail_id = add_mail(s, "a@x", "jane@x"), .message_id = "ra@bot", .text = "t",
				    .list_name = "list l", .author = "jane@x", .effect = "E1", .rule = "console-changed" };
	struct pk_store_reply b = { .mail_id = add_mail(s, "b@x", "jane@x"), .message_id = "rb@bot", .text = "t",
				    .list_name = "list l", .author = "jane@x", .effect = "E2", .rule = "console-changed",
				    .created = now - 25 * 3600 };
	struct pk_store_reply c = { .mail_id = add_mail(s, "c@x", "joe@x"), .list_name = "list l", .author = "joe@x",
				    .effect = "E1", .rule = "does-not-apply", .held = "the bot's limit" };
	struct pk_store_reply d = { .mail_id = add_mail(s, "d@x", "joe@x"), .message_id = "rd@bot", .text = "t",
				    .author = "joe@x", .effect = "E3", .rule = "console-changed" };

	assert_int_equal(pk_store_reply_add(s, &r1, &a, &err), 0);
	assert_int_equal(pk_store_reply_add(s, &r2, &b, &err), 0);
	assert_int_equal(pk_store_reply_add(s, &r3, &c, &err), 0);
	assert_int_equal(pk_store_reply_add(s, &r4, &d, &err), 0);
	/* the brakes: b is older than a day, c held; d is of no group */
	assert_int_equal(pk_store_replies_mailed_since(s, "list l", NULL, now - 24 * 3600, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pk_store_replies_mailed_since(s, "list l", "joe@x", now - 24 * 3600, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(pk_store_replies_mailed_since(s, NULL, NULL, now - 24 * 3600, &n, &err), 0);
	assert_int_equal(n, 1);
	/* once per change: jane's E1 was mailed; joe's E1 was held, so it is no earlier mail */
	assert_int_equal(pk_store_reply_same_effect(s, "jane@x", "E1", &got, &err), 1);
	assert_int_equal(got->id, r1);
	assert_string_equal(got->list_name, "list l");
	assert_string_equal(got->rule, "console-changed");
	assert_true(got->created >= now);
	pk_store_reply_free(got);
	assert_int_equal(pk_store_reply_same_effect(s, "joe@x", "E1", &got, &err), 0);

	/* an embargo: a's mail waits in its job, keyed by its series (v1) */
	assert_int_equal(pk_store_job_add_series(s, &series1, "jane\x1ftitle", 1, "{}", &err), 0);
	assert_int_equal(pk_store_job_add_reply(s, &j1, "jane\x1ftitle", 1, now + 3600, "{\"reply\":1}", &err), 0);
	assert_int_equal(pk_store_reply_set_send_job(s, r1, j1, &err), 0);
	assert_int_equal(pk_store_job_add_reply(s, &j2, NULL, 0, 0, "{\"reply\":4}", &err), 0);
	assert_int_equal(pk_store_job_get(s, j1, &job, &err), 1);
	assert_int_equal(job->not_before, now + 3600);
	assert_string_equal(job->series_key, "jane\x1ftitle");
	pk_store_job_free(job);
	/* not due: the other reply job is */
	assert_int_equal(pk_store_job_next_due(s, PK_JOB_REPLY, now, &job, NULL, &err), 1);
	assert_int_equal(job->id, j2);
	pk_store_job_free(job);
	/* no newer series yet; then a v2 is queued, and replaces the mail still waiting */
	assert_int_equal(pk_store_job_newer_series(s, "jane\x1ftitle", 1, series1, &newer, &err), 0);
	assert_int_equal(pk_store_job_add_series(s, &series2, "jane\x1ftitle", 2, "{}", &err), 0);
	assert_int_equal(pk_store_job_newer_series(s, "jane\x1ftitle", 1, series1, &newer, &err), 1);
	assert_int_equal(newer, series2);
	assert_int_equal(pk_store_replies_replace_waiting(s, "jane\x1ftitle", 2, "replaced by v2", &ids, &err), 0);
	assert_int_equal(ids->len, 1);
	assert_int_equal(g_array_index(ids, gint64, 0), j1);
	assert_int_equal(pk_store_job_get(s, j1, &job, &err), 1);
	assert_int_equal(job->state, PK_JOB_CANCELLED);
	pk_store_job_free(job);
	assert_int_equal(pk_store_reply_get(s, r1, &got, &err), 1);
	assert_string_equal(got->held, "replaced by v2");
	assert_int_equal(got->send_job, j1);
	pk_store_reply_free(got);
	/* held now: no longer the mail of E1, nor counted by the brake */
	assert_int_equal(pk_store_reply_same_effect(s, "jane@x", "E1", &got, &err), 0);
	assert_int_equal(pk_store_replies_mailed_since(s, "list l", NULL, now - 24 * 3600, &n, &err), 0);
	assert_int_equal(n, 0);
	/* another series' key, or a version below the waiting one's, replaces nothing */
	g_clear_pointer(&ids, g_array_unref);
	assert_int_equal(pk_store_replies_replace_waiting(s, "other", 9, "x", &ids, &err), 0);
	assert_int_equal(ids->len, 0);
	assert_int_equal(pk_store_reply_hold(s, r4, "by hand", &err), 0);

	/* monitoring's figures: by list, rule and whether mailed */
	assert_int_equal(pk_store_reply_figures(s, &figures, &err), 0);
	/* a held and b mailed are two rows of one list and rule */
	assert_int_equal(figures->len, 4);
	for (guint i = 0; i < figures->len; i++) {
		const struct pk_store_reply_figure *f = figures->pdata[i];

		assert_int_equal(f->count, 1);
		if (!strcmp(f->list, ""))
			assert_true(!strcmp(f->rule, "console-changed") && !f->mailed);
		else if (!strcmp(f->rule, "does-not-apply"))
			assert_false(f->mailed);
		else
			assert_string_equal(f->rule, "console-changed");
	}
}

/*
 * Pushes to a watched branch: the tip moved by compare and set (one of
 * two workers that saw the same move), a push and its commits, what
 * became of each, a commit found by its patch key, and the mail about a
 * commit as a reply without a mail, sent once like any.
 */
static void test_pushes(void **state)
{
	g_autofree char *path = db_path("pushes.db");
	g_autoptr(pk_store) s = open_ok(path);
	g_autoptr(GError) err = NULL;
	g_autoptr(GPtrArray) commits = g_ptr_array_new(), got = NULL, pushes = NULL;
	g_autoptr(pk_store_push) push = NULL;
	g_autofree char *tip = NULL;
	struct pk_store_push_commit a = { .commit_id = "aaaa", .parent = "0000", .subject = "a: one",
					  .author = "Jane <jane@x>", .committer = "Max <max@x>" };
	struct pk_store_push_commit m = { .commit_id = "mmmm", .parent = "aaaa", .state = "merge",
					  .reason = "merge" };
	struct pk_store_push_commit b = { .commit_id = "bbbb", .parent = "mmmm", .subject = "b: two" };
	struct pk_store_push p = { .tree = "lab", .branch = "main", .old_tip = "0000", .new_tip = "bbbb",
				   .left_out = 2, .note = "2 older commits were not tested" };
	struct pk_store_push_commit *c = NULL, done = { 0 };
	struct pk_store_reply r = { .message_id = "report1@bot", .sender = "bot@x",
				    .recipients = "jane@x\nmax@x", .text = "report\r\n" };
	gint64 source, id, job, reply, again;

	assert_int_equal(pk_store_add_source(s, &source, "git", "lab/main", "git://x/lab.git", &err), 0);
	/* first sight: no tip, set; a second worker that saw none refused */
	assert_int_equal(pk_store_source_state_swap(s, source, "tip", NULL, "0000", &err), 1);
	assert_int_equal(pk_store_source_state_swap(s, source, "tip", NULL, "0000", &err), 0);
	assert_int_equal(pk_store_source_state_swap(s, source, "tip", "1111", "bbbb", &err), 0);
	assert_int_equal(pk_store_source_state_swap(s, source, "tip", "0000", "bbbb", &err), 1);
	assert_int_equal(pk_store_source_state_get(s, source, "tip", &tip, &err), 1);
	assert_string_equal(tip, "bbbb");
	/* deleted: no value, and a branch seen again starts as new */
	assert_int_equal(pk_store_source_state_swap(s, source, "tip", "bbbb", NULL, &err), 1);
	assert_int_equal(pk_store_source_state_swap(s, source, "tip", NULL, "cccc", &err), 1);

	p.source_id = source;
	g_ptr_array_add(commits, &a);
	g_ptr_array_add(commits, &m);
	g_ptr_array_add(commits, &b);
	assert_int_equal(pk_store_push_add(s, &id, &p, commits, &err), 0);
	assert_int_equal(pk_store_job_add(s, &job, PK_JOB_PUSH, "{\"push\":1}", &err), 0);
	assert_int_equal(pk_store_push_set_job(s, id, job, &err), 0);
	assert_int_equal(pk_store_push_get(s, id, &push, &got, &err), 1);
	assert_string_equal(push->tree, "lab");
	assert_string_equal(push->new_tip, "bbbb");
	assert_int_equal(push->commits, 3);
	assert_int_equal(push->left_out, 2);
	assert_string_equal(push->job_state, "queued");
	assert_int_equal(got->len, 3);
	c = got->pdata[0];
	assert_int_equal(c->seq, 1);
	assert_string_equal(c->state, "queued");
	assert_string_equal(c->committer, "Max <max@x>");
	assert_string_equal(((struct pk_store_push_commit *)got->pdata[1])->state, "merge");

	/* tested: found by its key; the one taken from it is not found by the key */
	assert_int_equal(pk_store_push_commit_by_key(s, "pid tree", &c, &err), 0);
	done = (struct pk_store_push_commit){ .id = ((struct pk_store_push_commit *)got->pdata[0])->id,
					      .state = "tested", .patch_key = "pid tree",
					      .verdict = "console-changed" };
	assert_int_equal(pk_store_push_commit_set(s, &done, &err), 0);
	done.id = ((struct pk_store_push_commit *)got->pdata[2])->id;
	done.state = "tested-before";
	done.same_as = ((struct pk_store_push_commit *)got->pdata[0])->id;
	assert_int_equal(pk_store_push_commit_set(s, &done, &err), 0);
	assert_int_equal(pk_store_push_commit_by_key(s, "pid tree", &c, &err), 1);
	assert_string_equal(c->commit_id, "aaaa");
	assert_null(c->mail_message_id);
	done.state = "no-such-state";
	assert_int_equal(pk_store_push_commit_set(s, &done, &err), -1);
	g_clear_error(&err);

	/* the mail about it: a reply with no mail, one per commit */
	r.push_commit_id = c->id;
	assert_int_equal(pk_store_reply_add(s, &reply, &r, &err), 0);
	assert_int_equal(pk_store_reply_add(s, &again, &r, &err), -1);
	g_clear_error(&err);
	pk_store_push_commit_free(c);
	assert_int_equal(pk_store_reply_sent(s, reply, 99, &err), 0);
	assert_int_equal(pk_store_push_commit_by_key(s, "pid tree", &c, &err), 1);
	assert_string_equal(c->mail_message_id, "report1@bot");
	assert_int_equal(c->mail_sent, 99);
	pk_store_push_commit_free(c);
	{
		struct pk_store_reply *back = NULL;

		assert_int_equal(pk_store_reply_by_message_id(s, "report1@bot", &back, &err), 1);
		assert_int_equal(back->mail_id, 0);
		assert_int_equal(back->push_commit_id, r.push_commit_id);
		pk_store_reply_free(back);
	}

	/* newest first, by tree or branch */
	p.old_tip = "bbbb";
	p.new_tip = NULL;
	assert_int_equal(pk_store_push_add(s, &again, &p, NULL, &err), 0);
	assert_int_equal(pk_store_pushes(s, "lab/main", 0, &pushes, &err), 0);
	assert_int_equal(pushes->len, 2);
	assert_int_equal(((struct pk_store_push *)pushes->pdata[0])->id, again);
	assert_null(((struct pk_store_push *)pushes->pdata[0])->new_tip);
	g_clear_pointer(&pushes, g_ptr_array_unref);
	assert_int_equal(pk_store_pushes(s, "lab", 1, &pushes, &err), 0);
	assert_int_equal(pushes->len, 1);
	g_clear_pointer(&pushes, g_ptr_array_unref);
	assert_int_equal(pk_store_pushes(s, "net", 0, &pushes, &err), 0);
	assert_int_equal(pushes->len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs),
		cmocka_unit_test(test_job_names),
		cmocka_unit_test(test_job_questions),
		cmocka_unit_test(test_lease),
		cmocka_unit_test(test_lease_skewed_clock),
		cmocka_unit_test(test_claim_race),
		cmocka_unit_test(test_killed_worker),
		cmocka_unit_test(test_worker_arches),
		cmocka_unit_test(test_mails_and_replies),
		cmocka_unit_test(test_pushes),
		cmocka_unit_test(test_reply_policy_rows),
	};

	/* all of it on PostgreSQL too: the claim race is FOR UPDATE SKIP LOCKED's test there */
	return run_both(tests, tests, setup, teardown);
}
