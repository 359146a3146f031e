/*
 * gitutil.c - libgit2's init and errors, once for every git module.
 */
#include "base/gitutil.h"

#include "base/util.h"

void pk_git_init(void)
{
	static gsize done;

	if (g_once_init_enter(&done)) {
		git_libgit2_init();
		g_once_init_leave(&done, 1);
	}
}

int pk_git_fail(GError **err, const char *what)
{
	const git_error *e = git_error_last();

	return pk_error(err, PK_ERROR_FAILED, "%s: %s", what, e && e->message ? e->message : "unknown libgit2 error");
}
