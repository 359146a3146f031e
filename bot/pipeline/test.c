/*
 * test.c - one patch through the whole pipeline; see test.h.
 */
#include "pipeline/private.h"
#include "base/profile.h"
#include "base/proc.h"

#include <string.h>

#include "lab/apply.h"
#include "lab/coverage.h"
#include "lab/kconfig.h"
#include "lab/repo.h"
#include "store/store.h"
#include "base/util.h"

/*
 * Boots of the base used to learn its noise.  Two boots only show what
 * differs between two runs; a record that varies now and then (a timer
 * figure that rounds the same way twice) slips through, and each further
 * boot costs ~2 s under TCG.  Three catches what we have seen vary on
 * these machines (clock calibration, rcu and workqueue timings) at 6 s
 * once per base and config.
 */
#define NOISE_BOOTS 3

/* Console lines kept from a failed boot. */
#define CONSOLE_TAIL_LINES 30

void pk_test_result_clear(struct pk_test_result *res)
{
	g_free(res->reason);
	pk_scan_free(res->scan);
	pk_test_side_clear(&res->before);
	pk_test_side_clear(&res->after);
	pk_kdiff_free(res->diff);
	if (res->confirmations)
		g_array_unref(res->confirmations);
	pk_patch_free(res->patch);
	g_free(res->noise_commit);
	if (res->unstable)
		g_ptr_array_unref(res->unstable);
	if (res->coverage)
		g_ptr_array_unref(res->coverage);
	g_free(res->config_hash);
	g_free(res->left_out);
	g_free(res->arch_why);
	g_free(res->elsewhere);
	pk_derived_clear(&res->derived);
	pk_monitor_check_free(res->monitor);
	if (res->relinked) {
		pk_test_result_clear(res->relinked);
		g_free(res->relinked);
	}
	memset(res, 0, sizeof *res);
}


/* The last n lines of a console log (caller frees). */
static char *console_tail(const char *console, unsigned n)
{
	const char *end, *p;

	if (!console || !*console)
		return NULL;
	end = console + strlen(console);
	p = end;
	while (p > console && n) {
		p--;
		if (*p == '\n' && p + 1 < end)
			n--;
	}
	if (*p == '\n')
		p++;
	return g_strdup(p);
}

/* Boot side s's kernel, as its build left it, once into *out. */
static int boot_side(struct pk_test_side *s, const struct pk_lab *lab, const struct pk_test_opts *opts,
		     struct pk_boot_result *out, GError **err)
{
	return pk_pipeline_boot(s, lab, opts, s->build.vmlinux, "booting", out, err);
}

/* Keep boot as side s's boot (the one compared), with the console tail of a failure. */
static void side_take_boot(struct pk_test_side *s, struct pk_boot_result *boot)
{
	pk_boot_result_clear(&s->boot);
	s->boot = *boot;
	memset(boot, 0, sizeof *boot);
	g_clear_pointer(&s->console_tail, g_free);
	if (s->boot.status != PK_BOOT_OK)
		s->console_tail = console_tail(s->boot.console, CONSOLE_TAIL_LINES);
}

/* Side s (s->commit set) from the store: 1 when it was there, with its noise mask if it has one. */
static int side_from_store(struct pk_test_side *s, const struct pk_lab *lab, struct pk_store *store,
			   struct pk_noise **out_noise, unsigned *out_noise_boots, GError **err)
{
	PK_PROFILE_SCOPE("store");
	g_auto(GStrv) keys = NULL;
	g_autoptr(GArray) boots = NULL;
	int found;

	if ((found = pk_store_find_build(store, s->commit, lab->config_hash, &s->build_id, err)) <= 0)
		return found;
	if ((found = pk_store_find_boot(store, s->commit, lab->config_hash, &s->boot_id, err)) <= 0)
		return found;
	if (pk_store_get_noise(store, s->build_id, &keys, err) < 0 ||
	    pk_store_build_boots(store, s->build_id, &boots, err) < 0 ||
	    pk_store_load_capture(store, s->boot_id, &s->boot.capture, err) < 0)
		return -1;
	s->cached = s->build_tried = s->build.ok = s->booted = true;
	s->boot.status = PK_BOOT_OK;
	*out_noise = keys ? pk_noise_from_keys((const char *const *)keys) : NULL;
	*out_noise_boots = boots->len;
	return 1;
}

/* The before side from the store: 1 when it was there, with its noise mask. */
static int before_from_store(struct pk_test_result *res, const struct pk_lab *lab, struct pk_store *store,
			     struct pk_noise **out_noise, GError **err)
{
	return side_from_store(&res->before, lab, store, out_noise, &res->noise_boots, err);
}

/* Store a side's build (the base's, or a commit's as it is) and every boot of it, and the mask learnt from them. */
static int before_to_store(struct pk_test_side *s, const struct pk_lab *lab, struct pk_store *store,
			   struct pk_boot_result *boots, unsigned n, const struct pk_noise *noise,
			   GError **err)
{
	PK_PROFILE_SCOPE("store");
	g_auto(GStrv) keys = noise ? pk_noise_keys(noise) : NULL;

	if (pk_store_begin(store, err) < 0)
		return -1;
	if (pk_store_add_build(store, &s->build_id, s->commit, s->commit, lab->config_hash, pk_lab_arch(lab)->name,
			       &s->build, err) < 0)
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		gint64 id;
		if (pk_store_add_boot(store, &id, s->build_id, &boots[i], err) < 0)
			goto fail;
		/* the boot the side keeps: the first, or the one that failed */
		if (i == 0 || (i == n - 1 && boots[i].status != PK_BOOT_OK))
			s->boot_id = id;
	}
	if (keys && pk_store_set_noise(store, s->build_id, (const char *const *)keys, n, err) < 0)
		goto fail;
	return pk_store_commit(store, err);
fail:
	pk_store_rollback(store);
	return -1;
}

/*
 * Check out s->commit, build it and boot it n times (at most NOISE_BOOTS;
 * the boots end at the first that fails); with n >= 2 boots that all
 * went well, the noise mask is learnt from them.  Everything is stored
 * when store is not NULL.  s keeps the first boot, or the one that failed.
 */
static int build_and_boot(struct pk_test_side *s, const struct pk_lab *lab, struct pk_store *store,
			  const struct pk_test_opts *opts, unsigned n_boots, struct pk_noise **out_noise,
			  unsigned *out_noise_boots, GError **err)
{
	struct pk_boot_result boots[NOISE_BOOTS] = { 0 };
	struct pk_noise *noise = NULL;
	unsigned n = 0;
	int rc = -1;

	if (pk_repo_checkout(lab, s->commit, err) < 0 || pk_pipeline_build(s, lab, opts, err) < 0)
		goto out;
	while (s->build.ok && n < MIN(n_boots, NOISE_BOOTS)) {
		if (boot_side(s, lab, opts, &boots[n], err) < 0)
			goto out;
		if (boots[n++].status != PK_BOOT_OK)
			break;
	}
	if (n >= 2 && boots[n - 1].status == PK_BOOT_OK) {
		const struct pk_capture *caps[NOISE_BOOTS];
		for (unsigned i = 0; i < n; i++)
			caps[i] = boots[i].capture;
		noise = pk_noise_learn(caps, n);
	}
	if (store && before_to_store(s, lab, store, boots, n, noise, err) < 0)
		goto out;
	/* compare against the first boot; report the one that failed, if any did */
	if (n)
		side_take_boot(s, &boots[boots[n - 1].status != PK_BOOT_OK ? n - 1 : 0]);
	if (noise) {
		*out_noise = g_steal_pointer(&noise);
		*out_noise_boots = n;
	}
	rc = 0;
out:
	for (unsigned i = 0; i < n; i++)
		pk_boot_result_clear(&boots[i]);
	pk_noise_free(noise);
	return rc;
}

static int stored_mask(struct pk_store *store, const struct pk_lab *lab, const char *commit,
		       struct pk_noise **out, unsigned *out_boots, char **out_commit, GError **err);

/*
 * The before side: from the store when this commit was built and booted
 * with this config before, else built, booted NOISE_BOOTS times (the noise
 * mask learnt from those boots) and stored.
 */
static int prepare_before(struct pk_test_result *res, const struct pk_lab *lab, struct pk_store *store,
			  const struct pk_test_opts *opts, struct pk_noise **out_noise, GError **err)
{
	struct pk_noise *unused = NULL;
	unsigned unused_boots = 0;
	int found;

	if (store && (found = before_from_store(res, lab, store, out_noise, err)) != 0)
		return found < 0 ? -1 : 0;
	/*
	 * A series' parent applied but never built (a patch without churn
	 * before it) boots once: the base's stored mask serves, as noise comes
	 * from the machine, not the commit.
	 */
	found = store ? stored_mask(store, lab, opts->noise_base ? opts->noise_base : PK_LAB_BASE_TAG,
				    out_noise, &res->noise_boots, &res->noise_commit, err) : 0;
	if (found < 0)
		return -1;
	if (found)
		return build_and_boot(&res->before, lab, store, opts, 1, &unused, &unused_boots, err);
	return build_and_boot(&res->before, lab, store, opts, NOISE_BOOTS, out_noise, &res->noise_boots, err);
}

/*
 * The after side: the patched commit is checked out already; build and
 * boot it once.  A boot that never ended, with nothing cut at a limit
 * (a flood is the kernel's own doing), is booted once more before it
 * counts: a guest the host starved can miss its timeout on a busy
 * machine, and one boot-failed it does not deserve costs more than a
 * boot.  The review says so either way (s->timed_out).
 */
static int prepare_after(struct pk_test_result *res, const struct pk_lab *lab,
			 const struct pk_test_opts *opts, GError **err)
{
	struct pk_test_side *s = &res->after;
	struct pk_boot_result boot = { 0 };

	if (pk_pipeline_build(s, lab, opts, err) < 0)
		return -1;
	if (!s->build.ok)
		return 0;
	if (boot_side(s, lab, opts, &boot, err) < 0)
		return -1;
	if (boot.status == PK_BOOT_TIMEOUT && !boot.cut) {
		s->timed_out = boot.seconds;
		pk_boot_result_clear(&boot);
		if (pk_pipeline_boot(s, lab, opts, s->build.vmlinux, "booting again (the first boot never ended)",
				     &boot, err) < 0)
			return -1;
	}
	side_take_boot(s, &boot);
	return 0;
}

/*
 * One line on why a boot failed: the panic message itself (the whole
 * panic is in the console tail of the review), or the status and detail.
 */
static char *boot_failure(const struct pk_test_side *s)
{
	const struct pk_boot_result *boot = &s->boot;
	const char *panic = boot->detail ? strstr(boot->detail, "Kernel panic - ") : NULL;

	if (boot->status == PK_BOOT_PANIC && panic)
		return g_strdup_printf("The patched kernel panicked: %.*s", (int)strcspn(panic, "\n"), panic);
	if (boot->status == PK_BOOT_TIMEOUT && s->timed_out > 0)
		return g_strdup_printf("The patched kernel did not finish booting within %.0f s, booted twice.",
				       boot->seconds);
	if (boot->status == PK_BOOT_TIMEOUT)
		return g_strdup_printf("The patched kernel did not finish booting within %.0f s.", boot->seconds);
	return g_strdup_printf("The patched kernel's boot failed (%s)%s%.*s", pk_boot_status_name(boot->status),
			       boot->detail ? ": " : ".", boot->detail ? (int)strcspn(boot->detail, "\n") : 0,
			       boot->detail ? boot->detail : "");
}

/* Verdict from the diff: any console or index change is a visible change. */
static enum pk_verdict diff_verdict(const struct pk_kdiff *d)
{
	return d->changes->len || d->index_changes->len ? PK_VERDICT_CONSOLE_CHANGED : PK_VERDICT_NO_VISIBLE_CHANGE;
}

static void confirm_findings(struct pk_test_result *res)
{
	res->confirmations = g_array_new(FALSE, FALSE, sizeof(enum pk_confirmation));
	for (guint i = 0; i < res->scan->findings->len; i++) {
		enum pk_confirmation c = pk_kdiff_confirm(res->diff, res->scan->findings->pdata[i]);
		g_array_append_val(res->confirmations, c);
	}
}

static void set_verdict(struct pk_test_result *res, enum pk_verdict verdict, char *reason)
{
	res->verdict = verdict;
	g_free(res->reason);
	res->reason = reason;
}


/*
 * The verdict once the after side was built and booted (or not): a
 * patch's and a commit's alike.  A change in the boot log counts only
 * when it holds in the confirmation boots (private.h); after_built says
 * the build dir holds the after side's kernel, whose coverage of patch
 * is read first (a recheck builds the before side there).
 */
static int judge_after(struct pk_test_result *res, const struct pk_lab *lab, struct pk_store *store,
		       const struct pk_test_opts *opts, const struct pk_patch *patch, struct pk_noise **noise,
		       bool after_built, GError **err)
{
	char *not_built = NULL;
	enum pk_verdict verdict;

	if (res->after.build.ok && pk_pipeline_coverage(res, lab, patch, after_built, err) < 0)
		return -1;
	if (!res->after.build.ok) {
		set_verdict(res, PK_VERDICT_BUILD_FAILED, NULL);   /* the errors are in after.build.errors */
	} else if (res->after.boot.status != PK_BOOT_OK) {
		set_verdict(res, PK_VERDICT_BOOT_FAILED, boot_failure(&res->after));
	} else {
		res->diff = pk_kdiff_captures(res->before.boot.capture, res->after.boot.capture, *noise);
		if (pk_pipeline_recheck(res, lab, store, opts, noise, after_built, err) < 0)
			return -1;
		confirm_findings(res);
		if (opts->rules)
			res->monitor = pk_monitor_check(opts->rules, res->diff, res->after.boot.capture);
		verdict = pk_coverage_verdict(diff_verdict(res->diff), res->coverage, &not_built);
		set_verdict(res, verdict, not_built);
	}
	return 0;
}

/* Everything after the scan and the policy: apply (unless on_config_for() did), both sides, diff. */
static int run_dynamic(struct pk_test_result *res, const struct pk_lab *lab, struct pk_store *store,
		       const struct pk_test_opts *opts, const struct pk_patch *patch, GError **err)
{
	struct pk_noise *noise = NULL;
	struct pk_apply_result applied = { 0 };
	int rc = -1;

	if (prepare_before(res, lab, store, opts, &noise, err) < 0)
		goto out;
	/*
	 * A later patch of a series stands on the previous one, booted once as
	 * its after side, without a mask: the base's serves (noise comes from
	 * the machine, not the commit).
	 */
	if (!noise && store &&
	    stored_mask(store, lab, opts->noise_base ? opts->noise_base : PK_LAB_BASE_TAG, &noise,
			&res->noise_boots, &res->noise_commit, err) < 0)
		goto out;
	if (!res->before.build.ok || res->before.boot.status != PK_BOOT_OK) {
		set_verdict(res, res->before.build.ok ? PK_VERDICT_BOOT_FAILED : PK_VERDICT_BUILD_FAILED,
			    g_strdup_printf("the base %.12s itself does not %s, so nothing can be compared",
					    res->before.commit, res->before.build.ok ? "boot" : "build"));
		rc = 0;
		goto out;
	}
	if (res->after.commit) {
		if (pk_repo_checkout(lab, res->after.commit, err) < 0)
			goto out;
	} else {
		pk_progress("applying...");
		if (pk_apply_patch(&applied, lab, res->before.commit, patch, err) < 0)
			goto out;
		if (!applied.applied) {
			set_verdict(res, applied.refused ? PK_VERDICT_REFUSED : PK_VERDICT_DOES_NOT_APPLY,
				    g_steal_pointer(&applied.failure));
			rc = 0;
			goto out;
		}
		res->after.commit = g_steal_pointer(&applied.commit);
		res->three_way = applied.three_way;
		res->left_out = g_steal_pointer(&applied.left_out);
	}
	if (prepare_after(res, lab, opts, err) < 0 || judge_after(res, lab, store, opts, patch, &noise, true, err) < 0)
		goto out;
	rc = 0;
out:
	pk_apply_result_clear(&applied);
	pk_noise_free(noise);
	return rc;
}

/*
 * Whether the patch changes what Kbuild and Kconfig make of the tree: a
 * Makefile, Kbuild or Kconfig file, scripts/, or a file it adds or
 * removes.  Its config is then derived from the patched tree, where its
 * new files have their makefile lines and its new options exist.
 */
static bool reshapes_build(const struct pk_patch *patch)
{
	for (guint i = 0; i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];

		if (!f->old_path || !f->new_path || pk_path_kind(f->new_path) == PK_PATH_BUILD_SYSTEM)
			return true;
	}
	return false;
}

/*
 * Apply patch on parent now, before either side is built, for a config
 * derived from the patched tree: 1 applied (res->after.commit), 0 not
 * (the verdict is set), -1 error.
 */
static int apply_first(struct pk_test_result *res, const struct pk_lab *lab, const struct pk_patch *patch,
		       const char *parent, GError **err)
{
	struct pk_apply_result applied = { 0 };
	int rc = -1;

	pk_progress("applying...");
	if (pk_apply_patch(&applied, lab, parent, patch, err) < 0)
		goto out;
	rc = applied.applied;
	if (applied.applied) {
		res->after.commit = g_steal_pointer(&applied.commit);
		res->three_way = applied.three_way;
		res->left_out = g_steal_pointer(&applied.left_out);
	} else {
		set_verdict(res, applied.refused ? PK_VERDICT_REFUSED : PK_VERDICT_DOES_NOT_APPLY,
			    g_steal_pointer(&applied.failure));
	}
out:
	pk_apply_result_clear(&applied);
	return rc;
}

typedef int (*dynamic_fn)(struct pk_test_result *res, const struct pk_lab *lab, struct pk_store *store,
			  const struct pk_test_opts *opts, const struct pk_patch *patch, GError **err);

/*
 * Run dynamic (both sides and the diff) on the config patch needs: the
 * lab's, or one derived for it (derive.h) from the tree at parent, or,
 * when the patch reshapes the build (reshapes_build()), from the patched
 * tree: applied first (a patch's; a commit's is res->after.commit
 * already), so that its new files and the options it adds are found.
 */
static int on_config_for(struct pk_test_result *res, const struct pk_lab *lab, const struct pk_patch *patch,
			 const char *parent, struct pk_store *store, const struct pk_test_opts *opts,
			 const struct pk_unlinked *unlinked, dynamic_fn dynamic, GError **err);

/*
 * The after side of res, built on tested (the lab or a derived one), did
 * not link: when what it lacks is exported by code an option off in
 * tested's config builds (a driver calling crc8() without `select
 * CRC8`), the patch is tested again, both sides, on a config derived
 * with those options on too, into res->relinked: the build failure is
 * the patch's to fix, and the printk changes can still be shown.
 */
static int test_relinked(struct pk_test_result *res, const struct pk_lab *tested, const struct pk_lab *lab,
			 const struct pk_patch *patch, const char *parent, struct pk_store *store,
			 const struct pk_test_opts *opts, dynamic_fn dynamic, GError **err)
{
	struct pk_unlinked unlinked = { 0 };
	g_autofree char *build_dir = NULL;
	g_autoptr(GHashTable) config = NULL;
	struct pk_test_result *again = NULL;
	int rc = -1;

	if (res->verdict != PK_VERDICT_BUILD_FAILED || !res->before.build.ok || !res->after.commit ||
	    !res->after.build.errors || !strstr(res->after.build.errors, "undefined"))
		return 0;
	build_dir = pk_lab_build_dir(tested);
	/* the symbols are looked for in the tree the kernel was built from (a stored failure built none now) */
	if (pk_repo_checkout(lab, res->after.commit, err) < 0 || !(config = pk_kconfig_values(build_dir, err)) ||
	    pk_derive_unlinked(&unlinked, lab, config, res->after.build.errors, err) < 0)
		goto out;
	rc = 0;
	if (!unlinked.want->len)
		goto out;
	pk_info("the patched kernel did not link; testing again with what it lacks: %s",
		(char *)unlinked.why->pdata[0]);
	again = g_new0(struct pk_test_result, 1);
	again->scan = pk_scan(patch);
	again->before.commit = g_strdup(res->before.commit);
	again->after.commit = g_strdup(res->after.commit);   /* applied already: checked out, not applied again */
	if (on_config_for(again, lab, patch, parent, store, opts, &unlinked, dynamic, err) < 0) {
		rc = -1;
	} else if (!g_strcmp0(again->config_hash, res->config_hash)) {
		/* the solver could set none of it: the same kernel again, nothing learnt */
		pk_info("no config could set what the patched kernel lacks (%s)", again->config_hash);
	} else {
		res->relinked = g_steal_pointer(&again);
	}
	if (again) {
		pk_test_result_clear(again);
		g_free(again);
	}
out:
	pk_unlinked_clear(&unlinked);
	return rc;
}

static int on_config_for(struct pk_test_result *res, const struct pk_lab *lab, const struct pk_patch *patch,
			 const char *parent, struct pk_store *store, const struct pk_test_opts *opts,
			 const struct pk_unlinked *unlinked, dynamic_fn dynamic, GError **err)
{
	struct pk_lab derived = { .lock_fd = -1 };
	const char *derive_at = parent;
	int found, rc;

	if (reshapes_build(patch)) {
		if (!res->after.commit && (rc = apply_first(res, lab, patch, parent, err)) <= 0)
			return rc;
		derive_at = res->after.commit;
	}
	if ((found = pk_pipeline_config_for(&derived, &res->derived, lab, opts, patch, derive_at,
					    derive_at != parent ? parent : NULL, unlinked, "the patch", err)) < 0)
		return -1;
	res->config_hash = g_strdup(found ? derived.config_hash : lab->config_hash);
	rc = dynamic(res, found ? &derived : lab, store, opts, patch, err);
	/* once: a retry that still does not link is the answer */
	if (rc == 0 && !unlinked)
		rc = test_relinked(res, found ? &derived : lab, lab, patch, parent, store, opts, dynamic, err);
	pk_lab_clear(&derived);
	return rc;
}

/*
 * A patch without churn is not built, but applied all the same: the
 * next patch of a series stands on it.  One the policy would not build
 * stays unapplied, so that no later build takes its change in; its
 * verdict stays no-churn and the next patch goes on its parent.
 */
static int apply_only(struct pk_test_result *res, const struct pk_lab *lab, const struct pk_policy *policy,
		      const struct pk_patch *patch, GError **err)
{
	struct pk_apply_result applied = { 0 };
	g_autofree char *refusal = NULL;

	set_verdict(res, PK_VERDICT_NO_CHURN, NULL);
	if (!pk_policy_allows(policy, patch, &refusal))
		return 0;
	if (pk_apply_patch(&applied, lab, res->before.commit, patch, err) < 0)
		return -1;
	res->three_way = applied.three_way;
	res->left_out = g_steal_pointer(&applied.left_out);
	if (applied.applied)
		res->after.commit = g_steal_pointer(&applied.commit);
	else
		set_verdict(res, applied.refused ? PK_VERDICT_REFUSED : PK_VERDICT_DOES_NOT_APPLY,
			    g_steal_pointer(&applied.failure));
	pk_apply_result_clear(&applied);
	return 0;
}

/*
 * Every test ends with the tree back on the base the tested commit
 * stands on (repo.h's pk_repo_rest()): a patch that deleted the top
 * Makefile must not leave the lab unable to build the next one.  A
 * failure here is said, not returned: the test's answer stands, and the
 * next take of the lab tries again.
 */
static void end_on_base(const struct pk_lab *lab, const char *from)
{
	g_autoptr(GError) err = NULL;

	if (from && pk_repo_rest(lab, from, false, &err) < 0)
		pk_info("cannot put the kernel tree back on a base after the test: %s", err->message);
}

/*
 * The scan of patch into res: 1 scanned, 0 over the policy's size limits
 * (refused, naming the limit, and nothing scanned: a scan costs many
 * times the diff's size), -1 with err when a stop cut the scan short.
 */
static int scan_within_limits(struct pk_test_result *res, const struct pk_policy *policy,
			      const struct pk_patch *patch, GError **err)
{
	char *over = pk_patch_over_limits(patch, policy);

	res->scan = pk_scan(over ? NULL : patch);
	if (over) {
		res->scan->verdict = PK_VERDICT_REFUSED;
		set_verdict(res, PK_VERDICT_REFUSED, over);
		return 0;
	}
	if (res->scan->canceled)
		return pk_error(err, PK_ERROR_FAILED, "the scan was stopped by a signal");
	return 1;
}

static int test_patch(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
		      const struct pk_test_opts *opts, const struct pk_patch *patch,
		      const char *parent, GError **err)
{
	struct pk_test_result res = { 0 };
	double start = pk_now();
	char *reason = NULL;
	int scanned;

	if ((scanned = scan_within_limits(&res, &opts->policy, patch, err)) < 0)
		goto fail;
	res.before.commit = pk_repo_resolve(lab, parent, err);
	if (!res.before.commit)
		goto fail;
	if (!scanned) {
		/* over a size limit: refused as it stands, nothing applied */
	} else if (res.scan->verdict == PK_VERDICT_NO_CHURN && !opts->build_without_churn) {
		if (apply_only(&res, lab, &opts->policy, patch, err) < 0)
			goto fail;
	} else if (!pk_policy_allows(&opts->policy, patch, &reason)) {
		set_verdict(&res, PK_VERDICT_REFUSED, reason);
	} else if (on_config_for(&res, lab, patch, res.before.commit, store, opts, NULL, run_dynamic, err) < 0) {
		goto fail;
	}
	pk_progress("%s", "");
	end_on_base(lab, res.before.commit);
	res.seconds = pk_now() - start;
	*out = res;
	return 0;
fail:
	pk_progress("%s", "");
	end_on_base(lab, res.before.commit);
	pk_test_result_clear(&res);
	return -1;
}

static int build_side(struct pk_test_side *out, struct pk_noise **out_noise, unsigned *out_noise_boots,
		      const struct pk_lab *lab, struct pk_store *store, const struct pk_test_opts *opts,
		      const char *commit, bool learn_noise, GError **err)
{
	struct pk_test_side s = { 0 };
	struct pk_noise *noise = NULL;
	unsigned noise_boots = 0;
	int found = 0;

	s.commit = g_strdup(commit);
	if (store && (found = side_from_store(&s, lab, store, &noise, &noise_boots, err)) < 0)
		goto fail;
	if (found && learn_noise && !noise) {
		/* stored without a mask (an after side): boot it again, several times */
		pk_test_side_clear(&s);
		s.commit = g_strdup(commit);
		found = 0;
	}
	if (!found && build_and_boot(&s, lab, store, opts, learn_noise ? NOISE_BOOTS : 1, &noise,
				     &noise_boots, err) < 0)
		goto fail;
	*out = s;
	if (out_noise)
		*out_noise = g_steal_pointer(&noise);
	if (out_noise_boots)
		*out_noise_boots = out_noise && *out_noise ? noise_boots : 0;
	pk_noise_free(noise);
	return 0;
fail:
	pk_test_side_clear(&s);
	pk_noise_free(noise);
	return -1;
}

/* The stored noise mask of commit's build (a revision of the lab): 1 found, 0 not. */
static int stored_mask(struct pk_store *store, const struct pk_lab *lab, const char *commit,
		       struct pk_noise **out, unsigned *out_boots, char **out_commit, GError **err)
{
	g_autofree char *id = pk_repo_resolve(lab, commit, NULL);
	g_auto(GStrv) keys = NULL;
	g_autoptr(GArray) boots = NULL;
	gint64 build_id;
	int found;

	if (!id)
		return 0;
	if ((found = pk_store_find_build(store, id, lab->config_hash, &build_id, err)) <= 0 ||
	    (found = pk_store_get_noise(store, build_id, &keys, err)) <= 0)
		return found;
	if (pk_store_build_boots(store, build_id, &boots, err) < 0)
		return -1;
	*out = pk_noise_from_keys((const char *const *)keys);
	*out_boots = boots->len;
	*out_commit = g_steal_pointer(&id);
	return 1;
}

/* Both sides of a commit and their diff; the verdicts are those of run_dynamic(). */
static int commit_dynamic(struct pk_test_result *res, const struct pk_lab *lab, struct pk_store *store,
			  const struct pk_test_opts *opts, const struct pk_patch *patch, GError **err)
{
	g_autofree char *parent = g_steal_pointer(&res->before.commit);
	g_autofree char *commit = g_steal_pointer(&res->after.commit);
	struct pk_noise *noise = NULL, *own = NULL;
	unsigned own_boots = 0;
	int rc = -1, found = 0;

	/* a mask learnt once serves every parent: noise comes from the machine, not the commit */
	if (store && opts->noise_base)
		found = stored_mask(store, lab, opts->noise_base, &noise, &res->noise_boots, &res->noise_commit, err);
	if (store && found == 0)
		found = stored_mask(store, lab, PK_LAB_BASE_TAG, &noise, &res->noise_boots, &res->noise_commit, err);
	if (found < 0 ||
	    build_side(&res->before, &own, &own_boots, lab, store, opts, parent, !noise, err) < 0)
		goto out;
	if (own) {
		pk_noise_free(noise);
		noise = g_steal_pointer(&own);
		res->noise_boots = own_boots;
		g_free(res->noise_commit);
		res->noise_commit = g_strdup(parent);
	}
	if (!res->before.build.ok || res->before.boot.status != PK_BOOT_OK) {
		res->after.commit = g_steal_pointer(&commit);
		set_verdict(res, res->before.build.ok ? PK_VERDICT_BOOT_FAILED : PK_VERDICT_BUILD_FAILED,
			    g_strdup_printf("the parent %.12s itself does not %s, so nothing can be compared",
					    parent, res->before.build.ok ? "boot" : "build"));
		rc = 0;
		goto out;
	}
	if (build_side(&res->after, NULL, NULL, lab, store, opts, commit, false, err) < 0 ||
	    judge_after(res, lab, store, opts, patch, &noise, !res->after.cached, err) < 0)
		goto out;
	rc = 0;
out:
	if (!res->before.commit)
		res->before.commit = g_steal_pointer(&parent);
	if (!res->after.commit)
		res->after.commit = g_steal_pointer(&commit);
	pk_noise_free(noise);
	pk_noise_free(own);
	return rc;
}

static int test_commit(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
		       const struct pk_test_opts *opts, const char *commit, GError **err)
{
	struct pk_test_result res = { 0 };
	double start = pk_now();
	char *reason = NULL;
	int scanned;

	res.after.commit = pk_repo_resolve(lab, commit, err);
	if (!res.after.commit ||
	    !(res.patch = pk_repo_commit_patch(lab, res.after.commit, &opts->policy, &res.before.commit, err)) ||
	    (scanned = scan_within_limits(&res, &opts->policy, res.patch, err)) < 0)
		goto fail;
	if (!scanned) {
		/* over a size limit: refused, its diff not read whole */
	} else if (res.scan->verdict == PK_VERDICT_NO_CHURN && !opts->build_without_churn) {
		set_verdict(&res, PK_VERDICT_NO_CHURN, NULL);
	} else if (!pk_policy_allows(&opts->policy, res.patch, &reason)) {
		set_verdict(&res, PK_VERDICT_REFUSED, reason);
	} else if (on_config_for(&res, lab, res.patch, res.before.commit, store, opts, NULL, commit_dynamic,
				 err) < 0) {
		goto fail;
	}
	if (!opts->progress)
		pk_progress("%s", "");
	end_on_base(lab, res.before.commit);
	res.seconds = pk_now() - start;
	*out = res;
	return 0;
fail:
	if (!opts->progress)
		pk_progress("%s", "");
	end_on_base(lab, res.before.commit);
	pk_test_result_clear(&res);
	return -1;
}

/*
 * The doors of this file: each takes the lab as it tests the commit it
 * starts from (lab.h's pk_lab_for_rev(): the tree of that commit's kernel
 * series), so that a 6.1 series never rewrites the files of 6.12's tree.
 * test_patch_on() is pk_test_patch()'s on one architecture, lab's own.
 */
static int test_patch_on(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
			 const struct pk_test_opts *opts, const struct pk_patch *patch, const char *parent,
			 GError **err)
{
	struct pk_lab based;
	int rc;

	if (pk_lab_for_rev(&based, lab, parent, err) < 0)
		return -1;
	rc = test_patch(out, &based, store, opts, patch, parent, err);
	if (rc >= 0) {
		out->arch = pk_lab_arch(lab);
		out->board = lab->board;
	}
	pk_lab_clear(&based);
	return rc;
}

/*
 * Why res's kernel did not build its files, in a clause: what its
 * config could not set (derive.h's cannot: "CONFIG_X: CONFIG_X depends
 * on ARM_AMBA && HAS_IOMEM"), else the files not built with their
 * reasons, else its verdict's reason.
 */
static char *not_built_why(const struct pk_test_result *res)
{
	g_autoptr(GString) s = g_string_new(NULL);

	for (guint i = 0; res->derived.cannot && i < res->derived.cannot->len; i++) {
		const char *c = res->derived.cannot->pdata[i];
		const char *why = strstr(c, ": ");

		g_string_append_printf(s, "%s%s", s->len ? "; " : "", why ? why + 2 : c);
	}
	if (s->len)
		return g_string_free(g_steal_pointer(&s), FALSE);
	return pk_coverage_not_built_list(res->coverage, true, NULL)
		       ?: g_strdup(res->reason ? res->reason : "?");
}

/*
 * res came back not-built on its architecture: the patch tested on
 * arch's lab into *there.  1 when that kernel built a C file of it that
 * res's did not (the answer to give, merge_coverage() adding what res's
 * built), 0 when not or when arch has no lab set up here
 * (*lacked then says what that architecture lacked, for the reason), -1
 * with err.
 */
static int test_elsewhere(struct pk_test_result *there, GString *lacked, const struct pk_test_result *res,
			  const struct pk_lab *lab, const struct pk_arch *arch, struct pk_store *store,
			  const struct pk_test_opts *opts, const struct pk_patch *patch, const char *parent,
			  GError **err)
{
	g_autofree char *why = NULL, *lack = NULL;
	struct pk_lab other;
	int rc;

	if ((rc = pk_lab_for_arch(&other, lab, arch, &why, err)) < 0)
		return -1;
	if (rc) {
		pk_info("not testing on %s too: its lab is not set up here (%s)", arch->name, why);
		return 0;
	}
	pk_info("no %s config builds all the patch's files: testing it on %s too", pk_lab_arch(lab)->name,
		arch->name);
	rc = test_patch_on(there, &other, store, opts, patch, parent, err);
	pk_lab_clear(&other);
	if (rc < 0)
		return -1;
	if (pk_coverage_built_beyond(there->coverage, res->coverage))
		return 1;
	lack = not_built_why(there);
	g_string_append_printf(lacked, "; %s: %s", arch->name, lack);
	pk_test_result_clear(there);
	return 0;
}

/*
 * The answer comes from there (another architecture's kernels), but own's
 * (the lab's architecture) built some of the patch's files that there's
 * did not: each such file's coverage is own's, saying on which
 * architecture.  Own's verdict was not-built or no-visible-change, which
 * only a comparison that showed no change gives, so those files printed
 * nothing new there;
 * a not-built verdict of there's that only they caused becomes
 * no-visible-change.
 */
static void merge_coverage(struct pk_test_result *there, const struct pk_test_result *own,
			   const struct pk_arch *own_arch)
{
	g_autofree char *why = NULL;

	for (guint i = 0; there->coverage && i < there->coverage->len; i++) {
		struct pk_file_coverage *c = there->coverage->pdata[i];

		const struct pk_file_coverage *o;
		g_autofree char *where = NULL;

		if (!c->source || c->state != PK_COVERAGE_NOT_BUILT ||
		    !(o = pk_coverage_built_file(own->coverage, c->file)))
			continue;
		where = o->reason ? g_strdup_printf("on %s: %s", own_arch->name, o->reason)
				  : g_strdup_printf("on %s", own_arch->name);
		there->coverage->pdata[i] = pk_file_coverage_new(c->file, o->state, where, c->source);
		pk_file_coverage_free(c);
	}
	if (there->verdict != PK_VERDICT_NOT_BUILT)
		return;
	why = pk_coverage_not_built_sentence(there->coverage);
	g_free(there->reason);
	there->reason = g_steal_pointer(&why);
	if (!there->reason)
		there->verdict = PK_VERDICT_NO_VISIBLE_CHANGE;
}

/* A failure of another lab that ends the whole test: a stop, or one that passes (the job is retried). */
static bool failure_ends_test(const GError *failed)
{
	return pk_proc_canceled() || pk_error_transient(failed);
}

/*
 * The patch touches a driver whose hardware a QEMU board has (qemu/boards,
 * lab/board.h): tested on that board's architecture and machine, into
 * *out.  1 when that is the answer; 0 when no row names the patch,
 * opts->one_arch leaves the row's architecture out, its lab is not set up
 * here, or that lab could not answer: it failed, its kernel did not build
 * the patch's files, or the base did not build or boot there (a lab
 * error, not the patch's): each said in the log, *out untouched.  -1
 * with err.
 */
static int test_on_board(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
			 const struct pk_test_opts *opts, const struct pk_patch *patch, const char *parent,
			 GError **err)
{
	const struct pk_board *board;
	struct pk_test_result res = { 0 };
	g_autofree char *why = NULL, *where = NULL, *gcc = NULL;
	g_autoptr(GError) failed = NULL;
	struct pk_lab there;
	int rc;

	if (pk_board_for_patch(&board, lab->datadir, patch, err) < 0)
		return -1;
	if (!board || (opts->one_arch && board->arch != pk_lab_arch(lab)))
		return 0;
	where = board->machine ? g_strdup_printf("QEMU's %s board", board->machine)
			       : g_strdup_printf("%s's %s machine", board->arch->name, board->arch->machine);
	if ((rc = pk_lab_for_arch(&there, lab, board->arch, &why, err)) < 0)
		return -1;
	if (rc) {
		pk_info("not testing on %s (%s): the %s lab is not set up here (%s)", where, board->row,
			board->arch->name, why);
		return 0;
	}
	if (board->machine && pk_lab_set_board(&there, board, err) < 0) {
		pk_lab_clear(&there);
		return -1;
	}
	pk_info("the patch touches %s, whose hardware %s has (%s): testing it there", board->prefix, where,
		board->row);
	rc = test_patch_on(&res, &there, store, opts, patch, parent, &failed);
	pk_lab_clear(&there);
	if (rc < 0) {
		if (failure_ends_test(failed)) {
			g_propagate_error(err, g_steal_pointer(&failed));
			return -1;
		}
		pk_info("%s could not test the patch (a lab error; tested as if no board had its hardware): %s",
			where, failed->message);
		return 0;
	}
	if (res.verdict == PK_VERDICT_NOT_BUILT ||
	    ((res.verdict == PK_VERDICT_BUILD_FAILED || res.verdict == PK_VERDICT_BOOT_FAILED) &&
	     (!res.before.build.ok || res.before.boot.status != PK_BOOT_OK))) {
		pk_info("%s gave no answer (a lab error; tested as if no board had its hardware): %s", where,
			res.reason ? res.reason : pk_verdict_name(res.verdict));
		pk_test_result_clear(&res);
		return 0;
	}
	if (res.before.build.ok) {
		gcc = pk_arch_gcc(board->arch);
		res.arch_why = g_strdup_printf("%s has the hardware that %s drives (qemu/boards), so the kernels "
					       "were built for %s with %s and booted there.", where, board->prefix,
					       board->arch->name, gcc);
	}
	*out = res;
	return 1;
}

/*
 * Whether out (an answer on one architecture) left a C file of the patch
 * not built that arch might build: not another architecture's code for it
 * too (arch/powerpc/ for both), nor a file whose options need a symbol
 * that only other architectures define (pk_derived_beyond_arch()).
 */
static bool worth_covering_on(const struct pk_test_result *out, const struct pk_arch *arch)
{
	if (pk_derived_beyond_arch(&out->derived, arch->karch, NULL))
		return false;
	for (guint i = 0; out->coverage && i < out->coverage->len; i++) {
		const struct pk_file_coverage *c = out->coverage->pdata[i];

		if (c->source && c->state == PK_COVERAGE_NOT_BUILT && !pk_arch_foreign_file(arch, c->file))
			return true;
	}
	return false;
}

/*
 * out (an answer: a board's, or the lab's own architecture's that is not
 * not-built) left C files of the patch not built: the patch tested on
 * lab's architecture too.  When that kernel built some of them, each gets
 * its coverage (merge_coverage()) if its verdict shows no change; a
 * change there is said in out->elsewhere, with the command that shows it.  1
 * when that kernel built one, 0 when not or when that lab failed (out as
 * it was, logged), -1 with err (a stop, a failure that passes).
 */
static int cover_on(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
		    const struct pk_test_opts *opts, const struct pk_patch *patch, const char *parent, GError **err)
{
	const struct pk_arch *arch = pk_lab_arch(lab);
	struct pk_test_result other = { 0 };
	g_autoptr(GError) failed = NULL;
	g_autofree char *missing = pk_coverage_not_built_list(out->coverage, false, NULL);
	int built;

	pk_info("%s's kernel did not build all the patch's files (%s): testing it on %s too",
		pk_test_machine(out), missing, arch->name);
	if (test_patch_on(&other, lab, store, opts, patch, parent, &failed) < 0) {
		if (failure_ends_test(failed)) {
			g_propagate_error(err, g_steal_pointer(&failed));
			return -1;
		}
		pk_info("the %s lab could not test the patch (the answer stays %s's): %s", arch->name,
			pk_test_arch(out)->name, failed->message);
		return 0;
	}
	built = pk_coverage_built_beyond(other.coverage, out->coverage) > 0;
	if (built && (other.verdict == PK_VERDICT_NOT_BUILT || other.verdict == PK_VERDICT_NO_VISIBLE_CHANGE)) {
		merge_coverage(out, &other, arch);
	} else if (built && other.verdict != PK_VERDICT_NO_CHURN) {
		g_free(out->elsewhere);
		out->elsewhere = g_strdup_printf("The %s kernels came back %s for the same patch: `printkbot test "
						 "--arch %s` shows them.", arch->name,
						 pk_verdict_name(other.verdict), arch->name);
	}
	pk_test_result_clear(&other);
	return built;
}

/* A board's answer with files its kernel did not build: the lab's own architecture for them (cover_on()). */
static int board_cover_on_own_arch(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
				   const struct pk_test_opts *opts, const struct pk_patch *patch, const char *parent,
				   GError **err)
{
	if (opts->one_arch || out->arch == pk_lab_arch(lab) || !worth_covering_on(out, pk_lab_arch(lab)))
		return 0;
	if (cover_on(out, lab, store, opts, patch, parent, err) < 0) {
		pk_test_result_clear(out);
		return -1;
	}
	return 0;
}

/*
 * The lab's own architecture answered (not not-built) but left C files
 * not built: each other architecture whose lab is set up here and might
 * build one is asked, until one built some (cover_on()).
 */
static int cover_on_others(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
			   const struct pk_test_opts *opts, const struct pk_patch *patch, const char *parent,
			   GError **err)
{
	for (size_t i = 0; pk_arch_nth(i); i++) {
		const struct pk_arch *arch = pk_arch_nth(i);
		g_autofree char *why = NULL;
		struct pk_lab other;
		int rc;

		if (arch == pk_lab_arch(lab) || !worth_covering_on(out, arch))
			continue;
		if ((rc = pk_lab_for_arch(&other, lab, arch, &why, err)) < 0)
			goto fail;
		if (rc) {
			pk_info("not covering the patch's files on %s: its lab is not set up here (%s)", arch->name, why);
			continue;
		}
		rc = cover_on(out, &other, store, opts, patch, parent, err);
		pk_lab_clear(&other);
		if (rc < 0)
			goto fail;
		if (rc)
			return 0;
	}
	return 0;
fail:
	pk_test_result_clear(out);
	return -1;
}

int pk_test_patch(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
		  const struct pk_test_opts *opts, const struct pk_patch *patch,
		  const char *parent, GError **err)
{
	g_autoptr(GString) lacked = NULL;
	g_autofree char *own = NULL, *files = NULL, *beyond = NULL;
	g_autoptr(GError) failed = NULL;
	struct pk_test_result there = { 0 };
	unsigned others = 0;   /* architectures that said why they could not build it either */
	int rc;

	if ((rc = test_on_board(out, lab, store, opts, patch, parent, err)) != 0)
		return rc < 0 ? -1 : board_cover_on_own_arch(out, lab, store, opts, patch, parent, err);
	if (test_patch_on(out, lab, store, opts, patch, parent, err) < 0)
		return -1;
	if (opts->one_arch)
		return 0;
	if (out->verdict != PK_VERDICT_NOT_BUILT)
		return cover_on_others(out, lab, store, opts, patch, parent, err);
	own = not_built_why(out);
	files = pk_coverage_not_built_list(out->coverage, false, NULL) ?: g_strdup("the patch's files");
	lacked = g_string_new(NULL);
	g_string_printf(lacked, "%s: %s", pk_lab_arch(lab)->name, own);
	for (size_t i = 0; pk_arch_nth(i); i++) {
		const struct pk_arch *arch = pk_arch_nth(i);
		size_t said = lacked->len;

		if (arch == pk_lab_arch(lab))
			continue;
		if (pk_derived_beyond_arch(&out->derived, arch->karch, &beyond)) {
			pk_info("not testing on %s too: %s", arch->name, beyond);
			g_string_append_printf(lacked, "; %s: %s", arch->name, beyond);
			g_clear_pointer(&beyond, g_free);
			others++;
			continue;
		}
		if ((rc = test_elsewhere(&there, lacked, out, lab, arch, store, opts, patch, parent, &failed)) < 0) {
			/* a stop, or a failure that passes, ends the job; another is the other lab's, said here */
			if (failure_ends_test(failed)) {
				g_propagate_error(err, g_steal_pointer(&failed));
				pk_test_result_clear(out);
				return -1;
			}
			pk_info("the %s lab could not test the patch (its answer stays %s's): %s", arch->name,
				pk_lab_arch(lab)->name, failed->message);
			g_string_append_printf(lacked, "; %s: the lab failed (%s)", arch->name, failed->message);
			g_clear_error(&failed);
			others++;
			continue;
		}
		if (rc) {
			g_autofree char *gcc = pk_arch_gcc(arch);

			there.arch_why = g_strdup_printf("Built and booted for %s, with %s: no %s kernel the "
							 "bot can build compiles %s (%s).", arch->name, gcc,
							 pk_lab_arch(lab)->name, files, own);
			merge_coverage(&there, out, pk_lab_arch(lab));
			pk_test_result_clear(out);
			*out = there;
			return 0;
		}
		others += lacked->len > said;
	}
	if (others) {
		/* every architecture said why: the reason names each */
		g_free(out->reason);
		out->reason = g_strdup_printf("Not compiled into a kernel the bot could build (%s). Neither the "
					      "boot log nor the printk index can show what the patch's files print, "
					      "so only the static findings speak for them.", lacked->str);
	}
	return 0;
}

int pk_test_commit(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
		   const struct pk_test_opts *opts, const char *commit, GError **err)
{
	struct pk_lab based;
	int rc;

	if (pk_lab_for_rev(&based, lab, commit, err) < 0)
		return -1;
	rc = test_commit(out, &based, store, opts, commit, err);
	if (rc >= 0)
		out->arch = pk_lab_arch(lab);
	pk_lab_clear(&based);
	return rc;
}

int pk_test_build_side(struct pk_test_side *out, struct pk_noise **out_noise, unsigned *out_noise_boots,
		       const struct pk_lab *lab, struct pk_store *store, const struct pk_test_opts *opts,
		       const char *commit, bool learn_noise, GError **err)
{
	struct pk_lab based;
	int rc;

	if (pk_lab_for_rev(&based, lab, commit, err) < 0)
		return -1;
	rc = build_side(out, out_noise, out_noise_boots, &based, store, opts, commit, learn_noise, err);
	pk_lab_clear(&based);
	return rc;
}
