/*
 * daemon.h - the mailing-list bot: read patch mail from the configured
 * sources, group it into series, queue a job per series, test each patch
 * of it, and reply in the thread; and watch git branches: each push to a
 * watched branch is a job that tests its new commits and mails their
 * authors.
 *
 * The queue is the store's jobs table; four kinds of jobs run here:
 *   "series"  {"key", "version", "total", "subject", "cover", "mails": [ids]}
 *             (key and version are also the job's series columns, so a
 *             newer version cancels an older one still queued in one query):
 *             test the patches in order, each on the previous one, store
 *             test, review and rendered reply in one transaction per patch,
 *             deliver the reply into the outbox Maildir's new/ (outbox.h)
 *             before that transaction commits, and queue a "reply" job for
 *             each reply to send;
 *   "reply"   {"reply": id}: send the reply's file from outbox/new, record
 *             the send, and move the file to outbox/cur; when the server is
 *             down the file stays in new/ and the job goes back to the queue
 *             with a growing delay (retry_min doubling up to retry_max), so a
 *             reply is never lost and is always sent with the Message-ID it
 *             was rendered with;
 *   "push"    {"push": id}: the new commits of one push to a watched branch
 *             ([tree NAME] watch =), listed in the store when the push was
 *             seen (after a fetch: at start, on SIGHUP, every
 *             fetch_interval): each tested against its parent as `run`
 *             does, stored with its review, and the mail to its author
 *             (the kernel test robot's form for a commit, reply_on of its
 *             tree) rendered and queued as a "reply" job, one transaction
 *             per commit.  A commit with the patch-id and parent tree of
 *             one tested already is not tested again, nor mailed; one that
 *             left the branch before its turn (a force-push, a deletion)
 *             is skipped; a push of more than max_commits new commits has
 *             its newest tested and the rest listed as left out;
 *   "command" {"command": "test"|"help"|"unknown", "mail": id, and for
 *             test "base", the series' "mails", "cover", "total",
 *             "subject" and "series_job", or "no_series": why none}: a
 *             command by mail, a reply addressed to [daemon] from with a
 *             #printkbot line (intake/mailcmd.h), from a sender
 *             commands_from allows, whose From the Authentication-Results
 *             of commands_authserv_id vouch for (intake/authres.h; or its
 *             source is trusted_commands), within commands_per_hour,
 *             commands_per_thread_hour (per series) and
 *             commands_total_per_hour, its mail, its row of commands and
 *             its job stored in one transaction at intake (a refused one:
 *             its mail skipped with why, logged).  test tests the series
 *             its thread answers again (on base, or on the base a series
 *             job would choose now) and stores each patch's test and
 *             review with the one answer, threaded under the command, in
 *             one transaction under the lease, keyed on the command's mail
 *             (a job taken over after kill -9 answers once); help, an
 *             unknown command or base, a thread without a series: the
 *             answer alone.  The answer is sent by a "reply" job.
 * At start, a file in outbox/new whose reply the store records as sent (a
 * crash between the record and the move) is moved to cur/, not sent again.
 * Roles: the intake reads the sources and queues jobs, the worker claims
 * and runs them; a plain daemon is both, `daemon --queue-only` only the
 * intake (one per database: a lock file in the runtime dir), `printkbot worker`
 * only a worker (as many as wanted, each with its own lab, on one store).
 * A worker claims a job atomically under a lease ([daemon] lease
 * seconds) that a thread of it renews while the job runs; a job whose
 * lease ended (its worker died or stalled) goes back to the queue, and
 * only then, and what its late worker brings is refused: each patch's
 * results and the end of the job are stored only while the lease holds,
 * and a reply is sent only by the worker holding its reply job, so it is
 * sent once.  A job left running by a worker of this machine whose
 * process is gone (a crash, kill -9) is queued again at once when a
 * worker starts there; a patch of it whose reply was already stored is
 * not tested again.
 *
 * Signals: SIGTERM and SIGINT end the current child (make, QEMU) through
 * proc.h's cancel flag, put the running job back in the queue, and return;
 * SIGHUP reloads the configuration (a bad new one is logged and the old
 * one kept).  Every event is one line on stderr naming the job and the
 * Message-ID.
 */
#ifndef PK_DAEMON_H
#define PK_DAEMON_H

#include <glib.h>
#include <stdbool.h>

struct pk_daemon_opts {
	const char *config_path;  /* NULL: $PRINTKBOT_CONFIG, else /etc/printkbot.conf */
	const char *db;           /* NULL: the config's, else the default */
	bool once;                /* read what is there, run what is due, and return */
	bool queue_only;          /* the intake only: read and queue, run no job (workers run them) */
	bool worker;              /* a worker only: run jobs, read no source (another daemon does) */
};

/* Run until a signal ends it (or, with once, until nothing is due).  -1 with err on failure. */
int pk_daemon_run(const struct pk_daemon_opts *opts, GError **err);

/*
 * The daemon without its loop, for a caller that drives it (the tests).
 * pk_daemon_open() does what pk_daemon_run() does before its loop: load
 * the configuration and install its sandbox settings, open the store and
 * take its daemon lock (not a worker), open the outbox (and settle replies
 * sent before a crash), become a worker (not queue-only: queue again the
 * jobs a gone worker of this machine left running, start the lease
 * heartbeat), and open the sources (not a worker).  No signal handler is installed.  opts is borrowed and must
 * outlive the daemon; *out is freed with pk_daemon_close() (NULL is fine).
 */
struct pk_daemon;
int pk_daemon_open(struct pk_daemon **out, const struct pk_daemon_opts *opts, GError **err);
void pk_daemon_close(struct pk_daemon *d);

/*
 * What SIGHUP does, logged as the loop logs it: read the configuration
 * again and open its sources.  Only when both succeeded does the new
 * configuration replace the old one and its sandbox settings become the
 * process's (pk_sandbox_configure()); then the outbox it names is opened
 * (a failure there keeps the old outbox and is not a failed reload).
 * Returns 0 when the new configuration is in force, -1 when the old one
 * is kept, with its sandbox settings and its sources.
 */
int pk_daemon_reload(struct pk_daemon *d);

#endif
