/*
 * policy.c - the checks a patch passes before it is applied and built.
 */
#include "lab/policy.h"

#include <limits.h>
#include <string.h>

#include "base/util.h"
#include "lab/apply.h"
#include "lab/layer.h"
#include "lab/pathkind.h"

/*
 * A path that could leave the tree or reach into its git directory:
 * absolute, or with a ".." or ".git" component (git runs hooks and reads
 * config from there, as the bot, outside the sandbox).
 */
static bool path_is_unsafe(const char *path)
{
	g_auto(GStrv) parts = NULL;

	if (!path)
		return false;
	if (path[0] == '/' || path[0] == '\0')
		return true;
	parts = g_strsplit(path, "/", -1);
	for (char **p = parts; *p; p++)
		if (!strcmp(*p, "..") || !g_ascii_strcasecmp(*p, ".git"))
			return true;
	return false;
}

/*
 * A path no file system holds (over PATH_MAX, or a component over
 * NAME_MAX): applying it would fail in the middle of a checkout.
 */
static bool path_is_too_long(const char *path)
{
	g_auto(GStrv) parts = NULL;

	if (strlen(path) >= PATH_MAX)
		return true;
	parts = g_strsplit(path, "/", -1);
	for (char **p = parts; *p; p++)
		if (strlen(*p) > NAME_MAX)
			return true;
	return false;
}

/* Extended git header lines that make a binary or symlink change; NULL if none. */
static const char *special_change(const char *diff)
{
	for (const char *s = diff; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
		if (g_str_has_prefix(s, "GIT binary patch") || g_str_has_prefix(s, "Binary files "))
			return "a binary diff";
		if (g_str_has_prefix(s, "new file mode 120000") || g_str_has_prefix(s, "new mode 120000") ||
		    g_str_has_prefix(s, "old mode 120000") || g_str_has_prefix(s, "deleted file mode 120000"))
			return "a symbolic link";
	}
	return NULL;
}

/*
 * Whether what only a throwaway layer makes safe to build (the build
 * system, other files the build reads) is built: the sandbox keeps the
 * build away from the host, the layer keeps what it writes from the
 * next build (layer.h).  Without either, *why says which is missing.
 */
static bool layered_builds(const struct pk_policy *policy, char **why)
{
	g_autofree char *cache = NULL;

	if (policy->sandbox != PK_SANDBOX_ON) {
		*why = g_strdup("sandbox = off");
		return false;
	}
	cache = pk_cache_dir();
	return pk_layer_usable(cache, why);
}

static bool refuse(char **reason, char *why)
{
	*reason = why;
	return false;
}

bool pk_policy_allows(const struct pk_policy *policy, const struct pk_patch *patch, char **reason)
{
	const char *special;
	char *why = NULL;
	g_autofree char *no_layer = NULL;
	bool layered;

	if (policy->sandbox == PK_SANDBOX_ON && !pk_sandbox_usable(&why)) {
		char *r = g_strdup_printf("the bot builds patches only in its sandbox, which cannot run here (%s); "
					  "sandbox = off in [policy] builds without it", why);
		g_free(why);
		return refuse(reason, r);
	}
	/* the size limits first: nothing else is read of a patch over them */
	if ((why = pk_patch_over_limits(patch, policy)))
		return refuse(reason, why);
	layered = layered_builds(policy, &no_layer);
	if (patch->diff && (special = special_change(patch->diff)))
		return refuse(reason, g_strdup_printf("the patch carries %s, which the bot never applies", special));
	for (guint i = 0; i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];
		const char *paths[] = { f->old_path, f->new_path };

		for (guint k = 0; k < G_N_ELEMENTS(paths); k++) {
			const char *p = paths[k];
			if (!p)
				continue;
			if (path_is_unsafe(p))
				return refuse(reason, g_strdup_printf("%s: the path leaves the kernel tree "
								      "(or reaches into its .git)", p));
			if (path_is_too_long(p))
				return refuse(reason, g_strdup_printf("%.64s...: the path is %zu bytes, longer than "
								      "a file system holds (PATH_MAX %d, NAME_MAX "
								      "%d a component)", p, strlen(p), PATH_MAX,
								      NAME_MAX));
			switch (pk_path_kind(p)) {
			case PK_PATH_BUILD_SYSTEM:
				if (policy->allow_build_system || layered)
					break;
				return refuse(reason, g_strdup_printf("%s: the patch changes the build system, "
								      "which is built only in a throwaway layer "
								      "(%s)", p, no_layer));
			case PK_PATH_OTHER:
				if (policy->allow_other_files || layered)
					break;
				return refuse(reason, g_strdup_printf("%s: the build may read this file, which is "
								      "built only in a throwaway layer (%s)",
								      p, no_layer));
			case PK_PATH_C:
			case PK_PATH_INERT:
				break;
			}
		}
	}
	/* the paths above are the parser's; libgit2, which applies, must read the same ones */
	if ((why = pk_apply_refusal(patch)))
		return refuse(reason, why);
	return true;
}
