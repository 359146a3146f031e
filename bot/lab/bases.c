/* bases.c - the lab's bases by name; see bases.h. */
#define _GNU_SOURCE   /* strverscmp(): versions as sort -V orders them */
#include "lab/bases.h"

#include <string.h>

#include "base/util.h"
#include "lab/apply.h"
#include "lab/repo.h"

/* "debian:6.12" before "debian:6.1": newest kernel first, by dotted version. */
static int compare_versions_desc(gconstpointer a, gconstpointer b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;

	return -strverscmp(x, y);
}

int pk_bases_debian(struct pk_debian_source *out, const char *spec, GError **err)
{
	const char *v = g_str_has_prefix(spec, "debian:") ? spec + strlen("debian:") : NULL;

	/* a version is digits and dots: it goes into a path and a package name */
	if (!v || !*v || strspn(v, "0123456789.") != strlen(v) || *v == '.')
		return pk_error(err, PK_ERROR_INPUT, "'%s' is not a kernel source (debian:6.12, debian:6.1)", spec);
	out->name = g_strdup(spec);
	out->version = g_strdup(v);
	out->package = g_strconcat("linux-source-", v, NULL);
	out->tarball = g_strdup_printf("/usr/src/linux-source-%s.tar.xz", v);
	out->tag = g_strconcat(PK_BASES_DEBIAN_TAG, v, NULL);
	return 0;
}

void pk_debian_source_clear(struct pk_debian_source *src)
{
	g_free(src->name);
	g_free(src->version);
	g_free(src->package);
	g_free(src->tarball);
	g_free(src->tag);
	memset(src, 0, sizeof *src);
}

char *pk_bases_ref(const char *name)
{
	if (g_str_has_prefix(name, "debian:"))
		return g_strconcat(PK_BASES_DEBIAN_TAG, name + strlen("debian:"), NULL);
	/* a tree's branch: "<tree>/<branch>" where no such ref or tag is meant */
	if (strchr(name, '/') && !g_str_has_prefix(name, "refs/") && !strchr(name, '~') && !strchr(name, '^'))
		return g_strconcat(PK_BASES_TREE_PREFIX, name, NULL);
	return g_strdup(name);
}

char *pk_bases_resolve(const struct pk_lab *lab, const char *name, GError **err)
{
	g_autofree char *ref = pk_bases_ref(name);
	g_autoptr(GError) e = NULL;
	char *id = pk_repo_resolve(lab, ref, &e);

	if (id || !g_str_has_prefix(name, "debian:")) {
		if (!id)
			g_propagate_error(err, g_steal_pointer(&e));
		return id;
	}
	pk_error(err, PK_ERROR_INPUT, "%s is not in the lab yet: 'printkbot setup --source %s' imports it", name, name);
	return NULL;
}

/* Why name is no base: a Debian one is not imported yet, anything else not in the lab. */
static int name_unknown(const struct pk_lab *lab, const char *name, const char *what, GError *why, GError **err)
{
	g_auto(GStrv) known = NULL;
	g_autofree char *names = NULL;

	if (g_str_has_prefix(name, "debian:"))
		return pk_error(err, PK_ERROR_INPUT, "%s%s", what, why->message);
	known = pk_bases_default(lab, PK_LAB_BASE_TAG);
	names = g_strjoinv(", ", known);
	return pk_error(err, PK_ERROR_INPUT, "%s%s: no such base or revision in the lab (its bases: %s; a "
			"[tree]'s as TREE/BRANCH; or a commit id)", what, name, names);
}

int pk_bases_check_names(const char *const *names, const char *what, GError **err)
{
	struct pk_lab lab;
	int rc = 0;

	if (!names || !*names || pk_lab_open(&lab, NULL) < 0)
		return 0;
	for (; *names && rc == 0 && pk_lab_ready(&lab); names++) {
		g_autoptr(GError) why = NULL;
		g_autofree char *id = pk_bases_resolve(&lab, *names, &why);

		if (!id)
			rc = name_unknown(&lab, *names, what, why, err);
	}
	pk_lab_clear(&lab);
	return rc;
}

void pk_base_choice_clear(struct pk_base_choice *c)
{
	g_free(c->name);
	g_free(c->rev);
	g_free(c->tried);
	memset(c, 0, sizeof *c);
}

/* Debian's bases the lab holds (printkbot-debian-* tags), newest version first, as "debian:VER". */
static GPtrArray *debian_bases(const struct pk_lab *lab)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) tags = pk_repo_refs(lab, "refs/tags/" PK_BASES_DEBIAN_TAG);

	for (guint i = 0; tags && i < tags->len; i++)
		g_ptr_array_add(out, g_strconcat("debian:", (char *)tags->pdata[i], NULL));
	g_ptr_array_sort(out, compare_versions_desc);
	return out;
}

char **pk_bases_default(const struct pk_lab *lab, const char *first)
{
	g_autoptr(GPtrArray) deb = debian_bases(lab);
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *first_ref = pk_bases_ref(first);
	g_autofree char *first_id = pk_repo_resolve(lab, first_ref, NULL);

	g_ptr_array_add(out, g_strdup(first));
	for (guint i = 0; i < deb->len; i++) {
		g_autofree char *ref = pk_bases_ref(deb->pdata[i]);
		g_autofree char *id = pk_repo_resolve(lab, ref, NULL);

		if (id && g_strcmp0(id, first_id))
			g_ptr_array_add(out, g_strdup(deb->pdata[i]));
	}
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
}

/* One base tried: 1 chosen, 0 not (why appended to tried), -1 error. */
static int try_base(struct pk_base_choice *out, GString *tried, const struct pk_lab *lab, const char *name,
		    const struct pk_patch *const *patches, guint n, bool three_way, GError **err)
{
	g_autofree char *ref = pk_bases_ref(name);
	g_autofree char *id = pk_repo_resolve(lab, ref, NULL);
	g_autofree char *failure = NULL;
	int rc;

	if (!id) {
		if (!three_way)
			g_string_append_printf(tried, "%s%s: not in the bot's tree", tried->len ? "; " : "", name);
		return 0;
	}
	if ((rc = pk_apply_series_check(&failure, lab, id, patches, n, three_way, err)) <= 0) {
		if (rc == 0 && !three_way)
			g_string_append_printf(tried, "%s%s: %s", tried->len ? "; " : "", name, failure);
		return rc;
	}
	out->name = g_strdup(name);
	out->rev = g_steal_pointer(&id);
	out->applies = true;
	out->three_way = three_way;
	return 1;
}

void pk_bases_refetch_clear(struct pk_bases_refetch *r)
{
	g_clear_pointer(&r->missed, g_hash_table_unref);
}

/*
 * base_commit, a full id the lab lacks: the trees fetched again when
 * refetch allows, then *kind and *type as the lab has it now; why says
 * where it was looked for.  A fetch that fails is logged and the next
 * tree tried: the series still has its bases.  -1 with err when the
 * repository cannot be read.
 */
static int refetch_for(enum pk_repo_id_kind *kind, const char **type, GString *why, const struct pk_lab *lab,
		       const char *base_commit, const GPtrArray *trees, struct pk_bases_refetch *refetch,
		       GError **err)
{
	g_autoptr(GString) fetched = g_string_new(NULL);
	double now = pk_now(), ago = now - refetch->last;

	g_string_append(why, "not in the bot's tree");
	if (refetch->fetches && ago < refetch->interval) {
		if (refetch->missed && g_hash_table_contains(refetch->missed, base_commit))
			g_string_append_printf(why, " nor in the trees it fetched again %.0f s ago", ago);
		else
			g_string_append_printf(why, " (the trees are fetched again for a base-commit at most "
					       "every %.0f s, the last time %.0f s ago)", refetch->interval, ago);
		return 0;
	}
	refetch->last = now;
	refetch->fetches++;
	if (!refetch->missed)
		refetch->missed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_hash_table_remove_all(refetch->missed);
	for (guint i = 0; i < trees->len; i++) {
		const struct pk_tree_config *t = trees->pdata[i];
		g_autoptr(GError) e = NULL;

		pk_info("base-commit %.12s is not in the lab: fetching tree %s", base_commit, t->name);
		if (pk_bases_fetch_tree(lab, t, &e) < 0) {
			pk_info("tree %s: %s", t->name, e->message);
			continue;
		}
		g_string_append_printf(fetched, "%s%s", fetched->len ? ", " : "", t->name);
	}
	if (pk_repo_id_published(kind, type, lab, base_commit, err) < 0)
		return -1;
	if (*kind != PK_REPO_ID_ABSENT) {
		g_string_truncate(why, 0);
		return 0;
	}
	g_hash_table_add(refetch->missed, g_strdup(base_commit));
	g_string_append_printf(why, " nor in the trees it fetched again (%s)",
			       fetched->len ? fetched->str : "none could be");
	return 0;
}

/*
 * The lab's id of base_commit into *out when it names a published commit
 * (bases.h); else *out NULL and why it is passed over appended to tried.
 * -1 with err when the repository cannot be read.
 */
static int find_base_commit(char **out, GString *tried, const struct pk_lab *lab, const char *base_commit,
			    const GPtrArray *trees, struct pk_bases_refetch *refetch, GError **err)
{
	size_t len = strlen(base_commit);
	bool hex = strspn(base_commit, "0123456789abcdef") == len;
	g_autoptr(GString) why = g_string_new(NULL);
	enum pk_repo_id_kind kind = PK_REPO_ID_ABSENT;
	const char *type = NULL;

	*out = NULL;
	if (!hex || len < 4 || len > 64)
		g_string_append(why, "not a commit id");
	else if (len == 64)
		g_string_append(why, "a SHA-256 id, and the bot's tree is SHA-1");
	else if (len != PK_REPO_ID_HEX)
		g_string_append_printf(why, "an abbreviated id (only a full %d-digit id is taken: a short "
				       "one may name another object tomorrow)", PK_REPO_ID_HEX);
	else if (pk_repo_id_published(&kind, &type, lab, base_commit, err) < 0)
		return -1;
	else if (kind == PK_REPO_ID_ABSENT && !(refetch && trees && trees->len))
		g_string_append(why, "not in the bot's tree");
	else if (kind == PK_REPO_ID_ABSENT &&
		 refetch_for(&kind, &type, why, lab, base_commit, trees, refetch, err) < 0)
		return -1;

	if (kind == PK_REPO_ID_PUBLISHED) {
		*out = g_strdup(base_commit);
		return 0;
	}
	if (kind == PK_REPO_ID_NOT_COMMIT)
		g_string_append_printf(why, "a %s, not a commit", type);
	else if (kind == PK_REPO_ID_UNPUBLISHED)
		g_string_append(why, "a commit in the history of no base and no fetched tree (one of "
				"the bot's own, or one a tree no longer has)");
	/* as replies show ids, 12 digits; one that is no hex is not repeated */
	if (hex)
		g_string_append_printf(tried, "base-commit %.12s: %s", base_commit, why->str);
	else
		g_string_append_printf(tried, "base-commit: %s", why->str);
	return 0;
}

int pk_bases_choose(struct pk_base_choice *out, const struct pk_lab *lab, const char *base_commit,
		    const GPtrArray *trees, struct pk_bases_refetch *refetch, const char *const *bases,
		    const struct pk_patch *const *patches, guint n, GError **err)
{
	g_autoptr(GString) tried = g_string_new(NULL);
	g_autofree char *named = NULL;
	int rc = 0;

	if (base_commit && find_base_commit(&named, tried, lab, base_commit, trees, refetch, err) < 0)
		return -1;
	memset(out, 0, sizeof *out);
	if (named) {
		/* the author said where the series goes: tested there, applying or not */
		out->name = g_strdup_printf("base-commit %.12s", named);
		out->rev = g_steal_pointer(&named);
		out->applies = true;
		return 0;
	}
	for (const char *const *b = bases; rc == 0 && b && *b; b++)
		rc = try_base(out, tried, lab, *b, patches, n, false, err);
	/* none takes it as it stands: each again with `git am -3`'s merge from the index lines' blobs */
	for (const char *const *b = bases; rc == 0 && b && *b; b++)
		rc = try_base(out, tried, lab, *b, patches, n, true, err);
	if (rc < 0)
		return -1;
	if (rc > 0 && out->three_way)
		g_string_append_printf(tried, "; so on %s by a 3-way merge", out->name);
	out->tried = tried->len ? g_strdup(tried->str) : NULL;
	if (rc == 0) {
		/* none applies: the first base, where the verdict says which patch fails and how */
		const char *first = bases && *bases ? *bases : PK_LAB_BASE_TAG;
		g_autofree char *ref = pk_bases_ref(first);

		out->name = g_strdup(first);
		out->rev = g_strdup(ref);
	}
	return 0;
}

void pk_bases_tried_reason(char **reason, const struct pk_base_choice *c)
{
	char *old = *reason;

	g_autoptr(GString) same = g_string_new(NULL), others = g_string_new(NULL);
	g_auto(GStrv) entries = NULL;

	if (!c->tried || c->applies)
		return;
	/* "base: why" each (try_base()): a base that fails as the one the reason is of is named, not said again */
	entries = g_strsplit(c->tried, "; ", -1);
	for (char **e = entries; *e; e++) {
		const char *why = strstr(*e, ": ");

		if (old && why && !strcmp(why + 2, old))
			g_string_append_printf(same, "%s%.*s", same->len ? ", " : "", (int)(why - *e), *e);
		else
			g_string_append_printf(others, "%s%s", others->len ? "; " : "", *e);
	}
	if (!others->len)
		*reason = g_strdup_printf("%s. No base the bot has takes the series: it fails so on each (%s).",
					  old, same->str);
	else
		*reason = g_strdup_printf("%s%sNo base takes the whole series: %s%s%s.", old ? old : "",
					  old ? ". " : "", same->str, same->len ? ": the same; " : "", others->str);
	g_free(old);
}

int pk_bases_fetch_tree(const struct pk_lab *lab, const struct pk_tree_config *t, GError **err)
{
	g_autoptr(GPtrArray) specs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	g_autoptr(GPtrArray) heads = NULL;

	for (char **b = t->branches; b && *b; b++)
		g_ptr_array_add(names, *b);
	for (char **b = t->watch; b && *b; b++)
		if (!g_ptr_array_find_with_equal_func(names, *b, g_str_equal, NULL))
			g_ptr_array_add(names, *b);
	for (guint i = 0; i < names->len; i++)
		g_ptr_array_add(specs, g_strdup_printf("+refs/heads/%s:" PK_BASES_TREE_PREFIX "%s/%s",
						       (char *)names->pdata[i], t->name, (char *)names->pdata[i]));
	g_ptr_array_add(specs, NULL);
	if (pk_repo_fetch(lab, t->url, (const char *const *)specs->pdata, t->watch ? &heads : NULL, err) < 0)
		return -1;
	/* a watched branch deleted there is gone here too: the daemon sees it so */
	for (char **b = t->watch; b && *b; b++) {
		g_autofree char *ref = g_strdup_printf(PK_BASES_TREE_PREFIX "%s/%s", t->name, *b);

		if (!g_ptr_array_find_with_equal_func(heads, *b, g_str_equal, NULL) &&
		    pk_repo_delete_ref(lab, ref, err) < 0)
			return -1;
	}
	return 0;
}

bool pk_tree_watches(const struct pk_tree_config *t, const char *branch)
{
	return t->watch && g_strv_contains((const char *const *)t->watch, branch);
}
