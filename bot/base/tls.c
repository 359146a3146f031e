/*
 * tls.c - the tls key's levels, and whether a URL names this machine.
 */
#include "base/tls.h"

#include <gio/gio.h>

enum pk_tls pk_tls_enforced(enum pk_tls tls, bool login)
{
	return tls == PK_TLS_TRY && login ? PK_TLS_REQUIRED : tls;
}

const char *pk_tls_name(enum pk_tls tls)
{
	return tls == PK_TLS_OFF ? "off" : tls == PK_TLS_TRY ? "try" : "required";
}

bool pk_url_is_loopback(const char *url)
{
	g_autoptr(GUri) uri = url ? g_uri_parse(url, G_URI_FLAGS_PARSE_RELAXED, NULL) : NULL;
	g_autoptr(GInetAddress) addr = NULL;
	const char *host = uri ? g_uri_get_host(uri) : NULL;

	if (!host)
		return false;
	if (!g_ascii_strcasecmp(host, "localhost") || !g_ascii_strcasecmp(host, "localhost."))
		return true;
	/* GUri gives an IPv6 literal without its brackets */
	addr = g_inet_address_new_from_string(host);
	return addr && g_inet_address_get_is_loopback(addr);
}
