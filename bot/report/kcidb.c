/* kcidb.c - stored reviews as one KCIDB v5.3 document (kcidb.h). */
#include "report/kcidb.h"
#include "base/util.h"

#include <json-glib/json-glib.h>
#include <string.h>

#define KCIDB_MAJOR 5
#define KCIDB_MINOR 3
#define KCIDB_EXCERPT_MAX 16384     /* the schema's maxLength of a log_excerpt, in characters */
/* where the lab boots (doc/bases.md, "How a boot works") */
#define KCIDB_BOOT_ENVIRONMENT "QEMU q35, 2 vCPUs, 256 MiB, no network or disk"

struct pk_kcidb {
	char *origin;
	JsonArray *checkouts, *builds, *tests;
	GHashTable *objects;    /* id -> JsonObject* of the arrays above (borrowed): each id once */
	guint reviews;
};

bool pk_kcidb_origin_valid(const char *origin)
{
	if (!origin || !*origin)
		return false;
	for (const char *p = origin; *p; p++)
		if (!g_ascii_islower(*p) && !g_ascii_isdigit(*p) && *p != '_')
			return false;
	return true;
}

struct pk_kcidb *pk_kcidb_new(const char *origin)
{
	struct pk_kcidb *k = g_new0(struct pk_kcidb, 1);

	k->origin = g_strdup(origin);
	k->checkouts = json_array_new();
	k->builds = json_array_new();
	k->tests = json_array_new();
	k->objects = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return k;
}

void pk_kcidb_free(struct pk_kcidb *k)
{
	if (!k)
		return;
	g_free(k->origin);
	json_array_unref(k->checkouts);
	json_array_unref(k->builds);
	json_array_unref(k->tests);
	g_hash_table_unref(k->objects);
	g_free(k);
}

guint pk_kcidb_reviews(const struct pk_kcidb *k)
{
	return k->reviews;
}

/* ---- values as the schema takes them ---- */

/* s as valid UTF-8, cut to max characters (0: no cut); NULL stays NULL. */
static char *clean(const char *s, glong max)
{
	g_autofree char *valid = s ? g_utf8_make_valid(s, -1) : NULL;

	if (!valid)
		return NULL;
	if (max > 0 && g_utf8_strlen(valid, -1) > max)
		return g_utf8_substring(valid, 0, max);
	return g_steal_pointer(&valid);
}

static void set_str(JsonObject *o, const char *name, const char *value)
{
	g_autofree char *v = clean(value, 0);

	/* the schema has no nulls: a value not known is a member left out */
	if (v)
		json_object_set_string_member(o, name, v);
}

static void set_excerpt(JsonObject *o, const char *value)
{
	g_autofree char *v = clean(value, KCIDB_EXCERPT_MAX);

	if (v && *v)
		json_object_set_string_member(o, "log_excerpt", v);
}

/* RFC 3339, as KCIDB writes times: "2026-03-01T12:00:00+00:00". */
static void set_time(JsonObject *o, const char *name, gint64 unix_time)
{
	g_autoptr(GDateTime) t = unix_time > 0 ? g_date_time_new_from_unix_utc(unix_time) : NULL;
	g_autofree char *text = t ? g_date_time_format(t, "%Y-%m-%dT%H:%M:%S+00:00") : NULL;

	if (text)
		json_object_set_string_member(o, name, text);
}

static bool is_commit(const char *s)
{
	return s && strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

static char *short_commit(const char *s)
{
	return g_strndup(s ? s : "unknown", 12);
}

/* KCIDB's message_id is an address: without <>, and with an @. */
static void set_message_id(JsonObject *o, const char *mid)
{
	g_autofree char *bare = NULL;

	if (!mid)
		return;
	bare = g_strdup(mid + (*mid == '<'));
	if (*bare && bare[strlen(bare) - 1] == '>')
		bare[strlen(bare) - 1] = '\0';
	if (strchr(bare, '@') && !strpbrk(bare, " \t\r\n<>"))
		set_str(o, "message_id", bare);
}

/* A JSON object member of the model, or NULL. */
static JsonObject *model_object(JsonObject *model, const char *name)
{
	JsonNode *n = model ? json_object_get_member(model, name) : NULL;

	return n && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

static JsonArray *model_array(JsonObject *model, const char *name)
{
	JsonNode *n = model ? json_object_get_member(model, name) : NULL;

	return n && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

static const char *model_str(JsonObject *model, const char *name)
{
	JsonNode *n = model ? json_object_get_member(model, name) : NULL;

	return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING ? json_node_get_string(n)
											    : NULL;
}

static bool model_bool(JsonObject *model, const char *name)
{
	JsonNode *n = model ? json_object_get_member(model, name) : NULL;

	return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_BOOLEAN &&
	       json_node_get_boolean(n);
}

static JsonObject *parse_model(const char *text, gint64 review_id, GError **err)
{
	g_autoptr(JsonParser) p = json_parser_new();
	g_autoptr(GError) e = NULL;
	JsonNode *root;

	if (!text || !json_parser_load_from_data(p, text, -1, &e) || !(root = json_parser_get_root(p)) ||
	    !JSON_NODE_HOLDS_OBJECT(root)) {
		pk_error(err, PK_ERROR_INPUT, "review %" G_GINT64_FORMAT ": its model does not parse: %s", review_id,
			 e ? e->message : "not a JSON object");
		return NULL;
	}
	return json_object_ref(json_node_get_object(root));
}

/* The object of id in list, made with its id and origin when new: *fresh says which. */
static JsonObject *object_for(struct pk_kcidb *k, JsonArray *list, const char *id, bool *fresh)
{
	JsonObject *o = g_hash_table_lookup(k->objects, id);

	*fresh = !o;
	if (o)
		return o;
	o = json_object_new();
	json_object_set_string_member(o, "id", id);
	json_object_set_string_member(o, "origin", k->origin);
	json_array_add_object_element(list, o);   /* the array holds the reference */
	g_hash_table_insert(k->objects, g_strdup(id), o);
	return o;
}

/* ---- checkouts ---- */

/*
 * KCIDB's patchset hash: sha256 over the newline-terminated sha256 of
 * each patch, in order; NULL when a patch of the series is not kept.
 */
static char *patchset_hash(const GPtrArray *patches)
{
	g_autoptr(GString) sums = g_string_new(NULL);

	for (guint i = 0; i < patches->len; i++) {
		const struct pk_store_kcidb_patch *p = patches->pdata[i];
		g_autofree char *sum = NULL;

		if (!p->raw)
			return NULL;
		sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, p->raw, -1);
		g_string_append_printf(sums, "%s\n", sum);
	}
	return g_compute_checksum_for_string(G_CHECKSUM_SHA256, sums->str, (gssize)sums->len);
}

/* The commit the series was applied on: the first patch's before side, else this one's. */
static char *series_base(const struct pk_store_kcidb *r, JsonObject *model)
{
	g_autoptr(GError) e = NULL;
	g_autoptr(JsonObject) first = r->first_model ? parse_model(r->first_model, 0, &e) : NULL;
	const char *c = model_str(model_object(first, "before"), "commit");

	if (!is_commit(c))
		c = model_str(model_object(model, "before"), "commit");
	return is_commit(c) ? g_strdup(c) : NULL;
}

/* The checkout of the base alone, which the base's kernel was built from. */
static JsonObject *base_checkout(struct pk_kcidb *k, const char *base, JsonObject *model)
{
	g_autofree char *id = g_strdup_printf("%s:%s", k->origin, base);
	bool fresh;
	JsonObject *o = object_for(k, k->checkouts, id, &fresh);

	if (fresh) {
		g_autofree char *comment = g_strdup_printf("the base %s", model_str(model, "kernel")
							   ? model_str(model, "kernel") : base);

		json_object_set_string_member(o, "git_commit_hash", base);
		set_str(o, "git_commit_name", model_str(model, "base"));
		json_object_set_string_member(o, "patchset_hash", "");
		json_object_set_boolean_member(o, "valid", TRUE);
		set_str(o, "comment", comment);
	}
	return o;
}

/* The checkout of r's series on base (NULL: not known), with what this review says of it. */
static JsonObject *series_checkout(struct pk_kcidb *k, const struct pk_store_kcidb *r, JsonObject *model,
				   const char *base)
{
	g_autofree char *hash = patchset_hash(r->patches);
	g_autofree char *key = hash ? g_strndup(hash, 16)
				    : g_strdup_printf("series%" G_GINT64_FORMAT "-patch%" G_GINT64_FORMAT,
						      r->series_id, r->patch_id);
	g_autofree char *base_short = base ? short_commit(base) : g_strdup("nobase");
	g_autofree char *id = g_strdup_printf("%s:%s-%s", k->origin, base_short, key);
	const char *base_name = model_str(model, "base");
	bool fresh;
	JsonObject *o = object_for(k, k->checkouts, id, &fresh);
	JsonObject *misc, *one = json_object_new();
	g_autofree char *position = g_strdup_printf("%d/%d", r->number, r->total);

	if (fresh) {
		const struct pk_store_kcidb_patch *first = r->patches->len ? r->patches->pdata[0] : NULL;

		if (base)
			json_object_set_string_member(o, "git_commit_hash", base);
		set_str(o, "git_commit_name", base_name);
		/* a [tree NAME]'s branch is named NAME/BRANCH (doc/bases.md) */
		if (base_name && strchr(base_name, '/') && !strchr(strchr(base_name, '/') + 1, '/')) {
			g_autofree char *tree = g_strndup(base_name, (gsize)(strchr(base_name, '/') - base_name));

			set_str(o, "tree_name", tree);
			set_str(o, "git_repository_branch", strchr(base_name, '/') + 1);
		}
		if (hash)
			json_object_set_string_member(o, "patchset_hash", hash);
		set_message_id(o, r->cover_message_id ? r->cover_message_id : first ? first->message_id : r->message_id);
		set_str(o, "comment", r->cover_subject ? r->cover_subject : r->total > 1 ? NULL : r->subject);
		set_time(o, "start_time", r->test_created - (gint64)r->seconds);
		misc = json_object_new();
		json_object_set_array_member(misc, "reviews", json_array_new());
		json_object_set_object_member(o, "misc", misc);
	}
	/* every review of the series adds itself: which patch, its verdict, where to read it */
	set_str(one, "patch", position);
	set_str(one, "subject", r->subject);
	set_str(one, "verdict", r->verdict);
	json_object_set_int_member(one, "review_id", r->review_id);
	json_array_add_object_element(json_object_get_array_member(json_object_get_object_member(o, "misc"), "reviews"),
				      one);
	if (!g_strcmp0(r->verdict, "does-not-apply")) {
		json_object_set_boolean_member(o, "valid", FALSE);
		set_excerpt(o, r->reason);
	} else if (g_strcmp0(r->verdict, "refused") && !json_object_has_member(o, "valid")) {
		json_object_set_boolean_member(o, "valid", TRUE);
	}
	return o;
}

/* ---- builds ---- */

/* The build of b (stored) in checkout (an id), made once. */
static const char *add_build(struct pk_kcidb *k, const struct pk_store_kcidb_build *b, const char *checkout,
			     JsonObject *model, const char *comment)
{
	g_autofree char *tree = short_commit(b->tree_commit);
	g_autofree char *id = g_strdup_printf("%s:%s-%s", k->origin, tree, b->config_hash ? b->config_hash : "x");
	g_autofree char *config = g_strdup_printf("printkbot-%s", b->config_hash ? b->config_hash : "unknown");
	bool fresh;
	JsonObject *o = object_for(k, k->builds, id, &fresh), *misc;

	if (!fresh)
		return json_object_get_string_member(o, "id");
	json_object_set_string_member(o, "checkout_id", checkout);
	/* what the lab built for (lab/arch.h); a review from before there were others says none: x86_64 */
	set_str(o, "architecture", model_str(model, "arch") ? model_str(model, "arch") : "x86_64");
	set_str(o, "config_name", config);
	set_str(o, "compiler", model_str(model, "compiler"));
	json_object_set_string_member(o, "status", b->ok ? "PASS" : "FAIL");
	if (b->seconds >= 0) {
		json_object_set_double_member(o, "duration", b->seconds);
		set_time(o, "start_time", b->created - (gint64)b->seconds);
	}
	set_str(o, "comment", comment);
	if (!b->ok)
		set_excerpt(o, b->errors);
	/* a layer's log goes with the layer: a URL of nothing would mislead */
	if (b->log_path && g_path_is_absolute(b->log_path) && g_file_test(b->log_path, G_FILE_TEST_IS_REGULAR)) {
		g_autofree char *url = g_filename_to_uri(b->log_path, NULL, NULL);

		set_str(o, "log_url", url);
	}
	misc = json_object_new();
	set_str(misc, "tree_commit", b->tree_commit);
	set_str(misc, "config_hash", b->config_hash);
	json_object_set_object_member(o, "misc", misc);
	return json_object_get_string_member(o, "id");
}

/* ---- tests ---- */

static const char *boot_status(const char *status)
{
	if (!g_strcmp0(status, "ok"))
		return "PASS";
	if (!g_strcmp0(status, "panic") || !g_strcmp0(status, "timeout"))
		return "FAIL";   /* the kernel's doing: it panicked or never finished booting */
	return "MISS";       /* QEMU itself failed: the kernel is not judged */
}

static void add_boot(struct pk_kcidb *k, const struct pk_store_kcidb_boot *b, const char *build_id,
		     const struct pk_store_kcidb_build *build, const char *console_tail)
{
	g_autofree char *tree = short_commit(build->tree_commit);
	/* its time for other stores' boots of the kernel, its id for this store's in one second */
	g_autofree char *id = g_strdup_printf("%s:%s-%s-boot-%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT, k->origin, tree,
					      build->config_hash ? build->config_hash : "x", b->created, b->id);
	g_autofree char *env = g_strdup_printf(KCIDB_BOOT_ENVIRONMENT ", %s", b->accel ? b->accel : "accel unknown");
	bool fresh;
	JsonObject *o = object_for(k, k->tests, id, &fresh), *environment;
	const char *status = boot_status(b->status);

	if (!fresh)
		return;
	json_object_set_string_member(o, "build_id", build_id);
	json_object_set_string_member(o, "path", "boot");
	json_object_set_string_member(o, "status", status);
	if (b->seconds >= 0) {
		json_object_set_double_member(o, "duration", b->seconds);
		set_time(o, "start_time", b->created - (gint64)b->seconds);
	}
	environment = json_object_new();
	set_str(environment, "comment", env);
	json_object_set_object_member(o, "environment", environment);
	set_str(o, "comment", b->detail);
	if (strcmp(status, "PASS")) {
		g_autofree char *excerpt = g_strdup_printf("%s%s%s", b->detail ? b->detail : "",
							   b->detail && console_tail ? "\n" : "",
							   console_tail ? console_tail : "");

		set_excerpt(o, excerpt);
	}
}

/* The changes of one model list ("console", "index") as text: where, kind, then the lines. */
static char *changes_text(JsonArray *changes)
{
	GString *out = g_string_new(NULL);

	for (guint i = 0; changes && i < json_array_get_length(changes); i++) {
		JsonObject *c = json_array_get_object_element(changes, i);
		JsonArray *lines = model_array(c, "lines");

		g_string_append_printf(out, "%s: %s\n", model_str(c, "where") ? model_str(c, "where") : "?",
				       model_str(c, "kind") ? model_str(c, "kind") : "?");
		for (guint j = 0; lines && j < json_array_get_length(lines); j++)
			g_string_append_printf(out, "  %s\n", json_array_get_string_element(lines, j));
	}
	return g_string_free(out, FALSE);
}

/* The model's coverage as misc.coverage: file, state, reason. */
static JsonArray *coverage_of(JsonObject *model)
{
	JsonArray *cov = model_array(model, "coverage"), *out = json_array_new();

	for (guint i = 0; cov && i < json_array_get_length(cov); i++) {
		JsonObject *c = json_array_get_object_element(cov, i), *one = json_object_new();

		set_str(one, "file", model_str(c, "file"));
		set_str(one, "state", model_str(c, "state"));
		set_str(one, "reason", model_str(c, "reason"));
		json_array_add_object_element(out, one);
	}
	return out;
}

/* printk.console_diff or printk.index_diff of a patch's kernel against its parent's. */
static void add_diff(struct pk_kcidb *k, const struct pk_store_kcidb *r, JsonObject *model, const char *build_id,
		     const char *what, const char *list)
{
	g_autofree char *after = short_commit(r->after_build.tree_commit);
	g_autofree char *before = short_commit(r->before_build.tree_commit);
	g_autofree char *id = g_strdup_printf("%s:%s-%s-%s-%s", k->origin, after, before,
					      r->after_build.config_hash ? r->after_build.config_hash : "x", what);
	g_autofree char *path = g_strdup_printf("printk.%s", what);
	JsonArray *changes = model_array(model, list);
	guint n = changes ? json_array_get_length(changes) : 0;
	g_autofree char *text = changes_text(changes);
	g_autofree char *comment = g_strdup_printf("%u %s change%s against %s", n,
						   !strcmp(list, "console") ? "boot-log" : "printk index",
						   n == 1 ? "" : "s", before);
	bool fresh;
	JsonObject *o = object_for(k, k->tests, id, &fresh), *misc;

	if (!fresh)
		return;
	json_object_set_string_member(o, "build_id", build_id);
	json_object_set_string_member(o, "path", path);
	/* not-built: nothing changed, and nothing is vouched for a file no kernel compiled */
	json_object_set_string_member(o, "status", !g_strcmp0(r->verdict, "not-built") ? "SKIP" : n ? "FAIL" : "PASS");
	set_time(o, "start_time", r->test_created - (gint64)r->seconds);
	set_str(o, "comment", comment);
	set_excerpt(o, text);
	misc = json_object_new();
	json_object_set_int_member(misc, "changes", n);
	set_str(misc, "verdict", r->verdict);
	json_object_set_int_member(misc, "review_id", r->review_id);
	json_object_set_array_member(misc, "coverage", coverage_of(model));
	json_object_set_object_member(o, "misc", misc);
}

int pk_kcidb_add_review(struct pk_kcidb *k, struct pk_store *store, gint64 review_id, GError **err)
{
	g_autoptr(pk_store_kcidb) r = NULL;
	g_autoptr(JsonObject) model = NULL;
	g_autofree char *base = NULL, *patch_comment = NULL;
	JsonObject *series, *after_side;
	const char *checkout_id, *before_build = NULL, *after_build = NULL;

	if (pk_store_kcidb_review(store, review_id, &r, err) < 0 || !(model = parse_model(r->model_json, review_id, err)))
		return -1;
	after_side = model_object(model, "after");
	base = series_base(r, model);
	series = series_checkout(k, r, model, base);
	checkout_id = json_object_get_string_member(series, "id");
	patch_comment = g_strdup_printf("patch %d/%d: %s", r->number, r->total, r->subject ? r->subject : "");
	if (r->before_build.id) {
		/* the base's kernel, or the kernel of the series' patch before this one */
		bool is_base = base && !g_strcmp0(r->before_build.tree_commit, base);
		JsonObject *co = is_base ? base_checkout(k, base, model) : series;

		before_build = add_build(k, &r->before_build, json_object_get_string_member(co, "id"), model,
					 is_base ? "the base" : "an earlier patch of the series");
		if (r->before_boot.id)
			add_boot(k, &r->before_boot, before_build, &r->before_build, NULL);
	}
	if (r->after_build.id) {
		after_build = add_build(k, &r->after_build, checkout_id, model, patch_comment);
		if (r->after_boot.id)
			add_boot(k, &r->after_boot, after_build, &r->after_build, model_str(after_side, "console_tail"));
	}
	if (after_build && before_build && model_bool(model, "compared")) {
		add_diff(k, r, model, after_build, "console_diff", "console");
		add_diff(k, r, model, after_build, "index_diff", "index");
	}
	k->reviews++;
	return 0;
}

char *pk_kcidb_to_json(const struct pk_kcidb *k, bool pretty)
{
	g_autoptr(JsonObject) doc = json_object_new();
	g_autoptr(JsonNode) root = json_node_new(JSON_NODE_OBJECT);
	g_autoptr(JsonGenerator) gen = json_generator_new();
	JsonObject *version = json_object_new();

	json_object_set_int_member(version, "major", KCIDB_MAJOR);
	json_object_set_int_member(version, "minor", KCIDB_MINOR);
	json_object_set_object_member(doc, "version", version);
	json_object_set_array_member(doc, "checkouts", json_array_ref(k->checkouts));
	json_object_set_array_member(doc, "builds", json_array_ref(k->builds));
	json_object_set_array_member(doc, "tests", json_array_ref(k->tests));
	json_node_set_object(root, doc);
	json_generator_set_root(gen, root);
	json_generator_set_pretty(gen, pretty);
	return json_generator_to_data(gen, NULL);
}

char *pk_kcidb_export(struct pk_store *store, const char *origin, const GArray *review_ids, GError **err)
{
	g_autoptr(pk_kcidb) k = pk_kcidb_new(origin);

	for (guint i = 0; i < review_ids->len; i++)
		if (pk_kcidb_add_review(k, store, g_array_index(review_ids, gint64, i), err) < 0)
			return NULL;
	return pk_kcidb_to_json(k, true);
}

void pk_kcidb_config_clear(struct pk_kcidb_config *kcidb)
{
	g_free(kcidb->origin);
	g_free(kcidb->url);
	if (kcidb->token)
		memset(kcidb->token, 0, strlen(kcidb->token));
	g_free(kcidb->token);
	memset(kcidb, 0, sizeof *kcidb);
}
