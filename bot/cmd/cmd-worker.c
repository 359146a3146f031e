/* cmd-worker.c - `printkbot worker`: run the daemon's jobs, without reading mail. */
#include "cmd/commands.h"
#include "daemon/daemon.h"

#include <stdio.h>

static const char worker_usage[] =
	"usage: printkbot worker [--config FILE] [--db FILE] [--once]\n\n"
	"Run the jobs of the store's queue (test a series, send a reply) that an\n"
	"intake queued (`printkbot daemon`, or `daemon --queue-only`), without\n"
	"reading any source.  Start as many as wanted on one store, each with its\n"
	"own lab ($PRINTKBOT_CACHE): a job is claimed by one worker under a lease\n"
	"([daemon] lease seconds) renewed while it runs; a job whose lease ended\n"
	"(its worker died or stalled) goes back to the queue, and a late worker's\n"
	"result is refused.  An empty queue is asked again every [daemon]\n"
	"worker_poll seconds.  A worker says which architectures its lab has set up\n"
	"(read when it starts): a series for another architecture's board\n"
	"(qemu/boards) is left to a worker whose lab has it, when one is about.\n\n"
	"  --config FILE  the configuration (default $PRINTKBOT_CONFIG, else\n"
	"                 /etc/printkbot.conf)\n"
	"  --db FILE      the store (default: the config's, $PRINTKBOT_DB, <cache>/printkbot.db)\n"
	"  --once         run what is due, then exit\n\n"
	"signals: SIGTERM or SIGINT end the running build or boot and put its job\n"
	"back in the queue; SIGHUP reloads the configuration.\n"
	"exit status: 0 when stopped or done, 2 when the worker could not run.\n";

struct worker_opts {
	bool once;
};

static const struct pk_option worker_options[] = {
	PK_OPTION_CONFIG,
	PK_OPTION_DB,
	PK_OPTION_FLAG("once", struct worker_opts, once),
	{ NULL },
};

static int cmd_worker(struct pk_cmd_ctx *ctx)
{
	const struct worker_opts *o = ctx->cmdline.opts;
	struct pk_daemon_opts opts = { 0 };
	g_autoptr(GError) err = NULL;

	opts.config_path = ctx->cmdline.common.config_path;
	opts.db = ctx->cmdline.common.db;
	opts.once = o->once;
	opts.worker = true;
	if (pk_daemon_run(&opts, &err) < 0) {
		fprintf(stderr, "printkbot worker: %s\n", err->message);
		return 2;
	}
	return 0;
}

const struct pk_cmd_spec cmd_worker_spec = {
	.usage = worker_usage,
	.options = worker_options,
	.opts_size = sizeof(struct worker_opts),
	.args_max = 0,
	.setup_status = 2,
	.run = cmd_worker,
};
