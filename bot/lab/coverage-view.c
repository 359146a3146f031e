/*
 * coverage-view.c - how coverage.c and coverage-why.c read the build dir
 * (coverage-private.h): the .cmd file of an object, and a file of the
 * build dir read as beneath.h reads, since the sandbox writes there.
 */
#include "lab/coverage-private.h"
#include "base/beneath.h"

#include <string.h>

/* What a .cmd file or thin archive of the build dir may take: a vmlinux.a of allyesconfig is ~2 MiB. */
#define BUILT_FILE_CAP (64u << 20)

int pk_coverage_read_built(const struct pk_build_view *v, const char *rel, char **out, gsize *out_len,
			   GError **err)
{
	size_t len = 0;
	int rc = pk_beneath_read_at(out, &len, v->build_dir, rel, BUILT_FILE_CAP, err);

	if (rc > 0 && out_len)
		*out_len = len;
	return rc;
}

char *pk_coverage_cmd_path(const char *object)
{
	g_autofree char *dir = g_path_get_dirname(object);
	g_autofree char *base = g_path_get_basename(object);
	g_autofree char *name = g_strdup_printf(".%s.cmd", base);

	return strcmp(dir, ".") ? g_build_filename(dir, name, NULL) : g_steal_pointer(&name);
}
