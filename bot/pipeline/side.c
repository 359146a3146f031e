/*
 * side.c - one side of a test, the kernel before or after: building what
 * is checked out in the lab (the build dir brought up to the tree first,
 * its config made to fit) and booting it, each a stage said on the
 * progress line.  What test.c and recheck.c both do (private.h).
 */
#include "pipeline/private.h"

#include <string.h>
#include <sys/stat.h>

#include "lab/build.h"
#include "lab/kconfig.h"
#include "lab/layer.h"
#include "lab/repo.h"
#include "lab/state.h"
#include "base/beneath.h"
#include "base/util.h"

void pk_test_side_clear(struct pk_test_side *s)
{
	g_free(s->commit);
	pk_build_result_clear(&s->build);
	pk_boot_result_clear(&s->boot);
	g_free(s->console_tail);
	memset(s, 0, sizeof *s);
}

void pk_pipeline_stage(const struct pk_test_opts *opts, const char *verb, const struct pk_test_side *s)
{
	g_autofree char *what = g_strdup_printf("%s %.12s", verb, s->commit);

	if (opts->progress)
		opts->progress(opts->progress_data, what);
	else
		pk_stage("%s", what);
}

/*
 * Whether what a published build left in build_dir is behind the tree:
 * never built (a base never built, or a derived config first used for a
 * series whose first patch was not built: a dt-bindings patch); a derived
 * config's copy of another build dir (lab/derive.h) that no config was
 * made for outside a layer, so that what it holds was built for the
 * other config and each layer over it would compile the new options'
 * code again (Bluetooth's, 7 minutes a side); or built before the tree's
 * top Makefile was last written, which a checkout of a far commit (a new
 * tree of a kernel series, a base fetched anew) rewrites with every file
 * that differs, so that make would compile nearly all of it again.
 */
static bool build_dir_behind(const struct pk_lab *lab, const char *build_dir)
{
	g_autofree char *makefile = g_build_filename(lab->tree, "Makefile", NULL);
	struct stat built, caught_up, tree, made;

	if (pk_beneath_regular(build_dir, "vmlinux", &built, NULL) <= 0)
		return true;
	if (lab->extra_config && !pk_state_stat(build_dir, PK_STATE_KCONFIG, &made))
		return true;
	/* a make that found nothing to do leaves vmlinux as it was: the stamp (PK_STATE_CAUGHT_UP) says when it ran */
	if (pk_state_stat(build_dir, PK_STATE_CAUGHT_UP, &caught_up) && caught_up.st_mtim.tv_sec > built.st_mtim.tv_sec)
		built = caught_up;
	return stat(makefile, &tree) == 0 && (tree.st_mtim.tv_sec > built.st_mtim.tv_sec ||
					      (tree.st_mtim.tv_sec == built.st_mtim.tv_sec &&
					       tree.st_mtim.tv_nsec > built.st_mtim.tv_nsec));
}

/*
 * Before an unpublished commit is built in a layer (lab/layer.h) over a
 * build dir whose published build is behind the tree (build_dir_behind()),
 * the published commit it stands on is built there: else the layer would
 * compile the whole kernel, and throw it away, for each side of each
 * patch.  commit is checked out again after.
 */
static int fill_build_dir(const struct pk_lab *lab, const struct pk_test_opts *opts, const char *commit,
			  GError **err)
{
	g_autofree char *build_dir = NULL, *base = NULL;
	struct pk_build_result built = { 0 };
	const char *layer_for = NULL;
	int rc = -1;

	if (pk_repo_head_trusted(lab) || !pk_layer_usable(lab->cache, NULL))
		return 0;
	build_dir = pk_lab_build_dir(lab);
	if (pk_layer_over(build_dir, &layer_for) && !g_strcmp0(layer_for, commit))
		return 0;   /* at work in its layer already: the build dir under it was looked at then */
	if (pk_layer_drop(build_dir, err) < 0)
		return -1;
	if (!build_dir_behind(lab, build_dir) || !(base = pk_repo_trusted_ancestor(lab, commit, 256)))
		return 0;
	pk_info("building %.12s, which %.12s stands on, in %s first: a layer then holds only what differs",
		base, commit, build_dir);
	if (opts->progress)
		opts->progress(opts->progress_data, "building the base");
	if (pk_repo_checkout(lab, base, err) < 0 || pk_kconfig_sync(lab, base, NULL, err) < 0 ||
	    pk_build_kernel(&built, lab, err) < 0)
		goto out;
	/* a base that does not build: the side's own build will say so */
	if (built.ok && pk_state_write(build_dir, PK_STATE_CAUGHT_UP, base, strlen(base), err) < 0)
		goto out;
	rc = pk_repo_checkout(lab, commit, err);
out:
	pk_build_result_clear(&built);
	return rc;
}

/* Build whatever is checked out in the lab, for side s, its config made to fit the tree. */
int pk_pipeline_build(struct pk_test_side *s, const struct pk_lab *lab, const struct pk_test_opts *opts,
		      GError **err)
{
	g_autofree char *series = pk_lab_tree_series(lab);

	/* a commit that deleted (or broke) the top Makefile: no make can start, which is this side's answer */
	if (!series) {
		s->build_tried = true;
		s->build.ok = false;
		s->build.errors = g_strdup_printf("%.12s has no top-level Makefile stating VERSION and PATCHLEVEL: "
						  "nothing of the tree can be built\n", s->commit);
		return 0;
	}
	if (fill_build_dir(lab, opts, s->commit, err) < 0 || pk_kconfig_sync(lab, s->commit, NULL, err) < 0)
		return -1;
	pk_pipeline_stage(opts, "building", s);
	if (pk_build_kernel(&s->build, lab, err) < 0)
		return -1;
	s->build_tried = true;
	if (!s->build.ok && !s->build.errors)
		s->build.errors = g_strdup("make failed without a compiler error line\n");
	return 0;
}

int pk_pipeline_boot(struct pk_test_side *s, const struct pk_lab *lab, const struct pk_test_opts *opts,
		     const char *vmlinux, const char *verb, struct pk_boot_result *out, GError **err)
{
	struct pk_boot_opts bopts = PK_BOOT_OPTS_INIT;

	bopts.vmlinux = vmlinux;
	bopts.timeout = opts->boot_timeout;
	pk_pipeline_stage(opts, verb, s);
	if (pk_boot_kernel(out, lab, &bopts, err) < 0)
		return -1;
	s->booted = true;
	return 0;
}
