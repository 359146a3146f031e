/*
 * settings.h - the policy of what may be built ([policy], lab/policy.h
 * says what each setting does): here on the ground floor because a
 * patch's size limits are checked where a patch is read
 * (base/patch.h's pk_patch_over_limits()).  The sandbox's settings are
 * lab/sandbox.h's.
 */
#ifndef PK_SETTINGS_H
#define PK_SETTINGS_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

enum pk_sandbox_mode {
	PK_SANDBOX_ON,    /* the default: wrap; refuse patches when bwrap is missing */
	PK_SANDBOX_OFF,   /* build and boot unwrapped (said explicitly in the config) */
};

struct pk_policy {
	bool allow_build_system;  /* Makefile, Kbuild, Kconfig*, scripts/, tools/ */
	bool allow_other_files;   /* files the build may read but *.c and *.h (lab/policy.h's
	                             PK_PATH_OTHER); those no build reads are always allowed */
	unsigned max_files;       /* files one patch may touch */
	unsigned max_lines;       /* diff lines one patch may carry */
	enum pk_sandbox_mode sandbox; /* on: build only in the sandbox; off: without it */
	size_t max_mail_size;     /* bytes of one mail (or file given to test), 0 = none;
	                             checked by whoever reads it, before parsing */
};

#define PK_POLICY_DEFAULT { false, false, 200, 20000, PK_SANDBOX_ON, 64u << 20 }

#endif
