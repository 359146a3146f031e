/*
 * store.h - the store stage: everything printkbot learns lands in one
 * database (a SQLite file, or PostgreSQL for workers on several hosts),
 * and history questions are answered from it.
 *
 * This is the only module that talks SQL; callers pass and get plain
 * structs (the ones of patch.h, scan.h, build.h, boot.h, kmsg.h, kdiff.h)
 * and row ids (gint64, 0 meaning "none").  The schema is db/schema.sql,
 * compiled into the binary with the numbered migrations of db/.  This
 * header and store/queue.h (the daemon's queue, mails and replies, and
 * the figures monitoring reads) are the whole contract; behind them, one
 * file per domain (each section names its file) shares store/private.h.
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
#define PK_STORE_SCHEMA_VERSION 14

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
 * same commit for a base build) with the config config_hash, for the
 * architecture arch (lab/arch.h's name: "x86_64", "arm64").
 */
int pk_store_add_build(struct pk_store *store, gint64 *out_id, const char *tree_commit,
		       const char *base_commit, const char *config_hash, const char *arch,
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
/* The .config a build was made with: 1 with *out (caller frees), 0 when it has none. */
int pk_store_build_config(struct pk_store *store, gint64 build_id, char **out, GError **err);
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
	gint64 review_id;           /* what `report` takes: the test's newest review (a static
				       finding: the patch's), 0 when the patch was never tested */
	char *subject, *message_id, *commit, *author;
	gint64 time;                /* the patch's date, 0 when unknown */
	char *verdict, *stage, *kind, *file;
	int line;
	char *func;                 /* NULL for static findings */
	char *old_text, *new_text;
	char *source;               /* the source's name, or NULL */
	char *link;                 /* lore link for a mail, else the commit, else NULL */
	char *arch;                 /* what the test's kernels were built for ("x86_64",
				       "arm64"); NULL for a static finding, or a build stored
				       before schema 13 */
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
	gint64 before_boot, after_boot;   /* the boots the review compared, 0: none */
	gint64 before_build, after_build;   /* the kernels' builds, 0: none */
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

/* The daemon's queue (jobs, mails, replies, sources, commands) is store/queue.h. */

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

#endif
