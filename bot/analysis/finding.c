/*
 * finding.c - the kinds of static finding (scan.h): their stable names,
 * what each means, whether it changes the console by itself; and a
 * finding made and freed.  What scan.c and prfmt.c both use.
 */
#include "analysis/scan-private.h"

#include <string.h>

static const struct {
	const char *name;
	gboolean silent;      /* by itself it changes nothing on the console */
	const char *meaning;  /* one line, for `printkbot help findings` and the manual */
} finding_kinds[] = {
	[PK_FINDING_PR_FMT_ADDED] = { "pr_fmt-added", FALSE,
		"the file gains a pr_fmt(): every pr_*() call of it prints a new prefix" },
	[PK_FINDING_PR_FMT_REMOVED] = { "pr_fmt-removed", FALSE,
		"the file's pr_fmt() goes: every pr_*() call of it loses its prefix" },
	[PK_FINDING_PR_FMT_CHANGED] = { "pr_fmt-changed", FALSE,
		"the file's pr_fmt() changes: every pr_*() call of it prints another prefix" },
	[PK_FINDING_CALL_CONVERTED] = { "call-converted", TRUE,
		"printk(KERN_X ...) <-> pr_x(...) (or a like rewrite) that prints the same text at the same level" },
	[PK_FINDING_LEVEL_CHANGED] = { "level-changed", FALSE,
		"the message keeps its text but prints at another log level" },
	[PK_FINDING_LEVEL_MISSING] = { "level-missing", FALSE,
		"an added printk() without a KERN_ level: a line of its own at the default level" },
	[PK_FINDING_DEBUG_COMPILED_OUT] = { "debug-compiled-out", FALSE,
		"printk(KERN_DEBUG ...) -> pr_debug()/dev_dbg(): gone unless DEBUG or dynamic debug" },
	[PK_FINDING_NEWLINE_LOST] = { "newline-lost", FALSE,
		"the format lost its trailing \\n: the next message may continue its line" },
	[PK_FINDING_NEWLINE_ADDED] = { "newline-added", FALSE,
		"the format gained a trailing \\n" },
	[PK_FINDING_CONT_BROKEN] = { "cont-broken", FALSE,
		"a continuation (pr_cont(), KERN_CONT) became a line of its own" },
	[PK_FINDING_CONT_ADDED] = { "cont-added", FALSE,
		"a line of its own became a continuation of the one before" },
	[PK_FINDING_STRING_SPLIT] = { "string-split", TRUE,
		"a printed string is split across source lines: no grep finds it whole" },
	[PK_FINDING_TEXT_CHANGED] = { "text-changed", FALSE,
		"the text the call prints changed" },
	[PK_FINDING_DEVICE_PREFIX_LOST] = { "device-prefix-lost", FALSE,
		"dev_*()/netdev_*() -> pr_*(): the device name no longer comes before the text" },
	[PK_FINDING_DEVICE_PREFIX_ADDED] = { "device-prefix-added", FALSE,
		"pr_*() -> dev_*()/netdev_*(): the device name now comes before the text" },
	[PK_FINDING_MESSAGE_ADDED] = { "message-added", FALSE,
		"a call with no counterpart on the other side of its hunk: a new message" },
	[PK_FINDING_MESSAGE_REMOVED] = { "message-removed", FALSE,
		"a call with no counterpart on the other side of its hunk: a message gone" },
	[PK_FINDING_WARN_CONVERTED] = { "warn-converted", FALSE,
		"WARN*() or panic() <-> another call: the WARNING: line and backtrace, or the stop, go or come" },
	[PK_FINDING_PREFIX_CHANGED] = { "prefix-changed", FALSE,
		"a rewritten call's printed prefix appears, vanishes or changes" },
	[PK_FINDING_LOGGING_CONTINUATION] = { "logging-continuation", TRUE,
		"advice (checkpatch LOGGING_CONTINUATION): the added line calls pr_cont() or KERN_CONT" },
	[PK_FINDING_PREFER_PR_LEVEL] = { "prefer-pr-level", TRUE,
		"advice (checkpatch PREFER_PR_LEVEL): printk(KERN_X ...) where pr_x() would do" },
	[PK_FINDING_EMBEDDED_FUNCTION_NAME] = { "embedded-function-name", TRUE,
		"advice (checkpatch EMBEDDED_FUNCTION_NAME): the format spells its function's name; use %s, __func__" },
	[PK_FINDING_WHITESPACE_BEFORE_NEWLINE] = { "whitespace-before-newline", TRUE,
		"advice (checkpatch QUOTED_WHITESPACE_BEFORE_NEWLINE): a blank right before \\n" },
	[PK_FINDING_PAIRING_CAPPED] = { "pairing-capped", TRUE,
		"a hunk changed so many calls that pairing them was cut short: the rest count as added and removed" },
	[PK_FINDING_PATCH_CORRUPT] = { "patch-corrupt", TRUE,
		"the mailer damaged the patch (a wrapped line) and it was repaired to be read: git am rejects it" },
};

const char *pk_finding_kind_name(enum pk_finding_kind kind)
{
	return (unsigned)kind < G_N_ELEMENTS(finding_kinds) ? finding_kinds[kind].name : "";
}

const char *pk_finding_kind_meaning(enum pk_finding_kind kind)
{
	return (unsigned)kind < G_N_ELEMENTS(finding_kinds) ? finding_kinds[kind].meaning : "";
}

unsigned pk_finding_kinds(void)
{
	return G_N_ELEMENTS(finding_kinds);
}

gboolean pk_finding_kind_parse(const char *name, enum pk_finding_kind *out)
{
	for (unsigned i = 0; name && i < G_N_ELEMENTS(finding_kinds); i++)
		if (!strcmp(name, finding_kinds[i].name)) {
			*out = i;
			return TRUE;
		}
	return FALSE;
}

gboolean pk_finding_is_silent(enum pk_finding_kind kind)
{
	return (unsigned)kind < G_N_ELEMENTS(finding_kinds) && finding_kinds[kind].silent;
}

gboolean pk_finding_is_pr_fmt(enum pk_finding_kind kind)
{
	return kind == PK_FINDING_PR_FMT_ADDED || kind == PK_FINDING_PR_FMT_REMOVED ||
	       kind == PK_FINDING_PR_FMT_CHANGED;
}

struct pk_finding *pk_finding_new(const char *file, enum pk_finding_kind kind)
{
	struct pk_finding *f = g_new0(struct pk_finding, 1);

	f->file = g_strdup(file);
	f->kind = kind;
	f->silent = pk_finding_is_silent(kind);
	return f;
}

void pk_finding_free(gpointer p)
{
	struct pk_finding *f = p;

	if (!f)
		return;
	g_free(f->file);
	g_free(f->old_call);
	g_free(f->new_call);
	g_free(f->old_text);
	g_free(f->new_text);
	g_free(f->old_prefix);
	g_free(f->new_prefix);
	g_free(f->message);
	g_free(f);
}
