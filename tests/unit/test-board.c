/*
 * test-board.c - the QEMU boards of qemu/boards (lab/board.h): which row
 * a patch goes to, what a row says, which rows are refused and how the
 * error names them, and what a board changes in a lab (its config's name,
 * not its build dirs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "base/patch.h"
#include "lab/board.h"
#include "lab/lab.h"

/* A patch changing one line of each of files (NULL-terminated). */
static struct pk_patch *patch_of(const char *const *files)
{
	g_autoptr(GString) diff = g_string_new(NULL);

	for (; *files; files++)
		g_string_append_printf(diff, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-a\n+b\n",
				       *files, *files, *files, *files);
	return pk_patch_parse_diff(diff->str, diff->len);
}

static void test_shipped_table(void **state)
{
	const char *aux[] = { "drivers/tty/serial/8250/8250_bcm2835aux.c", NULL };
	const char *pl011[] = { "drivers/tty/serial/amba-pl011.c", NULL };
	const char *core[] = { "drivers/tty/serial/8250/8250_core.c", NULL };
	const char *both[] = { "arch/x86/kernel/setup.c", "drivers/tty/serial/amba-pl011.c", NULL };
	g_autoptr(pk_patch) p_aux = patch_of(aux), p_pl011 = patch_of(pl011), p_core = patch_of(core);
	g_autoptr(pk_patch) p_both = patch_of(both);
	const struct pk_board *b = NULL, *again = NULL;

	assert_int_equal(pk_board_for_patch(&b, PK_SRCDIR, p_aux, NULL), 0);
	assert_non_null(b);
	assert_string_equal(b->arch->name, "arm64");
	assert_string_equal(b->machine, "raspi3b");
	assert_string_equal(b->dtb, "broadcom/bcm2837-rpi-3-b.dtb");
	assert_string_equal(b->console, "ttyS1");
	assert_string_equal(b->capture_port, "ttyAMA0");
	assert_true(b->capture_first);
	assert_string_equal(b->memory, "1G");
	assert_string_equal(b->smp, "4");
	assert_string_equal(b->symbols[0], "ARCH_BCM2835");
	assert_true(g_str_has_prefix(b->row, PK_SRCDIR "/qemu/boards:"));
	/* read once: the same board again */
	assert_int_equal(pk_board_for_patch(&again, PK_SRCDIR, p_aux, NULL), 0);
	assert_ptr_equal(again, b);

	/* the architecture's own machine: arm64 as its lab boots, no board */
	assert_int_equal(pk_board_for_patch(&b, PK_SRCDIR, p_pl011, NULL), 0);
	assert_non_null(b);
	assert_string_equal(b->arch->name, "arm64");
	assert_null(b->machine);
	assert_null(b->symbols[0]);
	/* any touched file decides */
	assert_int_equal(pk_board_for_patch(&b, PK_SRCDIR, p_both, NULL), 0);
	assert_non_null(b);
	assert_null(b->machine);

	/* the 8250 core is every 8250's: no board */
	assert_int_equal(pk_board_for_patch(&b, PK_SRCDIR, p_core, NULL), 0);
	assert_null(b);
}

/* The error of a table holding row alone (after a comment line), or NULL when it parsed. */
static char *parse_error(const char *row)
{
	g_autoptr(GPtrArray) boards = g_ptr_array_new_with_free_func((GDestroyNotify)pk_board_free);
	g_autofree char *text = g_strconcat("# a comment\n\n", row, "\n", NULL);
	g_autoptr(GError) err = NULL;

	if (pk_board_parse(boards, text, "boards", &err) == 0) {
		assert_int_equal(boards->len, 1);
		return NULL;
	}
	assert_int_equal(boards->len, 0);
	return g_strdup(err->message);
}

static void test_refused_rows(void **state)
{
	static const struct {
		const char *row, *error;
	} cases[] = {
		{ "drivers/x arm64", "boards:3: want a path prefix, an architecture and a QEMU machine" },
		{ "drivers/x riscv64 virt", "boards:3: no architecture \"riscv64\" (the lab has x86_64, arm64)" },
		{ "drivers/x arm64 raspi3b colour=red", "boards:3: a key is one of dtb, console, capture, serials, "
							"memory, smp" },
		{ "drivers/x arm64 raspi3b dtb=../../etc/x.dtb", "boards:3: dtb= wants a .dtb path under "
								 "arch/<arch>/boot/dts/" },
		{ "drivers/x arm64 raspi3b dtb=/etc/x.dtb", "boards:3: dtb= wants a .dtb path" },
		{ "drivers/x arm64 raspi3b console=tty/S1", "boards:3: console= and capture= want a device name" },
		{ "drivers/x arm64 raspi3b capture=", "boards:3: console= and capture= want a device name" },
		{ "drivers/x arm64 raspi3b memory=lots", "boards:3: memory= and smp= want a number" },
		{ "drivers/x arm64 raspi3b serials=stdio", "boards:3: serials= is capture,console or console,capture" },
		{ "drivers/x arm64 raspi3b CONFIG_", "boards:3: CONFIG_ names no symbol" },
		{ "drivers/x arm64 virt CONFIG_FOO", "boards:3: a row of the architecture's own machine takes "
						     "nothing else" },
		{ "drivers/x arm64 virt memory=1G", "boards:3: a row of the architecture's own machine" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *error = parse_error(cases[i].row);

		if (!error || !g_str_has_prefix(error, cases[i].error))
			fail_msg("row \"%s\": got \"%s\", want \"%s...\"", cases[i].row, error ? error : "(parsed)",
				 cases[i].error);
	}
	/* and what a good row says, defaults where it says nothing */
	{
		g_autoptr(GPtrArray) boards = g_ptr_array_new_with_free_func((GDestroyNotify)pk_board_free);
		const struct pk_board *b;

		assert_int_equal(pk_board_parse(boards, "drivers/y/ arm64 xlnx-zcu102 serials=console,capture "
						"CONFIG_ARCH_ZYNQMP", "t", NULL), 0);
		b = boards->pdata[0];
		assert_string_equal(b->machine, "xlnx-zcu102");
		assert_null(b->dtb);
		assert_null(b->console);
		assert_null(b->memory);
		assert_false(b->capture_first);
		assert_string_equal(b->symbols[0], "ARCH_ZYNQMP");
		assert_null(b->symbols[1]);
	}
}

/* A board's lab: its own config name (boots and masks), the architecture's build dirs. */
static void test_lab_on_board(void **state)
{
	const char *aux[] = { "drivers/tty/serial/8250/8250_bcm2835aux.c", NULL };
	g_autoptr(pk_patch) p = patch_of(aux);
	struct pk_lab lab = { .cache = g_strdup("/c"), .datadir = g_strdup(PK_SRCDIR), .lock_fd = -1 };
	g_autofree char *arm_hash = NULL, *arm_stem = NULL;
	struct pk_board other = { 0 };
	const struct pk_board *b;

	assert_int_equal(pk_board_for_patch(&b, PK_SRCDIR, p, NULL), 0);
	assert_int_equal(pk_lab_set_arch(&lab, b->arch, NULL), 0);
	arm_hash = g_strdup(lab.config_hash);
	arm_stem = g_strdup(lab.build_stem);
	assert_int_equal(pk_lab_set_board(&lab, b, NULL), 0);
	assert_ptr_equal(lab.board, b);
	assert_string_not_equal(lab.config_hash, arm_hash);
	assert_string_equal(lab.build_stem, arm_stem);

	/* another board (the same but its memory) is another config name */
	other = *b;
	other.memory = "2G";
	{
		g_autofree char *mine = g_strdup(lab.config_hash);

		assert_int_equal(pk_lab_set_board(&lab, &other, NULL), 0);
		assert_string_not_equal(lab.config_hash, mine);
	}
	/* back to the architecture: no board */
	assert_int_equal(pk_lab_set_arch(&lab, b->arch, NULL), 0);
	assert_null(lab.board);
	assert_string_equal(lab.config_hash, arm_hash);
	pk_lab_clear(&lab);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_table),
		cmocka_unit_test(test_refused_rows),
		cmocka_unit_test(test_lab_on_board),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
