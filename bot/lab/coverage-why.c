/*
 * coverage-why.c - why a touched source is not in the kernel
 * (coverage-private.h): the Kbuild line that would add its object or its
 * directory (obj-$(CONFIG_X) += name.o, obj-$(CONFIG_X) += dir/), and
 * what the build's .config says of that symbol.
 *
 * Only the common shapes are read: obj-/lib- lines, composite objects one
 * level deep (foo-y += name.o, then obj-$(CONFIG_Y) += foo.o), no ifeq
 * blocks or computed names.  Anything else gives the plain "not compiled
 * by the lab's kernel config", which is still true.
 */
#include "lab/coverage-private.h"

#include <string.h>

#include "lab/kconfig.h"
#include "base/beneath.h"
#include "base/util.h"

/* Kconfig symbols named in one reason; the rest are counted. */
#define SYMBOLS_NAMED 3

static const char plain[] = "not compiled by the tested kernel config";

/* The build's .config (kconfig.h); an empty table when the build dir has none. */
static int read_config(struct pk_build_view *v, GError **err)
{
	int have = pk_beneath_regular(v->build_dir, ".config", NULL, err);

	if (have < 0)
		return -1;
	if (!have) {
		v->config = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
		return 0;
	}
	v->config = pk_kconfig_values(v->build_dir, err);
	return v->config ? 0 : -1;
}

/*
 * The Kbuild makefile of dir ("" for the top) as Kbuild reads it (Kbuild
 * before Makefile), continuation lines joined, and its name: 1, or 0 when
 * neither is there.
 */
static int read_makefile(const struct pk_build_view *v, const char *dir, char **out_text, char **out_name,
			 GError **err)
{
	static const char *const names[] = { "Kbuild", "Makefile" };

	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *name = *dir ? g_build_filename(dir, names[i], NULL) : g_strdup(names[i]);
		g_autofree char *text = NULL;
		g_auto(GStrv) parts = NULL;
		/* a pushed commit may hold a link where a makefile belongs: the tree is read as beneath.h reads */
		int rc = pk_beneath_read_at(&text, NULL, v->tree, name, 16u << 20, err);

		if (rc < 0)
			return -1;
		if (!rc)
			continue;
		parts = g_strsplit(text, "\\\n", -1);
		*out_text = g_strjoinv(" ", parts);
		*out_name = g_steal_pointer(&name);
		return 1;
	}
	return 0;
}

/* Whether the words of rhs hold word. */
static bool words_hold(const char *rhs, const char *word)
{
	g_auto(GStrv) words = g_strsplit_set(rhs, " \t", -1);

	for (char **w = words; *w; w++)
		if (!strcmp(*w, word))
			return true;
	return false;
}

static void add_symbol(GPtrArray *syms, const char *sym)
{
	if (sym && *sym && !g_ptr_array_find_with_equal_func(syms, sym, g_str_equal, NULL))
		g_ptr_array_add(syms, g_strdup(sym));
}

/*
 * Add to syms the symbols of the lines of makefile text that add word:
 * obj-$(CONFIG_X) += ... word (lib- alike), any one of which builds it;
 * *always when an obj-y line does.  A word in a composite object's list
 * (foo-y += word, foo-$(CONFIG_Y) += word) goes by the lines that add
 * foo.o, and Y goes to needs: it is wanted besides.
 */
static void makefile_symbols(const char *text, const char *word, GPtrArray *syms, GPtrArray *needs, bool *always,
			     unsigned depth)
{
	g_autoptr(GRegex) lhs_re = g_regex_new("^(.+)-(y|objs|\\$\\(CONFIG_([A-Za-z0-9_]+)\\))$", 0, 0, NULL);
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

	for (char **l = lines; *l; l++) {
		g_autoptr(GMatchInfo) m = NULL;
		g_autofree char *lhs = NULL, *owner = NULL, *sym = NULL, *composite = NULL;
		char *eq, *hash = strchr(*l, '#');

		if (hash)
			*hash = '\0';
		if (!(eq = strchr(*l, '=')) || !words_hold(eq + 1, word))
			continue;
		lhs = g_strndup(*l, eq - *l - (eq > *l && strchr(":+?", eq[-1]) ? 1 : 0));
		g_strstrip(lhs);
		if (!g_regex_match(lhs_re, lhs, 0, &m))
			continue;
		owner = g_match_info_fetch(m, 1);
		sym = g_match_info_fetch(m, 3);
		if (!strcmp(owner, "obj") || !strcmp(owner, "lib")) {
			if (sym && *sym)
				add_symbol(syms, sym);
			else
				*always = true;
			continue;
		}
		if (depth)
			continue;
		add_symbol(needs, sym);
		composite = g_strdup_printf("%s.o", owner);
		makefile_symbols(text, composite, syms, needs, always, depth + 1);
	}
}

/* The first of syms the .config sets, with its value; NULL when it sets none. */
static const char *first_set(const struct pk_build_view *v, const GPtrArray *syms, const char **out_value)
{
	for (guint i = 0; i < syms->len; i++) {
		const char *val = g_hash_table_lookup(v->config, syms->pdata[i]);

		if (val && strcmp(val, "n")) {
			*out_value = val;
			return syms->pdata[i];
		}
	}
	return NULL;
}

/*
 * What the .config says of syms (alternatives: one set would build the
 * word) and needs (wanted besides): "CONFIG_ATA is not set", "none of
 * CONFIG_A, CONFIG_B, CONFIG_C (and 2 more) is set", "CONFIG_X=m, a
 * module, which the lab does not build".
 */
static char *symbols_state(const struct pk_build_view *v, const GPtrArray *syms, const GPtrArray *needs)
{
	const char *val = NULL, *sym = first_set(v, syms, &val);
	GString *s = g_string_new(NULL);

	if (sym && !strcmp(val, "m")) {
		g_string_printf(s, "CONFIG_%s=m, a module, which the lab does not build", sym);
	} else if (sym) {
		for (guint i = 0; i < needs->len && !s->len; i++)
			if (!g_hash_table_contains(v->config, needs->pdata[i]))
				g_string_printf(s, "CONFIG_%s is not set", (char *)needs->pdata[i]);
		if (!s->len)
			g_string_printf(s, "CONFIG_%s=%s, yet nothing compiled it", sym, val);
	} else if (syms->len == 1) {
		g_string_printf(s, "CONFIG_%s is not set", (char *)syms->pdata[0]);
	} else {
		g_string_append(s, "none of ");
		for (guint i = 0; i < syms->len && i < SYMBOLS_NAMED; i++)
			g_string_append_printf(s, "%sCONFIG_%s", i ? ", " : "", (char *)syms->pdata[i]);
		if (syms->len > SYMBOLS_NAMED)
			g_string_append_printf(s, " (and %u more)", syms->len - SYMBOLS_NAMED);
		g_string_append(s, " is set");
	}
	return g_string_free(s, FALSE);
}

/* Whether any linked object lies under dir ("drivers/ata"). */
static bool dir_linked(const struct pk_build_view *v, const char *dir)
{
	g_autofree char *prefix = g_strconcat(dir, "/", NULL);
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, v->linked);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (g_str_has_prefix(key, prefix))
			return true;
	return false;
}

/* The first directory of file's path, from the top, that nothing linked lies under; NULL when none. */
static char *first_unbuilt_dir(const struct pk_build_view *v, const char *file)
{
	for (const char *slash = strchr(file, '/'); slash; slash = strchr(slash + 1, '/')) {
		g_autofree char *dir = g_strndup(file, slash - file);

		if (!dir_linked(v, dir))
			return g_steal_pointer(&dir);
	}
	return NULL;
}

/*
 * "<plain>: <what>, CONFIG_X is not set (<makefile>)" in *out for word as
 * the Kbuild makefile of dir adds it: 1, or 0 (*out untouched) when no
 * line there adds it under a symbol (an obj-y line, or none at all).
 */
static int reason_from(struct pk_build_view *v, const char *dir, const char *word, const char *what,
		       char **out, GError **err)
{
	g_autoptr(GPtrArray) syms = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) needs = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *text = NULL, *name = NULL, *state = NULL;
	bool always = false;
	int rc;

	if ((rc = read_makefile(v, strcmp(dir, ".") ? dir : "", &text, &name, err)) <= 0)
		return rc;
	makefile_symbols(text, word, syms, needs, &always, 0);
	if (!syms->len || always)
		return 0;
	if (!v->config && read_config(v, err) < 0)
		return -1;
	state = symbols_state(v, syms, needs);
	*out = g_strdup_printf("%s: %s%s%s (%s)", plain, what ? what : "", what ? ", " : "", state, name);
	return 1;
}

/*
 * Why nothing under dir (the shallowest directory of file's path that
 * nothing linked lies under) is built: the first directory from there
 * down that its parent's makefile adds under a symbol.  Another
 * architecture's directory says so.  1 with *out set, 0 when none says.
 */
static int dir_reason(struct pk_build_view *v, const char *file, const char *dir, char **out, GError **err)
{
	g_autofree char *what = g_strdup_printf("nothing under %s/ is built", dir);

	if (g_str_has_prefix(dir, "arch/") && !strchr(dir + 5, '/')) {
		*out = g_strdup_printf("another architecture's code, which no x86_64 kernel config compiles (%s/)", dir);
		return 1;
	}
	for (const char *end = file + strlen(dir); end; end = strchr(end + 1, '/')) {
		g_autofree char *d = g_strndup(file, end - file);
		g_autofree char *parent = g_path_get_dirname(d);
		g_autofree char *base = g_path_get_basename(d);
		g_autofree char *word = g_strconcat(base, "/", NULL);
		int rc = reason_from(v, parent, word, what, out, err);

		if (rc)
			return rc;
	}
	return 0;
}

/* Whether the .cmd file of object names file as its source: compiled, then. */
static int compiled_from(const struct pk_build_view *v, const char *object, const char *file, bool *out,
			 GError **err)
{
	g_autofree char *cmd = pk_coverage_cmd_path(object);
	g_autofree char *text = NULL, *want = g_build_filename(v->tree, file, NULL);
	const char *line;
	int rc;

	*out = false;
	if ((rc = pk_coverage_read_built(v, cmd, &text, NULL, err)) <= 0)
		return rc;
	for (line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *eol = line + strcspn(line, "\n"), *p;

		if (g_str_has_prefix(line, "source_") && (p = g_strstr_len(line, eol - line, " := ")) &&
		    (gsize)(eol - p - 4) == strlen(want) && !strncmp(p + 4, want, eol - p - 4)) {
			*out = true;
			break;
		}
	}
	return 0;
}

int pk_coverage_why_not(struct pk_build_view *v, const char *file, const char *object, char **out,
			GError **err)
{
	g_autofree char *dir = NULL, *obj_dir = NULL, *base = NULL;
	bool compiled;
	int rc = 0;

	if (!object) {
		*out = g_strdup("no object of the build reads it: the lab's kernel config compiles none of "
				"the code that includes it");
		return 0;
	}
	if (compiled_from(v, object, file, &compiled, err) < 0)
		return -1;
	if (compiled) {
		*out = g_strdup_printf("compiled into %s, which is not linked into vmlinux", object);
		return 0;
	}
	obj_dir = g_path_get_dirname(object);
	base = g_path_get_basename(object);
	if ((dir = first_unbuilt_dir(v, file)))
		rc = dir_reason(v, file, dir, out, err);
	if (rc == 0)
		rc = reason_from(v, obj_dir, base, NULL, out, err);
	if (rc == 0)
		*out = dir ? g_strdup_printf("%s: nothing under %s/ is built", plain, dir) : g_strdup(plain);
	return rc < 0 ? -1 : 0;
}

/*
 * The alternatives of one makefile's lines that add word ("A|B"), and
 * each symbol a composite object also needs as a group of its own, onto
 * groups; nothing when an obj-y line adds it (or no line does).
 */
static void add_groups(const char *text, const char *word, GPtrArray *groups)
{
	g_autoptr(GPtrArray) syms = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) needs = g_ptr_array_new_with_free_func(g_free);
	bool always = false;

	makefile_symbols(text, word, syms, needs, &always, 0);
	if (syms->len && !always) {
		g_ptr_array_add(syms, NULL);
		g_ptr_array_add(groups, g_strjoinv("|", (char **)syms->pdata));
	}
	for (guint i = 0; i < needs->len; i++)
		g_ptr_array_add(groups, g_strdup(needs->pdata[i]));
}

int pk_coverage_kbuild_groups(const char *tree, const char *file, GPtrArray *groups, GError **err)
{
	struct pk_build_view v = { .tree = tree };
	g_autofree char *dir = g_path_get_dirname(file);
	g_autofree char *word = NULL;

	/*
	 * A path outside the tree adds nothing: an absolute one never climbed
	 * to "." ("/"'s dirname is "/", a loop for ever), and one through ".."
	 * would read makefiles beside the tree.
	 */
	if (!g_str_has_suffix(file, ".c") || !strcmp(dir, ".") || g_path_is_absolute(file) ||
	    !strcmp(dir, "..") || g_str_has_prefix(file, "../") || strstr(file, "/../"))
		return 0;
	/* "drivers/ata/ahci.c" is "ahci.o" to drivers/ata's makefile */
	word = g_strdup_printf("%.*s.o", (int)(strlen(file) - strlen(dir) - 3), file + strlen(dir) + 1);
	/* the object in its directory's makefile, then each directory in its parent's */
	while (strcmp(dir, ".") && strcmp(dir, "/")) {
		g_autofree char *text = NULL, *name = NULL, *parent = NULL;
		int rc = read_makefile(&v, dir, &text, &name, err);

		if (rc < 0)
			return -1;
		if (rc)
			add_groups(text, word, groups);
		g_free(word);
		word = g_strconcat(dir + (strrchr(dir, '/') ? strrchr(dir, '/') - dir + 1 : 0), "/", NULL);
		parent = g_path_get_dirname(dir);
		g_free(dir);
		dir = g_steal_pointer(&parent);
	}
	return 0;
}
