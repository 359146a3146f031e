/*
 * kcidb-post.c - a KCIDB document sent to a submission URL over HTTP(S),
 * as the daemon does with each finished review (kcidb.h).
 */
#include "report/kcidb.h"
#include "base/util.h"

#include <curl/curl.h>
#include <string.h>

#define POST_ANSWER_MAX 4096   /* what of the server's answer is kept, for the error */

static size_t on_answer(char *data, size_t size, size_t n, void *user)
{
	GString *answer = user;
	size_t len = size * n;

	if (answer->len < POST_ANSWER_MAX)
		g_string_append_len(answer, data, (gssize)MIN(len, POST_ANSWER_MAX - answer->len));
	return len;
}

int pk_kcidb_post(const char *url, const char *token, double timeout, const char *doc, long *out_status,
		  GError **err)
{
	CURL *h = curl_easy_init();
	struct curl_slist *headers = NULL;
	g_autofree char *auth = token ? g_strdup_printf("Authorization: Bearer %s", token) : NULL;
	g_autoptr(GString) answer = g_string_new(NULL);
	char errbuf[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURLcode rc;

	if (!h)
		return pk_error(err, PK_ERROR_FAILED, "libcurl could not start");
	headers = curl_slist_append(headers, "Content-Type: application/json");
	if (auth)
		headers = curl_slist_append(headers, auth);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, doc);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(doc));
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_answer);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, answer);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)(timeout > 0 ? timeout : 30));
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
	/* the token is for url alone: a redirect elsewhere would carry it there */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(headers);
	curl_easy_cleanup(h);
	if (auth)
		memset(auth, 0, strlen(auth));
	if (rc != CURLE_OK)
		return pk_error(err, pk_errno_code(EAGAIN), "%s", *errbuf ? errbuf : curl_easy_strerror(rc));
	*out_status = status;
	if (status < 200 || status > 299) {
		g_autofree char *said = pk_text_for_terminal(answer->str);

		return pk_error(err, PK_ERROR_FAILED, "HTTP %ld: %.300s", status, said);
	}
	return 0;
}
