/*
 * intake-imap.c - an IMAP mailbox as a source, read with libcurl.
 *
 * Each fetch asks STATUS for the mailbox's UIDVALIDITY and UIDNEXT, then
 * UID SEARCH for the UIDs above the last one handed over, and fetches
 * each of those by UID (with ;UIDVALIDITY= in the URL, so curl refuses a
 * mailbox that was recreated meanwhile).  The last UID and the
 * UIDVALIDITY it belongs to are kept in the store: after a restart
 * nothing is read twice or missed, and when the server's UIDVALIDITY
 * changes (a mailbox rebuilt, UIDs reassigned) the whole mailbox is read
 * again, the caller dropping by Message-ID what it had already (and, for
 * a source that started now, what is dated before that start).
 * Starting now records UIDNEXT - 1 as the last UID; with start = <date>
 * the server is asked only for the mails SENTSINCE the day before it
 * (intake.c judges the exact time).
 *
 * TLS is as [source NAME] tls says (base/tls.h): STARTTLS required unless
 * the server is on loopback, and the login never in clear unless tls =
 * off.  One curl handle serves a whole fetch, so its commands share one
 * connection and one login.  The polled source is looked at every
 * poll_interval seconds (IMAP IDLE is not something curl does).
 */
#include "intake/intake.h"
#include "base/curl-tls.h"
#include "base/util.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <string.h>

struct imap {
	struct pk_intake_ctx *ctx;
	char *server;     /* imap[s]://host[:port]/ */
	char *mailbox;    /* decoded, for STATUS */
	char *mailbox_url;/* as written in the URL, for the fetch URLs */
};

static void curl_init_once(void)
{
	static gsize done;

	if (g_once_init_enter(&done)) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		g_once_init_leave(&done, 1);
	}
}

static int imap_open(void **out, struct pk_intake_ctx *ctx, GError **err)
{
	const char *url = ctx->cfg->url;
	const char *host = strstr(url, "://");
	const char *slash = host ? strchr(host + 3, '/') : NULL;
	struct imap *m;
	g_autofree char *box = NULL;

	curl_init_once();
	box = slash && slash[1] ? g_strdup(slash + 1) : g_strdup("INBOX");
	if (strpbrk(box, ";?#"))
		*strpbrk(box, ";?#") = '\0';
	m = g_new0(struct imap, 1);
	m->ctx = ctx;
	m->server = slash ? g_strndup(url, (gsize)(slash - url + 1)) : g_strdup_printf("%s/", url);
	m->mailbox_url = g_steal_pointer(&box);
	m->mailbox = g_uri_unescape_string(m->mailbox_url, NULL);
	/* the name goes into a quoted IMAP string: no quote, backslash or line break */
	if (!m->mailbox || !*m->mailbox || strpbrk(m->mailbox, "\"\\\r\n")) {
		pk_error(err, PK_ERROR_INPUT, "source %s: '%s' is not a mailbox printkbot can name",
			 ctx->cfg->name, m->mailbox_url);
		g_free(m->server);
		g_free(m->mailbox);
		g_free(m->mailbox_url);
		g_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

static int imap_watch_fd(void *state)
{
	return -1;
}

/* A response body, capped (curl's Curl_dyn_init(s, toobig) idea). */
struct body {
	GString *buf;
	size_t cap;
	bool too_big;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct body *b = userdata;
	size_t n = size * nmemb;

	if (b->buf->len + n > b->cap) {
		b->too_big = true;
		return 0;   /* CURLE_WRITE_ERROR */
	}
	g_string_append_len(b->buf, ptr, (gssize)n);
	return n;
}

/*
 * What became of STARTTLS, from the conversation: curl fails alike
 * (CURLE_USE_SSL_FAILED) whether the server does not offer it or answers
 * it NO or BAD, and says nothing that tells a server that accepted it
 * and then could not do TLS (Dovecot with a certificate it cannot load
 * says OK, then BYE in clear) from any other TLS failure.  Only the
 * STARTTLS command and its tagged answer are kept: no other line (a
 * LOGIN's password) is.
 */
struct starttls_watch {
	char *tag;       /* the tag of the STARTTLS sent ("A002 "), or NULL */
	char *answer;    /* the server's tagged answer to it, or NULL */
	bool tls_up;     /* a command went out after an OK to it: the handshake was done */
};

static int on_debug(CURL *h, curl_infotype type, char *data, size_t size, void *userp)
{
	struct starttls_watch *w = userp;
	g_autofree char *line = NULL;
	const char *sp;

	if (type != CURLINFO_HEADER_OUT && type != CURLINFO_HEADER_IN)
		return 0;
	line = g_strndup(data, MIN(size, 512));
	line[strcspn(line, "\r\n")] = '\0';
	if (type == CURLINFO_HEADER_OUT && (sp = strchr(line, ' ')) && !g_ascii_strcasecmp(sp + 1, "STARTTLS")) {
		g_free(w->tag);
		w->tag = g_strndup(line, (gsize)(sp - line + 1));
		g_clear_pointer(&w->answer, g_free);
		w->tls_up = false;
	} else if (type == CURLINFO_HEADER_OUT) {
		w->tls_up = w->tls_up || (w->answer && !g_ascii_strncasecmp(w->answer, "OK", 2));
	} else if (type == CURLINFO_HEADER_IN && w->tag && !w->answer && g_str_has_prefix(line, w->tag)) {
		w->answer = g_strdup(line + strlen(w->tag));
	}
	return 0;
}

/* One connection's worth of requests: the handle, its last body and error text. */
struct session {
	const struct imap *m;
	CURL *h;
	struct body b;
	char errbuf[CURL_ERROR_SIZE];
	struct starttls_watch tls;
};

static int session_open(struct session *s, const struct imap *m, GError **err)
{
	const struct pk_source_config *c = m->ctx->cfg;

	*s = (struct session){ .m = m, .b = { g_string_new(NULL), 4096u * 1024, false } };
	if (!(s->h = curl_easy_init())) {
		g_string_free(s->b.buf, TRUE);
		return pk_error(err, PK_ERROR_FAILED, "source %s: curl_easy_init failed", c->name);
	}
	curl_easy_setopt(s->h, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(s->h, CURLOPT_DEBUGFUNCTION, on_debug);
	curl_easy_setopt(s->h, CURLOPT_DEBUGDATA, &s->tls);
	curl_easy_setopt(s->h, CURLOPT_VERBOSE, 1L);
	curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(s->h, CURLOPT_WRITEDATA, &s->b);
	curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(s->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(s->h, CURLOPT_LOW_SPEED_TIME, 120L);
	curl_easy_setopt(s->h, CURLOPT_USE_SSL, pk_curl_use_ssl(pk_tls_enforced(c->tls, c->user != NULL)));
	if (c->user)
		curl_easy_setopt(s->h, CURLOPT_USERNAME, c->user);
	if (c->password)
		curl_easy_setopt(s->h, CURLOPT_PASSWORD, c->password);
	if (c->ca_file)
		curl_easy_setopt(s->h, CURLOPT_CAINFO, c->ca_file);
	if (c->insecure) {
		curl_easy_setopt(s->h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(s->h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	return 0;
}

static void session_close(struct session *s)
{
	curl_easy_cleanup(s->h);
	g_string_free(s->b.buf, TRUE);
	g_free(s->tls.tag);
	g_free(s->tls.answer);
}

/* One request: url, with a custom command or NULL for a plain fetch; the body lands in s->b. */
static int request(struct session *s, const char *url, const char *command, GError **err)
{
	const struct pk_source_config *c = s->m->ctx->cfg;
	g_autofree char *server = NULL, *shown = NULL;
	CURLcode rc;

	g_string_truncate(s->b.buf, 0);
	s->b.too_big = false;
	s->errbuf[0] = '\0';
	curl_easy_setopt(s->h, CURLOPT_URL, url);
	curl_easy_setopt(s->h, CURLOPT_CUSTOMREQUEST, command);
	if ((rc = curl_easy_perform(s->h)) == CURLE_OK)
		return 0;
	/* the url may carry a login (imaps://user:secret@host/): never in a message */
	server = pk_url_redact(s->m->server);
	shown = pk_url_redact(url);
	if (rc == CURLE_USE_SSL_FAILED && s->tls.answer) {
		g_autofree char *answer = pk_text_for_terminal(s->tls.answer);

		return pk_error(err, PK_ERROR_FAILED, "source %s: no TLS: %s refused STARTTLS (it said \"%s\") and "
				"tls = %s%s, so no login was sent in clear", c->name, server, answer,
				pk_tls_name(c->tls), c->tls == PK_TLS_TRY ? " with a login" : "");
	}
	if (rc == CURLE_USE_SSL_FAILED)
		return pk_error(err, PK_ERROR_FAILED, "source %s: no TLS: %s offers no STARTTLS and tls = %s%s, "
				"so no login was sent in clear (tls = off allows that)", c->name, server,
				pk_tls_name(c->tls), c->tls == PK_TLS_TRY ? " with a login" : "");
	/* accepted, and TLS failed all the same: curl's words say how, ours say where */
	if (s->tls.answer && !g_ascii_strncasecmp(s->tls.answer, "OK", 2) && !s->tls.tls_up)
		return pk_error(err, PK_ERROR_FAILED, "source %s: no TLS: %s accepted STARTTLS, then TLS failed (%s), "
				"so no login was sent", c->name, server,
				s->errbuf[0] ? s->errbuf : curl_easy_strerror(rc));
	return pk_error(err, PK_ERROR_FAILED, "source %s: %s: %s", c->name, command ? command : shown,
			s->errbuf[0] ? s->errbuf : curl_easy_strerror(rc));
}

/*
 * An IMAP number at p: a UID, UIDVALIDITY and UIDNEXT are 32-bit
 * (RFC 3501's nz-number, 1 to 4294967295).  Anything else is -1: one
 * absurd UID kept as the position would pin it for ever (and overflow
 * last + 1).  *end (may be NULL) is set past the digits, to p when none.
 */
static gint64 imap_number(const char *p, const char **end)
{
	guint64 v = 0;
	const char *q = p;

	/* hand-written: g_ascii_strtoull() takes signs and blanks, which are no IMAP number */
	while (g_ascii_isdigit(*q)) {
		if (v <= G_MAXUINT32)
			v = v * 10 + (guint64)(*q - '0');
		q++;
	}
	if (end)
		*end = q;
	return q == p || v == 0 || v > G_MAXUINT32 ? -1 : (gint64)v;
}

/* A number after word in an IMAP response ("UIDVALIDITY 123"): 0 when absent, -1 when not 32-bit. */
static gint64 number_after(const char *text, const char *word)
{
	const char *p = text;
	size_t n = strlen(word);

	while ((p = strstr(p, word))) {
		p += n;
		if (*p == ' ')
			return imap_number(p + 1, NULL);
	}
	return 0;
}

/* A UID, UIDVALIDITY or UIDNEXT the server sent that is no 32-bit number: an error naming the source. */
static int absurd(const struct imap *m, const char *what, const char *text, GError **err)
{
	g_autofree char *shown = g_strndup(text, strcspn(text, "\r\n"));

	return pk_error(err, PK_ERROR_FAILED, "source %s: the server gave %s that is not a 32-bit number "
			"(RFC 3501) for %s: '%.200s'; the position is left where it was", m->ctx->cfg->name,
			what, m->mailbox, shown);
}

/* The mailbox's UIDVALIDITY (never 0 on success) and UIDNEXT (0 when the server gave none). */
static int status(struct session *s, gint64 *out_validity, gint64 *out_next, GError **err)
{
	const struct imap *m = s->m;
	g_autofree char *cmd = g_strdup_printf("STATUS \"%s\" (UIDVALIDITY UIDNEXT)", m->mailbox);
	const char *text;
	gint64 validity;

	if (request(s, m->server, cmd, err) < 0)
		return -1;
	text = s->b.buf->str;
	if (!(validity = number_after(text, "UIDVALIDITY")))
		return pk_error(err, PK_ERROR_FAILED, "source %s: no UIDVALIDITY for %s in the STATUS answer",
				m->ctx->cfg->name, m->mailbox);
	if (validity < 0 || (*out_next = number_after(text, "UIDNEXT")) < 0)
		return absurd(m, validity < 0 ? "a UIDVALIDITY" : "a UIDNEXT", strstr(text, "* STATUS") ?
			      strstr(text, "* STATUS") : text, err);
	*out_validity = validity;
	return 0;
}

static int cmp_uid(gconstpointer a, gconstpointer b)
{
	gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;

	return x < y ? -1 : x > y;
}

/* The UIDs of a "* SEARCH 1 2 3" response above last, in ascending order; -1 on one not 32-bit. */
static int search_uids(const struct imap *m, const char *text, gint64 last, GArray **out, GError **err)
{
	g_autoptr(GArray) uids = g_array_new(FALSE, FALSE, sizeof(gint64));
	const char *p = strstr(text, "* SEARCH"), *line = p;

	if (p)
		p += strlen("* SEARCH");
	while (p && *p && *p != '\r' && *p != '\n') {
		const char *end;
		gint64 uid = imap_number(p + (*p == '-' || *p == '+'), &end);

		if (end == p + (*p == '-' || *p == '+')) {
			p++;
			continue;
		}
		if (uid < 0 || !g_ascii_isdigit(*p) || (*end && !strchr(" \r\n)", *end)))
			return absurd(m, "a UID", line, err);
		if (uid > last)
			g_array_append_val(uids, uid);
		p = end;
	}
	g_array_sort(uids, cmp_uid);
	*out = g_steal_pointer(&uids);
	return 0;
}

/* The UIDs above last (and, for start = <date>, sent since the day before it). */
static int search(struct session *s, gint64 last, GArray **out, GError **err)
{
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	const struct pk_source_config *c = s->m->ctx->cfg;
	g_autofree char *box_url = g_strconcat(s->m->server, s->m->mailbox_url, NULL);
	g_autofree char *cmd = g_strdup_printf("UID SEARCH UID %" G_GINT64_FORMAT ":*", last + 1);

	if (c->start == PK_START_DATE) {
		/* SENTSINCE is by the Date's day, in its own zone: a day early keeps every candidate */
		g_autoptr(GDateTime) t = g_date_time_new_from_unix_utc(c->start_date - 86400);
		g_autofree char *with = g_strdup_printf("%s SENTSINCE %d-%s-%d", cmd,
							g_date_time_get_day_of_month(t),
							months[g_date_time_get_month(t) - 1],
							g_date_time_get_year(t));

		g_free(cmd);
		cmd = g_steal_pointer(&with);
	}
	if (request(s, box_url, cmd, err) < 0)
		return -1;
	return search_uids(s->m, s->b.buf->str, last, out, err);
}

/* Fetch one UID and hand it over; a mail over the cap is skipped, not stalled on. */
static int fetch_uid(struct session *s, gint64 validity, gint64 uid, pk_intake_deliver_fn deliver,
		     void *data, GError **err)
{
	g_autofree char *url = g_strdup_printf("%s%s;UIDVALIDITY=%" G_GINT64_FORMAT "/;UID=%" G_GINT64_FORMAT,
					       s->m->server, s->m->mailbox_url, validity, uid);
	g_autoptr(GError) one = NULL;
	g_autofree char *where = g_strdup_printf("UID %" G_GINT64_FORMAT " of %s", uid, s->m->mailbox);

	if (request(s, url, NULL, &one) == 0)
		return deliver(data, s->b.buf->str, s->b.buf->len, where, err);
	if (!s->b.too_big) {
		g_propagate_error(err, g_steal_pointer(&one));
		return -1;
	}
	pk_info("source %s: the mail of UID %" G_GINT64_FORMAT " is over max_mail_mb (%zu bytes): skipped",
		s->m->ctx->cfg->name, uid, s->b.cap);
	return 0;
}

/* A new UIDVALIDITY: the mailbox was rebuilt and is read from its first UID. */
static int validity_changed(const struct imap *m, gint64 known, gint64 validity, GError **err)
{
	if (known) {
		pk_info("source %s: UIDVALIDITY of %s changed (%" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT
			"): reading it again", m->ctx->cfg->name, m->mailbox, known, validity);
		if (pk_intake_read_again(m->ctx, err) < 0)
			return -1;
	}
	if (pk_intake_state_set_int(m->ctx, "uidvalidity", validity, err) < 0 ||
	    pk_intake_state_set_int(m->ctx, "last_uid", 0, err) < 0)
		return -1;
	return 0;
}

static int fetch_new(struct session *s, pk_intake_deliver_fn deliver, void *data, unsigned *out_count,
		     GError **err)
{
	const struct imap *m = s->m;
	g_autoptr(GArray) uids = NULL;
	gint64 validity, next, last = pk_intake_state_int(m->ctx, "last_uid");
	gint64 known = pk_intake_state_int(m->ctx, "uidvalidity");

	if (status(s, &validity, &next, err) < 0)
		return -1;
	if (last < 0 || last > G_MAXUINT32) {
		/* kept by a version that took any number: start the mailbox again, not pinned */
		pk_info("source %s: the stored last UID %" G_GINT64_FORMAT " is not a 32-bit UID: %s is "
			"read again from its first UID (mails seen before are dropped)", m->ctx->cfg->name,
			last, m->mailbox);
		if (pk_intake_read_again(m->ctx, err) < 0 ||
		    pk_intake_state_set_int(m->ctx, "last_uid", 0, err) < 0)
			return -1;
		last = 0;
	}
	if (validity != known) {
		if (validity_changed(m, known, validity, err) < 0)
			return -1;
		last = 0;
	}
	if (next && next <= last + 1)
		return 0;   /* nothing new: no SELECT needed */
	if (search(s, last, &uids, err) < 0)
		return -1;
	s->b.cap = m->ctx->max_mail ? m->ctx->max_mail : G_MAXSIZE;
	for (guint i = 0; i < uids->len; i++) {
		gint64 uid = g_array_index(uids, gint64, i);

		if (fetch_uid(s, validity, uid, deliver, data, err) < 0 ||
		    pk_intake_state_set_int(m->ctx, "last_uid", uid, err) < 0)
			return -1;
		(*out_count)++;
	}
	if (uids->len)
		last = g_array_index(uids, gint64, uids->len - 1);
	/* every UID below UIDNEXT was in the answer: those not in it (or not sent since) are done */
	if (next - 1 > last)
		return pk_intake_state_set_int(m->ctx, "last_uid", next - 1, err);
	return 0;
}

static int imap_fetch(void *state, pk_intake_deliver_fn deliver, void *data, unsigned *out_count,
		      GError **err)
{
	struct session s;
	int rc;

	*out_count = 0;
	if (session_open(&s, state, err) < 0)
		return -1;
	rc = fetch_new(&s, deliver, data, out_count, err);
	session_close(&s);
	return rc;
}

/* The last UID is UIDNEXT - 1 (the highest UID when the server gives no UIDNEXT). */
static int imap_start_now(void *state, GError **err)
{
	struct imap *m = state;
	g_autoptr(GArray) uids = NULL;
	gint64 validity, next;
	struct session s;
	int rc = -1;

	if (pk_intake_state_int(m->ctx, "uidvalidity"))
		return 0;   /* read before: go on from there */
	if (session_open(&s, m, err) < 0)
		return -1;
	if (status(&s, &validity, &next, err) < 0)
		goto out;
	if (!next) {
		g_autofree char *box_url = g_strconcat(m->server, m->mailbox_url, NULL);

		if (request(&s, box_url, "UID SEARCH UID *", err) < 0 ||
		    search_uids(m, s.b.buf->str, 0, &uids, err) < 0)
			goto out;
		next = uids->len ? g_array_index(uids, gint64, uids->len - 1) + 1 : 1;
	}
	if (pk_intake_state_set_int(m->ctx, "uidvalidity", validity, err) < 0 ||
	    pk_intake_state_set_int(m->ctx, "last_uid", next - 1, err) < 0)
		goto out;
	rc = 0;
out:
	session_close(&s);
	return rc;
}

static void imap_close(void *state)
{
	struct imap *m = state;

	if (!m)
		return;
	g_free(m->server);
	g_free(m->mailbox);
	g_free(m->mailbox_url);
	g_free(m);
}

const struct pk_intake_ops pk_intake_imap = {
	.type = "imap",
	.kind = "imap",
	.open = imap_open,
	.start_now = imap_start_now,
	.watch_fd = imap_watch_fd,
	.fetch = imap_fetch,
	.close = imap_close,
};
