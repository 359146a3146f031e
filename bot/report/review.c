/*
 * review.c - the model of one tested patch (review.h): verdict, static
 * findings, console and index changes, coverage, how it was tested, as
 * the JSON every review is rendered from (render.h) and the store keeps.
 */
#include "report/review.h"
#include "base/profile.h"

#include <string.h>

#include "analysis/digest.h"
#include "base/util.h"
#include "lab/coverage.h"
#include "report/html.h"

#define REVIEW_WIDTH 72

static void add_str(JsonBuilder *b, const char *name, const char *value)
{
	json_builder_set_member_name(b, name);
	if (value)
		json_builder_add_string_value(b, value);
	else
		json_builder_add_null_value(b);
}

/* A list of strings (a NULL list: an empty one). */
static void add_strings(JsonBuilder *b, const char *name, const GPtrArray *values)
{
	json_builder_set_member_name(b, name);
	json_builder_begin_array(b);
	for (guint i = 0; values && i < values->len; i++)
		json_builder_add_string_value(b, values->pdata[i]);
	json_builder_end_array(b);
}

/* The strings of values joined by sep (a NULL list: ""). */
static char *joined(const GPtrArray *values, const char *sep)
{
	GString *out = g_string_new(NULL);

	for (guint i = 0; values && i < values->len; i++)
		g_string_append_printf(out, "%s%s", i ? sep : "", (char *)values->pdata[i]);
	return g_string_free(out, FALSE);
}

static void add_int(JsonBuilder *b, const char *name, gint64 value)
{
	json_builder_set_member_name(b, name);
	json_builder_add_int_value(b, value);
}

static void add_bool(JsonBuilder *b, const char *name, gboolean value)
{
	json_builder_set_member_name(b, name);
	json_builder_add_boolean_value(b, value);
}

/* Seconds as text with one decimal (see the top of the file), or null when not measured. */
static void add_seconds(JsonBuilder *b, const char *name, gboolean present, double seconds)
{
	g_autofree char *text = present ? g_strdup_printf("%.1f", seconds) : NULL;
	add_str(b, name, text);
}

/* A sentence wrapped to the review's width, continuation lines indented. */
static void add_wrapped(JsonBuilder *b, const char *name, const char *text, const char *indent)
{
	g_autofree char *w = text ? pk_wrap(text, REVIEW_WIDTH - strlen(indent), indent) : NULL;
	add_str(b, name, w);
}

static char *short_id(const char *commit)
{
	return commit ? g_strndup(commit, 12) : NULL;
}

/* Whether a C source or header the patch touches is not built. */
static bool unbuilt_sources(const GPtrArray *coverage)
{
	for (guint i = 0; coverage && i < coverage->len; i++) {
		const struct pk_file_coverage *c = coverage->pdata[i];

		if (c->source && c->state == PK_COVERAGE_NOT_BUILT)
			return true;
	}
	return false;
}

/* Whether the scan found mailer damage (patch-corrupt), which apply refuses. */
static bool mail_corrupt(const struct pk_scan *scan)
{
	for (guint i = 0; i < scan->findings->len; i++)
		if (((const struct pk_finding *)scan->findings->pdata[i])->kind == PK_FINDING_PATCH_CORRUPT)
			return true;
	return false;
}

/* The one-paragraph answer a maintainer reads first. */
static char *summary_sentence(const struct pk_test_result *res, const struct pk_review_info *info)
{
	enum pk_verdict v = res->verdict;
	unsigned calls = res->scan->calls_changed;

	if (v == PK_VERDICT_NO_CHURN)
		return g_strdup("The patch changes no printk-family call, so it was not built or booted.");
	if (v == PK_VERDICT_NO_VISIBLE_CHANGE)
		return g_strdup_printf("The patch changes %u logging call%s, and the kernel prints exactly what "
				       "it printed before: the boot log and the printk index are the same once "
				       "run-to-run noise is filtered.", calls, calls == 1 ? "" : "s");
	if (v == PK_VERDICT_CONSOLE_CHANGED) {
		guint boot = res->diff->changes->len, index = res->diff->index_changes->len;
		const char *unbuilt = unbuilt_sources(res->coverage) ? " Some of the code it touches was not "
				      "built (see below), so not all of it is shown." : "";

		/* which of the two changed, first: a message reworded in code that never runs at boot
		   changes the index alone */
		if (!boot)
			return g_strdup_printf("The patch changes what the kernel can print: %u change%s in the "
					       "printk index (messages the kernel can print); the boot log did "
					       "not change.%s", index, index == 1 ? "" : "s", unbuilt);
		if (!index)
			return g_strdup_printf("The patch changes what the kernel prints at boot: %u change%s in "
					       "the boot log; the printk index (messages the kernel can print) "
					       "did not change.%s", boot, boot == 1 ? "" : "s", unbuilt);
		return g_strdup_printf("The patch changes what the kernel prints: %u change%s in the boot log "
				       "and %u in the printk index (messages the kernel can print).%s", boot,
				       boot == 1 ? "" : "s", index, unbuilt);
	}
	if (v == PK_VERDICT_DOES_NOT_APPLY && mail_corrupt(res->scan))
		return g_strdup_printf("The mail was damaged on its way (patch-corrupt below): git am would "
				       "reject it, so the bot did not apply it to %s; the static findings below "
				       "are from the repaired diff.", info->base);
	if (v == PK_VERDICT_DOES_NOT_APPLY)
		return g_strdup_printf("The patch does not apply to %s; only the static findings below could be "
				       "made. A patch of a series applies after the patches before it (b4 am of "
				       "the thread gives them all); one written for another tree needs that tree "
				       "as its base (a base-commit: line from git format-patch --base, test "
				       "--base, or #printkbot test BASE in a reply).", info->base);
	if (v == PK_VERDICT_BUILD_FAILED)
		return g_strdup("The kernel does not build with the patch applied.");
	if (v == PK_VERDICT_BOOT_FAILED)
		return g_strdup("The kernel with the patch applied builds but does not boot to init.");
	if (v == PK_VERDICT_REFUSED)
		return g_strdup("The patch was not built: the bot's policy does not allow it.");
	if (v == PK_VERDICT_NOT_BUILT)
		return g_strdup_printf("The patch changes %u logging call%s, but the kernel the bot built does "
				       "not hold all of the code it touches: the boot log and the printk index "
				       "are the same before and after, and that says nothing of what was not "
				       "compiled.", calls, calls == 1 ? "" : "s");
	return g_strdup_printf("Verdict: %s.", pk_verdict_name(v));
}

/*
 * Every touched file and what of it the kernel holds (lab/coverage.h):
 * file, state, reason, and line, the three as one wrapped line.
 */
static void add_coverage(JsonBuilder *b, const GPtrArray *coverage)
{
	json_builder_set_member_name(b, "coverage");
	json_builder_begin_array(b);
	for (guint i = 0; coverage && i < coverage->len; i++) {
		const struct pk_file_coverage *c = coverage->pdata[i];
		g_autofree char *line = g_strdup_printf("%s: %s%s%s%s", c->file, pk_coverage_state_name(c->state),
							c->reason ? " (" : "", c->reason ? c->reason : "",
							c->reason ? ")" : "");

		json_builder_begin_object(b);
		add_str(b, "file", c->file);
		add_str(b, "state", pk_coverage_state_name(c->state));
		add_str(b, "reason", c->reason);
		add_wrapped(b, "line", line, "    ");
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

static const char *level_tag(int level, char buf[8])
{
	if (level < 0)
		return "";
	g_snprintf(buf, 8, "<%d>", level);
	return buf;
}

/* "-<6>text" lines of one side of a change (a side may hold several records). */
static void add_side_lines(JsonBuilder *b, char sign, int level, const char *text)
{
	g_auto(GStrv) lines = NULL;
	char tag[8];

	if (!text)
		return;
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		g_autofree char *line = g_strdup_printf("%c%s%s", sign, level_tag(level, tag), *l);
		json_builder_add_string_value(b, line);
	}
}

/* One side of a change as one text, each record with its level ("<6>text"), or null. */
static void add_side_text(JsonBuilder *b, const char *name, int level, const char *text)
{
	g_auto(GStrv) lines = text ? g_strsplit(text, "\n", -1) : NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	char tag[8];

	for (char **l = lines; l && *l; l++)
		g_string_append_printf(out, "%s%s%s", out->len ? "\n" : "", level_tag(level, tag), *l);
	add_str(b, name, text ? out->str : NULL);
}

static char *origin_where(const struct pk_origin *o)
{
	if (!o->file)
		return g_strdup("(no printk index entry matches)");
	return o->func ? g_strdup_printf("%s:%d %s()", o->file, o->line, o->func)
		       : g_strdup_printf("%s:%d", o->file, o->line);
}

static void add_findings(JsonBuilder *b, const struct pk_test_result *res)
{
	json_builder_set_member_name(b, "findings");
	json_builder_begin_array(b);
	for (guint i = 0; i < res->scan->findings->len; i++) {
		const struct pk_finding *f = res->scan->findings->pdata[i];
		g_autofree char *where = g_strdup_printf("%s:%d", f->file, f->line);
		const char *conf = res->confirmations
			? pk_confirmation_name(g_array_index(res->confirmations, enum pk_confirmation, i)) : NULL;

		json_builder_begin_object(b);
		add_str(b, "where", where);
		add_str(b, "file", f->file);
		add_int(b, "line", f->line);
		add_str(b, "kind", pk_finding_kind_name(f->kind));
		add_str(b, "old_call", f->old_call);
		add_str(b, "new_call", f->new_call);
		add_str(b, "old_level", f->old_level);
		add_str(b, "new_level", f->new_level);
		add_str(b, "old_text", f->old_text);
		add_str(b, "new_text", f->new_text);
		add_str(b, "message", f->message);
		add_wrapped(b, "message_wrapped", f->message, "    ");
		add_str(b, "confirmation", conf);
		g_autofree char *note = conf ? g_strdup_printf(" (%s)", conf) : g_strdup("");
		add_str(b, "confirmation_note", note);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

/*
 * The findings grouped by cause and file (analysis/digest.h), as the
 * review shows them: "digest" the changes, "advice" checkpatch's kinds,
 * each group's where, kind, count, note and its sentence (with the lines
 * it names) wrapped.  "findings" keeps every one of them.
 */
static void add_digest(JsonBuilder *b, const struct pk_test_result *res)
{
	g_autoptr(GPtrArray) notes = g_ptr_array_new();
	g_autoptr(GPtrArray) groups = NULL;
	bool advice = false;

	for (guint i = 0; i < res->scan->findings->len; i++)
		g_ptr_array_add(notes, res->confirmations ? (gpointer)pk_confirmation_name(
			g_array_index(res->confirmations, enum pk_confirmation, i)) : NULL);
	groups = pk_digest(res->scan->findings, (const char *const *)notes->pdata);
	for (int pass = 0; pass < 2; pass++) {
		json_builder_set_member_name(b, pass ? "advice" : "digest");
		json_builder_begin_array(b);
		for (guint i = 0; i < groups->len; i++) {
			const struct pk_digest_group *g = groups->pdata[i];
			g_autofree char *sentence = g->lines ? g_strdup_printf("%s (%s)", g->sentence, g->lines)
					       : g_strdup(g->sentence);
			/* the advice says its kind first, then where: "(a.c, lines 1, 2...)", "(2 files: a.c:1...)" */
			g_autofree char *line = g_strdup_printf("%s: %s (%s%s%s)%s", pk_finding_kind_name(g->kind),
								g->sentence, g->where,
								!g->lines ? "" : g_str_has_suffix(g->where, " files")
								? ": " : ", ", g->lines ? g->lines : "", g->note);

			if (g->advice != (pass == 1))
				continue;
			advice |= g->advice;
			json_builder_begin_object(b);
			add_str(b, "where", g->where);
			add_str(b, "kind", pk_finding_kind_name(g->kind));
			add_int(b, "count", g->count);
			add_str(b, "note", g->note);
			add_wrapped(b, "sentence_wrapped", sentence, "    ");
			add_wrapped(b, "line_wrapped", line, "    ");
			json_builder_end_object(b);
		}
		json_builder_end_array(b);
	}
	add_bool(b, "has_digest", TRUE);
	add_bool(b, "has_advice", advice);
}

/* Boot-log changes that did not repeat in the confirmation boots (test.h), one wrapped sentence each. */
static void add_unstable(JsonBuilder *b, const GPtrArray *unstable)
{
	json_builder_set_member_name(b, "unstable");
	json_builder_begin_array(b);
	for (guint i = 0; unstable && i < unstable->len; i++) {
		g_autofree char *w = pk_wrap(unstable->pdata[i], 70, "  ");
		json_builder_add_string_value(b, w);
	}
	json_builder_end_array(b);
}

static void add_console_changes(JsonBuilder *b, const struct pk_kdiff *d)
{
	json_builder_set_member_name(b, "console");
	json_builder_begin_array(b);
	for (guint i = 0; d && i < d->changes->len; i++) {
		const struct pk_change *c = d->changes->pdata[i];
		g_autofree char *where = origin_where(&c->origin);

		json_builder_begin_object(b);
		add_str(b, "kind", pk_change_kind_name(c->kind));
		add_str(b, "where", where);
		add_str(b, "file", c->origin.file);
		add_int(b, "line", c->origin.line);
		add_str(b, "func", c->origin.func);
		add_str(b, "format", c->origin.format);
		add_int(b, "old_level", c->old_level);
		add_int(b, "new_level", c->new_level);
		add_str(b, "old_text", c->old_text);
		add_str(b, "new_text", c->new_text);
		add_str(b, "message", c->message);
		add_wrapped(b, "message_wrapped", c->message, "    ");
		json_builder_set_member_name(b, "lines");
		json_builder_begin_array(b);
		add_side_lines(b, '-', c->old_level, c->old_text);
		add_side_lines(b, '+', c->new_level, c->new_text);
		json_builder_end_array(b);
		add_side_text(b, "old_side", c->old_level, c->old_text);
		add_side_text(b, "new_side", c->new_level, c->new_text);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

static void add_index_changes(JsonBuilder *b, const struct pk_kdiff *d)
{
	json_builder_set_member_name(b, "index");
	json_builder_begin_array(b);
	for (guint i = 0; d && i < d->index_changes->len; i++) {
		const struct pk_index_change *c = d->index_changes->pdata[i];
		g_autofree char *where = origin_where(&c->origin);
		g_autofree char *old_fmt = c->old_format ? g_strescape(c->old_format, NULL) : NULL;
		g_autofree char *new_fmt = c->new_format ? g_strescape(c->new_format, NULL) : NULL;

		json_builder_begin_object(b);
		add_str(b, "kind", pk_change_kind_name(c->kind));
		add_str(b, "where", where);
		add_str(b, "file", c->origin.file);
		add_int(b, "line", c->origin.line);
		add_str(b, "func", c->origin.func);
		add_int(b, "old_level", c->old_level);
		add_int(b, "new_level", c->new_level);
		add_str(b, "old_format", c->old_format);
		add_str(b, "new_format", c->new_format);
		json_builder_set_member_name(b, "lines");
		json_builder_begin_array(b);
		add_side_lines(b, '-', c->old_level, old_fmt);
		add_side_lines(b, '+', c->new_level, new_fmt);
		json_builder_end_array(b);
		add_side_text(b, "old_side", c->old_level, old_fmt);
		add_side_text(b, "new_side", c->new_level, new_fmt);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

/*
 * The log-monitor rules checked (monitor_file, monitor_rules) and the
 * messages the patch took from them, each with the lines the text shows.
 */
static void add_monitor(JsonBuilder *b, const struct pk_monitor_check *m)
{
	add_bool(b, "has_monitor", m != NULL);
	add_bool(b, "has_monitor_breaks", m && m->breaks->len > 0);
	if (!m)
		return;
	add_str(b, "monitor_file", m->rules_path);
	add_int(b, "monitor_rules", m->rules);
	{
		g_autofree char *heading = m->breaks->len
			? g_strdup_printf("Monitor rules this patch breaks (a message one of the %u rules of %s "
					  "matched is reworded, removed or moved):", m->rules, m->rules_path)
			: g_strdup_printf("Monitor rules: this patch changes no message the %u rules of %s match.",
					  m->rules, m->rules_path);

		add_wrapped(b, "monitor_wrapped", heading, "");
	}
	json_builder_set_member_name(b, "monitor_breaks");
	json_builder_begin_array(b);
	for (guint i = 0; i < m->breaks->len; i++) {
		const struct pk_rule_break *r = m->breaks->pdata[i];
		struct pk_origin o = { r->file, r->line, r->func, NULL };
		g_autofree char *where = origin_where(&o);
		g_autofree char *old_text = r->old_text ? g_strescape(r->old_text, NULL) : NULL;
		g_autofree char *new_text = r->new_text ? g_strescape(r->new_text, NULL) : NULL;
		/* a plain list's rule is named by its line: no "line 3 (line 3)" */
		g_autofree char *title = strcmp(r->rule, r->where)
			? g_strdup_printf("%s (%s) /%s/", r->rule, r->where, r->pattern)
			: g_strdup_printf("%s /%s/", r->rule, r->pattern);
		g_autofree char *what = g_strdup_printf("%s: %s%s%s%s%s", where, pk_rule_break_kind_name(r->kind),
							r->boot_log ? " in the boot log" : "",
							r->moved_to ? " to " : "", r->moved_to ? r->moved_to : "",
							r->still_matched ? "; the rule still matches another message"
									 : "; the rule matches no message now");

		json_builder_begin_object(b);
		add_str(b, "rule", r->rule);
		add_str(b, "rule_where", r->where);
		add_str(b, "pattern", r->pattern);
		add_str(b, "kind", pk_rule_break_kind_name(r->kind));
		add_bool(b, "boot_log", r->boot_log);
		add_str(b, "where", where);
		add_str(b, "file", r->file);
		add_int(b, "line", r->line);
		add_str(b, "old_text", r->old_text);
		add_str(b, "new_text", r->new_text);
		add_str(b, "moved_to", r->moved_to);
		add_bool(b, "still_matched", r->still_matched);
		add_str(b, "title", title);
		json_builder_set_member_name(b, "lines");
		json_builder_begin_array(b);
		json_builder_add_string_value(b, what);
		add_side_lines(b, '-', -1, old_text);
		add_side_lines(b, '+', -1, new_text);
		json_builder_end_array(b);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

static void add_side(JsonBuilder *b, const char *name, const struct pk_test_side *s)
{
	g_autofree char *id = short_id(s->commit);

	json_builder_set_member_name(b, name);
	json_builder_begin_object(b);
	add_str(b, "commit", s->commit);
	add_str(b, "short", id);
	add_bool(b, "cached", s->cached);
	add_bool(b, "built", s->build.ok);
	add_bool(b, "layered", s->build.layered);
	add_seconds(b, "build_seconds", s->build_tried && !s->cached, s->build.seconds);
	g_autofree char *errors = s->build.errors ? g_strchomp(g_strdup(s->build.errors)) : NULL;
	g_autofree char *tail = s->console_tail ? g_strchomp(g_strdup(s->console_tail)) : NULL;
	add_str(b, "build_errors", errors);
	add_bool(b, "booted", s->booted);
	add_str(b, "boot_status", s->booted ? pk_boot_status_name(s->boot.status) : NULL);
	add_seconds(b, "boot_seconds", s->booted && !s->cached, s->boot.seconds);
	add_seconds(b, "first_boot_timed_out", s->timed_out > 0, s->timed_out);
	add_str(b, "accel", s->boot.accel);
	add_str(b, "boot_detail", s->boot.detail);
	add_str(b, "console_tail", tail);
	add_int(b, "records", s->boot.capture ? s->boot.capture->records->len : 0);
	add_int(b, "index_entries", s->boot.capture ? s->boot.capture->index->len : 0);
	json_builder_end_object(b);
}

/* Where and how it was tested, the figures a maintainer may want to trust the result. */
static char *tested_sentence(const struct pk_test_result *res, const struct pk_review_info *info)
{
	g_autofree char *base = short_id(res->before.commit);
	GString *s = g_string_new(NULL);
	const struct pk_test_side *b = &res->before, *a = &res->after;

	if (res->verdict == PK_VERDICT_DOES_NOT_APPLY) {
		/* nothing was built: no compiler, config or kernel to name */
		if (info->kernel)
			g_string_append_printf(s, "Tried on %s (%s at %s); nothing was built.", info->kernel,
					       info->base, base ? base : "?");
		else
			g_string_append_printf(s, "Tried on %s at %s; nothing was built.", info->base,
					       base ? base : "?");
		return g_string_free(s, FALSE);
	}
	if (info->kernel)
		g_string_append_printf(s, "Tested on %s (%s at %s),", info->kernel, info->base, base ? base : "?");
	else
		g_string_append_printf(s, "Tested on %s (%s)", info->base, base ? base : "?");
	/* another architecture's (arch_why): its compiler is named there */
	if (info->compiler && !res->arch_why)
		g_string_append_printf(s, " built with %s,", info->compiler);
	g_string_append_printf(s, " with the bot's %s kernel config %s (for QEMU's %s machine).",
			       pk_test_arch(res)->name, res->config_hash ? res->config_hash : info->config_hash,
			       pk_test_machine(res));
	if (res->arch_why)
		g_string_append_printf(s, " %s", res->arch_why);
	if (res->elsewhere)
		g_string_append_printf(s, " %s", res->elsewhere);
	if (res->three_way)
		g_string_append(s, " The patch did not apply as it stands: it was applied as `git am -3` does, "
				"its change merged from the files its index lines name.");
	if (res->left_out)
		g_string_append_printf(s, " Not applied, as no build reads them and their hunks do not apply on "
				       "this base: %s.", res->left_out);
	if (res->derived.lines) {
		g_autofree char *lines = g_strstrip(g_strdelimit(g_strdup(res->derived.lines), "\n", ' '));
		g_autofree char *asked = joined(res->derived.asked, "; ");

		g_string_append_printf(s, " The lab's config does not build all the patch needs (%s), "
				       "so both kernels were built with a config derived for it: the lab's "
				       "and %s (dependencies included).", asked, lines);
	}
	if (res->derived.linked && res->derived.linked->len)
		g_string_append_printf(s, " %s of them %s there for what the patched kernel did not link "
				       "without (see its build errors).", res->derived.linked->len == 1 ? "One" : "Some",
				       res->derived.linked->len == 1 ? "is" : "are");
	if (res->derived.removal)
		g_string_append(s, " Those of the code the patch deletes are options the patched tree no longer "
				"has: its kernel was built without them, the kernel before it with them on.");
	if (res->derived.added && res->derived.added->len) {
		/* on: those the derived config's lines set; the others are in cannot, said below */
		g_autoptr(GString) on = g_string_new(NULL), off = g_string_new(NULL);
		guint n_on = 0, n_off = 0;

		for (guint i = 0; i < res->derived.added->len; i++) {
			const char *added = res->derived.added->pdata[i];   /* "CONFIG_FOO (tristate, default n)" */
			g_autofree char *name = g_strndup(added, strcspn(added, " "));
			g_autofree char *line = g_strconcat(name, "=y\n", NULL);
			bool set = res->derived.lines && strstr(res->derived.lines, line);
			GString *to = set ? on : off;

			g_string_append_printf(to, "%s%s", to->len ? ", " : "", added);
			if (set)
				n_on++;
			else
				n_off++;
		}
		if (n_on)
			g_string_append_printf(s, " The patch adds the option%s %s, which gate%s what it changes: the "
					       "patched kernel was built with %s on (the kernel before it has no such "
					       "option).", n_on == 1 ? "" : "s", on->str, n_on == 1 ? "s" : "",
					       n_on == 1 ? "it" : "them");
		if (n_off)
			g_string_append_printf(s, " The patch adds the option%s %s, which gate%s what it changes, but "
					       "no kernel here could have %s on (below).", n_off == 1 ? "" : "s", off->str,
					       n_off == 1 ? "s" : "", n_off == 1 ? "it" : "them");
	}
	if (res->derived.devices)
		g_string_append_printf(s, " Both kernels booted with the QEMU devices its drivers bind to "
				       "(qemu/devices): %s.", res->derived.devices);
	for (guint i = 0; res->derived.cannot && i < res->derived.cannot->len; i++)
		g_string_append_printf(s, " No %s config could set %s.", pk_test_arch(res)->name,
				       (char *)res->derived.cannot->pdata[i]);
	if (!res->diff)
		return g_string_free(s, FALSE);
	if (b->cached)
		g_string_append(s, " Before: the stored boot of the base;");
	else
		g_string_append_printf(s, " Before: build %.1f s, boot %.1f s;", b->build.seconds, b->boot.seconds);
	g_string_append_printf(s, " after: build %.1f s, boot %.1f s (%s).", a->build.seconds, a->boot.seconds,
			       a->boot.accel ? a->boot.accel : "?");
	if (a->timed_out > 0)
		g_string_append_printf(s, " The patched kernel's first boot did not end within %.0f s (no "
				       "limit was reached); it was booted again, and that boot is the one "
				       "compared.", a->timed_out);
	g_string_append_printf(s, " The base was booted %u time%s to learn run-to-run noise; %u varying "
			       "record%s left out of the comparison.", res->noise_boots, res->noise_boots == 1 ? "" : "s",
			       res->diff->noise_dropped, res->diff->noise_dropped == 1 ? " was" : "s were");
	if (res->recheck_rounds)
		g_string_append_printf(s, " The boot log changed, so both kernels were booted %u more time%s, "
				       "and only what repeated is counted.", res->recheck_rounds,
				       res->recheck_rounds == 1 ? "" : "s");
	else if (pk_kdiff_explained_by_index(res->diff))
		g_string_append(s, " Each boot-log change is of a format the patch added, removed or "
				"changed (the printk index says so), which one kernel only can print: no "
				"boot was repeated to confirm it.");
	else if (res->diff->changes->len)
		g_string_append(s, " The boot-log changes could not be confirmed by booting both kernels "
				"again (a side no longer built or booted).");
	if (res->coverage_elsewhere)
		g_string_append(s, " The after side's build came from the store, so what was built was read "
				"from the build dir as the latest build of this config left it.");
	return g_string_free(s, FALSE);
}

/*
 * A patch whose kernel did not link, tested again with what it lacked
 * (test.h, relinked): the verdict stays the patch's own, build-failed,
 * and says what to select; what it changes in the printed messages is
 * shown from the kernels that linked.
 */
static char *relinked_summary(const struct pk_test_result *res, const struct pk_review_info *info)
{
	const struct pk_test_result *again = res->relinked;
	g_autofree char *options = joined(again->derived.linked, "; ");
	g_autofree char *then = summary_sentence(again, info);

	return g_strdup_printf("The kernel does not link with the patch applied: it calls code that only %s "
			       "builds, and nothing the patch turns on selects %s. Tested again with %s on "
			       "too: %s. %s",
			       options, again->derived.linked->len == 1 ? "it" : "them",
			       again->derived.linked->len == 1 ? "it" : "them",
			       pk_verdict_name(again->verdict), then);
}

JsonNode *pk_review_model(const struct pk_patch *patch, const struct pk_test_result *res,
			  const struct pk_review_info *info)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autofree char *summary = res->relinked ? relinked_summary(res, info) : summary_sentence(res, info);
	g_autofree char *base_short = short_id(res->before.commit);
	g_autofree char *reason = res->reason ? g_strstrip(g_strdup(res->reason)) : NULL;
	g_autofree char *position = info->total > 1 ? g_strdup_printf("%u/%u", info->index, info->total) : NULL;
	/* what the kernels printed: those of the test again with what a kernel that did not link lacked */
	const struct pk_test_result *shown = res->relinked ? res->relinked : res;
	const struct pk_kdiff *d = shown->diff;
	g_autofree char *tested = tested_sentence(shown, info);
	bool own_arch = pk_test_arch(res) == &pk_arch_x86_64;
	g_autofree char *arch_option = own_arch ? g_strdup("") : g_strconcat(" --arch ", pk_test_arch(res)->name, NULL);
	g_autofree char *reproduce = info->reproduce ? g_strdup(info->reproduce)
				     : g_strdup_printf("printkbot test%s %s", arch_option, info->source);
	g_autofree char *setup = g_strconcat("printkbot setup", arch_option, NULL);

	json_builder_begin_object(b);
	add_str(b, "tool", "printkbot " PK_VERSION);
	add_str(b, "subject", patch->subject ? patch->subject : "(a diff without a mail)");
	add_str(b, "message_id", patch->message_id);
	add_str(b, "author", patch->author);
	add_str(b, "source", info->source);
	add_str(b, "reproduce", reproduce);
	add_str(b, "setup", setup);
	/* a patch that did not apply has no build to reproduce */
	add_bool(b, "nothing_built", res->verdict == PK_VERDICT_DOES_NOT_APPLY);
	add_str(b, "position", position);
	add_str(b, "verdict", pk_verdict_name(res->verdict));
	add_bool(b, "bad", pk_verdict_is_bad(res->verdict));
	add_str(b, "summary", summary);
	add_wrapped(b, "summary_wrapped", summary, "");
	add_str(b, "reason", reason);
	add_wrapped(b, "reason_wrapped", reason, "");
	add_str(b, "base", info->base);
	add_str(b, "base_short", base_short);
	add_str(b, "kernel", info->kernel);
	add_str(b, "compiler", info->compiler);
	add_bool(b, "three_way", res->three_way);
	add_str(b, "left_out", res->left_out);
	add_str(b, "config_hash", shown->config_hash ? shown->config_hash : info->config_hash);
	/* where the kernels ran: the reply's head and the text say it (lab/arch.h) */
	add_str(b, "arch", pk_test_arch(res)->name);
	add_str(b, "machine", pk_test_machine(res));
	add_str(b, "arch_why", res->arch_why);
	add_str(b, "elsewhere", res->elsewhere);
	add_str(b, "config_derived", shown->derived.lines);
	add_str(b, "devices", shown->derived.devices);
	add_strings(b, "options_added", shown->derived.added);
	add_int(b, "calls_changed", res->scan->calls_changed);
	add_int(b, "noise_boots", shown->noise_boots);
	add_int(b, "noise_dropped", d ? d->noise_dropped : 0);
	add_seconds(b, "seconds", TRUE, res->seconds);
	add_side(b, "before", &res->before);
	add_side(b, "after", &res->after);
	if (res->relinked) {
		json_builder_set_member_name(b, "relinked");
		json_builder_begin_object(b);
		add_str(b, "verdict", pk_verdict_name(res->relinked->verdict));
		add_strings(b, "options", res->relinked->derived.linked);
		add_side(b, "before", &res->relinked->before);
		add_side(b, "after", &res->relinked->after);
		json_builder_end_object(b);
	}
	add_bool(b, "has_findings", res->scan->findings->len > 0);
	add_findings(b, shown);
	add_digest(b, shown);
	add_bool(b, "has_console", d && d->changes->len > 0);
	add_console_changes(b, d);
	add_bool(b, "has_index", d && d->index_changes->len > 0);
	add_index_changes(b, d);
	add_monitor(b, shown->monitor);
	add_bool(b, "has_coverage", shown->coverage && shown->coverage->len > 0);
	add_coverage(b, shown->coverage);
	add_bool(b, "coverage_elsewhere", shown->coverage_elsewhere);
	add_bool(b, "has_unstable", shown->unstable && shown->unstable->len > 0);
	add_unstable(b, shown->unstable);
	add_int(b, "recheck_rounds", shown->recheck_rounds);
	add_bool(b, "compared", d != NULL);
	add_wrapped(b, "tested_wrapped", tested, "");
	if (res->patch) {
		/* a commit tested as it is (pk_test_commit()): name it and its parent */
		add_str(b, "commit", res->after.commit);
		add_str(b, "parent", res->before.commit);
	}
	json_builder_end_object(b);
	return json_builder_get_root(b);
}

int pk_review_doc_make(struct pk_review_doc *out, const struct pk_patch *patch,
		       const struct pk_test_result *res, const struct pk_review_info *info, GError **err)
{
	PK_PROFILE_SCOPE("review");
	memset(out, 0, sizeof(*out));
	out->model = pk_review_model(patch ? patch : res->patch, res, info);
	if (!(out->text = pk_review_render(out->model, "review.txt", err))) {
		pk_review_doc_clear(out);
		return -1;
	}
	out->model_json = json_to_string(out->model, FALSE);
	/* a record of bytes that are not UTF-8 (the kernel prints what it is given) would
	   make a model no JSON parser reads again: `report ID` and exports parse it */
	if (!g_utf8_validate(out->model_json, -1, NULL)) {
		char *valid = g_utf8_make_valid(out->model_json, -1);

		g_free(out->model_json);
		out->model_json = valid;
	}
	return 0;
}

void pk_review_doc_clear(struct pk_review_doc *doc)
{
	g_clear_pointer(&doc->model, json_node_unref);
	g_clear_pointer(&doc->model_json, g_free);
	g_clear_pointer(&doc->text, g_free);
}
