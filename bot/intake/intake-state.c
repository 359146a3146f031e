/*
 * intake-state.c - what a source keeps in the store between fetches (its
 * place, when it started), which intake.c and every backend read and
 * write; see intake.h.
 */
#include "intake/intake.h"
#include "store/store.h"
#include "store/queue.h"
#include "base/util.h"

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

int pk_intake_read_again(struct pk_intake_ctx *ctx, GError **err)
{
	gint64 started = pk_intake_state_int(ctx, "started");

	if (ctx->cfg->start != PK_START_NOW || !started)
		return 0;
	/* kept until a fetch got to the end: a failure halfway must not lift it */
	ctx->since = started;
	return pk_intake_state_set_int(ctx, "since", started, err);
}
