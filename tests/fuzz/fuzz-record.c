/* fuzz-record.c - pk_record_parse(): one /dev/kmsg record. */
#include "fuzz.h"
#include "analysis/kmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	char *why = NULL;
	struct pk_record *rec;

	fuzz_init_once();
	rec = pk_record_parse(buf, size, &why);
	if (!rec == !why)   /* exactly one of a record and a reason */
		abort();
	if (rec && (rec->level < 0 || rec->level > 7 || !rec->text))
		abort();
	pk_record_free(rec);
	g_free(why);
	free(buf);
	return 0;
}
