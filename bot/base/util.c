/* util.c - shared helpers; see util.h for the contracts. */
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

char *pk_text_for_terminal(const char *s)
{
	g_autofree char *valid = g_utf8_make_valid(s ? s : "", -1);
	GString *out = g_string_sized_new(strlen(valid));

	for (const char *p = valid; *p; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);

		if (c == '\t' || c == '\n' || c == '\r')
			g_string_append_c(out, ' ');
		else if (terminal_control(c))
			g_string_append_c(out, '?');
		else
			g_string_append_unichar(out, c);
	}
	return g_string_free(out, FALSE);
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

int pk_read_file(char **out, size_t *out_len, const char *path, size_t max_bytes,
		 GError **err)
{
	g_autoptr(GString) buf = g_string_new(NULL);
	char chunk[65536];
	int fd;

	/* read(2), not mmap: the input may be a pipe or standard input */
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	if (fd < 0)
		return pk_error(err, PK_ERROR_INPUT, "cannot read %s: %s", path, strerror(errno));
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return pk_error(err, PK_ERROR_INPUT, "cannot read %s: %s", path, strerror(e));
		}
		if (n == 0)
			break;
		if (max_bytes && buf->len + (size_t)n > max_bytes) {
			close(fd);
			return pk_error(err, PK_ERROR_LIMIT, "%s: more than the limit of %zu bytes",
					path, max_bytes);
		}
		g_string_append_len(buf, chunk, n);
	}
	close(fd);
	if (out_len)
		*out_len = buf->len;
	*out = g_string_free(g_steal_pointer(&buf), FALSE);
	return 0;
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
