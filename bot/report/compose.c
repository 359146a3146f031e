/* compose.c - the mail the bot sends, as RFC 5322 text; see compose.h. */
#include "report/compose.h"
#include "intake/mail.h"
#include "intake/mail-gmime.h"
#include "base/util.h"

#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeMessage, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeTextPart, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeStream, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(InternetAddressList, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(InternetAddress, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeDataWrapper, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeFormatOptions, g_mime_format_options_free)

/* Lines of a mail body longer than this (octets, RFC 5322) force quoted-printable. */
#define MAIL_LINE_MAX 998

char *pk_mail_mailbox(const char *name, const char *addr)
{
	g_autoptr(InternetAddress) a = NULL;

	pk_mail_gmime_init();
	if (!addr || !name || !*name || !pk_mail_header_ok(name))
		return g_strdup(addr);
	a = internet_address_mailbox_new(name, addr);
	/* not encoded: one_mailbox() reads it back, and the writer encodes what the header needs */
	return internet_address_to_string(a, NULL, FALSE);
}

static int add_addresses(InternetAddressList *to, const char *const *list, const char *header,
			 GError **err)
{
	for (const char *const *p = list; p && *p; p++) {
		g_autoptr(InternetAddressList) one = pk_mail_one_mailbox(*p);
		if (!one)
			return pk_error(err, PK_ERROR_INPUT, "%s: not one mailbox: '%s'", header, *p);
		/* a name outside ASCII is encoded as UTF-8, not the smallest charset that holds it */
		internet_address_set_charset(internet_address_list_get_address(one, 0), "utf-8");
		internet_address_list_append(to, one);
	}
	return 0;
}

/* Whether every line of text fits in an SMTP line as 8bit. */
static bool lines_fit(const char *text)
{
	for (const char *s = text; s && *s; ) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		if (n > MAIL_LINE_MAX - 2)
			return false;
		s = nl ? nl + 1 : NULL;
	}
	return true;
}

/*
 * The body as the UTF-8 it is: g_mime_text_part_set_text() converts text
 * that fits Latin-1 to Latin-1 and labels it so, and a charset set after
 * it only changed the label.
 */
static void set_utf8_body(GMimeTextPart *part, const char *body)
{
	g_autoptr(GMimeStream) stream = g_mime_stream_mem_new_with_buffer(body, strlen(body));
	g_autoptr(GMimeDataWrapper) content = g_mime_data_wrapper_new_with_stream(stream,
										 GMIME_CONTENT_ENCODING_DEFAULT);

	g_mime_part_set_content(GMIME_PART(part), content);
	g_mime_text_part_set_charset(part, "utf-8");
}

static int check_header(const char *name, const char *value, GError **err)
{
	if (!pk_mail_header_ok(value))
		return pk_error(err, PK_ERROR_INPUT, "%s: refused: a control character (CR, LF...) in '%s'",
				name, value ? value : "(null)");
	return 0;
}

char *pk_mail_compose(const struct pk_mail_out *m, GError **err)
{
	g_autoptr(GMimeMessage) msg = NULL;
	g_autoptr(GMimeTextPart) part = NULL;
	g_autoptr(GMimeFormatOptions) fo = NULL;
	g_autoptr(GDateTime) date = NULL;
	g_autoptr(GString) refs = g_string_new(NULL);
	g_autofree char *irt = NULL;
	GMimeObject *obj;

	pk_mail_gmime_init();
	if (check_header("Subject", m->subject, err) < 0)
		return NULL;
	if (!pk_mail_msgid_ok(m->message_id) || (m->in_reply_to && !pk_mail_msgid_ok(m->in_reply_to))) {
		pk_error(err, PK_ERROR_INPUT, "%s: refused: not a Message-ID: '%s'",
			 pk_mail_msgid_ok(m->message_id) ? "In-Reply-To" : "Message-ID",
			 pk_mail_msgid_ok(m->message_id) ? m->in_reply_to : m->message_id ? m->message_id : "(null)");
		return NULL;
	}
	for (const char *const *r = m->references; r && *r; r++) {
		if (!pk_mail_msgid_ok(*r)) {
			pk_error(err, PK_ERROR_INPUT, "References: refused: not a Message-ID: '%s'", *r);
			return NULL;
		}
		g_string_append_printf(refs, "%s<%s>", refs->len ? " " : "", *r);
	}
	msg = g_mime_message_new(TRUE);
	obj = GMIME_OBJECT(msg);
	if (add_addresses(g_mime_message_get_from(msg), (const char *const[]){ m->from, NULL }, "From", err) < 0 ||
	    add_addresses(g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_TO), m->to, "To", err) < 0 ||
	    add_addresses(g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_CC), m->cc, "Cc", err) < 0)
		return NULL;
	g_mime_message_set_subject(msg, m->subject, "utf-8");
	date = g_date_time_new_from_unix_utc(m->date);
	g_mime_message_set_date(msg, date);
	g_mime_message_set_message_id(msg, m->message_id);
	if (m->in_reply_to) {
		irt = g_strdup_printf("<%s>", m->in_reply_to);
		g_mime_object_set_header(obj, "In-Reply-To", irt, NULL);
	}
	if (refs->len)
		g_mime_object_set_header(obj, "References", refs->str, NULL);
	for (const char *const *h = m->extra; h && *h; h++) {
		const char *colon = strchr(*h, ':');
		g_autofree char *name = colon ? g_strndup(*h, (gsize)(colon - *h)) : NULL;

		if (!name || !*name || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-") != strlen(name)) {
			pk_error(err, PK_ERROR_INPUT, "not a header line: '%s'", *h);
			return NULL;
		}
		if (check_header(name, colon + 1, err) < 0)
			return NULL;
		/* the caller's line is borrowed (it may be a literal): skip the blanks, do not cut them */
		g_mime_object_set_header(obj, name, colon + 1 + strspn(colon + 1, " \t"), "utf-8");
	}
	part = g_mime_text_part_new_with_subtype("plain");
	set_utf8_body(part, m->body ? m->body : "");
	g_mime_part_set_content_encoding(GMIME_PART(part), lines_fit(m->body)
					 ? GMIME_CONTENT_ENCODING_8BIT : GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE);
	g_mime_message_set_mime_part(msg, GMIME_OBJECT(part));
	fo = g_mime_format_options_new();
	g_mime_format_options_set_newline_format(fo, GMIME_NEWLINE_FORMAT_DOS);
	return g_mime_object_to_string(obj, fo);
}
