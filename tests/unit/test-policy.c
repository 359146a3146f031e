/* test-policy.c - which patches the bot agrees to apply and build. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "base/proc.h"
#include "lab/layer.h"
#include "lab/policy.h"

struct policy_case {
	const char *name;
	const char *diff;
	bool allow_build_system;
	bool allowed;
	const char *reason_has;   /* a fragment the refusal must name */
};

#define HUNK "@@ -1,1 +1,1 @@\n-a\n+b\n"
#define FILE_DIFF(path) "diff --git a/" path " b/" path "\n--- a/" path "\n+++ b/" path "\n" HUNK

static const struct policy_case cases[] = {
	{ "a C file", FILE_DIFF("kernel/sched/core.c"), false, true, NULL },
	{ "a header", FILE_DIFF("include/linux/printk.h"), false, true, NULL },
	{ "a Makefile", FILE_DIFF("kernel/Makefile"), false, false, "kernel/Makefile: the patch changes the build system" },
	{ "a Makefile, allowed", FILE_DIFF("kernel/Makefile"), true, true, NULL },
	{ "Kconfig", FILE_DIFF("init/Kconfig"), false, false, "build system" },
	{ "Kbuild", FILE_DIFF("arch/x86/Kbuild"), false, false, "build system" },
	{ "scripts/", FILE_DIFF("scripts/kallsyms.c"), false, false, "scripts/kallsyms.c" },
	{ "tools/", FILE_DIFF("tools/objtool/check.c"), false, false, "tools/objtool/check.c" },
	/* what the build neither reads nor runs is applied and listed as not built */
	{ "documentation", FILE_DIFF("Documentation/admin-guide/kernel-parameters.txt"), false, true, NULL },
	{ "MAINTAINERS", FILE_DIFF("MAINTAINERS"), false, true, NULL },
	{ "a C file and its documentation",
	  FILE_DIFF("kernel/printk/printk.c") FILE_DIFF("Documentation/core-api/printk-basics.rst"), false, true, NULL },
	/* but Documentation/Kconfig is sourced by the top Kconfig, and Makefiles run anywhere */
	{ "Documentation/Kconfig", FILE_DIFF("Documentation/Kconfig"), false, false, "build system" },
	{ "a Documentation Makefile", FILE_DIFF("Documentation/Makefile"), false, false, "build system" },
	/* files the build may read: refused without a layer (here: sandbox = off) */
	{ "assembly", FILE_DIFF("arch/x86/kernel/head_64.S"), true, false, "built only in a throwaway layer" },
	{ "a syscall table", FILE_DIFF("arch/x86/entry/syscalls/syscall_64.tbl"), true, false,
	  "syscall_64.tbl: the build may read" },
	{ "a README below the top", FILE_DIFF("drivers/net/README"), true, false, "built only in a throwaway layer" },
	{ "a C file and a linker script", FILE_DIFF("kernel/fork.c") FILE_DIFF("arch/x86/kernel/vmlinux.lds.S"),
	  false, false, "vmlinux.lds.S" },
	{ "a .. path", FILE_DIFF("kernel/../../etc/passwd.c"), true, false, "leaves the kernel tree" },
	{ "a .git path", FILE_DIFF(".git/hooks/post-checkout"), true, false, "leaves the kernel tree" },
	{ "a .GIT path below", FILE_DIFF("drivers/.GIT/config"), true, false, "leaves the kernel tree" },
	{ "an absolute path", "--- /etc/x.c\n+++ /etc/x.c\n" HUNK, true, false, "leaves the kernel tree" },
	{ "a binary diff", "diff --git a/fw.c b/fw.c\nindex 1..2 100644\nGIT binary patch\nliteral 3\nabc\n",
	  true, false, "binary" },
	{ "a symlink", "diff --git a/l.h b/l.h\nnew file mode 120000\n--- /dev/null\n+++ b/l.h\n@@ -0,0 +1 @@\n+/etc/shadow\n",
	  true, false, "symbolic link" },
	/* what libgit2 reads otherwise than the parser (fuzz-policy-apply found them) */
	{ "a rename beside a change", "diff --git a/f.c b/scripts/evil\nsimilarity index 100%\nrename from f.c\n"
	  "rename to scripts/evil\n" FILE_DIFF("other.c"), false, false, "git reads a rename" },
	{ "a copy beside a change", "diff --git a/o.c b/scripts/evil\nsimilarity index 100%\ncopy from o.c\n"
	  "copy to scripts/evil\n" FILE_DIFF("f.c"), false, false, "git reads a copy" },
	{ "a symlink mode with a leading 0", "diff --git a/l.c b/l.c\nnew file mode 0120000\n--- /dev/null\n"
	  "+++ b/l.c\n@@ -0,0 +1 @@\n+/etc/shadow\n", true, false, "symbolic link" },
};

static void test_policy_table(void **state)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct policy_case *c = &cases[i];
		struct pk_policy policy = PK_POLICY_DEFAULT;
		g_autoptr(pk_patch) patch = pk_patch_parse_diff(c->diff, strlen(c->diff));
		g_autofree char *reason = NULL;
		bool allowed;

		policy.allow_build_system = c->allow_build_system;
		policy.sandbox = PK_SANDBOX_OFF;   /* the path rules alone */
		allowed = pk_policy_allows(&policy, patch, &reason);
		print_message("%s: %s\n", c->name, allowed ? "allowed" : reason);
		assert_int_equal(allowed, c->allowed);
		if (c->reason_has)
			assert_non_null(strstr(reason, c->reason_has));
	}
}

/*
 * With the sandbox on and a throwaway layer to build in (root, overlayfs,
 * bubblewrap: CI's machine), what real series carry is built: Kconfig,
 * Makefiles, scripts/, assembly, a linker script; what no layer makes safe
 * stays refused.  Elsewhere the same patches are refused, naming why.
 */
static void test_layered_policy(void **state)
{
	static const struct { const char *name, *diff; bool allowed; const char *reason_has; } layered[] = {
		{ "a Makefile and Kconfig", FILE_DIFF("drivers/tty/serial/8250/Makefile")
		  FILE_DIFF("drivers/tty/serial/8250/Kconfig"), true, NULL },
		{ "scripts/", FILE_DIFF("scripts/basic/fixdep.c"), true, NULL },
		{ "assembly and a linker script", FILE_DIFF("arch/x86/kernel/head_64.S")
		  FILE_DIFF("arch/x86/kernel/vmlinux.lds.S"), true, NULL },
		{ "a .git path", FILE_DIFF(".git/hooks/post-checkout"), false, "leaves the kernel tree" },
		{ "a symlink", "diff --git a/l.h b/l.h\nnew file mode 120000\n--- /dev/null\n+++ b/l.h\n"
		  "@@ -0,0 +1 @@\n+/etc/shadow\n", false, "symbolic link" },
	};
	g_autofree char *cache = g_dir_make_tmp("test-policy-XXXXXX", NULL);
	g_autofree char *no_layer = NULL, *no_sandbox = NULL;
	bool can = pk_sandbox_usable(&no_sandbox) && pk_layer_usable(cache, &no_layer);

	print_message("layers %s\n", can ? "usable" : no_layer ? no_layer : no_sandbox);
	for (size_t i = 0; i < G_N_ELEMENTS(layered); i++) {
		struct pk_policy policy = PK_POLICY_DEFAULT;   /* sandbox on, nothing allowed beyond it */
		g_autoptr(pk_patch) patch = pk_patch_parse_diff(layered[i].diff, strlen(layered[i].diff));
		g_autofree char *reason = NULL;
		bool allowed = pk_policy_allows(&policy, patch, &reason);

		print_message("%s: %s\n", layered[i].name, allowed ? "allowed" : reason);
		assert_int_equal(allowed, layered[i].allowed && can);
		if (!allowed && layered[i].reason_has && can)
			assert_non_null(strstr(reason, layered[i].reason_has));
	}
	pk_remove_tree(cache, NULL);
}

/* The kind of a path, which coverage.h also goes by. */
static void test_path_kind(void **state)
{
	assert_int_equal(pk_path_kind("kernel/printk/printk.c"), PK_PATH_C);
	assert_int_equal(pk_path_kind("include/linux/printk.h"), PK_PATH_C);
	assert_int_equal(pk_path_kind("scripts/kallsyms.c"), PK_PATH_BUILD_SYSTEM);
	assert_int_equal(pk_path_kind("drivers/ata/Kconfig"), PK_PATH_BUILD_SYSTEM);
	assert_int_equal(pk_path_kind("Documentation/admin-guide/kernel-parameters.txt"), PK_PATH_INERT);
	assert_int_equal(pk_path_kind("MAINTAINERS"), PK_PATH_INERT);
	assert_int_equal(pk_path_kind("drivers/MAINTAINERS"), PK_PATH_OTHER);
	assert_int_equal(pk_path_kind("arch/x86/boot/header.S"), PK_PATH_OTHER);
}

/* A path no file system holds is refused, not applied to fail halfway: over PATH_MAX, a component over NAME_MAX. */
static void test_long_paths(void **state)
{
	g_autofree char *component = g_strnfill(300, 'c');
	g_autofree char *wide = g_strdup_printf("drivers/%s.c", component);
	g_autoptr(GString) deep = g_string_new("drivers");
	struct pk_policy policy = PK_POLICY_DEFAULT;

	policy.sandbox = PK_SANDBOX_OFF;
	while (deep->len < 5000)
		g_string_append(deep, "/dddddddddddddddddddddddddddddddddddddddddddddddddd");
	g_string_append(deep, "/x.c");
	for (const char *const *path = (const char *const[]){ wide, deep->str, NULL }; *path; path++) {
		g_autofree char *diff = g_strdup_printf("--- a/%s\n+++ b/%s\n" HUNK, *path, *path);
		g_autoptr(pk_patch) patch = pk_patch_parse_diff(diff, strlen(diff));
		g_autofree char *reason = NULL;

		assert_false(pk_policy_allows(&policy, patch, &reason));
		print_message("%s\n", reason);
		assert_non_null(strstr(reason, "longer than a file system holds"));
	}
}

static void test_limits(void **state)
{
	struct pk_policy policy = PK_POLICY_DEFAULT;
	const char *two = FILE_DIFF("a.c") FILE_DIFF("b.c");
	g_autoptr(pk_patch) patch = pk_patch_parse_diff(two, strlen(two));
	g_autofree char *reason = NULL;

	policy.sandbox = PK_SANDBOX_OFF;
	policy.max_files = 1;
	assert_false(pk_policy_allows(&policy, patch, &reason));
	assert_non_null(strstr(reason, "2 files"));
	g_clear_pointer(&reason, g_free);
	policy.max_files = 0;
	policy.max_lines = 3;
	assert_false(pk_policy_allows(&policy, patch, &reason));
	assert_non_null(strstr(reason, "4 lines"));
}

/*
 * With the sandbox on and bubblewrap missing (an empty PATH), every patch
 * is refused, naming the sandbox; sandbox = off lets the same patch by.
 */
static void test_sandbox_missing(void **state)
{
	const char *diff = FILE_DIFF("kernel/printk/printk.c");
	g_autoptr(pk_patch) patch = pk_patch_parse_diff(diff, strlen(diff));
	g_autofree char *path = g_strdup(g_getenv("PATH"));
	struct pk_policy policy = PK_POLICY_DEFAULT;
	g_autofree char *reason = NULL, *reason_off = NULL;
	bool on, off;

	g_setenv("PATH", "/nonexistent", TRUE);
	on = pk_policy_allows(&policy, patch, &reason);
	policy.sandbox = PK_SANDBOX_OFF;
	off = pk_policy_allows(&policy, patch, &reason_off);
	g_setenv("PATH", path, TRUE);
	assert_false(on);
	print_message("%s\n", reason);
	assert_non_null(strstr(reason, "sandbox"));
	assert_non_null(strstr(reason, "bubblewrap"));
	assert_non_null(strstr(reason, "sandbox = off"));
	assert_true(off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_table),
		cmocka_unit_test(test_path_kind),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_long_paths),
		cmocka_unit_test(test_sandbox_missing),
		cmocka_unit_test(test_layered_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
