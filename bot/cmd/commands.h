/*
 * commands.h - the subcommands of printkbot.  Each cmd_*() lives in
 * bot/cmd-<name>.c, parses its own options, calls the stages, prints, and
 * returns the process exit status.  main.c holds the table.
 */
#ifndef PK_COMMANDS_H
#define PK_COMMANDS_H

int cmd_setup(int argc, char **argv);
int cmd_boot(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_test(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_queue(int argc, char **argv);

#endif
