/*
 * describe.h - the lab as a report names it to a person: the kernel it
 * tested on (version, where it came from, commit), the compiler that
 * built it, and the lines of the config fragment, so that a reply can
 * say what the kernel test robot says in its base:, compiler: and
 * config: lines.
 *
 * Each function returns a new string (or string vector) the caller
 * frees, or NULL with err set and nothing written.
 */
#ifndef PK_DESCRIBE_H
#define PK_DESCRIBE_H

#include <glib.h>

#include "lab/lab.h"

/*
 * rev as a person names a kernel: "Linux 6.12.118 (Debian
 * linux-source-6.12 6.12.118-1~deb12u1)" for an import of Debian's
 * package (the version as dpkg-query has it installed), "net-next/main
 * 1a2b3c4d5e6f (v6.13-rc1-57-g1a2b3c4d5e6f)" for the head of a fetched
 * tree's branch (bases.h; git describe, else the Makefile's version in
 * the brackets), "Linux 6.13-rc1, commit 0123456789ab" for any other.
 */
char *pk_describe_base(const struct pk_lab *lab, const char *rev, GError **err);

/*
 * The compiler arch's lab builds with (build.c's CC: gcc, or Debian's
 * cross gcc, arch.h), as `gcc --version` names it on its first line:
 * "gcc (Debian 12.2.0-14+deb12u1) 12.2.0".  It runs gcc, so a caller
 * that needs it often keeps the answer.
 */
char *pk_describe_compiler(const struct pk_arch *arch, GError **err);

/*
 * The option lines of qemu/kernel.config, the fragment merged on top of
 * tinyconfig (kconfig.h): "CONFIG_X=y" and "# CONFIG_X is not set", in
 * file order, without the comments.
 */
char **pk_describe_config_lines(const struct pk_lab *lab, GError **err);

#endif
