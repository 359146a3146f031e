/*
 * rules.c - log-monitor rule files, and what their rules match in a
 * kernel, between two kernels and across a patch (rules.h).
 */
#include "analysis/rules.h"
#include "analysis/rules-private.h"
#include "base/util.h"

#include <json-glib/json-glib.h>
#include <string.h>

static void rule_free(gpointer p)
{
	struct pk_rule *r = p;

	g_free(r->name);
	g_free(r->where);
	g_free(r->pattern);
	for (guint i = 0; r->parts && i < r->n_lines; i++)
		pk_re_free(r->parts[i]);
	g_free(r->parts);
	g_strfreev(r->lines);
	pk_re_free(r->whole);
	g_free(r);
}

void pk_rules_free(struct pk_rules *rules)
{
	if (!rules)
		return;
	g_free(rules->path);
	g_ptr_array_unref(rules->rules);
	pk_re_scratch_free(rules->scratch);
	g_free(rules);
}

/*
 * Compile one rule: the whole pattern (for runs of records) and each of
 * its lines anchored as its place says: the first ends its message,
 * the last begins one, a line between is a whole message.
 */
static int rule_add(struct pk_rules *rules, const char *name, const char *where, const char *pattern,
		    GError **err)
{
	struct pk_rule *r = g_new0(struct pk_rule, 1);
	g_autoptr(GError) e = NULL;

	r->name = g_strdup(name);
	r->where = g_strdup(where);
	r->pattern = g_strdup(pattern);
	g_ptr_array_add(rules->rules, r);
	if (!*pattern)
		return pk_error(err, PK_ERROR_INPUT, "%s: %s%s%s%s: the pattern is empty (it would match everything)",
				rules->path, where, strcmp(name, where) ? " (" : "", strcmp(name, where) ? name : "",
				strcmp(name, where) ? ")" : "");
	if (pk_re_compile(&r->whole, pattern, strlen(pattern), PK_RE_ANCHOR_NONE, &e) < 0)
		goto bad;
	r->lines = pk_re_split_lines(pattern);
	r->n_lines = g_strv_length(r->lines);
	r->parts = g_new0(struct pk_re *, r->n_lines);
	for (guint i = 0; i < r->n_lines; i++) {
		unsigned anchor = (i > 0 ? PK_RE_ANCHOR_START : 0) | (i + 1 < r->n_lines ? PK_RE_ANCHOR_END : 0);

		if (pk_re_compile(&r->parts[i], r->lines[i], strlen(r->lines[i]), anchor, &e) < 0)
			goto bad;
	}
	return 0;
bad:
	return pk_error(err, PK_ERROR_INPUT, "%s: %s%s%s%s: pattern /%s/: %s", rules->path, where,
			strcmp(name, where) ? " (" : "", strcmp(name, where) ? name : "",
			strcmp(name, where) ? ")" : "", pattern, e->message);
}

/* node-problem-detector's JSON: { ..., "rules": [ { "reason": ..., "pattern": ... }, ... ] }. */
static int parse_npd(struct pk_rules *rules, const char *text, gsize len, GError **err)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) e = NULL;
	JsonNode *root;
	JsonObject *top;
	JsonArray *list;

	if (!json_parser_load_from_data(parser, text, (gssize)len, &e))
		return pk_error(err, PK_ERROR_INPUT, "%s: not valid JSON: %s", rules->path, e->message);
	root = json_parser_get_root(parser);
	if (!root || !JSON_NODE_HOLDS_OBJECT(root))
		return pk_error(err, PK_ERROR_INPUT, "%s: not a rule file: the JSON is not an object", rules->path);
	top = json_node_get_object(root);
	if (!json_object_has_member(top, "rules") ||
	    !JSON_NODE_HOLDS_ARRAY(json_object_get_member(top, "rules")))
		return pk_error(err, PK_ERROR_INPUT, "%s: not a node-problem-detector rule file: no \"rules\" array",
				rules->path);
	list = json_object_get_array_member(top, "rules");
	for (guint i = 0; i < json_array_get_length(list); i++) {
		JsonNode *n = json_array_get_element(list, i);
		g_autofree char *where = g_strdup_printf("rules[%u]", i);
		JsonObject *o;
		JsonNode *pattern, *reason;

		if (!JSON_NODE_HOLDS_OBJECT(n))
			return pk_error(err, PK_ERROR_INPUT, "%s: %s: not an object", rules->path, where);
		o = json_node_get_object(n);
		pattern = json_object_get_member(o, "pattern");
		reason = json_object_get_member(o, "reason");
		if (!pattern || !JSON_NODE_HOLDS_VALUE(pattern) || json_node_get_value_type(pattern) != G_TYPE_STRING)
			return pk_error(err, PK_ERROR_INPUT, "%s: %s: no \"pattern\" string", rules->path, where);
		if (rule_add(rules,
			     reason && JSON_NODE_HOLDS_VALUE(reason) && json_node_get_value_type(reason) == G_TYPE_STRING &&
			     *json_node_get_string(reason) ? json_node_get_string(reason) : where,
			     where, json_node_get_string(pattern), err) < 0)
			return -1;
	}
	return 0;
}

/* One pattern a line; '#' comments and blank lines skipped. */
static int parse_plain(struct pk_rules *rules, const char *text, gsize len, GError **err)
{
	g_autofree char *copy = g_strndup(text, len);
	g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);

	if (strlen(copy) != len)
		return pk_error(err, PK_ERROR_INPUT, "%s: a NUL byte at offset %zu: not a pattern list",
				rules->path, strlen(copy));
	for (guint i = 0; lines[i]; i++) {
		g_autofree char *where = g_strdup_printf("line %u", i + 1);
		char *l = lines[i];
		size_t n = strlen(l);

		if (n && l[n - 1] == '\r')
			l[n - 1] = '\0';
		if (!*l || *l == '#')
			continue;
		if (rule_add(rules, where, where, l, err) < 0)
			return -1;
	}
	return 0;
}

int pk_rules_parse(struct pk_rules **out, const char *path, const char *text, gsize len, GError **err)
{
	g_autoptr(pk_rules) rules = g_new0(struct pk_rules, 1);
	gsize i = 0;

	rules->path = g_strdup(path);
	rules->rules = g_ptr_array_new_with_free_func(rule_free);
	while (i < len && g_ascii_isspace(text[i]))
		i++;
	if (i < len && text[i] == '{' ? parse_npd(rules, text, len, err) < 0 : parse_plain(rules, text, len, err) < 0)
		return -1;
	if (!rules->rules->len)
		return pk_error(err, PK_ERROR_INPUT, "%s: no rule in it", path);
	rules->scratch = pk_re_scratch_new();
	*out = g_steal_pointer(&rules);
	return 0;
}

bool pk_rule_matches_format(const struct pk_rules *rules, const struct pk_rule *rule, guint line,
			    const char *format)
{
	g_autoptr(pk_re) f = pk_re_format(format);

	return pk_re_match(rule->parts[line], f, rules->scratch) == PK_RE_OWN;
}

bool pk_rule_matches_record(const struct pk_rules *rules, const struct pk_rule *rule, guint line,
			    const char *text)
{
	g_autoptr(pk_re) t = pk_re_text(text, strlen(text));

	return pk_re_match(rule->parts[line], t, rules->scratch) != PK_RE_NONE;
}

/* ---- one kernel ---- */

static void hits_init(struct pk_rule_hits *h, const struct pk_rule *rule)
{
	h->lines = g_new0(GPtrArray *, rule->n_lines);
	for (guint l = 0; l < rule->n_lines; l++)
		h->lines[l] = g_ptr_array_new();
	h->records = g_ptr_array_new();
}

static void hits_clear(struct pk_rule_hits *h, const struct pk_rule *rule)
{
	for (guint l = 0; h->lines && l < rule->n_lines; l++)
		g_ptr_array_unref(h->lines[l]);
	g_free(h->lines);
	if (h->records)
		g_ptr_array_unref(h->records);
}

/*
 * Fill hits[i] (one per rule, initialised) from cap: each index format
 * becomes an automaton once and meets every line of every rule; each run
 * of as many records as a rule has lines is joined with newlines and
 * searched with the whole rule.
 */
static void hits_fill(const struct pk_rules *rules, struct pk_rule_hits *hits, const struct pk_capture *cap)
{
	guint most = 1;

	for (guint e = 0; cap && e < cap->index->len; e++) {
		const struct pk_index_entry *entry = cap->index->pdata[e];
		g_autoptr(pk_re) f = NULL;

		if (!entry->format)
			continue;
		f = pk_re_format(entry->format);
		for (guint i = 0; i < rules->rules->len; i++) {
			const struct pk_rule *r = rules->rules->pdata[i];

			for (guint l = 0; l < r->n_lines; l++)
				if (pk_re_match(r->parts[l], f, rules->scratch) == PK_RE_OWN)
					g_ptr_array_add(hits[i].lines[l], (gpointer)entry);
		}
	}
	for (guint i = 0; i < rules->rules->len; i++)
		most = MAX(most, ((const struct pk_rule *)rules->rules->pdata[i])->n_lines);
	for (guint k = 1; k <= most; k++) {
		for (guint s = 0; cap && s + k <= cap->records->len; s++) {
			g_autoptr(GString) run = g_string_new(NULL);
			g_autoptr(pk_re) t = NULL;

			for (guint j = s; j < s + k; j++) {
				const struct pk_record *rec = cap->records->pdata[j];

				if (j > s)
					g_string_append_c(run, '\n');
				g_string_append(run, rec->text ? rec->text : "");
			}
			t = pk_re_text(run->str, run->len);
			for (guint i = 0; i < rules->rules->len; i++) {
				const struct pk_rule *r = rules->rules->pdata[i];

				if (r->n_lines == k && pk_re_match(r->whole, t, rules->scratch) != PK_RE_NONE)
					g_ptr_array_add(hits[i].records, cap->records->pdata[s]);
			}
		}
	}
	for (guint i = 0; i < rules->rules->len; i++) {
		const struct pk_rule *r = rules->rules->pdata[i];
		bool all = true;

		for (guint l = 0; l < r->n_lines; l++)
			all &= hits[i].lines[l]->len > 0;
		hits[i].matches = all || hits[i].records->len > 0;
	}
}

/* ---- two kernels ---- */

static void report_free(gpointer p)
{
	struct pk_rule_report *rep = p;

	hits_clear(&rep->a, rep->rule);
	hits_clear(&rep->b, rep->rule);
	g_ptr_array_unref(rep->changed);
	g_free(rep->nearest);
	g_free(rep);
}

/* The words of s, lower-cased, split at anything but letters and digits. */
static GPtrArray *text_words(const char *s)
{
	GPtrArray *words = g_ptr_array_new_with_free_func(g_free);

	while (*s) {
		const char *w = s;

		while (g_ascii_isalnum(*s))
			s++;
		if (s > w)
			g_ptr_array_add(words, g_ascii_strdown(w, s - w));
		else
			s++;
	}
	return words;
}

/* Whether a and b are one word: the same, or one is the other and an English ending ("kill", "killed"). */
static bool same_word(const char *a, const char *b)
{
	static const char *const endings[] = { "s", "es", "d", "ed", "ing", "er" };
	size_t la = strlen(a), lb = strlen(b);

	if (la > lb)
		return same_word(b, a);
	if (strncmp(a, b, la))
		return false;
	if (la == lb)
		return true;
	for (size_t i = 0; i < G_N_ELEMENTS(endings); i++)
		if (!strcmp(b + la, endings[i]))
			return true;
	return false;
}

/* How many of words (the rule line's) the format holds. */
static guint word_score(GPtrArray *words, const char *format)
{
	g_autoptr(GPtrArray) fw = text_words(format);
	guint score = 0;

	for (guint i = 0; i < words->len; i++) {
		const char *w = words->pdata[i];

		for (guint j = 0; j < fw->len; j++) {
			if (same_word(w, fw->pdata[j])) {
				score++;
				break;
			}
		}
	}
	return score;
}

/* Words that say nothing of which message it is. */
static bool stop_word(const char *w)
{
	static const char *const stop[] = {
		"all", "and", "any", "are", "been", "but", "can", "cannot", "could", "for", "from", "has",
		"have", "into", "its", "may", "more", "not", "now", "off", "one", "only", "out", "than",
		"that", "the", "then", "this", "too", "use", "was", "were", "will", "with", "yet",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(stop); i++)
		if (!strcmp(stop[i], w))
			return true;
	return false;
}

/* The words of a rule line, split as text_words() splits a format, each once. */
static GPtrArray *line_words(const char *line)
{
	g_autoptr(GPtrArray) raw = pk_re_words(line);
	GPtrArray *words = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < raw->len; i++) {
		g_autoptr(GPtrArray) parts = text_words(raw->pdata[i]);

		for (guint j = 0; j < parts->len; j++) {
			const char *w = parts->pdata[j];
			bool seen = false;

			for (guint k = 0; k < words->len && !seen; k++)
				seen = !strcmp(words->pdata[k], w);
			if (!seen && strlen(w) >= 3 && !stop_word(w))
				g_ptr_array_add(words, g_strdup(w));
		}
	}
	return words;
}

/*
 * The entry of index with most of line's words (stop words left out), at
 * least three and half of them (two words in common are chance: "task"
 * and "block" are in a scheduler table's header too); the shorter on a
 * tie.
 */
static const struct pk_index_entry *nearest_entry(const char *line, const GPtrArray *index)
{
	g_autoptr(GPtrArray) words = line_words(line);
	const struct pk_index_entry *best = NULL;
	guint best_score = MAX(2, (words->len + 1) / 2 - 1);

	for (guint i = 0; index && i < index->len; i++) {
		const struct pk_index_entry *e = index->pdata[i];
		guint s = e->format ? word_score(words, e->format) : 0;

		if (s > best_score || (best && s == best_score && strlen(e->format) < strlen(best->format))) {
			best = e;
			best_score = s;
		}
	}
	return best;
}

static bool in_list(const GPtrArray *list, const void *p)
{
	for (guint i = 0; i < list->len; i++)
		if (list->pdata[i] == p)
			return true;
	return false;
}

/*
 * The index changes of d that took from line l of rule a message it
 * matched: the old format matches, and the new one does not (reworded),
 * or there is none (removed; moved when an added message matches).
 */
static void changed_for(const struct pk_rules *rules, const struct pk_rule *rule, guint l, const struct pk_kdiff *d,
			GPtrArray *out)
{
	for (guint i = 0; d && i < d->index_changes->len; i++) {
		const struct pk_index_change *c = d->index_changes->pdata[i];

		if (c->kind != PK_CHANGE_TEXT_CHANGED && c->kind != PK_CHANGE_MESSAGE_REMOVED)
			continue;
		if (!c->old_format || !pk_rule_matches_format(rules, rule, l, c->old_format))
			continue;
		if (c->new_format && pk_rule_matches_format(rules, rule, l, c->new_format))
			continue;
		if (!in_list(out, c))
			g_ptr_array_add(out, (gpointer)c);
	}
}

GPtrArray *pk_rules_compare(const struct pk_rules *rules, const struct pk_capture *a,
			    const struct pk_capture *b, const struct pk_kdiff *d)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(report_free);
	g_autofree struct pk_rule_hits *ha = g_new0(struct pk_rule_hits, rules->rules->len);
	g_autofree struct pk_rule_hits *hb = g_new0(struct pk_rule_hits, rules->rules->len);

	for (guint i = 0; i < rules->rules->len; i++) {
		hits_init(&ha[i], rules->rules->pdata[i]);
		hits_init(&hb[i], rules->rules->pdata[i]);
	}
	hits_fill(rules, ha, a);
	hits_fill(rules, hb, b);
	for (guint i = 0; i < rules->rules->len; i++) {
		struct pk_rule_report *rep = g_new0(struct pk_rule_report, 1);
		const struct pk_rule *r = rules->rules->pdata[i];

		rep->rule = r;
		rep->a = ha[i];
		rep->b = hb[i];
		rep->changed = g_ptr_array_new();
		rep->nearest = g_new0(const struct pk_index_entry *, r->n_lines);
		for (guint l = 0; l < r->n_lines; l++) {
			if (rep->a.lines[l]->len)
				changed_for(rules, r, l, d, rep->changed);
			if (!rep->b.lines[l]->len)
				rep->nearest[l] = nearest_entry(r->lines[l], b ? b->index : NULL);
		}
		g_ptr_array_add(out, rep);
	}
	return out;
}

/* ---- a patch ---- */

const char *pk_rule_break_kind_name(enum pk_rule_break_kind kind)
{
	switch (kind) {
	case PK_RULE_REWORDED: return "reworded";
	case PK_RULE_REMOVED: return "removed";
	case PK_RULE_MOVED: return "moved";
	}
	return "";
}

void pk_rule_break_free(gpointer p)
{
	struct pk_rule_break *b = p;

	g_free(b->rule);
	g_free(b->where);
	g_free(b->pattern);
	g_free(b->file);
	g_free(b->func);
	g_free(b->old_text);
	g_free(b->new_text);
	g_free(b->moved_to);
	g_free(b);
}

static struct pk_rule_break *break_new(const struct pk_rule *rule, guint l, enum pk_rule_break_kind kind,
				       const struct pk_origin *origin, const char *old_text, const char *new_text)
{
	struct pk_rule_break *b = g_new0(struct pk_rule_break, 1);

	b->rule = g_strdup(rule->name);
	b->where = g_strdup(rule->where);
	b->pattern = g_strdup(rule->lines[l]);
	b->kind = kind;
	b->file = g_strdup(origin->file);
	b->line = origin->line;
	b->func = g_strdup(origin->func);
	b->old_text = g_strdup(old_text);
	b->new_text = g_strdup(new_text);
	return b;
}

/* An added index change whose message line l of rule matches, or NULL. */
static const struct pk_index_change *added_match(const struct pk_rules *rules, const struct pk_rule *rule, guint l,
						 const struct pk_kdiff *d)
{
	for (guint i = 0; i < d->index_changes->len; i++) {
		const struct pk_index_change *c = d->index_changes->pdata[i];

		if (c->kind == PK_CHANGE_MESSAGE_ADDED && c->new_format &&
		    pk_rule_matches_format(rules, rule, l, c->new_format))
			return c;
	}
	return NULL;
}

/* Whether line l of rule matches some message of cap's index. */
static bool index_matches(const struct pk_rules *rules, const struct pk_rule *rule, guint l,
			  const struct pk_capture *cap)
{
	for (guint i = 0; cap && i < cap->index->len; i++) {
		const struct pk_index_entry *e = cap->index->pdata[i];

		if (e->format && pk_rule_matches_format(rules, rule, l, e->format))
			return true;
	}
	return false;
}

/* Whether breaks already hold one of line l of rule at that place (an index change explains a record). */
static bool break_at(const GPtrArray *breaks, const struct pk_rule *rule, guint l, const struct pk_origin *o)
{
	for (guint i = 0; i < breaks->len; i++) {
		const struct pk_rule_break *b = breaks->pdata[i];

		if (!strcmp(b->where, rule->where) && !strcmp(b->pattern, rule->lines[l]) &&
		    !g_strcmp0(b->file, o->file) && b->line == o->line)
			return true;
	}
	return false;
}

/* The index changes that take a message from line l of rule, into breaks. */
static void breaks_index(const struct pk_rules *rules, const struct pk_rule *rule, guint l,
			 const struct pk_kdiff *d, GPtrArray *breaks)
{
	for (guint i = 0; i < d->index_changes->len; i++) {
		const struct pk_index_change *c = d->index_changes->pdata[i];
		const struct pk_index_change *to;
		struct pk_rule_break *b;

		if ((c->kind != PK_CHANGE_TEXT_CHANGED && c->kind != PK_CHANGE_MESSAGE_REMOVED) || !c->old_format ||
		    !pk_rule_matches_format(rules, rule, l, c->old_format))
			continue;
		if (c->kind == PK_CHANGE_TEXT_CHANGED) {
			if (c->new_format && pk_rule_matches_format(rules, rule, l, c->new_format))
				continue;
			g_ptr_array_add(breaks, break_new(rule, l, PK_RULE_REWORDED, &c->origin, c->old_format,
							  c->new_format));
			continue;
		}
		if ((to = added_match(rules, rule, l, d))) {
			b = break_new(rule, l, PK_RULE_MOVED, &c->origin, c->old_format, to->new_format);
			b->moved_to = g_strdup_printf("%s:%d %s()", to->origin.file ? to->origin.file : "?",
						      to->origin.line, to->origin.func ? to->origin.func : "?");
		} else {
			b = break_new(rule, l, PK_RULE_REMOVED, &c->origin, c->old_format, NULL);
		}
		g_ptr_array_add(breaks, b);
	}
}

/* The boot-log changes that take a record from line l of rule and that no index change there explains. */
static void breaks_boot_log(const struct pk_rules *rules, const struct pk_rule *rule, guint l,
			    const struct pk_kdiff *d, GPtrArray *breaks)
{
	for (guint i = 0; i < d->changes->len; i++) {
		const struct pk_change *c = d->changes->pdata[i];
		struct pk_rule_break *b;

		if ((c->kind != PK_CHANGE_TEXT_CHANGED && c->kind != PK_CHANGE_PREFIX_CHANGED &&
		     c->kind != PK_CHANGE_MESSAGE_REMOVED) || !c->old_text || strchr(c->old_text, '\n') ||
		    !pk_rule_matches_record(rules, rule, l, c->old_text))
			continue;
		if (c->new_text && pk_rule_matches_record(rules, rule, l, c->new_text))
			continue;
		if (break_at(breaks, rule, l, &c->origin))
			continue;
		b = break_new(rule, l, c->new_text ? PK_RULE_REWORDED : PK_RULE_REMOVED, &c->origin, c->old_text,
			      c->new_text);
		b->boot_log = true;
		g_ptr_array_add(breaks, b);
	}
}

static int break_compare(gconstpointer pa, gconstpointer pb)
{
	const struct pk_rule_break *a = *(const struct pk_rule_break *const *)pa;
	const struct pk_rule_break *b = *(const struct pk_rule_break *const *)pb;
	int c = g_strcmp0(a->file, b->file);

	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return g_strcmp0(a->where, b->where);
}

GPtrArray *pk_rules_breaks(const struct pk_rules *rules, const struct pk_kdiff *d,
			   const struct pk_capture *after)
{
	GPtrArray *breaks = g_ptr_array_new_with_free_func(pk_rule_break_free);

	for (guint i = 0; d && i < rules->rules->len; i++) {
		const struct pk_rule *r = rules->rules->pdata[i];

		for (guint l = 0; l < r->n_lines; l++) {
			guint from = breaks->len;
			bool still;

			breaks_index(rules, r, l, d, breaks);
			breaks_boot_log(rules, r, l, d, breaks);
			if (breaks->len == from)
				continue;
			still = index_matches(rules, r, l, after);
			for (guint j = from; j < breaks->len; j++)
				((struct pk_rule_break *)breaks->pdata[j])->still_matched = still;
		}
	}
	g_ptr_array_sort(breaks, break_compare);
	return breaks;
}
