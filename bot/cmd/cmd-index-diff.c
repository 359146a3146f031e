/*
 * cmd-index-diff.c - `printkbot index-diff A B`: what changed in the
 * printk index (every message the kernel can print) between two kernels,
 * and which log-monitor patterns stop matching.
 */
#include "cmd/commands.h"
#include "analysis/kdiff.h"
#include "base/jsonout.h"
#include "base/util.h"
#include "lab/bases.h"
#include "lab/describe.h"
#include "lab/repo.h"
#include "pipeline/monitor.h"
#include "pipeline/test.h"
#include "store/store.h"

#include <stdio.h>
#include <string.h>

static const char index_diff_usage[] =
	"usage: printkbot index-diff [--json] [--patterns FILE] [--rules FILE] [--timeout SECONDS]\n"
	"                            [--config FILE] [--db FILE | --no-store] [--arch ARCH] A B\n\n"
	"Every message of the printk index (what the kernel can print, booted or\n"
	"not) added, removed, or changed in level or text (a pr_fmt() prefix is\n"
	"text) from kernel A to kernel B, grouped by file and function.  A and B\n"
	"are bases (debian:6.1, debian:6.12, TREE/BRANCH) or revisions of the bot's\n"
	"tree, built with the lab's config.  A kernel built and booted before is\n"
	"read from the store; another is built, booted once and stored.\n\n"
	"  --json            one JSON object: a, b, counts, changes, patterns\n"
	"  --patterns FILE   regular expressions, one a line (# comments), as log\n"
	"                    monitors keep them: each that matched a message of A\n"
	"                    (its index format or its boot log) and matches none\n"
	"                    of B is reported\n"
	"  --rules FILE      log-monitor rules: node-problem-detector's JSON rule file\n"
	"                    (its rules' \"pattern\"s, RE2 syntax, \\n joining\n"
	"                    consecutive lines) or RE2 patterns one a line; for\n"
	"                    each rule, the messages it matches in A and in B\n"
	"                    (%d in a message is matched as the numbers it prints),\n"
	"                    and the rules that match no message of B, each with\n"
	"                    the message of A that changed under it, or B's nearest\n"
	"  --timeout SECONDS per boot (default 60)\n"
	"  --arch ARCH       build and boot both for ARCH: x86_64 (the default) or\n"
	"                    arm64 (QEMU's virt machine; `setup --arch arm64`): each\n"
	"                    architecture's kernels print messages the other's lack\n\n"
	"exit status: 0 done, 1 some pattern matches nothing in B or some rule no\n"
	"message of B, 2 bad usage, a bad rule file, or when a kernel could not be\n"
	"built or booted.\n";

struct index_diff_opts {
	bool json;
	const char *patterns;
	const char *rules;
	double timeout;
};

static const struct pk_option index_diff_options[] = {
	PK_OPTION_FLAG("json", struct index_diff_opts, json),
	PK_OPTION_STRING("patterns", struct index_diff_opts, patterns),
	PK_OPTION_STRING("rules", struct index_diff_opts, rules),
	PK_OPTION_DURATION("timeout", struct index_diff_opts, timeout),
	PK_OPTION_CONFIG,
	PK_OPTION_DB,
	PK_OPTION_NO_STORE,
	PK_OPTION_ARCH,
	{ NULL },
};

/* One kernel of the two. */
struct side {
	const char *name;        /* as given */
	char *commit;
	char *kernel;            /* as a person names it */
	struct pk_test_side built;
};

/* One pattern that matched A and nothing of B. */
struct broken {
	char *pattern;
	char *example;           /* what it matched in A */
};

static void broken_free(struct broken *b)
{
	g_free(b->pattern);
	g_free(b->example);
	g_free(b);
}

/* The side's kernel, from the store or built and booted: 0, or -1 with err. */
static int side_prepare(struct side *s, struct pk_cmd_ctx *ctx, const struct pk_test_opts *topts, GError **err)
{
	if (!(s->commit = pk_bases_resolve(&ctx->lab, s->name, err)))
		return -1;
	s->kernel = pk_describe_base(&ctx->lab, s->commit, NULL);
	if (pk_test_build_side(&s->built, NULL, NULL, &ctx->lab, ctx->store, topts, s->commit, false, err) < 0)
		return -1;
	if (!s->built.build.ok || s->built.boot.status != PK_BOOT_OK || !s->built.boot.capture)
		return pk_error(err, PK_ERROR_FAILED, "%s (%.12s) does not %s with the lab's config", s->name,
				s->commit, s->built.build.ok ? "boot" : "build");
	return 0;
}

/* The first message of cap (an index format, else a boot record) re matches, or NULL. */
static const char *first_match(GRegex *re, const struct pk_capture *cap)
{
	for (guint i = 0; i < cap->index->len; i++) {
		const struct pk_index_entry *e = cap->index->pdata[i];
		if (e->format && g_regex_match(re, e->format, 0, NULL))
			return e->format;
	}
	for (guint i = 0; i < cap->records->len; i++) {
		const struct pk_record *r = cap->records->pdata[i];
		if (r->text && g_regex_match(re, r->text, 0, NULL))
			return r->text;
	}
	return NULL;
}

/* The patterns of path that match some message of a and none of b: 0, or -1 with err. */
static int patterns_broken(GPtrArray **out, const char *path, const struct pk_capture *a,
			   const struct pk_capture *b, GError **err)
{
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	unsigned n = 0;

	if (pk_read_file(&text, NULL, path, 16 << 20, err) < 0)
		return -1;
	*out = g_ptr_array_new_with_free_func((GDestroyNotify)broken_free);
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		g_autoptr(GRegex) re = NULL;
		g_autoptr(GError) e = NULL;
		const char *hit;

		n++;
		if (!**l || **l == '#')
			continue;
		if (!(re = g_regex_new(*l, pk_regex_optimize(), 0, &e)))
			return pk_error(err, PK_ERROR_INPUT, "%s:%u: %s", path, n, e->message);
		if ((hit = first_match(re, a)) && !first_match(re, b)) {
			struct broken *br = g_new0(struct broken, 1);

			br->pattern = g_strdup(*l);
			br->example = g_strdup(hit);
			g_ptr_array_add(*out, br);
		}
	}
	return 0;
}

static char *escaped(const char *s)
{
	return s ? g_strescape(s, NULL) : g_strdup("");
}

static void print_change_text(const struct pk_index_change *c)
{
	g_autofree char *o = escaped(c->old_format), *n = escaped(c->new_format);

	switch (c->kind) {
	case PK_CHANGE_MESSAGE_ADDED:
		printf("    + added    <%s> \"%s\"\n", pk_level_name(c->new_level), n);
		break;
	case PK_CHANGE_MESSAGE_REMOVED:
		printf("    - removed  <%s> \"%s\"\n", pk_level_name(c->old_level), o);
		break;
	case PK_CHANGE_LEVEL_CHANGED:
		printf("    ~ level    %s -> %s: \"%s\"\n", pk_level_name(c->old_level), pk_level_name(c->new_level), n);
		break;
	default:
		printf("    ~ text     \"%s\"\n               -> \"%s\"\n", o, n);
	}
}

static void print_text(const struct side *a, const struct side *b, const struct pk_kdiff *d, GPtrArray *broken)
{
	unsigned counts[PK_CHANGE_LINES_MERGED + 1] = { 0 };
	const char *file = NULL, *func = NULL;

	for (guint i = 0; i < d->index_changes->len; i++)
		counts[((struct pk_index_change *)d->index_changes->pdata[i])->kind]++;
	printf("A: %s (%s)\nB: %s (%s)\n", a->kernel ? a->kernel : a->name, a->name, b->kernel ? b->kernel : b->name,
	       b->name);
	printf("printk index: %u entries in A, %u in B: %u added, %u removed, %u text changed, %u level changed\n",
	       a->built.boot.capture->index->len, b->built.boot.capture->index->len, counts[PK_CHANGE_MESSAGE_ADDED],
	       counts[PK_CHANGE_MESSAGE_REMOVED], counts[PK_CHANGE_TEXT_CHANGED], counts[PK_CHANGE_LEVEL_CHANGED]);
	for (guint i = 0; i < d->index_changes->len; i++) {
		const struct pk_index_change *c = d->index_changes->pdata[i];
		const char *f = c->origin.file ? c->origin.file : "(no file)";

		if (!file || strcmp(file, f)) {
			pk_print_text("\n%s\n", f);
			file = f;
			func = NULL;
		}
		if (!func || g_strcmp0(func, c->origin.func)) {
			func = c->origin.func ? c->origin.func : "";
			pk_print_text("  %s():\n", func);
		}
		print_change_text(c);
	}
	for (guint i = 0; broken && i < broken->len; i++) {
		const struct broken *br = broken->pdata[i];
		g_autofree char *ex = escaped(br->example);

		printf("%spattern /%s/ matched \"%s\" in A and matches nothing in B\n", i ? "" : "\n", br->pattern, ex);
	}
	if (broken && !broken->len)
		printf("\nevery pattern that matched A matches B too\n");
}

static void json_side(JsonBuilder *jb, const char *member, const struct side *s)
{
	json_builder_set_member_name(jb, member);
	json_builder_begin_object(jb);
	pk_json_str(jb, "name", s->name);
	pk_json_str(jb, "commit", s->commit);
	pk_json_str(jb, "kernel", s->kernel);
	pk_json_int(jb, "index_entries", s->built.boot.capture->index->len);
	pk_json_bool(jb, "cached", s->built.cached);
	json_builder_end_object(jb);
}

static void json_rules(JsonBuilder *jb, const struct pk_rules *rules, const GPtrArray *reports);

static void print_json(const struct side *a, const struct side *b, const struct pk_kdiff *d, GPtrArray *broken,
		       const struct pk_rules *rules, const GPtrArray *reports)
{
	g_autoptr(JsonBuilder) jb = json_builder_new();

	json_builder_begin_object(jb);
	json_side(jb, "a", a);
	json_side(jb, "b", b);
	json_builder_set_member_name(jb, "changes");
	json_builder_begin_array(jb);
	for (guint i = 0; i < d->index_changes->len; i++) {
		const struct pk_index_change *c = d->index_changes->pdata[i];

		json_builder_begin_object(jb);
		pk_json_str(jb, "kind", pk_change_kind_name(c->kind));
		pk_json_str(jb, "file", c->origin.file);
		pk_json_str(jb, "func", c->origin.func);
		pk_json_int(jb, "line", c->origin.line);
		pk_json_int(jb, "old_level", c->old_level);
		pk_json_int(jb, "new_level", c->new_level);
		pk_json_str(jb, "old_format", c->old_format);
		pk_json_str(jb, "new_format", c->new_format);
		json_builder_end_object(jb);
	}
	json_builder_end_array(jb);
	json_builder_set_member_name(jb, "patterns_broken");
	json_builder_begin_array(jb);
	for (guint i = 0; broken && i < broken->len; i++) {
		const struct broken *br = broken->pdata[i];

		json_builder_begin_object(jb);
		pk_json_str(jb, "pattern", br->pattern);
		pk_json_str(jb, "matched_in_a", br->example);
		json_builder_end_object(jb);
	}
	json_builder_end_array(jb);
	if (rules)
		json_rules(jb, rules, reports);
	json_builder_end_object(jb);
	pk_json_print(jb);
}

/* ---- --rules ---- */

#define RULE_EXAMPLES 3   /* messages listed per side and line; the rest counted */

static void print_entry(const char *lead, const struct pk_index_entry *e)
{
	g_autofree char *f = escaped(e->format);

	printf("%s%s:%d %s() \"%s\"\n", lead, e->file ? e->file : "?", e->line, e->func ? e->func : "?", f);
}

/* "A: 2 messages" and the first few; "A: none". */
static void print_side_hits(const char *side, const GPtrArray *entries)
{
	if (!entries->len) {
		printf("    %s: none\n", side);
		return;
	}
	printf("    %s: %u message%s\n", side, entries->len, entries->len == 1 ? "" : "s");
	for (guint i = 0; i < entries->len && i < RULE_EXAMPLES; i++)
		print_entry("      ", entries->pdata[i]);
	if (entries->len > RULE_EXAMPLES)
		printf("      and %u more\n", entries->len - RULE_EXAMPLES);
}

static void print_change_line(const struct pk_index_change *c)
{
	g_autofree char *o = escaped(c->old_format), *n = escaped(c->new_format);

	if (c->new_format)
		printf("    changed in B: %s:%d %s(): \"%s\"\n                  -> \"%s\"\n", c->origin.file, c->origin.line,
		       c->origin.func ? c->origin.func : "?", o, n);
	else
		printf("    removed in B: %s:%d %s(): \"%s\"\n", c->origin.file, c->origin.line,
		       c->origin.func ? c->origin.func : "?", o);
}

static const char *rule_status(const struct pk_rule_report *r)
{
	if (r->b.matches)
		return r->a.matches ? "matches A and B" : "matches B only";
	return r->a.matches ? "matches no message of B" : "matches no message of A or B";
}

/* The rule's name, and where it is written when another rule has that name too. */
static char *rule_label(const struct pk_rules *rules, const struct pk_rule *rule)
{
	for (guint i = 0; i < rules->rules->len; i++) {
		const struct pk_rule *o = rules->rules->pdata[i];

		if (o != rule && !strcmp(o->name, rule->name))
			return g_strdup_printf("%s (%s)", rule->name, rule->where);
	}
	return g_strdup(rule->name);
}

static void print_rules_text(const struct pk_rules *rules, const GPtrArray *reports)
{
	g_autoptr(GString) none = g_string_new(NULL);
	unsigned n_none = 0;

	for (guint i = 0; i < reports->len; i++) {
		const struct pk_rule_report *r = reports->pdata[i];
		g_autofree char *label = rule_label(rules, r->rule);

		if (!r->b.matches)
			g_string_append_printf(none, "%s%s", n_none++ ? ", " : "", label);
	}
	printf("\nmonitor rules of %s: %u, %u matching no message of B\n", rules->path, reports->len, n_none);
	for (guint i = 0; i < reports->len; i++) {
		const struct pk_rule_report *r = reports->pdata[i];
		const struct pk_rule *rule = r->rule;

		/* a plain list's rule is named by its line: no "line 3 (line 3)" */
		if (strcmp(rule->name, rule->where))
			printf("\n%s (%s): %s\n", rule->name, rule->where, rule_status(r));
		else
			printf("\n%s: %s\n", rule->name, rule_status(r));
		for (guint l = 0; l < rule->n_lines; l++) {
			g_autofree char *pat = pk_text_for_terminal(rule->lines[l]);

			if (rule->n_lines > 1)
				printf("  line %u of %u: /%s/\n", l + 1, rule->n_lines, pat);
			else
				printf("  /%s/\n", pat);
			print_side_hits("A", r->a.lines[l]);
			print_side_hits("B", r->b.lines[l]);
			if (r->nearest[l])
				print_entry("    nearest message of B: ", r->nearest[l]);
		}
		if (r->a.records->len || r->b.records->len)
			printf("  boot log: %u match%s in A, %u in B\n", r->a.records->len,
			       r->a.records->len == 1 ? "" : "es", r->b.records->len);
		for (guint c = 0; c < r->changed->len; c++)
			print_change_line(r->changed->pdata[c]);
	}
	printf("\n%s\n", n_none ? "rules that match no message of B:" : "every rule matches some message of B");
	if (n_none)
		printf("  %s\n", none->str);
}

static void json_entry(JsonBuilder *jb, const struct pk_index_entry *e)
{
	json_builder_begin_object(jb);
	pk_json_str(jb, "file", e->file);
	pk_json_int(jb, "line", e->line);
	pk_json_str(jb, "func", e->func);
	pk_json_int(jb, "level", e->level);
	pk_json_str(jb, "format", e->format);
	json_builder_end_object(jb);
}

static void json_entries(JsonBuilder *jb, const char *member, const GPtrArray *entries)
{
	json_builder_set_member_name(jb, member);
	json_builder_begin_array(jb);
	for (guint i = 0; entries && i < entries->len; i++)
		json_entry(jb, entries->pdata[i]);
	json_builder_end_array(jb);
}

static void json_records(JsonBuilder *jb, const char *member, const GPtrArray *records)
{
	json_builder_set_member_name(jb, member);
	json_builder_begin_array(jb);
	for (guint i = 0; i < records->len; i++)
		json_builder_add_string_value(jb, ((const struct pk_record *)records->pdata[i])->text);
	json_builder_end_array(jb);
}

static void json_rules(JsonBuilder *jb, const struct pk_rules *rules, const GPtrArray *reports)
{
	json_builder_set_member_name(jb, "rules");
	json_builder_begin_object(jb);
	pk_json_str(jb, "file", rules->path);
	json_builder_set_member_name(jb, "rules");
	json_builder_begin_array(jb);
	for (guint i = 0; i < reports->len; i++) {
		const struct pk_rule_report *r = reports->pdata[i];

		json_builder_begin_object(jb);
		pk_json_str(jb, "name", r->rule->name);
		pk_json_str(jb, "where", r->rule->where);
		pk_json_str(jb, "pattern", r->rule->pattern);
		pk_json_bool(jb, "matches_a", r->a.matches);
		pk_json_bool(jb, "matches_b", r->b.matches);
		json_builder_set_member_name(jb, "lines");
		json_builder_begin_array(jb);
		for (guint l = 0; l < r->rule->n_lines; l++) {
			json_builder_begin_object(jb);
			pk_json_str(jb, "pattern", r->rule->lines[l]);
			json_entries(jb, "a", r->a.lines[l]);
			json_entries(jb, "b", r->b.lines[l]);
			json_builder_set_member_name(jb, "nearest_b");
			if (r->nearest[l])
				json_entry(jb, r->nearest[l]);
			else
				json_builder_add_null_value(jb);
			json_builder_end_object(jb);
		}
		json_builder_end_array(jb);
		json_records(jb, "boot_log_a", r->a.records);
		json_records(jb, "boot_log_b", r->b.records);
		json_builder_set_member_name(jb, "changed");
		json_builder_begin_array(jb);
		for (guint c = 0; c < r->changed->len; c++) {
			const struct pk_index_change *ch = r->changed->pdata[c];

			json_builder_begin_object(jb);
			pk_json_str(jb, "kind", pk_change_kind_name(ch->kind));
			pk_json_str(jb, "file", ch->origin.file);
			pk_json_int(jb, "line", ch->origin.line);
			pk_json_str(jb, "func", ch->origin.func);
			pk_json_str(jb, "old_format", ch->old_format);
			pk_json_str(jb, "new_format", ch->new_format);
			json_builder_end_object(jb);
		}
		json_builder_end_array(jb);
		json_builder_end_object(jb);
	}
	json_builder_end_array(jb);
	json_builder_end_object(jb);
}

static bool some_rule_unmatched(const GPtrArray *reports)
{
	for (guint i = 0; reports && i < reports->len; i++)
		if (!((const struct pk_rule_report *)reports->pdata[i])->b.matches)
			return true;
	return false;
}

static int cmd_index_diff(struct pk_cmd_ctx *ctx)
{
	const struct index_diff_opts *o = ctx->cmdline.opts;
	struct pk_test_opts topts = { 0 };
	struct side a = { ctx->cmdline.args[0] }, b = { ctx->cmdline.args[1] };
	g_autoptr(GError) err = NULL;
	g_autoptr(GPtrArray) broken = NULL;
	g_autoptr(GPtrArray) reports = NULL;
	g_autoptr(pk_kdiff) d = NULL;
	g_autoptr(pk_rules) rules = NULL;
	int status = 2;

	/* a bad rule file is said before any kernel is built */
	if (o->rules && pk_monitor_rules_load(&rules, o->rules, &err) < 0)
		goto out;
	topts.policy = ctx->config.policy;
	topts.boot_timeout = o->timeout ? o->timeout : ctx->config.test.boot_timeout;
	if (side_prepare(&a, ctx, &topts, &err) < 0 || side_prepare(&b, ctx, &topts, &err) < 0)
		goto out;
	pk_progress("%s", "");
	d = pk_kdiff_captures(a.built.boot.capture, b.built.boot.capture, NULL);
	if (o->patterns &&
	    patterns_broken(&broken, o->patterns, a.built.boot.capture, b.built.boot.capture, &err) < 0)
		goto out;
	if (rules)
		reports = pk_rules_compare(rules, a.built.boot.capture, b.built.boot.capture, d);
	if (o->json) {
		print_json(&a, &b, d, broken, rules, reports);
	} else {
		print_text(&a, &b, d, broken);
		if (rules)
			print_rules_text(rules, reports);
	}
	status = (broken && broken->len) || some_rule_unmatched(reports) ? 1 : 0;
out:
	pk_progress("%s", "");
	if (err)
		fprintf(stderr, "printkbot index-diff: %s\n", err->message);
	for (struct side *s = &a; s; s = s == &a ? &b : NULL) {
		g_free(s->commit);
		g_free(s->kernel);
		pk_test_side_clear(&s->built);
	}
	return status;
}

/* A bad rule file is a usage error, said before the lab is waited for. */
static int index_diff_check(const struct pk_cmdline *cl, GError **err)
{
	const struct index_diff_opts *o = cl->opts;
	g_autoptr(pk_rules) rules = NULL;
	g_autoptr(GError) e = NULL;

	if (o->rules && pk_monitor_rules_load(&rules, o->rules, &e) < 0) {
		/* a bad value: its message says it all, without the usage after it */
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--rules: %s", e->message);
		return -1;
	}
	return 0;
}

/* Both names resolved before the lab is taken (read without its lock), so that a typo is said at once. */
static int index_diff_inputs(const struct pk_cmd_ctx *ctx, GError **err)
{
	return pk_bases_check_names((const char *const *)ctx->cmdline.args, "", err);
}

const struct pk_cmd_spec cmd_index_diff_spec = {
	.usage = index_diff_usage,
	.options = index_diff_options,
	.opts_size = sizeof(struct index_diff_opts),
	.args_name = "A B",
	.args_min = 2, .args_max = 2,
	.check = index_diff_check,
	.inputs = index_diff_inputs,
	.setup_status = 2,
	.run = cmd_index_diff,
};
