/*
 * review.c - render a review model (JSON) through a template-glib template.
 *
 * template-glib reads GObject properties ({{c.kind}}) and iterates
 * GListModels ({{for c in changes}}), but it cannot look into a JSON object
 * (and 3.36 cannot iterate a GVariant array).  So the model is turned into
 * objects first: every JSON object becomes a "row" whose class has one
 * property per member, the row class being made at run time for each set of
 * member names, and every array of objects becomes a GListStore of rows.
 * Numbers become strings, formatted here, because template-glib prints a
 * number as "%f"; templates test booleans, never numbers.
 */
#include "report/review.h"
#include "base/profile.h"

#include <gio/gio.h>
#include <string.h>
#include <tmpl-glib.h>

#include "analysis/digest.h"
#include "base/util.h"
#include "lab/coverage.h"
#include "report/html.h"

/* The members a row class has, in property order (property id = index + 1). */
struct row_shape {
	GPtrArray *names;   /* char* */
	GArray *types;      /* GType */
};

typedef struct {
	GObject parent;
	GValue *values;     /* one per property of the class */
} PkRow;

typedef struct {
	GObjectClass parent;
	const struct row_shape *shape;
} PkRowClass;

#define PK_ROW_CLASS_OF(obj) ((PkRowClass *)G_OBJECT_GET_CLASS(obj))

static void row_get_property(GObject *obj, guint id, GValue *value, GParamSpec *pspec)
{
	PkRow *row = (PkRow *)obj;
	g_value_copy(&row->values[id - 1], value);
}

static void row_finalize(GObject *obj)
{
	PkRow *row = (PkRow *)obj;
	const struct row_shape *shape = PK_ROW_CLASS_OF(obj)->shape;

	for (guint i = 0; i < shape->names->len; i++)
		g_value_unset(&row->values[i]);
	g_free(row->values);
	G_OBJECT_CLASS(g_type_class_peek_parent(G_OBJECT_GET_CLASS(obj)))->finalize(obj);
}

static void row_class_init(gpointer klass, gpointer data)
{
	GObjectClass *oc = klass;
	const struct row_shape *shape = data;

	((PkRowClass *)klass)->shape = shape;
	oc->get_property = row_get_property;
	oc->finalize = row_finalize;
	for (guint i = 0; i < shape->names->len; i++) {
		const char *name = shape->names->pdata[i];
		GType t = g_array_index(shape->types, GType, i);
		GParamSpec *ps = t == G_TYPE_BOOLEAN ? g_param_spec_boolean(name, NULL, NULL, FALSE, G_PARAM_READABLE)
			       : t == G_TYPE_STRV ? g_param_spec_boxed(name, NULL, NULL, G_TYPE_STRV, G_PARAM_READABLE)
			       : t == G_TYPE_OBJECT ? g_param_spec_object(name, NULL, NULL, G_TYPE_OBJECT, G_PARAM_READABLE)
			       : g_param_spec_string(name, NULL, NULL, NULL, G_PARAM_READABLE);
		g_object_class_install_property(oc, i + 1, ps);
	}
}

static void row_instance_init(GTypeInstance *inst, gpointer klass)
{
	PkRow *row = (PkRow *)inst;
	const struct row_shape *shape = ((PkRowClass *)klass)->shape;

	row->values = g_new0(GValue, shape->names->len);
	for (guint i = 0; i < shape->names->len; i++)
		g_value_init(&row->values[i], g_array_index(shape->types, GType, i));
}

/* The property type a JSON member maps to. */
static GType member_type(JsonNode *node)
{
	if (JSON_NODE_HOLDS_ARRAY(node)) {
		JsonArray *a = json_node_get_array(node);
		if (json_array_get_length(a) && JSON_NODE_HOLDS_VALUE(json_array_get_element(a, 0)))
			return G_TYPE_STRV;
		return G_TYPE_OBJECT;
	}
	if (JSON_NODE_HOLDS_OBJECT(node))
		return G_TYPE_OBJECT;
	if (JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_BOOLEAN)
		return G_TYPE_BOOLEAN;
	return G_TYPE_STRING;
}

/* A member is a valid property name only if GLib says so; others are skipped. */
static gboolean usable_name(const char *name)
{
	return g_param_spec_is_valid_name(name);
}

/*
 * The row class for objects with these members (the union over all of
 * them), made once per distinct shape and kept for the process lifetime
 * (GType classes cannot be unregistered).
 */
static GType row_type_for(JsonObject *const *objs, guint n)
{
	static GHashTable *types;   /* shape key -> GType; GType registry is global too */
	static GMutex lock;
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) kinds = g_array_new(FALSE, FALSE, sizeof(GType));
	g_autoptr(GString) key = g_string_new("PkRow");
	GType type;

	for (guint i = 0; i < n; i++) {
		g_autoptr(GList) members = json_object_get_members(objs[i]);
		for (GList *m = members; m; m = m->next) {
			JsonNode *v = json_object_get_member(objs[i], m->data);
			guint at;
			if (!usable_name(m->data))
				continue;
			if (g_ptr_array_find_with_equal_func(names, m->data, g_str_equal, &at)) {
				/* a null seen first gave a string; a later real value decides */
				if (!JSON_NODE_HOLDS_NULL(v) && g_array_index(kinds, GType, at) == G_TYPE_STRING)
					g_array_index(kinds, GType, at) = member_type(v);
				continue;
			}
			g_ptr_array_add(names, g_strdup(m->data));
			GType t = member_type(v);
			g_array_append_val(kinds, t);
		}
	}
	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(key, "_%s_%s", (char *)names->pdata[i],
				       g_type_name(g_array_index(kinds, GType, i)));
	g_mutex_lock(&lock);
	if (!types)
		types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	type = GPOINTER_TO_SIZE(g_hash_table_lookup(types, key->str));
	if (!type) {
		struct row_shape *shape = g_new0(struct row_shape, 1);
		g_autofree char *tname = g_strdup_printf("PkRow%u", g_hash_table_size(types) + 1);
		GTypeInfo info = {
			.class_size = sizeof(PkRowClass),
			.class_init = row_class_init,
			.class_data = shape,
			.instance_size = sizeof(PkRow),
			.instance_init = row_instance_init,
		};
		shape->names = g_steal_pointer(&names);
		shape->types = g_steal_pointer(&kinds);
		type = g_type_register_static(G_TYPE_OBJECT, tname, &info, 0);
		g_hash_table_insert(types, g_strdup(key->str), GSIZE_TO_POINTER(type));
	}
	g_mutex_unlock(&lock);
	return type;
}

static GObject *object_to_row(JsonObject *obj);
static GObject *array_to_store(JsonArray *arr);

/* A scalar as the text a template prints: integers plainly, others with one decimal. */
static char *scalar_text(JsonNode *node)
{
	GType t = json_node_get_value_type(node);

	if (t == G_TYPE_INT64)
		return g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(node));
	if (t == G_TYPE_DOUBLE)
		return g_strdup_printf("%.1f", json_node_get_double(node));
	if (t == G_TYPE_STRING)
		return g_strdup(json_node_get_string(node));
	return NULL;
}

static char **array_to_strv(JsonArray *arr)
{
	guint n = json_array_get_length(arr);
	char **v = g_new0(char *, n + 1);

	for (guint i = 0; i < n; i++) {
		JsonNode *e = json_array_get_element(arr, i);
		v[i] = JSON_NODE_HOLDS_VALUE(e) ? scalar_text(e) : NULL;
		if (!v[i])
			v[i] = g_strdup("");
	}
	return v;
}

/* Set a GValue of type t from a JSON member; a mismatch leaves the default. */
static void fill_value(GValue *out, JsonNode *node)
{
	GType t = G_VALUE_TYPE(out);

	if (JSON_NODE_HOLDS_NULL(node))
		return;
	if (t == G_TYPE_BOOLEAN && JSON_NODE_HOLDS_VALUE(node))
		g_value_set_boolean(out, json_node_get_boolean(node));
	else if (t == G_TYPE_STRING && JSON_NODE_HOLDS_VALUE(node))
		g_value_take_string(out, scalar_text(node));
	else if (t == G_TYPE_STRV && JSON_NODE_HOLDS_ARRAY(node))
		g_value_take_boxed(out, array_to_strv(json_node_get_array(node)));
	else if (t == G_TYPE_OBJECT && JSON_NODE_HOLDS_ARRAY(node))
		g_value_take_object(out, array_to_store(json_node_get_array(node)));
	else if (t == G_TYPE_OBJECT && JSON_NODE_HOLDS_OBJECT(node))
		g_value_take_object(out, object_to_row(json_node_get_object(node)));
}

static GObject *row_new(GType type, JsonObject *obj)
{
	GObject *row = g_object_new(type, NULL);
	const struct row_shape *shape = PK_ROW_CLASS_OF(row)->shape;

	for (guint i = 0; i < shape->names->len; i++) {
		JsonNode *v = json_object_get_member(obj, shape->names->pdata[i]);
		if (v)
			fill_value(&((PkRow *)row)->values[i], v);
	}
	return row;
}

static GObject *object_to_row(JsonObject *obj)
{
	return row_new(row_type_for(&obj, 1), obj);
}

/* An array of objects as a list model of rows sharing one class. */
static GObject *array_to_store(JsonArray *arr)
{
	guint n = json_array_get_length(arr);
	g_autoptr(GPtrArray) objs = g_ptr_array_new();
	GListStore *store;
	GType type;

	for (guint i = 0; i < n; i++) {
		JsonNode *e = json_array_get_element(arr, i);
		if (JSON_NODE_HOLDS_OBJECT(e))
			g_ptr_array_add(objs, json_node_get_object(e));
	}
	type = row_type_for((JsonObject *const *)objs->pdata, objs->len);
	store = g_list_store_new(type);
	for (guint i = 0; i < objs->len; i++) {
		g_autoptr(GObject) row = row_new(type, objs->pdata[i]);
		g_list_store_append(store, row);
	}
	return G_OBJECT(store);
}

/*
 * Members that models gained after some were stored, each false in the
 * scope of an older model that lacks it: template-glib fails on a symbol
 * it does not know, and `report ID` renders stored models again.
 */
static const char *const later_flags[] = {
	"has_coverage",        /* per-file coverage (lab/coverage.h) */
	"coverage_elsewhere",
	"has_unstable",        /* boot-log changes the confirmation boots did not see again */
	"has_monitor",         /* log-monitor rules were checked (pipeline/monitor.h) */
	"has_monitor_breaks",
	"in_reply",            /* set only by reply.c: the review inside a reply mail */
	"more_changes_wrapped", /* set only by reply.c: what a long reply left out (reply.c) */
	"more_advice_wrapped",
	"more_coverage_wrapped",
	"more_findings_wrapped",
	"config_left_out_wrapped",
	"has_digest",          /* the findings grouped by cause (analysis/digest.h) */
	"has_advice",
	"nothing_built",       /* the patch did not apply: no "To reproduce" */
};

/* The model's top-level members as template variables. */
static TmplScope *scope_from_model(JsonObject *model)
{
	TmplScope *scope = tmpl_scope_new();
	g_autoptr(GList) members = json_object_get_members(model);

	for (size_t i = 0; i < G_N_ELEMENTS(later_flags); i++)
		tmpl_scope_set_boolean(scope, later_flags[i], FALSE);

	for (GList *m = members; m; m = m->next) {
		JsonNode *v = json_object_get_member(model, m->data);
		GValue value = G_VALUE_INIT;

		if (JSON_NODE_HOLDS_NULL(v)) {
			/* a NULL string: false in {{if}}, empty when printed */
			tmpl_scope_set_string(scope, m->data, NULL);
			continue;
		}
		g_value_init(&value, member_type(v));
		fill_value(&value, v);
		tmpl_scope_set_value(scope, m->data, &value);
		g_value_unset(&value);
	}
	return scope;
}

/* Whether a member's name says it holds markup (html.h's, made here): "..._html". */
static bool markup_member(const char *name)
{
	return g_str_has_suffix(name, "_html");
}

/*
 * Replace every string value under node by its HTML-escaped form, but
 * the markup members decorate() made (a stored model never holds one:
 * strip_markup() took them out first).
 */
static void escape_strings(JsonNode *node)
{
	if (JSON_NODE_HOLDS_OBJECT(node)) {
		JsonObject *obj = json_node_get_object(node);
		g_autoptr(GList) members = json_object_get_members(obj);
		for (GList *m = members; m; m = m->next)
			if (!markup_member(m->data))
				escape_strings(json_object_get_member(obj, m->data));
	} else if (JSON_NODE_HOLDS_ARRAY(node)) {
		JsonArray *arr = json_node_get_array(node);
		for (guint i = 0; i < json_array_get_length(arr); i++)
			escape_strings(json_array_get_element(arr, i));
	} else if (JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING) {
		g_autofree char *e = g_markup_escape_text(json_node_get_string(node), -1);
		json_node_set_string(node, e);
	}
}

/* Remove every "..._html" member under node: markup comes from decorate() alone, never from a model. */
static void strip_markup(JsonNode *node)
{
	if (JSON_NODE_HOLDS_OBJECT(node)) {
		JsonObject *obj = json_node_get_object(node);
		g_autoptr(GList) members = json_object_get_members(obj);
		for (GList *m = members; m; m = m->next) {
			if (markup_member(m->data))
				json_object_remove_member(obj, m->data);
			else
				strip_markup(json_object_get_member(obj, m->data));
		}
	} else if (JSON_NODE_HOLDS_ARRAY(node)) {
		JsonArray *arr = json_node_get_array(node);
		for (guint i = 0; i < json_array_get_length(arr); i++)
			strip_markup(json_array_get_element(arr, i));
	}
}

static const char *string_member(JsonObject *o, const char *name)
{
	JsonNode *v = o ? json_object_get_member(o, name) : NULL;

	return v && JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_STRING
	       ? json_node_get_string(v) : NULL;
}

static gint64 int_member(JsonObject *o, const char *name)
{
	JsonNode *v = json_object_get_member(o, name);

	return v && JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_INT64
	       ? json_node_get_int(v) : 0;
}

/*
 * The markup members of each finding and change, from their text
 * (before escaping): where_html (file:line, a link to the source line
 * when html->source_url is set) and, for console and index changes,
 * old_side_html and new_side_html, the two sides with what changed
 * between them marked (html.h).  A row's own base_commit, when it has
 * one, is the commit its source link names.
 */
static void decorate(JsonObject *model, const struct pk_review_html *html)
{
	/* history: a site's file page (report/site.c), whose rows name their own base_commit */
	static const char *const lists[] = { "findings", "console", "index", "history" };
	JsonObject *before = json_object_has_member(model, "before") &&
			     JSON_NODE_HOLDS_OBJECT(json_object_get_member(model, "before"))
			     ? json_object_get_object_member(model, "before") : NULL;
	const char *commit = string_member(before, "commit");
	const char *base = string_member(model, "base");

	for (size_t l = 0; l < G_N_ELEMENTS(lists); l++) {
		JsonNode *arr = json_object_get_member(model, lists[l]);

		for (guint i = 0; arr && JSON_NODE_HOLDS_ARRAY(arr) && i < json_array_get_length(json_node_get_array(arr)); i++) {
			JsonNode *e = json_array_get_element(json_node_get_array(arr), i);
			JsonObject *o = JSON_NODE_HOLDS_OBJECT(e) ? json_node_get_object(e) : NULL;
			g_autofree char *url = NULL, *where = NULL;
			char *old_html, *new_html;

			if (!o)
				continue;
			url = html && html->source_url
			      ? pk_html_source_url(html->source_url, string_member(o, "file"),
						   (int)int_member(o, "line"),
						   string_member(o, "base_commit") ? string_member(o, "base_commit") : commit,
						   base) : NULL;
			where = pk_html_link(url, string_member(o, "where"));
			json_object_set_string_member(o, "where_html", where);
			if (l == 0)
				continue;
			pk_html_word_diff(string_member(o, "old_side"), string_member(o, "new_side"), &old_html, &new_html);
			json_object_set_string_member(o, "old_side_html", old_html);
			json_object_set_string_member(o, "new_side_html", new_html);
			g_free(old_html);
			g_free(new_html);
		}
	}
}

/* templates/ of the data dir (pk_data_dir()). */
static char *template_dir(void)
{
	g_autofree char *dir = pk_data_dir();

	return g_build_filename(dir, "templates", NULL);
}

/* A parsed template of templates/ (its includes found there too). */
struct pk_review_tmpl {
	char *name, *path;
	TmplTemplate *tmpl;
};

void pk_review_tmpl_free(struct pk_review_tmpl *t)
{
	if (!t)
		return;
	g_free(t->name);
	g_free(t->path);
	g_clear_object(&t->tmpl);
	g_free(t);
}

/*
 * The text of templates/<name> with each {{include "NAME.html"}} replaced
 * by that template's text, one level deep.  Done here rather than by
 * template-glib's own include, whose lexer (3.36) leaks the name of every
 * include it reads.  0, or -1 with err naming the file.
 */
static int template_text(char **out, const char *dir, const char *name, bool nested, GError **err)
{
	static const char open[] = "{{include \"";
	g_autofree char *path = g_build_filename(dir, name, NULL);
	g_autofree char *text = NULL;
	g_autoptr(GString) done = NULL;
	g_autoptr(GError) e = NULL;
	const char *p, *at;

	if (!g_file_get_contents(path, &text, NULL, &e))
		return pk_error(err, PK_ERROR_FAILED, "template %s: %s", name, e->message);
	done = g_string_new(NULL);
	for (p = text; (at = strstr(p, open)); ) {
		const char *inc = at + strlen(open), *end = strstr(inc, "\"}}");
		g_autofree char *inc_name = end ? g_strndup(inc, (gsize)(end - inc)) : NULL;
		g_autofree char *inc_text = NULL;

		if (!inc_name || nested || strchr(inc_name, '/') || inc_name[0] == '.')
			return pk_error(err, PK_ERROR_FAILED, "%s: an include is a template of the same "
					"directory, one level deep", path);
		if (template_text(&inc_text, dir, inc_name, true, err) < 0)
			return -1;
		g_string_append_len(done, p, at - p);
		g_string_append(done, inc_text);
		p = end + strlen("\"}}");
	}
	g_string_append(done, p);
	*out = g_string_free(g_steal_pointer(&done), FALSE);
	return 0;
}

int pk_review_tmpl_load(struct pk_review_tmpl **out, const char *name, GError **err)
{
	g_autofree char *dir = template_dir();
	g_autofree char *text = NULL;
	struct pk_review_tmpl *t = g_new0(struct pk_review_tmpl, 1);

	t->name = g_strdup(name);
	t->path = g_build_filename(dir, name, NULL);
	if (!g_file_test(t->path, G_FILE_TEST_IS_REGULAR)) {
		pk_error(err, PK_ERROR_FAILED, "template %s not found: no file %s "
			 "(the data dir is $PRINTKBOT_DATADIR, the checkout or the installed one)",
			 name, t->path);
		pk_review_tmpl_free(t);
		return -1;
	}
	t->tmpl = tmpl_template_new(NULL);
	if (template_text(&text, dir, name, false, err) < 0 ||
	    !tmpl_template_parse_string(t->tmpl, text, err)) {
		g_prefix_error(err, "%s: ", t->path);
		pk_review_tmpl_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

char *pk_review_tmpl_render(struct pk_review_tmpl *t, JsonNode *model, const struct pk_review_html *html,
			    GError **err)
{
	g_autoptr(TmplScope) scope = NULL;
	g_autofree char *text = NULL;

	if (!model || !JSON_NODE_HOLDS_OBJECT(model)) {
		pk_error(err, PK_ERROR_INPUT, "review model is not a JSON object");
		return NULL;
	}
	if (g_str_has_suffix(t->name, ".html")) {
		/* every string the HTML template inserts is escaped, so none can add markup */
		g_autoptr(JsonNode) escaped = json_node_copy(model);
		JsonObject *o = json_node_get_object(escaped);

		strip_markup(escaped);
		decorate(o, html);
		escape_strings(escaped);
		for (const char *const *r = html && html->raw ? html->raw : NULL; r && r[0] && r[1]; r += 2)
			if (markup_member(r[0]))
				json_object_set_string_member(o, r[0], r[1]);
		scope = scope_from_model(o);
	} else {
		scope = scope_from_model(json_node_get_object(model));
	}
	text = tmpl_template_expand_string(t->tmpl, scope, err);
	if (!text)
		g_prefix_error(err, "%s: ", t->path);
	return g_steal_pointer(&text);
}

char *pk_review_render_html(JsonNode *model, const char *name, const struct pk_review_html *html,
			    GError **err)
{
	struct pk_review_tmpl *t = NULL;
	char *text;

	if (!model || !JSON_NODE_HOLDS_OBJECT(model)) {
		pk_error(err, PK_ERROR_INPUT, "review model is not a JSON object");
		return NULL;
	}
	if (pk_review_tmpl_load(&t, name, err) < 0)
		return NULL;
	text = pk_review_tmpl_render(t, model, html, err);
	pk_review_tmpl_free(t);
	return text;
}

char *pk_review_render(JsonNode *model, const char *name, GError **err)
{
	return pk_review_render_html(model, name, NULL, err);
}

char *pk_review_render_json(const char *model_json, const char *name, GError **err)
{
	g_autoptr(JsonParser) parser = json_parser_new();

	if (!json_parser_load_from_data(parser, model_json, -1, err)) {
		g_prefix_error(err, "stored review model: ");
		return NULL;
	}
	return pk_review_render(json_parser_get_root(parser), name, err);
}

/* ---- the model of one tested patch ---- */

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
	if (info->compiler)
		g_string_append_printf(s, " built with %s,", info->compiler);
	g_string_append_printf(s, " with the bot's kernel config %s.",
			       res->config_hash ? res->config_hash : info->config_hash);
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
		g_string_append_printf(s, " No x86_64 config could set %s.", (char *)res->derived.cannot->pdata[i]);
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
	g_autofree char *reproduce = info->reproduce ? g_strdup(info->reproduce)
				     : g_strdup_printf("printkbot test %s", info->source);

	json_builder_begin_object(b);
	add_str(b, "tool", "printkbot " PK_VERSION);
	add_str(b, "subject", patch->subject ? patch->subject : "(a diff without a mail)");
	add_str(b, "message_id", patch->message_id);
	add_str(b, "author", patch->author);
	add_str(b, "source", info->source);
	add_str(b, "reproduce", reproduce);
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
