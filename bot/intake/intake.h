/*
 * intake.h - where patch mail comes from: one small interface, several
 * backends (an mbox file, a Maildir, an IMAP mailbox, a public-inbox
 * archive), chosen by the `type` of a [source NAME] group of the config.
 *
 * A backend hands every mail it has not handed over before to a deliver
 * callback, oldest first, as the bytes of one RFC 5322 message (an mbox
 * mail keeps its "From " line).  It remembers how far it got in the store
 * (pk_store_source_state_*) only after deliver returned 0 for a mail, so
 * a crash between the two delivers that mail again, never skips one: the
 * caller dedupes by Message-ID.  A deliver that fails stops the fetch, and
 * the next fetch starts with the same mail.
 *
 * Where a source starts ([source NAME] start, below) is kept here, not
 * in each backend: the first time the daemon sees a source with start =
 * now (the default), pk_intake_fetch() has the backend record where it
 * stands (start_now) and hands over nothing older; with start = <date>,
 * every mail dated before it (or without a Date) is dropped, not handed
 * over; start = all reads everything.  When a backend has to read a
 * source again from its beginning (a new IMAP UIDVALIDITY, a rewritten
 * epoch, an mbox replaced), it says so with pk_intake_read_again(): for a
 * source that started now, the mails dated before that start are dropped
 * then, so a rebuilt mailbox does not replay its past.
 *
 * Ownership: the store and the source config are borrowed and must
 * outlive the intake.  Nothing here parses mail; only intake-pi.c includes
 * git2.h.
 */
#ifndef PK_INTAKE_H
#define PK_INTAKE_H

#include <glib.h>
#include <stddef.h>

#include "base/tls.h"

struct pk_store;

/*
 * Where a source starts the first time the daemon sees it (the top of
 * this file says how pk_intake_fetch() keeps it).  The zero value, PK_START_ALL, is what a hand-made config gets; the
 * loader's default is PK_START_NOW.
 */
enum pk_source_start {
	PK_START_ALL,     /* from its first mail */
	PK_START_NOW,     /* from where it stands when first seen: nothing older is read */
	PK_START_DATE,    /* only mails whose Date is on or after start_date */
};

/* One [source NAME] group: where patch mail comes from. */
struct pk_source_config {
	char *name;               /* NAME of [source NAME] */
	char *type;               /* "imap", "maildir", "mbox" or "public-inbox" */
	char *url;                /* imap: imap[s]://host[:port]/MAILBOX */
	char *path;               /* maildir, mbox, public-inbox: a directory or file */
	char *user;               /* imap login */
	char *password;           /* from password, password_file or password_env; never logged */
	char *list;               /* the list's address, Cc'd in replies; NULL: the mail's To */
	char *archive;            /* the list's web archive, a URL a Message-ID is appended to, or NULL */
	double poll_interval;     /* seconds between looks, default 300 (a watched source's too) */
	char *ca_file;            /* imap TLS: a CA bundle, or NULL for the system's */
	bool insecure;            /* imap TLS: do not verify the server (tests only) */
	enum pk_tls tls;          /* imap: see enum pk_tls */
	enum pk_source_start start; /* default PK_START_NOW */
	gint64 start_date;        /* PK_START_DATE: Unix time, midnight UTC for a plain date */
	bool trusted_commands;    /* its mail's From is taken as proven: a #printkbot command needs
				     no Authentication-Results (default false) */
};

/*
 * Called for each new mail; raw is borrowed for the call.  where says
 * where the mail is in the source, for log lines ("byte 4096 of
 * /var/mail/x", a Maildir file, an IMAP UID, a public-inbox commit),
 * borrowed too.  0, or -1 with err set.
 */
typedef int (*pk_intake_deliver_fn)(void *data, const char *raw, size_t len, const char *where,
				    GError **err);

/* What every backend is opened with. */
struct pk_intake_ctx {
	struct pk_store *store;
	gint64 source_id;                   /* the source's row, for its state */
	const struct pk_source_config *cfg;
	gint64 since;                       /* this fetch drops mails dated before it; 0: none */
	size_t max_mail;                    /* bytes of one mail ([policy] max_mail_mb), 0: no limit;
					       pk_intake_open() sets PK_INTAKE_MAX_MAIL, the daemon
					       its config's.  A longer mail is skipped with a log line */
};

/* A backend: a table of functions, as curl's protocol handlers are. */
struct pk_intake_ops {
	/* The `type =` of the config that selects this backend. */
	const char *type;
	/* The store's source kind ("mbox", "maildir", "imap", "public-inbox"). */
	const char *kind;
	/*
	 * Check the source can be read (a path exists, a URL parses) and set up
	 * what the backend needs (an inotify watch).  *out is the backend's own
	 * state, handed to the other slots; nothing is fetched yet.
	 */
	int (*open)(void **out, struct pk_intake_ctx *ctx, GError **err);
	/*
	 * start = now, the first time: record where the source stands (the
	 * last UID, each epoch's head, the mbox's size; a Maildir's new/ moved
	 * to cur/ unread) so that the next fetch hands over only what comes
	 * after.  A position the store already keeps (a source read before)
	 * is left as it is.
	 */
	int (*start_now)(void *state, GError **err);
	/*
	 * A descriptor that becomes readable when new mail may have arrived
	 * (inotify), or -1 for a source that is looked at every poll_interval
	 * seconds instead.  The caller polls it and calls fetch, which drains it.
	 */
	int (*watch_fd)(void *state);
	/*
	 * Deliver every mail not delivered before, oldest first; *out_count gets
	 * how many.  Returns 0, or -1 with err set (the source is unreachable,
	 * deliver failed); what was delivered before the failure stays done.
	 */
	int (*fetch)(void *state, pk_intake_deliver_fn deliver, void *data, unsigned *out_count,
		     GError **err);
	/* Free the state; NULL is fine. */
	void (*close)(void *state);
};

/* The backends, by type (NULL when none has that name). */
const struct pk_intake_ops *pk_intake_find(const char *type);

extern const struct pk_intake_ops pk_intake_mbox;
extern const struct pk_intake_ops pk_intake_maildir;
extern const struct pk_intake_ops pk_intake_imap;
extern const struct pk_intake_ops pk_intake_public_inbox;

/* One opened source: its backend, state and config. */
struct pk_intake {
	const struct pk_intake_ops *ops;
	void *state;
	struct pk_intake_ctx ctx;
	double next_poll;                   /* pk_now() when a polled source is due */
	bool started_now;                   /* the last fetch was the first of a start = now */
};

/*
 * Open cfg's backend: the source row is found or added in store.  Free
 * with pk_intake_close() (NULL is fine).
 */
int pk_intake_open(struct pk_intake **out, struct pk_store *store,
		   const struct pk_source_config *cfg, GError **err);
void pk_intake_close(struct pk_intake *in);

/*
 * Fetch in's new mail through its backend, with the start rules above:
 * deliver gets only the mails that pass them, and *out_count counts
 * those.  Returns as the backend's fetch does.  A fetch that got to the
 * end is the source's last successful read (pk_store_source_read()).
 */
int pk_intake_fetch(struct pk_intake *in, pk_intake_deliver_fn deliver, void *data,
		    unsigned *out_count, GError **err);

/* A backend reads its source again from the beginning: see above.  0, or -1 with err. */
int pk_intake_read_again(struct pk_intake_ctx *ctx, GError **err);

/* Remembered positions, shared by the backends (a missing key reads as 0 / NULL). */
gint64 pk_intake_state_int(const struct pk_intake_ctx *ctx, const char *key);
int pk_intake_state_set_int(const struct pk_intake_ctx *ctx, const char *key, gint64 value,
			    GError **err);

/* The default of max_mail, [policy] max_mail_mb's (curl's capped buffers). */
#define PK_INTAKE_MAX_MAIL (64u << 20)

#endif
