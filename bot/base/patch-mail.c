/*
 * patch-mail.c - patches read out of mail (patch.h's pk_patch_read_mails()):
 * an mbox, one message or a bare diff; the text part or attachment that
 * holds the diff, decoded as git mailinfo decodes it (patch-repair.c for
 * format=flowed and a diff left quoted-printable), then parsed (patch.c).
 */
#include "base/patch.h"
#include "base/patch-private.h"
#include "base/util.h"

#include <gmime/gmime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GMime 3 declares no g_autoptr() cleanups of its own. */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeStream, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeParser, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeMessage, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeFilter, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimePartIter, g_mime_part_iter_free)

/* Whether text holds a unified diff: a file header line pair or git's. */
static const char *find_diff(const char *text)
{
	for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
		if (g_str_has_prefix(s, "diff --git ") || g_str_has_prefix(s, "Index: "))
			return s;
		if (g_str_has_prefix(s, "--- ")) {
			const char *nl = strchr(s, '\n');
			if (nl && g_str_has_prefix(nl + 1, "+++ "))
				return s;
		}
	}
	return NULL;
}

/* The bytes of a stream from its start, as a NUL-terminated string. */
static char *stream_text(GMimeStream *src, size_t *out_len)
{
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	GByteArray *bytes;

	if (g_mime_stream_reset(src) < 0 || g_mime_stream_write_to_stream(src, mem) < 0)
		return NULL;
	bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	*out_len = bytes->len;
	return g_strndup((const char *)bytes->data, bytes->len);
}

/*
 * mboxrd quoting undone: a writer puts one more '>' before every line that
 * matches ^>*From, so readers take one away.  It is undone on the part's
 * encoded bytes, where the writer added it, before any decoding.
 */
static char *mboxrd_unquote(char *raw, size_t *len)
{
	static GRegex *re;
	static gsize once;
	char *out;

	if (g_once_init_enter(&once)) {
		re = g_regex_new("^>(>*From )", G_REGEX_MULTILINE | G_REGEX_RAW | pk_regex_optimize(),
				 0, NULL);
		g_once_init_leave(&once, 1);
	}
	if (!strstr(raw, ">From "))
		return raw;
	out = g_regex_replace(re, raw, (gssize)*len, 0, "\\1", 0, NULL);
	if (!out)
		return raw;
	g_free(raw);
	*len = strlen(out);
	return out;
}

/* Whether a charset name means UTF-8 or its ASCII subset. */
static gboolean charset_is_utf8(const char *charset)
{
	const char *canon = g_mime_charset_canon_name(charset);

	return !g_ascii_strcasecmp(canon, "utf-8") || !g_ascii_strcasecmp(canon, "us-ascii") ||
	       !g_ascii_strcasecmp(canon, "ascii");
}

/*
 * The content of a MIME part as UTF-8 text: mboxrd quoting undone (for a
 * part read from an mbox), the transfer encoding decoded, and the charset
 * converted, through one GMime filter stream, and format=flowed undone
 * (unflow()).  NULL for a part that cannot
 * hold a diff, which is most of a mailing list, without decoding it.
 */
static char *part_text(GMimePart *part, gboolean mboxrd)
{
	GMimeDataWrapper *content = g_mime_part_get_content(part);
	GMimeContentEncoding enc;
	const char *charset, *flowed;
	char *text;
	g_autoptr(GMimeStream) out = NULL, filtered = NULL;
	g_autofree char *raw = NULL;
	size_t len = 0;
	GByteArray *bytes;

	if (!content || !(raw = stream_text(g_mime_data_wrapper_get_stream(content), &len)))
		return NULL;
	enc = g_mime_data_wrapper_get_encoding(content);
	/*
	 * A diff's "--- " or "diff --git" starts a line that no encoding but
	 * base64 changes (quoted-printable may wrap it, not alter its start).
	 */
	if (enc != GMIME_CONTENT_ENCODING_BASE64 && enc != GMIME_CONTENT_ENCODING_UUENCODE &&
	    !g_str_has_prefix(raw, "--- ") && !strstr(raw, "\n--- ") && !strstr(raw, "diff --git ") &&
	    !strstr(raw, "Index: "))
		return NULL;
	if (mboxrd)
		raw = mboxrd_unquote(raw, &len);
	out = g_mime_stream_mem_new();
	filtered = g_mime_stream_filter_new(out);
	if (enc == GMIME_CONTENT_ENCODING_BASE64 || enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE ||
	    enc == GMIME_CONTENT_ENCODING_UUENCODE) {
		g_autoptr(GMimeFilter) dec = g_mime_filter_basic_new(enc, FALSE);
		g_mime_stream_filter_add(GMIME_STREAM_FILTER(filtered), dec);
	}
	charset = g_mime_object_get_content_type_parameter(GMIME_OBJECT(part), "charset");
	if (charset && !charset_is_utf8(charset)) {
		/* NULL when iconv knows no such charset: the fallback below guesses */
		g_autoptr(GMimeFilter) conv = g_mime_filter_charset_new(charset, "UTF-8");
		if (conv)
			g_mime_stream_filter_add(GMIME_STREAM_FILTER(filtered), conv);
	}
	if (g_mime_stream_write(filtered, raw, len) < 0 || g_mime_stream_flush(filtered) < 0)
		return NULL;
	bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(out));
	/* nothing decoded (base64 of no valid character): no diff, and no text to unflow */
	if (!bytes->len)
		return NULL;
	if (!g_utf8_validate((const char *)bytes->data, bytes->len, NULL))
		text = g_mime_utils_decode_8bit(NULL, (const char *)bytes->data, bytes->len);
	else
		text = g_strndup((const char *)bytes->data, bytes->len);
	flowed = g_mime_object_get_content_type_parameter(GMIME_OBJECT(part), "format");
	if (flowed && !g_ascii_strcasecmp(flowed, "flowed")) {
		const char *delsp = g_mime_object_get_content_type_parameter(GMIME_OBJECT(part), "delsp");
		char *plain = pk_patch_unflow(text, delsp && !g_ascii_strcasecmp(delsp, "yes"));
		g_free(text);
		text = plain;
	}
	return text;
}

/* Text parts and patch attachments are where a diff can be. */
static gboolean part_may_hold_diff(GMimeObject *obj)
{
	GMimeContentType *ct = g_mime_object_get_content_type(obj);
	const char *name = g_mime_part_get_filename(GMIME_PART(obj));

	if (name && (g_str_has_suffix(name, ".patch") || g_str_has_suffix(name, ".diff")))
		return TRUE;
	return !ct || g_mime_content_type_is_type(ct, "text", "*");
}

/*
 * The first part that carries a diff, decoded; NULL when none does.
 * *out_verbatim: it is the whole body with its lines as the mail has them.
 */
static char *message_diff(GMimeMessage *msg, gboolean mboxrd, gboolean *out_verbatim)
{
	GMimeObject *top = g_mime_message_get_mime_part(msg);
	g_autoptr(GMimePartIter) iter = NULL;

	if (!top)
		return NULL;
	if (GMIME_IS_PART(top)) {
		GMimeContentEncoding enc = g_mime_part_get_content_encoding(GMIME_PART(top));
		const char *format = g_mime_object_get_content_type_parameter(top, "format");
		g_autofree char *text = part_may_hold_diff(top) ? part_text(GMIME_PART(top), mboxrd) : NULL;

		*out_verbatim = enc != GMIME_CONTENT_ENCODING_BASE64 &&
				enc != GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE &&
				enc != GMIME_CONTENT_ENCODING_UUENCODE &&
				!(format && !g_ascii_strcasecmp(format, "flowed"));
		return text && find_diff(text) ? g_steal_pointer(&text) : NULL;
	}
	if (!GMIME_IS_MULTIPART(top))
		return NULL;
	iter = g_mime_part_iter_new(top);
	do {
		GMimeObject *obj = g_mime_part_iter_get_current(iter);
		if (!obj || !GMIME_IS_PART(obj) || !part_may_hold_diff(obj))
			continue;
		g_autofree char *text = part_text(GMIME_PART(obj), mboxrd);
		if (text && find_diff(text))
			return g_steal_pointer(&text);
	} while (g_mime_part_iter_next(iter));
	return NULL;
}

/*
 * The commit message of a mail: the body up to the "---" line that
 * git format-patch puts before the diffstat (or up to the diff itself).
 */
static char *commit_message(const char *body, const char *diff)
{
	const char *end = diff;

	for (const char *s = body; s && s < diff; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (g_str_has_prefix(s, "---\n") || g_str_has_prefix(s, "---\r\n")) {
			end = s;
			break;
		}
	g_autofree char *msg = g_strndup(body, end - body);
	g_strstrip(msg);
	return *msg ? g_steal_pointer(&msg) : NULL;
}

/* The From: mailbox and the Date of a mail, decoded, for the commit apply makes. */
static void message_author_and_time(GMimeMessage *msg, struct pk_patch *p)
{
	InternetAddressList *from = g_mime_message_get_from(msg);
	GDateTime *date = g_mime_message_get_date(msg);

	if (from && internet_address_list_length(from) > 0) {
		InternetAddress *a = internet_address_list_get_address(from, 0);
		if (INTERNET_ADDRESS_IS_MAILBOX(a)) {
			const char *name = internet_address_get_name(a);
			p->author_name = g_strdup(name && *name ? name : NULL);
			p->author_email = g_strdup(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a)));
		}
	}
	if (date) {
		p->time = g_date_time_to_unix(date);
		p->tz_minutes = (int)(g_date_time_get_utc_offset(date) / G_TIME_SPAN_MINUTE);
	}
}

/*
 * Headers are 8-bit in the wild (raw Latin-1 names, cut encoded words) and
 * every string of a patch is promised UTF-8 (it goes into JSON, the store
 * and mail): a bad byte becomes U+FFFD.  Found by fuzz-mail.
 */
static void make_valid_utf8(char **s)
{
	if (*s && !g_utf8_validate(*s, -1, NULL)) {
		char *valid = g_utf8_make_valid(*s, -1);
		g_free(*s);
		*s = valid;
	}
}

/* body_line: the line of the mail where its body starts, 0 when unknown. */
static struct pk_patch *patch_from_message(GMimeMessage *msg, gboolean mboxrd, int body_line)
{
	gboolean verbatim = FALSE;
	g_autofree char *text = message_diff(msg, mboxrd, &verbatim);
	GMimeObject *obj = GMIME_OBJECT(msg);
	const char *diff, *v;
	struct pk_patch *p;

	if (!text || !(diff = find_diff(text)))
		return NULL;
	p = pk_patch_leftover_qp(diff, pk_patch_parse_diff(diff, strlen(diff)));
	/* damage is named by the line of the mail when the body is the mail's text */
	p->diff_line = verbatim && body_line ? body_line + pk_count_lines(text, (size_t)(diff - text)) : 0;
	if ((v = g_mime_message_get_subject(msg)))
		p->subject = g_strdup(v);
	if ((v = g_mime_object_get_header(obj, "Message-Id")))
		p->message_id = g_strdup(v);
	if ((v = g_mime_object_get_header(obj, "From")))
		p->author = g_strdup(v);
	if ((v = g_mime_object_get_header(obj, "Date")))
		p->date = g_strdup(v);
	message_author_and_time(msg, p);
	p->description = commit_message(text, diff);
	make_valid_utf8(&p->subject);
	make_valid_utf8(&p->message_id);
	make_valid_utf8(&p->author);
	make_valid_utf8(&p->author_name);
	make_valid_utf8(&p->author_email);
	make_valid_utf8(&p->date);
	make_valid_utf8(&p->description);
	return p;
}

/* A mail starts with an mbox "From " line or with a header field. */
static GMimeFormat mail_format(const char *buf, size_t len)
{
	size_t i;

	if (len >= 5 && !strncmp(buf, "From ", 5))
		return GMIME_FORMAT_MBOX;
	for (i = 0; i < len && (g_ascii_isalnum(buf[i]) || buf[i] == '-'); i++)
		;
	if (i > 0 && i < len && buf[i] == ':' && !g_str_has_prefix(buf, "Index:"))
		return GMIME_FORMAT_MESSAGE;
	return (GMimeFormat)-1;
}

static void gmime_init_once(void)
{
	static gsize done;

	if (g_once_init_enter(&done)) {
		g_mime_init();
		g_once_init_leave(&done, 1);
	}
}

/* The line of the mail just read where its body starts, counted from its first line. */
static int body_line(GMimeParser *parser, const char *buf, size_t len, GMimeFormat format)
{
	gint64 begin = format == GMIME_FORMAT_MBOX ? g_mime_parser_get_mbox_marker_offset(parser) : 0;
	gint64 end = g_mime_parser_get_headers_end(parser);

	if (begin < 0 || end < begin || (guint64)end > len)
		return 0;
	/* GMime's end of headers is before the blank line that ends them */
	return 2 + pk_count_lines(buf + begin, (size_t)(end - begin));
}

int pk_patch_read_mails(GPtrArray **out, unsigned *out_skipped, const char *buf,
			size_t len, GError **err)
{
	g_autoptr(GPtrArray) patches = g_ptr_array_new_with_free_func(pk_patch_free_void);
	g_autoptr(GMimeStream) stream = NULL;
	g_autoptr(GMimeParser) parser = NULL;
	GMimeFormat format = mail_format(buf, len);
	unsigned skipped = 0, read = 0;

	if ((int)format == -1) {
		struct pk_patch *p = pk_patch_parse_diff(buf, len);

		/* text without one file header (an empty file, a note) is no
		 * patch: callers say so, where a patch of no files was no-churn */
		if (p->files->len || p->error)
			g_ptr_array_add(patches, p);
		else
			pk_patch_free(p);
		goto done;
	}
	gmime_init_once();
	stream = g_mime_stream_mem_new_with_buffer(buf, len);
	parser = g_mime_parser_new_with_stream(stream);
	g_mime_parser_set_format(parser, format);
	while (!g_mime_parser_eos(parser)) {
		g_autoptr(GMimeMessage) msg = g_mime_parser_construct_message(parser, NULL);
		struct pk_patch *p;

		if (!msg)
			break;
		read++;
		if ((p = patch_from_message(msg, format == GMIME_FORMAT_MBOX, body_line(parser, buf, len, format))))
			g_ptr_array_add(patches, p);
		else
			skipped++;
		if (format == GMIME_FORMAT_MESSAGE)
			break;
	}
	if (!read)
		return pk_error(err, PK_ERROR_INPUT, "no mail could be read");
done:
	*out = g_steal_pointer(&patches);
	if (out_skipped)
		*out_skipped = skipped;
	return 0;
}
