/* commands.c - the command table, help topics and dispatch; see commands.h (the set-up: context.c). */
#include "cmd/commands.h"
#include "base/util.h"
#include "lab/sandbox.h"
#include "analysis/kdiff.h"
#include "analysis/scan.h"
#include "base/verdict.h"

#include <stdio.h>
#include <string.h>

#define NEEDS_ALL (PK_NEEDS_CONFIG | PK_NEEDS_LAB | PK_NEEDS_STORE)
/* the commands that only read the store open it read-only */
#define NEEDS_READ (PK_NEEDS_STORE | PK_NEEDS_STORE_READONLY)

const struct pk_command pk_commands[] = {
	/* setup prepares the lab, so it cannot need a set-up one: it opens and locks its own ([test] arch's) */
	{ "setup",   PK_NEEDS_CONFIG,                  &cmd_setup_spec,
	  "prepare the kernel tree, config and initramfs (cached, idempotent)" },
	/* boot builds: the sandbox and [build] of the configuration apply to it too */
	{ "boot",    PK_NEEDS_LAB | PK_NEEDS_CONFIG,   &cmd_boot_spec,
	  "build a kernel revision, boot it in QEMU, print its records" },
	{ "scan",    0,                                &cmd_scan_spec,
	  "static logging-churn findings of patches (no build)" },
	/* check sets up what --test needs itself: without it, it touches no lab */
	{ "check",   0,                                &cmd_check_spec,
	  "b4's per-patch check: a patch mail's findings as b4 shows them" },
	{ "test",    NEEDS_ALL,                        &cmd_test_spec,
	  "apply, build and boot before/after, diff what the kernel prints, review" },
	{ "history", NEEDS_READ,                       &cmd_history_spec,
	  "stored changes to kernel messages: by file, text, author, date..." },
	{ "report",  NEEDS_READ,                       &cmd_report_spec,
	  "render a stored review again; every review as a static web site" },
	/* db checks the file read-only: opening it would migrate it */
	{ "db",      PK_NEEDS_STORE_PATH,              &cmd_db_spec,
	  "check the database (integrity, schema version)" },
	{ "run",     NEEDS_ALL,                        &cmd_run_spec,
	  "test each commit of a branch against its parent, then a summary" },
	{ "bisect",  NEEDS_ALL,                        &cmd_bisect_spec,
	  "the first commit of a branch that changed each message" },
	{ "index-diff", NEEDS_ALL,                     &cmd_index_diff_spec,
	  "what changed in the printk index between two kernels; broken log patterns" },
	/* the daemon loads its config itself: it loads it again on SIGHUP */
	{ "daemon",  0,                                &cmd_daemon_spec,
	  "read patch mail, test each series, reply in the thread" },
	{ "worker",  0,                                &cmd_worker_spec,
	  "run the daemon's queued jobs, beside other workers on one store" },
	{ "queue",   PK_NEEDS_CONFIG | NEEDS_READ,     &cmd_queue_spec,
	  "the daemon's jobs: waiting, running, done, failed" },
	{ NULL },
};

const struct pk_command *pk_command_find(const char *name)
{
	for (const struct pk_command *c = pk_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int pk_command_main(const struct pk_command *cmd, int argc, char **argv)
{
	return pk_command_run(cmd, argc, argv, pk_command_setup, pk_cmd_ctx_clear);
}

void pk_help_findings(FILE *to)
{
	fprintf(to, "The kinds of finding of scan (and of a review's static findings), by their\n"
		    "stable names (the JSON, the store, history --kind).  Those marked * change\n"
		    "nothing on the console by themselves (advice, or a rewrite printing the same).\n\n");
	for (unsigned k = 0; k < pk_finding_kinds(); k++) {
		g_autofree char *meaning = g_strconcat(pk_finding_is_silent(k) ? "* " : "", pk_finding_kind_meaning(k),
						       NULL);
		g_autofree char *wrapped = pk_wrap(meaning, 50, "");
		g_auto(GStrv) lines = g_strsplit(wrapped, "\n", -1);
		g_autofree char *indented = g_strjoinv("\n                             ", lines);

		fprintf(to, "  %-26s %s\n", pk_finding_kind_name(k), indented);
	}
	fprintf(to, "\nWhat a boot-log or printk index change is called (test's dynamic kinds):\n\n");
	for (unsigned k = 0; *pk_change_kind_name(k); k++)
		fprintf(to, "  %s\n", pk_change_kind_name(k));
}

void pk_help_verdicts(FILE *to)
{
	fprintf(to, "The verdicts of test, run and the daemon, by their stable names:\n\n");
	for (unsigned v = PK_VERDICT_NONE + 1; v < pk_verdicts(); v++) {
		g_autofree char *wrapped = pk_wrap(pk_verdict_meaning(v), 58, "");
		g_auto(GStrv) lines = g_strsplit(wrapped, "\n", -1);
		g_autofree char *indented = g_strjoinv("\n                     ", lines);

		fprintf(to, "  %-18s %s\n", pk_verdict_name(v), indented);
	}
}

/* `printkbot help TOPIC` for what is no command: the words the bot's output uses. */
static const struct {
	const char *name;
	void (*print)(FILE *to);
} help_topics[] = {
	{ "findings", pk_help_findings },
	{ "verdicts", pk_help_verdicts },
};

int pk_command_dispatch(int argc, char **argv)
{
	const char *name = strcmp(argv[0], "help") ? argv[0] : argc > 1 ? argv[1] : NULL;
	const struct pk_command *cmd = name ? pk_command_find(name) : NULL;

	for (size_t i = 0; !cmd && name && name != argv[0] && i < G_N_ELEMENTS(help_topics); i++)
		if (!strcmp(name, help_topics[i].name)) {
			help_topics[i].print(stdout);
			return 0;
		}
	if (!cmd) {
		fprintf(stderr, "printkbot: '%s' is not a printkbot command; see 'printkbot --help'\n",
			name ? name : "");
		return 2;
	}
	if (name != argv[0]) {
		/* `printkbot help CMD` is `printkbot CMD --help`, by the same path */
		char *help_argv[] = { (char *)name, (char *)"--help", NULL };

		if (argc > 2) {
			fprintf(stderr, "printkbot help: unexpected argument '%s'\n", argv[2]);
			return 2;
		}
		return pk_command_main(cmd, 2, help_argv);
	}
	return pk_command_main(cmd, argc, argv);
}
