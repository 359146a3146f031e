/*
 * fuzz-policy-apply.c - the policy and libgit2 agree: a patch the default
 * policy (lab/policy.h) allows only ever changes paths the policy saw.
 *
 * The input is read as a diff (pk_patch_parse_diff), judged by
 * pk_policy_allows() and, when allowed and not damaged (apply.c refuses a
 * damaged patch before libgit2 reads it), given to libgit2 as apply.c gives
 * it (pk_apply_diff_text, git_diff_from_buffer).  Every delta libgit2 reads
 * must then be a change, not a rename or copy, of a regular file (not
 * binary, no symlink or submodule mode) at a path the parsed patch names
 * and the policy allows.  apply.c's delta_refusal() refuses anything else
 * at run time; here any such patch is a finding: the policy judged
 * something other than what would be applied.  No tree is needed: libgit2
 * only parses.  The sandbox check is off: it judges the host, not the patch.
 */
#include <git2.h>

#include "fuzz.h"
#include "base/patch.h"
#include "lab/apply.h"
#include "lab/policy.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	git_libgit2_init();
	fuzz_init_once();
	return 0;
}

static bool path_named(const struct pk_patch *patch, const char *path)
{
	for (guint i = 0; i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];

		if (!g_strcmp0(f->old_path, path) || !g_strcmp0(f->new_path, path))
			return true;
	}
	return false;
}

/* Abort (a finding) unless libgit2's reading of an allowed patch is one the policy saw. */
static void check_deltas(const struct pk_patch *patch)
{
	g_autofree char *text = pk_apply_diff_text(patch);
	git_diff *diff = NULL;

	if (!text || git_diff_from_buffer(&diff, text, strlen(text)) < 0)
		return;
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const git_diff_file *sides[] = { &d->old_file, &d->new_file };

		if (d->status == GIT_DELTA_RENAMED || d->status == GIT_DELTA_COPIED ||
		    d->status == GIT_DELTA_TYPECHANGE || (d->flags & GIT_DIFF_FLAG_BINARY))
			abort();
		for (int k = 0; k < 2; k++) {
			const git_diff_file *f = sides[k];
			enum pk_path_kind kind;

			if (f->mode && f->mode != GIT_FILEMODE_BLOB && f->mode != GIT_FILEMODE_BLOB_EXECUTABLE)
				abort();
			if (!f->path)
				continue;
			if (!path_named(patch, f->path))
				abort();
			kind = pk_path_kind(f->path);
			if (kind != PK_PATH_C && kind != PK_PATH_INERT)
				abort();
		}
	}
	git_diff_free(diff);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pk_policy defaults = PK_POLICY_DEFAULT;
	struct pk_policy policy = defaults;
	char *buf = fuzz_copy(data, size);
	struct pk_patch *patch = pk_patch_parse_diff(buf, size);
	char *reason = NULL;

	policy.sandbox = PK_SANDBOX_OFF;
	if (pk_policy_allows(&policy, patch, &reason)) {
		if (!patch->damage || !patch->damage->len)
			check_deltas(patch);
	} else if (!reason) {
		abort();
	}
	g_free(reason);
	pk_patch_free(patch);
	free(buf);
	return 0;
}
