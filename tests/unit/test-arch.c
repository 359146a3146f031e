/*
 * test-arch.c - the lab's architectures (lab/arch.h) and what a lab made
 * another's changes (lab.h's pk_lab_set_arch()): its config's name and
 * build dirs from its own fragment, its own initramfs, while x86_64's
 * names and paths stay what they were before there were others, so that
 * an existing lab builds nothing again.  And the lab another
 * architecture tests a patch on (pk_lab_for_arch()): none until setup
 * made it, then the same tree with that architecture's config.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "lab/arch.h"
#include "lab/lab.h"
#include "lab/repo.h"
#include "base/util.h"
#include "daemon-lab-fixture.h"

static void test_table(void **state)
{
	const struct pk_arch *arm = pk_arch_by_name("arm64");

	assert_ptr_equal(pk_arch_by_name("x86_64"), &pk_arch_x86_64);
	assert_non_null(arm);
	assert_null(pk_arch_by_name("riscv64"));
	assert_null(pk_arch_by_name(NULL));
	assert_string_equal(pk_arch_names(), "x86_64, arm64");
	assert_string_equal(arm->karch, "arm64");
	assert_string_equal(arm->cross_compile, "aarch64-linux-gnu-");
	assert_false(arm->kvm);
	/* another arch's code is no option of a kernel of this one */
	assert_true(pk_arch_foreign_file(&pk_arch_x86_64, "arch/arm64/kernel/setup.c"));
	assert_false(pk_arch_foreign_file(&pk_arch_x86_64, "arch/x86/kernel/setup.c"));
	assert_true(pk_arch_foreign_file(arm, "arch/x86/kernel/setup.c"));
	assert_false(pk_arch_foreign_file(arm, "arch/arm64/kernel/setup.c"));
	assert_false(pk_arch_foreign_file(arm, "drivers/tty/serial/amba-pl011.c"));
}

/* The first 12 hex of sha256 of a file of the checkout's qemu/. */
static char *fragment_hash(const char *name)
{
	g_autofree char *path = g_build_filename(PK_SRCDIR, "qemu", name, NULL), *text = NULL, *sum = NULL;
	gsize len;

	assert_true(g_file_get_contents(path, &text, &len, NULL));
	sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, len);
	return g_strndup(sum, 12);
}

static void test_lab_of_arch(void **state)
{
	struct pk_lab lab = { .cache = g_strdup("/c"), .datadir = g_strdup(PK_SRCDIR), .lock_fd = -1 };
	g_autofree char *x86_name = pk_lab_config_name(PK_SRCDIR, &pk_arch_x86_64, NULL, NULL, NULL, NULL);
	g_autofree char *x86_hash = fragment_hash("kernel.config"), *arm_hash = fragment_hash("kernel-arm64.config");
	g_autofree char *arm_stem = g_build_filename("/c", "build", arm_hash, NULL);
	g_autofree char *x86_stem = g_build_filename("/c", "build", x86_hash, NULL);

	/* x86_64's name is its fragment's hash alone, as it always was */
	assert_string_equal(x86_name, x86_hash);
	assert_ptr_equal(pk_lab_arch(&lab), &pk_arch_x86_64);   /* a lab made by hand */

	assert_int_equal(pk_lab_set_arch(&lab, pk_arch_by_name("arm64"), NULL), 0);
	assert_string_equal(lab.config_hash, arm_hash);
	assert_string_not_equal(lab.config_hash, x86_hash);
	assert_string_equal(lab.build_stem, arm_stem);
	assert_string_equal(lab.initrd, "/c/guest/arm64/initrd.cpio");
	assert_string_equal(pk_lab_arch(&lab)->name, "arm64");

	assert_int_equal(pk_lab_set_arch(&lab, &pk_arch_x86_64, NULL), 0);
	assert_string_equal(lab.config_hash, x86_hash);
	assert_string_equal(lab.build_stem, x86_stem);
	assert_string_equal(lab.initrd, "/c/guest/initrd.cpio");
	pk_lab_clear(&lab);
}

static void test_lab_for_arch(void **state)
{
	const struct pk_arch *arm = pk_arch_by_name("arm64");
	struct daemon_lab d;
	struct pk_lab there = { .lock_fd = -1 };
	g_autofree char *why = NULL, *stamp = NULL, *guest = NULL;
	g_autoptr(GError) err = NULL;

	assert_ptr_equal(pk_arch_nth(0), &pk_arch_x86_64);   /* the lab's default first */
	assert_ptr_equal(pk_arch_nth(1), arm);
	assert_null(pk_arch_nth(2));

	daemon_lab_init(&d, "pk-arch", "TEST_ARCH", "int x;\n");
	/* a derived config's lab: the other architecture derives its own */
	d.lab.extra_config = g_strdup("CONFIG_ATA=y\n");

	/* x86_64's lab is set up, arm64's is not: said, not an error */
	assert_int_equal(pk_lab_for_arch(&there, &d.lab, arm, &why, &err), 1);
	assert_null(err);
	assert_non_null(strstr(why, "setup did not finish for config"));

	/* what `setup --arch arm64` leaves: its stamp and its initramfs */
	{
		struct pk_lab probe = { .lock_fd = -1 };

		assert_int_equal(pk_lab_open(&probe, NULL), 0);
		assert_int_equal(pk_lab_set_arch(&probe, arm, NULL), 0);
		stamp = pk_lab_ready_stamp(&probe);
		guest = g_path_get_dirname(probe.initrd);
		assert_int_equal(g_mkdir_with_parents(guest, 0755), 0);
		assert_true(g_file_set_contents(stamp, probe.config_hash, -1, NULL));
		assert_true(g_file_set_contents(probe.initrd, "", 0, NULL));
		pk_lab_clear(&probe);
	}
	g_clear_pointer(&why, g_free);
	assert_int_equal(pk_lab_for_arch(&there, &d.lab, arm, &why, &err), 0);
	assert_ptr_equal(pk_lab_arch(&there), arm);
	assert_string_equal(there.tree, d.lab.tree);          /* the same tree */
	assert_string_not_equal(there.config_hash, d.lab.config_hash);
	assert_null(there.extra_config);
	assert_int_equal(there.lock_fd, -1);                  /* the cache's lock stays the lab's */
	assert_ptr_not_equal(there.repo, d.lab.repo);
	pk_lab_clear(&there);
	/* the lab it came from is untouched */
	assert_ptr_equal(pk_lab_arch(&d.lab), &pk_arch_x86_64);
	assert_string_equal(d.lab.extra_config, "CONFIG_ATA=y\n");
	daemon_lab_clear(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_lab_of_arch),
		cmocka_unit_test(test_lab_for_arch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
