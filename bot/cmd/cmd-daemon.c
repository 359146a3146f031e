/* cmd-daemon.c - `printkbot daemon`: the mailing-list bot. */
#include "cmd/commands.h"
#include "daemon/daemon.h"

#include <stdio.h>

static const char daemon_usage[] =
	"usage: printkbot daemon [--config FILE] [--db FILE] [--once] [--queue-only]\n\n"
	"Read patch mail from the [source NAME] groups of the configuration (IMAP,\n"
	"Maildir, mbox, public-inbox), group it into series, test each series in\n"
	"the kernel lab, and reply in the thread over SMTP (see config.example).\n"
	"Jobs are kept in the store: see `printkbot queue`.  One daemon reads\n"
	"the sources of a store; `printkbot worker`s may run its jobs beside it.\n"
	"A reply addressed to the bot with a line `#printkbot test [BASE]` or\n"
	"`#printkbot help` is a command by mail, answered once in its thread,\n"
	"from the senders [daemon] commands_from names (off when unset).\n\n"
	"  --config FILE  the configuration (default $PRINTKBOT_CONFIG, else\n"
	"                 /etc/printkbot.conf)\n"
	"  --db FILE      the store (default: the config's, $PRINTKBOT_DB, <cache>/printkbot.db)\n"
	"  --once         read what is there, run what is due, then exit (for cron)\n"
	"  --queue-only   the intake only: read and queue, run no job (workers run\n"
	"                 them); with --once, read what is there, queue it, exit\n\n"
	"signals: SIGTERM or SIGINT end the running build or boot and put its job\n"
	"back in the queue; SIGHUP reloads the configuration.\n"
	"exit status: 0 when stopped or done, 2 when the daemon could not run.\n";

/* The command line of daemon: --config and --db are passed on, the daemon loads its config. */
struct daemon_opts {
	bool once;
	bool queue_only;
};

static const struct pk_option daemon_options[] = {
	PK_OPTION_CONFIG,
	PK_OPTION_DB,
	PK_OPTION_FLAG("once", struct daemon_opts, once),
	PK_OPTION_FLAG("queue-only", struct daemon_opts, queue_only),
	{ NULL },
};

static int cmd_daemon(struct pk_cmd_ctx *ctx)
{
	const struct daemon_opts *o = ctx->cmdline.opts;
	struct pk_daemon_opts opts = { 0 };
	g_autoptr(GError) err = NULL;

	opts.config_path = ctx->cmdline.common.config_path;
	opts.db = ctx->cmdline.common.db;
	opts.once = o->once;
	opts.queue_only = o->queue_only;
	if (pk_daemon_run(&opts, &err) < 0) {
		fprintf(stderr, "printkbot daemon: %s\n", err->message);
		return 2;
	}
	return 0;
}

const struct pk_cmd_spec cmd_daemon_spec = {
	.usage = daemon_usage,
	.options = daemon_options,
	.opts_size = sizeof(struct daemon_opts),
	.args_max = 0,
	.setup_status = 2,
	.run = cmd_daemon,
};
