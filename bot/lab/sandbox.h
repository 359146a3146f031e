/*
 * sandbox.h - where code from a patch runs: bubblewrap around every make
 * of a kernel build and every QEMU.
 *
 * A kernel build runs programs built from the tree it builds (scripts/,
 * and the host programs of any Makefile: usr/gen_init_cpio,
 * scripts/kallsyms...), and a patch can change them, even one that touches
 * only .c files.  So a sandboxed child gets:
 *   - no network (a network namespace of its own: a loopback, no routes),
 *     no other process to see or signal (a pid namespace), no IPC;
 *   - a root that holds /usr (and the merged-/usr links), a few files of
 *     /etc that compilers and scripts read (not all of /etc: config files
 *     with secrets stay out), a fresh /dev and /proc, a size-capped tmpfs
 *     on /tmp, and the paths the caller names, read-only or writable;
 *     nothing else of the host (no /root, /home, /run and its sockets);
 *   - when the bot runs as root, the uid and gid of an unprivileged system
 *     user (PK_SANDBOX_USER, made by `make deps`), no supplementary groups,
 *     no capabilities, and no_new_privs (see pk_sandbox_argv() for why
 *     setpriv inside bubblewrap rather than bubblewrap's --uid);
 *   - resource limits (proc.h's struct pk_limits) on every process, the
 *     number of processes counted per sandbox (a pids cgroup of its own,
 *     base/cgroup.h) where the machine allows it, else per sandbox user.
 *
 * The settings come from the [policy] group of the config
 * (pk_sandbox_configure(), once, by the command); without that call the
 * defaults of PK_SANDBOX_CONFIG_INIT hold, the sandbox on.  With sandbox =
 * off nothing is wrapped.  When the sandbox is on but cannot be used
 * (bubblewrap missing), builds run without it and policy.h refuses every
 * patch, so that only the bot's own trees are built that way.
 */
#ifndef PK_SANDBOX_H
#define PK_SANDBOX_H

#include <glib.h>
#include <stdbool.h>

#include "base/proc.h"
#include "base/settings.h"

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

/* Take the settings for this process (copied; user is duplicated). */
void pk_sandbox_configure(const struct pk_sandbox_config *config);
/* The settings in force (borrowed). */
const struct pk_sandbox_config *pk_sandbox_settings(void);

/*
 * Whether the sandbox can be used now: bwrap is installed, and when we
 * are root, setpriv too and the sandbox user exists.  When not, *why
 * (may be NULL; caller frees) says what is missing and how to fix it.
 */
bool pk_sandbox_usable(char **why);

/* Whether children are to be wrapped: the mode is on and the sandbox usable. */
bool pk_sandbox_active(void);

/* What one sandboxed child sees, beyond the system part above. */
struct pk_sandbox {
	const char *const *ro;   /* host paths bound read-only at the same path, NULL-terminated */
	const char *const *rw;   /* bound writable (must be writable by the sandbox user: pk_sandbox_own()) */
	const char *const *dev;  /* device nodes bound as they are (/dev/kvm) */
	const char *cwd;         /* inside, or NULL for / */
	const char *const *env;  /* "NAME=value": the whole environment inside, beyond
	                            PATH, HOME=/tmp, TMPDIR=/tmp and LC_ALL=C */
	guint64 tmp_size;        /* bytes of /tmp, 0 = the settings' */
	const char *group_of;    /* a path whose group the child also gets (/dev/kvm), or NULL */
	const char *const *argv; /* for pk_sandbox_run(): the command to run wrapped when it
	                            differs from the one run unwrapped, or NULL */
	const struct pk_limits *limits;  /* for pk_sandbox_run(): on every process when
	                                    wrapped, in place of the proc opts' (NULL: those) */
};

/*
 * The one place that decides whether a child that may run code from a
 * patch (make and the tree's kconfig scripts, QEMU) is wrapped, for
 * build.c and boot.c alike.  When the sandbox is active
 * (pk_sandbox_active()): each path of sb->rw is handed to the sandbox
 * user (pk_sandbox_own()), and sb->argv (or argv) runs inside
 * pk_sandbox_argv(sb, ...), with sb->limits when set.  When it is not,
 * argv runs as it is with opts as they are but for the environment,
 * sb->env when set (so that a child sees the same either way: a make
 * whose compiler command line changed would rebuild every object), and,
 * when the sandbox is on but cannot be used, stderr says so once per
 * process.  *out_sandboxed (may be NULL) says which it was.  Returns
 * what pk_proc_run() returns; -1 also when the sandbox could not be set
 * up.
 */
int pk_sandbox_run(struct pk_proc_result *out, bool *out_sandboxed, const struct pk_sandbox *sb,
		   const char *const *argv, const struct pk_proc_opts *opts, GError **err);

/*
 * The argument vector that runs argv inside sandbox sb: bwrap's options,
 * then (as root) setpriv, then argv.  A path of ro or rw that does not
 * exist is an error.  Returns a NULL-terminated array owning its strings
 * (g_ptr_array_unref()), or NULL with err set (no sandbox user...).
 */
GPtrArray *pk_sandbox_argv(const struct pk_sandbox *sb, const char *const *argv, GError **err);

/*
 * Make dir and everything under it (not following symlinks) owned by the
 * sandbox user, when we are root, so that a sandboxed make can write the
 * build dir that setup and earlier unsandboxed runs wrote as root.  Only
 * entries owned by someone else are changed; files with more than one
 * link are left alone (never hand over a file that lives elsewhere too).
 * A no-op when not root or when the sandbox is not active.
 */
int pk_sandbox_own(const char *dir, GError **err);

/* "on" or "off". */
const char *pk_sandbox_mode_name(enum pk_sandbox_mode mode);

#endif
