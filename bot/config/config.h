/*
 * config.h - printkbot's configuration file (GKeyFile syntax, see
 * config.example).  Every key is optional; a missing file given by name is
 * an error, the default file (/etc/printkbot.conf) missing is not.
 *
 * pk_config_load() fills a struct pk_config the caller clears with
 * pk_config_clear().  A bad value (a word where a number belongs, an
 * unknown policy key) is an error naming the file, the group and the key,
 * so a typo never silently relaxes the policy.
 *
 * The parser is one file, but each stage's part of the file is a type of
 * that stage's, which it reads without knowing the rest: [source NAME] is
 * intake.h's, [tree NAME]'s repository lab/bases.h's, [test]
 * pipeline/sequence.h's, [list NAME] and the reply keys
 * report/listpolicy.h's, the sender report/reply.h's, [smtp], [site] and
 * [kcidb] the report's own, [policy] base/settings.h's, the sandbox's lab/sandbox.h's.
 * What is here is what only the daemon reads ([daemon], a watched tree's
 * mail) and the whole file: this floor sits right under the daemon and
 * the commands, the two that load it.
 */
#ifndef PK_CONFIG_H
#define PK_CONFIG_H

#include <glib.h>

#include "base/settings.h"
#include "intake/intake.h"
#include "lab/bases.h"
#include "lab/sandbox.h"
#include "pipeline/sequence.h"
#include "report/kcidb.h"
#include "report/listpolicy.h"
#include "report/reply.h"
#include "report/site.h"
#include "report/smtp.h"

/*
 * The longest duration any key takes, in seconds (30 days): a bigger one
 * is a typo or an attack on the daemon's arithmetic, refused at load
 * like nan and inf.  retry_min and retry_max are at least 1.
 */
#define PK_CONFIG_SECONDS_MAX 2592000

/* [daemon]: how the mailing-list bot behaves. */
struct pk_daemon_config {
	struct pk_reply_config mail; /* from and cc_original: who a reply is from, whom it copies */
	/*
	 * reply_on: the reply of a mail that matches no [list NAME] group, as
	 * if such a group said reply = reply_on (default off: a list is
	 * answered once it has a group of its own)
	 */
	enum pk_reply_mode reply_on;
	unsigned max_reply_lines; /* a reply longer is cut in its boot-log and index diffs (default 120) */
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
 * [tree NAME] whole: the lab's part (where the repository is, the
 * branches fetched and watched) first, so that a struct pk_tree_group *
 * is a struct pk_tree_config * too (C's first member rule); then what the
 * daemon mails about a push to a watched branch (daemon/daemon.h).
 */
struct pk_tree_group {
	struct pk_tree_config tree;
	char *list;               /* Cc'd on the mail about a pushed commit, or NULL */
	struct pk_reply_policy policy; /* reply (default: [daemon] reply_on) and the keys of a [list];
					  subject_prefixes is NULL: a commit has no [PATCH] tag */
	unsigned max_commits;     /* commits of one push tested at most, the newest (default 50) */
};

struct pk_config {
	char *path;               /* the file read, or NULL when none was */
	char *db;                 /* [store] url or path, or NULL for the default */
	struct pk_test_config test; /* [test] */
	struct pk_policy policy;  /* [policy] */
	struct pk_sandbox_config sandbox; /* [policy] sandbox and limits (user points into sandbox_user) */
	char *sandbox_user;
	char *ccache_dir;                 /* [build] ccache_dir (sandbox.ccache_dir points here) */
	struct pk_daemon_config daemon; /* [daemon], defaults filled in */
	struct pk_smtp_config smtp;     /* [smtp], defaults filled in */
	GPtrArray *sources;       /* struct pk_source_config*, one per [source NAME], in file order */
	GPtrArray *trees;         /* struct pk_tree_group*, one per [tree NAME], in file order; each
	                             is its struct pk_tree_config first, so this is also the lab's
	                             array of those (pk_bases_choose()) */
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
 * Only [kcidb] origin of the file pk_config_load() would read (same
 * lookup): *out a new string, "printkbot" when the file or the key is
 * missing.  No token file is opened.  A bad value is an error as in
 * pk_config_load().
 */
int pk_config_kcidb_origin(char **out, const char *path, GError **err);

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
