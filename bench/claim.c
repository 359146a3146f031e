/*
 * claim.c - what a worker pays to ask an empty queue for a job, for
 * bench/workers.sh: ROUNDS calls of pk_store_job_claim() on a store with
 * no queued job (SQLite file or PostgreSQL URL), each timed; prints the
 * median, the 99th percentile and the mean in ms.
 *
 * usage: claim DB [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "store/queue.h"
#include "base/util.h"

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(pk_store) store = NULL;
	struct pk_store_worker w = { "bench:1", "bench", getpid(), 60 };
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 1000;
	double *ms, sum = 0;

	if (argc < 2 || !rounds) {
		fprintf(stderr, "usage: claim DB [ROUNDS]\n");
		return 2;
	}
	if (pk_store_open(&store, argv[1], &err) < 0) {
		fprintf(stderr, "claim: %s\n", err->message);
		return 1;
	}
	ms = g_new(double, rounds);
	for (unsigned i = 0; i < rounds; i++) {
		struct pk_store_job *job = NULL;
		gint64 wait;
		double t = pk_now();
		int rc = pk_store_job_claim(store, &w, PK_JOB_ANY_KIND, (gint64)time(NULL), &job, &wait, &err);

		ms[i] = (pk_now() - t) * 1000;
		if (rc != 0) {
			fprintf(stderr, "claim: %s\n", rc < 0 ? err->message : "the queue is not empty");
			return 1;
		}
		sum += ms[i];
	}
	qsort(ms, rounds, sizeof *ms, by_value);
	printf("%u claims of an empty queue: median %.3f ms, p99 %.3f ms, mean %.3f ms\n", rounds,
	       ms[rounds / 2], ms[rounds * 99 / 100], sum / rounds);
	g_free(ms);
	return 0;
}
