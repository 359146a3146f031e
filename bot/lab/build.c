/* build.c - incremental, reproducible kernel builds; see build.h. */
#include "lab/build.h"
#include "base/profile.h"
#include "base/beneath.h"
#include "base/proc.h"
#include "lab/interrupted.h"
#include "lab/layer.h"
#include "lab/relocate.h"
#include "lab/repo.h"
#include "lab/sandbox.h"
#include "lab/state.h"
#include "base/util.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#define BUILD_LOG_CAP (32u << 20)
/* the .config kept with its build, at most (the lab's is about 52 KiB, 13 KiB as gzip) */
#define BUILD_CONFIG_CAP (2u << 20)

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
 * What every make of the lab's arch runs with: BUILD_ENV, and for a
 * cross build Kbuild's ARCH and CROSS_COMPILE (x86_64's make sees neither,
 * as it always did).  NULL-terminated; free with g_strfreev().
 */
static char **make_env(const struct pk_lab *lab)
{
	const struct pk_arch *arch = pk_lab_arch(lab);
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	g_autofree char *karch = g_strconcat("ARCH=", arch->karch, NULL);
	g_autofree char *cross = g_strconcat("CROSS_COMPILE=", arch->cross_compile ? arch->cross_compile : "", NULL);

	g_strv_builder_addv(b, (const char **)build_env);
	if (arch->cross_compile) {
		g_strv_builder_add(b, karch);
		g_strv_builder_add(b, cross);
	}
	return g_strv_builder_end(b);
}

/*
 * What a failed host program or compiler says when the sandbox denied it
 * something: a write outside the build dir, a connection, a uid change.
 */
static const char *const denied_words[] = {
	"Read-only file system", "Network is unreachable", "Connection refused",
	"Permission denied", "Operation not permitted", "CPU time limit exceeded",
	"File size limit exceeded", "Cannot allocate memory", "Resource temporarily unavailable",
	"No space left on device", NULL,
};

void pk_build_result_clear(struct pk_build_result *res)
{
	g_free(res->errors);
	g_free(res->log_path);
	g_free(res->vmlinux);
	g_free(res->config);
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

/* Beside the build dir, out of the sandbox's reach: "only published commits were built here". */
#define PUBLISHED_ONLY_SUFFIX ".published-only"

static char *published_only_marker(const struct pk_lab *lab)
{
	g_autofree char *build_dir = pk_lab_build_dir(lab);

	return g_strconcat(build_dir, PUBLISHED_ONLY_SUFFIX, NULL);
}

static int unlink_marker(const char *marker, GError **err)
{
	if (g_unlink(marker) < 0 && errno != ENOENT)
		return pk_error(err, PK_ERROR_FAILED, "cannot remove %s: %s", marker, g_strerror(errno));
	return 0;
}

int pk_build_dir_make(const struct pk_lab *lab, GError **err)
{
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	g_autofree char *marker = NULL;

	if (g_file_test(build_dir, G_FILE_TEST_IS_DIR))
		return 0;
	if (g_mkdir_with_parents(build_dir, 0755) < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", build_dir, g_strerror(errno));
	marker = published_only_marker(lab);
	return pk_write_file(marker, "", 0, err);
}

int pk_build_dir_copy_mark(const struct pk_lab *to, const char *from, GError **err)
{
	g_autofree char *had = g_strconcat(from, PUBLISHED_ONLY_SUFFIX, NULL), *marker = published_only_marker(to);

	/* a mark left by a dir of the same name that is gone says nothing of this one */
	if (!g_file_test(had, G_FILE_TEST_EXISTS))
		return unlink_marker(marker, err);
	return pk_write_file(marker, "", 0, err);
}

int pk_build_dir_remove(const char *build_dir, GError **err)
{
	g_autofree char *marker = g_strconcat(build_dir, PUBLISHED_ONLY_SUFFIX, NULL);

	/* the mark first: a dir left without one only reads the ccache */
	if (unlink_marker(marker, err) < 0 || pk_layer_drop(build_dir, err) < 0 ||
	    pk_state_remove_all(build_dir, err) < 0)
		return -1;
	return pk_remove_tree(build_dir, err);
}

/*
 * Whether a make may write the bot's ccache ([build] ccache_dir): what
 * is checked out is the tip of a trusted published ref (pk_repo_head_trusted())
 * and the build dir never held a build of anything else.  The second half
 * matters as much: a patch's build leaves host programs in the build dir
 * that later makes there run, and one run with the cache writable could
 * plant an object under another file's hash.  A build in a layer
 * (layered) leaves nothing behind, so it keeps the mark and only reads
 * the cache; without layers (not root) the first make (or config step)
 * of an unpublished checkout in a build dir drops the marker for good; a
 * build dir copied for a derived config has one when the lab's had
 * (pk_build_dir_copy_mark()).  -1 when the
 * marker could not be dropped.
 */
static int may_write_ccache(bool *out, const struct pk_lab *lab, bool layered, GError **err)
{
	g_autofree char *marker = published_only_marker(lab);

	*out = false;
	if (layered || !g_file_test(marker, G_FILE_TEST_EXISTS))
		return 0;
	if (pk_repo_head_trusted(lab)) {
		*out = true;
		return 0;
	}
	return unlink_marker(marker, err);
}

int pk_build_dir_enter(const struct pk_lab *lab, bool *out_layered, GError **err)
{
	PK_PROFILE_SCOPE("layer");
	g_autofree char *head = NULL, *build_dir = NULL;

	*out_layered = false;
	if (pk_build_dir_make(lab, err) < 0)
		return -1;
	build_dir = pk_lab_build_dir(lab);
	if (pk_repo_head_trusted(lab))
		return pk_layer_drop(build_dir, err) < 0 || pk_build_dir_relocate(build_dir, err) < 0 ? -1 : 0;
	/* the build dir's own files, before a layer goes over them: every later layer has the fix */
	if (!pk_layer_over(build_dir, NULL) && pk_build_dir_relocate(build_dir, err) < 0)
		return -1;
	if (!pk_layer_usable(lab->cache, NULL))
		return 0;   /* as before layers: the policy refused what only a layer makes safe */
	if (!(head = pk_repo_resolve(lab, "HEAD", err)) || pk_layer_enter(lab->cache, build_dir, head, err) < 0)
		return -1;
	*out_layered = true;
	return 0;
}

/*
 * Run a make of build_dir in the sandbox sb, as pk_sandbox_run(): after
 * undoing what an interrupted make left there, and marked as running
 * until it ends by itself (interrupted.h).
 */
static int sandboxed_make(struct pk_proc_result *out, bool *out_sandboxed, const struct pk_sandbox *sb,
			  const char *const *argv, const struct pk_proc_opts *opts, const char *build_dir,
			  GError **err)
{
	if (pk_build_dir_repair(build_dir, err) < 0 || pk_make_started(build_dir, err) < 0 ||
	    pk_sandbox_run(out, out_sandboxed, sb, argv, opts, err) < 0)
		return -1;
	pk_make_ended(build_dir, out);
	return 0;
}

int pk_build_step(const struct pk_lab *lab, const char *what, const char *cwd, const char *const *argv,
		  const char *const *extra_ro, GError **err)
{
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	const char *ro[8] = { lab->tree };
	const char *rw[] = { build_dir, NULL };
	const struct pk_sandbox_config *sc = pk_sandbox_settings();
	g_auto(GStrv) env = make_env(lab);
	struct pk_sandbox sb = { .ro = ro, .rw = rw, .cwd = cwd ? cwd : lab->tree, .env = (const char *const *)env,
				 .limits = &sc->build };
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *how = NULL;
	bool sandboxed = false;
	struct pk_proc_result res;
	unsigned n = 1;
	bool unused, layered;

	/* no ccache here, but a step of a patch's tree ends the build dir's right to write it */
	if (pk_build_dir_enter(lab, &layered, err) < 0 || may_write_ccache(&unused, lab, layered, err) < 0)
		return -1;
	for (const char *const *p = extra_ro; p && *p && n + 1 < G_N_ELEMENTS(ro); p++)
		ro[n++] = *p;
	opts.cwd = cwd ? cwd : lab->tree;
	opts.env = (const char *const *)env;
	opts.capture = out;
	opts.timeout = sc->build_timeout > 0 ? sc->build_timeout : 3600;
	if (sandboxed_make(&res, &sandboxed, &sb, argv, &opts, build_dir, err) < 0)
		return -1;
	if (pk_proc_ok(&res))
		return 0;
	how = pk_proc_describe(&res);
	return pk_error(err, PK_ERROR_FAILED, "%s: %s %s: %s", what, sandboxed ? "make (sandboxed)" : "make",
			how, out->len > 600 ? out->str + out->len - 600 : out->str);
}

/* iceccd's socket, where the icecc client looks for it first; bound into the sandbox. */
#define ICECC_SOCKET_DIR "/var/run/icecc"

/* Whether path is at least as new as ref (both must exist). */
static bool newer_than(const char *path, const char *ref)
{
	GStatBuf a, b;

	return g_stat(path, &a) == 0 && g_stat(ref, &b) == 0 && a.st_mtime >= b.st_mtime;
}

/*
 * The icecream environment of this machine's gcc (a tarball of the
 * compiler that iceccd unpacks wherever it sends a job), made once by
 * icecc-create-env into the cache's icecc/ and made again when gcc is
 * newer.  Made here, not by the icecc client: inside the sandbox it has
 * nowhere to write one.  NULL with err.
 */
static char *icecc_env(const struct pk_lab *lab, GError **err)
{
	g_autofree char *dir = g_build_filename(lab->cache, "icecc", NULL);
	g_autofree char *gcc = g_find_program_in_path("gcc");
	const char *create[] = { "icecc-create-env", "--gcc", "/usr/bin/gcc", "/usr/bin/g++", NULL };
	g_autoptr(GString) out = g_string_new(NULL);
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	g_autoptr(GDir) d = NULL;
	const char *name, *made;
	struct pk_proc_result r;

	if (g_mkdir_with_parents(dir, 0755) < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", dir, g_strerror(errno)), NULL;
	if ((d = g_dir_open(dir, 0, NULL)))
		while ((name = g_dir_read_name(d))) {
			g_autofree char *path = g_build_filename(dir, name, NULL);

			if (g_str_has_suffix(name, ".tar.gz") && gcc && newer_than(path, gcc))
				return g_steal_pointer(&path);
		}
	o.cwd = dir;
	o.capture = out;
	o.timeout = 300;
	if (pk_proc_run(&r, create, &o, err) < 0)
		return NULL;
	/* its last line: "creating <md5>.tar.gz" */
	if (!pk_proc_ok(&r) || !(made = g_strrstr(out->str, "creating ")))
		return pk_error(err, PK_ERROR_FAILED, "icecc-create-env failed: %s",
				out->len > 400 ? out->str + out->len - 400 : out->str), NULL;
	return g_build_filename(dir, g_strstrip(g_strndup(made + strlen("creating "), 64)), NULL);
}

/* How [build] cc runs the compiler; each string is NULL when unused. */
struct build_cc {
	char *cc;                /* make's CC= (the lab's arch's compiler: aarch64-linux-gnu-gcc...) */
	bool ccache;             /* ccache runs the compiler */
	char *icecc_env;         /* ICECC_VERSION; its directory and iceccd's socket bound */
};

static int build_cc(struct build_cc *out, const struct pk_lab *lab, GError **err)
{
	enum pk_build_cc cc = pk_sandbox_settings()->cc;
	const char *cross = pk_lab_arch(lab)->cross_compile;

	memset(out, 0, sizeof *out);
	if (cc == PK_BUILD_CC_AUTO)
		cc = pk_proc_have("ccache") ? PK_BUILD_CC_CCACHE : PK_BUILD_CC_GCC;
	/* icecc's environments here are of the host's gcc: another arch's build compiles here */
	if (cc == PK_BUILD_CC_ICECC && cross)
		cc = pk_proc_have("ccache") ? PK_BUILD_CC_CCACHE : PK_BUILD_CC_GCC;
	if (cc == PK_BUILD_CC_GCC) {
		out->cc = g_strconcat("CC=", cross ? cross : "", "gcc", NULL);
	} else if (cc == PK_BUILD_CC_CCACHE) {
		if (!pk_proc_have("ccache"))
			return pk_error(err, PK_ERROR_FAILED, "[build] cc = ccache, but ccache is not installed");
		out->cc = g_strconcat("CC=ccache ", cross ? cross : "", "gcc", NULL);
		out->ccache = true;
	} else {
		if (!pk_proc_have("icecc") || !pk_proc_have("icecc-create-env"))
			return pk_error(err, PK_ERROR_FAILED, "[build] cc = icecc, but icecc is not installed "
					"(Debian's icecc)");
		if (!(out->icecc_env = icecc_env(lab, err)))
			return -1;
		/* without iceccd the client compiles locally, so the build still works, unshared */
		if (!g_file_test(ICECC_SOCKET_DIR "/iceccd.socket", G_FILE_TEST_EXISTS))
			pk_info("[build] cc = icecc, but iceccd is not running (no %s/iceccd.socket): "
				"every job compiles here", ICECC_SOCKET_DIR);
		out->cc = g_strdup("CC=icecc gcc");
	}
	return 0;
}

/*
 * "KCPPFLAGS=-fmacro-prefix-map=../../linux/=": the tree as a path
 * relative to the build dir, mapped away from __FILE__ like the absolute
 * one Kbuild maps itself.  With CCACHE_BASEDIR, ccache's direct and
 * preprocessor modes hand gcc the sources by paths relative to the build
 * dir, which Kbuild's map does not match; its depend mode, the bot's,
 * does not, but it finds what those modes stored (a ccache a user or an
 * older printkbot filled): a 2023 series' before kernel, from such
 * objects, named every file "../../linux/arch/..." in its printk index,
 * and its after kernel "arch/...", so that all 3,158 entries differed.
 * Set for every build, ccache or not, so that the command lines (Kbuild
 * rebuilds an object whose command changed) stay the same; the change
 * also retires every object and cache entry made without it.  Both paths
 * are resolved as getcwd() gives them to ccache.
 */
static char *macro_prefix_map(const char *build_dir, const char *tree)
{
	g_autofree char *from = realpath(build_dir, NULL), *to = realpath(tree, NULL);
	g_auto(GStrv) f = NULL, t = NULL;
	GString *map = g_string_new("KCPPFLAGS=-fmacro-prefix-map=");
	guint i = 0;

	f = g_strsplit(from ? from : build_dir, "/", -1);
	t = g_strsplit(to ? to : tree, "/", -1);
	while (f[i] && t[i] && !strcmp(f[i], t[i]))
		i++;
	for (guint j = i; f[j]; j++)
		if (*f[j])
			g_string_append(map, "../");
	for (guint j = i; t[j]; j++)
		if (*t[j])
			g_string_append_printf(map, "%s/", t[j]);
	g_string_append_c(map, '=');
	return g_string_free(map, FALSE);
}

/* What ccache_setup() decided; the strings are for the make's environment and binds. */
struct ccache_use {
	char *dir;        /* to bind, or NULL when ccache is off */
	bool writable;
	char *dir_env, *base_env;
};

/*
 * The ccache of one make, its environment into env (room for six more
 * at *e).  [build] ccache_dir, else the lab's ccache/ (PK_LAB_CCACHE_DIR),
 * is the bot's own, which a machine's workers may share: a base build
 * writes it (may_write_ccache(), as the sandbox user), every other build
 * reads it only, with CCACHE_READONLY.  Nothing to read yet: ccache is
 * off.  CCACHE_BASEDIR is the lab's cache dir, so paths into the tree and
 * the build dir hash the same from any lab.  Depend mode (CCACHE_DEPEND):
 * a miss costs a cold build 9% against the default mode's 47%, which
 * runs the preprocessor once more to hash its output (bench/ccache.sh);
 * what the default mode adds, hits across configs, the lab does not
 * need, since a derived config's build dir starts as a copy of the
 * lab's and Kbuild rebuilds only what its options change.
 */
static int ccache_setup(struct ccache_use *u, const char **env, unsigned *e, const struct pk_lab *lab,
			bool layered, GError **err)
{
	const char *own = pk_sandbox_settings()->ccache_dir;
	g_autofree char *dir = own ? g_strdup(own) : g_build_filename(lab->cache, PK_LAB_CCACHE_DIR, NULL);
	bool base_build;

	memset(u, 0, sizeof *u);
	if (may_write_ccache(&base_build, lab, layered, err) < 0)
		return -1;
	u->writable = base_build;
	if (u->writable) {
		if (g_mkdir_with_parents(dir, 0755) < 0)
			return pk_error(err, PK_ERROR_FAILED, "%s: %s", dir, g_strerror(errno));
		if (pk_sandbox_own(dir, err) < 0)
			return -1;
	} else if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
		/* nothing to read yet: gcc alone, under the same CC (a new CC rebuilds everything) */
		env[(*e)++] = "CCACHE_DISABLE=1";
		return 0;
	} else {
		env[(*e)++] = "CCACHE_READONLY=1";
		env[(*e)++] = "CCACHE_NOSTATS=1";
	}
	env[(*e)++] = "CCACHE_DEPEND=1";
	u->dir_env = g_strconcat("CCACHE_DIR=", dir, NULL);
	u->base_env = g_strconcat("CCACHE_BASEDIR=", lab->cache, NULL);
	env[(*e)++] = u->dir_env;
	env[(*e)++] = u->base_env;
	env[(*e)++] = "CCACHE_TEMPDIR=/tmp/ccache";
	u->dir = g_steal_pointer(&dir);
	return 0;
}

static void ccache_use_clear(struct ccache_use *u)
{
	g_free(u->dir);
	g_free(u->dir_env);
	g_free(u->base_env);
}

/*
 * Run make vmlinux, wrapped in the sandbox when pk_sandbox_run() finds it
 * active: the tree read-only (with O= kbuild writes only the build dir:
 * a host program cannot change the sources the next patch is applied
 * to), the build dir writable, the compiler's own state:
 * - the bot's ccache (ccache_setup()): writable only for a base build, so
 *   no host program of a patch's build can plant a cached object under
 *   another file's hash; read-only otherwise, where it still serves the
 *   hits of unchanged files (results of patched files are not kept,
 *   which costs nothing since the build dir is incremental anyway).
 * - icecream: iceccd's socket directory and the compiler environment.
 *   The network stays closed: the client only talks to the local iceccd,
 *   which sends the preprocessed sources on to its scheduler's nodes.
 */
static int run_make(struct pk_proc_result *out, bool *out_sandboxed, const struct pk_lab *lab,
		    bool layered, const struct pk_proc_opts *opts, GError **err)
{
	PK_PROFILE_SCOPE("make");
	const struct pk_sandbox_config *sc = pk_sandbox_settings();
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	g_autofree char *odir = g_strconcat("O=", build_dir, NULL);
	g_autofree char *jobs = g_strdup_printf("-j%ld", sc->jobs ? (long)sc->jobs
							   : MAX(1L, sysconf(_SC_NPROCESSORS_ONLN)));
	struct build_cc cc;
	struct ccache_use ccache = { 0 };
	g_autofree char *icecc_version = NULL, *icecc_dir = NULL;
	g_autofree char *prefix_map = macro_prefix_map(build_dir, lab->tree);
	g_auto(GStrv) make_vars = make_env(lab);
	/* a board's device tree is a make target of its own (a .dtb path under arch/<arch>/boot/dts/) */
	const char *argv[] = { "make", "-s", jobs, odir, NULL, pk_lab_arch(lab)->image_target,
			       lab->board ? lab->board->dtb : NULL, NULL };
	/* make_env()'s (BUILD_ENV, a cross build's ARCH and CROSS_COMPILE), the prefix map,
	   6 of the compiler's, NULL */
	const char *env[20] = { NULL };
	const char *ro[4] = { lab->tree }, *rw[3] = { build_dir };
	struct pk_sandbox sb = { .ro = ro, .rw = rw, .cwd = lab->tree, .env = env, .argv = argv,
				 .limits = &sc->build };
	unsigned e = 0, r = 1;
	int rc = -1;

	if (build_cc(&cc, lab, err) < 0)
		return -1;
	argv[4] = cc.cc;
	for (char **v = make_vars; *v; v++)
		env[e++] = *v;
	env[e++] = prefix_map;
	if (cc.ccache) {
		if (ccache_setup(&ccache, env, &e, lab, layered, err) < 0)
			goto out;
		if (ccache.dir && ccache.writable)
			rw[1] = ccache.dir;
		else if (ccache.dir)
			ro[r++] = ccache.dir;
	} else if (cc.icecc_env) {
		icecc_version = g_strconcat("ICECC_VERSION=", cc.icecc_env, NULL);
		icecc_dir = g_path_get_dirname(cc.icecc_env);
		env[e++] = icecc_version;
		ro[r++] = icecc_dir;
		if (g_file_test(ICECC_SOCKET_DIR, G_FILE_TEST_IS_DIR))
			ro[r++] = ICECC_SOCKET_DIR;
	}
	rc = sandboxed_make(out, out_sandboxed, &sb, argv, opts, build_dir, err);
out:
	ccache_use_clear(&ccache);
	g_free(cc.cc);
	g_free(cc.icecc_env);
	return rc;
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
			"build dir, an unprivileged user, limits on CPU time, memory, file size, "
			"processes and what a layer may hold), and something was denied there: %s", denied);
		g_autofree char *wrapped = pk_wrap(note, 72, "");

		g_string_append_printf(out, "%s\n", wrapped);
	}
	return g_string_free(out, FALSE);
}

int pk_build_kernel(struct pk_build_result *out, const struct pk_lab *lab, GError **err)
{
	const struct pk_sandbox_config *sc = pk_sandbox_settings();
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	g_autofree char *log_path = NULL;
	g_auto(GStrv) env = make_env(lab);
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	struct pk_build_result res = { 0 };
	g_autoptr(GString) log = g_string_new(NULL);
	struct pk_proc_result pr;
	bool sandboxed = false, layered;

	/*
	 * The layer first: the log is of this build, dropped with its layer.
	 * It is the bot's, opened as root, so it is never in the build dir,
	 * where the build could have left a symlink in its place (state.h).
	 */
	if (pk_build_dir_enter(lab, &layered, err) < 0 ||
	    !(log_path = pk_state_path(build_dir, PK_STATE_BUILD_LOG, err)))
		return -1;
	opts.cwd = lab->tree;
	opts.env = (const char *const *)env;
	opts.log_path = log_path;
	opts.capture = log;
	opts.output_cap = BUILD_LOG_CAP;
	opts.timeout = sc->build_timeout > 0 ? sc->build_timeout : 3600;
	if (run_make(&pr, &sandboxed, lab, layered, &opts, err) < 0)
		return -1;
	res.ok = pk_proc_ok(&pr);
	res.sandboxed = sandboxed;
	res.layered = layered;
	res.seconds = pr.seconds;
	res.log_path = g_steal_pointer(&log_path);
	res.vmlinux = g_build_filename(build_dir, pk_lab_arch(lab)->image, NULL);
	/* kept with the build for a review to link; read as root, so never through a link the build left */
	if (pk_beneath_read_at(&res.config, NULL, build_dir, ".config", BUILD_CONFIG_CAP, NULL) <= 0)
		res.config = NULL;
	if (!res.ok)
		res.errors = failure_text(log->str, &pr, lab, sandboxed);
	*out = res;
	return 0;
}
