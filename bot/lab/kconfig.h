/*
 * kconfig.h - the lab's kernel config: the build dir's .config, made
 * from tinyconfig and qemu/kernel.config for the tree as it is checked
 * out, and made again when a commit's Kconfig files differ from those it
 * was made for.
 */
#ifndef PK_KCONFIG_H
#define PK_KCONFIG_H

#include <glib.h>
#include <stdbool.h>

#include "lab/lab.h"

/*
 * Write the build dir's kernel config for the tree as it is checked out:
 * tinyconfig, qemu/kernel.config (and a derived config's lines, see
 * derive.h, kept in the build dir's state as PK_STATE_DERIVED_FRAGMENT)
 * merged on top, olddefconfig, each step
 * a pk_build_step() (the tree's kconfig programs run in the sandbox, as
 * builds do).  The config is a function of the tree's Kconfig and the
 * fragment only (not of the config before), so a commit's build is the
 * same whatever was built before it.  Options of the fragment the tree
 * does not have (an older kernel without PRINTK_INDEX) are an error, or,
 * when missing is not NULL, appended to it as " CONFIG_X=y" words.
 * Setup does this once, at the base; pk_kconfig_sync() again for a tree
 * whose Kconfig differs.
 */
int pk_kconfig_make(const struct pk_lab *lab, GString *missing, GError **err);

/*
 * Make the build dir's kernel config fit the tree of commit, which must
 * be checked out: when its Kconfig files (or the tinyconfig fragments and
 * scripts/kconfig) differ from those of the commit the config was last
 * made for, the config is made again for this tree (pk_kconfig_make(),
 * missing options told on stderr).  The commit is remembered in the build
 * dir's state (state.h, PK_STATE_KCONFIG); without it the config is the
 * one setup made, for the lab's base.  *out_refreshed (may be NULL) says whether
 * the config was made again.
 */
int pk_kconfig_sync(const struct pk_lab *lab, const char *commit, bool *out_refreshed, GError **err);

/*
 * Forget which commit build_dir's .config was made for, so that the next
 * pk_kconfig_sync() makes it again (a derived config's new build dir).
 */
int pk_kconfig_forget(const char *build_dir, GError **err);

/*
 * build_dir's .config as a new table, symbol ("ATA") -> value ("y", "m",
 * "0x10", "\"text\""); "is not set" symbols are absent.  NULL with err
 * when it cannot be read: missing, or not a regular file of its own (the
 * sandbox writes it: it is read as beneath.h reads).
 */
GHashTable *pk_kconfig_values(const char *build_dir, GError **err);

#endif
