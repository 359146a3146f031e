/* tree.c - pr_fmt(), KBUILD_MODNAME and message prefixes from a kernel tree; see tree.h. */
#include "analysis/tree.h"
#include "analysis/fold.h"
#include "base/util.h"

#include <string.h>

/* How deep #include chains, includer chains and macros are followed. */
#define MAX_DEPTH 4

/* What one Kbuild makefile says about the objects of its directory. */
struct makefile {
	GHashTable *objs;       /* "foo.o" or "sub/foo.o" named by obj-* or lib-* */
	GPtrArray *patterns;    /* GPatternSpec*: obj-y += head$(BITS).o as "head*.o" */
	GHashTable *composite;  /* member "a.o" -> composite name "foo" (foo-y += a.o) */
	char *text;             /* continuation lines joined, comments dropped */
};

struct pk_tree {
	char *dir;
	GHashTable *texts;      /* path -> char* text, NULL value for a missing file */
	GHashTable *makefiles;  /* directory ("" for the top) -> struct makefile* */
	GHashTable *includers;  /* directory -> GHashTable: included path -> GPtrArray of paths */
};

/* The regular expressions, compiled once: GRegex matching is thread-safe. */
static struct {
	GRegex *assign;         /* a makefile variable assignment */
	GRegex *directive;      /* #define pr_fmt( or #include "..." */
	GRegex *include;        /* #include "..." */
	GRegex *pr_fmt;         /* #define pr_fmt(p) body */
	GRegex *comment;        /* a makefile comment */
	GRegex *var;            /* a makefile variable reference */
} re;

/*
 * Raw bytes where PCRE's JIT runs (G_REGEX_OPTIMIZE): it crashes on
 * invalid UTF-8 in UTF-8 mode, and kernel sources and makefiles need not
 * be UTF-8 (a Latin-1 copyright line is enough).
 */
static void regexes_init(void)
{
	static gsize once;

	if (!g_once_init_enter(&once))
		return;
	re.assign = g_regex_new("^[ \\t]*([A-Za-z0-9_.,/-]+?)-(y|m|objs|\\$\\([^=]*\\))[ \\t]*[:+?]?=(.*)$",
				G_REGEX_MULTILINE | pk_regex_optimize() | G_REGEX_RAW, 0, NULL);
	re.directive = g_regex_new("^[ \\t]*#[ \\t]*(?:define[ \\t]+pr_fmt[ \\t]*\\(|include[ \\t]*\"([^\"]+)\")",
				   G_REGEX_MULTILINE | pk_regex_optimize() | G_REGEX_RAW, 0, NULL);
	re.include = g_regex_new("^[ \\t]*#[ \\t]*include[ \\t]*\"([^\"]+)\"",
				 G_REGEX_MULTILINE | pk_regex_optimize() | G_REGEX_RAW, 0, NULL);
	re.pr_fmt = g_regex_new("^\\s*#\\s*define\\s+pr_fmt\\s*\\(\\s*(\\w+)\\s*\\)\\s*(.*?)\\s*$", 0, 0, NULL);
	re.comment = g_regex_new("#[^\\n]*", pk_regex_optimize() | G_REGEX_RAW, 0, NULL);
	re.var = g_regex_new("\\$\\([^)]*\\)", 0, 0, NULL);
	g_once_init_leave(&once, 1);
}

static void makefile_free(gpointer p)
{
	struct makefile *mk = p;

	if (!mk)
		return;
	g_hash_table_unref(mk->objs);
	g_ptr_array_unref(mk->patterns);
	g_hash_table_unref(mk->composite);
	g_free(mk->text);
	g_free(mk);
}

int pk_tree_open(struct pk_tree **out, const char *dir, GError **err)
{
	g_autofree char *mk = g_build_filename(dir, "Makefile", NULL);
	g_autofree char *scripts = g_build_filename(dir, "scripts", NULL);
	struct pk_tree *t;

	if (!g_file_test(mk, G_FILE_TEST_IS_REGULAR) || !g_file_test(scripts, G_FILE_TEST_IS_DIR))
		return pk_error(err, PK_ERROR_INPUT, "'%s' is not a kernel source tree", dir);
	regexes_init();
	t = g_new0(struct pk_tree, 1);
	t->dir = g_canonicalize_filename(dir, NULL);
	t->texts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	t->makefiles = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, makefile_free);
	t->includers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					     (GDestroyNotify)g_hash_table_unref);
	*out = t;
	return 0;
}

void pk_tree_free(struct pk_tree *t)
{
	if (!t)
		return;
	g_free(t->dir);
	g_hash_table_unref(t->texts);
	g_hash_table_unref(t->makefiles);
	g_hash_table_unref(t->includers);
	g_free(t);
}

const char *pk_tree_dir(const struct pk_tree *t)
{
	return t->dir;
}

const char *pk_tree_read(struct pk_tree *t, const char *path)
{
	g_autofree char *full = NULL;
	gpointer text;

	if (g_hash_table_lookup_extended(t->texts, path, NULL, &text))
		return text;
	full = g_build_filename(t->dir, path, NULL);
	if (!g_file_get_contents(full, (char **)&text, NULL, NULL))
		text = NULL;
	g_hash_table_insert(t->texts, g_strdup(path), text);
	return text;
}

/* The directory part of a tree path: "" for a file at the top. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? g_strndup(path, slash - path) : g_strdup("");
}

/* dir + "/" + name with "." and ".." folded; NULL when it leaves the tree. */
static char *join_path(const char *dir, const char *name)
{
	g_autofree char *joined = *dir ? g_strconcat(dir, "/", name, NULL) : g_strdup(name);
	g_auto(GStrv) parts = g_strsplit(joined, "/", -1);
	g_autoptr(GPtrArray) keep = g_ptr_array_new();

	for (int i = 0; parts[i]; i++) {
		if (!*parts[i] || !strcmp(parts[i], "."))
			continue;
		if (!strcmp(parts[i], "..")) {
			if (!keep->len)
				return NULL;
			g_ptr_array_remove_index(keep, keep->len - 1);
			continue;
		}
		g_ptr_array_add(keep, parts[i]);
	}
	g_ptr_array_add(keep, NULL);
	return g_strjoinv("/", (char **)keep->pdata);
}

/* Names that end in -y or -objs without being composite objects. */
static gboolean not_composite(const char *name)
{
	static const char *const names[] = {
		"obj", "lib", "ccflags", "asflags", "ldflags", "cflags", "subdir",
		"subdir-ccflags", "subdir-asflags", "always", "extra", "hostprogs",
		"targets", "userprogs", "clean", "no-clean", "header-test", "dtb", "dtbo",
		"userccflags", "userldflags", "hostccflags",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
		if (!strcmp(name, names[i]))
			return TRUE;
	return FALSE;
}

/*
 * Append the objects word stands for: itself, or the words of the variable
 * it names ($(mmu-y) is every mmu-* assignment, conditionals taken as set).
 */
static void expand_word(GHashTable *vars, const char *word, GPtrArray *out, int depth)
{
	size_t n = strlen(word);

	if (g_str_has_prefix(word, "$(") && word[n - 1] == ')' && depth < MAX_DEPTH) {
		g_autofree char *var = g_strndup(word + 2, n - 3);
		char *dash = strrchr(var, '-');
		GPtrArray *words;

		if (dash && (!strcmp(dash, "-y") || !strcmp(dash, "-m") || !strcmp(dash, "-objs")))
			*dash = '\0';
		if ((words = g_hash_table_lookup(vars, var)))
			for (guint i = 0; i < words->len; i++)
				expand_word(vars, words->pdata[i], out, depth + 1);
		return;
	}
	if (g_str_has_suffix(word, ".o"))
		g_ptr_array_add(out, (gpointer)word);
}

/* Whether a makefile names obj (exactly, or through a $(VAR) pattern). */
static gboolean makefile_has(const struct makefile *mk, const char *obj)
{
	if (g_hash_table_contains(mk->objs, obj))
		return TRUE;
	for (guint i = 0; i < mk->patterns->len; i++)
		if (g_pattern_spec_match_string(mk->patterns->pdata[i], obj))
			return TRUE;
	return FALSE;
}

/*
 * Parse a Kbuild makefile: continuation lines joined, comments dropped,
 * every stem-y / stem-$(CONFIG_X) / stem-objs assignment gathered under its
 * stem, $(stem-y) references expanded.  obj-* and lib-* give the objects;
 * another stem is a composite object when stem.o is one of them (a stem
 * that is not, like mm's mmu-y, is only a list the makefile reuses).
 */
static struct makefile *makefile_parse(const char *text)
{
	struct makefile *mk = g_new0(struct makefile, 1);
	g_autofree char *nocomment = g_regex_replace_literal(re.comment, text, -1, 0, "", 0, NULL);
	char *joined;
	g_autoptr(GMatchInfo) m = NULL;
	g_autoptr(GHashTable) vars = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
							    (GDestroyNotify)g_ptr_array_unref);
	g_autoptr(GPtrArray) stems = g_ptr_array_new();     /* in makefile order */

	mk->objs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	mk->patterns = g_ptr_array_new_with_free_func((GDestroyNotify)g_pattern_spec_free);
	mk->composite = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	{
		g_auto(GStrv) parts = g_strsplit(nocomment ? nocomment : text, "\\\n", -1);
		joined = mk->text = g_strjoinv(" ", parts);
	}
	for (g_regex_match(re.assign, joined, 0, &m); g_match_info_matches(m); g_match_info_next(m, NULL)) {
		g_autofree char *stem = g_match_info_fetch(m, 1), *v = g_match_info_fetch(m, 3);
		g_auto(GStrv) words = g_strsplit_set(v, " \t", -1);
		GPtrArray *list;

		if (strcmp(stem, "obj") && strcmp(stem, "lib") && not_composite(stem))
			continue;
		if (!(list = g_hash_table_lookup(vars, stem))) {
			char *k = g_strdup(stem);
			list = g_ptr_array_new_with_free_func(g_free);
			g_hash_table_insert(vars, k, list);
			g_ptr_array_add(stems, k);   /* owned by vars */
		}
		for (int i = 0; words[i]; i++)
			if (*words[i])
				g_ptr_array_add(list, g_strdup(words[i]));
	}
	for (const char *const *o = (const char *const[]){ "$(obj-y)", "$(lib-y)", NULL }; *o; o++) {
		g_autoptr(GPtrArray) objs = g_ptr_array_new();
		expand_word(vars, *o, objs, 0);
		for (guint i = 0; i < objs->len; i++) {
			const char *w = objs->pdata[i];
			if (!strstr(w, "$(")) {
				g_hash_table_add(mk->objs, g_strdup(w));
				continue;
			}
			g_autofree char *glob = g_regex_replace_literal(re.var, w, -1, 0, "*", 0, NULL);
			g_ptr_array_add(mk->patterns, g_pattern_spec_new(glob));
		}
	}
	for (guint i = 0; i < stems->len; i++) {
		const char *stem = stems->pdata[i];
		g_autofree char *obj = g_strconcat(stem, ".o", NULL);
		g_autofree char *ref = g_strconcat("$(", stem, "-y)", NULL);
		g_autoptr(GPtrArray) members = g_ptr_array_new();

		if (!strcmp(stem, "obj") || !strcmp(stem, "lib") || !makefile_has(mk, obj))
			continue;
		expand_word(vars, ref, members, 0);
		for (guint j = 0; j < members->len; j++)
			if (!g_hash_table_contains(mk->composite, members->pdata[j]))
				g_hash_table_insert(mk->composite, g_strdup(members->pdata[j]), g_strdup(stem));
	}
	return mk;
}

/* The makefile of a directory (its Kbuild file first, as Kbuild reads), or NULL. */
static struct makefile *makefile_of(struct pk_tree *t, const char *dir)
{
	struct makefile *mk;
	const char *text;
	gpointer v;

	if (g_hash_table_lookup_extended(t->makefiles, dir, NULL, &v))
		return v;
	g_autofree char *kbuild = join_path(dir, "Kbuild"), *makefile = join_path(dir, "Makefile");
	text = kbuild ? pk_tree_read(t, kbuild) : NULL;
	if (!text && makefile)
		text = pk_tree_read(t, makefile);
	mk = text ? makefile_parse(text) : NULL;
	/* a NULL value is kept too: a directory without a makefile is asked once */
	g_hash_table_insert(t->makefiles, g_strdup(dir), mk);
	return mk;
}

/*
 * Whether obj is a word of the makefile at all: a target or a list that
 * some rule uses (targets += $(vobjs-y), $(obj)/foo.o: ...).  Kbuild names
 * such an object after itself.
 */
static gboolean makefile_mentions(const struct makefile *mk, const char *obj)
{
	size_t n = strlen(obj);

	for (const char *p = mk->text; (p = strstr(p, obj)); p += n) {
		char before = p == mk->text ? ' ' : p[-1], after = p[n];
		if ((g_ascii_isspace(before) || before == '/') &&
		    (!after || g_ascii_isspace(after) || after == ':'))
			return TRUE;
	}
	return FALSE;
}

/* Kbuild's name-fix: KBUILD_MODNAME has '_' for '-' and ','. */
static char *name_fix(const char *name)
{
	char *s = g_strdup(name);

	g_strdelimit(s, "-,", '_');
	return s;
}

/*
 * The KBUILD_MODNAME of a .c file that a makefile builds: its own directory's
 * makefile, else a parent's that names it as "sub/foo.o".  NULL when none does.
 */
static char *modname_of(struct pk_tree *t, const char *unit)
{
	g_autofree char *dir = dir_of(unit);
	const char *base = strrchr(unit, '/') ? strrchr(unit, '/') + 1 : unit;
	const char *dot = strrchr(base, '.');
	g_autofree char *obj = g_strdup_printf("%.*s.o", (int)(dot ? dot - base : (long)strlen(base)), base);

	for (int up = 0; up < MAX_DEPTH; up++) {
		struct makefile *mk = makefile_of(t, dir);
		const char *comp = mk ? g_hash_table_lookup(mk->composite, obj) : NULL;

		if (comp)
			return name_fix(comp);
		if (mk && (makefile_has(mk, obj) || makefile_mentions(mk, obj))) {
			const char *b = strrchr(obj, '/') ? strrchr(obj, '/') + 1 : obj;
			g_autofree char *stem = g_strndup(b, strlen(b) - 2);
			return name_fix(stem);
		}
		if (!*dir)
			break;
		/* "kernel/sched" + "x.o" -> "kernel" + "sched/x.o" */
		const char *slash = strrchr(dir, '/');
		char *next_obj = g_strconcat(slash ? slash + 1 : dir, "/", obj, NULL);
		g_free(obj);
		obj = next_obj;
		dir[slash ? slash - dir : 0] = '\0';
	}
	return NULL;
}

/* The local #include "..." targets of a text, resolved as tree paths. */
static GPtrArray *local_includes(const char *path, const char *text)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *dir = dir_of(path);
	g_autoptr(GMatchInfo) m = NULL;

	for (g_regex_match(re.include, text, 0, &m); g_match_info_matches(m); g_match_info_next(m, NULL)) {
		g_autofree char *name = g_match_info_fetch(m, 1);
		char *p = join_path(dir, name);
		if (p)
			g_ptr_array_add(out, p);
	}
	return out;
}

/* Which files of dir #include each path: built once per directory. */
static GHashTable *includers_of(struct pk_tree *t, const char *dir)
{
	GHashTable *map = g_hash_table_lookup(t->includers, dir);
	g_autofree char *full = NULL;
	GDir *d;
	const char *name;

	if (map)
		return map;
	map = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
	full = g_build_filename(t->dir, dir, NULL);
	if ((d = g_dir_open(full, 0, NULL))) {
		while ((name = g_dir_read_name(d))) {
			if (!g_str_has_suffix(name, ".c") && !g_str_has_suffix(name, ".h"))
				continue;
			g_autofree char *path = join_path(dir, name);
			const char *text = path ? pk_tree_read(t, path) : NULL;
			if (!text || !strstr(text, "#include \""))
				continue;
			g_autoptr(GPtrArray) incs = local_includes(path, text);
			for (guint i = 0; i < incs->len; i++) {
				GPtrArray *who = g_hash_table_lookup(map, incs->pdata[i]);
				if (!who) {
					who = g_ptr_array_new_with_free_func(g_free);
					g_hash_table_insert(map, g_strdup(incs->pdata[i]), who);
				}
				g_ptr_array_add(who, g_strdup(path));
			}
		}
		g_dir_close(d);
	}
	g_hash_table_insert(t->includers, g_strdup(dir), map);
	return map;
}

/*
 * The chain from path to its translation unit: path itself when a makefile
 * builds it, else path, its one includer in the same directory, and so on
 * upwards to a built .c file (*modname is then its KBUILD_MODNAME).  NULL
 * when there is no such chain: no includer, or several.
 */
static GPtrArray *unit_chain(struct pk_tree *t, const char *path, char **modname)
{
	g_autoptr(GPtrArray) chain = g_ptr_array_new_with_free_func(g_free);

	g_ptr_array_add(chain, g_strdup(path));
	for (int depth = 0; depth < MAX_DEPTH; depth++) {
		const char *cur = chain->pdata[chain->len - 1];
		g_autofree char *dir = dir_of(cur);
		GPtrArray *who;

		if (g_str_has_suffix(cur, ".c") && (*modname = modname_of(t, cur)))
			return g_steal_pointer(&chain);
		who = g_hash_table_lookup(includers_of(t, dir), cur);
		if (!who || who->len != 1)
			break;
		g_ptr_array_add(chain, g_strdup(who->pdata[0]));
	}
	*modname = NULL;
	return NULL;
}

char *pk_tree_pr_fmt_body(const char *line)
{
	g_autoptr(GMatchInfo) m = NULL;

	regexes_init();
	if (!strstr(line, "pr_fmt") || !g_regex_match(re.pr_fmt, line, 0, &m))
		return NULL;
	g_autofree char *param = g_match_info_fetch(m, 1), *body = g_match_info_fetch(m, 2);
	g_autofree char *pat = g_strdup_printf("\\b%s\\b", param);
	g_autoptr(GRegex) rename = g_regex_new(pat, 0, 0, NULL);
	return rename ? g_regex_replace_literal(rename, body, -1, 0, "fmt", 0, NULL) : NULL;
}

/* What the pr_fmt() search found. */
struct fmt_search {
	char *body;             /* the definition in effect */
	char *file;             /* where it is */
	GPtrArray *scope;       /* char*: every file read, for macros */
	GHashTable *seen;
};

enum { FMT_NONE, FMT_FOUND, FMT_STOPPED };

/*
 * Look through text (the file path) for the first pr_fmt() definition,
 * following its local headers; stop (FMT_STOPPED) at the line that
 * #includes stop, when stop is not NULL.
 */
static int find_pr_fmt(struct pk_tree *t, struct fmt_search *s, const char *path, const char *text,
		       const char *stop, int depth)
{
	g_autoptr(GMatchInfo) m = NULL;
	g_autofree char *dir = dir_of(path);

	g_ptr_array_add(s->scope, g_strdup(path));
	g_hash_table_add(s->seen, g_strdup(path));
	if (!text)
		return FMT_NONE;
	for (g_regex_match(re.directive, text, 0, &m); g_match_info_matches(m); g_match_info_next(m, NULL)) {
		g_autofree char *name = g_match_info_fetch(m, 1);
		int start, end;

		if (!name || !*name) {
			g_match_info_fetch_pos(m, 0, &start, &end);
			const char *nl = strchr(text + start, '\n');
			g_autofree char *line = nl ? g_strndup(text + start, nl - text - start) : g_strdup(text + start);
			if ((s->body = pk_tree_pr_fmt_body(line))) {
				s->file = g_strdup(path);
				return FMT_FOUND;
			}
			continue;
		}
		g_autofree char *inc = join_path(dir, name);
		if (!inc)
			continue;
		if (stop && !strcmp(inc, stop))
			return FMT_STOPPED;
		if (depth >= MAX_DEPTH || g_hash_table_contains(s->seen, inc) ||
		    (g_str_has_suffix(inc, ".c") && !stop))
			continue;
		if (find_pr_fmt(t, s, inc, pk_tree_read(t, inc), NULL, depth + 1) == FMT_FOUND)
			return FMT_FOUND;
	}
	return FMT_NONE;
}

/* The value of a "#define name value" in one of the scope's files, or NULL. */
static char *macro_value(struct pk_tree *t, const GPtrArray *scope, const char *self,
			 const char *self_text, const char *name)
{
	g_autofree char *pat = g_strdup_printf("^[ \\t]*#[ \\t]*define[ \\t]+%s[ \\t]+(.*?)[ \\t]*$", name);
	g_autoptr(GRegex) def = g_regex_new(pat, G_REGEX_MULTILINE, 0, NULL);

	for (guint i = 0; def && i < scope->len; i++) {
		const char *path = scope->pdata[i];
		const char *text = self_text && !strcmp(path, self) ? self_text :
				   t ? pk_tree_read(t, path) : NULL;
		g_autoptr(GMatchInfo) m = NULL;

		if (text && strstr(text, name) && g_regex_match(def, text, 0, &m))
			return g_match_info_fetch(m, 1);
	}
	return NULL;
}

/* What evaluating a pr_fmt() body needs. */
struct eval_ctx {
	struct pk_tree *tree;
	const GPtrArray *scope;
	const char *path, *text;   /* the described file and its text */
	struct pk_fold_env env;    /* KBUILD_MODNAME, KBUILD_BASENAME (the unit's, name-fixed) */
};

/*
 * Append to out what body prints before the message: string literals as
 * written, the names fold.h knows and string macros expanded, up to "fmt".
 * FALSE when a token cannot be resolved; *done says "fmt" was reached.
 */
static gboolean eval_prefix(const struct eval_ctx *x, const char *body, GString *out, gboolean *done,
			    int depth)
{
	const char *p = body;

	while (*p && !*done) {
		if (g_ascii_isspace(*p)) {
			p++;
		} else if (*p == '"') {
			if (!(p = pk_fold_literal(p, out)))
				return FALSE;   /* unterminated: not a prefix we can trust */
		} else if (g_ascii_isalpha(*p) || *p == '_') {
			const char *q = p;
			while (g_ascii_isalnum(*q) || *q == '_')
				q++;
			g_autofree char *word = g_strndup(p, q - p);
			p = q;
			const char *v;
			if (!strcmp(word, "fmt")) {
				*done = TRUE;
			} else if ((v = pk_fold_name(&x->env, word, strlen(word)))) {
				g_string_append(out, v);
			} else {
				g_autofree char *value = depth < MAX_DEPTH ?
					macro_value(x->tree, x->scope, x->path, x->text, word) : NULL;
				if (!value || !eval_prefix(x, value, out, done, depth + 1))
					return FALSE;
			}
		} else {
			return FALSE;   /* an expression before fmt: not a plain prefix */
		}
	}
	return TRUE;
}

/* The .c files text #includes locally that define no pr_fmt() of their own. */
static GPtrArray *inheriting_includes(struct pk_tree *t, const char *path, const char *text)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) incs = text ? local_includes(path, text) : NULL;

	for (guint i = 0; incs && i < incs->len; i++) {
		const char *inc = incs->pdata[i], *itext;
		if (!g_str_has_suffix(inc, ".c") || !(itext = pk_tree_read(t, inc)))
			continue;
		g_autoptr(GMatchInfo) m = NULL;
		gboolean own = FALSE;
		for (g_regex_match(re.directive, itext, 0, &m); g_match_info_matches(m) && !own;
		     g_match_info_next(m, NULL)) {
			g_autofree char *name = g_match_info_fetch(m, 1);
			own = !name || !*name;
		}
		if (!own)
			g_ptr_array_add(out, g_strdup(inc));
	}
	return out;
}

/*
 * The arguments a body passes after its fmt ("\"%s: \" fmt, __func__" gives
 * {"__func__"}), as written: split at the commas outside brackets and
 * literals.  A new array (g_ptr_array_unref()), empty when there are none.
 */
static GPtrArray *body_args(const char *body)
{
	GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
	const char *p = body, *start = NULL;
	int depth = 0;

	for (; *p; p++) {
		if (*p == '"' || *p == '\'') {
			char q = *p;
			while (p[1] && p[1] != q)
				p += p[1] == '\\' && p[2] ? 2 : 1;
			if (p[1])
				p++;
		} else if (!start && !strncmp(p, "fmt", 3) && !(g_ascii_isalnum(p[3]) || p[3] == '_') &&
			   (p == body || !(g_ascii_isalnum(p[-1]) || p[-1] == '_'))) {
			p += 2;
			while (p[1] && g_ascii_isspace(p[1]))
				p++;
			if (p[1] != ',')
				break;  /* "fmt" ends the body: no arguments */
			start = p += 2;
			p--;
		} else if (start && (*p == '(' || *p == '[' || *p == '{')) {
			depth++;
		} else if (start && (*p == ')' || *p == ']' || *p == '}')) {
			depth--;
		} else if (start && *p == ',' && !depth) {
			g_ptr_array_add(args, g_strstrip(g_strndup(start, p - start)));
			start = p + 1;
		}
	}
	if (start && *start)
		g_ptr_array_add(args, g_strstrip(g_strdup(start)));
	return args;
}

/*
 * What body prints before the message in x's file: eval_prefix()'s text,
 * then its conversions folded with the arguments after fmt (fold.h); the
 * arguments of those that stay (__func__: known only per call) in
 * *out_args when out_args is not NULL, NULL for none.  NULL when unresolved.
 */
static char *eval_body(const struct eval_ctx *x, const char *body, char ***out_args)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GPtrArray) args = NULL;
	g_auto(GStrv) left = NULL;
	gboolean done = FALSE;
	char *prefix;

	if (!eval_prefix(x, body, out, &done, 0))
		return NULL;
	args = body_args(body);
	prefix = pk_fold_format(out->str, (const char *const *)args->pdata, args->len, &x->env, &left);
	if (out_args)
		*out_args = left[0] ? g_steal_pointer(&left) : NULL;
	return prefix;
}

/* The prefix body prints in f, self_text being f's text; NULL when unresolved. */
static char *eval_in(struct pk_tree *t, const struct pk_tree_file *f, const char *self_text,
		     const char *body, char ***out_args)
{
	g_autofree char *base = NULL;

	if (f->unit) {
		const char *b = strrchr(f->unit, '/') ? strrchr(f->unit, '/') + 1 : f->unit;
		g_autofree char *stem = g_strndup(b, strcspn(b, "."));
		base = name_fix(stem);
	}
	struct eval_ctx x = { t, f->scope, f->path, self_text, { NULL, f->modname, base } };
	return eval_body(&x, body, out_args);
}

char *pk_tree_eval_prefix(struct pk_tree *t, const struct pk_tree_file *f, const char *body,
			  char ***out_args)
{
	return eval_in(t, f, NULL, body, out_args);
}

char *pk_tree_guess_modname(const char *path)
{
	const char *base;

	if (!path)
		return NULL;
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (!g_str_has_suffix(base, ".c"))
		return NULL;
	g_autofree char *stem = g_strndup(base, strcspn(base, "."));
	return name_fix(stem);
}

char *pk_tree_guess_prefix(const char *path, const char *text, const char *body, char ***out_args)
{
	g_autofree char *modname = pk_tree_guess_modname(path);
	g_autoptr(GPtrArray) scope = g_ptr_array_new();

	if (!path)
		return NULL;   /* a "diff --git" line alone names no file; found by fuzz-scan */
	g_ptr_array_add(scope, (gpointer)path);
	struct eval_ctx x = { NULL, scope, path, text, { NULL, modname, modname } };
	return eval_body(&x, body, out_args);
}

/* path relative to the tree, "." and ".." folded; NULL when it is outside. */
static char *tree_path(const struct pk_tree *t, const char *path)
{
	size_t n = strlen(t->dir);

	if (g_path_is_absolute(path)) {
		while (n > 1 && t->dir[n - 1] == '/')
			n--;
		if (strncmp(path, t->dir, n) || path[n] != '/')
			return NULL;
		path += n + 1;
	}
	return join_path("", path);
}

struct pk_tree_file *pk_tree_describe(struct pk_tree *t, const char *asked, const char *text)
{
	struct pk_tree_file *f = g_new0(struct pk_tree_file, 1);
	struct fmt_search s = { 0 };
	g_autoptr(GPtrArray) chain = NULL;
	g_autofree char *path = tree_path(t, asked);
	int found;

	if (!path || !*path) {
		/* outside the tree: nothing is known, not even that no pr_fmt() applies */
		f->path = g_strdup(asked);
		f->includes = g_ptr_array_new_with_free_func(g_free);
		f->scope = g_ptr_array_new_with_free_func(g_free);
		return f;
	}
	s.scope = g_ptr_array_new_with_free_func(g_free);
	s.seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (!text)
		text = pk_tree_read(t, path);
	f->path = g_strdup(path);
	if ((chain = unit_chain(t, path, &f->modname)))
		f->unit = g_strdup(chain->pdata[chain->len - 1]);
	found = find_pr_fmt(t, &s, path, text, NULL, 0);
	/* else each includer's definitions, up to its #include of the file before it */
	for (guint i = 1; chain && found != FMT_FOUND && i < chain->len; i++)
		found = find_pr_fmt(t, &s, chain->pdata[i], pk_tree_read(t, chain->pdata[i]),
				    chain->pdata[i - 1], 0);
	f->scope = g_steal_pointer(&s.scope);
	if (found == FMT_FOUND) {
		f->pr_fmt = g_steal_pointer(&s.body);
		f->pr_fmt_file = g_steal_pointer(&s.file);
		f->prefix = eval_in(t, f, text, f->pr_fmt, &f->prefix_args);
	} else {
		f->prefix = g_strdup("");
	}
	f->includes = inheriting_includes(t, path, text);
	g_hash_table_unref(s.seen);
	return f;
}

void pk_tree_file_free(struct pk_tree_file *f)
{
	if (!f)
		return;
	g_free(f->path);
	g_free(f->unit);
	g_free(f->modname);
	g_free(f->pr_fmt);
	g_free(f->pr_fmt_file);
	g_free(f->prefix);
	g_strfreev(f->prefix_args);
	if (f->includes)
		g_ptr_array_unref(f->includes);
	if (f->scope)
		g_ptr_array_unref(f->scope);
	g_free(f);
}
