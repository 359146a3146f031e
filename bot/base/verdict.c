/* verdict.c - the verdicts' names and meanings (verdict.h). */
#include "base/verdict.h"

#include <glib.h>
#include <string.h>

static const char *const verdict_names[] = {
	[PK_VERDICT_NONE] = "",
	[PK_VERDICT_NO_CHURN] = "no-churn",
	[PK_VERDICT_NO_VISIBLE_CHANGE] = "no-visible-change",
	[PK_VERDICT_CONSOLE_CHANGED] = "console-changed",
	[PK_VERDICT_DOES_NOT_APPLY] = "does-not-apply",
	[PK_VERDICT_BUILD_FAILED] = "build-failed",
	[PK_VERDICT_BOOT_FAILED] = "boot-failed",
	[PK_VERDICT_REFUSED] = "refused",
	[PK_VERDICT_NOT_BUILT] = "not-built",
};

/* What each means, one line: `printkbot help verdicts` and the manual (doc/testing.md). */
static const char *const verdict_meanings[] = {
	[PK_VERDICT_NONE] = "",
	[PK_VERDICT_NO_CHURN] = "the patch does not change a logging call: it is applied, not built",
	[PK_VERDICT_NO_VISIBLE_CHANGE] = "built and booted before and after: what the kernel prints, and can print, is "
					 "the same (never said of a file that was not built)",
	[PK_VERDICT_CONSOLE_CHANGED] = "the boot log or the printk index changed: the review shows each change",
	[PK_VERDICT_DOES_NOT_APPLY] = "no base the bot has takes the patch: nothing was built",
	[PK_VERDICT_BUILD_FAILED] = "the kernel with the patch (or its base) did not build: the review quotes the errors",
	[PK_VERDICT_BOOT_FAILED] = "a kernel built but did not boot to its end in QEMU (a panic, a hang)",
	[PK_VERDICT_REFUSED] = "the policy does not build this patch (an unsafe path, a symlink, a binary diff, over a "
			       "size limit, no sandbox)",
	[PK_VERDICT_NOT_BUILT] = "nothing changed in what was built, but a C file or header the patch touches is "
				 "compiled in by no config the bot could make: only the static findings speak for it",
};

const char *pk_verdict_meaning(enum pk_verdict verdict)
{
	return (unsigned)verdict < G_N_ELEMENTS(verdict_meanings) ? verdict_meanings[verdict] : "";
}

unsigned pk_verdicts(void)
{
	return G_N_ELEMENTS(verdict_names);
}

const char *pk_verdict_name(enum pk_verdict verdict)
{
	return (unsigned)verdict < G_N_ELEMENTS(verdict_names) ? verdict_names[verdict] : "";
}

bool pk_verdict_parse(const char *name, enum pk_verdict *out)
{
	for (unsigned i = PK_VERDICT_NONE + 1; name && i < G_N_ELEMENTS(verdict_names); i++)
		if (!strcmp(name, verdict_names[i])) {
			*out = i;
			return true;
		}
	return false;
}

bool pk_verdict_is_bad(enum pk_verdict verdict)
{
	return verdict != PK_VERDICT_NONE && verdict != PK_VERDICT_NO_CHURN &&
	       verdict != PK_VERDICT_NO_VISIBLE_CHANGE;
}
