/*
 * bench/sandbox.c - what the sandbox costs, side by side in one run:
 * pk_build_kernel() after a one-file printk change (init/main.c, a new
 * text each time, so each build compiles one file and links vmlinux) and
 * pk_boot_kernel() of the result, then a no-op rebuild (make finds
 * nothing to do: what is left is make's walk of the tree and the
 * sandbox's own start-up), each with the sandbox off and on,
 * alternating (off, on, on, off, ...) so that a machine that gets busier
 * or quieter during the run weighs on both alike.  The sandboxed figures
 * include handing the build dir to the sandbox user (pk_sandbox_own()).
 *
 * usage: bench/sandbox [ROUNDS]   (default 3; needs `printkbot setup`
 * and a built kernel in the lab: `printkbot boot` once)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/boot.h"
#include "lab/build.h"
#include "lab/lab.h"
#include "lab/sandbox.h"
#include "base/util.h"

#define MARK "\"Kernel command line: %s\\n\""

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Give init/main.c's command-line message a text of its own for build number i. */
static int change_file(const char *path, const char *orig, unsigned i, GError **err)
{
	g_autofree char *text = g_strdup_printf("\"Kernel command line (bench %u): %%s\\n\"", i);
	g_autoptr(GString) s = g_string_new(orig);

	if (!g_string_replace(s, MARK, text, 1))
		return pk_error(err, PK_ERROR_FAILED, "%s: the message to change is not there", path);
	return pk_write_file(path, s->str, s->len, err);
}

static void set_mode(enum pk_sandbox_mode mode)
{
	struct pk_sandbox_config c = *pk_sandbox_settings();

	c.mode = mode;
	pk_sandbox_configure(&c);
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 3, n[2] = { 0 }, builds = 0;
	double build_s[2][64], boot_s[2][64], noop_s[2][64];
	g_autoptr(GError) err = NULL;
	g_autofree char *main_c = NULL, *orig = NULL;
	struct pk_lab lab = { 0 };
	int rc = 1;

	if (rounds < 1 || rounds > 32)
		rounds = 3;
	/*
	 * The sandbox's PATH for the bare builds too: Kconfig probes the tools
	 * it finds (a rustc in ~/.cargo/bin sets RUSTC_VERSION), so builds
	 * under two PATHs rewrite autoconf.h and recompile half the tree at
	 * each switch, which is not the sandbox's cost.
	 */
	g_setenv("PATH", "/usr/local/bin:/usr/bin:/bin", TRUE);
	if (pk_lab_open(&lab, &err) < 0 || pk_lab_lock(&lab, &err) < 0)
		goto out;
	if (!pk_sandbox_usable(NULL)) {
		fprintf(stderr, "bench/sandbox: the sandbox cannot run here\n");
		goto out;
	}
	main_c = g_build_filename(lab.tree, "init", "main.c", NULL);
	if (pk_read_file(&orig, NULL, main_c, 0, &err) < 0)
		goto out;
	for (unsigned r = 0; r < 2 * rounds; r++) {
		/* off on on off off on ...: each mode as often first as second */
		int on = (r % 4 == 1 || r % 4 == 2);
		struct pk_build_result b = { 0 };
		struct pk_boot_result boot = { 0 };
		struct pk_boot_opts bo = PK_BOOT_OPTS_INIT;

		set_mode(on ? PK_SANDBOX_ON : PK_SANDBOX_OFF);
		if (change_file(main_c, orig, ++builds, &err) < 0 || pk_build_kernel(&b, &lab, &err) < 0)
			goto out;
		if (!b.ok) {
			fprintf(stderr, "bench/sandbox: the build failed:\n%s", b.errors);
			pk_build_result_clear(&b);
			goto out;
		}
		bo.vmlinux = b.vmlinux;
		if (pk_boot_kernel(&boot, &lab, &bo, &err) < 0) {
			pk_build_result_clear(&b);
			goto out;
		}
		build_s[on][n[on]] = b.seconds;
		boot_s[on][n[on]] = boot.seconds;
		pk_build_result_clear(&b);
		if (pk_build_kernel(&b, &lab, &err) < 0) {
			pk_boot_result_clear(&boot);
			goto out;
		}
		noop_s[on][n[on]++] = b.seconds;
		printf("%-9s build %6.2f s   boot %5.2f s (%s)   no-op build %5.2f s\n", on ? "sandboxed" : "bare",
		       build_s[on][n[on] - 1], boot.seconds, pk_boot_status_name(boot.status), b.seconds);
		fflush(stdout);
		pk_build_result_clear(&b);
		pk_boot_result_clear(&boot);
	}
	{
		double bo = median(build_s[0], n[0]), bs = median(build_s[1], n[1]);
		double qo = median(boot_s[0], n[0]), qs = median(boot_s[1], n[1]);
		double no = median(noop_s[0], n[0]), ns = median(noop_s[1], n[1]);

		printf("\n%-34s %9s %9s %9s\n", "median of each", "bare", "sandboxed", "overhead");
		printf("%-34s %8.2fs %8.2fs %+8.2fs (%+.1f%%)\n", "one-file rebuild (make vmlinux)", bo, bs,
		       bs - bo, 100 * (bs - bo) / bo);
		printf("%-34s %8.2fs %8.2fs %+8.2fs (%+.1f%%)\n", "no-op rebuild", no, ns, ns - no,
		       100 * (ns - no) / no);
		printf("%-34s %8.2fs %8.2fs %+8.2fs (%+.1f%%)\n", "one boot (qemu, tcg)", qo, qs, qs - qo,
		       100 * (qs - qo) / qo);
	}
	rc = 0;
out:
	if (err)
		fprintf(stderr, "bench/sandbox: %s\n", err->message);
	if (orig)
		pk_write_file(main_c, orig, strlen(orig), NULL);
	pk_lab_clear(&lab);
	return rc;
}
