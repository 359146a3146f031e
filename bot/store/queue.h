/*
 * queue.h - the daemon's words in the store: its queue of jobs (jobs.c),
 * and the mails, replies, sources and commands the jobs come from and
 * go to (queue.c), and the figures monitoring reads of them (figures.c).
 * Apart from store.h, which every history reader
 * includes, so that a reader of the history does not read the daemon's
 * words, and a change to the queue rebuilds only what runs it.  The
 * same conventions as store.h (its head says them).
 */
#ifndef PK_STORE_QUEUE_H
#define PK_STORE_QUEUE_H

#include "store/store.h"

/* ---- the daemon's queue: jobs (jobs.c); mails, replies, sources (queue.c) */

/*
 * A job's state.  Code passes the enum; the names ("queued"...) are the
 * words of the jobs table and of `printkbot queue`, and come only from
 * pk_job_state_name().  PK_JOB_ANY_STATE is for questions (pk_store_jobs()),
 * never a job's state.
 */
enum pk_job_state {
	PK_JOB_ANY_STATE = -1,
	PK_JOB_QUEUED,     /* waiting, not to run before its not_before */
	PK_JOB_RUNNING,    /* the daemon runs it (one attempt counted) */
	PK_JOB_DONE,       /* ran to its end: final */
	PK_JOB_FAILED,     /* could not be done; may be queued again */
	PK_JOB_CANCELLED,  /* superseded while it waited: final */
};

/* The state's stable name ("queued"); "" for PK_JOB_ANY_STATE or a bad value. */
const char *pk_job_state_name(enum pk_job_state state);
/* The state named name: true and *out set, or false (*out untouched). */
bool pk_job_state_parse(const char *name, enum pk_job_state *out);

/*
 * A job's kind (daemon.h says what each does).  PK_JOB_UNKNOWN is what a
 * stored kind this printkbot does not know reads as; PK_JOB_ANY_KIND is
 * for questions (pk_store_job_next_due()).  Neither can be queued.
 */
enum pk_job_kind {
	PK_JOB_ANY_KIND = -1,
	PK_JOB_UNKNOWN,
	PK_JOB_SERIES,     /* "series": test the patches of one series, in order */
	PK_JOB_REPLY,      /* "reply": send one rendered reply */
	PK_JOB_PUSH,       /* "push": test the new commits of one push to a watched branch */
	PK_JOB_COMMAND,    /* "command": act on one #printkbot command mail, answer it once */
};

/* The kind's stable name ("series"); "unknown" for PK_JOB_UNKNOWN, "" for any other value. */
const char *pk_job_kind_name(enum pk_job_kind kind);
/* The kind named name (never PK_JOB_UNKNOWN): true and *out set, or false. */
bool pk_job_kind_parse(const char *name, enum pk_job_kind *out);

/* A job as the store keeps it.  Freed with pk_store_job_free(). */
struct pk_store_job {
	gint64 id;
	enum pk_job_kind kind;
	enum pk_job_state state;
	char *payload;            /* the kind's JSON, or NULL */
	char *detail;             /* why it failed, what it produced, or NULL */
	char *series_key;         /* a series job's series (struct pk_series key), else NULL */
	int series_version;       /* and its version, else 0 */
	int attempts;             /* moves to running so far */
	gint64 created, updated;  /* Unix times */
	gint64 not_before;        /* a queued job does not run before (Unix time; 0 = at once) */
	char *worker;             /* a running job's holder ("host:pid"), else NULL */
	gint64 lease_until;       /* and when its lease ends (Unix time, the database's clock), else 0 */
	char *arch;               /* the architecture whose lab it needs (pk_store_job_need_arch()), or NULL */
};
void pk_store_job_free(struct pk_store_job *job);
typedef struct pk_store_job pk_store_job;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_store_job, pk_store_job_free)

/*
 * Queue a job (state PK_JOB_QUEUED); payload is the kind's JSON, or NULL.
 * A series job is queued with pk_store_job_add_series(), which also
 * records its series key and version, so the queue can be asked about a
 * series without reading payloads (one queued with pk_store_job_add() has
 * no series and is never superseded).
 */
int pk_store_job_add(struct pk_store *store, gint64 *out_id, enum pk_job_kind kind,
		     const char *payload, GError **err);
int pk_store_job_add_series(struct pk_store *store, gint64 *out_id, const char *series_key,
			    int series_version, const char *payload, GError **err);
/*
 * A reply job, not to run before not_before (Unix time; 0: at once):
 * the embargo of a list.  series_key (NULL for none: a commit's mail)
 * and series_version name the series whose patch it answers, so that a
 * later version or a resend can replace it while it waits
 * (pk_store_replies_replace_waiting()).
 */
int pk_store_job_add_reply(struct pk_store *store, gint64 *out_id, const char *series_key,
			   int series_version, gint64 not_before, const char *payload, GError **err);

/*
 * A worker: a process that claims jobs and holds each under a lease,
 * renewed while it works.  name is what `printkbot queue` and the logs
 * show ("host:pid"); machine (boot id and pid namespace) and pid say
 * where it runs, so that a worker on the same machine can tell a holder
 * that is gone (pk_store_jobs_requeue_gone()).  lease: the seconds a
 * claim or a renewal holds.  Borrowed for each call.
 */
struct pk_store_worker {
	const char *name;
	const char *machine;
	gint64 pid;
	gint64 lease;
	const char *arches;   /* the architectures its lab has ("x86_64,arm64"): it claims no job that
	                         needs another; NULL: any job */
};

/*
 * The worker says it is about and which architectures its lab has (its
 * row of table workers, by name, seen by the database's clock): when it
 * starts and before each claim.  A worker without arches writes nothing.
 */
int pk_store_worker_advertise(struct pk_store *store, const struct pk_store_worker *worker, GError **err);

/*
 * How many workers other than worker (may be NULL) said within the last
 * within seconds (by the database's clock) that their lab has arch, into
 * *out.
 */
int pk_store_workers_with_arch(struct pk_store *store, const struct pk_store_worker *worker, const char *arch,
			       gint64 within, gint64 *out, GError **err);

/*
 * The job (held by worker) needs arch's lab: written on the job, which
 * worker then ends as to be run again (PK_JOB_QUEUED); a worker whose
 * arches lack arch never claims it.  1 written, 0 the lease was lost.
 */
int pk_store_job_need_arch(struct pk_store *store, gint64 job_id, const struct pk_store_worker *worker,
			   const char *arch, GError **err);

/*
 * Claim the oldest queued job of kind (PK_JOB_ANY_KIND: any) whose
 * not_before has come (<= now) and whose architecture, if it needs one,
 * is one of worker->arches, atomically: it moves to running, held
 * by worker for worker->lease seconds, one attempt counted.  Every lease
 * is written and compared by the database's clock, never by now (the
 * caller's clock, which may run ahead of the other workers').  Two workers
 * never claim the same job (one write transaction, and the move is
 * conditional on the job still being queued).  1 claimed (*out new, its
 * state running), 0 none.  *out_wait (may be NULL): seconds until a job
 * of that kind is due or a running job's lease ends (then
 * pk_store_jobs_requeue_expired() has work), -1 when neither will.
 */
int pk_store_job_claim(struct pk_store *store, const struct pk_store_worker *worker,
		       enum pk_job_kind kind, gint64 now, struct pk_store_job **out,
		       gint64 *out_wait, GError **err);
/*
 * The worker still holds the job: its lease is extended to
 * worker->lease seconds from the database's now.  1 held, 0 lost (the
 * lease ended by the database's clock, or the job
 * is no longer running under this worker): the worker must drop the job
 * and write nothing of it.  Inside a caller's transaction, a 1 keeps the
 * job this worker's until the commit (no other worker writes meanwhile).
 */
int pk_store_job_renew(struct pk_store *store, gint64 job_id, const struct pk_store_worker *worker,
		       GError **err);
/*
 * How a worker's job ended: state PK_JOB_DONE, PK_JOB_FAILED or
 * PK_JOB_QUEUED (run again, not before not_before), with detail.  Written
 * only while the worker holds the job (as pk_store_job_renew() checks, in
 * the same transaction): 1 written, 0 refused, the lease lost — the late
 * result of a worker whose job another one has or will run.  now is the
 * row's updated time only.
 */
int pk_store_job_end(struct pk_store *store, gint64 job_id, const struct pk_store_worker *worker,
		     enum pk_job_state state, const char *detail, gint64 not_before, gint64 now,
		     GError **err);

/*
 * Every move of a job's state goes through one function of jobs.c, which
 * these call.  Moving to PK_JOB_RUNNING is only by pk_store_job_claim()
 * (a running job has a holder); this one moves a job as an operator
 * would, whoever holds it, with detail (why, what it produced) or NULL.
 * Allowed moves: queued -> running (claims only) | cancelled; running ->
 * done | failed | queued (requeued); failed -> queued (retry).  Anything
 * else is refused.
 */
int pk_store_job_set_state(struct pk_store *store, gint64 job_id, enum pk_job_state state,
			   const char *detail, GError **err);
/* A job's state — 1 found, 0 no such job. */
int pk_store_job_state(struct pk_store *store, gint64 job_id, enum pk_job_state *out_state,
		       GError **err);
/*
 * Put a running job back in the queue, not to run before not_before (Unix
 * time): the move running -> queued, with the retry time written in the
 * same transaction, whoever holds it (a worker uses pk_store_job_end()).
 */
int pk_store_job_retry_at(struct pk_store *store, gint64 job_id, gint64 not_before,
			  const char *detail, GError **err);

/* A job by id: 1 found (*out new), 0 none. */
int pk_store_job_get(struct pk_store *store, gint64 job_id, struct pk_store_job **out, GError **err);
/* The oldest queued job, due or not: 1 found (*out new), 0 none. */
int pk_store_job_next(struct pk_store *store, struct pk_store_job **out, GError **err);
/*
 * The oldest queued job of kind (PK_JOB_ANY_KIND: any) whose not_before
 * has come (<= now), without claiming it: 1 found (*out new, with its
 * attempts so far), 0 none.  *out_wait (may be NULL) is set to the
 * seconds until the next queued job of that kind is due, -1 when none is
 * queued.
 */
int pk_store_job_next_due(struct pk_store *store, enum pk_job_kind kind, gint64 now,
			  struct pk_store_job **out, gint64 *out_wait, GError **err);
/* Jobs in state (PK_JOB_ANY_STATE: all), oldest first: a new array of struct pk_store_job*. */
int pk_store_jobs(struct pk_store *store, enum pk_job_state state, GPtrArray **out,
		  GError **err);

/*
 * A newer version of a series replaces the older ones still waiting:
 * every queued series job of series_key whose version is below version is
 * cancelled with detail, in one transaction.  *out_ids (may be NULL) gets
 * the cancelled jobs' ids (gint64, oldest first) in a new GArray, empty
 * when none was waiting.
 */
int pk_store_jobs_cancel_superseded(struct pk_store *store, const char *series_key, int version,
				    const char *detail, GArray **out_ids, GError **err);
/*
 * A series job of series_key, version at least version, queued after job
 * after_id (a later version, or a resend) and not cancelled: 1 (its id in
 * *out_id), 0 none.  A mail that waited out its embargo asks whether it
 * was replaced meanwhile.
 */
int pk_store_job_newer_series(struct pk_store *store, const char *series_key, int version, gint64 after_id,
			      gint64 *out_id, GError **err);
/*
 * Running jobs whose lease ended (by the database's clock) go back to the queue (their
 * worker died, stalled or lost the store), each with a detail naming the
 * worker, in one transaction; *out_ids (may be NULL) as above.  Only
 * these: a job under a live lease is never taken from its worker.
 */
int pk_store_jobs_requeue_expired(struct pk_store *store, GArray **out_ids, GError **err);
/*
 * Running jobs held on worker's machine by a process that is gone (or by
 * worker itself, which holds none between jobs: a job whose end could not
 * be written) go back to the queue with detail, at once, without waiting
 * for their leases; *out_ids (may be NULL) as above.
 */
int pk_store_jobs_requeue_gone(struct pk_store *store, const struct pk_store_worker *worker,
			       const char *detail, GArray **out_ids, GError **err);

/*
 * How far a source was read, as the backend names it ("uidvalidity",
 * "last_uid", "commit:<epoch>"...).  Getting: *out is new, 1 found, 0 not.
 */
int pk_store_source_state_get(struct pk_store *store, gint64 source_id, const char *key,
			      char **out, GError **err);
int pk_store_source_state_set(struct pk_store *store, gint64 source_id, const char *key,
			      const char *value, GError **err);
/*
 * Compare and set: key's value becomes value (NULL: none) only when it
 * is old now (NULL: none, or no row), so that of two workers that saw
 * the same move only one acts on it.  1 set, 0 not (another value is
 * there).  Inside a caller's transaction, so that what is done for the
 * move is written with it or not at all.
 */
int pk_store_source_state_swap(struct pk_store *store, gint64 source_id, const char *key,
			       const char *old, const char *value, GError **err);

/*
 * A source was read to its end at time (Unix seconds): its last
 * successful read, as monitoring and `printkbot queue --sources` show it.
 * Kept in source_state beside the backends' positions (key "last_read").
 */
int pk_store_source_read(struct pk_store *store, gint64 source_id, gint64 time, GError **err);

/* A source as the store keeps it.  Freed with pk_store_source_free(). */
struct pk_store_source {
	gint64 id;
	char *kind;               /* "imap", "maildir", "mbox", "public-inbox", "git" */
	char *name;               /* a daemon's: its [source NAME] */
	gint64 last_read;         /* pk_store_source_read()'s time, 0 when never read to its end */
};
void pk_store_source_free(struct pk_store_source *s);
/* Every source of the store, by id: a new array of struct pk_store_source*. */
int pk_store_sources(struct pk_store *store, GPtrArray **out, GError **err);

/*
 * A mail the daemon read.  state is "pending" (a patch or cover letter
 * waiting for its series), "queued" (in job_id) or "skipped" (reason says
 * why).  Strings are owned by the struct when it comes from the store
 * (pk_store_mail_free()), borrowed when passed in.
 */
struct pk_store_mail {
	gint64 id, source_id, job_id;
	char *message_id;         /* without <> */
	char *in_reply_to;        /* without <>, or NULL */
	char *refs;               /* References without <>, space-separated, or NULL */
	char *subject, *author_email;
	int version, number, total;
	int churn;                /* printk-family calls its patch changes (the scan's count; at
	                             least 1 when the scan finds churn without a call: pr_fmt) */
	char *state, *reason;
	gint64 received;          /* Unix time it was read; 0 = now when added */
};
void pk_store_mail_free(struct pk_store_mail *m);

/*
 * Add a mail unless its Message-ID is known: *out_existed (may be NULL)
 * says which, and a known mail is left as it was.  raw (len bytes, may be
 * NULL) is kept gzip-compressed, for the job that tests it.
 */
int pk_store_mail_add(struct pk_store *store, gint64 *out_id, bool *out_existed,
		      const struct pk_store_mail *mail, const char *raw, size_t len,
		      GError **err);
/* The mail with that Message-ID (with or without <>): 1 found, 0 not. */
int pk_store_mail_find(struct pk_store *store, const char *message_id, gint64 *out_id,
		       GError **err);
/* Mails in state (NULL: all), oldest first: a new array of struct pk_store_mail*. */
int pk_store_mails(struct pk_store *store, const char *state, GPtrArray **out, GError **err);
/* One mail by id: 1 found (*out new), 0 not. */
int pk_store_mail_get(struct pk_store *store, gint64 mail_id, struct pk_store_mail **out,
		      GError **err);
/* The mail as received (NUL-terminated, *out_len bytes); caller frees.  1 found, 0 none kept. */
int pk_store_mail_raw(struct pk_store *store, gint64 mail_id, char **out, size_t *out_len,
		      GError **err);
/* Move a mail to state with reason (may be NULL) and job (0 = none). */
int pk_store_mail_set_state(struct pk_store *store, gint64 mail_id, const char *state,
			    const char *reason, gint64 job_id, GError **err);

/*
 * The reply to one tested mail, or the mail to the author of one pushed
 * commit (push_commit_id instead of mail_id: one of the two).  It is
 * rendered once with its Message-ID and stored in the same transaction
 * as the review, so a resend after a crash sends these very bytes.  text
 * is NULL when no mail is to be sent (reply_on); the row still says the
 * mail was tested.
 */
struct pk_store_reply {
	gint64 id, mail_id, review_id, job_id;
	gint64 push_commit_id;    /* the pushed commit it is about, 0 for a patch mail's reply */
	char *after_commit;       /* the tested commit, where a following patch goes */
	char *message_id;         /* the reply's, without <> */
	char *sender;             /* envelope sender */
	char *recipients;         /* envelope recipients, one a line */
	char *text;               /* the whole mail (CRLF line ends), or NULL */
	gint64 sent;              /* Unix time it was sent, 0 while not */
	/* what the list's policy made of it (report/listpolicy.h): */
	char *list_name;          /* the [list] or [tree] group's name, NULL for none */
	char *author;             /* the patch's or commit's author's address, lower case, or NULL */
	char *effect;             /* pk_reply_effect_key() of its review, or NULL */
	char *rule;               /* the rule of pk_reply_judge() that held, or NULL */
	char *held;               /* why no mail goes out (text may be set: a mail replaced while
				     it waited), NULL: mailed when text is set */
	gint64 created;           /* when it was decided (Unix time; 0 = now when added) */
	gint64 send_job;          /* read only: the job that sends it, 0 for none */
};
void pk_store_reply_free(struct pk_store_reply *r);
/* Add a reply (mail_id and push_commit_id unique: a second one to a mail or commit is refused). */
int pk_store_reply_add(struct pk_store *store, gint64 *out_id, const struct pk_store_reply *reply,
		       GError **err);
/* A reply by id or by the mail it answers: 1 found (*out new), 0 not. */
int pk_store_reply_get(struct pk_store *store, gint64 reply_id, struct pk_store_reply **out,
		       GError **err);
int pk_store_reply_for_mail(struct pk_store *store, gint64 mail_id, struct pk_store_reply **out,
			    GError **err);
/* The reply whose own Message-ID (without <>) is message_id: 1 found, 0 not. */
int pk_store_reply_by_message_id(struct pk_store *store, const char *message_id,
				 struct pk_store_reply **out, GError **err);
/* The reply went out at time (0 = now); its review is marked posted too. */
int pk_store_reply_sent(struct pk_store *store, gint64 reply_id, gint64 time, GError **err);
/* The job that sends a reply (inside the caller's transaction that queued it). */
int pk_store_reply_set_send_job(struct pk_store *store, gint64 reply_id, gint64 job_id, GError **err);
/* A reply that is not to go out after all: why (its send job, if any, the caller's). */
int pk_store_reply_hold(struct pk_store *store, gint64 reply_id, const char *why, GError **err);
/*
 * How many mails (rows with a text, nothing held) were decided since
 * (Unix time, inclusive) under the group list_name (NULL: mail of no
 * group), of author when author is not NULL: what a list's brakes
 * (max_per_day, max_per_author_day) count.
 */
int pk_store_replies_mailed_since(struct pk_store *store, const char *list_name, const char *author,
				  gint64 since, gint64 *out_count, GError **err);
/*
 * The first reply to a patch mail of author with effect key effect that
 * was mailed or waits to be (a text, nothing held): 1 found (*out new),
 * 0 none.  A resend or a later version that does the same is not mailed
 * again.
 */
int pk_store_reply_same_effect(struct pk_store *store, const char *author, const char *effect,
			       struct pk_store_reply **out, GError **err);
/*
 * A newer version or a resend of a series replaces its mails still
 * waiting out their embargo: every queued reply job of series_key (as
 * pk_store_job_add_reply() queued it) whose version is at most version is
 * cancelled with detail, and its reply held with detail, in one
 * transaction.  *out_ids (may be NULL): the cancelled jobs, as
 * pk_store_jobs_cancel_superseded() gives them.
 */
int pk_store_replies_replace_waiting(struct pk_store *store, const char *series_key, int version,
				     const char *detail, GArray **out_ids, GError **err);

/*
 * A command by mail the daemon acted on (#printkbot, daemon.h): its mail
 * (a row of mails, queued in job_id), its sender (lower case), its
 * thread (what the per-thread limit counts: "series N", N the job that
 * tested the series the command is about, or "no series"; rows stored
 * before were keyed on a Message-ID), the command's name and argument.
 * Borrowed when passed in.
 */
struct pk_store_command {
	gint64 mail_id, job_id;
	const char *sender;
	const char *thread;
	const char *command;      /* "test", "help", "unknown" */
	const char *arg;          /* or NULL */
	gint64 created;           /* Unix time; 0 = now */
};
/* Add one (one per mail: a second for the same mail is refused). */
int pk_store_command_add(struct pk_store *store, gint64 *out_id, const struct pk_store_command *c,
			 GError **err);
/*
 * How many commands were acted on since (Unix time, inclusive): of
 * sender when sender is not NULL, of thread when thread is not NULL (one
 * of them, the other NULL), all of them when both are NULL.  What the
 * rate limits count.
 */
int pk_store_commands_since(struct pk_store *store, const char *sender, const char *thread, gint64 since,
			    gint64 *out_count, GError **err);

/* ---- figures for monitoring (figures.c) --------------------------------- */

/*
 * The queue at a glance: jobs by kind (PK_JOB_UNKNOWN: a kind this
 * printkbot does not know) and state, and when the oldest queued job was
 * queued (its created time; 0 when none is queued).  One read, no write:
 * a read-only store answers it.
 */
#define PK_JOB_KINDS (PK_JOB_COMMAND + 1)
#define PK_JOB_STATES (PK_JOB_CANCELLED + 1)
struct pk_store_queue_figures {
	gint64 jobs[PK_JOB_KINDS][PK_JOB_STATES];
	gint64 oldest_queued;
};
int pk_store_queue_figures(struct pk_store *store, struct pk_store_queue_figures *out,
			   GError **err);

/*
 * The tested patches and commits of each list by the rule that decided
 * their mail (report/listpolicy.h) and whether it went (or goes) out:
 * what the lists were spared, as monitoring shows it.  list "" is mail
 * of no group, rule "" a row decided before there were rules (or a
 * command's answer).  Freed with pk_store_reply_figure_free().
 */
struct pk_store_reply_figure {
	char *list;               /* "list NAME", "tree NAME", or "" */
	char *rule;
	bool mailed;              /* a mail that went or goes out (false: held, with why) */
	gint64 count;
};
void pk_store_reply_figure_free(struct pk_store_reply_figure *f);
/* Every (list, rule, mailed) with its count: a new array of struct pk_store_reply_figure*. */
int pk_store_reply_figures(struct pk_store *store, GPtrArray **out, GError **err);

/* What pk_store_histogram() measures, in seconds, from rows the store keeps anyway. */
enum pk_store_measure {
	PK_MEASURE_MAIL_TO_REVIEW,  /* a tested mail: from when a source handed it over to its review */
	PK_MEASURE_MAIL_TO_REPLY,   /* a sent reply: from when its mail was handed over to the send */
	PK_MEASURE_BUILD,           /* a kernel build, grouped by status ("ok", "failed") */
	PK_MEASURE_BOOT,            /* a QEMU boot, grouped by status ("ok", "panic", "timeout", "failed") */
};

/* One histogram of a measure.  Freed with pk_store_histogram_free(). */
struct pk_store_histogram {
	char *group;              /* the status its rows share; NULL for a measure without groups */
	gint64 count;             /* rows measured */
	double sum;               /* the sum of their seconds */
	gint64 *le;               /* le[i]: rows of at most bounds[i] seconds, one per bound */
};
void pk_store_histogram_free(struct pk_store_histogram *h);

/*
 * Every row the store holds of measure, counted under each of the n
 * bounds (ascending; at most 32): a new array of struct
 * pk_store_histogram*, one per group that has rows, by group name; a
 * measure without groups gives exactly one, zeros when it has no row.
 */
int pk_store_histogram(struct pk_store *store, enum pk_store_measure measure, const double *bounds,
		       guint n, GPtrArray **out, GError **err);

#endif
