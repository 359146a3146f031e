/* util.c - shared helpers; see util.h for the contracts. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef PK_SRCDIR
#define PK_SRCDIR "."
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

int pk_read_file(char **out, size_t *out_len, const char *path, size_t max_bytes,
		 GError **err)
{
	g_autoptr(GMappedFile) map = NULL;
	GError *local = NULL;
	size_t len;
	char *buf;

	map = g_mapped_file_new(path, FALSE, &local);
	if (!map) {
		pk_error(err, PK_ERROR_INPUT, "cannot read %s: %s", path, local->message);
		g_error_free(local);
		return -1;
	}
	len = g_mapped_file_get_length(map);
	if (max_bytes && len > max_bytes)
		return pk_error(err, PK_ERROR_LIMIT, "%s: %zu bytes is over the limit of %zu",
				path, len, max_bytes);
	buf = g_malloc(len + 1);
	if (len)
		memcpy(buf, g_mapped_file_get_contents(map), len);
	buf[len] = '\0';
	*out = buf;
	if (out_len)
		*out_len = len;
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
