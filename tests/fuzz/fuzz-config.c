/*
 * fuzz-config.c - pk_config_load(): the config file, through a memfd
 * (/proc/self/fd/N), so each input costs no disk.  Keys that name files
 * the loader would read (password_file) are real paths on this machine;
 * the target works in an empty directory so that relative ones find
 * nothing.
 */
#define _GNU_SOURCE
#include "fuzz.h"
#include "config/config.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];
	struct pk_config c;
	GError *err = NULL;

	fuzz_init_once();
	if (fd < 0 && (fd = memfd_create("printkbot-fuzz.conf", 0)) < 0)
		abort();
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if (pk_config_load(&c, path, &err) == 0) {
		if (!c.daemon.mail.from || !c.sources)
			abort();
		pk_config_clear(&c);
	} else if (!err || !err->message) {
		abort();
	}
	g_clear_error(&err);
	return 0;
}
