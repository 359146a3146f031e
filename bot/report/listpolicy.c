/* listpolicy.c - which list a mail is of, and whose a tested patch's outcome is; see listpolicy.h. */
#include "report/listpolicy.h"
#include "base/patch.h"
#include "base/util.h"
#include "intake/mail.h"

#include <string.h>

/* The identifier of a List-Id header ("Linux Serial <linux-serial.vger.kernel.org>"), lower case; new. */
static char *list_id_of(const char *header)
{
	const char *lt = header ? strrchr(header, '<') : NULL;
	const char *gt = lt ? strchr(lt, '>') : NULL;
	g_autofree char *id = lt && gt ? g_strndup(lt + 1, gt - lt - 1) : g_strdup(header ? header : "");

	return g_ascii_strdown(g_strstrip(id), -1);
}

static void match_group(struct pk_list_match *out, const struct pk_list_config *l, const char *how)
{
	out->list = l;
	out->policy = l->policy;
	out->address = l->address;
	out->how = how;
}

void pk_list_match(struct pk_list_match *out, const GPtrArray *lists, enum pk_reply_mode reply_on,
		   const char *list_id, const char *const *addrs, const char *source_list)
{
	g_autofree char *id = list_id ? list_id_of(list_id) : NULL;

	*out = (struct pk_list_match){ .address = source_list, .how = "no [list] group" };
	/* the default of a group, with [daemon] reply_on's reply: what a list without one gets */
	out->policy = (struct pk_reply_policy){ .reply = reply_on, .to_author = true,
						.cc_list = true, .max_per_day = 50, .max_per_author_day = 20 };
	for (guint i = 0; id && *id && lists && i < lists->len; i++) {
		const struct pk_list_config *l = lists->pdata[i];

		if (!strcmp(l->list_id, id)) {
			match_group(out, l, "List-Id");
			return;
		}
	}
	for (guint i = 0; lists && i < lists->len; i++) {
		const struct pk_list_config *l = lists->pdata[i];

		for (const char *const *a = addrs; a && *a; a++)
			if (!g_ascii_strcasecmp(*a, l->address)) {
				match_group(out, l, "To/Cc");
				return;
			}
	}
	for (guint i = 0; source_list && lists && i < lists->len; i++) {
		const struct pk_list_config *l = lists->pdata[i];
		g_autofree char *addr = pk_mail_addr(source_list);

		if (addr && !g_ascii_strcasecmp(addr, l->address)) {
			match_group(out, l, "the source's list");
			return;
		}
	}
}

bool pk_list_subject_ok(const char *const *prefixes, const char *subject)
{
	const char *p = subject ? subject : "";

	if (!prefixes || !*prefixes)
		return true;
	/* the leading tags, after any Re: (a patch mail has none, but a subject is a stranger's) */
	for (;;) {
		const char *close;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '[' || !(close = strchr(p, ']')))
			return false;
		g_autofree char *tag = g_strndup(p + 1, close - p - 1);
		g_auto(GStrv) words = g_strsplit_set(tag, " \t,", -1);

		for (char **w = words; *w; w++)
			for (const char *const *x = prefixes; **w && *x; x++)
				if (!g_ascii_strcasecmp(*w, *x))
					return true;
		p = close + 1;
	}
}

void pk_reply_judgement_clear(struct pk_reply_judgement *j)
{
	g_clear_pointer(&j->why, g_free);
}

static void judged(struct pk_reply_judgement *out, enum pk_reply_class cls, const char *rule, char *why)
{
	out->cls = cls;
	out->rule = rule;
	out->why = why;
}

static const char *str_member(JsonObject *o, const char *name)
{
	return o && json_object_has_member(o, name) && !json_object_get_null_member(o, name)
	       ? json_object_get_string_member(o, name) : NULL;
}

static JsonObject *obj_member(JsonObject *o, const char *name)
{
	return o && json_object_has_member(o, name) && !json_object_get_null_member(o, name)
	       ? json_object_get_object_member(o, name) : NULL;
}

static bool bool_member(JsonObject *o, const char *name)
{
	return o && json_object_get_boolean_member_with_default(o, name, FALSE);
}

/* Whether text names path as a word of its own: "drivers/a/b.c:12:", "(drivers/a/b.c)", " b.o:". */
static bool names_path(const char *text, const char *path)
{
	size_t n = strlen(path);

	for (const char *p = text ? strstr(text, path) : NULL; p; p = strstr(p + 1, path)) {
		char before = p == text ? ' ' : p[-1], after = p[n];

		if (!g_ascii_isalnum(before) && before != '_' && before != '/' && before != '.' && before != '-' &&
		    !g_ascii_isalnum(after) && after != '_' && after != '/')
			return true;
	}
	return false;
}

/*
 * The patch file a build's errors or a console names, or NULL: by its
 * path, or by its object (drivers/a/b.o: ld names objects); the linker's
 * "b.c:(.text+0x12): undefined reference" by its base name too.
 */
static const char *named_file(const char *text, const char *const *files)
{
	for (const char *const *f = files; text && f && *f; f++) {
		g_autofree char *object = g_str_has_suffix(*f, ".c") ? g_strndup(*f, strlen(*f) - 1) : NULL;
		g_autofree char *base = g_path_get_basename(*f);
		g_autofree char *linked = g_strconcat(base, ":(", NULL);

		if (object) {
			char *tmp = object;
			object = g_strconcat(tmp, "o", NULL);
			g_free(tmp);
		}
		if (names_path(text, *f) || (object && names_path(text, object)) ||
		    (g_str_has_suffix(*f, ".c") && strstr(text, linked)))
			return *f;
	}
	return NULL;
}

/* The first function of functions the console names as a word ("RIP: 0010:foo+0x1c", " foo+0x"). */
static const char *named_function(const char *text, const char *const *functions)
{
	for (const char *const *f = functions; text && f && *f; f++) {
		size_t n = strlen(*f);

		for (const char *p = strstr(text, *f); p; p = strstr(p + 1, *f)) {
			char before = p == text ? ' ' : p[-1], after = p[n];

			if (!g_ascii_isalnum(before) && before != '_' && (after == '+' || after == '(' || after == ' '))
				return *f;
		}
	}
	return NULL;
}

static char *joined(const char *const *v, const char *sep)
{
	return g_strjoinv(sep, (char **)v);
}

/* build-failed: the rules of listpolicy.h in their order. */
static void judge_build(struct pk_reply_judgement *out, JsonObject *model, const struct pk_reply_facts *f)
{
	JsonObject *after = obj_member(model, "after");
	const char *errors = str_member(after, "build_errors");
	const char *file = NULL;

	if (obj_member(model, "relinked")) {
		judged(out, PK_REPLY_AUTHORS, "missing-select", g_strdup("the kernel did not link for code only "
		       "an option the patch does not select builds"));
		return;
	}
	if (f->absent && *f->absent && !f->own_base) {
		g_autofree char *names = joined(f->absent, ", ");

		judged(out, PK_REPLY_LIMIT, "base-lacks", g_strdup_printf("the compiler's missing names (%s) "
		       "occur in no C source or header of the tree the patch went on: the base is older than "
		       "what the series was written for", names));
		return;
	}
	if (errors && strstr(errors, "printkbot's sandbox")) {
		judged(out, PK_REPLY_LIMIT, "lab-failed", g_strdup("the sandbox denied the build something it "
		       "needed"));
		return;
	}
	if ((file = named_file(errors, f->files))) {
		judged(out, PK_REPLY_AUTHORS, "build-broken", g_strdup_printf("the base built; the build errors "
		       "name %s, a file of the patch", file));
		return;
	}
	judged(out, PK_REPLY_LIMIT, "errors-elsewhere", g_strdup("the base built, but the build errors name "
	       "none of the patch's files: not shown to be the patch's"));
}

/* boot-failed: the rules of listpolicy.h in their order. */
static void judge_boot(struct pk_reply_judgement *out, JsonObject *model, const struct pk_reply_facts *f)
{
	JsonObject *after = obj_member(model, "after");
	const char *status = str_member(after, "boot_status");
	const char *console = str_member(after, "console_tail");
	const char *file, *func;

	if (!g_strcmp0(status, "failed")) {
		judged(out, PK_REPLY_LIMIT, "lab-failed", g_strdup("QEMU or the capture of the boot failed, not "
		       "the kernel"));
		return;
	}
	if ((file = named_file(console, f->files))) {
		judged(out, PK_REPLY_AUTHORS, "boot-broken", g_strdup_printf("the base booted; the console of "
		       "the patched kernel names %s, a file of the patch", file));
		return;
	}
	if ((func = named_function(console, f->functions))) {
		judged(out, PK_REPLY_AUTHORS, "boot-broken", g_strdup_printf("the base booted; the console of "
		       "the patched kernel names %s(), a function the patch changes", func));
		return;
	}
	judged(out, PK_REPLY_LIMIT, "console-elsewhere", g_strdup("the base booted, but the console of the "
	       "patched kernel names none of the patch's files or functions: not shown to be the patch's"));
}

void pk_reply_judge(struct pk_reply_judgement *out, JsonObject *model, const struct pk_reply_facts *facts)
{
	enum pk_verdict v = PK_VERDICT_NONE;
	JsonObject *before = obj_member(model, "before");
	const char *reason = str_member(model, "reason");

	pk_verdict_parse(str_member(model, "verdict") ? str_member(model, "verdict") : "", &v);
	*out = (struct pk_reply_judgement){ 0 };
	/* a patch that did not apply says so itself; the others of such a series went on the wrong tree */
	if (facts->series_gap && v != PK_VERDICT_NO_CHURN && v != PK_VERDICT_NONE && v != PK_VERDICT_DOES_NOT_APPLY) {
		judged(out, PK_REPLY_LIMIT, "series-does-not-apply", g_strdup_printf("no base the bot has takes the "
		       "whole series, so it was not tested on the author's tree: %s", facts->series_gap));
		return;
	}
	switch (v) {
	case PK_VERDICT_CONSOLE_CHANGED:
		judged(out, PK_REPLY_AUTHORS, "console-changed", g_strdup("the patch changes what the kernel "
		       "prints"));
		return;
	case PK_VERDICT_NO_VISIBLE_CHANGE:
		judged(out, PK_REPLY_POSITIVE, "no-visible-change", g_strdup("the kernel prints what it printed"));
		return;
	case PK_VERDICT_DOES_NOT_APPLY:
		judged(out, PK_REPLY_LIMIT, "does-not-apply", g_strdup_printf("no base the bot has takes it%s%s",
		       reason ? ": " : "", reason ? reason : ""));
		return;
	case PK_VERDICT_NOT_BUILT:
		judged(out, PK_REPLY_LIMIT, "not-built", g_strdup("no config the bot has builds all the code it "
		       "touches"));
		return;
	case PK_VERDICT_REFUSED:
		judged(out, PK_REPLY_LIMIT, "refused", g_strdup_printf("the bot's policy did not build it%s%s",
		       reason ? ": " : "", reason ? reason : ""));
		return;
	case PK_VERDICT_BUILD_FAILED:
	case PK_VERDICT_BOOT_FAILED:
		if (!bool_member(before, "built") || g_strcmp0(str_member(before, "boot_status"), "ok")) {
			judged(out, PK_REPLY_LIMIT, "base-broken", g_strdup_printf("the tree the patch went on does "
			       "not %s itself", bool_member(before, "built") ? "boot" : "build"));
			return;
		}
		if (v == PK_VERDICT_BUILD_FAILED)
			judge_build(out, model, facts);
		else
			judge_boot(out, model, facts);
		return;
	default:
		judged(out, PK_REPLY_LIMIT, "no-churn", g_strdup("it changes no logging call"));
		return;
	}
}

bool pk_reply_policy_mails(const struct pk_reply_policy *p, const struct pk_reply_judgement *j)
{
	switch (p->reply) {
	case PK_REPLY_ALWAYS:
		return true;
	case PK_REPLY_CHANGES:
		return j->cls == PK_REPLY_AUTHORS || (j->cls == PK_REPLY_POSITIVE && p->positive);
	default:
		return false;
	}
}

/* At most this many missing names are read: a build missing more is broken in other ways. */
#define MISSING_MAX 32

GPtrArray *pk_reply_missing_names(const char *errors)
{
	/* gcc quotes with ‘’ in a UTF-8 locale and '' in C; ld with `' */
	g_autoptr(GRegex) re = g_regex_new(
		"implicit declaration of function (?:‘|'|`)([A-Za-z_][A-Za-z0-9_]*)(?:’|')"
		"|(?:‘|'|`)([A-Za-z_][A-Za-z0-9_]*)(?:’|') undeclared"
		"|unknown type name (?:‘|'|`)([A-Za-z_][A-Za-z0-9_]*)(?:’|')"
		"|undefined reference to (?:‘|'|`)([A-Za-z_][A-Za-z0-9_]*)(?:’|')", 0, 0, NULL);
	g_autoptr(GMatchInfo) m = NULL;
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);

	g_regex_match(re, errors ? errors : "", 0, &m);
	for (; g_match_info_matches(m) && names->len < MISSING_MAX; g_match_info_next(m, NULL)) {
		char *name = NULL;

		for (int g = 1; g <= 4 && !(name && *name); g++) {
			g_free(name);
			name = g_match_info_fetch(m, g);
		}
		if (!name || !*name || g_ptr_array_find_with_equal_func(names, name, g_str_equal, NULL))
			g_free(name);
		else
			g_ptr_array_add(names, name);
	}
	return names;
}

GPtrArray *pk_reply_patch_functions(const GPtrArray *files)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; files && i < files->len; i++) {
		const struct pk_diff_file *f = files->pdata[i];

		for (guint h = 0; f->hunks && h < f->hunks->len; h++) {
			const struct pk_hunk *k = f->hunks->pdata[h];
			const char *paren = k->section ? strchr(k->section, '(') : NULL;
			const char *end = paren, *start;

			if (!paren)
				continue;
			while (end > k->section && end[-1] == ' ')
				end--;
			for (start = end; start > k->section && (g_ascii_isalnum(start[-1]) || start[-1] == '_'); start--)
				;
			/* a keyword is no function ("if (", "for (") */
			if (end - start < 2 || g_ascii_isdigit(*start))
				continue;
			g_autofree char *name = g_strndup(start, end - start);
			if (!strcmp(name, "if") || !strcmp(name, "for") || !strcmp(name, "while") ||
			    !strcmp(name, "switch") || !strcmp(name, "return") || !strcmp(name, "sizeof"))
				continue;
			if (!g_ptr_array_find_with_equal_func(out, name, g_str_equal, NULL))
				g_ptr_array_add(out, g_steal_pointer(&name));
		}
	}
	return out;
}

/* "a|b|c" of the string members of o named in names; a null member is "-". */
static char *members_line(JsonObject *o, const char *const *names)
{
	g_autoptr(GString) s = g_string_new(NULL);

	for (const char *const *n = names; *n; n++) {
		JsonNode *v = json_object_get_member(o, *n);
		g_autofree char *text = NULL;

		if (!v || JSON_NODE_HOLDS_NULL(v))
			text = g_strdup("-");
		else if (json_node_get_value_type(v) == G_TYPE_STRING)
			text = g_strescape(json_node_get_string(v), NULL);
		else if (json_node_get_value_type(v) == G_TYPE_INT64)
			text = g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(v));
		else
			text = g_strdup("?");
		g_string_append_printf(s, "%s%s", s->len ? "|" : "", text);
	}
	return g_string_free(g_steal_pointer(&s), FALSE);
}

static gint compare_strings(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The lines of one array member of model, each its members_line(), sorted, onto out. */
static void effect_list(GString *out, JsonObject *model, const char *member, const char *const *names)
{
	JsonArray *a = json_object_has_member(model, member) ? json_object_get_array_member(model, member) : NULL;
	g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; a && i < json_array_get_length(a); i++) {
		JsonObject *o = json_array_get_object_element(a, i);

		if (o)
			g_ptr_array_add(lines, members_line(o, names));
	}
	g_ptr_array_sort(lines, compare_strings);
	g_string_append_printf(out, "%s:\n", member);
	for (guint i = 0; i < lines->len; i++)
		g_string_append_printf(out, "%s\n", (char *)lines->pdata[i]);
}

char *pk_reply_effect_key(JsonObject *model)
{
	static const char *const finding[] = { "kind", "file", "old_text", "new_text", "old_level", "new_level",
					       "old_prefix", "new_prefix", NULL };
	static const char *const change[] = { "kind", "file", "func", "old_side", "new_side", NULL };
	g_autoptr(GString) s = g_string_new(NULL);

	g_string_append_printf(s, "verdict %s\n", str_member(model, "verdict") ? str_member(model, "verdict") : "");
	effect_list(s, model, "findings", finding);
	effect_list(s, model, "console", change);
	effect_list(s, model, "index", change);
	return g_compute_checksum_for_string(G_CHECKSUM_SHA256, s->str, (gssize)s->len);
}

const char *pk_reply_mode_name(enum pk_reply_mode mode)
{
	return mode == PK_REPLY_ALWAYS ? "always" : mode == PK_REPLY_CHANGES ? "changes" : "off";
}
