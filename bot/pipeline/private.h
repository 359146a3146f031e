/*
 * private.h - what the files of the pipeline stage share and nobody else
 * calls: building one side in the lab, naming the stage a side is in, the
 * config a test or a bisect builds on (config-for.c), and the
 * confirmation boots of recheck.c.
 */
#ifndef PK_PIPELINE_PRIVATE_H
#define PK_PIPELINE_PRIVATE_H

#include "pipeline/test.h"

/* Say which stage side s is in: through opts->progress, else on the progress line. */
void pk_pipeline_stage(const struct pk_test_opts *opts, const char *verb, const struct pk_test_side *s);

/*
 * Build s->commit, checked out already, into s->build (the kernel config
 * made to fit its Kconfig first).  A failed build is in s->build, not an
 * error.
 */
int pk_pipeline_build(struct pk_test_side *s, const struct pk_lab *lab, const struct pk_test_opts *opts,
		      GError **err);

/* Boot vmlinux, side s's kernel, once into *out, saying verb ("booting") as its stage. */
int pk_pipeline_boot(struct pk_test_side *s, const struct pk_lab *lab, const struct pk_test_opts *opts,
		     const char *vmlinux, const char *verb, struct pk_boot_result *out, GError **err);

/*
 * Confirm the boot-log changes of res->diff (both sides booted, diffed
 * with noise): boot both kernels again, learn what varies into *noise
 * and diff again, keeping the changes that hold; those that did not are
 * res->unstable.  after_built says the lab's build dir holds the after
 * side's kernel now (else it is built again).  Nothing happens without a
 * boot-log change.  -1 only when the bot cannot work.
 */
int pk_pipeline_recheck(struct pk_test_result *res, const struct pk_lab *lab, struct pk_store *store,
			const struct pk_test_opts *opts, struct pk_noise **noise, bool after_built,
			GError **err);

/*
 * What a test and a bisect both do before building: check out at, bring
 * the lab's .config to at's Kconfig, derive the config patch needs there
 * (pk_derive_config(): the same returns, *out and *found; when the patch
 * deletes C sources and removed_at is not NULL, with what builds them in
 * the tree of removed_at, pk_derive_removed(); with unlinked's groups too
 * when it is not NULL), say on stderr
 * what it holds ("testing on a config derived for <what>"), and prune
 * the derived build dirs beyond opts->derived_builds, keeping the one
 * just made.  The caller decides what becomes of *out: a test borrows it
 * for one patch, a bisect makes it its lab.
 */
int pk_pipeline_config_for(struct pk_lab *out, struct pk_derived *found, const struct pk_lab *lab,
			   const struct pk_test_opts *opts, const struct pk_patch *patch, const char *at,
			   const char *removed_at, const struct pk_unlinked *unlinked, const char *what,
			   GError **err);

/*
 * Read which files patch touches the lab's build dir holds into
 * res->coverage (lab/coverage.h), with the before boot (deleted files) and
 * the after boot (booted) of res.  after_built says the build dir holds
 * the after side's build now; else it is read as it is, and
 * res->coverage_elsewhere says so.  -1 only when the bot cannot work.
 */
int pk_pipeline_coverage(struct pk_test_result *res, const struct pk_lab *lab, const struct pk_patch *patch,
			 bool after_built, GError **err);

#endif
