/*
 * outbox.h - the daemon's outbox, a Maildir of rendered replies waiting to
 * be sent.  A reply is delivered the standard Maildir way (written and
 * synced in tmp/, then renamed into new/) when it is rendered; the sender
 * moves it to cur/ with the flag ":2,S" once the SMTP server took it.  So
 * `ls outbox/new` is what waits, and a reply is never lost even without
 * the database.
 *
 * A file is named after the reply's Message-ID (without <>, every byte
 * outside [A-Za-z0-9@._+=-] written %XX), so one Message-ID is exactly one
 * file: delivering a reply that is already in new/ or cur/ adds nothing,
 * and a re-render after a crash finds the first one.  The file holds the
 * very bytes that are sent (the store's text, CRLF line ends).
 *
 * Nothing is logged here; errors name the path.  One process writes an
 * outbox (the daemon holds its database's lock).
 */
#ifndef PK_OUTBOX_H
#define PK_OUTBOX_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

struct pk_outbox {
	char *dir;                /* the Maildir: dir/tmp, dir/new, dir/cur */
};

/* Where a reply is: not in the outbox, waiting in new/, or sent (cur/). */
enum pk_outbox_state { PK_OUTBOX_ABSENT, PK_OUTBOX_WAITING, PK_OUTBOX_SENT };

/* The outbox directory: configured (borrowed, may be NULL) or <cache dir>/outbox.  Caller frees. */
char *pk_outbox_default_dir(const char *configured);

/*
 * Open the outbox at dir (copied).  With create, tmp/, new/ and cur/ are
 * made when missing; without, a missing outbox is an empty one (for
 * readers such as `printkbot queue`).  Free *out with pk_outbox_free().
 */
int pk_outbox_open(struct pk_outbox **out, const char *dir, bool create, GError **err);
void pk_outbox_free(struct pk_outbox *ob);
typedef struct pk_outbox pk_outbox;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_outbox, pk_outbox_free)

/* The file name of message_id (without <>) in new/; caller frees. */
char *pk_outbox_name(const char *message_id);

/* Where the reply with message_id is. */
enum pk_outbox_state pk_outbox_state(const struct pk_outbox *ob, const char *message_id);

/*
 * Deliver text (len bytes) as the reply message_id: tmp/, fsync, rename
 * into new/ without replacing anything.  *out_added (may be NULL) is
 * false when the reply was in new/ or cur/ already; then nothing changes.
 */
int pk_outbox_deliver(struct pk_outbox *ob, const char *message_id, const char *text, size_t len,
		      bool *out_added, GError **err);

/* The waiting reply's bytes: 1 with *out (caller frees, NUL-terminated), 0 when not in new/. */
int pk_outbox_read(const struct pk_outbox *ob, const char *message_id, char **out, size_t *out_len,
		   GError **err);

/* The reply was sent: new/NAME becomes cur/NAME:2,S.  0 too when it is in cur/ already. */
int pk_outbox_mark_sent(struct pk_outbox *ob, const char *message_id, GError **err);

/*
 * The server refused the reply for good: new/NAME becomes cur/NAME:2,T
 * (Maildir's trashed flag), so it is no longer counted as waiting, and
 * is not taken for sent either (a job retried by hand delivers it again
 * from the store).  0 too when it is not in new/.
 */
int pk_outbox_mark_refused(struct pk_outbox *ob, const char *message_id, GError **err);

/* The Message-IDs waiting in new/ (a new array of strings), in name order. */
int pk_outbox_waiting(const struct pk_outbox *ob, GPtrArray **out, GError **err);

#endif
