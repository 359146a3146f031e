/* proc.c - child process supervision; see proc.h for the contract. */
#define _GNU_SOURCE
#include "base/proc.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_CAP (16u << 20)
#define KILL_GRACE 2.0 /* seconds between SIGTERM and SIGKILL */

static volatile sig_atomic_t *default_cancel;

void pk_proc_set_cancel(volatile sig_atomic_t *flag)
{
	default_cancel = flag;
}

bool pk_proc_canceled(void)
{
	return default_cancel && *default_cancel;
}

bool pk_proc_have(const char *name)
{
	g_autofree char *path = g_find_program_in_path(name);

	return path != NULL;
}

/* Set one limit, soft and hard: the child cannot raise it again. */
static int set_limit(int resource, rlim_t value)
{
	struct rlimit rl = { value, value };

	return setrlimit(resource, &rl);
}

/*
 * In the child, before exec.  RLIMIT_CPU's hard limit is a second above
 * the soft one, so a process that ignores SIGXCPU is killed.  No core
 * files: a crashing host program must not write hundreds of megabytes.
 */
static int apply_limits(const struct pk_limits *l)
{
	if (l->cpu_seconds > 0) {
		struct rlimit rl = { (rlim_t)l->cpu_seconds, (rlim_t)l->cpu_seconds + 1 };
		if (setrlimit(RLIMIT_CPU, &rl) < 0)
			return -1;
	}
	if ((l->memory && set_limit(RLIMIT_AS, l->memory) < 0) ||
	    (l->processes && set_limit(RLIMIT_NPROC, l->processes) < 0) ||
	    set_limit(RLIMIT_CORE, 0) < 0)
		return -1;
	if (l->file_size) {
		struct sigaction ign = { .sa_handler = SIG_IGN };

		/* ignored is kept across exec: a write past the limit fails with EFBIG */
		if (set_limit(RLIMIT_FSIZE, l->file_size) < 0 || sigaction(SIGXFSZ, &ign, NULL) < 0)
			return -1;
	}
	return 0;
}

/*
 * Orphans of a child (a sandbox's processes, in a PID namespace that dies
 * with its init, or a grandchild that left the group) are reparented to
 * us rather than to the system's init, so that they can be reaped here.
 */
static void become_subreaper(void)
{
	static gsize done;

	if (g_once_init_enter(&done)) {
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		g_once_init_leave(&done, 1);
	}
}

/*
 * Reap what the ended child left behind.  After a kill (cancel, timeout)
 * this waits, up to ORPHAN_WAIT seconds, until no child at all is left, so
 * that a caller told "ended" (the daemon on SIGTERM) knows every process
 * under it is gone; the dying need a moment to be reparented and reaped,
 * hence the short sleeps.  Otherwise only zombies already there are taken.
 */
#define ORPHAN_WAIT 5.0
static void reap_orphans(bool wait_all)
{
	double until = pk_now() + ORPHAN_WAIT;

	for (;;) {
		pid_t p = waitpid(-1, NULL, WNOHANG);

		if (p > 0)
			continue;
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0 || !wait_all || pk_now() >= until)
			return;   /* ECHILD: nothing left */
		g_usleep(20000);
	}
}

/*
 * In the child: move itself into the cgroup dir (cgroup.h) before exec,
 * so that everything it starts is counted there.  Only calls that are
 * safe between fork and exec: the pid written by hand.
 */
static int join_cgroup(const char *dir)
{
	char path[4096], pid[24];
	size_t n = strlen(dir), len = 0;
	pid_t p = getpid();
	int fd;
	ssize_t w;

	if (n + sizeof "/cgroup.procs" > sizeof path)
		return -1;
	memcpy(path, dir, n);
	memcpy(path + n, "/cgroup.procs", sizeof "/cgroup.procs");
	do
		pid[sizeof pid - 1 - ++len] = (char)('0' + p % 10);
	while ((p /= 10) > 0);
	pid[sizeof pid - 1] = '\n';
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	w = write(fd, pid + sizeof pid - 1 - len, len + 1);
	close(fd);
	return w == (ssize_t)(len + 1) ? 0 : -1;
}

/* In the child: become a group leader, wire fds, join its cgroup, set limits, exec.  Never returns. */
static void child_exec(const char *const *argv, const struct pk_proc_opts *o,
		       int out_fd, pid_t parent)
{
	int in_fd;

	setsid();
	/*
	 * Die with the bot, however it ends (kill -9 included): a make or QEMU
	 * left running would hold the lab.  bwrap passes it on inside the
	 * sandbox (--die-with-parent, and its PID namespace dies with it).
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	in_fd = open(o->stdin_path ? o->stdin_path : "/dev/null", O_RDONLY | O_CLOEXEC);
	if (in_fd < 0 || dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		_exit(127);
	if (o->cwd && chdir(o->cwd) < 0) {
		dprintf(2, "printkbot: cannot chdir to %s: %s\n", o->cwd, strerror(errno));
		_exit(127);
	}
	if (o->cgroup && join_cgroup(o->cgroup) < 0) {
		dprintf(2, "printkbot: cannot join the cgroup %s: %s\n", o->cgroup, strerror(errno));
		_exit(127);
	}
	if (o->limits && apply_limits(o->limits) < 0) {
		dprintf(2, "printkbot: cannot set resource limits: %s\n", strerror(errno));
		_exit(127);
	}
	for (const char *const *e = o->env; e && *e; e++)
		putenv((char *)*e);
	execvp(argv[0], (char *const *)argv);
	dprintf(2, "printkbot: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

struct sink {
	int log_fd;
	GString *capture;
	size_t cap, logged;
	bool truncated;
};

static void sink_write(struct sink *s, const char *buf, size_t n)
{
	size_t keep;

	if (s->logged >= s->cap) {
		s->truncated = true;
		return;
	}
	keep = MIN(n, s->cap - s->logged);
	if (keep < n)
		s->truncated = true;
	if (s->log_fd >= 0) {
		const char *p = buf;
		size_t left = keep;

		while (left) {
			ssize_t w = write(s->log_fd, p, left);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			p += w;
			left -= (size_t)w;
		}
	}
	if (s->capture)
		g_string_append_len(s->capture, buf, (gssize)keep);
	s->logged += keep;
}

/* How the child is being ended, and when its deadline is. */
struct ending {
	pid_t pid;                        /* the group leader */
	double deadline;                  /* 0: none */
	volatile sig_atomic_t *cancel;    /* may be NULL */
	enum pk_proc_end end;             /* EXITED until it is asked to end */
};

/* Read the child's output until EOF, asking its group to end at the deadline or when cancelled. */
static void pump_output(struct ending *e, int fd, struct sink *sink)
{
	double kill_at = 0;
	bool open_pipe = true;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double now = pk_now(), wake = 0;
		int ms = -1, r;

		if (e->end == PK_PROC_EXITED && ((e->cancel && *e->cancel) || (e->deadline && now >= e->deadline))) {
			e->end = (e->cancel && *e->cancel) ? PK_PROC_CANCELED : PK_PROC_TIMEOUT;
			kill(-e->pid, SIGTERM);
			kill_at = now + KILL_GRACE;
		}
		if (kill_at && now >= kill_at) {
			kill(-e->pid, SIGKILL);
			kill_at = 0;
		}
		if (!open_pipe)
			break;
		if (e->end == PK_PROC_EXITED && e->deadline)
			wake = e->deadline;
		if (kill_at)
			wake = kill_at;
		if (wake)
			ms = (int)((wake - now) * 1000) + 1;
		r = poll(&pfd, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0) {
			char buf[65536];
			ssize_t n = read(fd, buf, sizeof(buf));

			if (n > 0)
				sink_write(sink, buf, (size_t)n);
			else if (n == 0 || errno != EINTR)
				open_pipe = false;
		}
	}
}

/* The pipe is closed; the leader may still run (a grandchild closed it): wait, or end it. */
static int wait_leader(struct ending *e)
{
	int status = 0;

	while (waitpid(e->pid, &status, WNOHANG) == 0) {
		if (e->end == PK_PROC_EXITED && !(e->deadline && pk_now() >= e->deadline) &&
		    !(e->cancel && *e->cancel)) {
			if (waitpid(e->pid, &status, 0) == e->pid)
				break;
			continue;
		}
		if (e->end == PK_PROC_EXITED)
			e->end = (e->cancel && *e->cancel) ? PK_PROC_CANCELED : PK_PROC_TIMEOUT;
		kill(-e->pid, SIGTERM);
		g_usleep((gulong)(KILL_GRACE * 1e6)); /* grace for a clean exit, then force it */
		kill(-e->pid, SIGKILL);
		waitpid(e->pid, &status, 0);
		break;
	}
	return status;
}

int pk_proc_run(struct pk_proc_result *out, const char *const *argv,
		const struct pk_proc_opts *opts, GError **err)
{
	static const struct pk_proc_opts defaults = PK_PROC_OPTS_INIT;
	const struct pk_proc_opts *o = opts ? opts : &defaults;
	volatile sig_atomic_t *cancel = o->cancel ? o->cancel : default_cancel;
	struct sink sink = { .log_fd = -1, .capture = o->capture,
			     .cap = o->output_cap ? o->output_cap : DEFAULT_CAP };
	struct pk_proc_result res = { 0 };
	double start = pk_now();
	struct ending ending = { .deadline = o->timeout > 0 ? start + o->timeout : 0, .cancel = cancel,
				 .end = PK_PROC_EXITED };
	int pipefd[2], status = 0;
	pid_t pid, parent;

	if (o->log_path) {
		/* never through a link: a log is the bot's own file, in a dir of its own */
		sink.log_fd = open(o->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (sink.log_fd < 0)
			return pk_error(err, PK_ERROR_FAILED, "cannot open log %s: %s",
					o->log_path, strerror(errno));
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		if (sink.log_fd >= 0)
			close(sink.log_fd);
		return pk_error(err, PK_ERROR_FAILED, "pipe: %s", strerror(errno));
	}
	become_subreaper();
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		if (sink.log_fd >= 0)
			close(sink.log_fd);
		return pk_error(err, PK_ERROR_FAILED, "cannot fork for %s: %s", argv[0],
				strerror(errno));
	}
	if (pid == 0)
		child_exec(argv, o, pipefd[1], parent);
	close(pipefd[1]);

	ending.pid = pid;
	pump_output(&ending, pipefd[0], &sink);
	close(pipefd[0]);
	status = wait_leader(&ending);
	res.end = ending.end;
	kill(-pid, SIGKILL); /* anything of the group that outlived its leader */
	reap_orphans(res.end != PK_PROC_EXITED);

	if (res.end == PK_PROC_EXITED) {
		if (WIFEXITED(status)) {
			res.exit_code = WEXITSTATUS(status);
		} else if (WIFSIGNALED(status)) {
			res.end = PK_PROC_SIGNALED;
			res.signal = WTERMSIG(status);
		}
	}
	if (sink.log_fd >= 0)
		close(sink.log_fd);
	res.truncated = sink.truncated;
	res.seconds = pk_now() - start;
	*out = res;
	return 0;
}

bool pk_proc_ok(const struct pk_proc_result *res)
{
	return res->end == PK_PROC_EXITED && res->exit_code == 0;
}

char *pk_proc_describe(const struct pk_proc_result *res)
{
	switch (res->end) {
	case PK_PROC_EXITED:
		return g_strdup_printf("exited with status %d", res->exit_code);
	case PK_PROC_SIGNALED:
		return g_strdup_printf("killed by signal %d (%s)", res->signal,
				       strsignal(res->signal));
	case PK_PROC_TIMEOUT:
		return g_strdup_printf("terminated; timeout after %.0f s", res->seconds);
	case PK_PROC_CANCELED:
		return g_strdup("terminated; canceled");
	}
	return g_strdup("ended");
}

int pk_proc_step(const char *what, const char *const *argv, const char *cwd, const char *const *env,
		 GError **err)
{
	struct pk_proc_opts opts = PK_PROC_OPTS_INIT;
	struct pk_proc_result res;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *how = NULL;

	opts.cwd = cwd;
	opts.env = env;
	opts.capture = out;
	opts.timeout = 3600;
	if (pk_proc_run(&res, argv, &opts, err) < 0)
		return -1;
	if (pk_proc_ok(&res))
		return 0;
	how = pk_proc_describe(&res);
	return pk_error(err, PK_ERROR_FAILED, "%s: %s %s: %s", what, argv[0], how,
			out->len > 600 ? out->str + out->len - 600 : out->str);
}

int pk_remove_tree(const char *path, GError **err)
{
	const char *argv[] = { "rm", "-rf", "--one-file-system", path, NULL };

	if (!g_file_test(path, G_FILE_TEST_EXISTS))
		return 0;
	return pk_proc_step("removing a half-made step", argv, NULL, NULL, err);
}
