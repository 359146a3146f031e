/*
 * command.c - parsing a command's line, running a command that needs
 * nothing set up, and a command taking what its context set up; see
 * commands.h.  Apart from commands.c (the table and
 * the set-up of config, lab and store) so that front.c links only what
 * scan uses.
 */
#include "cmd/commands.h"

#include <stdio.h>
#include <string.h>

/* Too few or too many other arguments for spec. */
static int check_args(const struct pk_cmd_spec *spec, const struct pk_cmdline *cl, GError **err)
{
	if (cl->n_args < spec->args_min) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "missing %s", spec->args_name);
		return -1;
	}
	if (cl->n_args > spec->args_max) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "unexpected argument '%s'",
			    cl->args[spec->args_max]);
		return -1;
	}
	return 0;
}

int pk_command_parse(struct pk_cmd_ctx *out, const struct pk_command *cmd, int argc, char **argv,
		     GError **err)
{
	const struct pk_cmd_spec *spec = cmd->spec;
	struct pk_cmdline cl;

	memset(out, 0, sizeof(*out));
	out->lab.lock_fd = -1;
	if (pk_cmdline_parse(&cl, spec->options, spec->opts_size, argc, argv, err) < 0)
		return -1;
	/* with --help nothing else counts: `test --help` needs no PATCH */
	if (!cl.help && (check_args(spec, &cl, err) < 0 || (spec->check && spec->check(&cl, err) < 0))) {
		pk_cmdline_clear(&cl);
		return -1;
	}
	out->name = cmd->name;
	out->cmdline = cl;
	return 0;
}

/*
 * A usage error: the synopsis (the usage text up to its first blank
 * line) and where the rest is, not the whole help, which buries the one
 * line that said what was wrong.
 */
static void usage_error_hint(const struct pk_command *cmd)
{
	const char *usage = cmd->spec->usage, *end = strstr(usage, "\n\n");

	fprintf(stderr, "%.*s\n'printkbot %s --help' says every option\n", end ? (int)(end - usage) : (int)strlen(usage),
		usage, cmd->name);
}

int pk_command_run(const struct pk_command *cmd, int argc, char **argv,
		   int (*setup)(struct pk_cmd_ctx *, const struct pk_command *, GError **),
		   void (*clear)(struct pk_cmd_ctx *))
{
	g_autoptr(GError) err = NULL;
	struct pk_cmd_ctx ctx;
	int status;

	if (pk_command_parse(&ctx, cmd, argc, argv, &err) < 0) {
		fprintf(stderr, "printkbot %s: %s\n", cmd->name, err->message);
		/* a value that does not parse is said in full above; the rest is a usage error */
		if (!g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE))
			usage_error_hint(cmd);
		return 2;
	}
	if (ctx.cmdline.help) {
		fputs(cmd->spec->usage, stdout);
		status = 0;
	} else if (setup && setup(&ctx, cmd, &err) < 0) {
		fprintf(stderr, "printkbot %s: %s\n", cmd->name, err->message);
		status = cmd->spec->setup_status;
	} else {
		status = cmd->spec->run(&ctx);
	}
	if (clear)
		clear(&ctx);
	else
		pk_cmdline_clear(&ctx.cmdline);
	return status;
}

void pk_cmd_ctx_take_lab(struct pk_cmd_ctx *ctx, struct pk_lab *out)
{
	*out = ctx->lab;
	memset(&ctx->lab, 0, sizeof(ctx->lab));
	ctx->lab.lock_fd = -1;
}

struct pk_store *pk_cmd_ctx_take_store(struct pk_cmd_ctx *ctx)
{
	return g_steal_pointer(&ctx->store);
}
