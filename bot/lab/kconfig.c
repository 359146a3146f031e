/* kconfig.c - the lab's kernel config; see kconfig.h. */
#include "lab/kconfig.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "lab/build.h"
#include "lab/repo.h"
#include "lab/state.h"
#include "base/beneath.h"
#include "base/util.h"

/*
 * Besides Kconfig* files, where a change makes the kernel config stale
 * (pk_kconfig_sync()), as glob patterns: tinyconfig reads kernel/configs/
 * and arch/<arch>/configs/ (any arch's, for the arm64 lab's sake).
 */
static const char *const kconfig_dirs[] = { "scripts/kconfig/*", "kernel/configs/*", "arch/*/configs/*" };

/* The most of a .config the bot reads (a whole allyesconfig is about 300 KiB). */
#define CONFIG_CAP (16u << 20)

/* The CONFIG_ lines of the fragment that are not in the final .config, as " CONFIG_X=y" words. */
static void missing_options(GString *out, const char *fragment, const char *config)
{
	g_auto(GStrv) lines = g_strsplit(fragment, "\n", -1);

	for (char **l = lines; *l; l++) {
		g_autofree char *want = g_strstrip(g_strdup(*l));
		g_autofree char *needle = g_strconcat("\n", want, "\n", NULL);

		if (!g_str_has_prefix(want, "CONFIG_"))
			continue;
		if (!strstr(config, needle))
			g_string_append_printf(out, " %s", want);
	}
}

int pk_kconfig_make(const struct pk_lab *lab, GString *missing, GError **err)
{
	g_autofree char *frag = g_build_filename(lab->datadir, "qemu", pk_lab_arch(lab)->fragment, NULL);
	g_autofree char *frag_name = g_strconcat("merging qemu/", pk_lab_arch(lab)->fragment, NULL);
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	g_autofree char *dotconfig = g_build_filename(build_dir, ".config", NULL);
	g_autofree char *odir = g_strconcat("O=", build_dir, NULL);
	g_autofree char *fragment = NULL, *config = NULL;
	g_autoptr(GString) lost = g_string_new(NULL);
	const char *tiny[] = { "make", "-s", odir, "tinyconfig", NULL };
	g_autofree char *merge_sh = g_build_filename(lab->tree, "scripts", "kconfig", "merge_config.sh", NULL);
	g_autofree char *derived = NULL;
	const char *merge[] = { merge_sh, "-m", "-O", build_dir, dotconfig, frag, NULL, NULL };
	const char *olddef[] = { "make", "-s", odir, "olddefconfig", NULL };
	const char *fragment_ro[] = { frag, NULL, NULL };
	bool layered;
	int rc;

	/* merge_config.sh writes its temporary files where it runs, so it runs in the build dir */
	if (pk_build_dir_make(lab, err) < 0)
		return -1;
	/* the derived lines are the bot's: in its state dir, bound read-only for the merge */
	if (lab->extra_config) {
		if (pk_build_dir_enter(lab, &layered, err) < 0 ||
		    pk_state_write(build_dir, PK_STATE_DERIVED_FRAGMENT, lab->extra_config,
				   strlen(lab->extra_config), err) < 0 ||
		    !(derived = pk_state_path(build_dir, PK_STATE_DERIVED_FRAGMENT, err)))
			return -1;
		merge[6] = fragment_ro[1] = derived;
	}
	if (pk_build_step(lab, "tinyconfig", NULL, tiny, NULL, err) < 0 ||
	    pk_build_step(lab, frag_name, build_dir, merge, fragment_ro, err) < 0 ||
	    pk_build_step(lab, "olddefconfig", NULL, olddef, NULL, err) < 0)
		return -1;
	if (pk_read_file(&fragment, NULL, frag, 1 << 20, err) < 0)
		return -1;
	/* written by the tree's kconfig programs, in the sandbox: read as beneath.h reads */
	if ((rc = pk_beneath_read_at(&config, NULL, build_dir, ".config", CONFIG_CAP, err)) <= 0)
		return rc < 0 ? -1 : pk_error(err, PK_ERROR_FAILED, "olddefconfig left no %s", dotconfig);
	missing_options(lost, fragment, config);
	if (lab->extra_config)
		missing_options(lost, lab->extra_config, config);
	if (missing) {
		g_string_append(missing, lost->str);
		return 0;
	}
	if (lost->len)
		return pk_error(err, PK_ERROR_FAILED,
				"kernel config: options that did not take:%s", lost->str);
	return 0;
}

static bool is_kconfig_path(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (g_str_has_prefix(slash ? slash + 1 : path, "Kconfig"))
		return true;
	for (size_t i = 0; i < G_N_ELEMENTS(kconfig_dirs); i++)
		if (g_pattern_match_simple(kconfig_dirs[i], path))
			return true;
	return false;
}

/* Whether the Kconfig files of two commits of the lab differ (true when from is unknown). */
static int kconfig_differs(bool *out, const struct pk_lab *lab, const char *from, const char *to,
			   GError **err)
{
	g_autofree char *from_id = pk_repo_resolve(lab, from, NULL);
	g_autoptr(GPtrArray) paths = NULL;
	bool differs = false;

	if (!from_id) {
		g_autofree char *to_id = pk_repo_resolve(lab, to, err);

		if (!to_id)
			return -1;
		*out = true;
		return 0;
	}
	if (pk_repo_changed_paths(&paths, lab, from_id, to, err) < 0)
		return -1;
	/* a directory only one side has (it ends in '/') may bring Kconfig files of its own */
	for (guint i = 0; i < paths->len && !differs; i++)
		differs = is_kconfig_path(paths->pdata[i]) || g_str_has_suffix(paths->pdata[i], "/");
	*out = differs;
	return 0;
}

int pk_kconfig_sync(const struct pk_lab *lab, const char *commit, bool *out_refreshed, GError **err)
{
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	g_autofree char *made_for = NULL;
	g_autoptr(GString) missing = g_string_new(NULL);
	bool differs = false, layered;
	int have_config, have_stamp;

	/* the config and its stamp as the build of this checkout sees them: in its layer, if it has one */
	if (pk_build_dir_enter(lab, &layered, err) < 0 ||
	    (have_config = pk_beneath_regular(build_dir, ".config", NULL, err)) < 0 ||
	    (have_stamp = pk_state_read(&made_for, build_dir, PK_STATE_KCONFIG, 4096, err)) < 0)
		return -1;
	if (!have_config) {
		/* a series' build dir this lab never built in (a 6.1 base beside setup's 6.12) */
		g_free(made_for);
		made_for = g_strdup("");
	} else if (have_stamp) {
		g_strstrip(made_for);
	} else if (lab->extra_config) {
		/* a derived config's build dir starts as a copy of the lab's, with the lab's .config */
		made_for = g_strdup("");
	} else {
		made_for = g_strdup(PK_LAB_BASE_TAG);
	}
	if (!strcmp(made_for, commit)) {
		if (out_refreshed)
			*out_refreshed = false;
		return 0;
	}
	if (!*made_for)
		differs = true;
	else if (kconfig_differs(&differs, lab, made_for, commit, err) < 0)
		return -1;
	if (differs) {
		if (*made_for)
			pk_info("the Kconfig files of %.12s differ from %.12s's: making the kernel config again",
				commit, made_for);
		else
			pk_info("making the kernel config %s for %.12s in %s", lab->config_hash, commit, build_dir);
		if (pk_kconfig_make(lab, missing, err) < 0)
			return -1;
		if (missing->len)
			pk_info("kernel config: options asked for that this tree does not take:%s",
				missing->str);
	}
	if (pk_state_write(build_dir, PK_STATE_KCONFIG, commit, strlen(commit), err) < 0)
		return -1;
	if (out_refreshed)
		*out_refreshed = differs;
	return 0;
}

int pk_kconfig_forget(const char *build_dir, GError **err)
{
	return pk_state_remove(build_dir, PK_STATE_KCONFIG, err);
}

GHashTable *pk_kconfig_values(const char *build_dir, GError **err)
{
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	GHashTable *config;
	int rc = pk_beneath_read_at(&text, NULL, build_dir, ".config", CONFIG_CAP, err);

	if (rc <= 0) {
		if (rc == 0)
			pk_error(err, PK_ERROR_FAILED, "%s/.config: no such file", build_dir);
		return NULL;
	}
	config = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		char *eq = strchr(*l, '=');

		if (g_str_has_prefix(*l, "CONFIG_") && eq)
			g_hash_table_insert(config, g_strndup(*l + 7, eq - *l - 7), g_strdup(eq + 1));
	}
	return config;
}
