/*
 * curl-tls.h - libcurl's CURLOPT_USE_SSL for a tls setting of the config
 * (tls.h), shared by the IMAP intake and SMTP.  The caller passes the
 * level enforced (pk_tls_enforced()), so a login never goes in clear but
 * with tls = off.
 */
#ifndef PK_CURL_TLS_H
#define PK_CURL_TLS_H

#include <curl/curl.h>

#include "base/tls.h"

static inline long pk_curl_use_ssl(enum pk_tls tls)
{
	switch (tls) {
	case PK_TLS_OFF:
		return CURLUSESSL_NONE;
	case PK_TLS_TRY:
		return CURLUSESSL_TRY;
	case PK_TLS_REQUIRED:
		break;
	}
	return CURLUSESSL_ALL;
}

#endif
