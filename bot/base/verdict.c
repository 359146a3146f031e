/* verdict.c - the verdicts' names (verdict.h). */
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
