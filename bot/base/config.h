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

/*
 * The longest duration any key takes, in seconds (30 days): a bigger one
 * is a typo or an attack on the daemon's arithmetic, refused at load
 * like nan and inf.  retry_min and retry_max are at least 1.
 */
#define PK_CONFIG_SECONDS_MAX 2592000

/*
 * How a mail connection ([smtp], an imap source) is protected.  The
 * default is PK_TLS_REQUIRED, or PK_TLS_TRY when the URL's host is a
 * loopback address (pk_url_is_loopback()).  imaps:// and smtps:// are TLS
 * from the start whatever this says (and refuse PK_TLS_OFF).  A login
 * (AUTH) is never sent in clear unless the config says tls = off:
 * pk_tls_enforced() makes PK_TLS_TRY with a login PK_TLS_REQUIRED.
 */
enum pk_tls {
	PK_TLS_REQUIRED,  /* STARTTLS, or no connection at all */
	PK_TLS_TRY,       /* STARTTLS when offered; in clear otherwise, then without a login */
	PK_TLS_OFF,       /* never STARTTLS: a login goes in clear (say so on purpose) */
};

/* The level the connection must reach: PK_TLS_TRY with a login is PK_TLS_REQUIRED. */
enum pk_tls pk_tls_enforced(enum pk_tls tls, bool login);
/* The word of the config for a level ("required", "try", "off"). */
const char *pk_tls_name(enum pk_tls tls);
/*
 * Whether url's host is a loopback address: localhost, 127.0.0.0/8, ::1.
 * The name is not resolved: only these literal forms count.
 */
bool pk_url_is_loopback(const char *url);

/*
 * Where a source starts the first time the daemon sees it (intake.h).
 * The zero value, PK_START_ALL, is what a hand-made config gets; the
 * loader's default is PK_START_NOW.
 */
enum pk_source_start {
	PK_START_ALL,     /* from its first mail */
	PK_START_NOW,     /* from where it stands when first seen: nothing older is read */
	PK_START_DATE,    /* only mails whose Date is on or after start_date */
};

/* One [source NAME] group: where patch mail comes from. */
struct pk_source_config {
	char *name;               /* NAME of [source NAME] */
	char *type;               /* "imap", "maildir", "mbox" or "public-inbox" */
	char *url;                /* imap: imap[s]://host[:port]/MAILBOX */
	char *path;               /* maildir, mbox, public-inbox: a directory or file */
	char *user;               /* imap login */
	char *password;           /* from password, password_file or password_env; never logged */
	char *list;               /* the list's address, Cc'd in replies; NULL: the mail's To */
	char *archive;            /* the list's web archive, a URL a Message-ID is appended to, or NULL */
	double poll_interval;     /* seconds between looks, default 300 (a watched source's too) */
	char *ca_file;            /* imap TLS: a CA bundle, or NULL for the system's */
	bool insecure;            /* imap TLS: do not verify the server (tests only) */
	enum pk_tls tls;          /* imap: see enum pk_tls */
	enum pk_source_start start; /* default PK_START_NOW */
	gint64 start_date;        /* PK_START_DATE: Unix time, midnight UTC for a plain date */
	bool trusted_commands;    /* its mail's From is taken as proven: a #printkbot command needs
				     no Authentication-Results (default false) */
};

/*
 * Which tested patches (or pushed commits) a list is mailed about: the
 * reply key of [list NAME], [tree NAME] and [daemon] reply_on.  What
 * "the author's" is: report/listpolicy.h.
 */
enum pk_reply_mode {
	PK_REPLY_OFF,      /* none: tested and stored only ("never" is the old word for it) */
	PK_REPLY_CHANGES,  /* what is the author's: the console changed, or the patch broke the build
			      or the boot; never the bot's limits */
	PK_REPLY_ALWAYS,   /* every tested patch, the bot's limits included */
};
/* The word of the config for a mode ("off", "changes", "always"). */
const char *pk_reply_mode_name(enum pk_reply_mode mode);

/*
 * What a list wants mailed, and how: the keys a [list NAME] group and a
 * [tree NAME] group share (config.example says each one's default).
 */
struct pk_reply_policy {
	enum pk_reply_mode reply;
	bool to_author;           /* To the author (default true); false: To the list */
	bool cc_list;             /* Cc the list (default true) */
	bool positive;            /* with changes, also a no-visible-change patch (default false) */
	unsigned embargo_minutes; /* a mail waits this long; a later version or a resend inside the
				     window replaces it (default 0: at once) */
	char **subject_prefixes;  /* lower case: only a [PATCH ...] tag with one of these words is
				     mailed; NULL: any */
	unsigned max_per_day;     /* mails to the list in any 24 hours; over it: held, logged;
				     0: no limit (default 50) */
	unsigned max_per_author_day; /* the same per author (default 20) */
};

/*
 * [list NAME]: a mailing list the bot may answer, with its policy.  A
 * patch mail is the list's when its List-Id is list_id, else when address
 * is in its To or Cc (listpolicy.h says the order).
 */
struct pk_list_config {
	char *name;               /* NAME of [list NAME] */
	char *address;            /* address = (lower case): the list's posting address */
	char *list_id;            /* list_id = (lower case, no <>), default address with its @ made
				     a dot, as vger's and most lists' List-Id reads */
	struct pk_reply_policy policy;
};

/* [daemon]: how the mailing-list bot behaves. */
struct pk_daemon_config {
	char *from;               /* the bot's From: (default "printkbot <printkbot@localhost>",
				     which pk_config_check_daemon() refuses when replies are on) */
	/*
	 * reply_on: the reply of a mail that matches no [list NAME] group, as
	 * if such a group said reply = reply_on (default off: a list is
	 * answered once it has a group of its own)
	 */
	enum pk_reply_mode reply_on;
	unsigned max_reply_lines; /* a reply longer is cut in its boot-log and index diffs (default 120) */
	bool cc_original;         /* Cc the patch's own To and Cc too (default true) */
	double series_wait;       /* seconds to wait for the rest of a series (default 600) */
	double retry_min;         /* first retry of a failed reply, seconds (default 60) */
	double retry_max;         /* longest wait between retries (default 3600) */
	char *outbox;             /* the outbox Maildir; NULL: <cache dir>/outbox (outbox.h) */
	double lease;             /* seconds a worker holds a job without renewing it (default 120) */
	double worker_poll;       /* seconds a worker waits before asking an empty queue again (default 10) */
	double fetch_interval;    /* seconds between fetches of the [tree]s (default 3600) */
	char *metrics_dir;        /* where each process writes its figures for node_exporter's
				     textfile collector (a relative path is the config file's
				     neighbour); NULL: none written */
	double metrics_interval;  /* the figures are written at least this often (default 30) */
	/*
	 * Commands by mail (#printkbot lines in replies addressed to from):
	 * who may give them, "*" (everyone), addresses and "@domain"s;
	 * NULL (the default): nobody, commands are off.
	 */
	char **commands_from;
	unsigned commands_per_hour;        /* acted on per sender in any hour (default 5) */
	unsigned commands_per_thread_hour; /* acted on per series in any hour (default 3) */
	unsigned commands_total_per_hour;  /* acted on in all in any hour (default 20) */
	/*
	 * The authserv-ids of the Authentication-Results that the bot's own
	 * mail servers write (intake/authres.h): a command is acted on only
	 * when one vouches for its From (or its source is trusted_commands).
	 * NULL-terminated, lower case; NULL (the default): none.
	 */
	char **commands_authserv_id;
};

/*
 * [tree NAME]: an operator's kernel repository the lab fetches branches
 * of (lab/bases.h), and the branches of it the daemon watches: each push
 * there is tested commit by commit and its authors told (daemon.h).
 */
struct pk_tree_config {
	char *name;               /* NAME: the ref is refs/printkbot/trees/NAME/<branch> */
	char *url;                /* url =, or path = (a local repository), as libgit2 fetches it */
	char **branches;          /* branches = main, next (default: master) */
	char **watch;             /* watch = main next: branches watched (fetched too); NULL: none */
	char *list;               /* Cc'd on the mail about a pushed commit, or NULL */
	struct pk_reply_policy policy; /* reply (default: [daemon] reply_on) and the keys of a [list];
					  subject_prefixes is NULL: a commit has no [PATCH] tag */
	unsigned max_commits;     /* commits of one push tested at most, the newest (default 50) */
	bool trusted;             /* trusted = yes: its tips are built in place like a base's
	                             (lab/repo.h's pk_repo_head_trusted()); default no: in a layer */
};

/* Whether branch is one of t's watched branches. */
bool pk_tree_watches(const struct pk_tree_config *t, const char *branch);

/* [smtp]: how replies are sent. */
struct pk_smtp_config {
	char *url;                /* smtp://host[:port] (STARTTLS) or smtps://host[:port] (TLS) */
	char *user;               /* AUTH user, NULL for no AUTH */
	char *password;           /* from password, password_file or password_env; never logged */
	enum pk_tls tls;          /* see enum pk_tls */
	char *ca_file;
	bool insecure;
	double timeout;           /* seconds per transfer, default 60 */
};

/*
 * [site]: the static site of every review (`report --site`,
 * report/site.h).  Both keys are http(s) URLs or NULL.
 */
struct pk_site_config {
	char *url;                /* where readers reach the site; a reply's patch link: is its
	                             series' page there; NULL: the source's archive, as before */
	char *source_url;         /* a kernel source line's address, {path} {line} {commit}
	                             {base} replaced (report/html.h), or NULL: no source links */
	GHashTable *archives;     /* pk_config_site() only: [source NAME] -> its archive = */
};
void pk_site_config_clear(struct pk_site_config *site);

/*
 * [kcidb]: KCIDB exports (report/kcidb.h) and the daemon's posting of
 * each finished review.  url is an http(s) URL or NULL (no posting);
 * token is token_file's first line, read at load (a file group or
 * others may read is refused), NULL without url.
 */
struct pk_kcidb_config {
	char *origin;             /* the CI system's name in every id: [a-z0-9_]+, default "printkbot" */
	char *url;                /* where the daemon posts each review's document, or NULL */
	char *token;              /* sent as "Authorization: Bearer TOKEN" */
	double timeout;           /* seconds a post may take, 0 = 30 */
};
void pk_kcidb_config_clear(struct pk_kcidb_config *kcidb);

/*
 * Only [kcidb] origin of the file pk_config_load() would read (same
 * lookup): *out a new string, "printkbot" when the file or the key is
 * missing.  No token file is opened.  A bad value is an error as in
 * pk_config_load().
 */
int pk_config_kcidb_origin(char **out, const char *path, GError **err);

struct pk_config {
	char *path;               /* the file read, or NULL when none was */
	char *db;                 /* [store] url or path, or NULL for the default */
	char *base;               /* [test] base revision, or NULL for printkbot-base */
	double boot_timeout;      /* [test] boot_timeout seconds, 0 = default */
	unsigned derived_builds;  /* [test] derived_builds: derived build dirs kept, 0 = default */
	struct pk_policy policy;  /* [policy] */
	struct pk_sandbox_config sandbox; /* [policy] sandbox and limits (user points into sandbox_user) */
	char *sandbox_user;
	char *ccache_dir;                 /* [build] ccache_dir (sandbox.ccache_dir points here) */
	struct pk_daemon_config daemon; /* [daemon], defaults filled in */
	struct pk_smtp_config smtp;     /* [smtp], defaults filled in */
	GPtrArray *sources;       /* struct pk_source_config*, one per [source NAME], in file order */
	char *rules;              /* [test] rules: a log-monitor rule file (pipeline/monitor.h), or NULL */
	char **bases;             /* [test] bases: the bases a series may go on, in order
	                             ("debian:6.12", "net/main"); NULL: base alone */
	GPtrArray *trees;         /* struct pk_tree_config*, one per [tree NAME], in file order */
	GPtrArray *lists;         /* struct pk_list_config*, one per [list NAME], in file order */
	struct pk_site_config site; /* [site] (archives NULL: see sources) */
	struct pk_kcidb_config kcidb; /* [kcidb], origin always set */
	GKeyFile *keys;           /* the whole file, for the modules that read their own groups */
};

/*
 * The keys the configuration knows, a group at a time: the group's name
 * first (one ending in a space is a prefix: "source " is every [source
 * NAME]), then its keys, NULL-ended; NULL past the last group.  The
 * manual's test checks printkbot.conf(5) against it.
 */
const char *const *pk_config_known_keys(unsigned group);

/*
 * Read path (NULL: $PRINTKBOT_CONFIG, else /etc/printkbot.conf if it exists).
 * An unknown group or key, or a bad value, is an error naming the file,
 * the line, the group and the key.  Without a file, every default is set.
 * Loading changes nothing else: the caller makes config->sandbox the
 * process's settings (pk_sandbox_configure()) once it keeps the config,
 * so a reload that fails later leaves the old settings in force.
 */
int pk_config_load(struct pk_config *out, const char *path, GError **err);

/*
 * Only the [store] url or path of the file pk_config_load() would read (same
 * lookup), into *out (NULL: none given, or no file): for the commands
 * that only read the store, so that they need no more of the file than
 * that (password files the daemon's user alone may read, say).
 */
int pk_config_store_path(char **out, const char *path, GError **err);

/*
 * What `report --site` needs of the file pk_config_load() would read
 * (same lookup): [site], and each [source NAME]'s archive into
 * out->archives (a new table, NAME -> URL), nothing else (no password
 * file is opened).  Unknown keys and bad values are errors as in
 * pk_config_load().  No file: every member empty.  Clear with
 * pk_site_config_clear().
 */
int pk_config_site(struct pk_site_config *out, const char *path, GError **err);

/*
 * What the daemon needs beyond a config that parses: when it replies
 * (a [list] or a watched [tree] whose reply is not off, or [daemon]
 * reply_on not off), a From whose address is not at localhost
 * (the default): a reply from printkbot@localhost bounces or is dropped
 * as spam, and its loop guard matches nothing.  -1 with err naming the
 * file and [daemon] from.
 */
int pk_config_check_daemon(const struct pk_config *config, GError **err);

/*
 * A warning when the file read holds a secret (a password key, or a url
 * with a password or token: pk_url_has_secret()) and group or others may
 * read it, or NULL.  It names the file, the first such key and the mode,
 * never the secret.  Not an error: a file of root's that the daemon's
 * group reads is a setup some want, but it should be one on purpose.
 * The daemon logs it once at start.  Caller frees.
 */
char *pk_config_secret_exposed(const struct pk_config *config);
void pk_config_clear(struct pk_config *config);

#endif
