/* describe.c - the lab as a report names it; see describe.h. */
#include "lab/describe.h"

#include <string.h>

#include "lab/bases.h"
#include "lab/repo.h"
#include "base/proc.h"
#include "base/util.h"

/* The Debian package a base commit was imported from (setup's message names it), or NULL. */
static char *debian_package(const struct pk_lab *lab, const char *commit)
{
	g_autofree char *msg = pk_repo_commit_message(lab, commit, NULL);
	const char *p = msg ? strstr(msg, " from Debian's ") : NULL;

	if (!p)
		return NULL;
	p += strlen(" from Debian's ");
	return g_strndup(p, strcspn(p, " \n"));
}

/* The installed version of a Debian package (dpkg-query), or NULL. */
static char *debian_version(const char *package)
{
	const char *argv[] = { "dpkg-query", "-W", "-f", "${Version}", package, NULL };
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	struct pk_proc_result res;
	g_autoptr(GString) out = g_string_new(NULL);

	opts.capture = out;
	opts.output_cap = 4096;
	opts.timeout = 30;
	if (pk_proc_run(&res, argv, &opts, NULL) < 0 || !pk_proc_ok(&res) || !out->len)
		return NULL;
	return g_strstrip(g_strdup(out->str));
}

char *pk_describe_base(const struct pk_lab *lab, const char *rev, GError **err)
{
	g_autofree char *commit = pk_repo_resolve(lab, rev, err);
	g_autofree char *version = NULL, *package = NULL, *dversion = NULL, *branch = NULL, *desc = NULL;

	if (!commit || !(version = pk_repo_kernel_version(lab, commit, err)))
		return NULL;
	if ((package = debian_package(lab, commit))) {
		dversion = debian_version(package);
		return g_strdup_printf("Linux %s (Debian %s%s%s)", version, package, dversion ? " " : "",
				       dversion ? dversion : "");
	}
	desc = pk_repo_describe(lab, commit);
	if ((branch = pk_repo_ref_at(lab, commit, PK_BASES_TREE_PREFIX)))
		return g_strdup_printf("%s %.12s (%s)", branch, commit, desc ? desc : version);
	if (desc)
		return g_strdup_printf("Linux %s, commit %.12s (%s)", version, commit, desc);
	return g_strdup_printf("Linux %s, commit %.12s", version, commit);
}

char *pk_describe_compiler(const struct pk_arch *arch, GError **err)
{
	g_autofree char *gcc = pk_arch_gcc(arch);
	const char *argv[] = { gcc, "--version", NULL };
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	struct pk_proc_result res;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *how = NULL;

	opts.capture = out;
	opts.output_cap = 64 << 10;
	opts.timeout = 30;
	if (pk_proc_run(&res, argv, &opts, err) < 0)
		return NULL;
	if (!pk_proc_ok(&res) || !out->len) {
		how = pk_proc_describe(&res);
		pk_error(err, PK_ERROR_FAILED, "%s --version %s", gcc, how);
		return NULL;
	}
	return g_strndup(out->str, strcspn(out->str, "\r\n"));
}

char **pk_describe_config_lines(const struct pk_lab *lab, GError **err)
{
	g_autofree char *path = g_build_filename(lab->datadir, "qemu", "kernel.config", NULL);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	GPtrArray *out;

	if (pk_read_file(&text, NULL, path, 1 << 20, err) < 0)
		return NULL;
	lines = g_strsplit(text, "\n", -1);
	out = g_ptr_array_new();
	for (char **l = lines; *l; l++) {
		g_strstrip(*l);
		/* "# CONFIG_X is not set" sets an option too, as in a .config */
		if (g_str_has_prefix(*l, "CONFIG_") ||
		    (g_str_has_prefix(*l, "# CONFIG_") && g_str_has_suffix(*l, " is not set")))
			g_ptr_array_add(out, g_strdup(*l));
	}
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}
