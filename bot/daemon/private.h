/*
 * private.h - what the files of the daemon share: the daemon's state and
 * the functions each role gives the loop.  Only bot/daemon/ includes it;
 * daemon.h is the stage's face.
 *
 *   loop.c        the loop, signals, SIGHUP reload, start and stop, and
 *                 the dispatch of due jobs;
 *   inbox.c       mail from the sources -> stored mails -> series -> jobs;
 *   inbox-command.c  a #printkbot command by mail -> its job (or why not);
 *   job-series.c  the series job: test each patch, store, render the reply;
 *   reply-gate.c  whether a tested patch's reply is mailed: the list's
 *                 policy, once per change, the embargo and the brakes;
 *   job-reply.c   the reply job: send from the outbox over SMTP;
 *   worker.c      who the daemon is to the store's leases, and the
 *                 heartbeat thread that renews the lease of its job;
 *   trees.c       the [tree]s fetched into the lab when due;
 *   watch.c       the watched branches compared after each fetch: a push
 *                 stored and queued;
 *   job-push.c    the push job: test each new commit, store, render the
 *                 mail to its author;
 *   job-command.c the command job: test a series again, or answer help;
 *   tested.c      what those three jobs do with what they tested: record
 *                 it and store its reply in one transaction under the
 *                 lease, the reply delivered into the outbox before the
 *                 commit and a reply job queued to send it;
 *   kcidb.c       each ended job's reviews posted to [kcidb] url;
 *   metrics.c     the figures written for monitoring ([daemon] metrics_dir);
 *   log.c         the daemon's log line (log.h), which the loop and
 *                 every role above write alike;
 *   signals.c     the signals every role asks about (signals.h).
 *
 * The daemon logs its own events, one line each (daemon_log(), log.h):
 * it is the top of everything it runs.
 */
#ifndef PK_DAEMON_PRIVATE_H
#define PK_DAEMON_PRIVATE_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>

#include "daemon/daemon.h"
#include "daemon/signals.h"
#include "config/config.h"
#include "report/listpolicy.h"
#include "lab/bases.h"
#include "lab/lab.h"
#include "pipeline/sequence.h"
#include "pipeline/test.h"
#include "store/store.h"
#include "store/queue.h"

struct pk_intake;
struct pk_mail;
struct pk_outbox;
struct pk_reply;
struct pk_review_doc;
struct pk_review_info;
struct pk_patch;
struct pk_lab;
struct pk_tree_group;
struct daemon_heartbeat;
struct daemon_metrics;

struct pk_daemon {
	struct pk_config config;
	struct pk_store *store;
	GPtrArray *sources;       /* struct pk_intake* */
	struct pk_outbox *outbox; /* rendered replies waiting to be sent */
	const struct pk_daemon_opts *opts;
	int lock_fd;              /* the intake's lock beside the database, -1 when not taken */
	char *lock_path;          /* its file, removed when it is let go */
	/* a daemon that runs jobs (not --queue-only) is a worker of the queue: */
	struct pk_store_worker worker;  /* its name and machine (strings below) and lease */
	char *worker_name, *worker_machine;
	char *worker_arches;              /* the architectures its lab has set up, "x86_64,arm64" (worker.c) */
	struct daemon_heartbeat *heartbeat;  /* renews the running job's lease (worker.c) */
	double next_tree_fetch;   /* when the [tree]s are fetched next (trees.c); 0: at once */
	struct pk_bases_refetch refetch;  /* the fetches for base-commits the lab lacks (job-series.c) */
	struct daemon_metrics *metrics;  /* what this process writes for monitoring (metrics.c) */
	struct pk_rules *rules;   /* [test] rules, read with the configuration; NULL: none */
};

/* How a job ended; the loop writes the matching state (or the retry) to the store. */
enum job_end { JOB_DONE, JOB_FAILED, JOB_INTERRUPTED, JOB_RETRY };

/* Unix seconds, the store's time. */
static inline gint64 daemon_now(void)
{
	return g_get_real_time() / G_USEC_PER_SEC;
}

/* ---- kcidb.c ------------------------------------------------------------- */

/* Before a job: where its reviews will start, -1 when none are to be posted ([kcidb] url unset). */
gint64 daemon_kcidb_mark(struct pk_daemon *d);
/* After it: its reviews (those stored since mark) posted to [kcidb] url, or why not logged. */
void daemon_kcidb_post(struct pk_daemon *d, gint64 job_id, gint64 mark);

/* ---- worker.c ------------------------------------------------------------ */

/*
 * Become a worker of the queue: name the daemon ("host:pid") and its
 * machine for the leases, queue again the jobs a worker of this machine
 * that is gone left running, and start the heartbeat thread (its own
 * store connection).  daemon_worker_stop() ends it; both are safe to call
 * on a daemon that is no worker.
 */
int daemon_worker_start(struct pk_daemon *d, GError **err);
void daemon_worker_stop(struct pk_daemon *d);
/* The heartbeat renews job_id's lease (every third of it) until the release. */
void daemon_lease_hold(struct pk_daemon *d, gint64 job_id);
void daemon_lease_release(struct pk_daemon *d);
/* Whether the heartbeat found the held job's lease lost (its result will be refused). */
bool daemon_lease_lost(struct pk_daemon *d);
/*
 * Renew job_id's lease now: 0 while the daemon holds it, -1 with err set
 * when it does not (lost) or the store failed.  Inside a transaction, a 0
 * keeps the job this worker's until the commit.
 */
int daemon_lease_check(struct pk_daemon *d, gint64 job_id, GError **err);

/* ---- trees.c ------------------------------------------------------------- */

/*
 * Fetch every [tree] into the lab when due (at start, then every
 * fetch_interval); failures are logged.  After each fetch, the tree's
 * watched branches are compared (daemon_watch_tree()).
 */
void daemon_fetch_trees(struct pk_daemon *d, double now);

/* ---- watch.c ------------------------------------------------------------- */

/*
 * Compare each watched branch of t, as the lab (taken by the caller) has
 * it after a fetch, with the tip the store noted: a branch seen for the
 * first time has its tip noted; a push is stored with its new commits
 * along first parents (at most t->max_commits, the newest) and queued as
 * one push job; a branch gone from the tree is dropped.  Each is logged;
 * a failure too, and that branch is compared again at the next fetch.
 */
void daemon_watch_tree(struct pk_daemon *d, const struct pk_lab *lab, const struct pk_tree_group *t);

/* ---- job-push.c ---------------------------------------------------------- */

/*
 * Run a push job (payload {"push": id}): each of the push's commits still
 * queued, oldest first, is tested against its parent (pk_test_commit())
 * and stored with its review, and, as its tree's reply_on says, the mail
 * to its author rendered into the outbox and a reply job queued to send
 * it, all in one transaction per commit while the lease holds.  A commit
 * stored before a restart is not tested again; one with the patch key of
 * a commit tested already is "tested-before" (no test, no mail); one that
 * left the branch (a force-push, a deletion) is skipped.  Errors of the
 * bot as daemon_run_series().
 */
enum job_end daemon_run_push(struct pk_daemon *d, const struct pk_store_job *job, JsonObject *payload,
			     char **detail, gint64 *out_retry);

/* ---- metrics.c ----------------------------------------------------------- */

/*
 * The figures this process writes for monitoring, one file in [daemon]
 * metrics_dir (none when unset): the intake's (the store's figures and
 * the sources') and the worker's (its jobs).  daemon_metrics_new() makes
 * them (d->metrics, as d->opts says which roles), daemon_metrics_free()
 * frees them (the file stays).  daemon_metrics_configure() takes the
 * configuration, the worker's name and the open sources, at start and
 * after each reload (a metrics_dir changed: the old file goes).  Each
 * function takes the metrics' own lock: the heartbeat thread writes too.
 */
void daemon_metrics_new(struct pk_daemon *d);
void daemon_metrics_free(struct pk_daemon *d);
void daemon_metrics_configure(struct pk_daemon *d);
/* A source was read (ok) or failed to be, handing over mails. */
void daemon_metrics_source_read(struct pk_daemon *d, const struct pk_intake *in, bool ok,
				unsigned mails);
/*
 * A job started; a job of kind ended as end says (refused: the lease was
 * lost and the end refused).  PK_JOB_ANY_KIND: its end could not be
 * written, it is not counted; the worker is idle either way.
 */
void daemon_metrics_job_start(struct pk_daemon *d);
void daemon_metrics_job_end(struct pk_daemon *d, enum pk_job_kind kind, enum job_end end,
			    bool refused);
/* Write the file now, from the daemon's store; a failure is logged (once until a write succeeds). */
void daemon_metrics_write(struct pk_daemon *d);
/* The heartbeat thread: write the file from its own store when metrics_interval has passed. */
void daemon_metrics_refresh(struct daemon_metrics *m, struct pk_store *store);
/* Seconds until the file is due again; -1 when none is written. */
double daemon_metrics_wait(struct daemon_metrics *m);
/* A daemon stopped by a signal: its file is removed, and no more is written. */
void daemon_metrics_remove(struct pk_daemon *d);

/* ---- inbox.c ------------------------------------------------------------- */

/*
 * Open the configured sources, closing those open before.  On failure the
 * ones opened before the failing one stay open (d->sources is never NULL).
 */
int daemon_open_sources(struct pk_daemon *d, GError **err);
void daemon_close_sources(struct pk_daemon *d);
/* Fetch a source's new mail into the store (failures are logged; the source is tried again later). */
void daemon_fetch_source(struct pk_daemon *d, struct pk_intake *in);
/*
 * Turn pending mails into jobs: a complete series at once, an incomplete
 * one after series_wait seconds without a new mail of it.  *out_wait gets
 * the seconds until the next incomplete series is due, -1 for none.
 */
int daemon_assemble(struct pk_daemon *d, double *out_wait, GError **err);

/* ---- inbox-command.c ----------------------------------------------------- */

/*
 * A mail that may be a command by mail: row (its columns as inbox.c
 * filled them: source, ids, subject, sender), mail parsed, raw its bytes
 * (len), bot the bot's address (lower case).  Not a command (not
 * addressed to the bot, no #printkbot line, our own or automatic mail):
 * 0, nothing done.  A command: 1, stored (its mail, its command row and
 * its command job in one transaction) or, refused (commands off, a
 * sender not in commands_from, a From nothing vouches for, over a rate),
 * its mail stored as skipped with why, and logged.  -1 with err when the store failed.
 */
int daemon_intake_command(struct pk_daemon *d, const struct pk_store_mail *row, const struct pk_mail *mail,
			  const char *raw, size_t len, const char *bot, GError **err);

/* ---- job-series.c -------------------------------------------------------- */

/*
 * Run a series job (job->attempts counts this run; payload: its JSON
 * object, NULL when it has none): test each patch on the previous one.
 * *detail (new) says what came of it.  An error of the bot (its lab,
 * its store, a full disk: not a result of a patch) is JOB_RETRY with
 * *out_retry set, the patches tested before it kept, until the job was
 * tried SERIES_MAX_ATTEMPTS times (a transient error: always).
 */
enum job_end daemon_run_series(struct pk_daemon *d, const struct pk_store_job *job,
			       JsonObject *payload, char **detail, gint64 *out_retry);

/*
 * A series as a job tests it, patch after patch on the one before
 * (pipeline/sequence.h); the series job and the command job (a series
 * tested again) share it.
 * daemon_series_init() fills it empty, daemon_series_clear() frees it.
 */
struct daemon_series {
	struct pk_daemon *d;
	gint64 job_id;
	GPtrArray *rows;          /* struct pk_store_mail*, one per patch, in order */
	GPtrArray *mails;         /* struct pk_mail*, each row's mail parsed */
	struct pk_mail *cover;    /* the cover letter, or NULL */
	guint total;              /* the patches the series announces */
	struct pk_lab lab;
	/* on lab: the base (its name, its rev: what the first patch went on), the parent, the options */
	struct pk_sequence seq;
	char *base_note;          /* what the replies say of the bases passed over, or NULL */
	char *kernel;             /* the base as a person names it (describe.h), or NULL */
	char *compiler;           /* the lab's gcc (describe.h), or NULL */
	char **config_lines;      /* qemu/kernel.config's options, or NULL */
	GString *verdicts;        /* each tested patch's verdict, comma-separated */
	char *series_key;         /* the series' key and version (intake/series.h), for the replies' */
	int version;              /* embargo; NULL for a series tested again by a command */
};
void daemon_series_init(struct daemon_series *r, struct pk_daemon *d, gint64 job_id);
void daemon_series_clear(struct daemon_series *r);
/*
 * Every mail of the series (payload: "mails", "cover", "total") read
 * back before anything is built: a lost one fails the job at once.  0,
 * or -1 with *detail set.
 */
int daemon_series_read(struct daemon_series *r, JsonObject *payload, char **detail);
/*
 * Set the test options from the config, take the lab and choose the
 * base the first patch goes on (pk_sequence_choose_base()): base (a
 * name pk_bases_ref() resolves in the lab: the caller checked it), or,
 * NULL, as a series job chooses (lab/bases.h pk_bases_choose()).  Then
 * what the replies say of the lab (describe.h).
 */
int daemon_series_start(struct daemon_series *r, const char *base, GError **err);
/* A stored mail (*out_row) and its raw bytes parsed (*out_mail), both new: 0, or -1 with *detail set. */
int daemon_read_mail(struct pk_daemon *d, gint64 id, struct pk_store_mail **out_row, struct pk_mail **out_mail,
		     char **detail);
/*
 * The config of the source a mail came from (its list =, archive =), or
 * NULL.  A worker opens no source: it finds the [source NAME] by the name
 * the store keeps.
 */
const struct pk_source_config *daemon_source_of(const struct pk_daemon *d, gint64 source_id);

/* ---- reply-gate.c -------------------------------------------------------- */

/*
 * What becomes of the mail about one tested patch or commit: the list's
 * policy (report/listpolicy.h) and what only the lab and the store know.
 * daemon_gate_clear() frees it.
 */
struct daemon_gate {
	bool mail;                     /* render the mail and queue it */
	char *same_as;                 /* with mail: a one-line mail instead, saying this (an earlier
					  mail has the same effect, and the list wants positive ones) */
	gint64 not_before;             /* with mail: the embargo's end (Unix time), 0: at once */
	struct pk_reply_policy policy; /* what it was decided under (subject_prefixes borrowed) */
	char *list_name;               /* "list NAME", "tree NAME", or NULL for no group: what the
					  brakes count under, as the store keeps it */
	const char *list_address;      /* the list to Cc, or NULL (borrowed from the config) */
	GPtrArray *muted;              /* const char*, NULL-ended: the addresses of the groups whose
					  reply is off, never Cc'd (borrowed from the config) */
	char *author;                  /* the author's address, lower case, or NULL */
	char *effect;                  /* pk_reply_effect_key() of the review */
	struct pk_reply_judgement judgement;   /* whose the outcome is: the rule and why */
	char *held;                    /* without mail: why (the log, the store) */
};
void daemon_gate_clear(struct daemon_gate *g);
/*
 * The mail about a tested patch mail: its list (List-Id, To/Cc, else
 * source_list), reply and subject_prefixes, whose the outcome of model
 * is (a failed build's missing names looked for in the tree it went on,
 * res->before.commit, in the lab taken by the caller; own_base: that tree
 * is the series' own base-commit; series_gap: why no base takes the whole
 * series, or NULL), once per change, the brakes and the embargo, in that
 * order.  0, or -1 with err when the lab or the store could not answer
 * (nothing decided).
 */
int daemon_gate_patch(struct pk_daemon *d, struct daemon_gate *out, const struct pk_mail *mail,
		      const char *source_list, JsonObject *model, const struct pk_test_result *res,
		      const struct pk_lab *lab, bool own_base, const char *series_gap, GError **err);
/* The same for a pushed commit of tree t by author ("Name <addr>"): t's policy, no once per change. */
int daemon_gate_commit(struct pk_daemon *d, struct daemon_gate *out, const struct pk_tree_group *t,
		       const char *author, JsonObject *model, const struct pk_test_result *res,
		       const struct pk_lab *lab, GError **err);
/* One log line of the decision: "what: mailed (rule: why)" or "what: no mail (rule): held". */
void daemon_gate_log(const struct daemon_gate *g, gint64 job_id, const char *msgid, const char *what);

/* ---- tested.c ------------------------------------------------------------ */

/*
 * What a job that tests something (series, push, command) stores of one
 * result, all or nothing, and only while this worker holds its lease.
 * The job fills it; daemon_tested_store() does the rest.
 */
struct daemon_tested {
	gint64 job_id;
	/* the reply's row (mail_id or push_commit_id, job_id, after_commit, what the list's policy
	   made of it); review_id is what record gives */
	struct pk_store_reply row;
	/* what is recorded under the lease, before the reply: the test and review, and what else
	   the job keeps of it; *out_review_id the review the reply's row names.  -1 with err */
	int (*record)(void *ctx, gint64 *out_review_id, GError **err);
	void *ctx;
	const struct pk_reply *reply;  /* the mail to send; NULL: none, row.held says why */
	gint64 not_before;             /* the embargo's end, 0: at once */
	const char *series_key;        /* with not_before: what a later version replaces, or NULL */
	int version;
};
/*
 * In one transaction: the lease checked, t->record, the reply's row, its
 * delivery into the outbox's new/ (before the commit) and the reply job
 * that sends it (*out_send_job, 0 for none).
 * 0, or -1 with err, rolled back (a file delivered stays in new/: the
 * result is tested and its reply built again, with the same Message-ID).
 */
int daemon_tested_store(struct pk_daemon *d, struct daemon_tested *t, gint64 *out_send_job, GError **err);

/*
 * A tested patch or commit whose mail the list's (or tree's) policy
 * decides (reply-gate.c): what differs between the series job and the
 * push job.  Borrowed throughout.
 */
struct daemon_tested_mail {
	gint64 job_id;
	const struct pk_patch *patch;          /* the review's patch, or NULL (a commit) */
	const struct pk_test_result *res;
	const struct pk_review_info *info;
	struct pk_store_reply row;             /* as in struct daemon_tested, without the policy's */
	const char *series_key;                /* as in struct daemon_tested */
	int version;
	/* the gate on the review's model: daemon_gate_patch() or daemon_gate_commit().  -1 with err */
	int (*gate)(void *ctx, struct daemon_gate *out, JsonObject *model, GError **err);
	/* the mail, when the gate says one: 0 rendered into *out; 1 not rendered, err says why (it
	   is held, not a failure); -1 with err when the bot failed */
	int (*render)(void *ctx, const struct daemon_gate *gate, JsonNode *model, struct pk_reply *out,
		      GError **err);
	/* the test, review and the job's rows, under the lease, from doc (the review made here) */
	int (*record)(void *ctx, const struct pk_review_doc *doc, gint64 *out_review_id, GError **err);
	void *ctx;
	/* the log lines: "WHAT (review N); NOUN <id>[ to TO] EMBARGO|in the outbox, sent by job N" */
	const char *msgid;                     /* their Message-ID, or NULL */
	const char *what;                      /* what was tested and its verdict */
	const char *noun;                      /* "reply", "mail" */
	const char *to;                        /* whom the mail goes to, or NULL (not said) */
	const char *embargo;                   /* "waits out the list's embargo" */
	const char *fail_prefix;               /* before "no NOUN: why" when not rendered, or NULL */
};
/*
 * The review made (pk_review_doc_make()), the gate asked, the mail
 * rendered, all stored (daemon_tested_store()) and logged.  0, or -1
 * with err (nothing stored).
 */
int daemon_tested_mail(struct pk_daemon *d, struct daemon_tested_mail *m, GError **err);

/* ---- job-command.c ------------------------------------------------------- */

/*
 * Run a command job (payload: "command", "mail", and for test "base",
 * the series' "mails", "cover", "total", "subject", or "no_series"):
 * answer the command mail once.  test: the series tested again, each
 * patch on the one before, on base (checked against the bases the bot
 * knows; an unknown one is answered with them) or on the base a series
 * job would choose now; every patch's test and review and the one answer
 * stored in one transaction under the lease, keyed on the command's
 * mail, so a job taken over after a crash answers once.  help, an
 * unknown command, a thread without a series: the answer alone.  Errors
 * of the bot as daemon_run_series().
 */
enum job_end daemon_run_command(struct pk_daemon *d, const struct pk_store_job *job, JsonObject *payload,
				char **detail, gint64 *out_retry);

/* ---- job-reply.c --------------------------------------------------------- */

/*
 * Run a reply job (job->attempts counts this run): send the reply from
 * the outbox.  JOB_RETRY sets *out_retry, the Unix time of the next try.
 */
enum job_end daemon_run_reply(struct pk_daemon *d, const struct pk_store_job *job,
			      JsonObject *payload, char **detail, gint64 *out_retry);
/*
 * The seconds before the next try of a job that failed attempts times:
 * retry_min after the first failure, doubling up to retry_max.
 */
double daemon_retry_wait(const struct pk_daemon *d, gint64 attempts);
/*
 * A job that tests something (series, push, command) it failed to finish
 * tried this many times: the bot's error, not a result of what it tests
 * (those are verdicts, stored); one that breaks every worker must not
 * take their time for ever.
 */
#define DAEMON_TEST_JOB_MAX_ATTEMPTS 5
/*
 * How such a job ends when its run did not come to its end (rc != 0):
 * rc > 0, a signal came, or rc < 0 with err while the daemon stops:
 * interrupted; rc < 0 otherwise: back to the queue (*out_retry) while the
 * error is transient or the job was tried fewer than
 * DAEMON_TEST_JOB_MAX_ATTEMPTS times ("the worker failed, not the
 * <what>"), else failed.  *detail is set in each case.
 */
enum job_end daemon_test_job_unfinished(const struct pk_daemon *d, const struct pk_store_job *job, int rc,
					const GError *err, const char *what, char **detail, gint64 *out_retry);
/* The outbox the config names (created when missing); the one open before is kept on failure. */
int daemon_open_outbox(struct pk_daemon *d, GError **err);
/* Move to cur/ each reply of new/ that the store records as sent (a crash between the two). */
int daemon_reconcile_outbox(struct pk_daemon *d, GError **err);

#endif
