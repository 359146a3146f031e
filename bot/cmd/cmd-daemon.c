/* cmd-daemon.c - `printkbot daemon`: the mailing-list bot. */
#include "cmd/commands.h"
#include "daemon/daemon.h"

#include <getopt.h>
#include <stdio.h>

static const char daemon_usage[] =
	"usage: printkbot daemon [--config FILE] [--db FILE] [--once | --queue-only]\n\n"
	"Read patch mail from the [source NAME] groups of the configuration (IMAP,\n"
	"Maildir, mbox, public-inbox), group it into series, test each series in\n"
	"the kernel lab, and reply in the thread over SMTP (see config.example).\n"
	"Jobs are kept in the store: see `printkbot queue`.\n\n"
	"  --config FILE  the configuration (default $PRINTKBOT_CONFIG, else\n"
	"                 /etc/printkbot.conf)\n"
	"  --db FILE      the store (default: the config's, $PRINTKBOT_DB, <cache>/printkbot.db)\n"
	"  --once         read what is there, run what is due, then exit (for cron)\n"
	"  --queue-only   read what is there and queue it, run nothing, then exit\n\n"
	"signals: SIGTERM or SIGINT end the running build or boot and put its job\n"
	"back in the queue; SIGHUP reloads the configuration.\n"
	"exit status: 0 when stopped or done, 2 when the daemon could not run.\n";

int cmd_daemon(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'C' },
		{ "db", required_argument, NULL, 'd' },
		{ "once", no_argument, NULL, 'o' },
		{ "queue-only", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct pk_daemon_opts opts = { 0 };
	g_autoptr(GError) err = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': opts.config_path = optarg; break;
		case 'd': opts.db = optarg; break;
		case 'o': opts.once = true; break;
		case 'q': opts.once = opts.queue_only = true; break;
		case 'h': fputs(daemon_usage, stdout); return 0;
		default: fputs(daemon_usage, stderr); return 2;
		}
	}
	if (optind != argc) {
		fputs(daemon_usage, stderr);
		return 2;
	}
	if (pk_daemon_run(&opts, &err) < 0) {
		fprintf(stderr, "printkbot daemon: %s\n", err->message);
		return 2;
	}
	return 0;
}
