/*
 * commands.h - the subcommands of printkbot, and what they are given.
 *
 * pk_commands[] is the table main dispatches on: each command's name, what
 * it needs set up before it runs (config, lab, store), its spec and a
 * one-line summary.  A spec (cmd-<name>.c) is the command's own contract:
 * its usage text (which is its documentation), its option table
 * (options.h), how many other arguments it takes, and the function that
 * runs it.
 *
 * pk_command_main() does for every command what they used to do each on
 * its own: parse the command line (a usage error exits 2, -h/--help prints
 * the usage), set up what the command needs into a struct pk_cmd_ctx, run
 * the command, and clear the context.  The command reads its options and
 * the set-up config, lab and store from the context, which keeps owning
 * them unless the command takes them (pk_cmd_ctx_take_*()).
 */
#ifndef PK_COMMANDS_H
#define PK_COMMANDS_H

#include <stdio.h>

#include "config/config.h"
#include "cmd/options.h"
#include "lab/lab.h"
#include "store/store.h"

/* What a command needs before it runs, set up in this order. */
enum pk_cmd_needs {
	/* pk_config_load(--config), then pk_sandbox_configure() with its settings */
	PK_NEEDS_CONFIG = 1 << 0,
	/* pk_lab_take(): the lab opened, checked to be set up, and locked */
	PK_NEEDS_LAB = 1 << 1,
	/* pk_store_open(--db, else the config's [store] path, else the default), not with --no-store */
	PK_NEEDS_STORE = 1 << 2,
	/*
	 * Without PK_NEEDS_CONFIG, the store's path alone: config.db is the
	 * --config file's [store] path (pk_config_store_path()) unless --db
	 * is given; implied by PK_NEEDS_STORE.  For `db`, which checks the
	 * file without opening it.
	 */
	PK_NEEDS_STORE_PATH = 1 << 3,
	/*
	 * With PK_NEEDS_STORE: opened read-only (PK_STORE_OPEN_READONLY), for
	 * the commands that only read, so another user's file or a read-only
	 * mount serves them; an older schema is refused, not migrated.
	 */
	PK_NEEDS_STORE_READONLY = 1 << 4,
};

/* What a command is given: its command line, and what it needs, set up. */
struct pk_cmd_ctx {
	const char *name;            /* the command's name, for messages */
	struct pk_cmdline cmdline;   /* cmdline.opts is the command's own options struct */
	struct pk_config config;     /* PK_NEEDS_CONFIG; else zero (but config.db, see above) */
	struct pk_lab lab;           /* PK_NEEDS_LAB; else cleared */
	struct pk_store *store;      /* PK_NEEDS_STORE; NULL without it or with --no-store */
};

/* A command's own contract, defined in its cmd-<name>.c. */
struct pk_cmd_spec {
	const char *usage;                /* -h/--help, on stdout; after a usage error, on stderr */
	const struct pk_option *options;  /* ended by { NULL } */
	size_t opts_size;                 /* sizeof the struct the options fill */
	const char *args_name;            /* the other arguments, for "missing ..." ("RANGE...") */
	unsigned args_min, args_max;      /* how many of them; args_max G_MAXUINT: any number */
	/* further usage checks of the parsed line (G_OPTION_ERROR_FAILED), or NULL */
	int (*check)(const struct pk_cmdline *cmdline, GError **err);
	/*
	 * the inputs checked before the lab is taken (files readable, base
	 * names known: said at once, not after another printkbot's build), the
	 * config loaded by then; or NULL
	 */
	int (*inputs)(const struct pk_cmd_ctx *ctx, GError **err);
	int setup_status;                 /* the exit status when the needs cannot be set up */
	int (*run)(struct pk_cmd_ctx *ctx);   /* the exit status */
};

struct pk_command {
	const char *name;
	unsigned needs;                   /* enum pk_cmd_needs, or'd */
	const struct pk_cmd_spec *spec;
	const char *summary;              /* for `printkbot --help` */
};

/* `printkbot help findings`: every kind of finding and of change, with what it means. */
void pk_help_findings(FILE *to);
/* `printkbot help verdicts`: every verdict, with what it means. */
void pk_help_verdicts(FILE *to);

/* Every command, in the order `printkbot --help` lists them; ended by { NULL }. */
extern const struct pk_command pk_commands[];

/* The command called name, or NULL. */
const struct pk_command *pk_command_find(const char *name);

/*
 * Parse a command line (argv[0] is the command's name) into out: options,
 * arguments, -h/--help.  Needs are not set up.  Usage errors (an unknown
 * option, a bad value, too few or too many arguments, a failed check) are
 * -1 with err; out is then left cleared.  Clear out with pk_cmd_ctx_clear().
 */
int pk_command_parse(struct pk_cmd_ctx *out, const struct pk_command *cmd, int argc, char **argv,
		     GError **err);
/* Set up what cmd needs into ctx (parsed by pk_command_parse()); -1 with err. */
int pk_command_setup(struct pk_cmd_ctx *ctx, const struct pk_command *cmd, GError **err);
/* Close and free what ctx holds; a zeroed ctx is fine. */
void pk_cmd_ctx_clear(struct pk_cmd_ctx *ctx);

/* Move ctx's lab into *out (the caller clears it); ctx's becomes cleared. */
void pk_cmd_ctx_take_lab(struct pk_cmd_ctx *ctx, struct pk_lab *out);
/* ctx's store, now the caller's to close; ctx's becomes NULL. */
struct pk_store *pk_cmd_ctx_take_store(struct pk_cmd_ctx *ctx);

/* Parse, print the usage for -h/--help, set up, run: the command's exit status. */
int pk_command_main(const struct pk_command *cmd, int argc, char **argv);

/*
 * pk_command_main() with the set-up and the clearing of the context
 * passed in: setup NULL sets nothing up, clear NULL clears the command
 * line only.  For a command whose needs are 0 both may be NULL, and then
 * nothing that config, lab or store need is linked (front.c runs scan so).
 */
int pk_command_run(const struct pk_command *cmd, int argc, char **argv,
		   int (*setup)(struct pk_cmd_ctx *, const struct pk_command *, GError **),
		   void (*clear)(struct pk_cmd_ctx *));

/*
 * What main runs for `printkbot <argv...>` once the global options are
 * handled: argv[0] is a command's name, or "help" and a command's name
 * (the same as that command's --help).  The exit status.
 */
int pk_command_dispatch(int argc, char **argv);

/* The specs, one per cmd-<name>.c. */
extern const struct pk_cmd_spec cmd_setup_spec, cmd_boot_spec, cmd_scan_spec, cmd_test_spec,
	cmd_history_spec, cmd_report_spec, cmd_db_spec, cmd_run_spec, cmd_bisect_spec,
	cmd_daemon_spec, cmd_queue_spec, cmd_worker_spec, cmd_index_diff_spec, cmd_check_spec;

#endif
