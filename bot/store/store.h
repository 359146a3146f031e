/*
 * store.h - the store stage: everything printkbot learns lands in one
 * database (a SQLite file, or PostgreSQL for workers on several hosts),
 * and history questions are answered from it.
 *
 * This is the only module that talks SQL; callers pass and get plain
 * structs (the ones of patch.h, scan.h, build.h, boot.h, kmsg.h, kdiff.h)
 * and row ids (gint64, 0 meaning "none").  The schema is db/schema.sql,
 * compiled into the binary with the numbered migrations of db/.  This
 * header is the whole contract; behind it, one file per domain (each
 * section below names its file) shares store/private.h.
 *
 * Opening: pk_store_open() creates the database or migrates an older one
 * (in one transaction) and refuses a newer one or a file that is not a
 * printkbot database, naming what it found.  WAL, a busy timeout and
 * foreign keys are set on every connection.
 *
 * Transactions: every pk_store_add_*() is atomic by itself; a caller that
 * writes one job's results wraps them in pk_store_begin() and
 * pk_store_commit() (pk_store_rollback() on any failure) so a crash
 * leaves either all of them or none.
 *
 * Ownership: input structs and strings are borrowed for the call and
 * never kept.  Everything returned through an out parameter is new and
 * owned by the caller (free functions named with each).  On failure -1 is
 * returned, err is set, and out parameters are untouched.  Lookups return
 * 1 when found, 0 when not (out untouched), -1 on error.
 *
 * Sharing: records and printk index entries are stored once.  A boot's
 * records point at shared record lines (text, level, caller, dict) and
 * keep only their sequence number and time; a boot's printk index is a
 * shared set of shared entries, and the set of a patched kernel is stored
 * as a difference from its base build's set.  So a base boot, stored
 * once, serves every patch tested on that base, and pk_store_load_capture()
 * gives its capture back without booting again.
 */
#ifndef PK_STORE_H
#define PK_STORE_H

#include <glib.h>
#include <stdbool.h>

#include "lab/boot.h"
#include "lab/build.h"
#include "lab/coverage.h"
#include "analysis/kdiff.h"
#include "analysis/kmsg.h"
#include "base/patch.h"
#include "base/verdict.h"
#include "analysis/scan.h"

/* The schema version this printkbot reads and writes (PRAGMA user_version). */
#define PK_STORE_SCHEMA_VERSION 11

/* ---- the database (db.c) ----------------------------------------------- */

struct pk_store;

/*
 * Open (creating or migrating) the database at path; NULL means
 * $PRINTKBOT_DB, else <cache dir>/printkbot.db.  A postgresql:// (or
 * postgres://) URL opens that PostgreSQL database instead of a SQLite
 * file ([store] url).  *out is freed with pk_store_close().
 */
int pk_store_open(struct pk_store **out, const char *path, GError **err);

/* How pk_store_open_ext() opens the database. */
enum pk_store_open_flags {
	/*
	 * Read only, for the commands that only read (history, report,
	 * queue): another user's file or a read-only mount opens.  Nothing
	 * is written, not even WAL mode (SQLite opens the file read-only and
	 * sets query_only; PostgreSQL makes the session's transactions read
	 * only).  A missing file, an empty database or an older schema is
	 * refused with what to run instead: a migration is a write.
	 */
	PK_STORE_OPEN_READONLY = 1 << 0,
};
/* pk_store_open() with flags (enum pk_store_open_flags, or'd; 0 is pk_store_open()). */
int pk_store_open_ext(struct pk_store **out, const char *path, unsigned flags, GError **err);
void pk_store_close(struct pk_store *store);
typedef struct pk_store pk_store;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_store, pk_store_close)

/* The database file or URL in use, as opened (borrowed, valid until close). */
const char *pk_store_path(const struct pk_store *store);
/*
 * The same as logs and messages show it: a URL's password as ***
 * (pk_url_redact()).  Borrowed, valid until close.  Every message of the
 * store names the database this way.
 */
const char *pk_store_name(const struct pk_store *store);
/*
 * One intake per database: on PostgreSQL, a lock of the database session
 * (workers on many machines share the database, so a file lock cannot
 * say it).  1 taken, held until the store is closed; a connection made
 * again takes it again at once; 0 when the database has no such lock
 * (SQLite: the caller locks a file beside it); -1 with err when another
 * intake holds it.
 */
int pk_store_intake_lock(struct pk_store *store, GError **err);
/*
 * Whether the intake's lock was lost: the connection was made again and
 * the lock could not be taken again (another intake had taken it in
 * between, or the connection failed at once).  This intake must stop.
 */
bool pk_store_intake_lost(const struct pk_store *store);
/* The path pk_store_open(NULL) uses; caller frees. */
char *pk_store_default_path(void);

/* One job's writes in one transaction.  Rollback is safe without a begin. */
int pk_store_begin(struct pk_store *store, GError **err);
int pk_store_commit(struct pk_store *store, GError **err);
void pk_store_rollback(struct pk_store *store);

/* What pk_store_check_file() found. */
struct pk_store_check {
	int version;                /* the schema version (SQLite's PRAGMA user_version), -1 when unreadable */
	GPtrArray *problems;        /* char*: what is wrong; empty when healthy */
};
void pk_store_check_clear(struct pk_store_check *check);

/*
 * Check a database file without changing it (read-only, no migration):
 * integrity_check, foreign_key_check and the schema version (a problem
 * when it is newer than PK_STORE_SCHEMA_VERSION or missing).  A file that
 * is not SQLite, or too damaged to read its schema, is a problem too.
 * Returns -1 only when the file does not exist or cannot be opened.
 * path may be a PostgreSQL URL: its schema version is read, and no
 * integrity or reference check is run (PostgreSQL keeps both itself).
 */
int pk_store_check_file(struct pk_store_check *out, const char *path, GError **err);

/*
 * The store's secret called name: 32 random bytes as 64 hex digits, made
 * the first time it is asked for and the same ever after, for every
 * process on the store.  *out new.  Made with a write: not on a read-only
 * store.
 */
int pk_store_secret(struct pk_store *store, const char *name, char **out, GError **err);

/* Row counts per table, for tests and the bench: "table" -> count. */
int pk_store_count(struct pk_store *store, const char *table, gint64 *out, GError **err);

/* ---- sources, patches, findings (patches.c) ---------------------------- */

/*
 * The source a patch came from, found or added: kind is "mbox", "maildir",
 * "imap", "public-inbox" or "git"; name is a list, a mailbox, a repository
 * and branch; url may be NULL.
 */
int pk_store_add_source(struct pk_store *store, gint64 *out_id, const char *kind,
			const char *name, const char *url, GError **err);

/* The name of source source_id ([source NAME]): 1 found (*out new), 0 not. */
int pk_store_source_name(struct pk_store *store, gint64 source_id, char **out, GError **err);

/* A series, found by its cover letter's Message-ID or added. */
struct pk_store_series {
	gint64 source_id;             /* 0 = unknown */
	const char *cover_message_id; /* with or without <> */
	const char *cover_subject;
	int version, total;           /* 0 = 1 */
};
int pk_store_add_series(struct pk_store *store, gint64 *out_id,
			const struct pk_store_series *series, GError **err);

/* What the store needs beside a struct pk_patch; every field may be 0/NULL. */
struct pk_store_patch_opts {
	gint64 source_id, series_id;
	const char *commit;     /* the commit, for a patch read from git */
	const char *raw_ref;    /* where the patch can be read again, when not kept */
	bool keep_raw;          /* keep description + diff, gzip-compressed */
	int version, number, total; /* [PATCH vV N/T]; 0 = read them from the subject */
};
#define PK_STORE_PATCH_OPTS_INIT { .keep_raw = true }

/*
 * A patch, found by Message-ID (or, without one, by commit) or added.
 * *out_existed (may be NULL) says which.  A patch is never rewritten: the
 * same mail received twice is one row.
 */
int pk_store_add_patch(struct pk_store *store, gint64 *out_id, bool *out_existed,
		       const struct pk_patch *patch, const struct pk_store_patch_opts *opts,
		       GError **err);

/* The stored raw patch (description + diff) of a patch that kept it; caller frees. */
int pk_store_patch_raw(struct pk_store *store, gint64 patch_id, char **out, GError **err);

/*
 * The static findings of a patch, in scan order (their seq is the index in
 * scan->findings), and the scan's verdict.  A patch that already has
 * findings keeps them: the scan of the same text gives the same result.
 */
int pk_store_add_findings(struct pk_store *store, gint64 patch_id,
			  const struct pk_scan *scan, GError **err);

/* ---- builds, boots, records, indexes, noise (lab.c) -------------------- */

/*
 * A kernel build of tree_commit (base_commit is what it was applied on; the
 * same commit for a base build) with the config config_hash.
 */
int pk_store_add_build(struct pk_store *store, gint64 *out_id, const char *tree_commit,
		       const char *base_commit, const char *config_hash,
		       const struct pk_build_result *res, GError **err);
/* The latest build of (tree_commit, config_hash): 1 found, 0 not. */
int pk_store_find_build(struct pk_store *store, const char *tree_commit,
			const char *config_hash, gint64 *out_id, GError **err);

/*
 * A boot of a build: its status, console (gzip) and, when res->capture is
 * set, its records and printk index, shared as described above.
 */
int pk_store_add_boot(struct pk_store *store, gint64 *out_id, gint64 build_id,
		      const struct pk_boot_result *res, GError **err);
/*
 * The latest successful boot of the latest ok build of (tree_commit,
 * config_hash): the before side of a test, already booted.  1 found, 0 not.
 */
int pk_store_find_boot(struct pk_store *store, const char *tree_commit,
		       const char *config_hash, gint64 *out_boot_id, GError **err);
/* Every successful boot of a build, oldest first (gint64 ids in a new GArray). */
int pk_store_build_boots(struct pk_store *store, gint64 build_id, GArray **out, GError **err);

/*
 * A boot's capture rebuilt from the store: records (seq, time, level,
 * facility, cont, caller, text, dict) and index in their original order,
 * lost, complete and problems as they were.  Free with pk_capture_free().
 */
int pk_store_load_capture(struct pk_store *store, gint64 boot_id,
			  struct pk_capture **out, GError **err);
/* A boot's console (ttyS0) uncompressed; caller frees. */
int pk_store_boot_console(struct pk_store *store, gint64 boot_id, char **out, GError **err);

/*
 * A build's noise mask as pk_noise_keys() lines (NULL-terminated), learnt
 * from boots boots.  Setting replaces the previous mask.  Getting: *out is
 * a new strv (g_strfreev), 1 found, 0 when no mask was stored.
 */
int pk_store_set_noise(struct pk_store *store, gint64 build_id, const char *const *keys,
		       unsigned boots, GError **err);
int pk_store_get_noise(struct pk_store *store, gint64 build_id, char ***out, GError **err);
/*
 * Grow a build's stored mask by keys, learnt from boots more boots (the
 * confirmation boots of a test); a build without a mask is left alone.
 */
int pk_store_add_noise(struct pk_store *store, gint64 build_id, const char *const *keys,
		       unsigned boots, GError **err);

/* ---- tests, changes, reviews and history (reviews.c) ------------------- */

/* One tested patch.  Ids are 0 for a side that does not exist. */
struct pk_store_test {
	gint64 patch_id;
	gint64 before_build, after_build;
	gint64 before_boot, after_boot;
	enum pk_verdict verdict;
	const char *reason;         /* why, in a sentence, or NULL */
	double seconds;
	const struct pk_kdiff *diff;  /* its changes and index changes, or NULL */
	/*
	 * pk_confirmation_name() of each stored static finding of the patch, in
	 * scan order (as many as pk_store_add_findings() stored), or NULL.
	 */
	const char *const *confirmations;
	unsigned n_confirmations;
	const GPtrArray *coverage;  /* struct pk_file_coverage* (lab/coverage.h), or NULL */
};

/* Store a test with its changes and coverage; the patch's verdict becomes this one. */
int pk_store_add_test(struct pk_store *store, gint64 *out_id,
		      const struct pk_store_test *test, GError **err);

/* A review: model is the review.h JSON model, body its rendering. */
int pk_store_add_review(struct pk_store *store, gint64 *out_id, gint64 test_id,
			const char *model_json, const char *body, GError **err);
/* Where and when a review was posted (time: Unix seconds; 0 = now). */
int pk_store_review_posted(struct pk_store *store, gint64 review_id, const char *posted_to,
			   const char *reply_message_id, gint64 time, GError **err);
/*
 * The newest review of the tested commit commit names (its id, or a
 * prefix of 4 hex digits or more): 1 found (*out_review_id), 0 none.  A
 * prefix of two tested commits is an error (PK_ERROR_INPUT) naming them.
 */
int pk_store_review_of_commit(struct pk_store *store, const char *commit, gint64 *out_review_id,
			      GError **err);
/* A stored review's model and body (either out may be NULL); caller frees. */
int pk_store_review_get(struct pk_store *store, gint64 review_id, char **out_model_json,
			char **out_body, GError **err);

/* ---- KCIDB (kcidb.c): what report/kcidb.h exports of a review ------------ */

/* A stored build, as a review's test names it (id 0: none). */
struct pk_store_kcidb_build {
	gint64 id;
	char *tree_commit, *config_hash;
	bool ok;
	double seconds;             /* -1 when unknown */
	char *errors;               /* the compiler's first error lines, or NULL */
	char *log_path;             /* the make log where it was written, or NULL */
	gint64 created;             /* Unix seconds, when it was stored (the build's end) */
};

/* A stored boot (id 0: none). */
struct pk_store_kcidb_boot {
	gint64 id;
	char *status;               /* "ok", "panic", "timeout", "failed" */
	double seconds;             /* -1 when unknown */
	char *accel, *detail;
	gint64 created;
};

/* A patch of the review's series, in order. */
struct pk_store_kcidb_patch {
	gint64 patch_id;
	int number;
	char *message_id;           /* without <>, or NULL (a commit) */
	char *raw;                  /* the patch as kept (commit message and diff), or NULL */
};

/* One review, its test, patch, series and the kernels compared; strings owned. */
struct pk_store_kcidb {
	gint64 review_id, test_id, patch_id, series_id;   /* series_id 0: none */
	char *model_json;
	gint64 review_created, test_created;
	char *verdict, *reason;
	double seconds;
	char *message_id, *subject, *commit_id;
	int number, total, version;
	char *cover_message_id, *cover_subject;
	GPtrArray *patches;         /* struct pk_store_kcidb_patch*: the series (or the patch alone) */
	char *first_model;          /* the model of the review of the series' first tested patch
	                               (its before side is the series' base), or NULL */
	struct pk_store_kcidb_build before_build, after_build;
	struct pk_store_kcidb_boot before_boot, after_boot;
};
/* The review review_id for an export: 0 and *out, or -1 (PK_ERROR_INPUT: no such review). */
int pk_store_kcidb_review(struct pk_store *store, gint64 review_id, struct pk_store_kcidb **out, GError **err);
void pk_store_kcidb_free(struct pk_store_kcidb *k);
typedef struct pk_store_kcidb pk_store_kcidb;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_store_kcidb, pk_store_kcidb_free)
/*
 * The newest review of test test_id, or with test_id 0 of any test of
 * patch patch_id (a static finding's row names no test): 1 and
 * *out_review_id, 0 none.
 */
int pk_store_review_of_test(struct pk_store *store, gint64 test_id, gint64 patch_id, gint64 *out_review_id,
			    GError **err);
/* The newest review's id (0: none), where a daemon's KCIDB posts start from. */
int pk_store_review_last(struct pk_store *store, gint64 *out, GError **err);
/* The ids of the reviews of tests stored after review id after, oldest first: a new GArray of gint64. */
int pk_store_reviews_after(struct pk_store *store, gint64 after, GArray **out, GError **err);

/*
 * What `history` asks; NULL/0 fields do not filter, the others combine
 * (AND).  Strings match exactly except: grep is a substring of the old or
 * the new text, author a case-insensitive substring of the name or
 * address, commit a prefix.  since and until are Unix times of the
 * patch's date, since inclusive and until exclusive.  stage is "static"
 * (scan findings), "boot" (console changes) or "index" (printk index
 * changes).
 */
struct pk_history_filter {
	const char *file, *func, *grep, *kind, *verdict, *author, *source;
	const char *commit, *message_id, *stage;
	gint64 since, until;
	unsigned limit;             /* at most this many rows, 0 = all */
};

/* One stored change and the patch it belongs to. */
struct pk_history_row {
	gint64 patch_id, test_id;   /* test_id 0 for a static finding */
	char *subject, *message_id, *commit, *author;
	gint64 time;                /* the patch's date, 0 when unknown */
	char *verdict, *stage, *kind, *file;
	int line;
	char *func;                 /* NULL for static findings */
	char *old_text, *new_text;
	char *source;               /* the source's name, or NULL */
	char *link;                 /* lore link for a mail, else the commit, else NULL */
};
void pk_history_row_free(struct pk_history_row *row);

/*
 * Rows matching filter, newest patch first (then in stage and stored
 * order).  *out is a new array of struct pk_history_row* (freeing it frees
 * them).
 */
int pk_store_history(struct pk_store *store, GPtrArray **out,
		     const struct pk_history_filter *filter, GError **err);

/* ---- what the static site lists (site.c) --------------------------------- */

/*
 * A tested patch and its newest review, as `report --site` lists it.
 * Strings owned (pk_store_site_patch_free()); NULL when unknown.
 */
struct pk_store_site_patch {
	gint64 patch_id, review_id;
	gint64 reviews;             /* how many reviews the patch has (the newest is review_id) */
	gint64 job_id;              /* the daemon's series job that read its mail, 0: none */
	gint64 series_id;           /* its series row, 0: none */
	char *subject, *author;     /* author: the name, else From: as written */
	char *message_id, *commit;  /* a mail's id (without <>), a commit's id */
	char *verdict;              /* of the newest review's test */
	char *source;               /* the source's name ([source NAME], TREE/BRANCH) */
	char *base_commit;          /* the commit its before side built, NULL when none built */
	gint64 time;                /* the patch's date, 0 when unknown */
	int number, total, version; /* [PATCH vV N/T] */
};
void pk_store_site_patch_free(struct pk_store_site_patch *p);
/* Every patch that has a review, by patch id: a new array of struct pk_store_site_patch*. */
int pk_store_site_patches(struct pk_store *store, GPtrArray **out, GError **err);

/* A file a stored change names, and a patch whose change names it. */
struct pk_store_site_file {
	char *file;
	gint64 patch_id;
};
void pk_store_site_file_free(struct pk_store_site_file *f);
/*
 * Every (file, patch) pair of the findings, console and index changes
 * (what history --file reads), once each, by file then patch: a new
 * array of struct pk_store_site_file*.
 */
int pk_store_site_files(struct pk_store *store, GPtrArray **out, GError **err);

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
};

/*
 * Claim the oldest queued job of kind (PK_JOB_ANY_KIND: any) whose
 * not_before has come (<= now), atomically: it moves to running, held
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

/* ---- pushes to watched branches (pushes.c) ----------------------------- */

/*
 * One commit of a push, as the push job goes through it.  state is
 * "queued" (waiting for the job), "tested" (verdict, review_id),
 * "tested-before" (the same patch-id on the same parent tree was tested
 * already: same_as names that commit's row, verdict and review_id are
 * its), "merge" (listed, not tested) or "skipped" (reason says why: a
 * root commit, it left the branch before it was tested...).  Strings
 * are owned when the struct comes from the store
 * (pk_store_push_commit_free()), borrowed when passed in.
 */
struct pk_store_push_commit {
	gint64 id, push_id;
	int seq;                  /* 1 the oldest */
	char *commit_id, *parent; /* full hex ids; parent NULL for a root commit */
	char *subject;
	char *author, *committer; /* "Name <addr>" */
	char *state, *reason;
	char *patch_key;          /* pk_repo_patch_key(), once read, or NULL */
	gint64 same_as;
	char *verdict;
	gint64 review_id;
	/* read only: the mail about it, when one was rendered */
	char *mail_message_id;
	gint64 mail_sent;         /* when it was sent, 0 while not */
};
void pk_store_push_commit_free(struct pk_store_push_commit *c);

/* A push: what a watched branch moved from and to (strings as above). */
struct pk_store_push {
	gint64 id, source_id, job_id;
	char *tree, *branch;      /* [tree NAME] and the branch */
	char *old_tip, *new_tip;  /* new_tip NULL: the branch was deleted */
	bool forced;              /* old_tip is not in new_tip's history */
	int commits;              /* rows of push_commits */
	int left_out;             /* older commits over max_commits, not listed */
	char *note;               /* what was left out, or NULL */
	gint64 created;
	/* read only: its job's state ("done"...), NULL without a job */
	char *job_state;
};
void pk_store_push_free(struct pk_store_push *p);
typedef struct pk_store_push pk_store_push;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_store_push, pk_store_push_free)

/*
 * Add a push and its commits (struct pk_store_push_commit*, in order,
 * may be NULL; each one's state as given, "queued" when NULL), with
 * push->commits set from them.  Atomic; inside a caller's transaction
 * with the tip it moves (pk_store_source_state_swap()) and its job.
 */
int pk_store_push_add(struct pk_store *store, gint64 *out_id, const struct pk_store_push *push,
		      const GPtrArray *commits, GError **err);
/* The job that tests a push. */
int pk_store_push_set_job(struct pk_store *store, gint64 push_id, gint64 job_id, GError **err);
/*
 * A push and its commits in order (*out_commits, may be NULL: a new array
 * of struct pk_store_push_commit*): 1 found (*out new), 0 not.
 */
int pk_store_push_get(struct pk_store *store, gint64 push_id, struct pk_store_push **out,
		      GPtrArray **out_commits, GError **err);
/*
 * Pushes newest first (a new array of struct pk_store_push*): of the
 * branch source (its name, "TREE/BRANCH", or its tree "TREE"; NULL: all),
 * at most limit (0: all).
 */
int pk_store_pushes(struct pk_store *store, const char *source, unsigned limit, GPtrArray **out,
		    GError **err);
/*
 * What became of a pushed commit: c->id's state, reason, patch_key,
 * same_as, verdict and review_id are written.
 */
int pk_store_push_commit_set(struct pk_store *store, const struct pk_store_push_commit *c,
			     GError **err);
/*
 * The first pushed commit tested with patch key key ("tested": not one
 * that was itself taken from another): 1 found (*out new), 0 none.
 */
int pk_store_push_commit_by_key(struct pk_store *store, const char *key,
				struct pk_store_push_commit **out, GError **err);

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
