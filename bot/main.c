/* main.c - printkbot's entry point: the global options, then a command of pk_commands[]. */
#include "cmd/commands.h"
#include "lab/layer.h"
#include "base/profile.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PK_VERSION
#define PK_VERSION "unknown"
#endif

static void usage(FILE *to)
{
	fprintf(to, "usage: printkbot [--version] [--help] <command> [<args>]\n\n"
		    "printkbot reviews Linux kernel patches that change logging calls: it\n"
		    "builds and boots the kernel before and after, and says what changed in\n"
		    "what the kernel prints.\n\ncommands:\n");
	for (const struct pk_command *c = pk_commands; c->name; c++)
		fprintf(to, "   %-8s %s\n", c->name, c->summary);
	fprintf(to, "\n'printkbot <command> --help' (or 'printkbot help <command>') tells more\n"
		    "about a command; 'printkbot help findings' and 'printkbot help verdicts'\n"
		    "what the words of a review mean.\n"
		    "environment: PRINTKBOT_CACHE (default ~/.cache/printkbot) holds the\n"
		    "kernel tree, builds and results.  PRINTKBOT_DATADIR (default the\n"
		    "checkout the binary lies in, else the installed share/printkbot) holds\n"
		    "qemu/ and templates/.\n");
}

int main(int argc, char **argv)
{
	/* GOptionContext would name the program after the command's argv[0] */
	g_set_prgname("printkbot");
	/*
	 * What the bot makes for the sandbox user to read (the build dir's state,
	 * a derived config's lines, the guest's initramfs) must be readable
	 * whatever umask the bot was started with (a 077 left it all root's).
	 */
	umask(022);
	/* before any thread: the whole process, not one thread, in the namespace of its layers (not root: none) */
	pk_layer_namespace(NULL);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    (!strcmp(argv[1], "help") && argc == 2)) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("printkbot %s\n", PK_VERSION);
		return 0;
	}
	{
		int status;
		PK_PROFILE_SCOPE("total");

		status = pk_command_dispatch(argc - 1, argv + 1);
		pk_profile_end(&pk_profile_span_);
		pk_profile_write();   /* bench/'s stage times (PRINTKBOT_PROFILE) */
		return status;
	}
}
