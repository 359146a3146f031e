/* cmd-setup.c - `printkbot setup`: prepare the kernel lab. */
#include "cmd/commands.h"
#include "lab/bases.h"
#include "lab/lab.h"
#include "lab/setup.h"
#include "base/util.h"

#include <stdio.h>

static const char setup_usage[] =
	"usage: printkbot setup [--source debian:VER[,debian:VER...]] [--arch ARCH] [--config FILE]\n\n"
	"Extract Debian's linux-source-6.12 into the cache dir, make it a git\n"
	"repository with one base commit (tag " PK_LAB_BASE_TAG "), write the kernel\n"
	"config (tinyconfig + qemu/kernel.config) and build the guest initramfs.\n"
	"Safe to interrupt and rerun; does nothing when all is in place.\n"
	"As root it installs linux-source-6.12 when missing; as a user it says\n"
	"to (apt-get install linux-source-6.12).  qemu/ is read from the data\n"
	"dir ($PRINTKBOT_DATADIR, the checkout, or the installed share/printkbot).\n\n"
	"  --source LIST   more bases: each of Debian's kernel source packages\n"
	"                  named (debian:6.1 is linux-source-6.1) imported as one\n"
	"                  more base commit of the same repository, tagged\n"
	"                  " PK_BASES_DEBIAN_TAG "VER (debian:6.12, the default, is\n"
	"                  " PK_LAB_BASE_TAG "); `test --base debian:6.1` tests on it.\n"
	"                  A package this system's apt sources lack (debian:7.2) is\n"
	"                  fetched from Debian's trixie, trixie-backports,\n"
	"                  unstable and experimental ($PRINTKBOT_DEBIAN_MIRROR,\n"
	"                  default http://deb.debian.org/debian) with apt on a\n"
	"                  sources list of its own under the cache dir: the\n"
	"                  system's apt sources and state are not changed\n"
	"  --arch ARCH     the lab of ARCH beside x86_64's: arm64 is built with\n"
	"                  Debian's gcc-aarch64-linux-gnu (make deps installs it)\n"
	"                  from tinyconfig + qemu/kernel-arm64.config, its guest\n"
	"                  init with the same cross compiler, and boots on QEMU's\n"
	"                  virt machine (qemu-system-aarch64); `test --arch arm64`\n"
	"                  and `boot --arch arm64` use it; without it, the config's\n"
	"                  [test] arch (--config FILE, default $PRINTKBOT_CONFIG,\n"
	"                  else /etc/printkbot.conf if present), else x86_64\n";

struct setup_opts {
	const char *source;
};

static const struct pk_option setup_options[] = {
	PK_OPTION_STRING("source", struct setup_opts, source),
	PK_OPTION_ARCH,
	PK_OPTION_CONFIG,
	{ NULL },
};

/* Not PK_NEEDS_LAB: that wants a lab already set up; this one only opens and locks it. */
static int cmd_setup(struct pk_cmd_ctx *ctx)
{
	const struct setup_opts *o = ctx->cmdline.opts;
	g_auto(GStrv) sources = o->source ? g_strsplit(o->source, ",", -1) : NULL;
	g_autoptr(GError) err = NULL;
	struct pk_lab lab = { .lock_fd = -1 };   /* pk_lab_open() leaves it as is on failure */
	double t0 = pk_now();
	int status = 0;

	/* --arch, else the config's [test] arch; x86_64's lab alone is arch NULL */
	const struct pk_arch *arch = ctx->cmdline.common.arch ? pk_arch_by_name(ctx->cmdline.common.arch)
							      : ctx->config.test.arch;

	for (char **s = sources; s && *s; s++)
		g_strstrip(*s);
	/* pk_command_setup() refused an --arch the lab does not know */
	if (pk_lab_open(&lab, &err) < 0 || (arch && !pk_arch_toolchain_ok(arch, &err)) ||
	    (arch && pk_lab_set_arch(&lab, arch, &err) < 0) || pk_lab_lock(&lab, &err) < 0 ||
	    pk_setup_lab(&lab, (const char *const *)sources, &err) < 0) {
		fprintf(stderr, "printkbot setup: %s\n", err->message);
		status = 1;
	} else {
		g_autofree char *build_dir = pk_lab_build_dir(&lab);

		printf("kernel lab%s%s ready in %.1f s: tree %s, build dir %s\n", arch ? " for " : "",
		       arch ? arch->name : "", pk_now() - t0, lab.tree, build_dir);
	}
	pk_lab_clear(&lab);
	return status;
}

const struct pk_cmd_spec cmd_setup_spec = {
	.usage = setup_usage,
	.options = setup_options,
	.opts_size = sizeof(struct setup_opts),
	.args_max = 0,
	.setup_status = 1,
	.run = cmd_setup,
};
