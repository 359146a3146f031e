/*
 * render.c - render a review model (JSON) through a template-glib template
 * (render.h).
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
#include "report/render.h"

#include <gio/gio.h>
#include <string.h>
#include <tmpl-glib.h>

#include "base/util.h"
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

/* Strings models gained later, with what an older model meant by their absence. */
static const char *const later_strings[][2] = {
	/* the setup line of the arch tested on (lab/arch.h): older models were all x86_64's */
	{ "setup", "printkbot setup" },
};

/* The model's top-level members as template variables. */
static TmplScope *scope_from_model(JsonObject *model)
{
	TmplScope *scope = tmpl_scope_new();
	g_autoptr(GList) members = json_object_get_members(model);

	for (size_t i = 0; i < G_N_ELEMENTS(later_flags); i++)
		tmpl_scope_set_boolean(scope, later_flags[i], FALSE);
	for (size_t i = 0; i < G_N_ELEMENTS(later_strings); i++)
		tmpl_scope_set_string(scope, later_strings[i][0], later_strings[i][1]);

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
