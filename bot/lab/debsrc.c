/* debsrc.c - a Debian kernel source tarball from the system or from Debian's archive (debsrc.h). */
#include "lab/debsrc.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/util.h"

#define DEFAULT_MIRROR "http://deb.debian.org/debian"
#define KEYRING "/usr/share/keyrings/debian-archive-keyring.gpg"

/* Newer than bookworm: where Debian keeps the kernels it ships after 12 (newest last). */
static const char *const suites[] = { "trixie", "trixie-backports", "unstable", "experimental" };

static const char *const noninteractive[] = { "DEBIAN_FRONTEND=noninteractive", NULL };

/* Whether the system's own apt sources know package (apt-cache exits 0 and names a candidate). */
static bool system_has(const char *package)
{
	const char *argv[] = { "apt-cache", "policy", package, NULL };
	g_autofree char *out = NULL;
	int status;

	if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
			  &out, NULL, &status, NULL) || !g_spawn_check_wait_status(status, NULL))
		return false;
	return out && strstr(out, "Candidate:") && !strstr(out, "Candidate: (none)");
}

/* The private apt's place under cache, one per package. */
static char *work_dir(const char *cache, const char *package)
{
	return g_strdup_printf("%s/debian-archive/%s", cache, package);
}

/*
 * apt's options that make it read and write under dir alone: its own
 * sources list (no sources.list.d), package lists, cache and preferences
 * (none: no pin of the system's decides), amd64 and no translations.
 */
static GPtrArray *apt_argv(const char *tool, const char *dir)
{
	GPtrArray *a = g_ptr_array_new_with_free_func(g_free);

	g_ptr_array_add(a, g_strdup(tool));
	g_ptr_array_add(a, g_strdup_printf("-oDir::Etc::sourcelist=%s/sources.list", dir));
	g_ptr_array_add(a, g_strdup("-oDir::Etc::sourceparts=-"));
	g_ptr_array_add(a, g_strdup_printf("-oDir::Etc::preferences=%s/preferences", dir));
	g_ptr_array_add(a, g_strdup("-oDir::Etc::preferencesparts=-"));
	g_ptr_array_add(a, g_strdup_printf("-oDir::State::Lists=%s/lists", dir));
	g_ptr_array_add(a, g_strdup_printf("-oDir::Cache=%s/cache", dir));
	g_ptr_array_add(a, g_strdup("-oAPT::Architectures::=amd64"));
	g_ptr_array_add(a, g_strdup("-oAcquire::Languages=none"));
	g_ptr_array_add(a, g_strdup("-q"));
	return a;
}

/* Run apt (argv: apt_argv() and more) in cwd: 0, or -1 with err naming what. */
static int apt_run(GPtrArray *argv, const char *what, const char *cwd, GError **err)
{
	g_ptr_array_add(argv, NULL);
	return pk_proc_step(what, (const char *const *)argv->pdata, cwd, noninteractive, err);
}

/* The candidate version of package in the private apt's lists, or NULL when no suite has it. */
static char *candidate(const char *dir, const char *package)
{
	g_autoptr(GPtrArray) argv = apt_argv("apt-cache", dir);
	g_autofree char *out = NULL;
	const char *c;
	int status;

	g_ptr_array_add(argv, g_strdup("policy"));
	g_ptr_array_add(argv, g_strdup(package));
	g_ptr_array_add(argv, NULL);
	if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
			  NULL, &out, NULL, &status, NULL) || !g_spawn_check_wait_status(status, NULL) ||
	    !out || !(c = strstr(out, "Candidate: ")) || g_str_has_prefix(c, "Candidate: (none)"))
		return NULL;
	c += strlen("Candidate: ");
	return g_strndup(c, strcspn(c, "\n"));
}

/* The .deb apt-get download left in dir (one, named after the package), or NULL. */
static char *downloaded(const char *dir, const char *package)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	g_autofree char *prefix = g_strconcat(package, "_", NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d)))
		if (g_str_has_prefix(name, prefix) && g_str_has_suffix(name, ".deb"))
			return g_build_filename(dir, name, NULL);
	return NULL;
}

/* Fetch package from the archive's newer suites into dir; the tarball's path, or NULL with err. */
static char *fetch(const char *dir, const char *package, const char *system_path, GError **err)
{
	const char *mirror = g_getenv("PRINTKBOT_DEBIAN_MIRROR");
	g_autofree char *lists = g_strdup_printf("%s/lists/partial", dir);
	g_autofree char *archives = g_strdup_printf("%s/cache/archives/partial", dir);
	g_autofree char *debs = g_strdup_printf("%s/debs", dir);
	g_autofree char *root = g_strdup_printf("%s/root", dir);
	g_autofree char *list_path = g_strdup_printf("%s/sources.list", dir);
	g_autofree char *prefs = g_strdup_printf("%s/preferences", dir);
	g_autofree char *version = NULL, *deb = NULL;
	g_autoptr(GString) list = g_string_new("# printkbot setup: Debian's newer suites, for kernel sources only\n");
	g_autoptr(GPtrArray) update = apt_argv("apt-get", dir);
	g_autoptr(GPtrArray) download = apt_argv("apt-get", dir);
	const char *dpkg[] = { "dpkg-deb", "-x", NULL, root, NULL };
	char *tarball;

	if (!mirror || !*mirror)
		mirror = DEFAULT_MIRROR;
	for (size_t i = 0; i < G_N_ELEMENTS(suites); i++)
		g_string_append_printf(list, "deb [signed-by=%s] %s %s main\n", KEYRING, mirror, suites[i]);
	if (pk_remove_tree(debs, err) < 0 || pk_remove_tree(root, err) < 0)
		return NULL;
	g_mkdir_with_parents(lists, 0755);
	g_mkdir_with_parents(archives, 0755);
	g_mkdir_with_parents(debs, 0755);
	g_mkdir_with_parents(root, 0755);
	if (pk_write_file(list_path, list->str, list->len, err) < 0 || pk_write_file(prefs, "", 0, err) < 0)
		return NULL;
	pk_info("setup: %s is in none of this system's apt sources: looking in Debian's %s, %s, %s and %s (%s)",
		package, suites[0], suites[1], suites[2], suites[3], mirror);
	g_ptr_array_add(update, g_strdup("update"));
	if (apt_run(update, "reading Debian's package lists", NULL, err) < 0)
		return NULL;
	if (!(version = candidate(dir, package))) {
		pk_error(err, PK_ERROR_INPUT, "no Debian suite has %s (%s: %s, %s, %s and %s): is debian:%s a kernel "
			 "Debian ships?", package, mirror, suites[0], suites[1], suites[2], suites[3],
			 package + strlen("linux-source-"));
		return NULL;
	}
	pk_info("setup: downloading %s %s", package, version);
	g_ptr_array_add(download, g_strdup("download"));
	g_ptr_array_add(download, g_strdup_printf("%s=%s", package, version));
	if (apt_run(download, "downloading the kernel source", debs, err) < 0)
		return NULL;
	if (!(deb = downloaded(debs, package))) {
		pk_error(err, PK_ERROR_FAILED, "apt-get download left no %s_*.deb in %s", package, debs);
		return NULL;
	}
	dpkg[2] = deb;
	if (pk_proc_step("unpacking the kernel source", dpkg, NULL, NULL, err) < 0 || pk_remove_tree(debs, err) < 0)
		return NULL;
	/* the package puts its tarball where an installed one would be, now under root */
	tarball = g_build_filename(root, system_path, NULL);
	if (!g_file_test(tarball, G_FILE_TEST_IS_REGULAR)) {
		pk_error(err, PK_ERROR_FAILED, "%s %s holds no %s", package, version, system_path);
		g_free(tarball);
		return NULL;
	}
	return tarball;
}

int pk_debsrc_tarball(char **out, const char *cache, const char *package, const char *system_path,
		      GError **err)
{
	const char *apt[] = { "apt-get", "install", "-y", "-q", package, NULL };
	g_autofree char *dir = work_dir(cache, package);
	g_autofree char *kept = g_build_filename(dir, "root", system_path, NULL);
	char *tarball;

	if (g_file_test(system_path, G_FILE_TEST_IS_REGULAR)) {
		*out = g_strdup(system_path);
		return 0;
	}
	if (g_file_test(kept, G_FILE_TEST_IS_REGULAR)) {   /* fetched by a setup that stopped after it */
		*out = g_steal_pointer(&kept);
		return 0;
	}
	/* apt-get as a user fails on its lock with a message about dpkg, not about what to do */
	if (geteuid() != 0)
		return pk_error(err, PK_ERROR_FAILED, "%s is missing: run setup as root, which installs %s (or "
				"fetches it from Debian's archive when this system's apt sources lack it)",
				system_path, package);
	if (system_has(package)) {
		pk_info("setup: installing %s", package);
		if (pk_proc_step("installing the kernel source", apt, NULL, noninteractive, err) < 0)
			return -1;
		if (!g_file_test(system_path, G_FILE_TEST_IS_REGULAR))
			return pk_error(err, PK_ERROR_FAILED, "%s installed but %s is missing", package, system_path);
		*out = g_strdup(system_path);
		return 0;
	}
	if (!(tarball = fetch(dir, package, system_path, err))) {
		/* no suite has it: its lists are no use to a setup that asks again */
		if (err && g_error_matches(*err, PK_ERROR, PK_ERROR_INPUT))
			pk_debsrc_done(cache, package, NULL);
		return -1;
	}
	*out = tarball;
	return 0;
}

int pk_debsrc_done(const char *cache, const char *package, GError **err)
{
	g_autofree char *dir = work_dir(cache, package);
	g_autofree char *parent = g_path_get_dirname(dir);

	if (pk_remove_tree(dir, err) < 0)
		return -1;
	g_rmdir(parent);   /* when no other package's download is there */
	return 0;
}
