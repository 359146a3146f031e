/* derive.c - a kernel config per patch; see derive.h. */
#include "lab/derive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "lab/build.h"
#include "lab/coverage.h"
#include "lab/kconfig.h"
#include "lab/layer.h"
#include "lab/repo.h"
#include "lab/state.h"
#include "base/beneath.h"
#include "base/proc.h"
#include "base/util.h"

/*
 * Where the solver writes its answer: the lab's build dir, the one place
 * its sandbox may write, so read back as beneath.h reads and checked
 * against what it was asked (valid_answer()) before anything uses it.
 */
#define SOLVE_OUT ".printkbot-solve"
#define ANSWER_CAP (1u << 20)
/*
 * Where the bot keeps the answers, one file each, named by solve_key():
 * under the cache, out of every sandbox's reach, so that no build can
 * plant the answer a later question gets.
 */
#define ANSWERS_DIR "kconfig-answers"

void pk_derived_clear(struct pk_derived *d)
{
	g_free(d->lines);
	g_free(d->devices);
	if (d->asked)
		g_ptr_array_unref(d->asked);
	if (d->cannot)
		g_ptr_array_unref(d->cannot);
	if (d->added)
		g_ptr_array_unref(d->added);
	if (d->linked)
		g_ptr_array_unref(d->linked);
	if (d->only_on)
		g_ptr_array_unref(d->only_on);
	memset(d, 0, sizeof *d);
}

void pk_unlinked_clear(struct pk_unlinked *u)
{
	if (u->want)
		g_ptr_array_unref(u->want);
	if (u->why)
		g_ptr_array_unref(u->why);
	memset(u, 0, sizeof *u);
}

/* Whether config sets any alternative of group ("A|B") built in. */
static bool group_met(GHashTable *config, const char *group)
{
	g_auto(GStrv) alts = g_strsplit(group, "|", -1);

	for (char **a = alts; *a; a++) {
		const char *val = g_hash_table_lookup(config, *a);

		if (val && !strcmp(val, "y"))
			return true;
	}
	return false;
}

/*
 * The symbol groups the lab's config leaves unmet for the patch's C
 * sources, each once, into want; what asked for each into found->asked;
 * when per_file is not NULL, each file's unmet groups (a GPtrArray of
 * strings) into it, a file that needs none left out.
 */
static int unmet_groups(GPtrArray *want, GPtrArray *per_file, struct pk_derived *found, const struct pk_lab *lab,
			const struct pk_patch *patch, GHashTable *config, bool deleted, GError **err)
{
	for (guint i = 0; i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];
		g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func(g_free);
		g_autoptr(GPtrArray) unmet = g_ptr_array_new_with_free_func(g_free);
		/* a new file counts: on the patched tree its makefile line is there */
		const char *path = deleted ? (f->new_path ? NULL : f->old_path) : f->new_path;

		if (!path || pk_arch_foreign_file(pk_lab_arch(lab), path))
			continue;
		if (pk_coverage_kbuild_groups(lab->tree, path, groups, err) < 0)
			return -1;
		for (guint g = 0; g < groups->len; g++) {
			const char *group = groups->pdata[g];
			g_auto(GStrv) alts = g_strsplit(group, "|", -1);
			g_autofree char *named = g_strjoinv(" or CONFIG_", alts);

			if (group_met(config, group))
				continue;
			g_ptr_array_add(unmet, g_strdup(group));
			if (g_ptr_array_find_with_equal_func(want, group, g_str_equal, NULL))
				continue;
			g_ptr_array_add(want, g_strdup(group));
			g_ptr_array_add(found->asked, g_strdup_printf("%s: CONFIG_%s%s", path, named,
								      deleted ? ", which the patch removes" : ""));
		}
		if (per_file && unmet->len)
			g_ptr_array_add(per_file, g_steal_pointer(&unmet));
	}
	return 0;
}

/* Whether the solver said it cannot set group ("CONFIG_<group>: why" in cannot). */
static bool group_cannot(const GPtrArray *cannot, const char *group)
{
	size_t n = strlen(group);

	for (guint i = 0; i < cannot->len; i++) {
		const char *c = (const char *)cannot->pdata[i] + strlen("CONFIG_");

		if (!strncmp(c, group, n) && c[n] == ':')
			return true;
	}
	return false;
}

/*
 * want again without the groups that only serve files the solver cannot
 * build (one of their groups it cannot set): the directory a file sits
 * in is of no use without the file's own option, and reaching it may
 * take a large subsystem (the hvc/ directory of a PowerPC-only driver
 * through Xen on x86_64).  The wants after the first n_files ones (a
 * device's, an option the patch adds) stay.  NULL when nothing goes.
 */
static GPtrArray *without_dead_files(const GPtrArray *want, guint n_files, const GPtrArray *per_file,
				     const GPtrArray *cannot)
{
	g_autoptr(GHashTable) alive = g_hash_table_new(g_str_hash, g_str_equal);
	GPtrArray *out;

	if (!cannot->len)
		return NULL;
	for (guint f = 0; f < per_file->len; f++) {
		const GPtrArray *groups = per_file->pdata[f];
		bool dead = false;

		for (guint g = 0; g < groups->len && !dead; g++)
			dead = group_cannot(cannot, groups->pdata[g]);
		for (guint g = 0; g < groups->len && !dead; g++)
			g_hash_table_add(alive, groups->pdata[g]);
	}
	out = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < want->len; i++)
		if (i >= n_files || g_hash_table_contains(alive, want->pdata[i]))
			g_ptr_array_add(out, g_strdup(want->pdata[i]));
	if (out->len == want->len) {
		g_ptr_array_unref(out);
		return NULL;
	}
	return out;
}

static bool is_kconfig_file(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return path && g_str_has_prefix(slash ? slash + 1 : path, "Kconfig");
}

/* Whether a line of the patch outside its Kconfig files names CONFIG_<symbol> (a whole word). */
static bool patch_uses_option(const struct pk_patch *patch, const char *symbol)
{
	g_autofree char *pattern = g_strdup_printf("\\bCONFIG_%s\\b", symbol);
	g_autoptr(GRegex) re = g_regex_new(pattern, 0, 0, NULL);

	for (guint i = 0; re && i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];

		if (is_kconfig_file(f->new_path ? f->new_path : f->old_path))
			continue;
		for (guint h = 0; h < f->hunks->len; h++) {
			const struct pk_hunk *hunk = f->hunks->pdata[h];

			for (guint l = 0; l < hunk->lines->len; l++) {
				const struct pk_diff_line *line = hunk->lines->pdata[l];

				if (line->kind != '-' && g_regex_match(re, line->text, 0, NULL))
					return true;
			}
		}
	}
	return false;
}

/*
 * The options the patch adds (a `config FOO` or `menuconfig FOO` line
 * added to a Kconfig file) that another of its files uses: each said in
 * found->added with its type and default as the patch writes them
 * ("CONFIG_FOO (tristate, default n)"), and wanted on unless config (made
 * for the patched tree) has it built in already.
 */
static void added_options(GPtrArray *want, struct pk_derived *found, const struct pk_patch *patch,
			  GHashTable *config)
{
	g_autoptr(GRegex) config_re = g_regex_new("^\\s*(?:menu)?config\\s+([A-Za-z0-9_]+)\\s*$", 0, 0, NULL);
	g_autoptr(GRegex) type_re = g_regex_new("^\\s*(bool|tristate|int|hex|string)\\b", 0, 0, NULL);
	g_autoptr(GRegex) default_re = g_regex_new("^\\s*(?:default|def_bool|def_tristate)\\s+(.*?)\\s*$", 0, 0,
						   NULL);
	g_autoptr(GRegex) end_re = g_regex_new("^\\s*(?:menu|endmenu|choice|endchoice|if|endif|source|comment)\\b",
					       0, 0, NULL);

	for (guint i = 0; i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];

		if (!f->new_path || !is_kconfig_file(f->new_path))
			continue;
		for (guint h = 0; h < f->hunks->len; h++) {
			const struct pk_hunk *hunk = f->hunks->pdata[h];

			for (guint l = 0; l < hunk->lines->len; l++) {
				const struct pk_diff_line *line = hunk->lines->pdata[l];
				g_autoptr(GMatchInfo) m = NULL;
				g_autofree char *symbol = NULL, *type = NULL, *def = NULL;

				if (line->kind != '+' || !g_regex_match(config_re, line->text, 0, &m))
					continue;
				symbol = g_match_info_fetch(m, 1);
				/* its attributes: the added lines up to the next entry */
				for (guint k = l + 1; k < hunk->lines->len; k++) {
					const struct pk_diff_line *attr = hunk->lines->pdata[k];
					g_autoptr(GMatchInfo) am = NULL;

					if (attr->kind != '+' || g_regex_match(config_re, attr->text, 0, NULL) ||
					    g_regex_match(end_re, attr->text, 0, NULL))
						break;
					if (!type && g_regex_match(type_re, attr->text, 0, &am))
						type = g_match_info_fetch(am, 1);
					g_clear_pointer(&am, g_match_info_unref);
					if (!def && g_regex_match(default_re, attr->text, 0, &am))
						def = g_match_info_fetch(am, 1);
				}
				if (!patch_uses_option(patch, symbol))
					continue;
				if (!group_met(config, symbol) &&
				    !g_ptr_array_find_with_equal_func(want, symbol, g_str_equal, NULL))
					g_ptr_array_add(want, g_strdup(symbol));
				g_ptr_array_add(found->added, g_strdup_printf("CONFIG_%s (%s, default %s)", symbol,
									      type ? type : "no type",
									      def ? def : "n"));
				g_ptr_array_add(found->asked, g_strdup_printf("%s: CONFIG_%s, which the patch adds",
									      f->new_path, symbol));
			}
		}
	}
}

/*
 * A symbol (without CONFIG_) of a qemu/devices row or a board: a driver
 * the guest needs for the row's device to be found at all (the USB core's
 * own symbols do not include the xHCI host controller driver its keyboard
 * hangs on), or the board's platform; wanted unless config already has
 * it; found->asked says who asked ("asker: CONFIG_X").
 */
static void want_host_driver(GPtrArray *want, struct pk_derived *found, GHashTable *config, const char *symbol,
			     const char *asker)
{
	if (group_met(config, symbol) || g_ptr_array_find_with_equal_func(want, symbol, g_str_equal, NULL))
		return;
	g_ptr_array_add(want, g_strdup(symbol));
	g_ptr_array_add(found->asked, g_strdup_printf("%s: CONFIG_%s", asker, symbol));
}

int pk_derive_devices(GPtrArray *args, GString *names, GPtrArray *want, struct pk_derived *found,
		      GHashTable *config, const char *datadir, const struct pk_patch *patch, GError **err)
{
	g_autofree char *path = g_build_filename(datadir, "qemu", "devices", NULL);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;

	if (pk_read_file(&text, NULL, path, 1 << 20, err) < 0)
		return -1;
	lines = g_strsplit(text, "\n", -1);
	for (unsigned n = 0; lines[n]; n++) {
		g_auto(GStrv) words = NULL;
		guint count, first;

		g_strstrip(lines[n]);
		if (!*lines[n] || *lines[n] == '#')
			continue;
		words = g_regex_split_simple("\\s+", lines[n], 0, 0);
		count = g_strv_length(words);
		/* the CONFIG_ words come first, then the QEMU option and value pairs */
		for (first = 1; first < count && g_str_has_prefix(words[first], "CONFIG_"); first++)
			if (!words[first][strlen("CONFIG_")])
				return pk_error(err, PK_ERROR_FAILED, "%s:%u: CONFIG_ names no symbol", path, n + 1);
		if (count - first < 2 || (count - first) % 2)
			return pk_error(err, PK_ERROR_FAILED, "%s:%u: want a path prefix, CONFIG_ symbols if any, "
					"and QEMU option and value pairs", path, n + 1);
		if (!pk_patch_touches(patch, words[0]))
			continue;
		for (guint w = 1; w < first; w++) {
			g_autofree char *asker = g_strdup_printf("the devices of %s", words[0]);

			want_host_driver(want, found, config, words[w] + strlen("CONFIG_"), asker);
		}
		for (guint w = first; w + 1 < count; w += 2) {
			bool have = false;

			if (words[w][0] != '-')
				return pk_error(err, PK_ERROR_FAILED, "%s:%u: \"%s\" is not a QEMU option",
						path, n + 1, words[w]);
			for (guint a = 0; a + 1 < args->len && !have; a += 2)
				have = !strcmp(args->pdata[a], words[w]) && !strcmp(args->pdata[a + 1], words[w + 1]);
			if (have)
				continue;
			g_ptr_array_add(args, g_strdup(words[w]));
			g_ptr_array_add(args, g_strdup(words[w + 1]));
			if (!strcmp(words[w], "-device"))
				g_string_append_printf(names, "%s%.*s", names->len ? ", " : "",
						       (int)strcspn(words[w + 1], ","), words[w + 1]);
		}
	}
	return 0;
}

/*
 * The name of an answer of the solver: a hash of what it depends on, the
 * lab's .config (made for the checked-out tree; the compiler's version is
 * in it), the tree's commit, the script and the wanted groups.  NULL with
 * err when one cannot be read.
 */
static char *solve_key(const struct pk_lab *lab, const char *build_dir, const char *script, GPtrArray *want,
		       GError **err)
{
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	g_autofree char *head = pk_repo_resolve(lab, "HEAD", err);
	g_autofree char *config = NULL, *code = NULL;
	size_t config_len = 0, code_len = 0;
	int rc;

	if (!head)
		return NULL;
	if ((rc = pk_beneath_read_at(&config, &config_len, build_dir, ".config", 16u << 20, err)) <= 0) {
		if (rc == 0)
			pk_error(err, PK_ERROR_FAILED, "%s/.config: no such file", build_dir);
		return NULL;
	}
	if (pk_read_file(&code, &code_len, script, 16 << 20, err) < 0)
		return NULL;
	g_checksum_update(sum, (const guchar *)head, -1);
	g_checksum_update(sum, (const guchar *)"\0", 1);
	g_checksum_update(sum, (const guchar *)config, config_len);
	g_checksum_update(sum, (const guchar *)"\0", 1);
	g_checksum_update(sum, (const guchar *)code, code_len);
	for (guint i = 0; i < want->len; i++) {
		g_checksum_update(sum, (const guchar *)"\0", 1);
		g_checksum_update(sum, want->pdata[i], -1);
	}
	return g_strdup(g_checksum_get_string(sum));
}

/*
 * Whether text is an answer to want as qemu/kconfig-enable.py gives one:
 * only "CONFIG_<SYMBOL>=y" lines, and "# cannot: <GROUP>: <why>" and
 * "# only-on: <GROUP>: <SYMBOL>...: <arch>..." lines for groups of want,
 * printable ASCII.  The solver runs the patch's Kconfig
 * in the sandbox, so what comes back is checked, not trusted: a line of
 * anything else would be merged into the config as it stands.
 */
static int valid_answer(const char *text, GPtrArray *want, GError **err)
{
	g_autoptr(GRegex) option = g_regex_new("^CONFIG_[A-Za-z0-9_]+=y$", 0, 0, NULL);
	g_autoptr(GRegex) cannot = g_regex_new("^# (?:cannot: ([A-Za-z0-9_|]+): [ -~]*|only-on: ([A-Za-z0-9_|]+): "
					       "[A-Za-z0-9_]+(?: [A-Za-z0-9_]+)*: [a-z0-9]+(?: [a-z0-9]+)*)$",
					       0, 0, NULL);
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	unsigned n = 0;

	for (char **l = lines; *l; l++, n++) {
		g_autoptr(GMatchInfo) m = NULL;
		g_autofree char *group = NULL, *shown = NULL;

		if (!**l || g_regex_match(option, *l, 0, NULL))
			continue;
		if (g_regex_match(cannot, *l, 0, &m)) {
			group = g_match_info_fetch(m, 1);
			if (!*group) {
				g_free(group);
				group = g_match_info_fetch(m, 2);
			}
			if (g_ptr_array_find_with_equal_func(want, group, g_str_equal, NULL))
				continue;
		}
		shown = pk_text_for_terminal(*l);
		return pk_error(err, PK_ERROR_INPUT, "the Kconfig solver's answer, line %u, is neither an option "
				"to set nor a group it was asked about: %.120s", n + 1, shown);
	}
	return 0;
}

/*
 * want with a board's symbols first (lab.h's board, board.h): its platform
 * set before a driver's `ARCH_BCM2835 || COMPILE_TEST` is weighed meets it
 * as on the board, where COMPILE_TEST first (the solver's choice for
 * another architecture's driver) would turn on CONFIG_WERROR and more.
 */
static GPtrArray *board_first(const struct pk_lab *lab, const GPtrArray *want)
{
	GPtrArray *ordered = g_ptr_array_new_with_free_func(g_free);

	for (char **sym = lab->board ? lab->board->symbols : NULL; sym && *sym; sym++)
		if (g_ptr_array_find_with_equal_func((GPtrArray *)want, *sym, g_str_equal, NULL))
			g_ptr_array_add(ordered, g_strdup(*sym));
	for (guint i = 0; i < want->len; i++)
		if (!g_ptr_array_find_with_equal_func(ordered, want->pdata[i], g_str_equal, NULL))
			g_ptr_array_add(ordered, g_strdup(want->pdata[i]));
	return ordered;
}

/*
 * Run qemu/kconfig-enable.py for asked (board_first()) on the lab's
 * .config: its answer, one line each.  An answer is kept (ANSWERS_DIR)
 * and read back for the same question: kconfiglib parses the whole
 * Kconfig tree and runs its $(shell) macros each time, 2 of the ~10 s of
 * a later patch on a built derived config.
 */
static char **solve(const struct pk_lab *lab, GPtrArray *asked, GError **err)
{
	g_autoptr(GPtrArray) want = board_first(lab, asked);
	g_autofree char *script_dir = g_build_filename(lab->datadir, "qemu", NULL);
	g_autofree char *script = g_build_filename(script_dir, "kconfig-enable.py", NULL);
	g_autofree char *build_dir = pk_lab_build_dir(lab);
	g_autofree char *out = g_build_filename(build_dir, SOLVE_OUT, NULL);
	g_autofree char *config = g_build_filename(build_dir, ".config", NULL);
	g_autofree char *srctree = g_strconcat("srctree=", lab->tree, NULL);
	g_autofree char *answers = g_build_filename(lab->cache, ANSWERS_DIR, NULL);
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	const char *ro[] = { script_dir, NULL };
	g_autofree char *text = NULL, *key = NULL, *kept = NULL;
	size_t len = 0;
	bool layered;
	int rc;

	/* the variables Kconfig's $(...) macros read, as the top Makefile exports them */
	const struct pk_arch *arch = pk_lab_arch(lab);
	const char *cross = arch->cross_compile ? arch->cross_compile : "";
	g_autofree char *arch_var = g_strconcat("ARCH=", arch->karch, NULL);
	g_autofree char *srcarch_var = g_strconcat("SRCARCH=", arch->karch, NULL);
	g_autofree char *cc_var = g_strconcat("CC=", cross, "gcc", NULL), *ld_var = g_strconcat("LD=", cross, "ld", NULL);
	const char *head[] = { "env", srctree, arch_var, srcarch_var, cc_var, ld_var, "HOSTCC=gcc",
			       "HOSTCXX=g++", "/usr/bin/python3", script, out, config };
	/* the .config the build of this checkout sees: in its layer, if it has one */
	if (pk_build_dir_enter(lab, &layered, err) < 0 || !(key = solve_key(lab, build_dir, script, want, err)))
		return NULL;
	kept = g_build_filename(answers, key, NULL);
	if (g_file_test(kept, G_FILE_TEST_EXISTS)) {
		if (pk_read_file(&text, NULL, kept, ANSWER_CAP, err) < 0 || valid_answer(text, want, err) < 0)
			return NULL;
		return g_strsplit(text, "\n", -1);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(head); i++)
		g_ptr_array_add(argv, (char *)head[i]);
	for (guint i = 0; i < want->len; i++)
		g_ptr_array_add(argv, want->pdata[i]);
	g_ptr_array_add(argv, NULL);
	if (pk_build_step(lab, "solving Kconfig dependencies (qemu/kconfig-enable.py)", NULL,
			  (const char *const *)argv->pdata, ro, err) < 0)
		return NULL;
	if ((rc = pk_beneath_read_at(&text, &len, build_dir, SOLVE_OUT, ANSWER_CAP, err)) <= 0) {
		if (rc == 0)
			pk_error(err, PK_ERROR_FAILED, "qemu/kconfig-enable.py wrote no answer (%s)", out);
		return NULL;
	}
	if (valid_answer(text, want, err) < 0)
		return NULL;
	if (g_mkdir_with_parents(answers, 0755) < 0) {
		pk_error(err, PK_ERROR_FAILED, "%s: %s", answers, g_strerror(errno));
		return NULL;
	}
	if (pk_write_file(kept, text, len, err) < 0)
		return NULL;
	return g_strsplit(text, "\n", -1);
}

/* The CONFIG_ lines of a derived config's lines, as a set. */
static GHashTable *line_set(const char *lines)
{
	g_auto(GStrv) parts = g_strsplit(lines ? lines : "", "\n", -1);
	GHashTable *set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (char **l = parts; *l; l++)
		if (g_str_has_prefix(g_strstrip(*l), "CONFIG_"))
			g_hash_table_add(set, g_strdup(*l));
	return set;
}

/* How many lines one set has and the other has not. */
static guint set_distance(GHashTable *a, GHashTable *b)
{
	GHashTableIter it;
	gpointer key;
	guint n = 0;

	g_hash_table_iter_init(&it, a);
	while (g_hash_table_iter_next(&it, &key, NULL))
		n += !g_hash_table_contains(b, key);
	g_hash_table_iter_init(&it, b);
	while (g_hash_table_iter_next(&it, &key, NULL))
		n += !g_hash_table_contains(a, key);
	return n;
}

/* See derive.h. */
char *pk_derive_nearest_build_dir(const struct pk_lab *lab, const char *lines)
{
	g_autofree char *lab_build = pk_lab_build_dir(lab), *series = pk_lab_tree_series(lab);
	g_autofree char *dir = g_build_filename(lab->cache, "build", NULL);
	g_autofree char *suffix = series ? g_strconcat("-", series, NULL) : NULL;
	g_autoptr(GHashTable) want = line_set(lines);
	g_autoptr(GDir) d = suffix ? g_dir_open(dir, 0, NULL) : NULL;
	char *best = g_file_test(lab_build, G_FILE_TEST_IS_DIR) ? g_strdup(lab_build) : NULL;
	guint best_distance = g_hash_table_size(want);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree char *path = g_build_filename(dir, name, NULL), *theirs = NULL;
		g_autoptr(GHashTable) have = NULL;
		struct stat st;
		guint distance;

		if (!g_str_has_suffix(name, suffix) || !strcmp(path, lab_build) || lstat(path, &st) < 0 ||
		    !S_ISDIR(st.st_mode) || pk_beneath_regular(path, "vmlinux", NULL, NULL) <= 0 ||
		    pk_state_read(&theirs, path, PK_STATE_DERIVED_FRAGMENT, 1 << 20, NULL) <= 0)
			continue;
		have = line_set(theirs);
		if ((distance = set_distance(want, have)) < best_distance) {
			g_free(best);
			best = g_steal_pointer(&path);
			best_distance = distance;
		}
	}
	return best;
}

/* The lab on the config "fragment + lines": its own name and build dir, made from the nearest if new. */
static int derived_lab(struct pk_lab *out, const struct pk_lab *lab, const char *lines, GPtrArray *args,
		       GError **err)
{
	g_autofree char *tmp = NULL, *from = NULL, *build_dir = NULL;
	struct pk_lab d = { .lock_fd = -1, .repo = pk_repo_cache_new() };   /* its own, on the same tree */

	if (args->len) {
		g_ptr_array_add(args, NULL);
		d.qemu_args = g_strdupv((char **)args->pdata);
		g_ptr_array_remove_index(args, args->len - 1);
	}
	if (!(d.config_hash = pk_lab_config_name(lab->datadir, pk_lab_arch(lab), lab->board, lines, d.qemu_args,
						 err))) {
		pk_lab_clear(&d);
		return -1;
	}
	d.arch = lab->arch;
	d.board = lab->board;
	d.cache = g_strdup(lab->cache);
	d.datadir = g_strdup(lab->datadir);
	d.tree = g_strdup(lab->tree);
	d.initrd = g_strdup(lab->initrd);
	if (!*lines) {
		/* devices only: the lab's config, so its build dir */
		d.build_stem = g_strdup(lab->build_stem);
		*out = d;
		return 0;
	}
	d.build_stem = g_build_filename(lab->cache, "build", d.config_hash, NULL);
	d.extra_config = g_strdup(lines);
	build_dir = pk_lab_build_dir(&d);
	/* without a build dir of this series (its builds all came from the store), Kbuild starts cold */
	if (!g_file_test(build_dir, G_FILE_TEST_IS_DIR) && (from = pk_derive_nearest_build_dir(lab, lines))) {
		/*
		 * Start from a copy of the nearest build dir: Kbuild then rebuilds
		 * only the objects whose symbols changed (include/config/) and the
		 * new ones.
		 */
		const char *cp[] = { "cp", "-a", "--reflink=auto", from, NULL, NULL };
		tmp = g_strconcat(build_dir, ".new", NULL);
		cp[4] = tmp;
		pk_info("a new derived config %s starts as a copy of %s", d.config_hash, from);
		/* the copy is of what published builds made, never of a patch's layer */
		if (pk_layer_drop(from, err) < 0 || pk_remove_tree(tmp, err) < 0 ||
		    pk_proc_step("copying a build dir", cp, NULL, NULL, err) < 0) {
			pk_lab_clear(&d);
			return -1;
		}
		if (rename(tmp, build_dir) < 0) {
			pk_error(err, PK_ERROR_FAILED, "%s: %s", build_dir, g_strerror(errno));
			pk_lab_clear(&d);
			return -1;
		}
		/*
		 * The copy's state is its own (a dir of this name removed before may
		 * have left some): its .config is the source's, made for no commit of
		 * its own yet, and its lines mark it as derived (pk_derive_prune()).
		 */
		if (pk_build_dir_copy_mark(&d, from, err) < 0 || pk_kconfig_forget(build_dir, err) < 0 ||
		    pk_state_write(build_dir, PK_STATE_DERIVED_FRAGMENT, lines, strlen(lines), err) < 0) {
			pk_lab_clear(&d);
			return -1;
		}
	}
	/* used now: pk_derive_prune() removes the least recently used first */
	if (g_file_test(build_dir, G_FILE_TEST_IS_DIR) && utimensat(AT_FDCWD, build_dir, NULL, 0) < 0) {
		pk_error(err, PK_ERROR_FAILED, "%s: %s", build_dir, g_strerror(errno));
		pk_lab_clear(&d);
		return -1;
	}
	*out = d;
	return 0;
}

static struct pk_derived derived_new(void)
{
	return (struct pk_derived){ NULL, g_ptr_array_new_with_free_func(g_free),
				    g_ptr_array_new_with_free_func(g_free), NULL,
				    g_ptr_array_new_with_free_func(g_free) };
}

/* The solver's answer: CONFIG_ lines onto lines, what it could not set onto cannot (unless NULL). */
static void take_answer(GString *lines, struct pk_derived *d, char **answer)
{
	for (char **l = answer; l && *l; l++) {
		if (g_str_has_prefix(*l, "CONFIG_")) {
			g_string_append_printf(lines, "%s\n", *l);
		} else if (d && g_str_has_prefix(*l, "# cannot: ")) {
			g_ptr_array_add(d->cannot, g_strdup_printf("CONFIG_%s", *l + strlen("# cannot: ")));
		} else if (d && g_str_has_prefix(*l, "# only-on: ")) {
			if (!d->only_on)
				d->only_on = g_ptr_array_new_with_free_func(g_free);
			g_ptr_array_add(d->only_on, g_strdup(*l + strlen("# only-on: ")));
		}
	}
}

/* d's only-on entry of group ("GROUP: SYMBOLS: ARCHES"), split in three; NULL when none. */
static char **only_on_of(const struct pk_derived *d, const char *group)
{
	for (guint i = 0; d->only_on && i < d->only_on->len; i++) {
		char **parts = g_strsplit(d->only_on->pdata[i], ": ", 3);

		if (g_strv_length(parts) == 3 && !strcmp(parts[0], group))
			return parts;
		g_strfreev(parts);
	}
	return NULL;
}

bool pk_derived_beyond_arch(const struct pk_derived *d, const char *karch, char **why)
{
	g_autofree char *first = NULL;

	if (!d->cannot || !d->cannot->len)
		return false;
	for (guint i = 0; i < d->cannot->len; i++) {
		/* "CONFIG_<GROUP>: why" */
		const char *c = d->cannot->pdata[i], *colon = strstr(c, ": ");
		g_autofree char *group = colon ? g_strndup(c + strlen("CONFIG_"), colon - c - strlen("CONFIG_")) : NULL;
		g_auto(GStrv) bound = group ? only_on_of(d, group) : NULL;
		g_auto(GStrv) arches = bound ? g_strsplit(bound[2], " ", -1) : NULL;
		g_autoptr(GString) where = NULL, needs = NULL;

		if (!bound || g_strv_contains((const char *const *)arches, karch))
			return false;
		if (first)
			continue;
		where = g_string_new(NULL);
		for (char **a = arches; *a; a++)
			g_string_append_printf(where, "%sarch/%s/", a == arches ? "" : a[1] ? ", " : " and ", *a);
		/* a symbol per alternative of the group: any one of them would do */
		needs = g_string_new(bound[1]);
		g_string_replace(needs, " ", " or ", 0);
		first = g_strdup_printf("CONFIG_%s needs %s, which only %s define%s", group, needs->str, where->str,
					arches[1] ? "" : "s");
	}
	if (why)
		*why = g_steal_pointer(&first);
	return true;
}

bool pk_derive_deletes_code(const struct pk_patch *patch)
{
	for (guint i = 0; i < patch->files->len; i++) {
		const struct pk_diff_file *f = patch->files->pdata[i];

		if (!f->new_path && f->old_path && g_str_has_suffix(f->old_path, ".c"))
			return true;
	}
	return false;
}

int pk_derive_removed(struct pk_derived *out, const struct pk_lab *lab, const struct pk_patch *patch,
		      GError **err)
{
	struct pk_derived d = derived_new();
	g_autoptr(GPtrArray) want = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) config = NULL;
	g_autoptr(GString) lines = g_string_new(NULL);
	g_auto(GStrv) answer = NULL;
	g_autofree char *lab_build = pk_lab_build_dir(lab);

	if (!(config = pk_kconfig_values(lab_build, err)) ||
	    unmet_groups(want, NULL, &d, lab, patch, config, true, err) < 0 ||
	    (want->len && !(answer = solve(lab, want, err)))) {
		pk_derived_clear(&d);
		return -1;
	}
	take_answer(lines, &d, answer);
	if (lines->len)
		d.lines = g_string_free(g_steal_pointer(&lines), FALSE);
	*out = d;
	return 0;
}

static void gstring_free(gpointer s)
{
	g_string_free(s, TRUE);
}

/* At most this many missing symbols are looked for: a build that lacks more is broken otherwise. */
#define UNLINKED_MAX 32

/* The symbols a failed link names, each once, in the order they come. */
static GPtrArray *undefined_symbols(const char *errors)
{
	g_autoptr(GRegex) re = g_regex_new("undefined reference to [`']([A-Za-z_][A-Za-z0-9_]*)'"
					   "|ERROR: modpost: \"([A-Za-z_][A-Za-z0-9_]*)\" \\[[^]]*\\] undefined!",
					   0, 0, NULL);
	g_autoptr(GMatchInfo) m = NULL;
	GPtrArray *symbols = g_ptr_array_new_with_free_func(g_free);

	g_regex_match(re, errors ? errors : "", 0, &m);
	for (; g_match_info_matches(m) && symbols->len < UNLINKED_MAX; g_match_info_next(m, NULL)) {
		g_autofree char *a = g_match_info_fetch(m, 1), *b = g_match_info_fetch(m, 2);
		char *sym = a && *a ? g_steal_pointer(&a) : g_steal_pointer(&b);

		if (g_ptr_array_find_with_equal_func(symbols, sym, g_str_equal, NULL))
			g_free(sym);
		else
			g_ptr_array_add(symbols, sym);
	}
	return symbols;
}

int pk_derive_unlinked(struct pk_unlinked *out, const struct pk_lab *lab, GHashTable *config,
		       const char *errors, GError **err)
{
	g_autoptr(GPtrArray) symbols = undefined_symbols(errors);
	g_autoptr(GString) pattern = g_string_new("^EXPORT_SYMBOL[A-Z_]*\\((");
	g_autoptr(GString) found = g_string_new(NULL);
	/* file -> GString of the symbols it exports; files in grep's order */
	g_autoptr(GHashTable) by_file = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, gstring_free);
	g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
	struct pk_proc_result res;
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;

	out->want = g_ptr_array_new_with_free_func(g_free);
	out->why = g_ptr_array_new_with_free_func(g_free);
	if (!symbols->len)
		return 0;
	for (guint i = 0; i < symbols->len; i++)
		g_string_append_printf(pattern, "%s%s", i ? "|" : "", (char *)symbols->pdata[i]);
	g_string_append(pattern, ")\\)");
	/* grep, not a walk of our own: the tree's 35,000 C sources are read in seconds, once, on a failed link */
	const char *argv[] = { "grep", "-rHoE", "--include=*.c", "--exclude-dir=.git", "-e", pattern->str, ".", NULL };
	opts.cwd = lab->tree;
	opts.capture = found;
	opts.output_cap = 1 << 20;
	opts.timeout = 600;
	if (pk_proc_run(&res, argv, &opts, err) < 0)
		return -1;
	if (res.end != PK_PROC_EXITED || res.exit_code > 1) {   /* 1: nothing matched */
		g_autofree char *what = pk_proc_describe(&res);

		return pk_error(err, PK_ERROR_FAILED, "searching %s for the symbols the kernel did not link: grep %s",
				lab->tree, what);
	}
	/* "./lib/crc8.c:EXPORT_SYMBOL(crc8)" */
	g_auto(GStrv) rows = g_strsplit(found->str, "\n", -1);
	for (char **r = rows; *r; r++) {
		char *colon = strstr(*r, ":EXPORT_SYMBOL"), *open, *close;
		const char *file = g_str_has_prefix(*r, "./") ? *r + 2 : *r;
		GString *syms;

		/* another architecture's copy (arch/arm/lib/...) is no option of the lab's arch's kernel */
		if (!colon || !(open = strchr(colon, '(')) || !(close = strchr(open, ')')) ||
		    pk_arch_foreign_file(pk_lab_arch(lab), file))
			continue;
		*colon = *close = '\0';
		if (!(syms = g_hash_table_lookup(by_file, file))) {
			syms = g_string_new(NULL);
			g_hash_table_insert(by_file, g_strdup(file), syms);
			g_ptr_array_add(files, g_strdup(file));
		}
		g_string_append_printf(syms, "%s%s", syms->len ? ", " : "", open + 1);
	}
	for (guint i = 0; i < files->len; i++) {
		g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func(g_free);
		const GString *syms = g_hash_table_lookup(by_file, files->pdata[i]);

		if (pk_coverage_kbuild_groups(lab->tree, files->pdata[i], groups, err) < 0)
			return -1;
		for (guint g = 0; g < groups->len; g++) {
			const char *group = groups->pdata[g];
			g_auto(GStrv) alts = NULL;
			g_autofree char *named = NULL;

			if (group_met(config, group) ||
			    g_ptr_array_find_with_equal_func(out->want, group, g_str_equal, NULL))
				continue;
			g_ptr_array_add(out->want, g_strdup(group));
			alts = g_strsplit(group, "|", -1);
			named = g_strjoinv(" or CONFIG_", alts);
			g_ptr_array_add(out->why, g_strdup_printf("CONFIG_%s (%s: %s)", named,
								  (char *)files->pdata[i], syms->str));
		}
	}
	return 0;
}

int pk_derive_config(struct pk_lab *out, struct pk_derived *found, const struct pk_lab *lab,
		     const struct pk_patch *patch, const struct pk_derived *removed,
		     const struct pk_unlinked *unlinked, GError **err)
{
	struct pk_derived d = derived_new();
	g_autoptr(GPtrArray) want = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) per_file = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	g_autoptr(GPtrArray) fewer = NULL;
	g_autoptr(GHashTable) config = NULL;
	g_autoptr(GString) lines = g_string_new(NULL), names = g_string_new(NULL);
	g_auto(GStrv) answer = NULL;
	g_autofree char *lab_build = pk_lab_build_dir(lab);
	guint n_files;
	int rc = -1;

	if (!(config = pk_kconfig_values(lab_build, err)) ||
	    unmet_groups(want, per_file, &d, lab, patch, config, false, err) < 0)
		goto out;
	n_files = want->len;
	if (pk_derive_devices(args, names, want, &d, config, lab->datadir, patch, err) < 0)
		goto out;
	if (lab->board) {
		/* the board's platform, clocks and power-off (qemu/boards) */
		g_autofree char *asker = g_strdup_printf("QEMU's %s board", lab->board->machine);

		for (char **sym = lab->board->symbols; *sym; sym++)
			want_host_driver(want, &d, config, *sym, asker);
	}
	added_options(want, &d, patch, config);
	for (guint i = 0; unlinked && i < unlinked->want->len; i++) {
		if (!g_ptr_array_find_with_equal_func(want, unlinked->want->pdata[i], g_str_equal, NULL))
			g_ptr_array_add(want, g_strdup(unlinked->want->pdata[i]));
		if (!d.linked)
			d.linked = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(d.linked, g_strdup(unlinked->why->pdata[i]));
	}
	if (want->len && !(answer = solve(lab, want, err)))
		goto out;
	take_answer(lines, &d, answer);
	/* a file that cannot be built: solved again without what only it asked for (its reasons kept) */
	if ((fewer = without_dead_files(want, n_files, per_file, d.cannot))) {
		g_auto(GStrv) again = NULL;

		if (fewer->len && !(again = solve(lab, fewer, err)))
			goto out;
		/* the lines of the second answer; its cannots are the first's again, which say why */
		g_string_truncate(lines, 0);
		take_answer(lines, NULL, again);
	}
	/* the deleted code's lines: the kernel before the patch builds it, the patched one has no such options */
	if (removed && removed->lines) {
		g_string_append(lines, removed->lines);
		d.removal = true;
	}
	for (guint i = 0; removed && i < removed->asked->len; i++)
		g_ptr_array_add(d.asked, g_strdup(removed->asked->pdata[i]));
	for (guint i = 0; removed && i < removed->cannot->len; i++)
		g_ptr_array_add(d.cannot, g_strdup(removed->cannot->pdata[i]));
	for (guint i = 0; removed && removed->only_on && i < removed->only_on->len; i++) {
		if (!d.only_on)
			d.only_on = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(d.only_on, g_strdup(removed->only_on->pdata[i]));
	}
	rc = 0;
	if (!lines->len && !args->len)
		goto out;
	if (derived_lab(out, lab, lines->str, args, err) < 0) {
		rc = -1;
		goto out;
	}
	if (lines->len)
		d.lines = g_string_free(g_steal_pointer(&lines), FALSE);
	if (names->len)
		d.devices = g_string_free(g_steal_pointer(&names), FALSE);
	rc = 1;
out:
	if (found && rc >= 0)
		*found = d;
	else
		pk_derived_clear(&d);
	return rc;
}

/*
 * A derived build dir of the build/ listing: made for a patch (its state
 * holds its lines), not one of the lab's or in_use's.  A lab made before
 * the state dirs (state.h) kept the lines in the build dir as
 * .printkbot-derived.config: looked at without following a link, since
 * it is in the build dir.
 */
static bool prunable(const char *dir, const char *name, const struct pk_lab *lab, const struct pk_lab *in_use)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	struct stat st;

	if (g_str_has_prefix(name, lab->config_hash) ||
	    (in_use && in_use->config_hash && g_str_has_prefix(name, in_use->config_hash)) ||
	    lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	return pk_state_stat(path, PK_STATE_DERIVED_FRAGMENT, NULL) ||
	       pk_beneath_regular(path, ".printkbot-derived.config", NULL, NULL) > 0;
}

struct used_dir {
	char *path;
	gint64 mtime;
};

static gint newest_first(gconstpointer a, gconstpointer b)
{
	const struct used_dir *x = *(struct used_dir *const *)a, *y = *(struct used_dir *const *)b;

	return x->mtime < y->mtime ? 1 : x->mtime > y->mtime ? -1 : strcmp(x->path, y->path);
}

static void used_dir_free(gpointer p)
{
	struct used_dir *u = p;

	g_free(u->path);
	g_free(u);
}

int pk_derive_prune(const struct pk_lab *lab, const struct pk_lab *in_use, unsigned keep, GError **err)
{
	g_autofree char *dir = g_build_filename(lab->cache, "build", NULL);
	g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func(used_dir_free);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	if (!keep)
		keep = PK_DERIVED_BUILDS_KEPT;
	while (d && (name = g_dir_read_name(d))) {
		struct used_dir *u;
		struct stat st;

		if (!prunable(dir, name, lab, in_use))
			continue;
		u = g_new0(struct used_dir, 1);
		u->path = g_build_filename(dir, name, NULL);
		u->mtime = stat(u->path, &st) == 0 ? (gint64)st.st_mtim.tv_sec * G_USEC_PER_SEC + st.st_mtim.tv_nsec / 1000 : 0;
		g_ptr_array_add(found, u);
	}
	g_ptr_array_sort(found, newest_first);
	for (guint i = keep; i < found->len; i++) {
		const struct used_dir *u = found->pdata[i];

		pk_info("removing the derived build dir %s (the least recently used of %u, [test] derived_builds = %u)",
			u->path, found->len, keep);
		if (pk_build_dir_remove(u->path, err) < 0)
			return -1;
	}
	return 0;
}
