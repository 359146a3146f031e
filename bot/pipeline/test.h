/*
 * test.h - test one patch: scan, policy, apply, build and boot before and
 * after, diff, and the verdict.  This is the pipeline (doc/development.md) for one
 * patch; `printkbot test` and the daemon run it over a series
 * (sequence.h), `run` over the commits of a branch.
 *
 * The before side (the parent's build and boots) is looked up in the store
 * first: a second patch on the same base and config never rebuilds or
 * reboots it.  The base is booted more than once to learn its run-to-run
 * noise, and the mask is stored with it.  A change in the boot log is
 * counted only when it holds with both sides booted again, then and there
 * (the host's load can bring out records no earlier boot showed); what
 * varied is learnt into the mask and listed as unstable.
 *
 * When the lab's config does not compile a C source the patch touches,
 * the patch is tested on a config derived for it (lab/derive.h): before
 * and after alike, with that config's own stored builds and noise mask.
 *
 * Once the after side is built, the build dir says which touched files
 * were compiled in (lab/coverage.h): a patch whose boot log and index did
 * not change is not-built, not no-visible-change, when a C source or
 * header it touches is not in the kernel.
 *
 * A patch that does not apply, a build that fails and a boot that panics
 * are verdicts in the result; pk_test_patch() returns -1 only when the bot
 * itself cannot work (no lab, no store, QEMU missing).  store may be NULL:
 * then nothing is cached or kept.
 */
#ifndef PK_TEST_H
#define PK_TEST_H

#include <stdbool.h>

#include "lab/boot.h"
#include "lab/derive.h"
#include "lab/build.h"
#include "analysis/kdiff.h"
#include "lab/lab.h"
#include "base/patch.h"
#include "lab/policy.h"
#include "analysis/scan.h"
#include "pipeline/monitor.h"

struct pk_store;

struct pk_test_opts {
	struct pk_policy policy;
	double boot_timeout;      /* seconds per boot, 0 = 60 */
	unsigned derived_builds;  /* derived build dirs kept (pk_derive_prune()), 0 = its default */
	bool build_without_churn; /* build and boot no-churn patches too (run --all) */
	/*
	 * Test a patch on the lab's architecture only (test --arch): else one
	 * no config of it builds goes to the others set up here too
	 * (pk_test_patch()).
	 */
	bool one_arch;
	/*
	 * pk_test_commit(): a commit whose stored noise mask serves a parent
	 * that has none of its own (run and bisect pass the range's base);
	 * NULL: only the parent's own mask, or the lab base's.
	 */
	const char *noise_base;
	/* log-monitor rules whose messages a patch must not take (monitor.h); NULL: none checked */
	const struct pk_rules *rules;
	/* Told each stage ("building 1a2b3c4d5e6f"); NULL: pk_progress() draws it. */
	void (*progress)(void *data, const char *stage);
	void *progress_data;
};

/* One side of the comparison: a commit, its build and its boot. */
struct pk_test_side {
	char *commit;
	bool cached;              /* taken from the store, not built or booted now */
	bool build_tried;
	struct pk_build_result build;  /* build.ok, seconds, errors */
	bool booted;              /* a boot was attempted */
	struct pk_boot_result boot;    /* status, seconds, console, detail, capture;
	                                  a cached side has the capture only */
	char *console_tail;       /* last console lines of a failed boot */
	double timed_out;         /* seconds of a first boot that never ended and was
	                             booted again (prepare_after()); 0: none */
	gint64 build_id, boot_id; /* in the store, 0 when not stored (yet) */
};

struct pk_test_result {
	enum pk_verdict verdict;
	char *reason;             /* why refused / did not apply / failed, or NULL */
	struct pk_scan *scan;
	struct pk_test_side before, after;
	unsigned noise_boots;     /* base boots the noise mask was learnt from */
	struct pk_kdiff *diff;    /* NULL unless both sides booted */
	GArray *confirmations;    /* enum pk_confirmation, one per scan finding; NULL without diff */
	double seconds;
	struct pk_patch *patch;   /* pk_test_commit(): the commit as a patch (owned) */
	char *noise_commit;       /* pk_test_commit(): whose boots the mask came from, or NULL */
	unsigned recheck_rounds;  /* confirmation boots made of each side (0: the boot log did not
	                             change, or the changes could not be confirmed) */
	GPtrArray *unstable;      /* char*: boot-log changes that did not hold when booted again,
	                             not counted; NULL when nothing was rechecked */
	GPtrArray *coverage;      /* struct pk_file_coverage* (lab/coverage.h), one per touched
	                             file, read once the after side built; NULL before */
	bool coverage_elsewhere;  /* coverage was read from the build dir as another build of
	                             the config left it (the after side came from the store) */
	char *config_hash;        /* the config both sides were built with: the lab's or a
	                             derived one; NULL when nothing was built */
	const struct pk_arch *arch; /* what the lab built and booted for (lab/arch.h; static) */
	const struct pk_board *board; /* the QEMU board it booted on (lab/board.h; lives as long as the
	                             process), NULL: arch's own machine */
	char *arch_why;           /* why on arch and not the lab's own (pk_test_patch()), or NULL */
	char *elsewhere;          /* what another architecture's kernels showed of the same patch, when
	                             they changed what they print too (pk_test_patch()), or NULL */
	struct pk_derived derived;/* what a derived config added and why (lines NULL: the lab's) */
	bool three_way;           /* the patch applied by a 3-way merge (lab/apply.h) */
	char *left_out;           /* files no build reads left out, their hunks not applying (apply.h) */
	struct pk_monitor_check *monitor; /* opts->rules against the diff, or NULL (owned) */
	struct pk_test_result *relinked; /* build-failed on a link: the same patch tested again with
	                             the options that build what its kernel lacked turned on too
	                             (relinked->derived.linked names them), or NULL (owned) */
};

/* What res was built for: its lab's architecture, x86_64 for a result made by hand (a test's). */
static inline const struct pk_arch *pk_test_arch(const struct pk_test_result *res)
{
	return res->arch ? res->arch : &pk_arch_x86_64;
}

/* QEMU's machine res's kernels booted on: its board's, else its architecture's. */
static inline const char *pk_test_machine(const struct pk_test_result *res)
{
	return res->board ? res->board->machine : pk_test_arch(res)->machine;
}

/*
 * Test patch on parent (a revision of the lab's tree).  On success *out
 * holds the result (pk_test_result_clear()) and, when the patch applied,
 * out->after.commit is the commit a following patch of a series goes on.
 * A no-churn patch is applied too (not built, unless
 * opts->build_without_churn), so a series applies whole.  A parent not
 * in the store (a series' commit that was applied but never built) is
 * built and booted once, with the stored mask of opts->noise_base (NULL:
 * the lab's base) when there is one, else several times to learn its own.
 * A patch touching a driver of a QEMU board's hardware (qemu/boards,
 * lab/board.h) is tested on that board first, unless opts->one_arch names
 * another architecture: its answer stands unless that board's kernel did
 * not build the patch's files or the base did not boot there (a lab
 * error, logged), or its architecture's lab is not set up here.  Files
 * of the patch the board's kernel did not build (another architecture's)
 * are tested on the lab's own architecture too, and keep its coverage
 * when it shows no change.
 * A patch that comes back not-built (a touched C file no config of the
 * lab's architecture builds) is tested again on each other architecture
 * whose lab is set up in the same cache (`printkbot setup --arch`),
 * unless opts->one_arch: the first whose kernel builds a file the lab's
 * did not gives the answer (out->arch, out->arch_why saying why), each
 * file the lab's kernel built and that one's did not keeping the lab's
 * coverage ("on x86_64: ..."); when none does, the not-built reason says
 * what each architecture lacked.  A patch the lab's architecture answered
 * otherwise, but with C files its kernel did not build, is tested on the
 * first other architecture set up here that builds some of them, for
 * their coverage (the answer stays the lab's).
 */
int pk_test_patch(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
		  const struct pk_test_opts *opts, const struct pk_patch *patch,
		  const char *parent, GError **err);
void pk_test_result_clear(struct pk_test_result *res);

/*
 * Test commit (a commit of the lab's tree, see range.h for bringing a
 * user's commits there) against its first parent: the patch is the
 * commit's diff (out->patch, with its author, date and subject), the
 * before side is the parent and the after side the commit itself, each
 * checked out as it is (nothing applied).  Both sides are taken from the
 * store when they were built and booted with this config before, else
 * built, booted once and stored at once (build_id set).  The noise mask
 * is the parent's own, else the stored one of opts->noise_base, else the
 * lab base's; with none of them the parent is booted several times to
 * learn it (out->noise_commit names where it came from).  A commit
 * without logging churn is no-churn and not built unless
 * opts->build_without_churn.  Errors as pk_test_patch().
 */
int pk_test_commit(struct pk_test_result *out, const struct pk_lab *lab, struct pk_store *store,
		   const struct pk_test_opts *opts, const char *commit, GError **err);

/*
 * One commit of the lab's tree, built and booted as it is, for out: from
 * the store when it is there, else checked out (the kernel config made
 * to fit its Kconfig), built, booted and stored (when store is not NULL).
 * With learn_noise the kernel is booted several times and the mask
 * learnt from them is stored with the build; a stored side counts then
 * only with a mask.  *out_noise (may be NULL) gets the side's mask when
 * it has one, with *out_noise_boots the boots it came from.  A failed
 * build or boot is in *out (build.ok, boot.status), not an error.  Clear
 * with pk_test_side_clear().
 */
int pk_test_build_side(struct pk_test_side *out, struct pk_noise **out_noise, unsigned *out_noise_boots,
		       const struct pk_lab *lab, struct pk_store *store, const struct pk_test_opts *opts,
		       const char *commit, bool learn_noise, GError **err);
void pk_test_side_clear(struct pk_test_side *s);

/* What pk_test_record() keeps besides the result itself. */
struct pk_test_record_info {
	const struct pk_patch *patch; /* the tested patch; NULL: res->patch (pk_test_commit()) */
	gint64 source_id;             /* where it came from (pk_store_add_source()), 0 for none */
	const char *config_hash;      /* the lab's kernel config */
	const char *model_json;       /* the review model as JSON text (report/review.h) */
	const char *review_text;      /* the rendered review */
};

/*
 * Store a tested patch and its review in one transaction: the patch and
 * its findings, the after side's build and boot unless they have ids
 * already (the before side was stored when it was made), the test with
 * its changes, and the review (*out_review_id).  A tested commit's patch
 * is stored by its commit id, so testing it again adds a test, not a
 * patch.  Inside a caller's transaction it is a savepoint of it, so a
 * caller that stores more with it (the daemon's reply) keeps all or none.
 */
int pk_test_record(struct pk_store *store, gint64 *out_review_id, const struct pk_test_result *res,
		   const struct pk_test_record_info *info, GError **err);

#endif
