/*
 * settings.h - what the configuration (config.h) sets for the lab: the
 * sandbox (lab/sandbox.h says what each setting does) and the policy of
 * what may be built (lab/policy.h).  Plain data, here so that config.h
 * below the lab can fill them without including the lab.
 */
#ifndef PK_SETTINGS_H
#define PK_SETTINGS_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/proc.h"

enum pk_sandbox_mode {
	PK_SANDBOX_ON,    /* the default: wrap; refuse patches when bwrap is missing */
	PK_SANDBOX_OFF,   /* build and boot unwrapped (said explicitly in the config) */
};

/* The unprivileged user builds and boots run as when the bot runs as root. */
#define PK_SANDBOX_USER "printkbot-build"

/* The compiler a kernel build runs ([build] cc); lab/build.c says how each is run. */
enum pk_build_cc {
	PK_BUILD_CC_AUTO,     /* ccache when installed, else gcc (the default) */
	PK_BUILD_CC_GCC,
	PK_BUILD_CC_CCACHE,   /* its cache read-only inside the sandbox */
	PK_BUILD_CC_ICECC,    /* icecream: jobs go to iceccd's scheduler through its local socket */
};

struct pk_sandbox_config {
	enum pk_sandbox_mode mode;   /* [policy] sandbox = on|off */
	const char *user;            /* [policy] sandbox_user */
	struct pk_limits build;      /* [policy] build_cpu_seconds, build_memory_mb,
	                                build_file_mb, build_processes: per process of a build */
	double build_timeout;        /* [policy] build_timeout: wall clock seconds of one make */
	guint64 tmp_size;            /* the sandbox's /tmp (a tmpfs), bytes */
	guint64 layer_size;          /* [policy] layer_mb: bytes a throwaway layer's upper dir may
	                                hold (a tmpfs, lab/layer.h); 0 = no cap, on the cache's disk */
	guint64 console_cap;         /* [policy] max_console_mb: bytes of a boot's console kept */
	guint64 capture_cap;         /* [policy] max_capture_mb: bytes QEMU may write to the
	                                capture file (RLIMIT_FSIZE: cut while written) */
	enum pk_build_cc cc;         /* [build] cc = gcc|ccache|icecc */
	unsigned jobs;               /* [build] jobs: make -j; 0 = one per CPU online */
	const char *ccache_dir;      /* [build] ccache_dir: the bot's own ccache; NULL = the
	                                user's, read-only (lab/build.c) */
	char **trusted_trees;        /* the [tree]s marked trusted (NULL-terminated, or NULL):
	                                their branches' tips are built in place (lab/repo.h) */
};

/*
 * Defaults: a compiler or host program may use 30 minutes of CPU and
 * 4 GiB of address space (cc1 on the largest kernel files needs under
 * 1 GiB; ld on vmlinux less), write files of up to 2 GiB (vmlinux of this
 * config is ~30 MB, with debug info ~300 MB); the build user may have
 * 1024 processes; one make may take an hour; /tmp holds 1 GiB; a layer
 * holds 4 GiB (a whole tinyconfig build is about 250 MB).  A boot
 * keeps 4 MiB of console (a normal one prints ~60 KiB) and 64 MiB of
 * capture (records and the printk index: ~1.5 MiB).
 */
#define PK_SANDBOX_CONFIG_INIT \
	{ PK_SANDBOX_ON, PK_SANDBOX_USER, { 1800, 4ull << 30, 2ull << 30, 1024 }, 3600, 1ull << 30, \
	  4ull << 30, 4ull << 20, 64ull << 20, PK_BUILD_CC_AUTO, 0, NULL, NULL }

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
