/* util.c - shared helpers; see util.h for the contracts. */
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef PK_SRCDIR
#define PK_SRCDIR "."
#endif
#ifndef PK_DATADIR
#define PK_DATADIR "/usr/local/share/printkbot"
#endif

G_DEFINE_QUARK(printkbot-error-quark, pk_error)

int pk_error(GError **err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && !*err) {
		va_start(ap, fmt);
		*err = g_error_new_valist(PK_ERROR, code, fmt, ap);
		va_end(ap);
	}
	return -1;
}

bool pk_errno_transient(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EIO || e == EAGAIN || e == EWOULDBLOCK ||
	       e == EINTR || e == EBUSY || e == ENOMEM;
}

int pk_errno_code(int e)
{
	return pk_errno_transient(e) ? PK_ERROR_TRANSIENT : PK_ERROR_FAILED;
}

bool pk_error_transient(const GError *err)
{
	return g_error_matches(err, PK_ERROR, PK_ERROR_TRANSIENT);
}

/* Whether c would move the cursor, sound, change colours or reorder text on a terminal. */
static bool terminal_control(gunichar c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/* s for a terminal: tab and LF kept with keep_lines, else blanks (CR too); other controls '?'. */
static char *for_terminal(const char *s, bool keep_lines)
{
	g_autofree char *valid = g_utf8_make_valid(s ? s : "", -1);
	GString *out = g_string_sized_new(strlen(valid));

	for (const char *p = valid; *p; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);

		if (keep_lines && (c == '\t' || c == '\n'))
			g_string_append_c(out, (char)c);
		else if (!keep_lines && (c == '\t' || c == '\n' || c == '\r'))
			g_string_append_c(out, ' ');
		else if (terminal_control(c))
			g_string_append_c(out, '?');
		else
			g_string_append_unichar(out, c);
	}
	return g_string_free(out, FALSE);
}

char *pk_text_for_terminal(const char *s)
{
	return for_terminal(s, false);
}

char *pk_lines_for_terminal(const char *s)
{
	return for_terminal(s, true);
}

void pk_print_text(const char *fmt, ...)
{
	va_list ap;
	g_autofree char *raw = NULL, *safe = NULL;

	va_start(ap, fmt);
	raw = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	safe = pk_lines_for_terminal(raw);
	fputs(safe, stdout);
}

char *pk_cache_dir(void)
{
	const char *env = g_getenv("PRINTKBOT_CACHE");
	char *dir;

	if (env && *env)
		dir = g_strdup(env);
	else
		dir = g_build_filename(g_get_home_dir(), ".cache", "printkbot", NULL);
	g_mkdir_with_parents(dir, 0755);
	return dir;
}

char *pk_runtime_dir(GError **err)
{
	const char *env = g_getenv("PRINTKBOT_RUNTIME_DIR");
	const char *xdg = g_getenv("XDG_RUNTIME_DIR");
	g_autofree char *dir = NULL;
	struct stat st;

	if (env && *env)
		dir = g_strdup(env);
	else if (geteuid() == 0 && g_file_test("/run", G_FILE_TEST_IS_DIR))
		dir = g_strdup("/run/printkbot");
	else if (xdg && *xdg)
		dir = g_build_filename(xdg, "printkbot", NULL);
	else {
		g_autofree char *cache = pk_cache_dir();

		dir = g_build_filename(cache, "run", NULL);
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		pk_error(err, pk_errno_code(errno), "cannot make the runtime dir %s: %s", dir, g_strerror(errno));
		return NULL;
	}
	if (lstat(dir, &st) < 0) {
		pk_error(err, pk_errno_code(errno), "%s: %s", dir, g_strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		pk_error(err, PK_ERROR_FAILED, "the runtime dir %s is %s: not used for locks (make it a directory "
			 "of uid %u, mode 0755, or set PRINTKBOT_RUNTIME_DIR)", dir,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : !S_ISDIR(st.st_mode) ? "not a directory"
			 : st.st_uid != geteuid() ? "owned by another user" : "writable by group or others",
			 (unsigned)geteuid());
		return NULL;
	}
	return g_steal_pointer(&dir);
}

char *pk_source_dir(void)
{
	const char *env = g_getenv("PRINTKBOT_SRCDIR");

	return g_strdup(env && *env ? env : PK_SRCDIR);
}

/* Whether the running program is a file under the checkout it was built from. */
static bool running_from_checkout(void)
{
	g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
	/* realpath(3): the kernel's exe path has no symlinks; GLib has no resolver */
	g_autofree char *src = realpath(PK_SRCDIR, NULL);
	g_autofree char *prefix = src ? g_strconcat(src, "/", NULL) : NULL;

	return exe && prefix && g_str_has_prefix(exe, prefix);
}

char *pk_data_dir(void)
{
	const char *env = g_getenv("PRINTKBOT_DATADIR");

	if (env && *env)
		return g_strdup(env);
	return g_strdup(running_from_checkout() ? PK_SRCDIR : PK_DATADIR);
}

int pk_read_fd(char **out, size_t *out_len, int fd, const char *name, size_t max_bytes, GError **err)
{
	g_autoptr(GString) buf = g_string_new(NULL);
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pk_error(err, PK_ERROR_INPUT, "cannot read %s: %s", name, strerror(errno));
		if (n == 0)
			break;
		/* counted as it comes: a file may grow while it is read, a pipe has no size */
		if (max_bytes && buf->len + (size_t)n > max_bytes)
			return pk_error(err, PK_ERROR_LIMIT, "%s: more than the limit of %zu bytes", name, max_bytes);
		g_string_append_len(buf, chunk, n);
	}
	if (out_len)
		*out_len = buf->len;
	*out = g_string_free(g_steal_pointer(&buf), FALSE);
	return 0;
}

int pk_read_file(char **out, size_t *out_len, const char *path, size_t max_bytes,
		 GError **err)
{
	/* read(2), not mmap: the input may be a pipe or standard input */
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO), rc;

	if (fd < 0)
		return pk_error(err, PK_ERROR_INPUT, "cannot read %s: %s", path, strerror(errno));
	rc = pk_read_fd(out, out_len, fd, path, max_bytes, err);
	close(fd);
	return rc;
}

int pk_write_file(const char *path, const char *data, size_t len, GError **err)
{
	GError *local = NULL;

	if (!g_file_set_contents(path, data, (gssize)len, &local)) {
		pk_error(err, PK_ERROR_FAILED, "cannot write %s: %s", path, local->message);
		g_error_free(local);
		return -1;
	}
	return 0;
}

double pk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static gboolean regex_small_input;

void pk_regex_input_size(guint64 bytes)
{
	regex_small_input = bytes < PK_REGEX_JIT_MIN_INPUT;
}

GRegexCompileFlags pk_regex_optimize(void)
{
	const char *jit = g_getenv("PRINTKBOT_REGEX_JIT");

	return (jit && !strcmp(jit, "0")) || regex_small_input ? 0 : G_REGEX_OPTIMIZE;
}

bool pk_progress_enabled(void)
{
	return isatty(STDERR_FILENO);
}

void pk_progress(const char *fmt, ...)
{
	va_list ap;

	if (!pk_progress_enabled())
		return;
	va_start(ap, fmt);
	fputs("\r\033[K", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

void pk_stage(const char *fmt, ...)
{
	static double first;
	g_autofree char *text = NULL;
	double now = pk_now(), t;
	va_list ap;

	if (!first)
		first = now;
	t = now - first;
	va_start(ap, fmt);
	text = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (pk_progress_enabled())
		pk_progress("[%u:%02u] %s...", (unsigned)(t / 60), (unsigned)t % 60, text);
	else
		pk_info("[%u:%02u] %s", (unsigned)(t / 60), (unsigned)t % 60, text);
}

void pk_info(const char *fmt, ...)
{
	va_list ap;

	if (pk_progress_enabled())
		fputs("\r\033[K", stderr);
	fputs("printkbot: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

char *pk_wrap(const char *text, unsigned width, const char *indent)
{
	g_auto(GStrv) words = g_strsplit_set(text ? text : "", " \n", -1);
	GString *out = g_string_new(NULL);
	unsigned col = 0, ind = g_utf8_strlen(indent, -1);

	for (char **w = words; *w; w++) {
		unsigned len = g_utf8_strlen(*w, -1);

		if (!len)
			continue;
		if (col && col + 1 + len > width) {
			g_string_append_printf(out, "\n%s", indent);
			col = ind;
		} else if (col) {
			g_string_append_c(out, ' ');
			col++;
		}
		g_string_append(out, *w);
		col += len;
	}
	return g_string_free(out, FALSE);
}

/* Whether the parameter name key (len bytes, maybe percent-encoded) holds a secret. */
static bool redact_key(const char *key, size_t len)
{
	g_autofree char *raw = g_strndup(key, len);
	g_autofree char *name = g_uri_unescape_string(raw, NULL);
	const char *k = name ? name : raw;

	return !g_ascii_strcasecmp(k, "password") || !g_ascii_strcasecmp(k, "sslpassword");
}

/* Append *** in place of the secret at s (len bytes), which secrets (if any) keeps. */
static void redact_span(GString *out, GPtrArray *secrets, const char *s, size_t len)
{
	g_string_append(out, "***");
	if (secrets && len)
		g_ptr_array_add(secrets, g_strndup(s, len));
}

/* Copy a URL's query (from after '?' to the end) with each password parameter's value as ***. */
static void redact_query(GString *out, GPtrArray *secrets, const char *q)
{
	while (*q && *q != '#') {
		size_t len = strcspn(q, "&#");
		const char *eq = memchr(q, '=', len);

		if (eq && redact_key(q, eq - q)) {
			g_string_append_len(out, q, eq + 1 - q);
			redact_span(out, secrets, eq + 1, q + len - (eq + 1));
		} else {
			g_string_append_len(out, q, len);
		}
		q += len;
		if (*q == '&')
			g_string_append_c(out, *q++);
	}
	g_string_append(out, q);
}

/*
 * A URL: the userinfo ends at the last '@' before the first '/' (libpq
 * takes the first '@', RFC 3986 parsers the last before '/', '?' or '#':
 * the widest of them is hidden, so that no parser's password shows).
 */
static void redact_url(GString *out, GPtrArray *secrets, const char *url, const char *sep)
{
	const char *auth = sep + 3, *end = auth + strcspn(auth, "/"), *at = NULL, *colon, *q;
	bool http = !g_ascii_strncasecmp(url, "http", 4);

	for (const char *p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	g_string_append_len(out, url, auth - url);
	if (at) {
		colon = memchr(auth, ':', at - auth);
		if (colon) {
			g_string_append_len(out, auth, colon + 1 - auth);
			redact_span(out, secrets, colon + 1, at - (colon + 1));
		} else if (http) {
			/* a forge takes a token as the user alone (https://TOKEN@host/x.git) */
			redact_span(out, secrets, auth, at - auth);
		} else {
			g_string_append_len(out, auth, at - auth);
		}
		auth = at;
	}
	if (!(q = strchr(auth, '?'))) {
		g_string_append(out, auth);
		return;
	}
	g_string_append_len(out, auth, q + 1 - auth);
	redact_query(out, secrets, q + 1);
}

/* A libpq "key=value ..." string: values are words, or quoted with ' and \ escapes. */
static void redact_conninfo(GString *out, GPtrArray *secrets, const char *s)
{
	while (*s) {
		const char *key, *val, *p;
		size_t klen;

		while (g_ascii_isspace(*s))
			g_string_append_c(out, *s++);
		key = s;
		while (*s && *s != '=' && !g_ascii_isspace(*s))
			s++;
		klen = s - key;
		while (g_ascii_isspace(*s))
			s++;
		if (*s != '=') {
			/* not key=value: the rest as it is */
			g_string_append(out, key);
			return;
		}
		s++;
		while (g_ascii_isspace(*s))
			s++;
		val = p = s;
		if (*p == '\'') {
			for (p++; *p && *p != '\''; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p)
				p++;
		} else {
			for (; *p && !g_ascii_isspace(*p); p++)
				if (*p == '\\' && p[1])
					p++;
		}
		g_string_append_len(out, key, val - key);
		if (klen && redact_key(key, klen)) {
			bool quoted = *val == '\'' && p - val >= 2 && p[-1] == '\'';

			redact_span(out, secrets, val + quoted, p - val - 2 * quoted);
		} else {
			g_string_append_len(out, val, p - val);
		}
		s = p;
	}
}

/* pk_url_redact(), and the secrets it hid (raw, as url has them) into secrets when not NULL. */
static char *url_redact(const char *url, GPtrArray *secrets)
{
	GString *out = g_string_new(NULL);
	const char *sep = strstr(url, "://");

	/* a scheme is letters, digits, '+', '-' and '.' (RFC 3986): else "://" is inside a value */
	if (sep && sep > url &&
	    strspn(url, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.") == (size_t)(sep - url))
		redact_url(out, secrets, url, sep);
	else if (strchr(url, '='))
		redact_conninfo(out, secrets, url);
	else
		g_string_append(out, url);
	return g_string_free(out, FALSE);
}

char *pk_url_redact(const char *url)
{
	return url ? url_redact(url, NULL) : NULL;
}

bool pk_url_has_secret(const char *url)
{
	g_autofree char *shown = pk_url_redact(url);

	return url && strcmp(shown, url);
}

/* Replace every occurrence of what in s by with (a new string; s is freed). */
static char *replace_all(char *s, const char *what, const char *with)
{
	g_auto(GStrv) parts = NULL;
	char *out;

	if (!*what || !strstr(s, what))
		return s;
	parts = g_strsplit(s, what, -1);
	out = g_strjoinv(with, parts);
	g_free(s);
	return out;
}

char *pk_url_scrub(const char *text, const char *url)
{
	g_autoptr(GPtrArray) secrets = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *shown = NULL;
	char *out;

	if (!text)
		return NULL;
	out = g_strdup(text);
	if (!url)
		return out;
	shown = url_redact(url, secrets);
	out = replace_all(out, url, shown);
	/* a secret quoted alone (libpq: invalid percent-encoded token: "..."), raw or decoded */
	for (guint i = 0; i < secrets->len; i++) {
		g_autofree char *decoded = g_uri_unescape_string(secrets->pdata[i], NULL);

		if (strlen(secrets->pdata[i]) >= PK_URL_SCRUB_MIN)
			out = replace_all(out, secrets->pdata[i], "***");
		if (decoded && strlen(decoded) >= PK_URL_SCRUB_MIN)
			out = replace_all(out, decoded, "***");
	}
	return out;
}
