/* pathkind.c - what a path of the tree is to the build; see pathkind.h. */
#include "lab/pathkind.h"

#include <glib.h>
#include <stdbool.h>
#include <string.h>

static bool path_is_build_system(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return g_str_has_prefix(path, "scripts/") || g_str_has_prefix(path, "tools/") ||
	       !strcmp(base, "Makefile") || g_str_has_prefix(base, "Makefile.") ||
	       !strcmp(base, "Kbuild") || g_str_has_prefix(base, "Kconfig");
}

/*
 * Files no build of vmlinux reads or runs: a patch may change them and be
 * applied, and they are listed as not built.  A prefix ends in "/"; any
 * other entry is a whole path.  The build-system names are checked first,
 * so Documentation/Kconfig (sourced by the top Kconfig) and
 * Documentation's Makefiles are never inert.
 */
static const char *const inert_paths[] = {
	"Documentation/",   /* read by `make htmldocs` and checkers, never by `make vmlinux` */
	"LICENSES/",        /* the SPDX texts: read by scripts/spdxcheck.py only */
	"MAINTAINERS",      /* read by scripts/get_maintainer.pl only */
	"CREDITS",          /* prose */
	"README",           /* prose */
	"COPYING",          /* prose */
	".mailmap",         /* read by git shortlog and get_maintainer.pl */
};

static bool path_is_inert(const char *path)
{
	for (size_t i = 0; i < G_N_ELEMENTS(inert_paths); i++) {
		const char *p = inert_paths[i];

		if (g_str_has_suffix(p, "/") ? g_str_has_prefix(path, p) : !strcmp(path, p))
			return true;
	}
	return false;
}

enum pk_path_kind pk_path_kind(const char *path)
{
	if (path_is_build_system(path))
		return PK_PATH_BUILD_SYSTEM;
	if (g_str_has_suffix(path, ".c") || g_str_has_suffix(path, ".h"))
		return PK_PATH_C;
	return path_is_inert(path) ? PK_PATH_INERT : PK_PATH_OTHER;
}
