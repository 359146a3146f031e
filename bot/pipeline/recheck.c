/*
 * recheck.c - confirmation boots (private.h): a change in the boot log is
 * reported only when it repeats with both kernels booted again, now.
 *
 * The base's noise mask was learnt from boots made when the base was
 * first built, perhaps under another load.  On a busy host a record whose
 * presence follows timing (a PS/2 mouse probed before or after init is
 * done) can come out in the after boot and in none of the base's.
 * Booting both sides again one after the other puts them under the same
 * conditions: what varies between a side's boots is learnt into the mask,
 * and only the changes that hold are counted.  Changes the printk index
 * explains (each record's format is in one kernel only) need no rounds.
 */
#include "pipeline/private.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lab/repo.h"
#include "lab/boot.h"
#include "store/store.h"
#include "base/beneath.h"
#include "base/util.h"

/*
 * Rounds of confirmation, each one more boot of each side (~2 s each
 * under TCG).  The first round re-measures both sides under the load of
 * the moment, which the stored base boots cannot speak for; a second runs
 * only when the first found records that vary, since a load that brings
 * out one timing-dependent record often brings out another.  So a change
 * that holds costs one rebuild of the before side and two boots, an
 * unstable one up to four boots, and a patch whose boot log did not
 * change nothing at all.
 */
#define RECHECK_ROUNDS 2

enum { BEFORE, AFTER };

static const char *const side_name[] = { "before", "after" };

struct recheck {
	const struct pk_lab *lab;
	const struct pk_test_opts *opts;
	struct pk_test_side *side[2];
	char *image[2];          /* each side's kernel, kept out of the build dir */
	GPtrArray *boots[2];     /* struct pk_boot_result*: the boots made here */
	struct pk_noise *learnt[2];   /* what varied between each side's boots */
	struct pk_kdiff *first;       /* the diff as it was before any round */
};

static void boot_result_free(struct pk_boot_result *b)
{
	pk_boot_result_clear(b);
	g_free(b);
}

static void recheck_clear(struct recheck *rc)
{
	for (int i = BEFORE; i <= AFTER; i++) {
		if (rc->image[i])
			unlink(rc->image[i]);
		g_free(rc->image[i]);
		g_ptr_array_unref(rc->boots[i]);
		pk_noise_free(rc->learnt[i]);
	}
}

/* The largest kernel image kept: a tinyconfig vmlinux is ~10 MiB, a derived config's tens. */
#define IMAGE_CAP (G_GUINT64_CONSTANT(1) << 30)

/*
 * Copy a built kernel to the side's image, since the next build overwrites
 * the build dir's.  The build dir is the sandbox's to write: copied as
 * beneath.h reads, never through a link it left there.
 */
static int keep_image(struct recheck *rc, int which, const char *vmlinux, GError **err)
{
	g_autofree char *dir = g_build_filename(rc->lab->cache, "recheck", NULL);
	g_autofree char *from_dir = g_path_get_dirname(vmlinux), *from = g_path_get_basename(vmlinux);
	int copied;

	/* readable by the sandbox's user, who boots it */
	if (g_mkdir_with_parents(dir, 0755) < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", dir, g_strerror(errno));
	rc->image[which] = g_strdup_printf("%s/%s.vmlinux", dir, side_name[which]);
	if ((copied = pk_beneath_copy(from_dir, from, rc->image[which], IMAGE_CAP, err)) <= 0) {
		if (copied == 0)
			pk_error(err, PK_ERROR_FAILED, "%s: no such file", vmlinux);
		g_clear_pointer(&rc->image[which], g_free);
		return -1;
	}
	return 0;
}

/*
 * Check out and build a side again and keep its kernel: 1 when it no
 * longer builds (the lab changed under it; nothing can be confirmed).
 */
static int rebuild(struct recheck *rc, int which, GError **err)
{
	struct pk_test_side s = { .commit = rc->side[which]->commit };
	int ret = -1;

	if (pk_repo_checkout(rc->lab, s.commit, err) < 0 || pk_pipeline_build(&s, rc->lab, rc->opts, err) < 0)
		goto out;
	ret = s.build.ok ? keep_image(rc, which, s.build.vmlinux, err) : 1;
out:
	s.commit = NULL;   /* borrowed */
	pk_test_side_clear(&s);
	return ret;
}

/* Both kernels kept: the after one first when the build dir holds it, so only the before side is rebuilt. */
static int keep_images(struct recheck *rc, bool after_built, GError **err)
{
	int ret;

	if (after_built)
		ret = keep_image(rc, AFTER, rc->side[AFTER]->build.vmlinux, err);
	else
		ret = rebuild(rc, AFTER, err);
	return ret ? ret : rebuild(rc, BEFORE, err);
}

/* Boot a side's kept kernel once more: 1 when that boot did not go well. */
static int boot_again(struct recheck *rc, int which, GError **err)
{
	struct pk_boot_result *boot = g_new0(struct pk_boot_result, 1);

	if (pk_pipeline_boot(rc->side[which], rc->lab, rc->opts, rc->image[which], "booting again", boot,
			     err) < 0) {
		boot_result_free(boot);
		return -1;
	}
	g_ptr_array_add(rc->boots[which], boot);
	return boot->status == PK_BOOT_OK ? 0 : 1;
}

/* What varies between a side's compared boot and its boots made here. */
static struct pk_noise *learn_side(const struct recheck *rc, int which)
{
	GPtrArray *boots = rc->boots[which];
	g_autofree const struct pk_capture **caps = g_new(const struct pk_capture *, boots->len + 1);

	caps[0] = rc->side[which]->boot.capture;
	for (guint i = 0; i < boots->len; i++)
		caps[i + 1] = ((struct pk_boot_result *)boots->pdata[i])->capture;
	return pk_noise_learn(caps, boots->len + 1);
}

/* The messages of first's boot-log changes that final no longer has. */
static GPtrArray *dropped_changes(const struct pk_kdiff *first, const struct pk_kdiff *final)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) held = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint i = 0; i < final->changes->len; i++)
		g_hash_table_add(held, ((struct pk_change *)final->changes->pdata[i])->message);
	for (guint i = 0; i < first->changes->len; i++) {
		const struct pk_change *c = first->changes->pdata[i];
		if (!g_hash_table_contains(held, c->message))
			g_ptr_array_add(out, g_strdup(c->message));
	}
	return out;
}

/*
 * The mask that served this test (the before side's own, or the one it
 * was lent) learns what varied between the before side's boots, so the
 * next patch on it does not pay for the same record again.  Only the
 * before side's: a record that varies after a patch may be the patch's.
 */
static int store_learnt(struct pk_store *store, const struct pk_lab *lab, const struct pk_test_result *res,
			const struct pk_noise *learnt, unsigned boots, GError **err)
{
	g_auto(GStrv) keys = NULL;
	gint64 build_id = res->before.build_id;
	int found = 1;

	if (!store || !pk_noise_size(learnt))
		return 0;
	if (res->noise_commit)
		found = pk_store_find_build(store, res->noise_commit, lab->config_hash, &build_id, err);
	if (found <= 0 || !build_id)
		return found < 0 ? -1 : 0;
	keys = pk_noise_keys(learnt);
	return pk_store_add_noise(store, build_id, (const char *const *)keys, boots, err);
}

/* One round: both sides booted again, the mask widened, the diff made again.  1: a boot failed. */
static int recheck_round(struct recheck *rc, struct pk_test_result *res, struct pk_noise **noise, GError **err)
{
	int ret;

	if ((ret = boot_again(rc, BEFORE, err)) != 0 || (ret = boot_again(rc, AFTER, err)) != 0)
		return ret;
	if (!*noise)
		*noise = pk_noise_from_keys(NULL);
	for (int i = BEFORE; i <= AFTER; i++) {
		pk_noise_free(rc->learnt[i]);
		rc->learnt[i] = learn_side(rc, i);
		pk_noise_add(*noise, rc->learnt[i]);
	}
	if (res->diff != rc->first)
		pk_kdiff_free(res->diff);
	res->diff = pk_kdiff_captures(res->before.boot.capture, res->after.boot.capture, *noise);
	res->recheck_rounds++;
	return 0;
}

int pk_pipeline_recheck(struct pk_test_result *res, const struct pk_lab *lab, struct pk_store *store,
			const struct pk_test_opts *opts, struct pk_noise **noise, bool after_built,
			GError **err)
{
	struct recheck rc = { .lab = lab, .opts = opts, .side = { &res->before, &res->after } };
	int ret;

	/*
	 * Nothing to confirm when every change is of a format the patch itself
	 * added, removed or changed (kdiff.h): that record cannot come out of
	 * the other kernel, whatever the timing.  This is most patches that
	 * change a message printed at boot, and saves a rebuild and two boots.
	 */
	if (!res->diff || !res->diff->changes->len || pk_kdiff_explained_by_index(res->diff))
		return 0;
	for (int i = BEFORE; i <= AFTER; i++)
		rc.boots[i] = g_ptr_array_new_with_free_func((GDestroyNotify)boot_result_free);
	rc.first = res->diff;
	if ((ret = keep_images(&rc, after_built, err)) != 0)
		goto out;
	for (unsigned round = 0; round < RECHECK_ROUNDS; round++) {
		guint held = res->diff->changes->len;

		if ((ret = recheck_round(&rc, res, noise, err)) != 0 ||
		    !res->diff->changes->len || res->diff->changes->len >= held)
			break;
	}
	if (ret >= 0)
		ret = store_learnt(store, lab, res, rc.learnt[BEFORE], res->recheck_rounds, err);
out:
	/* the review says when no round was made: the changes are then unconfirmed, not dropped */
	if (ret > 0)
		pk_info("the console changes could not be confirmed (a side no longer built or booted)");
	res->unstable = dropped_changes(rc.first, res->diff);
	if (res->diff != rc.first)
		pk_kdiff_free(rc.first);
	recheck_clear(&rc);
	return ret < 0 ? -1 : 0;
}
