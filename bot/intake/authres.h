/*
 * authres.h - who vouches for a mail's From: the Authentication-Results
 * header fields (RFC 8601) that the bot's own mail server writes when it
 * checks a mail's DKIM signatures or its SPF record.  A From: line alone
 * proves nothing (anyone can write one); a dkim=pass or spf=pass for the
 * From: address's domain, from a server the configuration names by its
 * authserv-id, does.  Commands by mail (mailcmd.h, daemon.h) are acted
 * on only so.
 *
 * Pure functions over plain strings (no I/O, no GMime): the header
 * fields come from intake/mail.h (struct pk_mail's auth_results), the
 * authserv-ids from [daemon] commands_authserv_id.
 */
#ifndef PK_AUTHRES_H
#define PK_AUTHRES_H

#include <glib.h>
#include <stdbool.h>

/* One "ptype.property=value" of a result ("header.d=example.org"), or the result's reason. */
struct pk_authres_prop {
	char *ptype;              /* lower case: "header", "smtp", "policy"...; "reason" for reason= */
	char *property;           /* lower case: "d", "i", "mailfrom"...; "" for reason= */
	char *value;              /* as written, quotes and escapes undone */
};

/* One result: "dkim=pass header.d=example.org header.s=sel". */
struct pk_authres_result {
	char *method;             /* lower case, its "/version" dropped: "dkim", "spf", "dmarc"... */
	char *result;             /* lower case: "pass", "fail", "none"... */
	GPtrArray *props;         /* struct pk_authres_prop*, in order */
};

/* A whole header field's value, read; free with pk_authres_clear(). */
struct pk_authres {
	char *authserv_id;        /* as written (quotes undone); compared case-insensitively */
	GPtrArray *results;       /* struct pk_authres_result*, in order; empty for "; none" */
};
void pk_authres_clear(struct pk_authres *a);
typedef struct pk_authres pk_authres_t;
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(pk_authres_t, pk_authres_clear)

/*
 * Read one Authentication-Results value (what follows the colon, folded
 * or not, CRLF or LF) by RFC 8601's grammar: comments (nested, with
 * quoted-pairs) and folding are white space, quoted strings are read as
 * one value whatever they hold (";", "=", "(").  0 and *out filled, or -1
 * with err (PK_ERROR_INPUT) saying what was wrong and at which byte, out
 * untouched: a control character, an unterminated comment or quoted
 * string, a result without its method or "=", no result at all.
 */
int pk_authres_parse(struct pk_authres *out, const char *value, GError **err);

/* The value of r's first ptype.property (both case-insensitive), or NULL. */
const char *pk_authres_prop_get(const struct pk_authres_result *r, const char *ptype, const char *property);

/*
 * Whether the header fields fields (n values of Authentication-Results,
 * topmost first, as the mail holds them) vouch for from_addr (an
 * addr-spec) under ids (the authserv-ids to trust, NULL-terminated).
 *
 * Of each id, only the topmost field of that id counts (RFC 8601 section
 * 5): the bot's mail server adds its field above every header the sender
 * wrote, so one further down that claims the same id is a forgery (or an
 * older hop's), and so is every field of an id not in ids.  The field
 * vouches when it holds
 *   dkim=pass whose header.d (or header.i's domain) is the From domain
 *             or a parent of it with at least two labels (example.org
 *             vouches for x@lists.example.org; "org" for nothing), or
 *   spf=pass  whose smtp.mailfrom's domain is the From domain itself.
 * A field that does not parse vouches for nothing.
 *
 * *out_what (new, printable ASCII, never NULL) says what vouched
 * ("dkim=pass header.d=example.org (mx.example.org)") or why nothing did
 * ("mx.example.org found dkim=fail header.d=example.org, spf=none: no
 * pass for example.org"), for the log and the store.
 */
bool pk_authres_vouches(const char *const *fields, guint n, const char *const *ids, const char *from_addr,
			char **out_what);

#endif
