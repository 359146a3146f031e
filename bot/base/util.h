/*
 * util.h - the few helpers every module of printkbot shares.
 *
 * Errors: library-level code reports a failure by returning -1 (or NULL)
 * and filling a GError; only the command at the top prints it.  pk_error()
 * is the one-line "report and propagate" for code that has a GError**.
 *
 * Paths: pk_cache_dir() is where the kernel tree, build dirs and database
 * live ($PRINTKBOT_CACHE, default ~/.cache/printkbot); the caller owns the
 * returned string.  pk_source_dir() is the printkbot checkout that holds
 * qemu/, templates/ and db/ (PRINTKBOT_SRCDIR, else the directory baked in
 * at build time); only the tests read db/ there.
 *
 * pk_data_dir() is where the running bot reads qemu/ and templates/, the
 * first of: $PRINTKBOT_DATADIR (tests, a DESTDIR install); the checkout
 * it was built in when the binary itself lies inside it (a developer's
 * edits of qemu/ count at once); else the installed data dir,
 * $(PREFIX)/share/printkbot.  No fallback from one to the next: an
 * installed bot never reads a checkout that happens to be left around.
 */
#ifndef PK_UTIL_H
#define PK_UTIL_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

#define PK_ERROR (pk_error_quark())
GQuark pk_error_quark(void);

enum pk_error_code {
	PK_ERROR_FAILED,   /* the bot could not do its job */
	PK_ERROR_INPUT,    /* bad input: a malformed patch, mail, config... */
	PK_ERROR_LIMIT,    /* input was larger than a configured limit */
	PK_ERROR_TRANSIENT, /* the system failed for a while (a full disk, EIO, a busy
			       database): the same work may succeed later */
};

/* Whether errno e is one that passes (ENOSPC, EDQUOT, EIO, EAGAIN, EINTR, EBUSY, ENOMEM). */
bool pk_errno_transient(int e);
/* PK_ERROR_TRANSIENT for such an errno, else PK_ERROR_FAILED. */
int pk_errno_code(int e);
/* Whether err is a PK_ERROR_TRANSIENT: a job retries it rather than failing for good. */
bool pk_error_transient(const GError *err);

/* Set *err (when err is not NULL) and return -1: `return pk_error(err, ...)`. */
int pk_error(GError **err, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/*
 * Text from mail made safe for a terminal and a log line: valid UTF-8,
 * tab, CR and LF as spaces (no forged log lines), and every other C0 or
 * C1 control (ESC, BEL...), DEL and bidi override or isolate (U+202A..E,
 * U+2066..9, LRM, RLM, ALM) as '?'.  NULL gives "".  Caller frees.
 */
char *pk_text_for_terminal(const char *s);

/*
 * The same for text of many lines, printed as text (a review, a table):
 * newlines and tabs kept, CR and every other control or bidi character
 * as '?'.  Caller frees.
 */
char *pk_lines_for_terminal(const char *s);

/*
 * printf() to standard output through pk_lines_for_terminal(): how a
 * command prints text that holds stored or received strings (subjects,
 * authors, boot lines), so that none of them drives the terminal.  JSON
 * output does not go through it: its escapes keep the data exact.
 */
void pk_print_text(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/* The cache directory (created if missing); caller frees. */
char *pk_cache_dir(void);
/*
 * Where the bot's locks live (the daemon's store lock, the machine's boot
 * slots): a directory of the bot's user that nobody else can write, made
 * when missing, so that no other local user can take a lock first (a
 * lock held stops the daemon) or plant a link where one is created.
 * $PRINTKBOT_RUNTIME_DIR when set (tests); else /run/printkbot as root,
 * $XDG_RUNTIME_DIR/printkbot or the cache dir's run/ otherwise.  A
 * directory there that is a link, owned by another user or writable by
 * group or others is an error that says so.  Caller frees; NULL with err.
 */
char *pk_runtime_dir(GError **err);

/* The printkbot source directory (qemu/, templates/, db/); caller frees. */
char *pk_source_dir(void);
/* The data directory (qemu/, templates/), see above; caller frees. */
char *pk_data_dir(void);

/*
 * Read a whole file, refusing one larger than max_bytes (0 = no limit) so a
 * hostile input fails cleanly instead of eating memory.  *out is
 * NUL-terminated and owned by the caller; untouched on failure.
 */
int pk_read_file(char **out, size_t *out_len, const char *path, size_t max_bytes,
		 GError **err);

/* pk_read_file() of an open fd (not closed), name saying what it is in an error. */
int pk_read_fd(char **out, size_t *out_len, int fd, const char *name, size_t max_bytes, GError **err);

/* Write data to path atomically (temporary file + rename). */
int pk_write_file(const char *path, const char *data, size_t len, GError **err);

/* Seconds on the monotonic clock, for durations and deadlines. */
double pk_now(void);

/* Whether stderr is a terminal (progress lines are only drawn there). */
bool pk_progress_enabled(void);

/*
 * G_REGEX_OPTIMIZE (PCRE2's JIT) for the bot's fixed patterns, or 0 when
 * $PRINTKBOT_REGEX_JIT is "0" (valgrind cannot follow PCRE2's JIT code and
 * reports its reads as uninitialised: e2e 050 turns it off) or when
 * pk_regex_input_size() was told of a small input.
 */
GRegexCompileFlags pk_regex_optimize(void);

/*
 * The process reads only bytes of input (scan of named files): under
 * PK_REGEX_JIT_MIN_INPUT, the patterns it compiles from now on are not
 * JIT-compiled, which costs more than it saves on one patch (~0.1 ms of
 * a 1.1 ms scan process).  Call before the first pattern is compiled.
 */
#define PK_REGEX_JIT_MIN_INPUT (1u << 20)
void pk_regex_input_size(guint64 bytes);
/* Print a progress line on stderr when it is a terminal, else nothing. */
void pk_progress(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/*
 * A stage of long work begins ("building 1a2b3c4d5e6f"), with the time
 * since the process's first stage ("[2:05]"): on a terminal a progress
 * line, elsewhere (a log, `make demo > log`) a line of its own, so that
 * a cold build of many minutes still shows life and what it is at.
 */
void pk_stage(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* A log line for a stage's progress that always goes to stderr. */
void pk_info(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/*
 * A URL or libpq connection string as logs, messages and the database may
 * show it: the password of a URL's userinfo ("user:***@"), a lone user of
 * an http(s) URL (a token, as forges take it: "***@"), and the value of
 * every password= or sslpassword= parameter (a URL's query or a libpq
 * "key=value" string) as "***".  Anything else comes back as it was.
 * NULL gives NULL.  Caller frees.
 */
char *pk_url_redact(const char *url);
/* Whether pk_url_redact() would hide something of url (false for NULL). */
bool pk_url_has_secret(const char *url);

/*
 * text (an error of a library that was handed url: libpq, libgit2) as a
 * log may show it: every copy of url redacted as above, and every secret
 * of url that stands alone in it, as url has it or percent-decoded, as
 * "***" (one shorter than PK_URL_SCRUB_MIN is left: it would mangle
 * every word that holds it, and the whole URL is redacted anyway).  NULL
 * text gives NULL; NULL url a copy.  Caller frees.
 */
#define PK_URL_SCRUB_MIN 4
char *pk_url_scrub(const char *text, const char *url);

/*
 * Fill text into lines of at most width columns (counting UTF-8
 * characters), breaking at spaces; each line after the first starts with
 * indent.  A word longer than a line stays whole.  Caller frees.
 */
char *pk_wrap(const char *text, unsigned width, const char *indent);

#endif
