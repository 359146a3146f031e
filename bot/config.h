/*
 * config.h - printkbot's configuration file (GKeyFile syntax, see
 * config.example).  Every key is optional; a missing file given by name is
 * an error, the default file (/etc/printkbot.conf) missing is not.
 *
 * pk_config_load() fills a struct pk_config the caller clears with
 * pk_config_clear().  A bad value (a word where a number belongs, an
 * unknown policy key) is an error naming the file, the group and the key,
 * so a typo never silently relaxes the policy.
 */
#ifndef PK_CONFIG_H
#define PK_CONFIG_H

#include <glib.h>

#include "policy.h"

struct pk_config {
	char *path;               /* the file read, or NULL when none was */
	char *db;                 /* [store] path, or NULL for the default */
	char *base;               /* [test] base revision, or NULL for printkbot-base */
	double boot_timeout;      /* [test] boot_timeout seconds, 0 = default */
	struct pk_policy policy;  /* [policy] */
	GKeyFile *keys;           /* the whole file, for the modules that read their own groups */
};

/* Read path (NULL: $PRINTKBOT_CONFIG, else /etc/printkbot.conf if it exists). */
int pk_config_load(struct pk_config *out, const char *path, GError **err);
void pk_config_clear(struct pk_config *config);

#endif
