/*
 * front.c - the `printkbot` a user runs: `scan` here, in a small process,
 * and every other command (and --help, --version) in printkbot-core, which
 * this one executes in its place with the same arguments.
 *
 * Why two programs: scan runs once per patch from scripts, CI and the
 * bench, and most of a one-patch scan is the dynamic loader's: the whole
 * bot links some 55 shared libraries (libgit2, curl and their TLS stacks,
 * SQLite, template-glib).  This one links only what scan uses, GLib and
 * GMime, shared as the system ships them, and loads 19; a one-patch scan
 * takes about a third of the CPU it takes in printkbot-core (the
 * Makefile says what was measured).
 */
#include "cmd/commands.h"
#include "cmd/cmd-check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_LIBEXECDIR
#define PK_LIBEXECDIR "/usr/local/libexec/printkbot"
#endif

/*
 * printkbot-core beside this program (a checkout), else where make install
 * puts it relative to this one (bin/ and libexec/printkbot/ of a prefix,
 * wherever DESTDIR moved it), else at the compiled-in PK_LIBEXECDIR.
 */
static char *core_path(void)
{
	g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
	g_autofree char *dir = exe ? g_path_get_dirname(exe) : NULL;
	const char *const tries[] = { "printkbot-core", "../libexec/printkbot/printkbot-core" };

	for (size_t i = 0; dir && i < G_N_ELEMENTS(tries); i++) {
		char *path = g_build_filename(dir, tries[i], NULL);
		if (g_file_test(path, G_FILE_TEST_IS_EXECUTABLE))
			return path;
		g_free(path);
	}
	return g_build_filename(PK_LIBEXECDIR, "printkbot-core", NULL);
}

/* Whether a check command line asks for --test, which printkbot-core runs. */
static bool check_wants_test(int argc, char **argv)
{
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--test") || g_str_has_prefix(argv[i], "--test="))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static const struct pk_command scan = { "scan", 0, &cmd_scan_spec, NULL };
	/* b4 runs it once a patch: the static check is as cheap as scan */
	static const struct pk_command check = { "check", 0, &cmd_check_front_spec, NULL };
	g_autofree char *core = NULL;

	/* GOptionContext would name the program after the command's argv[0] */
	g_set_prgname("printkbot");
	if (argc >= 2 && !strcmp(argv[1], "scan"))
		return pk_command_run(&scan, argc - 1, argv + 1, NULL, NULL);
	if (argc >= 2 && !strcmp(argv[1], "check") && !check_wants_test(argc, argv))
		return pk_command_run(&check, argc - 1, argv + 1, NULL, NULL);
	core = core_path();
	execv(core, argv);
	fprintf(stderr, "printkbot: cannot run %s: %s\n", core, g_strerror(errno));
	return 2;
}
