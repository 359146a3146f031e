/*
 * test-queue.c - the store's job queue: the states a job goes through and
 * the moves allowed between them, the names of states and kinds, and the
 * questions the daemon asks in one call (which jobs a newer series
 * supersedes, which a dead daemon left running, the next due job).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "store-fixture.h"

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
	assert_int_equal(pk_store_job_set_state(s, a, PK_JOB_RUNNING, NULL, &err), 0);
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
	assert_int_equal(pk_store_job_set_state(s, 99, PK_JOB_RUNNING, NULL, &err), -1);
	g_clear_error(&err);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_RUNNING, NULL, &err), 0);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_FAILED, "boot timed out", &err), 0);
	assert_int_equal(pk_store_job_set_state(s, b, PK_JOB_QUEUED, NULL, &err), 0);
	assert_int_equal(pk_store_job_state(s, 99, &st, &err), 0);
}

/* The names of states and kinds: each enum value and its word, both ways. */
static void test_job_names(void **state)
{
	static const struct { enum pk_job_state state; const char *name; } states[] = {
		{ PK_JOB_QUEUED, "queued" }, { PK_JOB_RUNNING, "running" }, { PK_JOB_DONE, "done" },
		{ PK_JOB_FAILED, "failed" }, { PK_JOB_CANCELLED, "cancelled" },
	};
	static const struct { enum pk_job_kind kind; const char *name; } kinds[] = {
		{ PK_JOB_SERIES, "series" }, { PK_JOB_REPLY, "reply" },
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
	assert_int_equal(pk_store_job_set_state(s, running, PK_JOB_RUNNING, NULL, &err), 0);
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

	assert_int_equal(pk_store_jobs_requeue_running(s, "requeued", &ids, &err), 0);
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
	assert_int_equal(pk_store_job_set_state(s, reply, PK_JOB_RUNNING, NULL, &err), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs),
		cmocka_unit_test(test_job_names),
		cmocka_unit_test(test_job_questions),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
