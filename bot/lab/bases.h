/*
 * bases.h - the kernels the lab tests on.  Each is a named ref of the
 * lab's one repository, so builds, boots and noise masks, stored per
 * (commit, config), are shared by every base that has the same commit:
 *
 *   refs/tags/printkbot-debian-<ver>   Debian's linux-source-<ver>
 *                                      (`setup --source debian:<ver>`);
 *                                      the default, 6.12, is also
 *                                      PK_LAB_BASE_TAG
 *   refs/printkbot/trees/<tree>/<branch>  a branch of an operator's
 *                                      repository ([tree NAME]), fetched
 *                                      with libgit2 (the operator's
 *                                      repository is only read)
 *
 * A base is named "debian:6.1" or "<tree>/<branch>"; pk_bases_ref()
 * turns a name into the revision to resolve.
 */
#ifndef PK_BASES_H
#define PK_BASES_H

#include <glib.h>

#include "lab/lab.h"

#define PK_BASES_DEBIAN_TAG "printkbot-debian-"
#define PK_BASES_TREE_PREFIX "refs/printkbot/trees/"
#define PK_BASES_DEFAULT_SOURCE "debian:6.12"

/* One of Debian's kernel source packages, as setup imports it. */
struct pk_debian_source {
	char *name;       /* "debian:6.1" */
	char *version;    /* "6.1" */
	char *package;    /* "linux-source-6.1" */
	char *tarball;    /* "/usr/src/linux-source-6.1.tar.xz" */
	char *tag;        /* "printkbot-debian-6.1" */
};

/* "debian:6.1" (or "debian:6.12") read into *out; an error (PK_ERROR_INPUT) for anything else. */
int pk_bases_debian(struct pk_debian_source *out, const char *spec, GError **err);
void pk_debian_source_clear(struct pk_debian_source *src);

/*
 * The revision a base name stands for: "debian:6.1" the tag
 * printkbot-debian-6.1, "net-next/main" the fetched branch
 * refs/printkbot/trees/net-next/main, anything else itself (a tag, a
 * commit id).  A new string.
 */
char *pk_bases_ref(const char *name);

#endif
