/* intake.c - the source table and what the backends share; see intake.h. */
#include "intake/intake.h"
#include "store/store.h"
#include "base/util.h"

#include <string.h>

static const struct pk_intake_ops *const backends[] = {
	&pk_intake_mbox, &pk_intake_maildir, &pk_intake_imap, &pk_intake_public_inbox,
};

const struct pk_intake_ops *pk_intake_find(const char *type)
{
	for (size_t i = 0; type && i < G_N_ELEMENTS(backends); i++)
		if (!strcmp(type, backends[i]->type))
			return backends[i];
	return NULL;
}

int pk_intake_open(struct pk_intake **out, struct pk_store *store,
		   const struct pk_source_config *cfg, GError **err)
{
	const struct pk_intake_ops *ops = pk_intake_find(cfg->type);
	struct pk_intake *in;

	if (!ops)
		return pk_error(err, PK_ERROR_INPUT, "source %s: unknown type '%s'", cfg->name,
				cfg->type ? cfg->type : "(none)");
	in = g_new0(struct pk_intake, 1);
	in->ops = ops;
	in->ctx.store = store;
	in->ctx.cfg = cfg;
	if (pk_store_add_source(store, &in->ctx.source_id, ops->kind, cfg->name,
				cfg->url ? cfg->url : cfg->path, err) < 0 ||
	    ops->open(&in->state, &in->ctx, err) < 0) {
		g_free(in);
		return -1;
	}
	*out = in;
	return 0;
}

void pk_intake_close(struct pk_intake *in)
{
	if (!in)
		return;
	in->ops->close(in->state);
	g_free(in);
}

gint64 pk_intake_state_int(const struct pk_intake_ctx *ctx, const char *key)
{
	g_autofree char *v = NULL;

	if (pk_store_source_state_get(ctx->store, ctx->source_id, key, &v, NULL) <= 0 || !v)
		return 0;
	return g_ascii_strtoll(v, NULL, 10);
}

int pk_intake_state_set_int(const struct pk_intake_ctx *ctx, const char *key, gint64 value,
			    GError **err)
{
	g_autofree char *v = g_strdup_printf("%" G_GINT64_FORMAT, value);

	return pk_store_source_state_set(ctx->store, ctx->source_id, key, v, err);
}
