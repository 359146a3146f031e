/*
 * signals.h - what SIGTERM, SIGINT and SIGHUP asked of the daemon.  The
 * loop installs the handlers and acts on a reload; the jobs only ask
 * whether to stop (a build, boot or send cut short then is no verdict).
 * A file of its own, like log.h, so that no job reaches back into
 * loop.c, the file that calls them.
 */
#ifndef PK_DAEMON_SIGNALS_H
#define PK_DAEMON_SIGNALS_H

#include <stdbool.h>

/*
 * Handle SIGTERM and SIGINT (stop) and SIGHUP (reload), without
 * SA_RESTART so that poll() and proc.h's waits are interrupted, and make
 * proc.h end the running child on a stop.  Each signal writes a byte to
 * wake_fd (a self-pipe's write end, non-blocking) to wake the loop's
 * poll().  daemon_signals_restore() undoes it.
 */
void daemon_signals_install(int wake_fd);
void daemon_signals_restore(void);

/* Whether SIGTERM or SIGINT came. */
bool daemon_stopping(void);

/* Whether SIGHUP came since the last call: the request is taken. */
bool daemon_reload_requested(void);

#endif
