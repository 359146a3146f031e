/* absent.c - the names a tree of the lab does not have; see absent.h. */
#include "lab/absent.h"
#include "base/proc.h"
#include "base/util.h"

#include <string.h>

#define ABSENT_MAX 32

/* Whether s can be put in an extended regular expression as it is: a C identifier. */
static bool identifier(const char *s)
{
	if (!s || !*s || g_ascii_isdigit(*s))
		return false;
	for (; *s; s++)
		if (!g_ascii_isalnum(*s) && *s != '_')
			return false;
	return true;
}

/* git grep in the lab's tree at rev for the ERE pattern, its output onto found (NULL: -q); its exit code or -1. */
static int git_grep(const struct pk_lab *lab, const char *rev, const char *pattern, GString *found,
		    bool *truncated, GError **err)
{
	/* only the names (-o -h): a name costs its occurrences, a few bytes each */
	const char *argv[] = { "git", "-C", lab->tree, "grep", found ? "-o" : "-q", "-h", "-w", "-E", "-e",
			       pattern, rev, "--", "*.c", "*.h", NULL };
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	struct pk_proc_result res;

	opts.capture = found;
	opts.output_cap = 16 << 20;
	opts.timeout = 600;
	if (pk_proc_run(&res, argv, &opts, err) < 0)
		return -1;
	/* 1: nothing matched */
	if (res.end != PK_PROC_EXITED || res.exit_code > 1) {
		g_autofree char *what = pk_proc_describe(&res);

		return pk_error(err, PK_ERROR_FAILED, "searching %s at %s for the names its build lacked: git grep %s",
				lab->tree, rev, what);
	}
	if (truncated)
		*truncated = res.truncated;
	return res.exit_code;
}

int pk_absent_names(GPtrArray **out, const struct pk_lab *lab, const char *rev, const char *const *names,
		    GError **err)
{
	g_autoptr(GPtrArray) wanted = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) absent = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) pattern = g_string_new(NULL);
	g_autoptr(GString) found = g_string_new(NULL);
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_auto(GStrv) rows = NULL;
	bool cut = false;

	for (const char *const *n = names; n && *n && wanted->len < ABSENT_MAX; n++)
		if (identifier(*n) && !g_ptr_array_find_with_equal_func(wanted, *n, g_str_equal, NULL)) {
			g_ptr_array_add(wanted, g_strdup(*n));
			g_string_append_printf(pattern, "%s%s", pattern->len ? "|" : "", *n);
		}
	if (!wanted->len) {
		*out = g_steal_pointer(&absent);
		return 0;
	}
	if (!rev || *rev == '-')
		return pk_error(err, PK_ERROR_INPUT, "'%s' is not a revision of the kernel tree", rev ? rev : "");
	/* every name in one pass over the tree */
	if (git_grep(lab, rev, pattern->str, found, &cut, err) < 0)
		return -1;
	rows = g_strsplit(found->str, "\n", -1);
	for (char **r = rows; *r; r++)
		if (**r)
			g_hash_table_add(seen, g_strdup(*r));
	for (guint i = 0; i < wanted->len; i++) {
		int rc = 0;

		if (g_hash_table_contains(seen, wanted->pdata[i]))
			continue;
		/* a common name filled the output before a rarer one came: that one alone */
		if (cut && (rc = git_grep(lab, rev, wanted->pdata[i], NULL, NULL, err)) < 0)
			return -1;
		if (rc != 0 || !cut)
			g_ptr_array_add(absent, g_strdup(wanted->pdata[i]));
	}
	*out = g_steal_pointer(&absent);
	return 0;
}
