/* intake.c - the source table, and a fetch through a backend; see intake.h. */
#include "intake/intake.h"
#include "intake/mail.h"
#include "store/store.h"
#include "store/queue.h"
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
	/* the database keeps where mail came from, never a login written into the url */
	g_autofree char *where = pk_url_redact(cfg->url ? cfg->url : cfg->path);

	if (!ops)
		return pk_error(err, PK_ERROR_INPUT, "source %s: unknown type '%s'", cfg->name,
				cfg->type ? cfg->type : "(none)");
	in = g_new0(struct pk_intake, 1);
	in->ops = ops;
	in->ctx.store = store;
	in->ctx.cfg = cfg;
	in->ctx.max_mail = PK_INTAKE_MAX_MAIL;
	if (pk_store_add_source(store, &in->ctx.source_id, ops->kind, cfg->name, where, err) < 0 ||
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

/* The first fetch of a start = now source: the backend records where it stands. */
static int start_first(struct pk_intake *in, GError **err)
{
	in->started_now = false;
	if (in->ctx.cfg->start != PK_START_NOW || pk_intake_state_int(&in->ctx, "started"))
		return 0;
	if (in->ops->start_now(in->state, err) < 0 ||
	    pk_intake_state_set_int(&in->ctx, "started", g_get_real_time() / G_USEC_PER_SEC, err) < 0)
		return -1;
	in->started_now = true;
	return 0;
}

struct start_filter {
	const struct pk_intake_ctx *ctx;
	pk_intake_deliver_fn deliver;
	void *data;
	unsigned passed;
};

/* A mail dated before ctx->since, or without a Date it can be judged by, is dropped. */
static int filter_deliver(void *data, const char *raw, size_t len, const char *where, GError **err)
{
	struct start_filter *f = data;

	if (f->ctx->since && pk_mail_date(raw, len) < f->ctx->since)
		return 0;
	f->passed++;
	return f->deliver(f->data, raw, len, where, err);
}

int pk_intake_fetch(struct pk_intake *in, pk_intake_deliver_fn deliver, void *data,
		    unsigned *out_count, GError **err)
{
	struct pk_intake_ctx *ctx = &in->ctx;
	struct start_filter f = { ctx, deliver, data, 0 };
	unsigned handed = 0;
	int rc;

	*out_count = 0;
	if (start_first(in, err) < 0)
		return -1;
	ctx->since = ctx->cfg->start == PK_START_DATE ? ctx->cfg->start_date
						       : pk_intake_state_int(ctx, "since");
	rc = in->ops->fetch(in->state, filter_deliver, &f, &handed, err);
	if (rc == 0 && ctx->cfg->start == PK_START_NOW && ctx->since &&
	    pk_intake_state_set_int(ctx, "since", 0, err) < 0)
		rc = -1;
	/* read to its end: what monitoring calls the source's last successful read */
	if (rc == 0 && pk_store_source_read(ctx->store, ctx->source_id,
					    g_get_real_time() / G_USEC_PER_SEC, err) < 0)
		rc = -1;
	*out_count = f.passed;
	return rc;
}
