/*
 * coverage.c - which touched files the build compiled in (coverage.h):
 * the archives and .cmd files of the build dir; why a file was not built
 * is coverage-why.c's, how both read the build dir coverage-view.c's.
 */
#include "lab/coverage-private.h"
#include "base/profile.h"
#include "base/beneath.h"

#include <string.h>

#include "analysis/kdiff.h"
#include "lab/policy.h"
#include "base/util.h"

/* Headers (and included .c files) named in this many objects' .cmd files are listed by name. */
#define INCLUDERS_NAMED 2

static const char *const state_names[] = {
	[PK_COVERAGE_BOOTED] = "booted",
	[PK_COVERAGE_BUILT] = "built",
	[PK_COVERAGE_NOT_BUILT] = "not-built",
};

const char *pk_coverage_state_name(enum pk_coverage_state state)
{
	return (unsigned)state < G_N_ELEMENTS(state_names) ? state_names[state] : "";
}

bool pk_coverage_state_parse(const char *name, enum pk_coverage_state *out)
{
	for (unsigned i = 0; name && i < G_N_ELEMENTS(state_names); i++)
		if (!strcmp(name, state_names[i])) {
			*out = i;
			return true;
		}
	return false;
}

struct pk_file_coverage *pk_file_coverage_new(const char *file, enum pk_coverage_state state,
					      const char *reason, bool source)
{
	struct pk_file_coverage *c = g_new0(struct pk_file_coverage, 1);

	c->file = g_strdup(file);
	c->state = state;
	c->reason = g_strdup(reason);
	c->source = source;
	return c;
}

void pk_file_coverage_free(gpointer p)
{
	struct pk_file_coverage *c = p;

	if (!c)
		return;
	g_free(c->file);
	g_free(c->reason);
	g_free(c);
}

/*
 * Add the member names of a GNU thin archive (ar T: no member is copied
 * in, each is named by its path in the "//" long-name table) to linked,
 * each mapped to archive.  0 when read, 1 when absent or not a thin
 * archive, -1 on a read error.  Hand-written: ar(1) would be a process
 * per archive and no archive library is linked in, for a magic, two
 * header fields and a list of names (ar(5)).
 */
static int read_thin_archive(struct pk_build_view *v, const char *archive, GError **err)
{
	g_autofree char *dir = g_path_get_dirname(archive);
	g_autofree char *base = g_build_filename("/", dir, NULL);
	g_autofree char *data = NULL;
	gsize len = 0, pos = 8;
	int rc;

	if ((rc = pk_coverage_read_built(v, archive, &data, &len, err)) <= 0)
		return rc < 0 ? -1 : 1;
	if (len < 8 || memcmp(data, "!<thin>\n", 8))
		return 1;
	while (pos + 60 <= len) {
		const char *h = data + pos;
		guint64 size = g_ascii_strtoull(h + 48, NULL, 10);
		const char *table = h + 60, *end;

		pos += 60;
		if (h[0] != '/' || (h[1] != ' ' && h[1] != '/' && strncmp(h, "/SYM64/", 7)))
			break;      /* a member: thin archives hold no data, and the names came first */
		if (size > len - pos)
			break;
		if (h[1] != '/') {  /* the symbol index */
			pos += size + (size & 1);
			continue;
		}
		end = table + size;
		for (const char *p = table; p < end;) {
			const char *nl = memchr(p, '\n', end - p);
			gsize n = (nl ? nl : end) - p;

			if (n > 1 && p[n - 1] == '/') {
				g_autofree char *name = g_strndup(p, n - 1);
				/* names are relative to the archive's dir: lib/lib.a lists "argv_split.o" */
				g_autofree char *full = g_canonicalize_filename(name, base);

				g_hash_table_insert(v->linked, g_strdup(full + 1), (gpointer)g_intern_string(archive));
			}
			p += n + 1;
		}
		return 0;
	}
	return 0;
}

/* The archives vmlinux links as needed: the words ending in ".a" of .vmlinux.o.cmd but vmlinux.a. */
static int read_linked_libs(struct pk_build_view *v, GError **err)
{
	g_autofree char *text = NULL;
	g_auto(GStrv) words = NULL;
	int rc;

	if ((rc = pk_coverage_read_built(v, ".vmlinux.o.cmd", &text, NULL, err)) <= 0)
		return rc;
	text[strcspn(text, "\n")] = '\0';
	words = g_strsplit_set(text, " \t", -1);
	for (char **w = words; *w; w++)
		if (g_str_has_suffix(*w, ".a") && strcmp(*w, "vmlinux.a") && !strchr(*w, '$') &&
		    read_thin_archive(v, *w, err) < 0)
			return -1;
	return 0;
}

/* Everything linked into vmlinux; v->have_archive says whether vmlinux.a or built-in.a was there. */
static int read_linked(struct pk_build_view *v, GError **err)
{
	int rc = read_thin_archive(v, "vmlinux.a", err);

	if (rc == 1)
		rc = read_thin_archive(v, "built-in.a", err);
	if (rc < 0)
		return -1;
	v->have_archive = rc == 0;
	return v->have_archive ? read_linked_libs(v, err) : 0;
}

/* A path of a .cmd file as a path of the tree ("include/linux/printk.h"), or NULL when outside it. */
static const char *tree_relative(const struct pk_build_view *v, const char *path)
{
	gsize n = strlen(v->tree);

	if (!strncmp(path, v->tree, n) && path[n] == '/')
		return path + n + 1;
	return NULL;
}

/*
 * Note in v->includers every wanted file that one object's .cmd text names
 * as its source or among its dependencies.
 */
static void scan_cmd(struct pk_build_view *v, const char *object, char *text)
{
	bool in_deps = false;

	for (char *line = text, *next; line && *line; line = next) {
		const char *rel;
		GPtrArray *objs;
		char *p;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (g_str_has_prefix(line, "deps_")) {
			in_deps = true;
			continue;
		}
		if (g_str_has_prefix(line, "source_") && (p = strstr(line, " := ")))
			line = p + 4;
		else if (!in_deps || !*line)
			continue;
		g_strstrip(line);
		if (g_str_has_suffix(line, "\\"))
			line[strlen(line) - 1] = '\0';
		g_strchomp(line);
		if (!(rel = tree_relative(v, line)) || !(objs = g_hash_table_lookup(v->includers, rel)))
			continue;
		if (!objs->len || strcmp(objs->pdata[objs->len - 1], object))
			g_ptr_array_add(objs, g_strdup(object));
	}
}

/* g_ptr_array_sort() order of char*. */
static int compare_strings(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Fill v->includers (its keys are the wanted files) from the .cmd file of every linked object. */
static int find_includers(struct pk_build_view *v, GError **err)
{
	g_autoptr(GPtrArray) objects = g_ptr_array_new();
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, v->linked);
	while (g_hash_table_iter_next(&it, &key, NULL))
		g_ptr_array_add(objects, key);
	g_ptr_array_sort(objects, compare_strings);
	for (guint i = 0; i < objects->len; i++) {
		g_autofree char *path = pk_coverage_cmd_path(objects->pdata[i]);
		g_autofree char *text = NULL;
		int rc = pk_coverage_read_built(v, path, &text, NULL, err);

		if (rc < 0)
			return -1;
		if (rc)
			scan_cmd(v, objects->pdata[i], text);
	}
	return 0;
}

/* "included by a.o and b.o", "included by a.o, b.o and 12 more objects"; caller frees. */
static char *includers_note(const GPtrArray *objs)
{
	GString *s = g_string_new("read by ");

	for (guint i = 0; i < objs->len && i < INCLUDERS_NAMED; i++)
		g_string_append_printf(s, "%s%s", i == 0 ? "" : i + 1 == objs->len ? " and " : ", ",
				       (char *)objs->pdata[i]);
	if (objs->len > INCLUDERS_NAMED)
		g_string_append_printf(s, " and %u more object%s", objs->len - INCLUDERS_NAMED,
				       objs->len - INCLUDERS_NAMED == 1 ? "" : "s");
	return g_string_free(s, FALSE);
}

/* The object a C or assembly source compiles to ("a/b.c" -> "a/b.o"), or NULL for another file. */
static char *object_of(const char *file)
{
	if (!g_str_has_suffix(file, ".c") && !g_str_has_suffix(file, ".S"))
		return NULL;
	return g_strdup_printf("%.*so", (int)strlen(file) - 1, file);
}

/* How many entries of a capture's printk index are in file. */
static unsigned index_entries_of(const struct pk_capture *cap, const char *file)
{
	unsigned n = 0;

	for (guint i = 0; cap && i < cap->index->len; i++)
		n += !g_strcmp0(((struct pk_index_entry *)cap->index->pdata[i])->file, file);
	return n;
}

/* A file the patch deletes: the kernel before it is the one to ask. */
static struct pk_file_coverage *deleted_coverage(struct pk_build_view *v, const char *file,
						 const struct pk_capture *before, bool source)
{
	unsigned n = index_entries_of(before, file);
	g_autofree char *object = object_of(file);
	g_autofree char *cmd = object ? pk_coverage_cmd_path(object) : NULL;
	g_autofree char *why = NULL;

	if (n)
		why = g_strdup_printf("deleted; the kernel before the patch had %u of its messages in its "
				      "printk index", n);
	else if (cmd && pk_beneath_regular(v->build_dir, cmd, NULL, NULL) > 0)
		why = g_strdup_printf("deleted; the build compiled it before the patch (%s is still in the "
				      "build dir)", object);
	if (why)
		return pk_file_coverage_new(file, PK_COVERAGE_BUILT, why, source);
	return pk_file_coverage_new(file, PK_COVERAGE_NOT_BUILT, "deleted, and the kernel before the patch "
				    "did not have it: none of its messages in its printk index and no object "
				    "of it in the build dir", source);
}

/* A file the build does not compile by its nature: documentation, the build system, data. */
static const char *not_code_reason(enum pk_path_kind kind)
{
	if (kind == PK_PATH_INERT)
		return "documentation: the build does not read it";
	if (kind == PK_PATH_BUILD_SYSTEM)
		return "part of the build system: it decides how the kernel is built, and is no code in it";
	return "not C: the bot tells coverage of C sources and headers only";
}

/* One file that is there after the patch. */
static int file_coverage(struct pk_build_view *v, const char *file, struct pk_file_coverage **out, GError **err)
{
	enum pk_path_kind kind = pk_path_kind(file);
	g_autofree char *object = object_of(file);
	const char *archive = object ? g_hash_table_lookup(v->linked, object) : NULL;
	GPtrArray *objs = g_hash_table_lookup(v->includers, file);
	bool source = kind == PK_PATH_C || g_str_has_suffix(file, ".S");
	g_autofree char *note = NULL, *why = NULL;

	if (!source) {
		*out = pk_file_coverage_new(file, PK_COVERAGE_NOT_BUILT, not_code_reason(kind), false);
		return 0;
	}
	if (!v->have_archive) {
		*out = pk_file_coverage_new(file, PK_COVERAGE_NOT_BUILT, "the build dir holds no vmlinux.a "
					    "(nor built-in.a), so what was linked is not known", true);
		return 0;
	}
	if (archive) {
		if (strcmp(archive, "vmlinux.a") && strcmp(archive, "built-in.a"))
			note = g_strdup_printf("in %s: linked when something uses it", archive);
		*out = pk_file_coverage_new(file, PK_COVERAGE_BUILT, note, true);
		return 0;
	}
	if (objs && objs->len) {
		note = includers_note(objs);
		*out = pk_file_coverage_new(file, PK_COVERAGE_BUILT, note, true);
		return 0;
	}
	if (pk_coverage_why_not(v, file, object, &why, err) < 0)
		return -1;
	*out = pk_file_coverage_new(file, PK_COVERAGE_NOT_BUILT, why, true);
	return 0;
}

/* Built files that printed at boot become booted (coverage is in the patch's order; deleted files never are). */
static void mark_booted(GPtrArray *coverage, const struct pk_patch *patch, const struct pk_capture *after)
{
	g_autoptr(GHashTable) printed = NULL;

	for (guint i = 0; i < coverage->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];
		struct pk_file_coverage *c = coverage->pdata[i];
		unsigned n;

		if (c->state != PK_COVERAGE_BUILT || !c->source || !f->new_path)
			continue;
		if (!printed)
			printed = pk_kdiff_records_by_file(after);
		if (!(n = GPOINTER_TO_UINT(g_hash_table_lookup(printed, c->file))))
			continue;
		c->state = PK_COVERAGE_BOOTED;
		g_free(c->reason);
		c->reason = g_strdup_printf("%u record%s of the boot came from it", n, n == 1 ? "" : "s");
	}
}

/* Whether the includers of file must be looked for: a header, or a source whose object is not linked. */
static bool wants_includers(const struct pk_build_view *v, const char *file)
{
	g_autofree char *object = object_of(file);

	if (g_str_has_suffix(file, ".h"))
		return true;
	return object && !g_hash_table_contains(v->linked, object);
}

static void build_view_clear(struct pk_build_view *v)
{
	g_hash_table_unref(v->linked);
	g_hash_table_unref(v->includers);
	if (v->config)
		g_hash_table_unref(v->config);
}

int pk_coverage_read(GPtrArray **out, const struct pk_coverage_input *in, GError **err)
{
	PK_PROFILE_SCOPE("coverage");
	/* the .cmd files name the tree as make saw it: absolute */
	g_autofree char *tree = g_canonicalize_filename(in->tree, NULL);
	struct pk_build_view v = {
		.build_dir = in->build_dir, .tree = tree,
		.linked = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
		.includers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
						   (GDestroyNotify)g_ptr_array_unref),
	};
	g_autoptr(GPtrArray) coverage = g_ptr_array_new_with_free_func(pk_file_coverage_free);
	int rc = -1;

	if (read_linked(&v, err) < 0)
		goto out;
	for (guint i = 0; i < in->patch->files->len; i++) {
		const struct pk_diff_file *f = in->patch->files->pdata[i];

		if (f->new_path && v.have_archive && wants_includers(&v, f->new_path))
			g_hash_table_insert(v.includers, g_strdup(f->new_path),
					    g_ptr_array_new_with_free_func(g_free));
	}
	if (g_hash_table_size(v.includers) && find_includers(&v, err) < 0)
		goto out;
	for (guint i = 0; i < in->patch->files->len; i++) {
		const struct pk_diff_file *f = in->patch->files->pdata[i];
		struct pk_file_coverage *c = NULL;
		const char *file = pk_diff_file_path(f);
		enum pk_path_kind kind = pk_path_kind(file);
		bool source = kind == PK_PATH_C || g_str_has_suffix(file, ".S");

		if (!f->new_path && source)
			c = deleted_coverage(&v, file, in->before, source);
		else if (file_coverage(&v, file, &c, err) < 0)
			goto out;
		g_ptr_array_add(coverage, c);
	}
	if (in->after)
		mark_booted(coverage, in->patch, in->after);
	*out = g_steal_pointer(&coverage);
	rc = 0;
out:
	build_view_clear(&v);
	return rc;
}

char *pk_coverage_not_built_list(const GPtrArray *coverage, bool reasons, unsigned *count)
{
	g_autoptr(GString) s = g_string_new(NULL);
	unsigned n = 0;

	for (guint i = 0; coverage && i < coverage->len; i++) {
		const struct pk_file_coverage *c = coverage->pdata[i];

		if (!c->source || c->state != PK_COVERAGE_NOT_BUILT)
			continue;
		g_string_append_printf(s, "%s%s", n++ ? (reasons ? "; " : ", ") : "", c->file);
		if (reasons)
			g_string_append_printf(s, " (%s)", c->reason ? c->reason : "?");
	}
	if (count)
		*count = n;
	return n ? g_string_free(g_steal_pointer(&s), FALSE) : NULL;
}

const struct pk_file_coverage *pk_coverage_built_file(const GPtrArray *coverage, const char *file)
{
	for (guint i = 0; coverage && i < coverage->len; i++) {
		const struct pk_file_coverage *c = coverage->pdata[i];

		if (c->state != PK_COVERAGE_NOT_BUILT && !strcmp(c->file, file))
			return c;
	}
	return NULL;
}

unsigned pk_coverage_built_beyond(const GPtrArray *coverage, const GPtrArray *other)
{
	unsigned n = 0;

	for (guint i = 0; coverage && i < coverage->len; i++) {
		const struct pk_file_coverage *c = coverage->pdata[i];

		n += c->source && c->state != PK_COVERAGE_NOT_BUILT && !pk_coverage_built_file(other, c->file);
	}
	return n;
}

char *pk_coverage_not_built_sentence(const GPtrArray *coverage)
{
	unsigned n;
	g_autofree char *list = pk_coverage_not_built_list(coverage, true, &n);

	if (!list)
		return NULL;
	return g_strdup_printf("%s not compiled into the kernel the bot built: %s.  %s", n == 1 ? "This file is" :
			       "These files are", list, n == 1 ? "Neither the boot log nor the printk index can "
			       "show what it prints, so only the static findings speak for it." : "Neither the "
			       "boot log nor the printk index can show what they print, so only the static "
			       "findings speak for them.");
}

enum pk_verdict pk_coverage_verdict(enum pk_verdict compared, const GPtrArray *coverage, char **out_reason)
{
	char *why;

	if (compared != PK_VERDICT_NO_VISIBLE_CHANGE || !(why = pk_coverage_not_built_sentence(coverage)))
		return compared;
	*out_reason = why;
	return PK_VERDICT_NOT_BUILT;
}
