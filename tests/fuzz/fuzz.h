/*
 * fuzz.h - what every libFuzzer target of tests/fuzz/ shares.
 *
 * The bot's parsers take (buf, len) with buf NUL-terminated after len
 * bytes, as pk_read_file() gives it; the input is copied so, exactly
 * len bytes long, so ASan sees any read past the NUL.  GLib criticals
 * are made fatal: a g_return_if_fail() that fires on hostile input is a
 * bug too (warnings are not: GMime warns about mail it repairs).
 */
#ifndef PK_FUZZ_H
#define PK_FUZZ_H

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/*
 * ASan's defaults for every target (ASAN_OPTIONS adds to them and wins).
 * No strstr interceptor: it measures the whole haystack on every call,
 * which made g_strsplit() of a diff quadratic and took 57% of fuzz-scan's
 * time (mail and scan ran at ~650 exec/s with it, see Makefile's SAN_ENV).
 * A small quarantine, no fill of new blocks and 5-frame allocation stacks:
 * the allocator was a quarter of fuzz-mail's time, and the quarantine's
 * 256 MB per target is too much on a shared machine.  Replaying a finding
 * with ASAN_OPTIONS=malloc_context_size=30 gives the full stacks.
 */
const char *__asan_default_options(void)
{
	return "intercept_strstr=0:quarantine_size_mb=16:max_malloc_fill_size=0:malloc_context_size=5";
}

static inline char *fuzz_copy(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	return buf;
}

/*
 * A GLib critical ends the run with abort(), which libFuzzer catches and
 * saves the input for: GLib's own fatal criticals stop on a breakpoint
 * (SIGTRAP), which libFuzzer does not handle, so the input was lost.
 */
static void fuzz_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	g_log_default_handler(domain, level, message, data);
	if (level & (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR))
		abort();
}

static inline void fuzz_init_once(void)
{
	static int done;

	if (!done) {
		g_log_set_default_handler(fuzz_log, NULL);
		done = 1;
	}
}

#endif
