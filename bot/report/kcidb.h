/*
 * kcidb.h - stored reviews as one KCIDB document (KernelCI's common
 * database, I/O schema v5.3): what CI systems submit, checkouts, builds
 * and tests, so that printkbot's results sit beside theirs.
 *
 * What a review becomes:
 *   - a checkout per tested series on its base: git_commit_hash the base,
 *     patchset_hash over the patches of the series as stored (sha256 of
 *     each, newline-terminated, hashed again: KCIDB's recipe), message_id
 *     the cover letter's (else the first patch's), valid false when the
 *     series did not apply; and one checkout of the base alone (an empty
 *     patchset) for the kernel every patch is compared with;
 *   - a build per kernel: the base's, and each patch's (its commit in the
 *     lab's tree): architecture, config_name, compiler, status, duration,
 *     the compiler's errors as log_excerpt when it failed, the make log as
 *     a file:// log_url when the store names one still there;
 *   - a test per boot (path "boot": PASS, FAIL for a panic or a hang,
 *     MISS when QEMU itself failed), and per comparison of a patch's
 *     kernel with its base's: "printk.console_diff" (the boot log) and
 *     "printk.index_diff" (the printk index), PASS when nothing changed,
 *     FAIL when it did (the changes in log_excerpt; whether wanted is the
 *     maintainer's call), SKIP when a file the patch touches is not
 *     compiled in (nothing vouched for); each with the per-file coverage
 *     (booted, built, not-built and why) in misc.coverage.
 * Ids are "ORIGIN:" and what identifies the object whatever store it
 * came from: the base and patchset hash, the tree commit and config, the
 * boot's time.  Every string is valid UTF-8 and cut to the schema's
 * limits.
 */
#ifndef PK_KCIDB_H
#define PK_KCIDB_H

#include <glib.h>
#include <stdbool.h>

#include "store/store.h"

/*
 * [kcidb]: KCIDB exports (what follows) and the daemon's posting of
 * each finished review.  url is an http(s) URL or NULL (no posting);
 * token is token_file's first line, read at load (a file group or
 * others may read is refused), NULL without url.
 */
struct pk_kcidb_config {
	char *origin;             /* the CI system's name in every id: [a-z0-9_]+, default "printkbot" */
	char *url;                /* where the daemon posts each review's document, or NULL */
	char *token;              /* sent as "Authorization: Bearer TOKEN" */
	double timeout;           /* seconds a post may take, 0 = 30 */
};
void pk_kcidb_config_clear(struct pk_kcidb_config *kcidb);

/* Whether origin is one KCIDB takes: [a-z0-9_]+. */
bool pk_kcidb_origin_valid(const char *origin);

/* A document being built (pk_kcidb_new()); freed with pk_kcidb_free() (NULL is fine). */
struct pk_kcidb;

struct pk_kcidb *pk_kcidb_new(const char *origin);
void pk_kcidb_free(struct pk_kcidb *k);
typedef struct pk_kcidb pk_kcidb;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_kcidb, pk_kcidb_free)

/*
 * Add stored review review_id (its checkouts, builds and tests; what an
 * earlier review added already is not added twice).  -1 with err when
 * the store fails or holds no such review (PK_ERROR_INPUT), or its model
 * does not parse.
 */
int pk_kcidb_add_review(struct pk_kcidb *k, struct pk_store *store, gint64 review_id, GError **err);

/* How many reviews were added. */
guint pk_kcidb_reviews(const struct pk_kcidb *k);

/* The document as JSON text (pretty: pretty-printed); caller frees. */
char *pk_kcidb_to_json(const struct pk_kcidb *k, bool pretty);

/*
 * The reviews of review_ids (gint64, each once, in order) as one
 * document with origin (pk_kcidb_origin_valid()): pretty-printed JSON
 * text, or NULL with err (as pk_kcidb_add_review(), naming the review).
 */
char *pk_kcidb_export(struct pk_store *store, const char *origin, const GArray *review_ids, GError **err);

/*
 * POST doc (JSON text) to url (http or https, no redirect followed: the
 * token is for url alone) with "Authorization: Bearer token" (token may
 * be NULL), waiting at most timeout seconds (0: 30).  0 when the server
 * answered 2xx (*out_status), else -1 with err: the HTTP status and the
 * start of the answer, or what failed on the way (PK_ERROR_TRANSIENT).
 */
int pk_kcidb_post(const char *url, const char *token, double timeout, const char *doc, long *out_status,
		  GError **err);

#endif
