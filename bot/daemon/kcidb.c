/*
 * kcidb.c - the daemon posts the reviews of each job to [kcidb] url as
 * one KCIDB document (report/kcidb.h), after the job, outside its
 * transaction: a post that fails is logged and the job is not held back
 * (`printkbot report --kcidb` sends what was missed).
 */
#include "daemon/private.h"
#include "daemon/log.h"
#include "base/util.h"
#include "report/kcidb.h"
#include "store/store.h"

/*
 * Where the job's reviews will start: the store's newest review now, or
 * -1 when nothing is to be posted (no url) or the store could not say.
 */
gint64 daemon_kcidb_mark(struct pk_daemon *d)
{
	g_autoptr(GError) err = NULL;
	gint64 last;

	if (!d->config.kcidb.url)
		return -1;
	if (pk_store_review_last(d->store, &last, &err) < 0) {
		daemon_log(0, NULL, "kcidb: the reviews to post are not known: %s", err->message);
		return -1;
	}
	return last;
}

/*
 * Post the reviews stored since mark (daemon_kcidb_mark()).  With several
 * workers on one store, another's review stored meanwhile is posted too:
 * ids name each object whoever sends it, and KCIDB merges objects by id.
 */
void daemon_kcidb_post(struct pk_daemon *d, gint64 job_id, gint64 mark)
{
	const struct pk_kcidb_config *k = &d->config.kcidb;
	g_autoptr(GArray) ids = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *doc = NULL, *shown = NULL;
	long status = 0;

	if (mark < 0 || !k->url)
		return;
	shown = pk_url_redact(k->url);
	if (pk_store_reviews_after(d->store, mark, &ids, &err) < 0) {
		daemon_log(job_id, NULL, "kcidb: not posted: %s", err->message);
		return;
	}
	if (!ids->len)
		return;
	if (!(doc = pk_kcidb_export(d->store, k->origin, ids, &err)) ||
	    pk_kcidb_post(k->url, k->token, k->timeout, doc, &status, &err) < 0) {
		daemon_log(job_id, NULL, "kcidb: %u review(s) not posted to %s: %s", ids->len, shown, err->message);
		return;
	}
	daemon_log(job_id, NULL, "kcidb: %u review(s) posted to %s (HTTP %ld), the first %" G_GINT64_FORMAT,
		   ids->len, shown, status, g_array_index(ids, gint64, 0));
}
