/*
 * log.c - the daemon's log line; see log.h.
 */
#include "daemon/log.h"
#include "base/util.h"

#include <stdarg.h>
#include <unistd.h>

void daemon_log(gint64 job, const char *msgid, const char *fmt, ...)
{
	g_autofree char *raw = NULL, *what = NULL, *id = NULL;
	g_autoptr(GString) line = g_string_new("printkbot daemon:");
	va_list ap;

	va_start(ap, fmt);
	raw = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	/* subjects, names and ids come from mail: no escape sequence or forged line reaches the log */
	what = pk_text_for_terminal(raw);
	if (job)
		g_string_append_printf(line, " job %" G_GINT64_FORMAT, job);
	if (msgid) {
		id = pk_text_for_terminal(msgid);
		g_string_append_printf(line, " <%s>", id);
	}
	g_string_append_printf(line, "%s %s\n", job || msgid ? ":" : "", what);
	/* one write: the lease thread and other workers on the same stderr do not cut into it */
	if (write(STDERR_FILENO, line->str, line->len) < 0) {
		/* nowhere left to say it */
	}
}
