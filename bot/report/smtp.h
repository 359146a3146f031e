/*
 * smtp.h - send one mail over SMTP with libcurl: STARTTLS (smtp://, as
 * [smtp] tls says: required unless the server is on loopback, and never
 * an AUTH in clear unless tls = off) or TLS from the start (smtps://),
 * AUTH when a user is configured.  The message is sent as given (CRLF line ends; curl
 * dot-stuffs it); the envelope is separate from the headers.
 *
 * Only this module includes curl for SMTP.  Nothing is logged here: the
 * caller logs the error, which never contains the password.
 */
#ifndef PK_SMTP_H
#define PK_SMTP_H

#include <glib.h>
#include <stdbool.h>

#include "base/tls.h"

/* [smtp]: how replies are sent. */
struct pk_smtp_config {
	char *url;                /* smtp://host[:port] (STARTTLS) or smtps://host[:port] (TLS) */
	char *user;               /* AUTH user, NULL for no AUTH */
	char *password;           /* from password, password_file or password_env; never logged */
	enum pk_tls tls;          /* see enum pk_tls */
	char *ca_file;
	bool insecure;
	double timeout;           /* seconds per transfer, default 60 */
};

/*
 * Send text from sender (an addr-spec) to recipients (addr-specs,
 * NULL-terminated).  Returns 0 when the server accepted it for at least
 * one recipient: it went to those, and each it refused is added to
 * refused (may be NULL) as "<addr> (the server's answer)".  Else -1 with
 * err set; *out_permanent (may be NULL) says whether the server refused
 * it for good (a 5xx answer, or every recipient refused so), so that
 * retrying is pointless.
 *
 * stop (may be NULL) is asked about once a second while the conversation
 * lasts, a server that says nothing included, up to its answer to QUIT:
 * when it says true, the connection is dropped at once and -1 comes back
 * (not permanent), the mail not sent.  Once the mail's end (its final
 * dot) is out, a stop waits a few seconds more for the server's answer
 * to it: taken (2xx), it is sent and 0 comes back, whatever happens to
 * QUIT.  A server that has not answered by then is dropped; it has the
 * whole mail and may deliver it all the same, and a retry then sends it
 * twice (SMTP's own ambiguity, as after a crash).
 */
int pk_smtp_send(const struct pk_smtp_config *cfg, const char *sender,
		 const char *const *recipients, const char *text, GPtrArray *refused,
		 bool (*stop)(void), bool *out_permanent, GError **err);

#endif
