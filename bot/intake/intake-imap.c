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
 * again, the caller dropping by Message-ID what it had already.
 *
 * One curl handle serves a whole fetch, so its commands share one
 * connection and one login.  The polled source is looked at every
 * poll_interval seconds (IMAP IDLE is not something curl does).
 */
#include "intake/intake.h"
#include "base/util.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <string.h>

struct imap {
	const struct pk_intake_ctx *ctx;
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

static int imap_open(void **out, const struct pk_intake_ctx *ctx, GError **err)
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

static CURL *handle_new(const struct imap *m, struct body *b, char *errbuf)
{
	const struct pk_source_config *c = m->ctx->cfg;
	CURL *h = curl_easy_init();

	if (!h)
		return NULL;
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 120L);
	curl_easy_setopt(h, CURLOPT_USE_SSL, (long)CURLUSESSL_TRY);
	if (c->user)
		curl_easy_setopt(h, CURLOPT_USERNAME, c->user);
	if (c->password)
		curl_easy_setopt(h, CURLOPT_PASSWORD, c->password);
	if (c->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	if (c->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	return h;
}

/* One request: url, with a custom command or NULL for a plain fetch; the body lands in b. */
static int request(CURL *h, struct body *b, const char *errbuf, const struct imap *m,
		   const char *url, const char *command, GError **err)
{
	CURLcode rc;

	g_string_truncate(b->buf, 0);
	b->too_big = false;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, command);
	if ((rc = curl_easy_perform(h)) != CURLE_OK)
		return pk_error(err, PK_ERROR_FAILED, "source %s: %s: %s", m->ctx->cfg->name,
				command ? command : url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
	return 0;
}

/* A number after word in an IMAP response ("UIDVALIDITY 123"), 0 when absent. */
static gint64 number_after(const char *text, const char *word)
{
	const char *p = text;
	size_t n = strlen(word);

	while ((p = strstr(p, word))) {
		p += n;
		if (*p == ' ')
			return g_ascii_strtoll(p + 1, NULL, 10);
	}
	return 0;
}

/* The UIDs of a "* SEARCH 1 2 3" response above last, in ascending order. */
static GArray *search_uids(const char *text, gint64 last)
{
	GArray *uids = g_array_new(FALSE, FALSE, sizeof(gint64));
	const char *p = strstr(text, "* SEARCH");

	if (!p)
		return uids;
	p += strlen("* SEARCH");
	while (*p && *p != '\r' && *p != '\n') {
		char *end;
		gint64 uid = g_ascii_strtoll(p, &end, 10);

		if (end == p) {
			p++;
			continue;
		}
		if (uid > last)
			g_array_append_val(uids, uid);
		p = end;
	}
	return uids;
}

static int cmp_uid(gconstpointer a, gconstpointer b)
{
	gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;

	return x < y ? -1 : x > y;
}

static int imap_fetch(void *state, pk_intake_deliver_fn deliver, void *data, unsigned *out_count,
		      GError **err)
{
	struct imap *m = state;
	char errbuf[CURL_ERROR_SIZE] = "";
	struct body b = { g_string_new(NULL), 4096u * 1024, false };
	g_autofree char *status = g_strdup_printf("STATUS \"%s\" (UIDVALIDITY UIDNEXT)", m->mailbox);
	g_autofree char *box_url = g_strconcat(m->server, m->mailbox_url, NULL);
	g_autofree char *search = NULL;
	g_autoptr(GArray) uids = NULL;
	gint64 validity, next, last = pk_intake_state_int(m->ctx, "last_uid");
	gint64 known = pk_intake_state_int(m->ctx, "uidvalidity");
	CURL *h = handle_new(m, &b, errbuf);
	int rc = -1;

	*out_count = 0;
	if (!h) {
		g_string_free(b.buf, TRUE);
		return pk_error(err, PK_ERROR_FAILED, "source %s: curl_easy_init failed", m->ctx->cfg->name);
	}
	if (request(h, &b, errbuf, m, m->server, status, err) < 0)
		goto out;
	validity = number_after(b.buf->str, "UIDVALIDITY");
	next = number_after(b.buf->str, "UIDNEXT");
	if (!validity) {
		pk_error(err, PK_ERROR_FAILED, "source %s: no UIDVALIDITY for %s in the STATUS answer",
			 m->ctx->cfg->name, m->mailbox);
		goto out;
	}
	if (validity != known) {
		if (known)
			pk_info("source %s: UIDVALIDITY of %s changed (%" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT
				"): reading it again", m->ctx->cfg->name, m->mailbox, known, validity);
		last = 0;
		if (pk_intake_state_set_int(m->ctx, "uidvalidity", validity, err) < 0 ||
		    pk_intake_state_set_int(m->ctx, "last_uid", 0, err) < 0)
			goto out;
	}
	if (next && next <= last + 1) {
		rc = 0;   /* nothing new: no SELECT needed */
		goto out;
	}
	search = g_strdup_printf("UID SEARCH UID %" G_GINT64_FORMAT ":*", last + 1);
	if (request(h, &b, errbuf, m, box_url, search, err) < 0)
		goto out;
	uids = search_uids(b.buf->str, last);
	g_array_sort(uids, cmp_uid);
	b.cap = PK_INTAKE_MAX_MAIL;
	for (guint i = 0; i < uids->len; i++) {
		gint64 uid = g_array_index(uids, gint64, i);
		g_autofree char *url = g_strdup_printf("%s;UIDVALIDITY=%" G_GINT64_FORMAT "/;UID=%" G_GINT64_FORMAT,
						       box_url, validity, uid);
		g_autoptr(GError) one = NULL;

		if (request(h, &b, errbuf, m, url, NULL, &one) < 0) {
			if (b.too_big) {
				/* too large to be a patch we would read: skip it, do not stall on it */
				pk_info("source %s: UID %" G_GINT64_FORMAT " is over %u bytes: skipped",
					m->ctx->cfg->name, uid, PK_INTAKE_MAX_MAIL);
			} else {
				g_propagate_error(err, g_steal_pointer(&one));
				goto out;
			}
		} else if (deliver(data, b.buf->str, b.buf->len, err) < 0) {
			goto out;
		}
		if (pk_intake_state_set_int(m->ctx, "last_uid", uid, err) < 0)
			goto out;
		(*out_count)++;
	}
	rc = 0;
out:
	curl_easy_cleanup(h);
	g_string_free(b.buf, TRUE);
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
	.watch_fd = imap_watch_fd,
	.fetch = imap_fetch,
	.close = imap_close,
};
