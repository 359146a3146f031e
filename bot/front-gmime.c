/*
 * front-gmime.c - GMime's crypto and GIO stream entry points as GMime's
 * own build without crypto has them, linked into the scan-only front
 * program (front.c) alone, before the static GMime archive.
 *
 * Why: g_mime_init() names the GnuPG and S/MIME contexts and the GIO
 * stream type, and so pulls from the archive the objects that need
 * gpgme, libassuan, libgpg-error and GIO's file code (libmount, libblkid,
 * libselinux).  Those shared libraries cost a scan process more than all
 * its own work: an empty program linked to them takes 1.19 ms of CPU
 * against 0.41 ms without (perf stat, side by side), and a one-patch scan
 * went from 1.66 to 1.10 ms without them.  Scan verifies no signature and
 * opens no GIO stream; printkbot-core, which links GMime whole, does
 * everything else.  With these definitions g_mime_init() registers the
 * contexts' constructors, which answer NULL, as a GMime configured
 * without crypto does (gmime-gpg-context.c, gmime-pkcs7-context.c), and
 * g_mime_init() ignores the types it asks for.
 */
#include <glib-object.h>
#include <gmime/gmime.h>

GType g_mime_gpg_context_get_type(void)
{
	return G_TYPE_NONE;
}

GType g_mime_pkcs7_context_get_type(void)
{
	return G_TYPE_NONE;
}

GMimeCryptoContext *g_mime_gpg_context_new(void)
{
	return NULL;
}

GMimeCryptoContext *g_mime_pkcs7_context_new(void)
{
	return NULL;
}

GType g_mime_stream_gio_get_type(void)
{
	return G_TYPE_NONE;
}

/* What gpgme_check_version() expands to in g_mime_init(); its answer is ignored there. */
const char *gpgme_check_version_internal(const char *req_version, size_t offset_sig_validity);
const char *gpgme_check_version_internal(const char *req_version, size_t offset_sig_validity)
{
	return "none (printkbot's scan links no gpgme)";
}
