/*
 * config.h - printkbot's configuration file (GKeyFile syntax, see
 * config.example).  Every key is optional; a missing file given by name is
 * an error, the default file (/etc/printkbot.conf) missing is not.
 *
 * pk_config_load() fills a struct pk_config the caller clears with
 * pk_config_clear().  A bad value (a word where a number belongs, an
 * unknown policy key) is an error naming the file, the group and the key,
 * so a typo never silently relaxes the policy.
 */
#ifndef PK_CONFIG_H
#define PK_CONFIG_H

#include <glib.h>

#include "base/settings.h"

/* One [source NAME] group: where patch mail comes from. */
struct pk_source_config {
	char *name;               /* NAME of [source NAME] */
	char *type;               /* "imap", "maildir", "mbox" or "public-inbox" */
	char *url;                /* imap: imap[s]://host[:port]/MAILBOX */
	char *path;               /* maildir, mbox, public-inbox: a directory or file */
	char *user;               /* imap login */
	char *password;           /* from password, password_file or password_env; never logged */
	char *list;               /* the list's address, Cc'd in replies; NULL: the mail's To */
	double poll_interval;     /* imap, public-inbox: seconds between looks, default 300 */
	char *ca_file;            /* imap TLS: a CA bundle, or NULL for the system's */
	bool insecure;            /* imap TLS: do not verify the server (tests only) */
};

/* [daemon]: how the mailing-list bot behaves. */
struct pk_daemon_config {
	char *from;               /* the bot's From: (default "printkbot <printkbot@localhost>") */
	char *reply_on;           /* "changes" (default), "always" or "never" */
	bool cc_original;         /* Cc the patch's own To and Cc too (default true) */
	double series_wait;       /* seconds to wait for the rest of a series (default 600) */
	double retry_min;         /* first retry of a failed reply, seconds (default 60) */
	double retry_max;         /* longest wait between retries (default 3600) */
	char *outbox;             /* the outbox Maildir; NULL: <cache dir>/outbox (outbox.h) */
};

/* [smtp]: how replies are sent. */
struct pk_smtp_config {
	char *url;                /* smtp://host[:port] (STARTTLS) or smtps://host[:port] (TLS) */
	char *user;               /* AUTH user, NULL for no AUTH */
	char *password;           /* from password, password_file or password_env; never logged */
	char *starttls;           /* "try" (default), "always" or "never" */
	char *ca_file;
	bool insecure;
	double timeout;           /* seconds per transfer, default 60 */
};

struct pk_config {
	char *path;               /* the file read, or NULL when none was */
	char *db;                 /* [store] path, or NULL for the default */
	char *base;               /* [test] base revision, or NULL for printkbot-base */
	double boot_timeout;      /* [test] boot_timeout seconds, 0 = default */
	struct pk_policy policy;  /* [policy] */
	struct pk_sandbox_config sandbox; /* [policy] sandbox and limits (user points into sandbox_user) */
	char *sandbox_user;
	struct pk_daemon_config daemon; /* [daemon], defaults filled in */
	struct pk_smtp_config smtp;     /* [smtp], defaults filled in */
	GPtrArray *sources;       /* struct pk_source_config*, one per [source NAME], in file order */
	GKeyFile *keys;           /* the whole file, for the modules that read their own groups */
};

/*
 * Read path (NULL: $PRINTKBOT_CONFIG, else /etc/printkbot.conf if it exists).
 * An unknown group or key, or a bad value, is an error naming the file,
 * the line, the group and the key.  Without a file, every default is set.
 * Loading changes nothing else: the caller makes config->sandbox the
 * process's settings (pk_sandbox_configure()) once it keeps the config,
 * so a reload that fails later leaves the old settings in force.
 */
int pk_config_load(struct pk_config *out, const char *path, GError **err);
void pk_config_clear(struct pk_config *config);

#endif
