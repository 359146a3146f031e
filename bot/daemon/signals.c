/*
 * signals.c - the daemon's signal flags (signals.h).
 */
#include "daemon/signals.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "base/proc.h"

/* Set by the handler; the loop, the jobs and proc.h read them. */
static volatile sig_atomic_t stop_flag, reload_flag;
static volatile int wake_fd = -1;   /* write end of the loop's self-pipe */

static void on_signal(int sig)
{
	int saved = errno;

	if (sig == SIGHUP)
		reload_flag = 1;
	else
		stop_flag = 1;
	if (wake_fd >= 0 && write(wake_fd, "x", 1) < 0) {
		/* the pipe is full: poll() wakes anyway */
	}
	errno = saved;
}

void daemon_signals_install(int fd)
{
	struct sigaction sa = { 0 };

	wake_fd = fd;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	pk_proc_set_cancel(&stop_flag);
}

void daemon_signals_restore(void)
{
	pk_proc_set_cancel(NULL);
	wake_fd = -1;
}

bool daemon_stopping(void)
{
	return stop_flag != 0;
}

bool daemon_reload_requested(void)
{
	bool asked = reload_flag != 0;

	reload_flag = 0;
	return asked;
}
