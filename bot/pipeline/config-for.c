/* config-for.c - the config a test or a bisect builds on, derived at a commit (private.h). */
#include "pipeline/private.h"

#include "lab/derive.h"
#include "lab/kconfig.h"
#include "lab/repo.h"
#include "base/util.h"

int pk_pipeline_config_for(struct pk_lab *out, struct pk_derived *found, const struct pk_lab *lab,
			   const struct pk_test_opts *opts, const struct pk_patch *patch, const char *at,
			   const char *removed_at, const struct pk_unlinked *unlinked, const char *what,
			   GError **err)
{
	struct pk_derived removed = { 0 };
	g_autofree char *series = NULL;
	bool removal = removed_at && pk_derive_deletes_code(patch);
	int rc;

	/* a removal: what builds the deleted code, read where it still is */
	if (removal && (pk_repo_checkout(lab, removed_at, err) < 0 ||
			pk_kconfig_sync(lab, removed_at, NULL, err) < 0 ||
			pk_derive_removed(&removed, lab, patch, err) < 0))
		return -1;
	/* the lab's .config, made for at's Kconfig, is what the derived config adds to */
	if (pk_repo_checkout(lab, at, err) < 0) {
		rc = -1;
	} else if (!(series = pk_lab_tree_series(lab))) {
		/* no top Makefile there: no config can be made; the lab's, whose build will say why it fails */
		rc = 0;
	} else {
		rc = pk_kconfig_sync(lab, at, NULL, err) < 0 ? -1
		   : pk_derive_config(out, found, lab, patch, removal ? &removed : NULL, unlinked, err);
	}
	if (removal)
		pk_derived_clear(&removed);
	if (rc < 0)
		return -1;
	if (rc && found && found->lines) {
		g_autofree char *lines = g_strdelimit(g_strdup(found->lines), "\n", ' ');
		pk_info("testing on a config derived for %s (%s): %s", what, out->config_hash, lines);
	}
	if (rc && found && found->devices)
		pk_info("booting with the devices its drivers need: %s", found->devices);
	if (pk_derive_prune(lab, rc ? out : NULL, opts->derived_builds, err) < 0) {
		if (rc)
			pk_lab_clear(out);
		return -1;
	}
	return rc;
}
