/*
 * derive.h - a kernel config per patch.  The lab's config (tinyconfig +
 * qemu/kernel.config) compiles little of the drivers real logging churn
 * touches; a patch to one of them is tested on the lab's config plus the
 * Kconfig symbols that put its files into the kernel, and what those
 * depend on, all built in (=y), COMPILE_TEST preferred where a driver is
 * another architecture's (as 0-day builds them on x86).
 *
 * The symbols come from the Kbuild makefiles (coverage.h's
 * pk_coverage_kbuild_groups()) of the tree as checked out, new files
 * included (their Makefile line is the patch's when the tree is the
 * patched one), and from the options the patch itself adds: a `config
 * FOO` of a Kconfig hunk whose CONFIG_FOO another file of the patch uses
 * (`obj-$(CONFIG_FOO)`, `#ifdef CONFIG_FOO`, `IS_ENABLED(CONFIG_FOO)`) is
 * wanted on, so that the after kernel builds what the patch gates with
 * it; the before tree has no such symbol, and its kernel is built
 * without it (kconfig.h says so).  The dependencies are solved by
 * qemu/kconfig-enable.py (Debian's python3-kconfiglib, in the sandbox);
 * the tree's merge_config.sh and olddefconfig make the .config and
 * kconfig.h checks that every line took.  A derived config is named like
 * the lab's, by the first 12 hex of sha256(fragment + its lines): its
 * build dir (build/<hash>-<series>/, started as a copy of the lab's so that Kbuild
 * rebuilds only what the new symbols change), its builds, boots and noise
 * mask in the store are its own, and a later patch that needs the same
 * lines reuses them.
 *
 * The devices: qemu/devices maps path prefixes to the QEMU devices their
 * drivers bind to; a patch to such a driver boots, before and after, with
 * them attached, so that the driver probes and prints.  They are part of
 * the derived config's name (the stored boots of one set of devices never
 * stand in for another's), and without lines of its own a derived config
 * keeps the lab's build dir.
 */
#ifndef PK_DERIVE_H
#define PK_DERIVE_H

#include <glib.h>
#include <stdbool.h>

#include "base/patch.h"
#include "lab/lab.h"

/* What the derivation found, for the review. */
struct pk_derived {
	char *lines;        /* the CONFIG_X=y lines added ("\n"-separated), NULL when none */
	GPtrArray *asked;   /* char*: "drivers/ata/ahci.c: CONFIG_SATA_AHCI" per symbol group wanted */
	GPtrArray *cannot;  /* char*: "CONFIG_ARM64: CONFIG_ARM64 depends on n" per group no config gave */
	char *devices;      /* the QEMU devices attached ("e1000e, pci-serial"), NULL when none */
	GPtrArray *added;   /* char*: "CONFIG_FOO (tristate, default n)" per option the patch adds
	                       that gates what it changes (wanted on), NULL when none */
	bool removal;       /* lines came for the code the patch deletes (pk_derive_removed()) */
	GPtrArray *linked;  /* char*: "CONFIG_CRC8 (lib/crc8.c: crc8)" per option turned on for what the
	                       patched kernel did not link (pk_derive_unlinked()), NULL when none */
	GPtrArray *only_on; /* char*: "HVCS: PPC_PSERIES: powerpc" per group of cannot that needs a
	                       symbol only those architectures' Kconfig define (arch/powerpc/),
	                       NULL when none */
};

/*
 * What a kernel that did not link lacks (pk_derive_unlinked()): a patch
 * that calls a library function without selecting its option (crc8()
 * without `select CRC8`) links only in configs where something else
 * turned it on.
 */
struct pk_unlinked {
	GPtrArray *want;    /* char*: Kbuild groups ("CRC8", "A|B") that build the missing symbols */
	GPtrArray *why;     /* char*: "CONFIG_CRC8 (lib/crc8.c: crc8, crc8_populate_msb)", one per group */
};
void pk_unlinked_clear(struct pk_unlinked *u);

/*
 * Read from a failed build's errors (the linker's "undefined reference to
 * `sym'", modpost's "\"sym\" [...] undefined!") the symbols the kernel
 * lacks; find each one's C source in lab->tree as checked out (the line
 * that exports it, EXPORT_SYMBOL*(sym)) and that file's Kbuild groups
 * (pk_coverage_kbuild_groups()) which config (pk_kconfig_values() of the
 * build) leaves unmet: into *out (pk_unlinked_clear(); both arrays empty
 * when no symbol is exported by code some option off in config would
 * build: a typo, a function the patch forgot to write, a symbol of
 * another architecture).  -1 with err when the tree could not be searched.
 */
int pk_derive_unlinked(struct pk_unlinked *out, const struct pk_lab *lab, GHashTable *config,
		       const char *errors, GError **err);

/*
 * For the patch (its C sources, read in the tree as checked out now: the
 * base the patch goes on), the config and devices to test it with.
 * Returns 1 with *out a new lab on a derived config, with its devices
 * (same tree, cache and lock as lab, whose lock it does not own;
 * pk_lab_clear() it), 0 when the lab's own config compiles every touched
 * C source that any symbol could add and no device is wanted (out
 * untouched); -1 with err when the solver or a file could not be run or
 * read.  *found (may be NULL) says what was looked for either way
 * (pk_derived_clear()).  unlinked (may be NULL): groups wanted as well,
 * for a kernel of this patch that did not link without them (found->linked).
 */
int pk_derive_config(struct pk_lab *out, struct pk_derived *found, const struct pk_lab *lab,
		     const struct pk_patch *patch, const struct pk_derived *removed,
		     const struct pk_unlinked *unlinked, GError **err);
void pk_derived_clear(struct pk_derived *d);

/*
 * Whether no kernel of the architecture whose source is arch/<karch>/
 * can build what d's could not: every group of d->cannot needs a symbol
 * that only other architectures' Kconfig define (d->only_on).  Then, when
 * why is not NULL, *why says so for the first ("CONFIG_HVCS needs
 * PPC_PSERIES, which only arch/powerpc/ defines"): testing there would
 * build a whole kernel to learn what the Kconfig files already say.
 */
bool pk_derived_beyond_arch(const struct pk_derived *d, const char *karch, char **why);

/* Whether the patch deletes a C source (a driver's removal). */
bool pk_derive_deletes_code(const struct pk_patch *patch);

/*
 * A removal's half of a derived config: the symbols that build the C
 * sources the patch deletes, read from the Kbuild makefiles of the tree as
 * checked out now (the patch's parent, where they still are) and solved
 * there, into *out (pk_derived_clear(); its lines NULL when the lab's
 * config builds them already).  Given to pk_derive_config() on the
 * patched tree as removed, its lines go into the derived config too: the
 * kernel before the patch is built with the driver, so that what it
 * printed shows in the printk index diff as removed; the patched tree has
 * no such symbols, and its kernel goes without them (kconfig.h).  What
 * no config can set (a driver that depends on BROKEN) is in out->cannot.
 */
int pk_derive_removed(struct pk_derived *out, const struct pk_lab *lab, const struct pk_patch *patch,
		      GError **err);

/*
 * The rows of datadir's qemu/devices whose prefix the patch touches: their
 * QEMU arguments into args (each option and value pair once, in the
 * table's order), the devices' names into names ("qemu-xhci, usb-kbd"),
 * the drivers the rows name (CONFIG_ words) that config (pk_kconfig_values())
 * lacks into want (symbols without CONFIG_) and found->asked.  -1 with
 * err naming the line of a malformed row.
 */
int pk_derive_devices(GPtrArray *args, GString *names, GPtrArray *want, struct pk_derived *found,
		      GHashTable *config, const char *datadir, const struct pk_patch *patch, GError **err);

#define PK_DERIVED_BUILDS_KEPT 6

/*
 * Remove the least recently used derived build dirs beyond keep (each is
 * a whole kernel build): the lab's own dirs and in_use (a derived lab now
 * being tested, may be NULL) stay; keep 0 means PK_DERIVED_BUILDS_KEPT
 * ([test] derived_builds unset).  Used means derived for a patch: the
 * dir's mtime, which pk_derive_config() sets.  A removed config is made
 * again, from a copy of the lab's, when a patch needs it.
 */
int pk_derive_prune(const struct pk_lab *lab, const struct pk_lab *in_use, unsigned keep, GError **err);

/*
 * The build dir a new derived config's dir starts as a copy of: the one of
 * the lab's kernel series (the lab's, or another derived config's) whose
 * lines are nearest to lines (fewest CONFIG_ lines one has and the other
 * not), among those that hold a built kernel, so that Kbuild compiles only
 * what the difference touches; the lab's on a tie.  A derived config that
 * adds to one with a subsystem already (CONFIG_NET and Bluetooth) starts
 * from it rather than from the lab's tinyconfig.  NULL when no build dir
 * of the series is there.  Caller frees.
 */
char *pk_derive_nearest_build_dir(const struct pk_lab *lab, const char *lines);

#endif
