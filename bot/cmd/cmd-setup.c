/* cmd-setup.c - `printkbot setup`: prepare the kernel lab. */
#include "cmd/commands.h"
#include "lab/lab.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

int cmd_setup(int argc, char **argv)
{
	g_autoptr(GError) err = NULL;
	struct pk_lab lab;
	double t0 = pk_now();

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: printkbot setup\n\n"
		       "Extract Debian's linux-source-6.12 into the cache dir, make it a git\n"
		       "repository with one base commit (tag " PK_LAB_BASE_TAG "), write the kernel\n"
		       "config (tinyconfig + qemu/kernel.config) and build the guest initramfs.\n"
		       "Safe to interrupt and rerun; does nothing when all is in place.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "printkbot setup: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	if (pk_lab_open(&lab, &err) < 0 || pk_lab_lock(&lab, &err) < 0 || pk_lab_setup(&lab, &err) < 0) {
		fprintf(stderr, "printkbot setup: %s\n", err->message);
		pk_lab_clear(&lab);
		return 1;
	}
	printf("kernel lab ready in %.1f s: tree %s, build dir %s\n", pk_now() - t0, lab.tree,
	       lab.build_dir);
	pk_lab_clear(&lab);
	return 0;
}
