/*
 * compose.h - the mail the bot sends (replies, a commit's mail to its
 * author, a command's answer) as the RFC 5322 text SMTP carries.
 *
 * pk_mail_compose() builds the message from a struct pk_mail_out.  Every
 * header value comes from input somebody else wrote (a subject, an
 * address, a Message-ID), so each is checked: a value with CR, LF or
 * another control character is refused, not cleaned, because a header
 * that smuggles "\r\nBcc:" must never reach the wire.  The subject is the
 * one exception, see intake/mail.h's pk_mail_clean_subject().
 */
#ifndef PK_COMPOSE_H
#define PK_COMPOSE_H

#include <glib.h>

/* The reply the daemon sends; every string is borrowed. */
struct pk_mail_out {
	const char *from;          /* "Name <addr>" or addr */
	const char *const *to;     /* NULL-terminated mailboxes */
	const char *const *cc;     /* NULL-terminated mailboxes, or NULL */
	const char *subject;       /* UTF-8, one line */
	const char *message_id;    /* without <> */
	const char *in_reply_to;   /* without <>, or NULL */
	const char *const *references; /* NULL-terminated ids without <>, or NULL */
	gint64 date;               /* Unix time */
	const char *const *extra;  /* "Name: value" header lines, NULL-terminated, or NULL */
	const char *body;          /* UTF-8 text, LF line ends */
};

/*
 * The whole message, CRLF line ends, UTF-8 body sent as 8bit when it fits
 * (lines under 998 octets) and quoted-printable otherwise; non-ASCII header
 * text is RFC 2047 encoded.  Returns a new string, or NULL with err naming
 * the header when a value is refused (see above).
 */
char *pk_mail_compose(const struct pk_mail_out *m, GError **err);

/*
 * "name <addr>" as a header reads it back: a name outside ASCII left as
 * UTF-8 (pk_mail_compose() encodes it), one with quotes or specials
 * quoted; addr alone when name is NULL, empty or holds a control
 * character.  NULL when addr is.  Caller frees.
 */
char *pk_mail_mailbox(const char *name, const char *addr);

#endif
