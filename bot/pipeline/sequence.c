/*
 * sequence.c - items tested in order (sequence.h): a series, the base
 * chosen once and each patch tested on the commit the one before made;
 * a run of commits, the noise mask carried from parent to parent.
 */
#include "pipeline/sequence.h"

#include <string.h>

#include "lab/repo.h"

void pk_sequence_init(struct pk_sequence *s, const struct pk_lab *lab, struct pk_store *store)
{
	*s = (struct pk_sequence){ .lab = lab, .store = store, .patches = g_ptr_array_new() };
}

void pk_sequence_clear(struct pk_sequence *s)
{
	g_clear_pointer(&s->patches, g_ptr_array_unref);
	pk_base_choice_clear(&s->base);
	g_clear_pointer(&s->parent, g_free);
	g_clear_pointer(&s->noise_base, g_free);
}

/* The commit whose noise mask the next parent may borrow (test.h). */
static void set_noise_base(struct pk_sequence *s, const char *commit)
{
	char *old = s->noise_base;

	s->noise_base = g_strdup(commit);
	s->opts.noise_base = s->noise_base;
	g_free(old);
}

void pk_sequence_add(struct pk_sequence *s, const struct pk_patch *patch)
{
	g_ptr_array_add(s->patches, (gpointer)patch);
}

void pk_sequence_opts(struct pk_test_opts *out, const struct pk_test_config *test,
		      const struct pk_policy *policy, double timeout)
{
	out->policy = *policy;
	out->boot_timeout = timeout ? timeout : test->boot_timeout;
	out->derived_builds = test->derived_builds;
}

char **pk_sequence_bases(const struct pk_lab *lab, const struct pk_test_config *test)
{
	if (test->bases && *test->bases)
		return g_strdupv(test->bases);
	return pk_bases_default(lab, test->base ? test->base : PK_LAB_BASE_TAG);
}

/* A base asked for by name: that one, applying or not (the caller checked that the bot knows it). */
static int force_base(struct pk_sequence *s, const char *name, GError **err)
{
	g_autofree char *ref = pk_bases_ref(name);

	if (!(s->base.rev = pk_repo_resolve(s->lab, ref, err)))
		return -1;
	s->base.name = g_strdup(name);
	s->base.applies = true;
	return 0;
}

/* pk_bases_choose() with the patches a base can be tried with. */
static int choose(struct pk_sequence *s, const struct pk_sequence_where *w, GError **err)
{
	g_autoptr(GPtrArray) within = g_ptr_array_new();

	for (guint i = 0; i < s->patches->len; i++) {
		const struct pk_patch *p = s->patches->pdata[i];
		g_autofree char *over = p ? pk_patch_over_limits(p, &s->opts.policy) : NULL;

		/* one over the size limits is refused unapplied (pk_test_patch()): no base is tried with it */
		if (p && !over)
			g_ptr_array_add(within, (gpointer)p);
	}
	return pk_bases_choose(&s->base, s->lab, w->base_commit, w->trees, w->refetch, w->bases,
			       (const struct pk_patch *const *)within->pdata, within->len, err);
}

int pk_sequence_choose_base(struct pk_sequence *s, const struct pk_sequence_where *w, GError **err)
{
	if ((w->forced ? force_base(s, w->forced, err) : choose(s, w, err)) < 0)
		return -1;
	g_free(s->parent);
	s->parent = g_strdup(s->base.rev);
	set_noise_base(s, s->base.rev);
	return 0;
}

const char *pk_sequence_base_named(const struct pk_sequence *s)
{
	const char *name = s->base.name;

	return name && (g_str_has_prefix(name, "debian:") || !strcmp(name, PK_LAB_BASE_TAG)) ? name : s->base.rev;
}

int pk_sequence_test(struct pk_sequence *s, guint i, struct pk_test_result *out, GError **err)
{
	const struct pk_patch *patch = s->patches->pdata[i];

	g_return_val_if_fail(patch, -1);
	if (pk_test_patch(out, s->lab, s->store, &s->opts, patch, s->parent, err) < 0)
		return -1;
	if (out->verdict == PK_VERDICT_DOES_NOT_APPLY)
		pk_bases_tried_reason(&out->reason, &s->base);
	return 0;
}

void pk_sequence_advance(struct pk_sequence *s, const char *after_commit)
{
	if (after_commit) {
		g_free(s->parent);
		s->parent = g_strdup(after_commit);
	}
}

void pk_sequence_start_commits(struct pk_sequence *s, const char *noise_base)
{
	set_noise_base(s, noise_base);
}

int pk_sequence_test_commit(struct pk_sequence *s, const char *commit, struct pk_test_result *out,
			    GError **err)
{
	if (pk_test_commit(out, s->lab, s->store, &s->opts, commit, err) < 0)
		return -1;
	if (!out->noise_commit || !g_strcmp0(out->noise_commit, s->noise_base))
		return 0;
	set_noise_base(s, out->noise_commit);
	return 1;
}
