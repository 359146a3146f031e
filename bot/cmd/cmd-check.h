/*
 * cmd-check.h - what the two halves of `printkbot check` share: cmd-check.c
 * (the static check, which front.c runs in its small process) and
 * cmd-check-test.c (--test: build and boot, in printkbot-core).
 */
#ifndef PK_CMD_CHECK_H
#define PK_CMD_CHECK_H

#include "cmd/commands.h"

struct check_opts {
	bool test;
	const char *base;
	double timeout;
	const char *rules;
};

extern const char check_usage[];
extern const struct pk_option check_options[];
int check_validate(const struct pk_cmdline *cl, GError **err);

/* The static check of the input at path ("-": standard input), printed; the exit status. */
int check_static(const char *path);

/* The spec front.c runs (cmd_check_spec, in commands.h, is printkbot-core's). */
extern const struct pk_cmd_spec cmd_check_front_spec;

#endif
