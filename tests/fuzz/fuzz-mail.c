/* fuzz-mail.c - pk_patch_read_mails(): mboxes, mails (MIME, encodings, charsets) and diffs. */
#include "fuzz.h"
#include "base/patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	GPtrArray *patches = NULL;
	unsigned skipped = 0;

	fuzz_init_once();
	if (pk_patch_read_mails(&patches, &skipped, buf, size, NULL) == 0) {
		/* every string of a patch is promised to be valid UTF-8 */
		for (guint i = 0; i < patches->len; i++) {
			const struct pk_patch *p = patches->pdata[i];
			const char *strs[] = { p->subject, p->author, p->author_name, p->author_email,
					       p->description, p->message_id };

			for (size_t k = 0; k < G_N_ELEMENTS(strs); k++)
				if (strs[k] && !g_utf8_validate(strs[k], -1, NULL))
					abort();
		}
		g_ptr_array_unref(patches);
	}
	free(buf);
	return 0;
}
