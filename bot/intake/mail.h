/*
 * mail.h - one mail as the daemon sees it (the headers that thread,
 * address and guard it, and the patch it carries), and the words about
 * mail both sides use (a header value that is safe, a Message-ID, an
 * address).  The mail the bot sends is composed in report/compose.h.
 * This module, report/compose.c and patch*.c are the only ones that
 * include GMime; everything here is plain strings.
 *
 * Reading: pk_mail_parse() takes the bytes of one mail (with or without
 * an mbox "From " line; with one, mboxrd quoting is undone; CRLF line ends,
 * as IMAP gives them, are read as LF) and gives a
 * struct pk_mail the caller frees with pk_mail_free() (NULL is fine).
 * Message-IDs are kept without their angle brackets.

 */
#ifndef PK_MAIL_H
#define PK_MAIL_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/patch.h"

struct pk_mail {
	char *message_id;         /* without <>, or NULL when the mail has none */
	char *in_reply_to;        /* the first id of In-Reply-To, without <>, or NULL */
	GPtrArray *references;    /* char*: References ids in order, without <> */
	char *subject;            /* decoded, folding undone, or NULL */
	char *from_name;          /* decoded display name, or NULL */
	char *from_addr;          /* addr-spec of From:, or NULL */
	GPtrArray *to, *cc;       /* char*: "Name <addr>" as decoded, one per mailbox */
	GPtrArray *cc_addrs;      /* char*: the addr-spec of every To and Cc mailbox */
	char *list_id;            /* List-Id, or NULL */
	unsigned from_count;      /* the mailboxes of every From: field (1 in a usual mail) */
	GPtrArray *auth_results;  /* char*: the Authentication-Results values as written (folded),
				     topmost first, the first PK_MAIL_AUTH_RESULTS_MAX of them */
	bool bot_header;          /* carries X-Printkbot: it is our own mail */
	bool auto_submitted;      /* Auto-Submitted: other than "no" (RFC 3834) */
	char *base_commit;        /* the "base-commit: <sha>" trailer of format-patch --base */
	gint64 time;              /* Date as Unix time, 0 when unknown */
	struct pk_patch *patch;   /* the diff it carries, or NULL */
	char *body;               /* its first text/plain part, decoded to UTF-8, at most
				     PK_MAIL_BODY_MAX bytes (a command is read there), or NULL */
};

/* The most Authentication-Results a mail's auth_results keeps: only the topmost ones count. */
#define PK_MAIL_AUTH_RESULTS_MAX 50

/* The most of a mail's text kept in struct pk_mail's body. */
#define PK_MAIL_BODY_MAX (256 * 1024)

/* Parse one mail (len bytes).  -1 with err set when it is not a mail at all. */
int pk_mail_parse(struct pk_mail **out, const char *buf, size_t len, GError **err);
void pk_mail_free(struct pk_mail *mail);
typedef struct pk_mail pk_mail;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pk_mail, pk_mail_free)

/*
 * The Date of one mail (len bytes, as pk_mail_parse() takes them) as Unix
 * time, or 0 when it has none that parses.  Only the headers are read:
 * this is cheap enough for every mail of an archive.
 */
gint64 pk_mail_date(const char *buf, size_t len);

/*
 * Split an mbox into its mails: each element of *out is a GBytes of one
 * mail with its "From " line.  offsets (may be NULL) gets the byte offset
 * of each, so a reader can start again after the last one it handled.
 */
void pk_mail_split_mbox(GPtrArray **out, GArray *offsets, const char *buf, size_t len);

/* Whether a header value is safe to write: no CR, LF or other control character. */
bool pk_mail_header_ok(const char *value);
/* Whether s looks like a Message-ID without <>: printable ASCII "left@right", no blanks or <>. */
bool pk_mail_msgid_ok(const char *s);
/*
 * A subject made safe for a header: every run of control characters and
 * blanks becomes one space, ends trimmed.  Subjects come folded and
 * encoded from anywhere; a reply must still carry one.  Caller frees.
 */
char *pk_mail_clean_subject(const char *subject);
/* The addr-spec of a mailbox ("Name <a@b>" -> "a@b"), or NULL when it is none; caller frees. */
char *pk_mail_addr(const char *mailbox);

/* The first "base-commit: <hex>" line of buf, as git format-patch --base writes it, or NULL. */
char *pk_mail_find_base_commit(const char *buf, size_t len);

#endif
