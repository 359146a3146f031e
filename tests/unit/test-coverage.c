/*
 * test-coverage.c - what of a patch the build holds (lab/coverage.h), on a
 * fake tree and build dir made here: Kbuild makefiles, a thin vmlinux.a
 * and lib/lib.a, .cmd files with their source and dependencies, a .config;
 * and the verdict that follows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include "lab/coverage.h"
#include "lab/derive.h"
#include "lab/kconfig.h"
#include "lab/state.h"
#include "base/patch.h"
#include "base/util.h"

struct fake {
	char *root, *tree, *build;
};

static void put(const char *dir, const char *name, const char *text)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	g_autofree char *parent = g_path_get_dirname(path);
	g_autoptr(GError) err = NULL;

	assert_int_equal(g_mkdir_with_parents(parent, 0755), 0);
	if (!g_file_set_contents(path, text, -1, &err))
		fail_msg("%s", err->message);
}

/* A GNU thin archive naming members (NULL-terminated), as `ar cDPrST` writes it. */
static void put_thin_archive(const char *dir, const char *name, const char *const *members)
{
	g_autoptr(GString) table = g_string_new(NULL), ar = g_string_new("!<thin>\n");

	for (const char *const *m = members; *m; m++)
		g_string_append_printf(table, "%s/\n", *m);
	g_string_append_printf(ar, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", "//", "", "", "", "", table->len);
	g_string_append_len(ar, table->str, table->len);
	for (gsize off = 0, i = 0; members[i]; off += strlen(members[i]) + 2, i++) {
		g_autofree char *ref = g_strdup_printf("/%zu", off);
		g_string_append_printf(ar, "%-16s%-12s%-6s%-6s%-8s%-10u`\n", ref, "0", "0", "0", "644", 1000u);
	}
	put(dir, name, ar->str);
}

/* The .cmd file Kbuild's fixdep writes for object, from source, reading deps (tree-relative). */
static void put_cmd(const struct fake *f, const char *object, const char *source, const char *const *deps)
{
	g_autoptr(GString) t = g_string_new(NULL);
	g_autofree char *dir = g_path_get_dirname(object), *base = g_path_get_basename(object);
	g_autofree char *name = g_strdup_printf("%s/.%s.cmd", dir, base);

	g_string_append_printf(t, "savedcmd_%s := gcc -Wp,-MMD,%s/.%s.d -c -o %s %s/%s\n\n", object, dir, base,
			       object, f->tree, source);
	g_string_append_printf(t, "source_%s := %s/%s\n\ndeps_%s := \\\n", object, f->tree, source, object);
	g_string_append(t, "    $(wildcard include/config/PRINTK) \\\n");
	for (const char *const *d = deps; d && *d; d++)
		g_string_append_printf(t, "  %s/%s \\\n", f->tree, *d);
	g_string_append_printf(t, "  include/generated/autoconf.h \\\n\n%s: $(deps_%s)\n\n$(deps_%s):\n", object,
			       object, object);
	put(f->build, name, t->str);
}

static int setup(void **state)
{
	struct fake *f = g_new0(struct fake, 1);
	static const char *const linked[] = { "init/main.o", "kernel/printk/printk.o", "kernel/sched/build_policy.o",
					      "drivers/tty/tty_io.o", NULL };
	/* names relative to the archive's dir, as ar P writes them into lib/lib.a */
	static const char *const libs[] = { "argv_split.o", NULL };
	static const char *const printk_deps[] = { "include/linux/printk.h", "include/linux/kern_levels.h", NULL };
	static const char *const sched_deps[] = { "kernel/sched/idle.c", "kernel/sched/rt.c",
						  "include/linux/printk.h", NULL };
	static const char *const tty_deps[] = { "include/linux/printk.h", NULL };

	f->root = g_dir_make_tmp("pk-coverage-XXXXXX", NULL);
	f->tree = g_build_filename(f->root, "linux", NULL);
	f->build = g_build_filename(f->root, "build", NULL);
	put(f->tree, "Kbuild", "# the top\nobj-y\t\t\t+= init/\nobj-y += kernel/ drivers/\n"
	    "obj-$(CONFIG_NET)\t+= net/\n");
	put(f->tree, "drivers/Makefile", "obj-y\t\t\t\t+= tty/\n# ata\nobj-$(CONFIG_ATA)\t\t+= ata/\n");
	put(f->tree, "drivers/ata/Makefile", "obj-$(CONFIG_ATA)\t\t+= libata.o\n"
	    "obj-$(CONFIG_SATA_AHCI)\t\t+= ahci.o libahci.o\n"
	    "obj-$(CONFIG_SATA_ACARD_AHCI)\t+= acard-ahci.o libahci.o\n"
	    "libata-y\t:= libata-core.o \\\n\tlibata-eh.o\n");
	put(f->tree, "drivers/tty/Makefile", "obj-y += tty_io.o\nobj-$(CONFIG_VT) += vt.o\n"
	    "obj-$(CONFIG_FOO) += foo.o\nfoo-y := foo_main.o\nfoo-$(CONFIG_FOO_EXTRA) += foo_extra.o\n"
	    "obj-$(CONFIG_BAR) += bar.o\nbar-y := bar_main.o\nbar-$(CONFIG_BAR_EXTRA) += bar_extra.o\n"
	    "obj-$(CONFIG_Q1) += multi.o\nobj-$(CONFIG_Q2) += multi.o\nobj-$(CONFIG_Q3) += multi.o\n"
	    "obj-$(CONFIG_Q4) += multi.o # four drivers share it\n");
	put(f->build, ".config", "CONFIG_PRINTK=y\n# CONFIG_ATA is not set\nCONFIG_FOO=m\nCONFIG_BAR=y\n");
	put_thin_archive(f->build, "vmlinux.a", linked);
	put_thin_archive(f->build, "lib/lib.a", libs);
	put(f->build, ".vmlinux.o.cmd", "savedcmd_vmlinux.o := ld -m elf_x86_64 -r -o vmlinux.o --whole-archive "
	    "vmlinux.a --no-whole-archive --start-group lib/lib.a --end-group  ; ./tools/objtool/objtool\n");
	put_cmd(f, "kernel/printk/printk.o", "kernel/printk/printk.c", printk_deps);
	put_cmd(f, "kernel/sched/build_policy.o", "kernel/sched/build_policy.c", sched_deps);
	put_cmd(f, "drivers/tty/tty_io.o", "drivers/tty/tty_io.c", tty_deps);
	/* compiled once, no longer linked: a stale object of an earlier config */
	put_cmd(f, "drivers/tty/vt.o", "drivers/tty/vt.c", tty_deps);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->root);

	/* a temporary dir of our own, named by g_dir_make_tmp() */
	assert_int_equal(system(cmd), 0);
	g_free(f->root);
	g_free(f->tree);
	g_free(f->build);
	g_free(f);
	return 0;
}

#define MOD(path) "diff --git a/" path " b/" path "\n--- a/" path "\n+++ b/" path "\n@@ -1 +1 @@\n-a\n+b\n"
#define DEL(path) "diff --git a/" path " b/" path "\ndeleted file mode 100644\n--- a/" path "\n+++ /dev/null\n" \
		  "@@ -1 +0,0 @@\n-a\n"

struct coverage_case {
	const char *diff;
	const char *file;
	const char *state;
	const char *reason_has;   /* NULL: no reason at all */
};

static const struct coverage_case cases[] = {
	{ MOD("kernel/printk/printk.c"), "kernel/printk/printk.c", "booted", "2 records of the boot came from it" },
	{ MOD("drivers/tty/tty_io.c"), "drivers/tty/tty_io.c", "built", NULL },
	/* a .c file the build includes in another: sched's build_policy.c */
	{ MOD("kernel/sched/rt.c"), "kernel/sched/rt.c", "built", "read by kernel/sched/build_policy.o" },
	{ MOD("include/linux/printk.h"), "include/linux/printk.h", "built",
	  "read by drivers/tty/tty_io.o, kernel/printk/printk.o and 1 more object" },
	{ MOD("include/linux/kern_levels.h"), "include/linux/kern_levels.h", "built", "read by kernel/printk/printk.o" },
	{ MOD("include/linux/ata.h"), "include/linux/ata.h", "not-built", "no object of the build reads it" },
	{ MOD("lib/argv_split.c"), "lib/argv_split.c", "built", "in lib/lib.a: linked when something uses it" },
	{ MOD("drivers/ata/ahci.c"), "drivers/ata/ahci.c", "not-built",
	  "not compiled by the tested kernel config: nothing under drivers/ata/ is built, CONFIG_ATA is not set "
	  "(drivers/Makefile)" },
	{ MOD("net/core/dev.c"), "net/core/dev.c", "not-built", "CONFIG_NET is not set (Kbuild)" },
	{ MOD("drivers/tty/vt.c"), "drivers/tty/vt.c", "not-built",
	  "compiled into drivers/tty/vt.o, which is not linked into vmlinux" },
	{ MOD("drivers/tty/foo_main.c"), "drivers/tty/foo_main.c", "not-built",
	  "CONFIG_FOO=m, a module, which the lab does not build (drivers/tty/Makefile)" },
	/* a part of a composite object goes by the composite's line */
	{ MOD("drivers/tty/foo_extra.c"), "drivers/tty/foo_extra.c", "not-built", "CONFIG_FOO=m, a module" },
	{ MOD("drivers/tty/bar_extra.c"), "drivers/tty/bar_extra.c", "not-built", ": CONFIG_BAR_EXTRA is not set "
	  "(drivers/tty/Makefile)" },
	{ MOD("drivers/ata/libahci.c"), "drivers/ata/libahci.c", "not-built",
	  "nothing under drivers/ata/ is built, CONFIG_ATA is not set" },
	{ MOD("drivers/tty/bar.c"), "drivers/tty/bar.c", "not-built", "CONFIG_BAR=y, yet nothing compiled it" },
	{ MOD("drivers/tty/multi.c"), "drivers/tty/multi.c", "not-built",
	  "none of CONFIG_Q1, CONFIG_Q2, CONFIG_Q3 (and 1 more) is set (drivers/tty/Makefile)" },
	{ MOD("drivers/tty/baz.c"), "drivers/tty/baz.c", "not-built", "not compiled by the tested kernel config" },
	{ MOD("Documentation/admin-guide/kernel-parameters.txt"), "Documentation/admin-guide/kernel-parameters.txt",
	  "not-built", "the build does not read it" },
	{ MOD("MAINTAINERS"), "MAINTAINERS", "not-built", "the build does not read it" },
	{ DEL("kernel/printk/old.c"), "kernel/printk/old.c", "built", "deleted; the kernel before the patch had 1" },
	{ DEL("drivers/tty/gone.c"), "drivers/tty/gone.c", "not-built", "deleted, and the kernel before the patch" },
};

/* A boot: an index and the records it printed. */
static struct pk_capture *capture(const char *const *index, const char *const *records)
{
	struct pk_capture *cap = pk_capture_parse("", 0);

	for (const char *const *i = index; *i; i++) {
		struct pk_index_entry *e = g_new0(struct pk_index_entry, 1);
		g_auto(GStrv) f = g_strsplit(*i, "|", 3);

		e->level = 6;
		e->file = g_strdup(f[0]);
		e->line = 10;
		e->func = g_strdup(f[1]);
		e->format = g_strdup(f[2]);
		g_ptr_array_add(cap->index, e);
	}
	for (const char *const *r = records; *r; r++) {
		g_autofree char *line = g_strdup_printf("6,%u,1000,-;%s\n", (unsigned)(r - records), *r);
		g_ptr_array_add(cap->records, pk_record_parse(line, strlen(line), NULL));
	}
	return cap;
}

static void test_cases(void **state)
{
	struct fake *f = *state;
	static const char *const index_before[] = { "kernel/printk/old.c|old|old message %d\n", NULL };
	static const char *const index_after[] = { "kernel/printk/printk.c|printk_init|printk: ready with %u records\n",
						   "drivers/tty/tty_io.c|tty_init|some other text\n", NULL };
	static const char *const records[] = { "printk: ready with 12 records", "printk: ready with 13 records",
					       "unattributed", NULL };
	g_autoptr(pk_capture) before = capture(index_before, (const char *const[]){ NULL });
	g_autoptr(pk_capture) after = capture(index_after, records);

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		const struct coverage_case *c = &cases[i];
		g_autoptr(pk_patch) patch = pk_patch_parse_diff(c->diff, strlen(c->diff));
		struct pk_coverage_input in = { f->build, f->tree, patch, before, after };
		g_autoptr(GPtrArray) cov = NULL;
		g_autoptr(GError) err = NULL;
		const struct pk_file_coverage *fc;

		if (pk_coverage_read(&cov, &in, &err) < 0)
			fail_msg("%s: %s", c->file, err->message);
		assert_int_equal(cov->len, 1);
		fc = cov->pdata[0];
		print_message("%s: %s (%s)\n", fc->file, pk_coverage_state_name(fc->state), fc->reason ? fc->reason : "-");
		assert_string_equal(fc->file, c->file);
		assert_string_equal(pk_coverage_state_name(fc->state), c->state);
		if (c->reason_has)
			assert_non_null(strstr(fc->reason ? fc->reason : "", c->reason_has));
		else
			assert_null(fc->reason);
	}
}

/*
 * A path no file system can hold (a component over NAME_MAX, the whole
 * over PATH_MAX) names no file of the tree: not-built, with why, as any
 * file no config builds, and no Kconfig symbol; never an error that
 * stops the test.
 */
static void test_long_paths(void **state)
{
	struct fake *f = *state;
	g_autofree char *component = g_strnfill(300, 'c');
	g_autofree char *part = g_strnfill(200, 'd');
	g_autoptr(GString) deep = g_string_new("drivers/tty");
	g_autofree char *wide = g_strdup_printf("drivers/tty/%s.c", component);
	g_autoptr(pk_capture) before = capture((const char *const[]){ NULL }, (const char *const[]){ NULL });
	g_autoptr(pk_capture) after = capture((const char *const[]){ NULL }, (const char *const[]){ NULL });

	for (int i = 0; i < 25; i++)
		g_string_append_printf(deep, "/%s", part);
	g_string_append(deep, "/x.c");
	for (const char *const *path = (const char *const[]){ wide, deep->str, NULL }; *path; path++) {
		g_autofree char *diff = g_strdup_printf("--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-a\n+b\n", *path, *path);
		g_autoptr(pk_patch) patch = pk_patch_parse_diff(diff, strlen(diff));
		struct pk_coverage_input in = { f->build, f->tree, patch, before, after };
		g_autoptr(GPtrArray) cov = NULL;
		g_autoptr(GError) err = NULL;
		const struct pk_file_coverage *fc;

		print_message("a path of %zu bytes\n", strlen(*path));
		if (pk_coverage_read(&cov, &in, &err) < 0)
			fail_msg("%zu bytes: %s", strlen(*path), err->message);
		assert_int_equal(cov->len, 1);
		fc = cov->pdata[0];
		print_message("  %s (%s)\n", pk_coverage_state_name(fc->state), fc->reason ? fc->reason : "-");
		assert_string_equal(pk_coverage_state_name(fc->state), "not-built");
		assert_non_null(fc->reason);
		/* and no Kconfig symbol builds it: a derived config asks for none */
		{
			g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func(g_free);

			if (pk_coverage_kbuild_groups(f->tree, *path, groups, &err) < 0)
				fail_msg("%zu bytes: %s", strlen(*path), err->message);
			assert_int_equal(groups->len, 0);
		}
	}
}

/* Without vmlinux.a (nor built-in.a) nothing is vouched for; with built-in.a alone (before 6.1) it serves. */
static void test_no_archive(void **state)
{
	struct fake *f = *state;
	const char *diff = MOD("drivers/tty/tty_io.c");
	g_autoptr(pk_patch) patch = pk_patch_parse_diff(diff, strlen(diff));
	g_autofree char *vmlinux_a = g_build_filename(f->build, "vmlinux.a", NULL);
	g_autofree char *builtin_a = g_build_filename(f->build, "built-in.a", NULL);
	struct pk_coverage_input in = { f->build, f->tree, patch, NULL, NULL };
	g_autoptr(GPtrArray) cov = NULL, old = NULL;
	const struct pk_file_coverage *fc;

	assert_int_equal(g_rename(vmlinux_a, builtin_a), 0);
	assert_int_equal(pk_coverage_read(&old, &in, NULL), 0);
	assert_int_equal(g_rename(builtin_a, vmlinux_a + 0), 0);
	fc = old->pdata[0];
	assert_string_equal(pk_coverage_state_name(fc->state), "built");

	assert_int_equal(g_rename(vmlinux_a, builtin_a), 0);
	assert_int_equal(g_unlink(builtin_a), 0);
	assert_int_equal(pk_coverage_read(&cov, &in, NULL), 0);
	fc = cov->pdata[0];
	assert_string_equal(pk_coverage_state_name(fc->state), "not-built");
	assert_non_null(strstr(fc->reason, "no vmlinux.a"));
	/* put it back for the other tests */
	{
		static const char *const linked[] = { "init/main.o", "kernel/printk/printk.o",
						      "kernel/sched/build_policy.o", "drivers/tty/tty_io.o", NULL };
		put_thin_archive(f->build, "vmlinux.a", linked);
	}
}

/* no-visible-change becomes not-built when a C source or header is not built, naming it; nothing else changes. */
static void test_verdict(void **state)
{
	g_autoptr(GPtrArray) cov = g_ptr_array_new_with_free_func(pk_file_coverage_free);
	g_autoptr(GPtrArray) built = g_ptr_array_new_with_free_func(pk_file_coverage_free);
	g_autofree char *reason = NULL, *none = NULL;
	enum pk_verdict v;

	g_ptr_array_add(built, pk_file_coverage_new("kernel/printk/printk.c", PK_COVERAGE_BOOTED, NULL, true));
	g_ptr_array_add(built, pk_file_coverage_new("Documentation/x.rst", PK_COVERAGE_NOT_BUILT,
						    "documentation: the build does not read it", false));
	g_ptr_array_add(cov, pk_file_coverage_new("kernel/printk/printk.c", PK_COVERAGE_BUILT, NULL, true));
	g_ptr_array_add(cov, pk_file_coverage_new("drivers/ata/ahci.c", PK_COVERAGE_NOT_BUILT,
						  "not compiled by the tested kernel config: CONFIG_ATA is not set", true));

	/* documentation not built is no reason: the C file was */
	assert_int_equal(pk_coverage_verdict(PK_VERDICT_NO_VISIBLE_CHANGE, built, &none), PK_VERDICT_NO_VISIBLE_CHANGE);
	assert_null(none);
	v = pk_coverage_verdict(PK_VERDICT_NO_VISIBLE_CHANGE, cov, &reason);
	assert_int_equal(v, PK_VERDICT_NOT_BUILT);
	assert_string_equal(pk_verdict_name(v), "not-built");
	assert_true(pk_verdict_parse("not-built", &v) && v == PK_VERDICT_NOT_BUILT);
	assert_true(pk_verdict_is_bad(PK_VERDICT_NOT_BUILT));
	print_message("%s\n", reason);
	assert_non_null(strstr(reason, "This file is not compiled into the kernel the bot built: drivers/ata/ahci.c "
			       "(not compiled by the tested kernel config: CONFIG_ATA is not set)"));
	assert_non_null(strstr(reason, "only the static findings speak for it"));
	/* a change that was seen stays: it is real */
	assert_int_equal(pk_coverage_verdict(PK_VERDICT_CONSOLE_CHANGED, cov, &none), PK_VERDICT_CONSOLE_CHANGED);
	assert_int_equal(pk_coverage_verdict(PK_VERDICT_BOOT_FAILED, cov, &none), PK_VERDICT_BOOT_FAILED);
	assert_null(none);
}

/* What pk_test_patch() weighs one architecture's kernel against another's by: the C files each built. */
static void test_sources_built(void **state)
{
	g_autoptr(GPtrArray) cov = g_ptr_array_new_with_free_func(pk_file_coverage_free);
	g_autofree char *list = NULL;
	unsigned n = 99;

	assert_int_equal(pk_coverage_built_beyond(NULL, NULL), 0);
	assert_null(pk_coverage_not_built_list(NULL, true, &n));
	assert_int_equal(n, 0);
	g_ptr_array_add(cov, pk_file_coverage_new("drivers/tty/serial/amba-pl011.c", PK_COVERAGE_NOT_BUILT,
						  "CONFIG_SERIAL_AMBA_PL011 is not set", true));
	g_ptr_array_add(cov, pk_file_coverage_new("drivers/tty/serial/8250/8250_core.c", PK_COVERAGE_BOOTED, NULL,
						  true));
	g_ptr_array_add(cov, pk_file_coverage_new("include/linux/amba/serial.h", PK_COVERAGE_NOT_BUILT, NULL, true));
	g_ptr_array_add(cov, pk_file_coverage_new("Documentation/x.rst", PK_COVERAGE_NOT_BUILT, "documentation",
						  false));
	g_ptr_array_add(cov, pk_file_coverage_new("drivers/tty/serial/8250/8250_port.c", PK_COVERAGE_BUILT, NULL,
						  true));
	/* booted and built count, documentation does not */
	assert_int_equal(pk_coverage_built_beyond(cov, NULL), 2);
	{
		/* another architecture's kernel of the same patch: the PL011 built, 8250_port not */
		g_autoptr(GPtrArray) arm = g_ptr_array_new_with_free_func(pk_file_coverage_free);

		g_ptr_array_add(arm, pk_file_coverage_new("drivers/tty/serial/amba-pl011.c", PK_COVERAGE_BOOTED,
							  NULL, true));
		g_ptr_array_add(arm, pk_file_coverage_new("drivers/tty/serial/8250/8250_port.c",
							  PK_COVERAGE_NOT_BUILT, "CONFIG_SERIAL_8250 is not set", true));
		assert_int_equal(pk_coverage_built_beyond(arm, cov), 1);   /* the PL011 */
		assert_int_equal(pk_coverage_built_beyond(cov, arm), 2);   /* 8250_core, 8250_port */
		assert_int_equal(pk_coverage_built_beyond(cov, cov), 0);
	}
	list = pk_coverage_not_built_list(cov, true, &n);
	assert_int_equal(n, 2);
	assert_string_equal(list, "drivers/tty/serial/amba-pl011.c (CONFIG_SERIAL_AMBA_PL011 is not set); "
				  "include/linux/amba/serial.h (?)");
}

static struct pk_patch *patch_touching(const char *const *files)
{
	g_autoptr(GString) mail = g_string_new("From: T <t@t>\nSubject: [PATCH] t\n\nx\n---\n");
	g_autoptr(GPtrArray) patches = NULL;
	unsigned skipped;

	for (; *files; files++)
		g_string_append_printf(mail, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1,1 +1,1 @@\n"
				       "-pr_info(\"a\\n\");\n+pr_info(\"b\\n\");\n", *files, *files, *files, *files);
	assert_int_equal(pk_patch_read_mails(&patches, &skipped, mail->str, mail->len, NULL), 0);
	assert_int_equal(patches->len, 1);
	return g_steal_pointer(&patches->pdata[0]);
}

/*
 * The project's own qemu/devices: a USB core and a HID patch share one
 * xHCI controller; the drivers the rows name are wanted unless the config
 * has them; a malformed row is an error naming its line.
 */
static void test_devices_table(void **state)
{
	struct fake *f = *state;
	g_autoptr(pk_patch) p = patch_touching((const char *[]){ "drivers/usb/core/hub.c", "drivers/hid/hid-core.c", NULL });
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) want = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) names = g_string_new(NULL);
	g_autoptr(GHashTable) config = g_hash_table_new(g_str_hash, g_str_equal);
	struct pk_derived d = { .asked = g_ptr_array_new_with_free_func(g_free) };
	g_autoptr(GError) err = NULL;
	guint xhci = 0;

	g_hash_table_insert(config, "USB_HID", "y");
	assert_int_equal(pk_derive_devices(args, names, want, &d, config, PK_SRCDIR, p, NULL), 0);
	assert_string_equal(names->str, "qemu-xhci, usb-kbd, usb-tablet");
	for (guint i = 0; i + 1 < args->len; i += 2)
		xhci += !strcmp(args->pdata[i + 1], "qemu-xhci,id=pkb-xhci");
	assert_int_equal(xhci, 1);
	assert_int_equal(want->len, 2);
	assert_string_equal(want->pdata[0], "USB_XHCI_HCD");
	assert_string_equal(want->pdata[1], "USB_XHCI_PCI");
	assert_string_equal(d.asked->pdata[0], "the devices of drivers/usb/core/: CONFIG_USB_XHCI_HCD");
	pk_derived_clear(&d);

	put(f->root, "qemu/devices", "# a row\ndrivers/x/ CONFIG_X -device\n");
	d.asked = g_ptr_array_new_with_free_func(g_free);
	assert_int_equal(pk_derive_devices(args, names, want, &d, config, f->root, p, &err), -1);
	assert_non_null(strstr(err->message, "qemu/devices:2: want a path prefix"));
	pk_derived_clear(&d);
}

/* The Kconfig symbol groups that put a file into the kernel, as derive.h asks for them. */
static void test_kbuild_groups(void **state)
{
	const struct fake *f = *state;
	static const struct {
		const char *file;
		const char *groups;   /* joined with ", " */
	} cases[] = {
		{ "drivers/ata/ahci.c", "SATA_AHCI, ATA" },
		/* two lines add it: either symbol builds it */
		{ "drivers/ata/libahci.c", "SATA_AHCI|SATA_ACARD_AHCI, ATA" },
		/* a composite object's part: the object's symbol, and the part's own */
		{ "drivers/tty/foo_extra.c", "FOO, FOO_EXTRA" },
		{ "drivers/tty/foo_main.c", "FOO" },
		{ "drivers/tty/multi.c", "Q1|Q2|Q3|Q4" },
		/* obj-y all the way up: nothing to ask for */
		{ "drivers/tty/tty_io.c", "" },
		{ "include/linux/printk.h", "" },
		{ "top.c", "" },
		/* not inside the tree: nothing (an absolute path looped for ever at "/") */
		{ "/drivers/ata/ahci.c", "" },
		{ "/abs.c", "" },
		{ "../drivers/ata/ahci.c", "" },
		{ "drivers/../../ata/ahci.c", "" },
	};

	alarm(10);   /* a loop for ever fails the test, rather than hanging it */
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func(g_free);
		g_autoptr(GError) err = NULL;
		g_autofree char *got = NULL;

		assert_int_equal(pk_coverage_kbuild_groups(f->tree, cases[i].file, groups, &err), 0);
		g_ptr_array_add(groups, NULL);
		got = g_strjoinv(", ", (char **)groups->pdata);
		if (strcmp(got, cases[i].groups))
			fail_msg("%s: groups \"%s\", want \"%s\"", cases[i].file, got, cases[i].groups);
	}
	alarm(0);
}

static void test_state_names(void **state)
{
	enum pk_coverage_state s;

	for (int i = PK_COVERAGE_BOOTED; i <= PK_COVERAGE_NOT_BUILT; i++) {
		assert_true(pk_coverage_state_parse(pk_coverage_state_name(i), &s));
		assert_int_equal(s, i);
	}
	assert_false(pk_coverage_state_parse("compiled", &s));
}

/*
 * A build dir of cache/build/ used at mtime, derived (its lines in its
 * state dir, state.h) or not.  A non-derived one holds the file the
 * lines were kept in before state dirs: planted in the build dir, which
 * the sandbox writes, it must not make the dir look derived.
 */
static void put_build_dir(const char *cache, const char *name, bool derived, time_t mtime)
{
	g_autofree char *dir = g_build_filename(cache, "build", name, NULL);
	g_autofree char *state = g_strconcat(dir, ".state", NULL);
	struct utimbuf t = { mtime, mtime };

	put(dir, ".config", "CONFIG_X=y\n");
	if (derived)
		put(state, PK_STATE_DERIVED_FRAGMENT, "CONFIG_X=y\n");
	assert_int_equal(utime(dir, &t), 0);
}

static bool build_dir_exists(const char *cache, const char *name)
{
	g_autofree char *dir = g_build_filename(cache, "build", name, NULL);

	return g_file_test(dir, G_FILE_TEST_IS_DIR);
}

/* Derived build dirs beyond keep go, least recently used first; the lab's and the one in use stay. */
static void test_prune(void **state)
{
	struct fake *f = *state;
	struct pk_lab lab = { .cache = f->root, .config_hash = "aaaaaaaaaaaa", .lock_fd = -1 };
	struct pk_lab in_use = { .cache = f->root, .config_hash = "bbbbbbbbbbbb", .lock_fd = -1 };
	g_autoptr(GError) err = NULL;

	put_build_dir(f->root, "aaaaaaaaaaaa-6.12", false, 1000);   /* the lab's, oldest of all */
	put_build_dir(f->root, "aaaaaaaaaaaa-6.1", false, 1001);
	put_build_dir(f->root, "bbbbbbbbbbbb-6.12", true, 1002);    /* in use, though old */
	put_build_dir(f->root, "cccccccccccc-6.12", true, 2000);
	put_build_dir(f->root, "dddddddddddd-6.12", true, 3000);
	put_build_dir(f->root, "eeeeeeeeeeee-6.12", true, 4000);
	put_build_dir(f->root, "ffffffffffff-6.1", true, 5000);
	/* the marks of having built only published commits (build.c), beside two of them */
	for (const char *const *m = (const char *const[]){ "dddddddddddd-6.12", "ffffffffffff-6.1", NULL }; *m; m++) {
		g_autofree char *mark = g_strdup_printf("%s/build/%s.published-only", f->root, *m);

		assert_true(g_file_set_contents(mark, "", 0, NULL));
	}
	assert_int_equal(pk_derive_prune(&lab, &in_use, 2, &err), 0);
	assert_true(build_dir_exists(f->root, "aaaaaaaaaaaa-6.12"));
	assert_true(build_dir_exists(f->root, "aaaaaaaaaaaa-6.1"));
	assert_true(build_dir_exists(f->root, "bbbbbbbbbbbb-6.12"));
	assert_true(build_dir_exists(f->root, "ffffffffffff-6.1"));
	assert_true(build_dir_exists(f->root, "eeeeeeeeeeee-6.12"));
	assert_false(build_dir_exists(f->root, "dddddddddddd-6.12"));
	assert_false(build_dir_exists(f->root, "cccccccccccc-6.12"));
	/* a removed dir's state goes with it; a kept one's stays */
	assert_false(build_dir_exists(f->root, "dddddddddddd-6.12.state"));
	assert_true(build_dir_exists(f->root, "eeeeeeeeeeee-6.12.state"));
	{
		/* a removed dir's mark goes with it: a new dir of that name must earn its own */
		g_autofree char *gone = g_strdup_printf("%s/build/dddddddddddd-6.12.published-only", f->root);
		g_autofree char *kept = g_strdup_printf("%s/build/ffffffffffff-6.1.published-only", f->root);

		assert_false(g_file_test(gone, G_FILE_TEST_EXISTS));
		assert_true(g_file_test(kept, G_FILE_TEST_EXISTS));
	}
	/* nothing in use: the old one goes too when keep allows one */
	assert_int_equal(pk_derive_prune(&lab, NULL, 1, &err), 0);
	assert_true(build_dir_exists(f->root, "ffffffffffff-6.1"));
	assert_false(build_dir_exists(f->root, "eeeeeeeeeeee-6.12"));
	assert_false(build_dir_exists(f->root, "bbbbbbbbbbbb-6.12"));
	assert_true(build_dir_exists(f->root, "aaaaaaaaaaaa-6.12"));
}

/*
 * A new derived config starts from the nearest build dir of its series:
 * the one whose lines differ least (NET, Bluetooth and its UART driver
 * from one with NET and Bluetooth), the lab's when none is nearer, never
 * one without a built kernel or of another series.
 */
static void test_nearest_build_dir(void **state)
{
	struct fake *f = *state;
	struct pk_lab lab = { .cache = f->root, .tree = f->tree, .lock_fd = -1 };
	g_autofree char *stem = g_build_filename(f->root, "build", "aaaaaaaaaaaa", NULL);
	g_autofree char *got = NULL;
	const struct { const char *name, *lines; bool built; } dirs[] = {
		{ "aaaaaaaaaaaa-6.12", NULL, true },                                    /* the lab's */
		{ "bbbbbbbbbbbb-6.12", "CONFIG_NET=y\nCONFIG_BT=y\n", true },
		{ "cccccccccccc-6.12", "CONFIG_NET=y\nCONFIG_BT=y\nCONFIG_BT_HCIUART=y\n", false }, /* not built */
		{ "dddddddddddd-6.1", "CONFIG_NET=y\nCONFIG_BT=y\nCONFIG_BT_HCIUART=y\n", true },  /* another series */
	};

	lab.build_stem = stem;
	put(f->tree, "Makefile", "VERSION = 6\nPATCHLEVEL = 12\n");
	for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
		g_autofree char *dir = g_build_filename(f->root, "build", dirs[i].name, NULL);
		g_autofree char *state = g_strconcat(dir, ".state", NULL);

		put(dir, ".config", "CONFIG_X=y\n");
		if (dirs[i].built)
			put(dir, "vmlinux", "ELF");
		if (dirs[i].lines)
			put(state, PK_STATE_DERIVED_FRAGMENT, dirs[i].lines);
	}
	got = pk_derive_nearest_build_dir(&lab, "CONFIG_NET=y\nCONFIG_BT=y\nCONFIG_BT_HCIUART=y\n");
	assert_true(g_str_has_suffix(got, "/bbbbbbbbbbbb-6.12"));
	g_free(got);
	got = pk_derive_nearest_build_dir(&lab, "CONFIG_USB=y\nCONFIG_USB_XHCI_HCD=y\n");
	assert_true(g_str_has_suffix(got, "/aaaaaaaaaaaa-6.12"));
}

/*
 * Another architecture is not tried for what the lab's could not build
 * when every group the solver could not set needs a symbol that only
 * other architectures define (kconfig-enable.py's "# only-on:" lines);
 * one group free of that, or an architecture among those, and it is.
 */
static void test_beyond_arch(void **state)
{
	struct pk_derived d = { .cannot = g_ptr_array_new_with_free_func(g_free) };
	g_autofree char *why = NULL;

	(void)state;
	/* nothing the solver could not set: nothing to say */
	assert_false(pk_derived_beyond_arch(&d, "arm64", NULL));
	g_ptr_array_add(d.cannot, g_strdup("CONFIG_HVCS: CONFIG_HVCS depends on PPC_PSERIES && HVC_CONSOLE && TTY"));
	/* a group without an only-on line may be settable elsewhere */
	assert_false(pk_derived_beyond_arch(&d, "arm64", NULL));
	d.only_on = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(d.only_on, g_strdup("HVCS: PPC_PSERIES: powerpc"));
	assert_true(pk_derived_beyond_arch(&d, "arm64", &why));
	assert_string_equal(why, "CONFIG_HVCS needs PPC_PSERIES, which only arch/powerpc/ defines");
	assert_false(pk_derived_beyond_arch(&d, "powerpc", NULL));
	/* two groups: each must be bound, and the reason names the first */
	g_ptr_array_add(d.cannot, g_strdup("CONFIG_SERIAL_8250_DW|SERIAL_DW: CONFIG_X depends on ARCH_A"));
	assert_false(pk_derived_beyond_arch(&d, "arm64", NULL));
	g_ptr_array_add(d.only_on, g_strdup("SERIAL_8250_DW|SERIAL_DW: ARCH_A ARCH_B: arm riscv"));
	g_clear_pointer(&why, g_free);
	assert_true(pk_derived_beyond_arch(&d, "x86", &why));
	assert_string_equal(why, "CONFIG_HVCS needs PPC_PSERIES, which only arch/powerpc/ defines");
	assert_false(pk_derived_beyond_arch(&d, "riscv", NULL));
	g_ptr_array_remove_index(d.cannot, 0);
	g_clear_pointer(&why, g_free);
	assert_true(pk_derived_beyond_arch(&d, "arm64", &why));
	assert_string_equal(why, "CONFIG_SERIAL_8250_DW|SERIAL_DW needs ARCH_A or ARCH_B, which only arch/arm/ and "
				 "arch/riscv/ define");
	pk_derived_clear(&d);
}

/*
 * A kernel that did not link: the symbols of the linker's and modpost's
 * errors, found by their EXPORT_SYMBOL lines, ask for the options that
 * build their files, unless the config has them on already.
 */
static void test_unlinked(void **state)
{
	const struct fake *f = *state;
	struct pk_lab lab = { .tree = f->tree, .lock_fd = -1 };
	g_autoptr(GHashTable) config = g_hash_table_new(g_str_hash, g_str_equal);
	struct pk_unlinked u = { 0 };
	g_autoptr(GError) err = NULL;
	const char *errors =
		"ld: vmlinux.o: in function `nxp_recv':\n"
		"btnxpuart.c:(.text+0x881): undefined reference to `crc8'\n"
		"btnxpuart.c:(.text+0x1344): undefined reference to `crc8_populate_msb'\n"
		"btnxpuart.c:(.text+0x1400): undefined reference to `crc8'\n"
		"ERROR: modpost: \"lz_thing\" [drivers/foo/foo.ko] undefined!\n"
		"btnxpuart.c:(.text+0x1500): undefined reference to `on_already'\n"
		"btnxpuart.c:(.text+0x1600): undefined reference to `nowhere_at_all'\n";

	put(f->tree, "lib/Makefile", "obj-$(CONFIG_CRC8) += crc8.o\nobj-$(CONFIG_LZ) += lz.o\nobj-$(CONFIG_ON) += on.o\n");
	put(f->tree, "lib/crc8.c", "void crc8_populate_msb(void) {}\nEXPORT_SYMBOL(crc8_populate_msb);\n"
				   "int crc8(void) { return 0; }\nEXPORT_SYMBOL(crc8);\n"
				   "/* EXPORT_SYMBOL(nowhere_at_all) in a comment is not an export */\n");
	put(f->tree, "lib/lz.c", "EXPORT_SYMBOL_GPL(lz_thing);\n");
	put(f->tree, "lib/on.c", "EXPORT_SYMBOL(on_already);\n");
	/* another architecture's copy asks for nothing */
	put(f->tree, "arch/arm/lib/Makefile", "obj-$(CONFIG_ARM_CRC) += crc8.o\n");
	put(f->tree, "arch/arm/lib/crc8.c", "EXPORT_SYMBOL(crc8);\n");
	/* a header's macro is no definition */
	put(f->tree, "include/linux/crc8.h", "EXPORT_SYMBOL(crc8)\n");
	g_hash_table_insert(config, "ON", "y");

	assert_int_equal(pk_derive_unlinked(&u, &lab, config, errors, &err), 0);
	assert_int_equal(u.want->len, 2);
	assert_true(g_ptr_array_find_with_equal_func(u.want, "CRC8", g_str_equal, NULL));
	assert_true(g_ptr_array_find_with_equal_func(u.want, "LZ", g_str_equal, NULL));
	assert_int_equal(u.why->len, 2);
	{
		/* in grep's order of files, which is the directory's */
		const char *a = u.why->pdata[0], *b = u.why->pdata[1];
		const char *crc = strstr(a, "CRC8") ? a : b, *lz = strstr(a, "CRC8") ? b : a;

		assert_string_equal(crc, "CONFIG_CRC8 (lib/crc8.c: crc8_populate_msb, crc8)");
		assert_string_equal(lz, "CONFIG_LZ (lib/lz.c: lz_thing)");
	}
	pk_unlinked_clear(&u);

	/* no link error: nothing asked, nothing searched */
	assert_int_equal(pk_derive_unlinked(&u, &lab, config, "foo.c:1:2: error: expected ';'\n", &err), 0);
	assert_int_equal(u.want->len, 0);
	pk_unlinked_clear(&u);
	/* what is on already asks for nothing */
	assert_int_equal(pk_derive_unlinked(&u, &lab, config, "undefined reference to `on_already'", &err), 0);
	assert_int_equal(u.want->len, 0);
	pk_unlinked_clear(&u);
}

/* The build dir follows the tree's kernel series; without a tree, the stem alone. */
static void test_build_dir_series(void **state)
{
	struct fake *f = *state;
	struct pk_lab lab = { .tree = f->tree, .build_stem = "/c/build/aaaaaaaaaaaa", .lock_fd = -1 };
	struct pk_lab none = { .tree = "/nonexistent", .build_stem = "/c/build/aaaaaaaaaaaa", .lock_fd = -1 };
	g_autofree char *dir = NULL, *bare = NULL;

	put(f->tree, "Makefile", "# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\n");
	dir = pk_lab_build_dir(&lab);
	assert_string_equal(dir, "/c/build/aaaaaaaaaaaa-6.1");
	bare = pk_lab_build_dir(&none);
	assert_string_equal(bare, "/c/build/aaaaaaaaaaaa");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_archive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kbuild_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_devices_table, setup, teardown),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_sources_built),
		cmocka_unit_test_setup_teardown(test_prune, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nearest_build_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlinked, setup, teardown),
		cmocka_unit_test(test_beyond_arch),
		cmocka_unit_test_setup_teardown(test_build_dir_series, setup, teardown),
		cmocka_unit_test(test_state_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
