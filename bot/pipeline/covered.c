/* covered.c - what of a tested patch the after side's build holds (private.h). */
#include "pipeline/private.h"

#include "lab/coverage.h"

int pk_pipeline_coverage(struct pk_test_result *res, const struct pk_lab *lab, const struct pk_patch *patch,
			 bool after_built, GError **err)
{
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	struct pk_coverage_input in = {
		.build_dir = build_dir,
		.tree = lab->tree,
		.patch = patch,
		.before = res->before.boot.capture,
		.after = res->after.boot.capture,
	};

	g_clear_pointer(&res->coverage, g_ptr_array_unref);
	if (pk_coverage_read(&res->coverage, &in, err) < 0)
		return -1;
	res->coverage_elsewhere = !after_built;
	return 0;
}
