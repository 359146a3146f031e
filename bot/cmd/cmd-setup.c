/* cmd-setup.c - `printkbot setup`: prepare the kernel lab. */
#include "cmd/commands.h"
#include "lab/lab.h"
#include "lab/setup.h"
#include "base/util.h"

#include <stdio.h>

static const char setup_usage[] =
	"usage: printkbot setup\n\n"
	"Extract Debian's linux-source-6.12 into the cache dir, make it a git\n"
	"repository with one base commit (tag " PK_LAB_BASE_TAG "), write the kernel\n"
	"config (tinyconfig + qemu/kernel.config) and build the guest initramfs.\n"
	"Safe to interrupt and rerun; does nothing when all is in place.\n"
	"As root it installs linux-source-6.12 when missing; as a user it says\n"
	"to (apt-get install linux-source-6.12).  qemu/ is read from the data\n"
	"dir ($PRINTKBOT_DATADIR, the checkout, or the installed share/printkbot).\n";

static const struct pk_option setup_options[] = {
	{ NULL },
};

/* Not PK_NEEDS_LAB: that wants a lab already set up; this one only opens and locks it. */
static int cmd_setup(struct pk_cmd_ctx *ctx)
{
	g_autoptr(GError) err = NULL;
	struct pk_lab lab = { .lock_fd = -1 };   /* pk_lab_open() leaves it as is on failure */
	double t0 = pk_now();
	int status = 0;

	if (pk_lab_open(&lab, &err) < 0 || pk_lab_lock(&lab, &err) < 0 || pk_setup_lab(&lab, &err) < 0) {
		fprintf(stderr, "printkbot setup: %s\n", err->message);
		status = 1;
	} else {
		printf("kernel lab ready in %.1f s: tree %s, build dir %s\n", pk_now() - t0, lab.tree,
		       lab.build_dir);
	}
	pk_lab_clear(&lab);
	return status;
}

const struct pk_cmd_spec cmd_setup_spec = {
	.usage = setup_usage,
	.options = setup_options,
	.args_max = 0,
	.setup_status = 1,
	.run = cmd_setup,
};
