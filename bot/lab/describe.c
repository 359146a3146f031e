/* describe.c - the lab as a report names it; see describe.h. */
#include "lab/describe.h"

#include <string.h>

#include "lab/repo.h"
#include "lab/setup.h"
#include "base/proc.h"
#include "base/util.h"

char *pk_describe_base(const struct pk_lab *lab, const char *rev, GError **err)
{
	g_autofree char *commit = pk_repo_resolve(lab, rev, err);
	g_autofree char *base = NULL, *version = NULL;

	if (!commit || !(version = pk_repo_kernel_version(lab, commit, err)))
		return NULL;
	base = pk_repo_resolve(lab, PK_LAB_BASE_TAG, NULL);
	if (base && !strcmp(base, commit))
		return g_strdup_printf("Linux %s (Debian %s), commit %.12s", version, PK_LAB_KERNEL_PACKAGE, commit);
	return g_strdup_printf("Linux %s, commit %.12s", version, commit);
}

char *pk_describe_compiler(GError **err)
{
	const char *argv[] = { "gcc", "--version", NULL };
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
		pk_error(err, PK_ERROR_FAILED, "gcc --version %s", how);
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
