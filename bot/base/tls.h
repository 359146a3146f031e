/*
 * tls.h - how a mail connection ([smtp], an imap [source]) is protected:
 * the config's tls key, which the IMAP intake and SMTP both read.
 */
#ifndef PK_TLS_H
#define PK_TLS_H

#include <stdbool.h>

/*
 * The default is PK_TLS_REQUIRED, or PK_TLS_TRY when the URL's host is a
 * loopback address (pk_url_is_loopback()).  imaps:// and smtps:// are TLS
 * from the start whatever this says (and refuse PK_TLS_OFF).  A login
 * (AUTH) is never sent in clear unless the config says tls = off:
 * pk_tls_enforced() makes PK_TLS_TRY with a login PK_TLS_REQUIRED.
 */
enum pk_tls {
	PK_TLS_REQUIRED,  /* STARTTLS, or no connection at all */
	PK_TLS_TRY,       /* STARTTLS when offered; in clear otherwise, then without a login */
	PK_TLS_OFF,       /* never STARTTLS: a login goes in clear (say so on purpose) */
};

/* The level the connection must reach: PK_TLS_TRY with a login is PK_TLS_REQUIRED. */
enum pk_tls pk_tls_enforced(enum pk_tls tls, bool login);
/* The word of the config for a level ("required", "try", "off"). */
const char *pk_tls_name(enum pk_tls tls);
/*
 * Whether url's host is a loopback address: localhost, 127.0.0.0/8, ::1.
 * The name is not resolved: only these literal forms count.
 */
bool pk_url_is_loopback(const char *url);

#endif
