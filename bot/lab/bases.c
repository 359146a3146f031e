/* bases.c - the lab's bases by name; see bases.h. */
#include "lab/bases.h"

#include <string.h>

#include "base/util.h"

int pk_bases_debian(struct pk_debian_source *out, const char *spec, GError **err)
{
	const char *v = g_str_has_prefix(spec, "debian:") ? spec + strlen("debian:") : NULL;

	/* a version is digits and dots: it goes into a path and a package name */
	if (!v || !*v || strspn(v, "0123456789.") != strlen(v) || *v == '.')
		return pk_error(err, PK_ERROR_INPUT, "'%s' is not a kernel source (debian:6.12, debian:6.1)", spec);
	out->name = g_strdup(spec);
	out->version = g_strdup(v);
	out->package = g_strconcat("linux-source-", v, NULL);
	out->tarball = g_strdup_printf("/usr/src/linux-source-%s.tar.xz", v);
	out->tag = g_strconcat(PK_BASES_DEBIAN_TAG, v, NULL);
	return 0;
}

void pk_debian_source_clear(struct pk_debian_source *src)
{
	g_free(src->name);
	g_free(src->version);
	g_free(src->package);
	g_free(src->tarball);
	g_free(src->tag);
	memset(src, 0, sizeof *src);
}

char *pk_bases_ref(const char *name)
{
	if (g_str_has_prefix(name, "debian:"))
		return g_strconcat(PK_BASES_DEBIAN_TAG, name + strlen("debian:"), NULL);
	/* a tree's branch: "<tree>/<branch>" where no such ref or tag is meant */
	if (strchr(name, '/') && !g_str_has_prefix(name, "refs/") && !strchr(name, '~') && !strchr(name, '^'))
		return g_strconcat(PK_BASES_TREE_PREFIX, name, NULL);
	return g_strdup(name);
}
