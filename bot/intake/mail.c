/* mail.c - a mail's threading and guard headers, read; see mail.h. */
#include "intake/mail.h"
#include "intake/mail-gmime.h"
#include "base/util.h"

#include <gmime/gmime.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeStream, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeParser, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeMessage, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(InternetAddressList, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(InternetAddress, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimePartIter, g_mime_part_iter_free)

void pk_mail_gmime_init(void)
{
	static gsize done;

	if (g_once_init_enter(&done)) {
		g_mime_init();
		g_once_init_leave(&done, 1);
	}
}

void pk_mail_free(struct pk_mail *m)
{
	if (!m)
		return;
	g_free(m->message_id);
	g_free(m->in_reply_to);
	if (m->references)
		g_ptr_array_unref(m->references);
	g_free(m->subject);
	g_free(m->from_name);
	g_free(m->from_addr);
	if (m->to)
		g_ptr_array_unref(m->to);
	if (m->cc)
		g_ptr_array_unref(m->cc);
	if (m->cc_addrs)
		g_ptr_array_unref(m->cc_addrs);
	g_free(m->list_id);
	if (m->auth_results)
		g_ptr_array_unref(m->auth_results);
	g_free(m->base_commit);
	g_free(m->body);
	pk_patch_free(m->patch);
	g_free(m);
}

/* A Message-ID header's ids, without <>, in order. */
static GPtrArray *header_ids(GMimeObject *obj, const char *name)
{
	GPtrArray *ids = g_ptr_array_new_with_free_func(g_free);
	const char *v = g_mime_object_get_header(obj, name);
	GMimeReferences *refs = v ? g_mime_references_parse(NULL, v) : NULL;

	for (int i = 0; refs && i < g_mime_references_length(refs); i++) {
		const char *id = g_mime_references_get_message_id(refs, i);
		if (id && *id)
			g_ptr_array_add(ids, g_strdup(id));
	}
	if (refs)
		g_mime_references_free(refs);
	return ids;
}

static char *first_id(GMimeObject *obj, const char *name)
{
	g_autoptr(GPtrArray) ids = header_ids(obj, name);

	return ids->len ? g_strdup(ids->pdata[0]) : NULL;
}

/* Mailboxes of an address list (groups flattened), decoded. */
static void add_mailboxes(GPtrArray *shown, GPtrArray *addrs, InternetAddressList *list)
{
	for (int i = 0; list && i < internet_address_list_length(list); i++) {
		InternetAddress *a = internet_address_list_get_address(list, i);

		if (INTERNET_ADDRESS_IS_GROUP(a)) {
			add_mailboxes(shown, addrs, internet_address_group_get_members(INTERNET_ADDRESS_GROUP(a)));
			continue;
		}
		if (!INTERNET_ADDRESS_IS_MAILBOX(a))
			continue;
		const char *addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
		if (!addr || !*addr)
			continue;
		if (shown)
			g_ptr_array_add(shown, internet_address_to_string(a, NULL, FALSE));
		if (addrs)
			g_ptr_array_add(addrs, g_ascii_strdown(addr, -1));
	}
}

char *pk_mail_find_base_commit(const char *buf, size_t len)
{
	static GRegex *re;
	static gsize once;
	g_autoptr(GMatchInfo) mi = NULL;

	/* short ids and SHA-256 ones too: the base chosen says why it passed them over (bases.h) */
	if (g_once_init_enter(&once)) {
		re = g_regex_new("^base-commit: ([0-9a-f]{7,64})\\s*$",
				 G_REGEX_MULTILINE | G_REGEX_RAW | pk_regex_optimize(), 0, NULL);
		g_once_init_leave(&once, 1);
	}
	if (!g_regex_match_full(re, buf, (gssize)len, 0, 0, &mi, NULL))
		return NULL;
	return g_match_info_fetch(mi, 1);
}

/* A text/plain part's text, UTF-8 (GMime converts the charset), cut at PK_MAIL_BODY_MAX; or NULL. */
static char *plain_text(GMimeObject *obj)
{
	GMimeContentType *ct;
	char *text;

	if (!obj || !GMIME_IS_TEXT_PART(obj))
		return NULL;
	ct = g_mime_object_get_content_type(obj);
	if (ct && !g_mime_content_type_is_type(ct, "text", "plain"))
		return NULL;
	if (!(text = g_mime_text_part_get_text(GMIME_TEXT_PART(obj))))
		return NULL;
	if (strlen(text) > PK_MAIL_BODY_MAX) {
		const char *end = text + PK_MAIL_BODY_MAX;

		g_utf8_validate(text, PK_MAIL_BODY_MAX, &end);
		text[end - text] = '\0';
	}
	return text;
}

/* The first text/plain part of a message, or NULL. */
static char *message_text(GMimeMessage *msg)
{
	GMimeObject *top = g_mime_message_get_mime_part(msg);
	g_autoptr(GMimePartIter) iter = NULL;
	char *text = NULL;

	if (!top || !GMIME_IS_MULTIPART(top))
		return plain_text(top);
	iter = g_mime_part_iter_new(top);
	do
		text = plain_text(g_mime_part_iter_get_current(iter));
	while (!text && g_mime_part_iter_next(iter));
	return text;
}

/* A copy of buf with CRLF line ends made LF (mail from IMAP or SMTP comes as CRLF). */
static char *lf_only(const char *buf, size_t len, size_t *out_len)
{
	char *out = g_malloc(len + 1);
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		if (!(buf[i] == '\r' && i + 1 < len && buf[i + 1] == '\n'))
			out[n++] = buf[i];
	out[n] = '\0';
	*out_len = n;
	return out;
}

/*
 * A NUL in the header block would cut a header short where GMime hands it
 * on as a C string: <victim@x\0.evil> read as victim@x, another mail's
 * Message-ID.  No header may hold one (RFC 5322); the line of the first, 0
 * when there is none.
 */
static unsigned header_nul_line(const char *buf, size_t len)
{
	const char *end = buf + len;
	unsigned line = 1;

	for (const char *p = buf; p < end; p++) {
		if (!*p)
			return line;
		if (*p == '\n') {
			if ((p + 1 < end && p[1] == '\n') || (p + 2 < end && p[1] == '\r' && p[2] == '\n'))
				return 0;   /* the blank line: the body begins */
			line++;
		}
	}
	return 0;
}

/*
 * What says who sent the mail: how many mailboxes its From: fields name
 * (a mail with two From: fields is no one's: which one a signature
 * covered is not ours to guess), and its Authentication-Results in
 * order, topmost first (intake/authres.h reads them).
 */
static void read_trace(struct pk_mail *m, GMimeObject *obj, InternetAddressList *from)
{
	GMimeHeaderList *headers = g_mime_object_get_header_list(obj);
	int n = headers ? g_mime_header_list_get_count(headers) : 0;
	unsigned from_fields = 0;

	m->auth_results = g_ptr_array_new_with_free_func(g_free);
	for (int i = 0; i < n; i++) {
		GMimeHeader *h = g_mime_header_list_get_header_at(headers, i);
		const char *name = g_mime_header_get_name(h);
		const char *raw = g_mime_header_get_raw_value(h);

		if (!g_ascii_strcasecmp(name, "From"))
			from_fields++;
		else if (!g_ascii_strcasecmp(name, "Authentication-Results") && raw &&
			 m->auth_results->len < PK_MAIL_AUTH_RESULTS_MAX)
			g_ptr_array_add(m->auth_results, g_strdup(raw));
	}
	m->from_count = from_fields == 1 && from ? (unsigned)internet_address_list_length(from) : from_fields;
}

int pk_mail_parse(struct pk_mail **out, const char *buf, size_t len, GError **err)
{
	g_autofree char *lf = NULL;
	g_autoptr(GMimeStream) stream = NULL;
	g_autoptr(GMimeParser) parser = NULL;
	g_autoptr(GMimeMessage) msg = NULL;
	g_autoptr(GPtrArray) patches = NULL;
	g_autoptr(pk_mail) m = NULL;
	GMimeObject *obj;
	InternetAddressList *from;
	GDateTime *date;
	const char *v;
	unsigned nul;

	pk_mail_gmime_init();
	if ((nul = header_nul_line(buf, len)))
		return pk_error(err, PK_ERROR_INPUT, "refused: a NUL byte in the headers, line %u", nul);
	/* a diff read with CR line ends would match no line of the tree */
	if (memchr(buf, '\r', len)) {
		lf = lf_only(buf, len, &len);
		buf = lf;
	}
	stream = g_mime_stream_mem_new_with_buffer(buf, len);
	parser = g_mime_parser_new_with_stream(stream);
	g_mime_parser_set_format(parser, len >= 5 && !strncmp(buf, "From ", 5)
				 ? GMIME_FORMAT_MBOX : GMIME_FORMAT_MESSAGE);
	if (!(msg = g_mime_parser_construct_message(parser, NULL)))
		return pk_error(err, PK_ERROR_INPUT, "not a mail");
	obj = GMIME_OBJECT(msg);
	m = g_new0(struct pk_mail, 1);
	m->message_id = first_id(obj, "Message-Id");
	m->in_reply_to = first_id(obj, "In-Reply-To");
	m->references = header_ids(obj, "References");
	if ((v = g_mime_message_get_subject(msg)))
		m->subject = pk_mail_clean_subject(v);
	from = g_mime_message_get_from(msg);
	if (from && internet_address_list_length(from) > 0) {
		InternetAddress *a = internet_address_list_get_address(from, 0);
		if (INTERNET_ADDRESS_IS_MAILBOX(a)) {
			const char *name = internet_address_get_name(a);
			m->from_name = name && *name ? g_strdup(name) : NULL;
			m->from_addr = g_ascii_strdown(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a)), -1);
		}
	}
	m->to = g_ptr_array_new_with_free_func(g_free);
	m->cc = g_ptr_array_new_with_free_func(g_free);
	m->cc_addrs = g_ptr_array_new_with_free_func(g_free);
	add_mailboxes(m->to, m->cc_addrs, g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_TO));
	add_mailboxes(m->cc, m->cc_addrs, g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_CC));
	read_trace(m, obj, from);
	if ((v = g_mime_object_get_header(obj, "List-Id")))
		m->list_id = g_strstrip(g_strdup(v));
	m->bot_header = g_mime_object_get_header(obj, "X-Printkbot") != NULL;
	v = g_mime_object_get_header(obj, "Auto-Submitted");
	while (v && g_ascii_isspace(*v))
		v++;   /* GMime's header value is its own: skip the blanks, do not cut them */
	m->auto_submitted = v && g_ascii_strncasecmp(v, "no", 2) != 0;
	if ((date = g_mime_message_get_date(msg)))
		m->time = g_date_time_to_unix(date);
	m->base_commit = pk_mail_find_base_commit(buf, len);
	m->body = message_text(msg);
	/* the patch: patch.c reads it the way `scan` and `test` do */
	if (pk_patch_read_mails(&patches, NULL, buf, len, NULL) == 0 && patches->len > 0)
		m->patch = g_ptr_array_steal_index(patches, 0);
	*out = g_steal_pointer(&m);
	return 0;
}

/* The value of the Date header, folding undone, or NULL; only the header block is read. */
static GString *date_header(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	GString *value = NULL;

	if (len >= 5 && !strncmp(buf, "From ", 5))
		p = memchr(buf, '\n', len) ? (const char *)memchr(buf, '\n', len) + 1 : end;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (n && p[n - 1] == '\r')
			n--;
		if (!n)
			break;   /* the blank line: the body starts */
		if (value && (p[0] == ' ' || p[0] == '\t'))
			g_string_append_len(value, p, (gssize)n);
		else if (value)
			break;
		else if (n >= 5 && !g_ascii_strncasecmp(p, "Date:", 5))
			value = g_string_new_len(p + 5, (gssize)(n - 5));
		p = nl ? nl + 1 : end;
	}
	return value;
}

gint64 pk_mail_date(const char *buf, size_t len)
{
	g_autoptr(GString) value = date_header(buf, len);
	g_autoptr(GDateTime) t = NULL;

	if (!value)
		return 0;
	pk_mail_gmime_init();
	t = g_mime_utils_header_decode_date(value->str);
	return t ? g_date_time_to_unix(t) : 0;
}

void pk_mail_split_mbox(GPtrArray **out, GArray *offsets, const char *buf, size_t len)
{
	GPtrArray *mails = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	size_t start = 0;

	/* in mboxrd every body line that starts "From " is quoted: the rest separate mails */
	while (start < len) {
		const char *next = NULL;
		size_t end;

		for (const char *s = buf + start; s && (size_t)(s - buf) < len; ) {
			s = memchr(s, '\n', len - (size_t)(s - buf));
			if (!s)
				break;
			s++;
			if ((size_t)(s - buf) + 5 <= len && !memcmp(s, "From ", 5)) {
				next = s;
				break;
			}
		}
		end = next ? (size_t)(next - buf) : len;
		if (end > start) {
			g_ptr_array_add(mails, g_bytes_new(buf + start, end - start));
			if (offsets) {
				guint64 off = start;
				g_array_append_val(offsets, off);
			}
		}
		start = end;
	}
	*out = mails;
}

bool pk_mail_header_ok(const char *value)
{
	if (!value || !g_utf8_validate(value, -1, NULL))
		return false;
	for (const unsigned char *s = (const unsigned char *)value; *s; s++)
		if (*s < 0x20 && *s != '\t')
			return false;
		else if (*s == 0x7f)
			return false;
	return true;
}

bool pk_mail_msgid_ok(const char *s)
{
	const char *at;

	if (!s || !*s || strlen(s) > 900 || !(at = strchr(s, '@')) || at == s || !at[1])
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '<' || *p == '>' || *p == '"' || *p == '\\')
			return false;
	return true;
}

char *pk_mail_clean_subject(const char *subject)
{
	GString *s = g_string_new(NULL);
	bool blank = false;

	for (const unsigned char *p = (const unsigned char *)subject; p && *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == ' ') {
			blank = s->len > 0;
			continue;
		}
		if (blank)
			g_string_append_c(s, ' ');
		blank = false;
		g_string_append_c(s, (char)*p);
	}
	if (!g_utf8_validate(s->str, (gssize)s->len, NULL)) {
		char *valid = g_utf8_make_valid(s->str, (gssize)s->len);
		g_string_free(s, TRUE);
		return valid;
	}
	return g_string_free(s, FALSE);
}

InternetAddressList *pk_mail_one_mailbox(const char *mailbox)
{
	InternetAddressList *l;

	pk_mail_gmime_init();
	if (!pk_mail_header_ok(mailbox) || !(l = internet_address_list_parse(NULL, mailbox)))
		return NULL;
	if (internet_address_list_length(l) != 1 ||
	    !INTERNET_ADDRESS_IS_MAILBOX(internet_address_list_get_address(l, 0))) {
		g_object_unref(l);
		return NULL;
	}
	return l;
}

char *pk_mail_addr(const char *mailbox)
{
	g_autoptr(InternetAddressList) l = pk_mail_one_mailbox(mailbox);
	const char *addr;

	if (!l)
		return NULL;
	addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(internet_address_list_get_address(l, 0)));
	return addr && strchr(addr, '@') && pk_mail_header_ok(addr) ? g_strdup(addr) : NULL;
}

