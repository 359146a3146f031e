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

static inline char *fuzz_copy(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	return buf;
}

static inline void fuzz_init_once(void)
{
	static int done;

	if (!done) {
		g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL);
		done = 1;
	}
}

#endif
