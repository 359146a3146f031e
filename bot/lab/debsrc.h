/*
 * debsrc.h - a Debian kernel source package's tarball, wherever Debian
 * has it: installed, installable from the system's own apt sources, or
 * in a newer suite of Debian's archive (setup --source debian:7.2).
 *
 * A package the system's sources lack (linux-source-7.2 is in
 * trixie-backports and unstable, not bookworm) is fetched with apt on a
 * private sources list, package lists and cache under the lab's cache
 * dir: the system's apt configuration, lists and dpkg state are never
 * touched, and nothing is installed.  The suites tried are trixie,
 * trixie-backports, unstable and experimental of $PRINTKBOT_DEBIAN_MIRROR
 * (default http://deb.debian.org/debian), each checked against Debian's
 * archive keyring; apt takes the newest version any of them has.  The
 * .deb is unpacked with dpkg-deb -x, its tarball kept until
 * pk_debsrc_done().  Needs root, as apt-get does.
 */
#ifndef PK_DEBSRC_H
#define PK_DEBSRC_H

#include <glib.h>

/*
 * The tarball of package (linux-source-X.Y) into *out (a new path):
 * system_path when it is there; else, as root, installed with apt-get
 * when the system's sources have the package; else downloaded from the
 * archive as above, under cache.  -1 with err saying which step failed,
 * or that no suite has the package.
 */
int pk_debsrc_tarball(char **out, const char *cache, const char *package, const char *system_path,
		      GError **err);

/* Remove what pk_debsrc_tarball() downloaded for package (the import holds it now). */
int pk_debsrc_done(const char *cache, const char *package, GError **err);

#endif
