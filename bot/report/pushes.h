/*
 * pushes.h - a push to a watched branch as `history --pushes` and
 * `report --push` show it: the branch, the tips, whether it was forced,
 * what was left out, and one line per commit (what became of it, its
 * verdict, its review, the mail about it).  Pure: the caller reads the
 * push from the store (store.h) and owns it; what is returned is new.
 */
#ifndef PK_REPORT_PUSHES_H
#define PK_REPORT_PUSHES_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "store/store.h"

/*
 * The push as text (caller frees): a head line ("push 3, lab/main,
 * 2026-03-01 10:00 UTC: 1a2b3c4d5e6f..5e6f7a8b9c0d, forced, job 7
 * done"), its note, then a table of its commits, oldest first (commit,
 * state, verdict, review, mail, subject) with why a commit was not tested.
 */
char *pk_push_text(const struct pk_store_push *p, const GPtrArray *commits);

/* The same as a JSON object, its commits an array member (a new node). */
JsonNode *pk_push_json(const struct pk_store_push *p, const GPtrArray *commits);

#endif
