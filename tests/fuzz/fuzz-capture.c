/* fuzz-capture.c - pk_capture_parse(): the framed stream the guest init writes. */
#include "fuzz.h"
#include "analysis/kmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct pk_capture *cap;

	fuzz_init_once();
	cap = pk_capture_parse(buf, size);
	if (!cap || !cap->records || !cap->index || !cap->problems)
		abort();
	pk_capture_free(cap);
	free(buf);
	return 0;
}
