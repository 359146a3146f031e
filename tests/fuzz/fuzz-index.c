/* fuzz-index.c - pk_index_parse(): /sys/kernel/debug/printk/index/vmlinux text. */
#include "fuzz.h"
#include "analysis/kmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)pk_index_entry_free);
	GString *problems = g_string_new(NULL);

	fuzz_init_once();
	pk_index_parse(out, buf, size, problems);
	for (guint i = 0; i < out->len; i++) {
		const struct pk_index_entry *e = out->pdata[i];

		if (!e->file || !e->format || e->level < -1 || e->level > 7)
			abort();
	}
	g_ptr_array_unref(out);
	g_string_free(problems, TRUE);
	free(buf);
	return 0;
}
