/* main.c - printkbot's entry point: the subcommand table. */
#include "cmd/commands.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#ifndef PK_VERSION
#define PK_VERSION "unknown"
#endif

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "setup", cmd_setup, "prepare the kernel tree, config and initramfs (cached, idempotent)" },
	{ "boot",  cmd_boot,  "build a kernel revision, boot it in QEMU, print its records" },
	{ "scan",  cmd_scan,  "static logging-churn findings of patches (no build)" },
	{ "test",  cmd_test,  "apply, build and boot before/after, diff what the kernel prints, review" },
	{ "history", cmd_history, "stored changes to kernel messages: by file, text, author, date..." },
	{ "report", cmd_report, "render a stored review again" },
	{ "db",    cmd_db,    "check the database (integrity, schema version)" },
	{ "run",   cmd_run,   "test each commit of a branch against its parent, then a summary" },
	{ "bisect", cmd_bisect, "the first commit of a branch that changed each message" },
	{ "daemon", cmd_daemon, "read patch mail, test each series, reply in the thread" },
	{ "queue", cmd_queue, "the daemon's jobs: waiting, running, done, failed" },
};

static void usage(FILE *to)
{
	fprintf(to, "usage: printkbot [--version] [--help] <command> [<args>]\n\n"
		    "printkbot reviews Linux kernel patches that change logging calls: it\n"
		    "builds and boots the kernel before and after, and says what changed in\n"
		    "what the kernel prints.\n\ncommands:\n");
	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		fprintf(to, "   %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(to, "\n'printkbot <command> --help' tells more about a command.\n"
		    "environment: PRINTKBOT_CACHE (default ~/.cache/printkbot) holds the\n"
		    "kernel tree, builds and results.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("printkbot %s\n", PK_VERSION);
		return 0;
	}
	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "printkbot: '%s' is not a printkbot command; see 'printkbot --help'\n",
		argv[1]);
	return 2;
}
