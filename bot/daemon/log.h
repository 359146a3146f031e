/*
 * log.h - the daemon's log: one line per event on stderr, written by the
 * loop and by every role of the daemon alike (inbox, jobs, trees, the
 * worker's lease thread).  It has a file of its own so that no role
 * reaches back into loop.c, the file that calls them, to say a line.
 */
#ifndef PK_DAEMON_LOG_H
#define PK_DAEMON_LOG_H

#include <glib.h>

/*
 * One line per event: "printkbot daemon: job 4 <id@host>: what happened"
 * (job 0 and msgid NULL leave their part out).  The text and the msgid
 * are made safe for a terminal (they come from mail), and the line is
 * one write(2), so threads and processes sharing stderr do not cut into
 * it.  Borrows every argument; nothing to free.
 */
void daemon_log(gint64 job, const char *msgid, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

#endif
