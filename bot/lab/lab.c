/* lab.c - `printkbot setup` and the lab's paths; see lab.h. */
#include "lab/lab.h"
#include "lab/build.h"
#include "base/proc.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define KERNEL_TARBALL "/usr/src/linux-source-6.12.tar.xz"
#define KERNEL_PACKAGE "linux-source-6.12"

/* The base commit gets fixed metadata, so its id is the same on every machine. */
static const char *const git_env[] = {
	"GIT_AUTHOR_NAME=printkbot", "GIT_AUTHOR_EMAIL=printkbot@localhost",
	"GIT_COMMITTER_NAME=printkbot", "GIT_COMMITTER_EMAIL=printkbot@localhost",
	"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z",
	NULL,
};

int pk_lab_open(struct pk_lab *out, GError **err)
{
	struct pk_lab lab = { .lock_fd = -1 };
	g_autofree char *fragment = NULL;
	g_autofree char *frag_path = NULL;
	size_t len;

	lab.cache = pk_cache_dir();
	lab.srcdir = pk_source_dir();
	frag_path = g_build_filename(lab.srcdir, "qemu", "kernel.config", NULL);
	if (pk_read_file(&fragment, &len, frag_path, 1 << 20, err) < 0) {
		pk_lab_clear(&lab);
		return -1;
	}
	{
		g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);

		g_checksum_update(sum, (const guchar *)fragment, (gssize)len);
		lab.config_hash = g_strndup(g_checksum_get_string(sum), 12);
	}
	lab.tree = g_build_filename(lab.cache, "linux", NULL);
	lab.initrd = g_build_filename(lab.cache, "guest", "initrd.cpio", NULL);
	lab.build_dir = g_build_filename(lab.cache, "build", lab.config_hash, NULL);
	*out = lab;
	return 0;
}

void pk_lab_clear(struct pk_lab *lab)
{
	g_free(lab->cache);
	g_free(lab->srcdir);
	g_free(lab->build_dir);
	g_free(lab->initrd);
	g_free(lab->config_hash);
	/* tree is set only by a successful pk_lab_open(): a zeroed lab holds no fd 0 */
	if (lab->tree && lab->lock_fd >= 0)
		close(lab->lock_fd);
	g_free(lab->tree);
	memset(lab, 0, sizeof(*lab));
	lab->lock_fd = -1;
}

int pk_lab_lock(struct pk_lab *lab, GError **err)
{
	g_autofree char *path = g_build_filename(lab->cache, "lock", NULL);
	int fd;

	if (lab->lock_fd >= 0)
		return 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", path, g_strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK) {
			close(fd);
			return pk_error(err, PK_ERROR_FAILED, "%s: %s", path, g_strerror(errno));
		}
		pk_info("waiting for another printkbot using %s", lab->cache);
		while (flock(fd, LOCK_EX) < 0) {
			if (errno != EINTR) {
				close(fd);
				return pk_error(err, PK_ERROR_FAILED, "%s: %s", path, g_strerror(errno));
			}
		}
	}
	lab->lock_fd = fd;
	return 0;
}

int pk_lab_take(struct pk_lab *out, GError **err)
{
	struct pk_lab lab;

	if (pk_lab_open(&lab, err) < 0)
		return -1;
	if (!pk_lab_ready(&lab)) {
		pk_lab_clear(&lab);
		return pk_error(err, PK_ERROR_FAILED, "the kernel lab is not set up: run 'printkbot setup'");
	}
	if (pk_lab_lock(&lab, err) < 0) {
		pk_lab_clear(&lab);
		return -1;
	}
	*out = lab;
	return 0;
}

/* Run a setup child; a non-zero exit is an error quoting the log's tail. */
static int run_step(const char *what, const char *const *argv, const char *cwd,
		    const char *const *env, GString *capture, GError **err)
{
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	struct pk_proc_result res;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *how = NULL;

	opts.cwd = cwd;
	opts.env = env;
	opts.capture = out;
	opts.timeout = 3600;
	if (pk_proc_run(&res, argv, &opts, err) < 0)
		return -1;
	if (capture)
		g_string_append_len(capture, out->str, (gssize)out->len);
	if (pk_proc_ok(&res))
		return 0;
	how = pk_proc_describe(&res);
	return pk_error(err, PK_ERROR_FAILED, "%s: %s %s: %s", what, argv[0], how,
			out->len > 600 ? out->str + out->len - 600 : out->str);
}

int pk_lab_git(const struct pk_lab *lab, GString *out, GError **err, ...)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	const char *arg;
	va_list ap;

	g_ptr_array_add(argv, (char *)"git");
	va_start(ap, err);
	while ((arg = va_arg(ap, const char *)))
		g_ptr_array_add(argv, (char *)arg);
	va_end(ap);
	g_ptr_array_add(argv, NULL);
	return run_step("git", (const char *const *)argv->pdata, lab->tree, git_env, out, err);
}

static int ensure_tarball(GError **err)
{
	const char *apt[] = { "apt-get", "install", "-y", "-q", KERNEL_PACKAGE, NULL };
	const char *const env[] = { "DEBIAN_FRONTEND=noninteractive", NULL };

	if (g_file_test(KERNEL_TARBALL, G_FILE_TEST_EXISTS))
		return 0;
	pk_info("setup: installing %s", KERNEL_PACKAGE);
	if (run_step("installing the kernel source", apt, NULL, env, NULL, err) < 0)
		return -1;
	if (!g_file_test(KERNEL_TARBALL, G_FILE_TEST_EXISTS))
		return pk_error(err, PK_ERROR_FAILED, "%s installed but %s is missing",
				KERNEL_PACKAGE, KERNEL_TARBALL);
	return 0;
}

/* Remove a directory tree (a half-made step) with rm: no recursive delete in GLib. */
static int remove_tree(const char *path, GError **err)
{
	const char *argv[] = { "rm", "-rf", "--one-file-system", path, NULL };

	if (!g_file_test(path, G_FILE_TEST_EXISTS))
		return 0;
	return run_step("removing a half-made step", argv, NULL, NULL, NULL, err);
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
	if (ensure_tarball(err) < 0 || remove_tree(partial, err) < 0)
		return -1;
	pk_info("setup: extracting %s", KERNEL_TARBALL);
	g_mkdir_with_parents(partial, 0755);
	if (run_step("extracting the kernel", tar, NULL, NULL, NULL, err) < 0)
		return -1;
	if (rename(partial, lab->tree) < 0)
		return pk_error(err, PK_ERROR_FAILED, "cannot rename %s: %s", partial, strerror(errno));
	pk_info("setup: extracted in %.0f s", pk_now() - t0);
	return 0;
}

/* Step 2: one base commit of the whole tree, force-added past its ignore-everything .gitignore. */
static int step_git_base(struct pk_lab *lab, GError **err)
{
	g_autofree char *git_dir = g_build_filename(lab->tree, ".git", NULL);
	g_autoptr(GString) version = g_string_new(NULL);
	g_autofree char *msg = NULL;
	double t0 = pk_now();

	if (pk_lab_git(lab, NULL, NULL, "rev-parse", "-q", "--verify",
		       PK_LAB_BASE_TAG "^{commit}", NULL) == 0)
		return 0;
	pk_info("setup: importing the tree into git (about a minute)");
	if (remove_tree(git_dir, err) < 0)
		return -1;
	if (pk_lab_git(lab, NULL, err, "init", "-q", NULL) < 0 ||
	    pk_lab_git(lab, NULL, err, "config", "gc.auto", "0", NULL) < 0 ||
	    pk_lab_git(lab, NULL, err, "add", "-f", "-A", ".", NULL) < 0)
		return -1;
	{
		const char *mk[] = { "make", "-s", "kernelversion", NULL };

		if (run_step("reading the kernel version", mk, lab->tree, NULL, version, err) < 0)
			return -1;
		g_strstrip(version->str);
	}
	msg = g_strdup_printf("Linux %s from Debian's %s\n\nImported by printkbot setup.",
			      version->str, KERNEL_PACKAGE);
	if (pk_lab_git(lab, NULL, err, "commit", "-q", "--no-verify", "-m", msg, NULL) < 0 ||
	    pk_lab_git(lab, NULL, err, "tag", "-f", PK_LAB_BASE_TAG, NULL) < 0)
		return -1;
	pk_info("setup: base commit made in %.0f s", pk_now() - t0);
	return 0;
}

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

int pk_lab_configure(const struct pk_lab *lab, GString *missing, GError **err)
{
	g_autofree char *frag = g_build_filename(lab->srcdir, "qemu", "kernel.config", NULL);
	g_autofree char *dotconfig = g_build_filename(lab->build_dir, ".config", NULL);
	g_autofree char *odir = g_strconcat("O=", lab->build_dir, NULL);
	g_autofree char *fragment = NULL, *config = NULL;
	g_autoptr(GString) lost = g_string_new(NULL);
	const char *tiny[] = { "make", "-s", odir, "tinyconfig", NULL };
	g_autofree char *merge_sh = g_build_filename(lab->tree, "scripts", "kconfig", "merge_config.sh", NULL);
	const char *merge[] = { merge_sh, "-m", "-O", lab->build_dir, dotconfig, frag, NULL };
	const char *olddef[] = { "make", "-s", odir, "olddefconfig", NULL };
	size_t len;

	const char *fragment_ro[] = { frag, NULL };

	/*
	 * Each step runs the tree's kconfig programs and scripts: in the
	 * sandbox, as builds are.  merge_config.sh writes its temporary
	 * files where it runs, so it runs in the build dir.
	 */
	g_mkdir_with_parents(lab->build_dir, 0755);
	if (pk_build_step(lab, "tinyconfig", NULL, tiny, NULL, err) < 0 ||
	    pk_build_step(lab, "merging qemu/kernel.config", lab->build_dir, merge, fragment_ro, err) < 0 ||
	    pk_build_step(lab, "olddefconfig", NULL, olddef, NULL, err) < 0)
		return -1;
	if (pk_read_file(&fragment, NULL, frag, 1 << 20, err) < 0 ||
	    pk_read_file(&config, &len, dotconfig, 16 << 20, err) < 0)
		return -1;
	missing_options(lost, fragment, config);
	if (missing) {
		g_string_append(missing, lost->str);
		return 0;
	}
	if (lost->len)
		return pk_error(err, PK_ERROR_FAILED,
				"kernel config: options that did not take:%s", lost->str);
	return 0;
}

/* Step 3: tinyconfig + qemu/kernel.config in the build dir. */
static int step_config(struct pk_lab *lab, GError **err)
{
	g_autofree char *stamp = g_build_filename(lab->build_dir, ".printkbot-config", NULL);

	if (g_file_test(stamp, G_FILE_TEST_EXISTS))
		return 0;
	pk_info("setup: writing the kernel config (tinyconfig + qemu/kernel.config)");
	if (pk_lab_configure(lab, NULL, err) < 0)
		return -1;
	return pk_write_file(stamp, lab->config_hash, strlen(lab->config_hash), err);
}

/* Step 4: the static guest init, packed with the base tree's own gen_init_cpio. */
static int step_initrd(struct pk_lab *lab, GError **err)
{
	g_autofree char *guest = g_build_filename(lab->cache, "guest", NULL);
	g_autofree char *init_src = g_build_filename(lab->srcdir, "qemu", "init.c", NULL);
	g_autofree char *init_bin = g_build_filename(guest, "init", NULL);
	g_autofree char *gen_src = g_build_filename(guest, "gen_init_cpio.c", NULL);
	g_autofree char *gen_bin = g_build_filename(guest, "gen_init_cpio", NULL);
	g_autofree char *spec_path = g_build_filename(guest, "initramfs.list", NULL);
	g_autofree char *partial = g_strconcat(lab->initrd, ".partial", NULL);
	g_autofree char *spec = NULL;
	g_autoptr(GString) gen_text = g_string_new(NULL);
	const char *cc_init[] = { "cc", "-static", "-Os", "-Wall", "-o", init_bin, init_src, NULL };
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
	if (pk_lab_git(lab, gen_text, err, "show", PK_LAB_BASE_TAG ":usr/gen_init_cpio.c", NULL) < 0 ||
	    pk_write_file(gen_src, gen_text->str, gen_text->len, err) < 0)
		return -1;
	if (run_step("building qemu/init.c", cc_init, NULL, NULL, NULL, err) < 0 ||
	    run_step("building gen_init_cpio", cc_gen, NULL, NULL, NULL, err) < 0)
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

int pk_lab_setup(struct pk_lab *lab, GError **err)
{
	if (step_extract(lab, err) < 0 || step_git_base(lab, err) < 0 ||
	    step_config(lab, err) < 0 || step_initrd(lab, err) < 0)
		return -1;
	return 0;
}

gboolean pk_lab_ready(struct pk_lab *lab)
{
	g_autofree char *stamp = g_build_filename(lab->build_dir, ".printkbot-config", NULL);

	return g_file_test(stamp, G_FILE_TEST_EXISTS) &&
	       g_file_test(lab->initrd, G_FILE_TEST_EXISTS);
}

int pk_lab_checkout(const struct pk_lab *lab, const char *rev, GError **err)
{
	if (pk_lab_git(lab, NULL, err, "checkout", "-q", "--detach", rev, NULL) < 0)
		return pk_error(err, PK_ERROR_INPUT, "cannot check out '%s' in %s", rev, lab->tree);
	return 0;
}
