/*
 * config.c - the configuration file, read with GLib's GKeyFile.
 */
#include "config.h"

#include <string.h>

#include "util.h"

#define DEFAULT_CONFIG "/etc/printkbot.conf"

/* The keys each group may hold: an unknown one is a typo, and an error. */
static const char *const known_keys[][8] = {
	{ "store", "path", NULL },
	{ "test", "base", "boot_timeout", NULL },
	{ "policy", "allow_build_system", "allow_other_files", "max_files", "max_lines", NULL },
};

static int check_known_keys(GKeyFile *kf, const char *path, GError **err)
{
	for (guint g = 0; g < G_N_ELEMENTS(known_keys); g++) {
		const char *group = known_keys[g][0];
		g_auto(GStrv) keys = g_key_file_get_keys(kf, group, NULL, NULL);

		for (char **k = keys; k && *k; k++) {
			gboolean known = FALSE;
			for (guint i = 1; known_keys[g][i]; i++)
				known |= !strcmp(*k, known_keys[g][i]);
			if (!known)
				return pk_error(err, PK_ERROR_INPUT, "%s: [%s]: unknown key '%s'", path, group, *k);
		}
	}
	return 0;
}

/* Read an optional typed key; a present but malformed one is an error naming it. */
static int get_bool(GKeyFile *kf, const char *path, const char *group, const char *key, bool *out, GError **err)
{
	g_autoptr(GError) e = NULL;
	gboolean v;

	if (!g_key_file_has_key(kf, group, key, NULL))
		return 0;
	v = g_key_file_get_boolean(kf, group, key, &e);
	if (e)
		return pk_error(err, PK_ERROR_INPUT, "%s: [%s] %s: %s", path, group, key, e->message);
	*out = v;
	return 0;
}

static int get_uint(GKeyFile *kf, const char *path, const char *group, const char *key, unsigned *out, GError **err)
{
	g_autoptr(GError) e = NULL;
	guint64 v;

	if (!g_key_file_has_key(kf, group, key, NULL))
		return 0;
	v = g_key_file_get_uint64(kf, group, key, &e);
	if (e || v > G_MAXUINT)
		return pk_error(err, PK_ERROR_INPUT, "%s: [%s] %s: %s", path, group, key,
				e ? e->message : "too large");
	*out = (unsigned)v;
	return 0;
}

static int get_double(GKeyFile *kf, const char *path, const char *group, const char *key, double *out, GError **err)
{
	g_autoptr(GError) e = NULL;
	double v;

	if (!g_key_file_has_key(kf, group, key, NULL))
		return 0;
	v = g_key_file_get_double(kf, group, key, &e);
	if (e || v < 0)
		return pk_error(err, PK_ERROR_INPUT, "%s: [%s] %s: %s", path, group, key,
				e ? e->message : "must not be negative");
	*out = v;
	return 0;
}

int pk_config_load(struct pk_config *out, const char *path, GError **err)
{
	struct pk_config c = { .policy = PK_POLICY_DEFAULT };
	g_autoptr(GKeyFile) kf = g_key_file_new();
	const char *env = g_getenv("PRINTKBOT_CONFIG");
	g_autoptr(GError) e = NULL;

	if (!path && env && *env)
		path = env;
	if (!path && !g_file_test(DEFAULT_CONFIG, G_FILE_TEST_EXISTS)) {
		*out = c;
		return 0;
	}
	if (!path)
		path = DEFAULT_CONFIG;
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &e))
		return pk_error(err, PK_ERROR_INPUT, "%s: %s", path, e->message);
	if (check_known_keys(kf, path, err) < 0 ||
	    get_double(kf, path, "test", "boot_timeout", &c.boot_timeout, err) < 0 ||
	    get_bool(kf, path, "policy", "allow_build_system", &c.policy.allow_build_system, err) < 0 ||
	    get_bool(kf, path, "policy", "allow_other_files", &c.policy.allow_other_files, err) < 0 ||
	    get_uint(kf, path, "policy", "max_files", &c.policy.max_files, err) < 0 ||
	    get_uint(kf, path, "policy", "max_lines", &c.policy.max_lines, err) < 0)
		return -1;
	c.path = g_strdup(path);
	c.db = g_key_file_get_string(kf, "store", "path", NULL);
	c.base = g_key_file_get_string(kf, "test", "base", NULL);
	c.keys = g_steal_pointer(&kf);
	*out = c;
	return 0;
}

void pk_config_clear(struct pk_config *config)
{
	g_free(config->path);
	g_free(config->db);
	g_free(config->base);
	if (config->keys)
		g_key_file_unref(config->keys);
	memset(config, 0, sizeof *config);
}
