/*
 * derive.h - a kernel config per patch.  The lab's config (tinyconfig +
 * qemu/kernel.config) compiles little of the drivers real logging churn
 * touches; a patch to one of them is tested on the lab's config plus the
 * Kconfig symbols that put its files into the kernel, and what those
 * depend on, all built in (=y), COMPILE_TEST preferred where a driver is
 * another architecture's (as 0-day builds them on x86).
 *
 * The symbols come from the Kbuild makefiles (coverage.h's
 * pk_coverage_kbuild_groups()); the dependencies are solved by
 * qemu/kconfig-enable.py (Debian's python3-kconfiglib, in the sandbox);
 * the tree's merge_config.sh and olddefconfig make the .config and
 * kconfig.h checks that every line took.  A derived config is named like
 * the lab's, by the first 12 hex of sha256(fragment + its lines): its
 * build dir (build/<hash>/, started as a copy of the lab's so that Kbuild
 * rebuilds only what the new symbols change), its builds, boots and noise
 * mask in the store are its own, and a later patch that needs the same
 * lines reuses them.
 */
#ifndef PK_DERIVE_H
#define PK_DERIVE_H

#include <glib.h>

#include "base/patch.h"
#include "lab/lab.h"

/* What the derivation found, for the review. */
struct pk_derived {
	char *lines;        /* the CONFIG_X=y lines added ("\n"-separated), NULL when none */
	GPtrArray *asked;   /* char*: "drivers/ata/ahci.c: CONFIG_SATA_AHCI" per symbol group wanted */
	GPtrArray *cannot;  /* char*: "CONFIG_ARM64: CONFIG_ARM64 depends on n" per group no config gave */
};

/*
 * For the patch (its C sources, read in the tree as checked out now: the
 * base the patch goes on), the config to test it with.  Returns 1 with
 * *out a new lab on a derived config (same tree, cache and lock as lab,
 * whose lock it does not own; pk_lab_clear() it), 0 when the lab's own
 * config compiles every touched C source that any symbol could add (out
 * untouched); -1 with err when the solver or a file could not be run or
 * read.  *found (may be NULL) says what was looked for either way
 * (pk_derived_clear()).
 */
int pk_derive_config(struct pk_lab *out, struct pk_derived *found, const struct pk_lab *lab,
		     const struct pk_patch *patch, GError **err);
void pk_derived_clear(struct pk_derived *d);

#endif
