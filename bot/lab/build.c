/* build.c - incremental, reproducible kernel builds; see build.h. */
#include "lab/build.h"
#include "base/proc.h"
#include "lab/sandbox.h"
#include "base/util.h"

#include <string.h>
#include <unistd.h>

#define BUILD_LOG_CAP (32u << 20)

#define BUILD_ENV \
	"KBUILD_BUILD_TIMESTAMP=2024-01-01 00:00:00 UTC", \
	"KBUILD_BUILD_USER=printkbot", \
	"KBUILD_BUILD_HOST=printkbot", \
	"KBUILD_BUILD_VERSION=1", \
	/* set, even empty, it stops setlocalversion asking git whether the \
	 * tree is clean (a "+" on the banner that depends on where make ran) */ \
	"LOCALVERSION=", \
	"LC_ALL=C"

static const char *const build_env[] = { BUILD_ENV, NULL };

/*
 * What a failed host program or compiler says when the sandbox denied it
 * something: a write outside the build dir, a connection, a uid change.
 */
static const char *const denied_words[] = {
	"Read-only file system", "Network is unreachable", "Connection refused",
	"Permission denied", "Operation not permitted", "CPU time limit exceeded",
	"File size limit exceeded", "Cannot allocate memory", "Resource temporarily unavailable",
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

/* The first log line with a sign of a denied operation, or NULL. */
static char *denied_line(const char *log)
{
	g_auto(GStrv) lines = g_strsplit(log, "\n", -1);

	for (char **l = lines; *l; l++)
		for (const char *const *w = denied_words; *w; w++)
			if (strstr(*l, *w))
				return g_strdup(g_strstrip(*l));
	return NULL;
}

/*
 * ccache's directory, for binding it into the sandbox (NULL when ccache
 * is missing or has no cache yet).  Asked once: it is a child process.
 */
static const char *ccache_dir(void)
{
	static gsize done;
	static char *dir;

	if (g_once_init_enter(&done)) {
		const char *env = g_getenv("CCACHE_DIR");
		const char *argv[] = { "ccache", "-k", "cache_dir", NULL };
		g_autoptr(GString) out = g_string_new(NULL);
		struct pk_proc_opts o = PK_PROC_OPTS_INIT;
		struct pk_proc_result r;

		o.capture = out;
		o.timeout = 10;
		if (env && *env)
			dir = g_strdup(env);
		else if (pk_proc_have("ccache") && pk_proc_run(&r, argv, &o, NULL) == 0 && pk_proc_ok(&r))
			dir = g_strdup(g_strstrip(out->str));
		if (dir && !g_file_test(dir, G_FILE_TEST_IS_DIR))
			g_clear_pointer(&dir, g_free);
		g_once_init_leave(&done, 1);
	}
	return dir;
}

int pk_build_step(const struct pk_lab *lab, const char *what, const char *cwd, const char *const *argv,
		  const char *const *extra_ro, GError **err)
{
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	const char *ro[8] = { lab->tree };
	const char *rw[] = { build_dir, NULL };
	const struct pk_sandbox_config *sc = pk_sandbox_settings();
	struct pk_sandbox sb = { .ro = ro, .rw = rw, .cwd = cwd ? cwd : lab->tree, .env = build_env,
				 .limits = &sc->build };
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *how = NULL;
	bool sandboxed = false;
	struct pk_proc_result res;
	unsigned n = 1;

	for (const char *const *p = extra_ro; p && *p && n + 1 < G_N_ELEMENTS(ro); p++)
		ro[n++] = *p;
	opts.cwd = cwd ? cwd : lab->tree;
	opts.env = build_env;
	opts.capture = out;
	opts.timeout = sc->build_timeout > 0 ? sc->build_timeout : 3600;
	if (pk_sandbox_run(&res, &sandboxed, &sb, argv, &opts, err) < 0)
		return -1;
	if (pk_proc_ok(&res))
		return 0;
	how = pk_proc_describe(&res);
	return pk_error(err, PK_ERROR_FAILED, "%s: %s %s: %s", what, sandboxed ? "make (sandboxed)" : "make",
			how, out->len > 600 ? out->str + out->len - 600 : out->str);
}

/*
 * Run make vmlinux, wrapped in the sandbox when pk_sandbox_run() finds it
 * active: the tree read-only (with O= kbuild writes only the build dir:
 * a host program cannot change the sources the next patch is applied
 * to), the build dir writable, ccache's directory read-only with ccache
 * in read-only mode.  Read-only because a writable ccache is shared with
 * every other build on the machine: a host program could plant a cached
 * object under the hash of another file and have the bot's next kernel,
 * or someone else's, link it.  A read-only cache still serves the hits
 * of unchanged files; results of patched files are not kept, which costs
 * nothing since the build dir is incremental anyway.
 */
static int run_make(struct pk_proc_result *out, bool *out_sandboxed, const struct pk_lab *lab,
		    const struct pk_proc_opts *opts, GError **err)
{
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	g_autofree char *odir = g_strconcat("O=", build_dir, NULL);
	g_autofree char *jobs = g_strdup_printf("-j%ld", MAX(1L, sysconf(_SC_NPROCESSORS_ONLN)));
	const char *cdir = pk_proc_have("ccache") ? ccache_dir() : NULL;
	const char *plain[] = { "make", "-s", jobs, odir,
				pk_proc_have("ccache") ? "CC=ccache gcc" : "CC=gcc", "vmlinux", NULL };
	const char *inside[] = { "make", "-s", jobs, odir, cdir ? "CC=ccache gcc" : "CC=gcc", "vmlinux", NULL };
	g_autofree char *ccache_env = cdir ? g_strconcat("CCACHE_DIR=", cdir, NULL) : NULL;
	const char *env[] = { BUILD_ENV, "CCACHE_READONLY=1", "CCACHE_NOSTATS=1",
			      "CCACHE_TEMPDIR=/tmp/ccache", ccache_env, NULL };
	const char *ro[] = { lab->tree, cdir, NULL };
	const char *rw[] = { build_dir, NULL };
	struct pk_sandbox sb = { .ro = ro, .rw = rw, .cwd = lab->tree, .env = env, .argv = inside,
				 .limits = &pk_sandbox_settings()->build };

	return pk_sandbox_run(out, out_sandboxed, &sb, plain, opts, err);
}

/* The errors of a failed build: the compiler's, else make's end; and what the sandbox or a limit did. */
static char *failure_text(const char *log, const struct pk_proc_result *pr, const struct pk_lab *lab,
			  bool sandboxed)
{
	g_autofree char *errors = pk_build_errors(log, 20, lab->tree);
	g_autofree char *how = pk_proc_describe(pr);
	g_autofree char *denied = sandboxed ? denied_line(log) : NULL;
	size_t len = strlen(log);
	GString *out = g_string_new(NULL);

	if (errors)
		g_string_append(out, errors);
	else
		g_string_append_printf(out, "make %s\n%s%s", how, len > 2000 ? log + len - 2000 : log,
				       len && log[len - 1] != '\n' ? "\n" : "");
	if (pr->end == PK_PROC_TIMEOUT && errors)
		g_string_append_printf(out, "make %s\n", how);
	if (pr->truncated)
		g_string_append_printf(out, "(the build log was cut at its limit of %u MiB)\n", BUILD_LOG_CAP >> 20);
	if (denied) {
		g_autofree char *note = g_strdup_printf(
			"The build ran in printkbot's sandbox (no network, nothing writable but the "
			"build dir, an unprivileged user, limits on CPU time, memory and file size), "
			"and something was denied there: %s", denied);
		g_autofree char *wrapped = pk_wrap(note, 72, "");

		g_string_append_printf(out, "%s\n", wrapped);
	}
	return g_string_free(out, FALSE);
}

int pk_build_kernel(struct pk_build_result *out, const struct pk_lab *lab, GError **err)
{
	const struct pk_sandbox_config *sc = pk_sandbox_settings();
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	g_autofree char *log_path = g_build_filename(build_dir, "printkbot-build.log", NULL);
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	struct pk_build_result res = { 0 };
	g_autoptr(GString) log = g_string_new(NULL);
	struct pk_proc_result pr;
	bool sandboxed = false;

	opts.cwd = lab->tree;
	opts.env = build_env;
	opts.log_path = log_path;
	opts.capture = log;
	opts.output_cap = BUILD_LOG_CAP;
	opts.timeout = sc->build_timeout > 0 ? sc->build_timeout : 3600;
	if (run_make(&pr, &sandboxed, lab, &opts, err) < 0)
		return -1;
	res.ok = pk_proc_ok(&pr);
	res.sandboxed = sandboxed;
	res.seconds = pr.seconds;
	res.log_path = g_steal_pointer(&log_path);
	res.vmlinux = g_build_filename(build_dir, "vmlinux", NULL);
	if (!res.ok)
		res.errors = failure_text(log->str, &pr, lab, sandboxed);
	*out = res;
	return 0;
}
