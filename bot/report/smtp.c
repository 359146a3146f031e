/* smtp.c - a mail sent with libcurl; see smtp.h. */
#include "report/smtp.h"
#include "base/curl-tls.h"
#include "base/util.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

struct upload {
	const char *data;
	size_t len, pos;
};

static size_t on_read(char *buf, size_t size, size_t nmemb, void *userdata)
{
	struct upload *u = userdata;
	size_t n = MIN(size * nmemb, u->len - u->pos);

	memcpy(buf, u->data + u->pos, n);
	u->pos += n;
	return n;
}

/*
 * The recipients the server refused, from the conversation: curl sends
 * to those it accepted (CURLOPT_MAIL_RCPT_ALLLOWFAILS) but tells no one
 * which it dropped, so each RCPT TO heard going out is paired with the
 * answer that follows it.
 */
struct rcpt_watch {
	char *pending;       /* the address of the RCPT TO awaiting its answer */
	GPtrArray *refused;  /* "addr (the server's answer)" */
	/*
	 * And STARTTLS: curl fails alike whether the server does not offer it
	 * or answers it with a refusal (454 TLS not available), and the two
	 * need different words: the answer to a STARTTLS sent, else NULL.
	 */
	bool starttls_sent;
	char *starttls_answer;
	/*
	 * And the answer to the mail's end (its final dot), which says
	 * whether the server took it: 0 until it came.  data_sent: DATA went
	 * out; data_go: the server said go on (354), the mail follows.
	 */
	bool data_sent, data_go;
	int end_answer;
};

static int on_debug(CURL *h, curl_infotype type, char *data, size_t size, void *userp)
{
	struct rcpt_watch *w = userp;
	g_autofree char *line = NULL;

	if (type != CURLINFO_HEADER_OUT && type != CURLINFO_HEADER_IN)
		return 0;
	line = g_strndup(data, MIN(size, 512));
	line[strcspn(line, "\r\n")] = '\0';
	if (type == CURLINFO_HEADER_OUT) {
		g_free(w->pending);
		w->pending = g_ascii_strncasecmp(line, "RCPT TO:", 8) ? NULL : g_strdup(line + 8);
		w->starttls_sent = !g_ascii_strcasecmp(line, "STARTTLS");
		w->data_sent = !g_ascii_strcasecmp(line, "DATA");
		/* a command after the mail (QUIT): its end was never answered, nor will be */
		w->data_go = w->data_go && (!*line || !strcmp(line, "."));
	} else if (w->data_sent && strlen(line) >= 3 && line[3] != '-') {
		w->data_go = line[0] == '3';
		w->data_sent = false;
	} else if (w->data_go && strlen(line) >= 3 && line[3] != '-') {
		w->end_answer = atoi(line);
		w->data_go = false;
	} else if (w->starttls_sent && strlen(line) >= 3 && line[3] != '-') {
		g_free(w->starttls_answer);
		w->starttls_answer = g_strdup(line);
		w->starttls_sent = false;
	} else if (w->pending && strlen(line) >= 3 && line[3] != '-') {
		/* the last line of the answer: 2xx took it */
		if (line[0] != '2' && w->refused)
			g_ptr_array_add(w->refused, g_strdup_printf("%s (%s)", w->pending, line));
		g_clear_pointer(&w->pending, g_free);
	}
	return 0;
}

/*
 * How long a stop waits for the answer to a mail's end already sent: the
 * server has the whole mail and is deciding; an answer that comes in
 * time says it took it (recorded as sent, never sent again), and only a
 * server stuck past it is dropped (it may deliver it all the same, and
 * the retry send it twice: SMTP's own ambiguity, as after a crash).
 */
#define STOP_GRACE_AFTER_END 3.0

/* The caller's stop, as the progress callback's data (a function pointer is no void *). */
struct stop_check {
	bool (*stop)(void);
	const struct upload *up;
	const struct rcpt_watch *watch;
	double asked;          /* pk_now() when stop first said true, or 0 */
	bool dropped_at_end;   /* dropped while the answer to the mail's end was awaited */
};

/* Whether the mail's end went out and its answer has not come. */
static bool awaiting_end(const struct stop_check *s)
{
	return s->watch->data_go && s->up->pos == s->up->len && !s->watch->end_answer;
}

/*
 * libcurl's progress callback: about once a second, waiting or not, in
 * every state (the wait for the answer to the mail's end and to QUIT
 * included: the connection is never kept for curl_easy_cleanup(), whose
 * QUIT asks no one); non-zero drops the connection.
 */
static int on_progress(void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct stop_check *s = userp;

	if (!s->stop || !s->stop())
		return 0;
	if (!s->asked)
		s->asked = pk_now();
	if (!awaiting_end(s))
		return 1;
	s->dropped_at_end = pk_now() - s->asked >= STOP_GRACE_AFTER_END;
	return s->dropped_at_end;
}

int pk_smtp_send(const struct pk_smtp_config *cfg, const char *sender,
		 const char *const *recipients, const char *text, GPtrArray *refused,
		 bool (*stop)(void), bool *out_permanent, GError **err)
{
	struct rcpt_watch watch = { NULL, refused, false, NULL, false, false, 0 };
	long timeout = cfg->timeout > 0 ? MAX(1L, (long)cfg->timeout) : 60;
	static gsize once;
	char errbuf[CURL_ERROR_SIZE] = "";
	struct upload up = { text, strlen(text), 0 };
	struct stop_check check = { stop, &up, &watch, 0, false };
	g_autofree char *from = g_strdup_printf("<%s>", sender);
	struct curl_slist *rcpt = NULL;
	g_autofree char *shown = NULL;
	long code = 0;
	CURLcode rc;
	CURL *h;

	if (g_once_init_enter(&once)) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		g_once_init_leave(&once, 1);
	}
	if (out_permanent)
		*out_permanent = false;
	if (!(h = curl_easy_init()))
		return pk_error(err, PK_ERROR_FAILED, "smtp: curl_easy_init failed");
	for (const char *const *r = recipients; r && *r; r++) {
		g_autofree char *one = g_strdup_printf("<%s>", *r);
		rcpt = curl_slist_append(rcpt, one);
	}
	curl_easy_setopt(h, CURLOPT_URL, cfg->url);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_MAIL_FROM, from);
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT, rcpt);
	/* one stale Cc must not keep the reply from the others (named so from curl 8.2; misspelt before) */
#if LIBCURL_VERSION_NUM >= 0x080200
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT_ALLOWFAILS, 1L);
#else
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT_ALLLOWFAILS, 1L);
#endif
	curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, on_debug);
	curl_easy_setopt(h, CURLOPT_DEBUGDATA, &watch);
	curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);
	curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
	curl_easy_setopt(h, CURLOPT_READDATA, &up);
	curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)up.len);
	curl_easy_setopt(h, CURLOPT_USE_SSL, pk_curl_use_ssl(pk_tls_enforced(cfg->tls, cfg->user != NULL)));
	/* whole seconds, at least 1: curl takes 0 for no limit */
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout);
	/* each answer too: curl's wait for the answer to QUIT ignores CURLOPT_TIMEOUT (120 s more) */
	curl_easy_setopt(h, CURLOPT_SERVER_RESPONSE_TIMEOUT, timeout);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
	/* the timeouts are a minute; a daemon asked to stop must not wait them out */
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &check);
	/* closed (QUIT) within the transfer, where the stop is asked, never in curl_easy_cleanup() */
	curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
	if (cfg->user) {
		curl_easy_setopt(h, CURLOPT_USERNAME, cfg->user);
		curl_easy_setopt(h, CURLOPT_PASSWORD, cfg->password ? cfg->password : "");
	}
	if (cfg->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, cfg->ca_file);
	if (cfg->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(rcpt);
	curl_easy_cleanup(h);
	g_free(watch.pending);
	/* taken: what failed after (QUIT's answer, a stop) changes nothing */
	if (rc == CURLE_OK || (watch.end_answer >= 200 && watch.end_answer < 300)) {
		g_free(watch.starttls_answer);
		return 0;
	}
	/* a login written into the url (smtp://user:secret@host) stays out of the message */
	shown = pk_url_redact(cfg->url);
	if (rc == CURLE_USE_SSL_FAILED && watch.starttls_answer) {
		g_autofree char *answer = pk_text_for_terminal(watch.starttls_answer);

		g_free(watch.starttls_answer);
		return pk_error(err, PK_ERROR_FAILED, "smtp %s: no TLS: the server refused STARTTLS (it "
				"said \"%s\") and tls = %s%s, so nothing was sent, no AUTH in clear", shown,
				answer, pk_tls_name(cfg->tls), cfg->tls == PK_TLS_TRY ? " with a login" : "");
	}
	g_free(watch.starttls_answer);
	if (rc == CURLE_ABORTED_BY_CALLBACK && check.dropped_at_end)
		return pk_error(err, PK_ERROR_FAILED, "smtp %s: stopped: the server had the whole mail and had not "
				"answered it %.0f s later (it may deliver it, and the retry send it again)", shown,
				STOP_GRACE_AFTER_END);
	if (rc == CURLE_ABORTED_BY_CALLBACK)
		return pk_error(err, PK_ERROR_FAILED, "smtp %s: stopped before the server took the mail", shown);
	if (rc == CURLE_USE_SSL_FAILED)
		return pk_error(err, PK_ERROR_FAILED, "smtp %s: no TLS: the server offers no STARTTLS and "
				"tls = %s%s, so nothing was sent, no AUTH in clear (tls = off allows that)",
				shown, pk_tls_name(cfg->tls), cfg->tls == PK_TLS_TRY ? " with a login" : "");
	if (out_permanent)
		*out_permanent = code >= 500 && code < 600;
	if (code)
		return pk_error(err, PK_ERROR_FAILED, "smtp %s: %s (server said %ld)", shown,
				errbuf[0] ? errbuf : curl_easy_strerror(rc), code);
	return pk_error(err, PK_ERROR_FAILED, "smtp %s: %s", shown,
			errbuf[0] ? errbuf : curl_easy_strerror(rc));
}
