/*
 * setup.c - `printkbot setup`'s steps; see setup.h.
 */
#include "lab/setup.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "lab/bases.h"
#include "lab/debsrc.h"
#include "lab/kconfig.h"
#include "lab/repo.h"
#include "lab/state.h"
#include "base/proc.h"
#include "base/util.h"

#define KERNEL_TARBALL "/usr/src/linux-source-6.12.tar.xz"
#define KERNEL_PACKAGE PK_LAB_KERNEL_PACKAGE

/* package's tarball, installed with apt-get (as root) when missing. */
static int ensure_tarball(const char *package, const char *tarball, GError **err)
{
	const char *apt[] = { "apt-get", "install", "-y", "-q", package, NULL };
	const char *const env[] = { "DEBIAN_FRONTEND=noninteractive", NULL };

	if (g_file_test(tarball, G_FILE_TEST_EXISTS))
		return 0;
	/* apt-get as a user fails on its lock with a message about dpkg, not about what to do */
	if (geteuid() != 0)
		return pk_error(err, PK_ERROR_FAILED, "%s is missing: install the kernel source as root "
				"(apt-get install %s), then run setup again", tarball, package);
	pk_info("setup: installing %s", package);
	if (pk_proc_step("installing the kernel source", apt, NULL, env, err) < 0)
		return -1;
	if (!g_file_test(tarball, G_FILE_TEST_EXISTS))
		return pk_error(err, PK_ERROR_FAILED, "%s installed but %s is missing", package, tarball);
	return 0;
}

/* Step 1: extract into linux.partial, rename to linux when whole. */
static int step_extract(struct pk_lab *lab, GError **err)
{
	g_autofree char *partial = g_strconcat(lab->tree, ".partial", NULL);
	const char *tar[] = { "tar", "-xf", KERNEL_TARBALL, "-C", partial,
			      "--strip-components=1", NULL };
	double t0 = pk_now();

	if (g_file_test(lab->tree, G_FILE_TEST_IS_DIR))
		return 0;
	if (ensure_tarball(KERNEL_PACKAGE, KERNEL_TARBALL, err) < 0 || pk_remove_tree(partial, err) < 0)
		return -1;
	pk_info("setup: extracting %s", KERNEL_TARBALL);
	g_mkdir_with_parents(partial, 0755);
	if (pk_proc_step("extracting the kernel", tar, NULL, NULL, err) < 0)
		return -1;
	if (rename(partial, lab->tree) < 0)
		return pk_error(err, PK_ERROR_FAILED, "cannot rename %s: %s", partial, strerror(errno));
	pk_info("setup: extracted in %.0f s", pk_now() - t0);
	return 0;
}

/*
 * Step 2: one base commit of the whole tree.  Its message names the
 * version the tree's Makefile states; read there rather than from `make
 * kernelversion`, whose output gains "make[1]: Entering directory <the
 * cache>" lines under a parent make, which would make the commit id
 * depend on where the cache is.
 */
static int step_git_base(struct pk_lab *lab, GError **err)
{
	g_autofree char *git_dir = g_build_filename(lab->tree, ".git", NULL);
	g_autofree char *makefile_path = g_build_filename(lab->tree, "Makefile", NULL);
	g_autofree char *makefile = NULL, *version = NULL, *msg = NULL, *base = NULL;
	double t0 = pk_now();

	if ((base = pk_repo_resolve(lab, PK_LAB_BASE_TAG, NULL)))
		return 0;
	if (pk_read_file(&makefile, NULL, makefile_path, 1 << 20, err) < 0)
		return -1;
	if (!(version = pk_repo_makefile_version(makefile)))
		return pk_error(err, PK_ERROR_FAILED, "%s states no kernel version", makefile_path);
	pk_info("setup: importing the tree into git (about a minute)");
	if (pk_remove_tree(git_dir, err) < 0)
		return -1;
	msg = g_strdup_printf("Linux %s from Debian's %s\n\nImported by printkbot setup.",
			      version, KERNEL_PACKAGE);
	if (pk_repo_import_tree(lab, msg, err) < 0)
		return -1;
	pk_info("setup: base commit made in %.0f s", pk_now() - t0);
	return 0;
}

/* Step 3: tinyconfig + the arch's qemu/ fragment in the build dir of the tree's series. */
static int step_config(struct pk_lab *lab, GError **err)
{
	g_autofree char *build_dir = pk_lab_build_dir(lab);

	if (pk_state_stat(build_dir, PK_STATE_SETUP_CONFIG, NULL))
		return 0;
	pk_info("setup: writing the %s kernel config (tinyconfig + qemu/%s)", pk_lab_arch(lab)->name,
		pk_lab_arch(lab)->fragment);
	if (pk_kconfig_make(lab, NULL, err) < 0)
		return -1;
	return pk_state_write(build_dir, PK_STATE_SETUP_CONFIG, lab->config_hash, strlen(lab->config_hash), err);
}

/* Step 4: the static guest init, packed with the base tree's own gen_init_cpio. */
static int step_initrd(struct pk_lab *lab, GError **err)
{
	/* guest/ for x86_64, guest/<arch>/ for another (lab.h) */
	g_autofree char *guest = g_path_get_dirname(lab->initrd);
	g_autofree char *init_src = g_build_filename(lab->datadir, "qemu", "init.c", NULL);
	g_autofree char *init_bin = g_build_filename(guest, "init", NULL);
	g_autofree char *gen_src = g_build_filename(guest, "gen_init_cpio.c", NULL);
	g_autofree char *gen_bin = g_build_filename(guest, "gen_init_cpio", NULL);
	g_autofree char *spec_path = g_build_filename(guest, "initramfs.list", NULL);
	g_autofree char *partial = g_strconcat(lab->initrd, ".partial", NULL);
	g_autofree char *spec = NULL;
	g_autofree char *gen_text = NULL;
	size_t gen_len;
	const char *cc_init[] = { pk_lab_arch(lab)->init_cc, "-static", "-Os", "-Wall", "-o", init_bin, init_src, NULL };
	const char *cc_gen[] = { "cc", "-O2", "-o", gen_bin, gen_src, NULL };
	const char *gen[] = { gen_bin, spec_path, NULL };
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	struct pk_proc_result res;
	GStatBuf src_st, out_st;

	if (g_stat(lab->initrd, &out_st) == 0 && g_stat(init_src, &src_st) == 0 &&
	    out_st.st_mtime >= src_st.st_mtime)
		return 0;
	pk_info("setup: building the guest init and initramfs");
	g_mkdir_with_parents(guest, 0755);
	/*
	 * gen_init_cpio.c of the base commit, never of the tree as it is
	 * checked out: that may hold a patch under test (usr/gen_init_cpio.c
	 * is a plain .c file the policy lets through), and this program runs
	 * as the bot, outside the sandbox.
	 */
	if (pk_repo_read_file(&gen_text, &gen_len, lab, PK_LAB_BASE_TAG, "usr/gen_init_cpio.c", err) < 0 ||
	    pk_write_file(gen_src, gen_text, gen_len, err) < 0)
		return -1;
	if (pk_proc_step("building qemu/init.c", cc_init, NULL, NULL, err) < 0 ||
	    pk_proc_step("building gen_init_cpio", cc_gen, NULL, NULL, err) < 0)
		return -1;
	spec = g_strdup_printf("dir /dev 0755 0 0\n"
			       "nod /dev/console 0600 0 0 c 5 1\n"
			       "dir /proc 0755 0 0\n"
			       "dir /sys 0755 0 0\n"
			       "file /init %s 0755 0 0\n", init_bin);
	if (pk_write_file(spec_path, spec, strlen(spec), err) < 0)
		return -1;
	opts.log_path = partial;  /* gen_init_cpio writes the archive to stdout */
	opts.output_cap = 64 << 20;
	opts.timeout = 60;
	if (pk_proc_run(&res, gen, &opts, err) < 0)
		return -1;
	if (!pk_proc_ok(&res))
		return pk_error(err, PK_ERROR_FAILED, "gen_init_cpio failed");
	if (rename(partial, lab->initrd) < 0)
		return pk_error(err, PK_ERROR_FAILED, "cannot rename %s: %s", partial, strerror(errno));
	return 0;
}

/* The commit message of an import: the version the tree's Makefile states, and the package. */
static char *import_message(const char *dir, const char *package, GError **err)
{
	g_autofree char *path = g_build_filename(dir, "Makefile", NULL);
	g_autofree char *makefile = NULL, *version = NULL;

	if (pk_read_file(&makefile, NULL, path, 1 << 20, err) < 0)
		return NULL;
	if (!(version = pk_repo_makefile_version(makefile))) {
		pk_error(err, PK_ERROR_FAILED, "%s states no kernel version", path);
		return NULL;
	}
	return g_strdup_printf("Linux %s from Debian's %s\n\nImported by printkbot setup.", version, package);
}

/*
 * Step 5, per --source: Debian's package as one more base commit of the
 * same repository, tagged printkbot-debian-<ver>.  Extracted beside the
 * tree, imported, and the extracted copy removed (the objects hold it).
 * The default source is the base commit itself, tagged once more.
 */
static int step_source(struct pk_lab *lab, const struct pk_debian_source *src, GError **err)
{
	g_autofree char *have = pk_repo_resolve(lab, src->tag, NULL);
	g_autofree char *dir = g_strdup_printf("%s/src-%s.partial", lab->cache, src->version);
	g_autofree char *msg = NULL, *tarball = NULL;
	const char *tar[] = { "tar", "-xf", NULL, "-C", dir, "--strip-components=1", NULL };
	double t0 = pk_now();

	if (have)
		return 0;
	if (!strcmp(src->package, KERNEL_PACKAGE))
		return pk_repo_tag(lab, src->tag, PK_LAB_BASE_TAG, err);
	/* installed, installable, or from a newer Debian suite (debsrc.h) */
	if (pk_debsrc_tarball(&tarball, lab->cache, src->package, src->tarball, err) < 0 ||
	    pk_remove_tree(dir, err) < 0)
		return -1;
	tar[2] = tarball;
	pk_info("setup: extracting %s", tarball);
	g_mkdir_with_parents(dir, 0755);
	if (pk_proc_step("extracting the kernel", tar, NULL, NULL, err) < 0 ||
	    !(msg = import_message(dir, src->package, err)))
		return -1;
	pk_info("setup: importing %s into git as %s (about a minute)", src->name, src->tag);
	if (pk_repo_import_dir(lab, dir, msg, src->tag, err) < 0 || pk_remove_tree(dir, err) < 0 ||
	    pk_debsrc_done(lab->cache, src->package, err) < 0)
		return -1;
	pk_info("setup: %s imported in %.0f s", src->name, pk_now() - t0);
	return 0;
}

/* A Debian base ("debian:6.1") into the lab: step_source() of what pk_bases_debian() makes of it. */
static int add_source(struct pk_lab *lab, const char *spec, GError **err)
{
	struct pk_debian_source src = { 0 };
	int rc = pk_bases_debian(&src, spec, err) < 0 ? -1 : step_source(lab, &src, err);

	pk_debian_source_clear(&src);
	return rc;
}

int pk_setup_lab(struct pk_lab *lab, const char *const *sources, GError **err)
{
	g_autofree char *ready = pk_lab_ready_stamp(lab);
	/* the base commit is Debian's default source: tagged so, a config's bases can name it */
	g_autofree char *default_source = g_strconcat("debian:", &KERNEL_PACKAGE[sizeof "linux-source-" - 1], NULL);

	/*
	 * After the import, the tree back on a base (repo.h's pk_repo_rest()):
	 * a test that was killed, or a patch that deleted the top Makefile,
	 * must not leave setup (the unit's ExecStartPre) unable to repair it.
	 */
	if (step_extract(lab, err) < 0 || step_git_base(lab, err) < 0 || pk_repo_rest(lab, NULL, false, err) < 0 ||
	    add_source(lab, default_source, err) < 0 ||
	    step_config(lab, err) < 0 || step_initrd(lab, err) < 0 ||
	    pk_write_file(ready, lab->config_hash, strlen(lab->config_hash), err) < 0)
		return -1;
	for (const char *const *s = sources; s && *s; s++)
		if (add_source(lab, *s, err) < 0)
			return -1;
	return 0;
}
