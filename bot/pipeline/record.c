/* record.c - keep a tested patch and its review in the store, all or nothing. */
#include "pipeline/test.h"
#include "base/profile.h"

#include "store/store.h"

/*
 * The patch, its findings, the after side's build and boot unless they have
 * ids already, and the test with its changes; the before side was stored
 * when it was made.
 */
static int store_test(struct pk_store *store, gint64 *out_test_id, const struct pk_patch *patch,
		      gint64 source_id, const struct pk_test_result *res, const char *config_hash,
		      GError **err)
{
	struct pk_store_patch_opts popts = PK_STORE_PATCH_OPTS_INIT;
	struct pk_store_test test = { 0 };
	const struct pk_test_side *a = &res->after;
	g_autofree const char **conf = NULL;
	gint64 patch_id;

	popts.source_id = source_id;
	popts.commit = res->patch ? a->commit : NULL;   /* a commit tested by pk_test_commit() */
	if (pk_store_add_patch(store, &patch_id, NULL, patch, &popts, err) < 0 ||
	    pk_store_add_findings(store, patch_id, res->scan, err) < 0)
		return -1;
	test.patch_id = patch_id;
	test.before_build = res->before.build_id;
	test.before_boot = res->before.boot_id;
	test.after_build = a->build_id;
	test.after_boot = a->boot_id;
	if (a->build_tried && !a->build_id &&
	    pk_store_add_build(store, &test.after_build, a->commit, res->before.commit, config_hash,
			       pk_test_arch(res)->name, &a->build, err) < 0)
		return -1;
	if (a->booted && !a->boot_id &&
	    pk_store_add_boot(store, &test.after_boot, test.after_build, &a->boot, err) < 0)
		return -1;
	test.verdict = res->verdict;
	test.reason = res->reason;
	test.seconds = res->seconds;
	test.diff = res->diff;
	test.coverage = res->coverage;
	if (res->confirmations) {
		conf = g_new0(const char *, res->confirmations->len + 1);
		for (guint i = 0; i < res->confirmations->len; i++)
			conf[i] = pk_confirmation_name(g_array_index(res->confirmations, enum pk_confirmation, i));
		test.confirmations = conf;
		test.n_confirmations = res->confirmations->len;
	}
	return pk_store_add_test(store, out_test_id, &test, err);
}

int pk_test_record(struct pk_store *store, gint64 *out_review_id, const struct pk_test_result *res,
		   const struct pk_test_record_info *info, GError **err)
{
	PK_PROFILE_SCOPE("store");
	const struct pk_patch *patch = info->patch ? info->patch : res->patch;
	gint64 test_id;

	/* a savepoint when the caller holds a transaction (the daemon adds the reply to it) */
	if (pk_store_begin(store, err) < 0)
		return -1;
	if (store_test(store, &test_id, patch, info->source_id, res,
		       res->config_hash ? res->config_hash : info->config_hash, err) < 0 ||
	    pk_store_add_review(store, out_review_id, test_id, info->model_json, info->review_text, err) < 0 ||
	    pk_store_commit(store, err) < 0) {
		pk_store_rollback(store);
		return -1;
	}
	return 0;
}
