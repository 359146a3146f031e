/*
 * proc.h - the one way printkbot runs a child process (make, qemu, tar,
 * cc, bwrap...).
 *
 * Every child gets an argument vector (never a shell), its own session and
 * process group, a monotonic deadline, and its stdout+stderr written to a
 * capped log file and/or a capped in-memory buffer.  At the deadline, or
 * when *cancel becomes non-zero (a signal handler sets it; the signal
 * interrupts our wait), the whole group gets SIGTERM, then SIGKILL after a
 * grace period.  The child is always reaped before pk_proc_run() returns.
 *
 * Output beyond the cap is read and thrown away (so the child never blocks
 * on a full pipe) and the result says it was truncated.
 */
#ifndef PK_PROC_H
#define PK_PROC_H

#include <glib.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Resource limits set in the child before exec (setrlimit), so they hold
 * for the child and everything it starts.  CPU time, address space and
 * file size are per process; processes count every process of the
 * child's real uid, which makes it a fork-bomb bound only for a dedicated
 * unprivileged uid (root ignores it).  A file write past file_size fails
 * with EFBIG (SIGXFSZ is ignored) instead of killing the writer, so a
 * capture file is cut at the limit while it is written.  0 = no limit.
 */
struct pk_limits {
	double cpu_seconds;       /* RLIMIT_CPU: SIGXCPU, then SIGKILL a second later */
	guint64 memory;           /* RLIMIT_AS, bytes */
	guint64 file_size;        /* RLIMIT_FSIZE, bytes */
	unsigned processes;       /* RLIMIT_NPROC */
};

struct pk_proc_opts {
	const char *cwd;            /* working directory, NULL = inherit */
	const char *const *env;     /* extra "NAME=value" entries, NULL-terminated */
	const char *stdin_path;     /* file to read stdin from, NULL = /dev/null */
	const char *log_path;       /* output written here (truncated first; never through a symlink), or NULL */
	GString *capture;           /* output appended here as well, or NULL */
	size_t output_cap;          /* bytes kept per destination, 0 = 16 MiB */
	double timeout;             /* seconds, 0 = none */
	volatile sig_atomic_t *cancel; /* set non-zero to end the child early */
	const struct pk_limits *limits; /* set in the child, or NULL */
	const char *cgroup;         /* a cgroup dir the child joins before exec (cgroup.h), or NULL */
};
#define PK_PROC_OPTS_INIT { 0 }

enum pk_proc_end {
	PK_PROC_EXITED,    /* exited by itself: see exit_code */
	PK_PROC_SIGNALED,  /* killed by a signal it did not get from us */
	PK_PROC_TIMEOUT,   /* ended by us at the deadline */
	PK_PROC_CANCELED,  /* ended by us because *cancel was set */
};

struct pk_proc_result {
	enum pk_proc_end end;
	int exit_code;          /* valid when end == PK_PROC_EXITED */
	int signal;             /* valid when end == PK_PROC_SIGNALED */
	bool truncated;         /* output went over output_cap */
	double seconds;         /* wall time */
};

/*
 * Run argv[0] (looked up in PATH) with argv and wait for it.  Returns 0
 * when the child was started and reaped (whatever its exit status: that
 * is in *out), -1 with err set when it could not be started at all.
 */
int pk_proc_run(struct pk_proc_result *out, const char *const *argv,
		const struct pk_proc_opts *opts, GError **err);

/* True when the child exited with status 0. */
bool pk_proc_ok(const struct pk_proc_result *res);

/* "exited with status 2", "killed by signal 9", "terminated; timeout after 30 s"... caller frees. */
char *pk_proc_describe(const struct pk_proc_result *res);

/*
 * A process-wide cancel flag for every child whose opts->cancel is NULL:
 * the daemon sets it from its SIGTERM handler, so a make or a QEMU started
 * deep inside a stage is ended and reaped without each stage passing the
 * flag along.  The handler must be installed without SA_RESTART, so that
 * the signal interrupts the wait.  NULL turns it off.
 */
void pk_proc_set_cancel(volatile sig_atomic_t *flag);

/*
 * Whether that flag is set: work done in the process itself (a scan, a
 * diff) asks it between steps and stops early, what it made then being
 * no result, so that a stop is as prompt there as in a child.
 */
bool pk_proc_canceled(void);

/*
 * Run a helper child to its end (an hour at most), in cwd with env (both
 * may be NULL): 0 when it exited 0, else -1 with err naming what and
 * quoting the end of its output.
 */
int pk_proc_step(const char *what, const char *const *argv, const char *cwd, const char *const *env,
		 GError **err);

/* Remove a directory tree, if it is there (rm -rf --one-file-system: GLib has no recursive delete). */
int pk_remove_tree(const char *path, GError **err);

/* Whether an executable of that name is in PATH. */
bool pk_proc_have(const char *name);

#endif
