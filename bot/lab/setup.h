/*
 * setup.h - `printkbot setup`: the lab made ready, step by step.
 *
 *   1. Debian's linux-source-6.12 extracted into the cache's linux/
 *      (apt-get installs the package when its tarball is missing);
 *   2. that tree imported as the repository's one base commit, tagged
 *      PK_LAB_BASE_TAG (repo.h's pk_repo_import_tree());
 *   3. the build dir's kernel config (kconfig.h's pk_kconfig_make());
 *   4. the guest's static init and its initramfs;
 *   5. each further source asked for (bases.h: "debian:6.1"), Debian's
 *      package imported as one more base commit of the same repository,
 *      tagged printkbot-debian-<ver> (the default source, debian:6.12,
 *      is the base commit, tagged so too).
 *
 * Every step checks whether its result is already there and complete, and
 * builds into a temporary name that is renamed into place when done, so an
 * interrupted setup is redone from the step it was in, and a setup of a
 * ready lab does nothing.
 */
#ifndef PK_SETUP_H
#define PK_SETUP_H

#include <glib.h>

#include "lab/lab.h"

/* The Debian package whose kernel setup imports (describe.h names the base after it). */
#define PK_LAB_KERNEL_PACKAGE "linux-source-6.12"

/*
 * Run the steps that are not done yet, with the sources (NULL-terminated
 * "debian:<ver>", may be NULL) as further bases; lab is opened and locked
 * by the caller.
 */
int pk_setup_lab(struct pk_lab *lab, const char *const *sources, GError **err);

#endif
