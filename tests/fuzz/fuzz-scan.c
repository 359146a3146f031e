/* fuzz-scan.c - pk_patch_parse_diff() and pk_scan(), and each file's post-image. */
#include "fuzz.h"
#include "base/patch.h"
#include "analysis/scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct pk_patch *patch;
	struct pk_scan *scan;

	fuzz_init_once();
	patch = pk_patch_parse_diff(buf, size);
	scan = pk_scan(patch);
	if (!scan || !scan->verdict)
		abort();
	/* the post-image of each file from an empty pre-image, as for a new file */
	for (guint i = 0; i < patch->files->len && i < 8; i++)
		g_free(pk_diff_file_apply(patch->files->pdata[i], ""));
	pk_scan_free(scan);
	pk_patch_free(patch);
	free(buf);
	return 0;
}
