/*
 * context.c - what every command gets before it runs (its configuration,
 * inputs checked, the lab taken, the store opened) and lets go after; see
 * commands.h.  Apart from the table (commands.c) so that a command can
 * set up what it needs later itself (check --test).
 */
#include "cmd/commands.h"
#include "lab/sandbox.h"
#include "base/util.h"

#include <string.h>

int pk_command_setup(struct pk_cmd_ctx *ctx, const struct pk_command *cmd, GError **err)
{
	const struct pk_cmd_common *common = &ctx->cmdline.common;

	if (cmd->needs & PK_NEEDS_CONFIG) {
		if (pk_config_load(&ctx->config, common->config_path, err) < 0)
			return -1;
		pk_sandbox_configure(&ctx->config.sandbox);
	}
	/* a reader of the store reads only [store] path: no secrets it may not read */
	if ((cmd->needs & (PK_NEEDS_STORE | PK_NEEDS_STORE_PATH)) && !(cmd->needs & PK_NEEDS_CONFIG) &&
	    !common->db && !common->no_store &&
	    pk_config_store_path(&ctx->config.db, common->config_path, err) < 0)
		return -1;
	if (common->arch && !pk_arch_by_name(common->arch))
		return pk_error(err, PK_ERROR_INPUT, "--arch %s: the lab builds for %s", common->arch, pk_arch_names());
	if (cmd->spec->inputs && cmd->spec->inputs(ctx, err) < 0)
		return -1;
	/* --arch, else the config's [test] arch */
	if ((cmd->needs & PK_NEEDS_LAB) &&
	    pk_lab_take(&ctx->lab, common->arch ? pk_arch_by_name(common->arch) : ctx->config.test.arch, err) < 0)
		return -1;
	if ((cmd->needs & PK_NEEDS_STORE) && !common->no_store &&
	    pk_store_open_ext(&ctx->store, common->db ? common->db : ctx->config.db,
			      cmd->needs & PK_NEEDS_STORE_READONLY ? PK_STORE_OPEN_READONLY : 0, err) < 0)
		return -1;
	return 0;
}

void pk_cmd_ctx_clear(struct pk_cmd_ctx *ctx)
{
	pk_store_close(ctx->store);
	pk_lab_clear(&ctx->lab);
	pk_config_clear(&ctx->config);
	pk_cmdline_clear(&ctx->cmdline);
	memset(ctx, 0, sizeof(*ctx));
	ctx->lab.lock_fd = -1;
}
