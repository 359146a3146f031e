/* build.c - incremental, reproducible kernel builds; see build.h. */
#include "build.h"
#include "proc.h"
#include "util.h"

#include <string.h>
#include <unistd.h>

#define BUILD_TIMEOUT 3600.0
#define BUILD_LOG_CAP (32u << 20)

static const char *const build_env[] = {
	"KBUILD_BUILD_TIMESTAMP=2024-01-01 00:00:00 UTC",
	"KBUILD_BUILD_USER=printkbot",
	"KBUILD_BUILD_HOST=printkbot",
	"KBUILD_BUILD_VERSION=1",
	"LC_ALL=C",
	NULL,
};

void pk_build_result_clear(struct pk_build_result *res)
{
	g_free(res->errors);
	g_free(res->log_path);
	g_free(res->vmlinux);
	memset(res, 0, sizeof(*res));
}

/* Lines a compiler, linker or make would say an error with. */
static bool is_error_line(const char *line)
{
	return strstr(line, ": error: ") || strstr(line, ": fatal error: ") ||
	       strstr(line, ": undefined reference to ");
}

/*
 * The lines a reviewer needs from a failed build: each error with the
 * function it is in and, when it comes out of a macro (every pr_*() is
 * one), the last "in expansion of macro" note after it, which points at
 * the caller's own line; then the first make line naming the object that
 * failed.  Paths under tree are made relative to it.
 */
char *pk_build_errors(const char *log, unsigned max_lines, const char *tree)
{
	g_auto(GStrv) lines = g_strsplit(log, "\n", -1);
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *prefix = tree ? g_strconcat(tree, "/", NULL) : NULL;
	const char *function = NULL, *expansion = NULL, *make_line = NULL;
	unsigned n = 0;

	for (char **l = lines; *l && n < max_lines; l++) {
		if (strstr(*l, ": In function ")) {
			function = *l;
		} else if (is_error_line(*l)) {
			if (expansion && n < max_lines)
				g_string_append_printf(out, "%s\n", expansion), n++;
			expansion = NULL;
			if (function && n + 1 < max_lines)
				g_string_append_printf(out, "%s\n", function), n++;
			function = NULL;
			g_string_append_printf(out, "%s\n", *l);
			n++;
		} else if (n && strstr(*l, ": note: in expansion of macro ")) {
			expansion = *l;
		} else if (!make_line && g_str_has_prefix(*l, "make") && strstr(*l, "***")) {
			make_line = *l;
		}
	}
	if (expansion && n < max_lines)
		g_string_append_printf(out, "%s\n", expansion), n++;
	if (make_line && n < max_lines)
		g_string_append_printf(out, "%s\n", make_line), n++;
	if (!n)
		return NULL;
	if (prefix) {
		g_autoptr(GString) rel = g_string_new(out->str);
		g_string_replace(rel, prefix, "", 0);
		return g_string_free(g_steal_pointer(&rel), FALSE);
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}

int pk_build_kernel(struct pk_build_result *out, const struct pk_lab *lab, GError **err)
{
	g_autofree char *odir = g_strconcat("O=", lab->build_dir, NULL);
	g_autofree char *jobs = g_strdup_printf("-j%ld", MAX(1L, sysconf(_SC_NPROCESSORS_ONLN)));
	g_autofree char *log_path = g_build_filename(lab->build_dir, "printkbot-build.log", NULL);
	const char *cc = pk_proc_have("ccache") ? "CC=ccache gcc" : "CC=gcc";
	const char *argv[] = { "make", "-s", jobs, odir, cc, "vmlinux", NULL };
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	struct pk_build_result res = { 0 };
	g_autoptr(GString) log = g_string_new(NULL);
	struct pk_proc_result pr;

	opts.cwd = lab->tree;
	opts.env = build_env;
	opts.log_path = log_path;
	opts.capture = log;
	opts.output_cap = BUILD_LOG_CAP;
	opts.timeout = BUILD_TIMEOUT;
	if (pk_proc_run(&pr, argv, &opts, err) < 0)
		return -1;
	res.ok = pk_proc_ok(&pr);
	res.seconds = pr.seconds;
	res.log_path = g_steal_pointer(&log_path);
	res.vmlinux = g_build_filename(lab->build_dir, "vmlinux", NULL);
	if (!res.ok) {
		res.errors = pk_build_errors(log->str, 20, lab->tree);
		if (!res.errors) {
			g_autofree char *how = pk_proc_describe(&pr);

			res.errors = g_strdup_printf("make %s\n%s", how,
						     log->len > 2000 ? log->str + log->len - 2000 : log->str);
		}
	}
	*out = res;
	return 0;
}
