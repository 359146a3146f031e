/* state.c - the bot's own files about a build dir; see state.h. */
#include "lab/state.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "lab/layer.h"
#include "base/util.h"

#define OWN_SUFFIX ".state"

/* The build dir's own state dir, whatever is mounted over it. */
static char *own_dir(const char *build_dir)
{
	return g_strconcat(build_dir, OWN_SUFFIX, NULL);
}

/* Where writes go now: the layer's state dir when one is over build_dir, else its own. */
static char *current_dir(const char *build_dir)
{
	const char *layer = pk_layer_dir(build_dir);

	return layer ? g_build_filename(layer, "state", NULL) : own_dir(build_dir);
}

char *pk_state_dir(const char *build_dir, GError **err)
{
	g_autofree char *dir = current_dir(build_dir);

	if (g_mkdir_with_parents(dir, 0755) < 0) {
		pk_error(err, pk_errno_code(errno), "%s: %s", dir, g_strerror(errno));
		return NULL;
	}
	return g_steal_pointer(&dir);
}

char *pk_state_path(const char *build_dir, const char *name, GError **err)
{
	g_autofree char *dir = pk_state_dir(build_dir, err);

	return dir ? g_build_filename(dir, name, NULL) : NULL;
}

/* The path name is read from: the current state dir's, else (under a layer) the build dir's own. */
static char *found_path(const char *build_dir, const char *name)
{
	g_autofree char *cur = current_dir(build_dir), *own = NULL;
	char *path = g_build_filename(cur, name, NULL);

	if (g_file_test(path, G_FILE_TEST_EXISTS) || !pk_layer_dir(build_dir))
		return path;
	g_free(path);
	own = own_dir(build_dir);
	return g_build_filename(own, name, NULL);
}

int pk_state_read(char **out, const char *build_dir, const char *name, size_t cap, GError **err)
{
	g_autofree char *path = found_path(build_dir, name);
	g_autoptr(GError) local = NULL;

	if (!g_file_test(path, G_FILE_TEST_EXISTS))
		return 0;
	if (pk_read_file(out, NULL, path, cap, &local) < 0) {
		g_propagate_error(err, g_steal_pointer(&local));
		return -1;
	}
	return 1;
}

gboolean pk_state_stat(const char *build_dir, const char *name, struct stat *out_st)
{
	g_autofree char *path = found_path(build_dir, name);
	struct stat st;

	if (stat(path, &st) < 0)
		return FALSE;
	if (out_st)
		*out_st = st;
	return TRUE;
}

int pk_state_write(const char *build_dir, const char *name, const char *data, size_t len, GError **err)
{
	g_autofree char *path = pk_state_path(build_dir, name, err);

	return path ? pk_write_file(path, data, len, err) : -1;
}

int pk_state_remove(const char *build_dir, const char *name, GError **err)
{
	g_autofree char *dir = current_dir(build_dir);
	g_autofree char *path = g_build_filename(dir, name, NULL);

	if (g_unlink(path) < 0 && errno != ENOENT)
		return pk_error(err, pk_errno_code(errno), "%s: %s", path, g_strerror(errno));
	return 0;
}

int pk_state_remove_all(const char *build_dir, GError **err)
{
	g_autofree char *dir = own_dir(build_dir);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	/* flat: the bot writes plain files here, nothing else does */
	while (d && (name = g_dir_read_name(d))) {
		g_autofree char *path = g_build_filename(dir, name, NULL);

		if (g_unlink(path) < 0 && errno != ENOENT)
			return pk_error(err, pk_errno_code(errno), "%s: %s", path, g_strerror(errno));
	}
	if (g_rmdir(dir) < 0 && errno != ENOENT)
		return pk_error(err, pk_errno_code(errno), "%s: %s", dir, g_strerror(errno));
	return 0;
}
