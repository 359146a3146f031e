/*
 * sequence.h - items tested in order.  A series run: the patches of one
 * series, each on the commit the one before made.  What `printkbot
 * test`, the daemon's series job and its command job (a series tested
 * again) all do: choose the base the first patch goes on (lab/bases.h),
 * take the test options from the config, test each patch on the parent
 * (test.h) with a does-not-apply naming every base tried, and advance
 * the parent.  A commit run (`printkbot run`, the daemon's push job):
 * the commits of a range, each on its own parent, the noise mask learnt
 * on one parent carried to the next ones.
 *
 * What each does with a result stays with it: the command prints it and
 * stores it; the daemon stores it with its reply in one transaction
 * under its lease.  So pk_sequence_test() hands the result back, and the
 * caller advances the parent (pk_sequence_advance()) once it has kept it.
 */
#ifndef PK_SEQUENCE_H
#define PK_SEQUENCE_H

#include <glib.h>

#include "base/patch.h"
#include "base/settings.h"
#include "lab/bases.h"
#include "lab/lab.h"
#include "pipeline/test.h"

struct pk_store;

/* [test]: how patches are tested, whoever asks. */
struct pk_test_config {
	char *base;               /* base: a revision, or NULL for printkbot-base */
	char **bases;             /* bases: the bases a series may go on, in order
	                             ("debian:6.12", "net/main"); NULL: base alone */
	double boot_timeout;      /* boot_timeout seconds, 0 = default */
	unsigned derived_builds;  /* derived_builds: derived build dirs kept, 0 = default */
	char *rules;              /* rules: a log-monitor rule file (pipeline/monitor.h), or NULL */
	const struct pk_arch *arch; /* arch: what patches are built and booted for (lab/arch.h);
	                               NULL (no config file): x86_64 */
};

struct pk_sequence {
	const struct pk_lab *lab;     /* borrowed; taken by the caller */
	struct pk_store *store;       /* borrowed; NULL: nothing cached or kept */
	struct pk_test_opts opts;     /* the caller's (pk_sequence_opts()); noise_base is the base's */
	GPtrArray *patches;           /* const struct pk_patch*, borrowed, in order; NULL: a mail whose
	                                 patch is gone, never tested */
	struct pk_base_choice base;   /* where the series goes (pk_sequence_choose_base()) */
	char *parent;                 /* what the next patch is applied on */
	char *noise_base;             /* opts.noise_base's storage */
};

/* An empty run on lab and store (both borrowed); pk_sequence_clear() frees what it holds. */
void pk_sequence_init(struct pk_sequence *s, const struct pk_lab *lab, struct pk_store *store);
void pk_sequence_clear(struct pk_sequence *s);
/* The next patch of the series (borrowed; NULL: one whose mail has no patch any more). */
void pk_sequence_add(struct pk_sequence *s, const struct pk_patch *patch);

/*
 * The test options the config gives: its [policy], and [test]'s
 * derived_builds and boot timeout (timeout, when not 0: a command
 * line's).  What else the caller sets (rules, build_without_churn) it
 * sets after.
 */
void pk_sequence_opts(struct pk_test_opts *out, const struct pk_test_config *test,
		      const struct pk_policy *policy, double timeout);

/*
 * The bases a series may go on when nothing names one: [test]
 * bases, else its base (PK_LAB_BASE_TAG when unset) and every Debian
 * base the lab has (pk_bases_default()).  NULL-terminated, g_strfreev().
 */
char **pk_sequence_bases(const struct pk_lab *lab, const struct pk_test_config *test);

/* What decides where a series goes. */
struct pk_sequence_where {
	const char *base_commit;          /* the series' base-commit (its mail's), or NULL */
	const char *forced;               /* a base asked for by name (a command by mail): that one,
	                                     applying or not, nothing else tried; NULL: choose */
	const char *const *bases;         /* the bases tried in order (pk_sequence_bases()) */
	const GPtrArray *trees;           /* the [tree]s, fetched again for a base-commit the lab lacks */
	struct pk_bases_refetch *refetch; /* how often that may be (bases.h); NULL: never */
};

/*
 * Choose s->base (pk_bases_choose(): the base-commit, else the first base
 * on which the series applies whole, else by a 3-way merge, else the
 * first), trying only the patches within the policy's size limits (one
 * over them is refused unapplied by pk_test_patch(): no base is tried
 * with it); or the base w->forced names, resolved in the lab.  The
 * parent is then the base, and so is opts.noise_base (a parent of the
 * series never built borrows its base's mask, test.h).  -1 with err when
 * the lab cannot be used or a forced base does not resolve.
 */
int pk_sequence_choose_base(struct pk_sequence *s, const struct pk_sequence_where *w, GError **err);

/*
 * How a command that tests the series again names its base: a Debian
 * base by its name, a branch (it moves) or a base-commit by the commit.
 */
const char *pk_sequence_base_named(const struct pk_sequence *s);

/*
 * Test patch i (not NULL) on the parent into *out (pk_test_result_clear()):
 * pk_test_patch(), a does-not-apply's reason naming every base tried
 * when the series applies on none.  The parent is not advanced: the
 * caller does (pk_sequence_advance()) once it keeps the result.  -1 with
 * err when the bot cannot work, as pk_test_patch().
 */
int pk_sequence_test(struct pk_sequence *s, guint i, struct pk_test_result *out, GError **err);

/* The next patch goes on after_commit (a patch's after.commit; NULL: where the last one went). */
void pk_sequence_advance(struct pk_sequence *s, const char *after_commit);

/*
 * A commit run: no base to choose, each commit goes on its own parent.
 * noise_base: the commit whose noise mask the first parent may borrow
 * (a range's base, the tip before a fast-forward; NULL: none).
 */
void pk_sequence_start_commits(struct pk_sequence *s, const char *noise_base);

/*
 * Test commit on its parent into *out (pk_test_result_clear()):
 * pk_test_commit().  The noise mask its parent's boots learnt or found
 * serves the commits after it.  1 when that mask is a new one to carry,
 * 0 when not, -1 with err when the bot cannot work, as pk_test_commit().
 */
int pk_sequence_test_commit(struct pk_sequence *s, const char *commit, struct pk_test_result *out,
			    GError **err);

#endif
