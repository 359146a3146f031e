/* layer.c - the throwaway layer over a build dir; see layer.h. */
#define _GNU_SOURCE
#include "lab/layer.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/util.h"
#include "lab/sandbox.h"

/*
 * The layers this process has mounted, build dir -> struct layer.  A
 * mount is a fact of the process's namespace, not of any one lab value
 * (a derived lab and the lab it came from share the cache), so the table
 * is the process's too.
 */
struct layer {
	char *commit;   /* what it was made for */
	char *dir;      /* cache/layers/<name>.<pid>: upper/ and work/ */
};

static GHashTable *layers;
static int namespace_state;   /* 0 not tried, 1 ours, -1 failed */
static char *namespace_why;

static void layer_free(gpointer p)
{
	struct layer *l = p;

	g_free(l->commit);
	g_free(l->dir);
	g_free(l);
}

static GHashTable *layer_table(void)
{
	if (!layers)
		layers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, layer_free);
	return layers;
}

int pk_layer_namespace(GError **err)
{
	if (namespace_state == 0) {
		/* a slave: mounts of the host still show here, ours never show there */
		if (unshare(CLONE_NEWNS) < 0) {
			namespace_why = g_strdup_printf("cannot make a mount namespace (%s): layers need root",
							g_strerror(errno));
			namespace_state = -1;
		} else if (mount("none", "/", "none", MS_REC | MS_SLAVE, NULL) < 0) {
			/* source and type are ignored for a propagation change; valgrind reads them */
			namespace_why = g_strdup_printf("cannot make / a slave mount: %s", g_strerror(errno));
			namespace_state = -1;
		} else {
			namespace_state = 1;
		}
	}
	if (namespace_state < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s", namespace_why);
	return 0;
}

/* The overlay's options for lower, upper and work; NULL when a path would break their syntax. */
static char *overlay_options(const char *lower, const char *upper, const char *work)
{
	const char *paths[] = { lower, upper, work };

	for (size_t i = 0; i < G_N_ELEMENTS(paths); i++)
		if (strpbrk(paths[i], ",:\\"))
			return NULL;
	return g_strdup_printf("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
}

/*
 * Make dir a tmpfs of size bytes (0: no cap, plain dir on the cache's
 * disk) holding upper/ and work/, and mount the overlay on lower; -1 with
 * err.  The tmpfs is the cap on what one build may write: without it a
 * patch's build could fill the cache's file system, which every other
 * build and the store share.
 */
static int mount_layer(const char *lower, const char *dir, guint64 size, GError **err)
{
	g_autofree char *upper = g_build_filename(dir, "upper", NULL);
	g_autofree char *work = g_build_filename(dir, "work", NULL);
	g_autofree char *opts = overlay_options(lower, upper, work);
	g_autofree char *tmpfs = g_strdup_printf("size=%" G_GUINT64_FORMAT ",mode=0755", size);
	struct stat st;

	if (!opts)
		return pk_error(err, PK_ERROR_FAILED, "%s: a layer cannot be mounted on a path with ',', ':' or '\\'",
				lower);
	if (pk_remove_tree(dir, err) < 0)
		return -1;
	if (g_mkdir_with_parents(dir, 0755) < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", dir, g_strerror(errno));
	if (size && mount("printkbot-layer", dir, "tmpfs", MS_NOSUID | MS_NODEV, tmpfs) < 0)
		return pk_error(err, PK_ERROR_FAILED, "cannot mount a tmpfs of %" G_GUINT64_FORMAT " MiB on %s: %s",
				size >> 20, dir, g_strerror(errno));
	if (g_mkdir_with_parents(upper, 0755) < 0 || g_mkdir_with_parents(work, 0700) < 0)
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", dir, g_strerror(errno));
	/* the merged root takes the upper root's owner and mode: the lower's */
	if (stat(lower, &st) == 0 && (chown(upper, st.st_uid, st.st_gid) < 0 || chmod(upper, st.st_mode & 07777) < 0))
		return pk_error(err, PK_ERROR_FAILED, "%s: %s", upper, g_strerror(errno));
	if (mount("overlay", lower, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
		return pk_error(err, PK_ERROR_FAILED, "cannot mount a layer on %s: %s", lower, g_strerror(errno));
	return 0;
}

bool pk_layer_usable(const char *cache, char **why)
{
	static int probed;   /* 0 not yet, 1 works, -1 does not */
	static char *probe_why;

	if (!probed) {
		g_autoptr(GError) err = NULL;
		g_autofree char *dir = g_strdup_printf("%s/layers/probe.%ld", cache, (long)getpid());
		g_autofree char *lower = g_build_filename(dir, "lower", NULL);
		g_autofree char *layer = g_build_filename(dir, "layer", NULL);

		if (pk_layer_namespace(&err) < 0) {
			probe_why = g_strdup(err->message);
		} else if (g_mkdir_with_parents(lower, 0755) < 0) {
			probe_why = g_strdup_printf("%s: %s", lower, g_strerror(errno));
		} else if (mount_layer(lower, layer, pk_sandbox_settings()->layer_size ? 1 << 20 : 0, &err) < 0) {
			probe_why = g_strdup_printf("overlayfs does not work here: %s", err->message);
		} else if (umount2(lower, MNT_DETACH) < 0) {
			probe_why = g_strdup_printf("cannot unmount a layer: %s", g_strerror(errno));
		}
		umount2(layer, MNT_DETACH);   /* its tmpfs, if one was mounted */
		pk_remove_tree(dir, NULL);
		probed = probe_why ? -1 : 1;
	}
	if (probed < 0 && why)
		*why = g_strdup(probe_why);
	return probed > 0;
}

int pk_layer_drop(const char *build_dir, GError **err)
{
	struct layer *l = layers ? g_hash_table_lookup(layers, build_dir) : NULL;
	int rc = 0;

	if (!l)
		return 0;
	/* detached: a child that still has a file open there (it is being killed) cannot keep it */
	if (umount2(build_dir, MNT_DETACH) < 0 && errno != EINVAL)
		rc = pk_error(err, PK_ERROR_FAILED, "cannot unmount the layer on %s: %s", build_dir,
			      g_strerror(errno));
	else if (umount2(l->dir, MNT_DETACH) < 0 && errno != EINVAL)   /* the tmpfs it was on */
		rc = pk_error(err, PK_ERROR_FAILED, "cannot unmount %s: %s", l->dir, g_strerror(errno));
	else if (pk_remove_tree(l->dir, err) < 0)
		rc = -1;
	g_hash_table_remove(layers, build_dir);
	return rc;
}

void pk_layer_drop_all(void)
{
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	GHashTableIter it;
	gpointer key;

	if (!layers)
		return;
	/* copied: each drop removes its key from the table */
	g_hash_table_iter_init(&it, layers);
	while (g_hash_table_iter_next(&it, &key, NULL))
		g_ptr_array_add(dirs, g_strdup(key));
	for (guint i = 0; i < dirs->len; i++) {
		g_autoptr(GError) err = NULL;

		if (pk_layer_drop(dirs->pdata[i], &err) < 0)
			pk_info("%s", err->message);
	}
}

bool pk_layer_over(const char *build_dir, const char **out_commit)
{
	struct layer *l = layers ? g_hash_table_lookup(layers, build_dir) : NULL;

	if (l && out_commit)
		*out_commit = l->commit;
	return l != NULL;
}

const char *pk_layer_dir(const char *build_dir)
{
	struct layer *l = layers ? g_hash_table_lookup(layers, build_dir) : NULL;

	return l ? l->dir : NULL;
}

int pk_layer_enter(const char *cache, const char *build_dir, const char *commit, GError **err)
{
	g_autofree char *name = g_path_get_basename(build_dir);
	g_autofree char *why = NULL;
	const char *made_for = NULL;
	struct layer *l;

	if (pk_layer_over(build_dir, &made_for) && !g_strcmp0(made_for, commit))
		return 0;
	if (pk_layer_drop(build_dir, err) < 0)
		return -1;
	if (!pk_layer_usable(cache, &why))
		return pk_error(err, PK_ERROR_FAILED, "cannot build %.12s in a throwaway layer: %s", commit, why);
	/* owned before the mount: a chown through the layer would copy every file up */
	if (pk_sandbox_own(build_dir, err) < 0)
		return -1;
	l = g_new0(struct layer, 1);
	l->commit = g_strdup(commit);
	l->dir = g_strdup_printf("%s/layers/%s.%ld", cache, name, (long)getpid());
	if (mount_layer(build_dir, l->dir, pk_sandbox_settings()->layer_size, err) < 0) {
		umount2(l->dir, MNT_DETACH);
		pk_remove_tree(l->dir, NULL);
		layer_free(l);
		return -1;
	}
	g_hash_table_insert(layer_table(), g_strdup(build_dir), l);
	return 0;
}

int pk_layer_sweep(const char *cache, GError **err)
{
	g_autofree char *dir = g_build_filename(cache, "layers", NULL);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *entry;

	while (d && (entry = g_dir_read_name(d))) {
		g_autofree char *path = g_build_filename(dir, entry, NULL);
		bool ours = g_str_has_prefix(entry, "probe.");   /* another process's probe, at work now */
		GHashTableIter it;
		gpointer value;

		if (layers) {
			g_hash_table_iter_init(&it, layers);
			while (!ours && g_hash_table_iter_next(&it, NULL, &value))
				ours = !strcmp(((struct layer *)value)->dir, path);
		}
		if (!ours && pk_remove_tree(path, err) < 0)
			return -1;
	}
	return 0;
}
