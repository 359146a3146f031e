/*
 * config.c - the configuration file, read with GLib's GKeyFile.
 */
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <gio/gio.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

#define DEFAULT_CONFIG "/etc/printkbot.conf"

/*
 * The keys each group may hold: an unknown one is a typo, and an error.
 * A group name ending in a space is a prefix: "source " is every
 * [source NAME].
 */
static const char *const known_keys[][24] = {
	{ "store", "path", "url", NULL },
	{ "test", "base", "bases", "boot_timeout", "derived_builds", "rules", "arch", NULL },
	{ "build", "cc", "jobs", "ccache_dir", NULL },
	{ "policy", "allow_build_system", "allow_other_files", "max_files", "max_lines", "max_mail_mb",
	  "sandbox", "sandbox_user", "build_timeout", "build_cpu_seconds", "build_memory_mb",
	  "build_file_mb", "build_processes", "layer_mb", "max_console_mb", "max_capture_mb", NULL },
	{ "daemon", "from", "reply_on", "cc_original", "series_wait", "retry_min", "retry_max", "outbox",
	  "lease", "worker_poll", "fetch_interval", "metrics_dir", "metrics_interval", "commands_from",
	  "commands_per_hour", "commands_per_thread_hour", "commands_total_per_hour", "commands_authserv_id",
	  "max_reply_lines", NULL },
	/* reply_on is the old name of a tree's reply: known, so that its error can say so */
	{ "tree ", "url", "path", "branches", "watch", "list", "reply", "reply_on", "to_author", "cc_list",
	  "positive", "embargo_minutes", "max_per_day", "max_per_author_day", "max_commits", "trusted", NULL },
	{ "list ", "address", "list_id", "reply", "to_author", "cc_list", "positive", "embargo_minutes",
	  "subject_prefixes", "max_per_day", "max_per_author_day", NULL },
	/* starttls is the old name of tls: known, so that its error can say so */
	{ "smtp", "url", "user", "password", "password_file", "password_env", "tls", "starttls",
	  "ca_file", "insecure", "timeout", NULL },
	{ "source ", "type", "url", "path", "user", "password", "password_file", "password_env",
	  "list", "poll_interval", "ca_file", "insecure", "archive", "tls", "start", "trusted_commands", NULL },
	{ "site", "url", "source_url", NULL },
	{ "kcidb", "origin", "url", "token_file", "timeout", NULL },
};

const char *const *pk_config_known_keys(unsigned group)
{
	return group < G_N_ELEMENTS(known_keys) ? known_keys[group] : NULL;
}

/*
 * The line of the file where a group (key NULL) or a key of it is, for
 * error messages: GKeyFile does not keep line numbers.  0 when not found.
 */
static int line_of(const char *path, const char *group, const char *key)
{
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	bool in_group = false;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return 0;
	lines = g_strsplit(text, "\n", -1);
	for (int i = 0; lines[i]; i++) {
		g_autofree char *l = g_strstrip(g_strdup(lines[i]));

		if (l[0] == '[') {
			g_autofree char *want = g_strdup_printf("[%s]", group);
			in_group = !strcmp(l, want);
			if (in_group && !key)
				return i + 1;
			continue;
		}
		if (in_group && key && g_str_has_prefix(l, key)) {
			const char *r = l + strlen(key);
			while (*r == ' ' || *r == '\t')
				r++;
			if (*r == '=')
				return i + 1;
		}
	}
	return 0;
}

/*
 * What GKeyFile lets pass in silence, refused here with the file and line:
 * a group given twice (GKeyFile merges them), a key given twice in one
 * group (the last would win), and a value holding " #" (GKeyFile has no
 * trailing comments: "max_files = 5 # few" would be the value "5 # few",
 * a password with the comment in it).  And a line GKeyFile cannot parse,
 * found here so that its error says where it is (GKeyFile's does not).
 * A file that cannot be read is left to GKeyFile to report.
 */
static int config_scan(const char *path, GError **err)
{
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	g_autoptr(GHashTable) groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) keys = NULL;
	g_autofree char *group = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return 0;
	lines = g_strsplit(text, "\n", -1);
	for (int i = 0; lines[i]; i++) {
		char *l = g_strstrip(lines[i]);
		int n = i + 1, first;
		char *eq;

		if (!*l || *l == '#')
			continue;
		if (*l == '[') {
			if (l[strlen(l) - 1] != ']')
				return pk_error(err, PK_ERROR_INPUT, "%s:%d: '%s' is not a [group] line "
						"(no closing ])", path, n, l);
			g_free(group);
			group = g_strndup(l + 1, strlen(l) - 2);
			if ((first = GPOINTER_TO_INT(g_hash_table_lookup(groups, group))))
				return pk_error(err, PK_ERROR_INPUT, "%s:%d: [%s]: given again (first at line "
						"%d): one group, one place", path, n, group, first);
			g_hash_table_insert(groups, g_strdup(group), GINT_TO_POINTER(n));
			g_clear_pointer(&keys, g_hash_table_unref);
			keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
			continue;
		}
		if (!(eq = strchr(l, '=')))
			return pk_error(err, PK_ERROR_INPUT, "%s:%d: '%s' is not a [group], a key = value "
					"or a # comment", path, n, l);
		if (!group)
			return pk_error(err, PK_ERROR_INPUT, "%s:%d: a key before any [group]", path, n);
		*eq = '\0';
		g_strchomp(l);
		if ((first = GPOINTER_TO_INT(g_hash_table_lookup(keys, l))))
			return pk_error(err, PK_ERROR_INPUT, "%s:%d: [%s] %s: given again (first at line %d): "
					"keep one", path, n, group, l, first);
		g_hash_table_insert(keys, g_strdup(l), GINT_TO_POINTER(n));
		if (strstr(eq + 1, " #") || strstr(eq + 1, "\t#"))
			return pk_error(err, PK_ERROR_INPUT, "%s:%d: [%s] %s: a # after the value would be "
					"part of it (comments are lines of their own): move the comment to a "
					"line above (a password with \" #\" in it: password_file or "
					"password_env)", path, n, group, l);
	}
	return 0;
}

/* "file:line: [group] key: what" — the one shape of every config error. */
static int config_error(GError **err, const char *path, const char *group, const char *key,
			const char *fmt, ...) G_GNUC_PRINTF(5, 6);
static int config_error(GError **err, const char *path, const char *group, const char *key,
			const char *fmt, ...)
{
	g_autofree char *what = NULL;
	va_list ap;
	/* a key that is missing is said at its group's line */
	int line = line_of(path, group, key) ?: (key ? line_of(path, group, NULL) : 0);

	va_start(ap, fmt);
	what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (key)
		return pk_error(err, PK_ERROR_INPUT, "%s:%d: [%s] %s: %s", path, line, group, key, what);
	return pk_error(err, PK_ERROR_INPUT, "%s:%d: [%s]: %s", path, line, group, what);
}

static int known_group(const char *group)
{
	for (guint g = 0; g < G_N_ELEMENTS(known_keys); g++) {
		const char *name = known_keys[g][0];
		size_t n = strlen(name);

		if (n && name[n - 1] == ' ' ? g_str_has_prefix(group, name) && group[n]
					     : !strcmp(group, name))
			return (int)g;
	}
	return -1;
}

static int check_known_keys(GKeyFile *kf, const char *path, GError **err)
{
	g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);

	for (char **grp = groups; grp && *grp; grp++) {
		int g = known_group(*grp);
		g_auto(GStrv) keys = NULL;

		if (g < 0)
			return config_error(err, path, *grp, NULL, "unknown group");
		keys = g_key_file_get_keys(kf, *grp, NULL, NULL);
		for (char **k = keys; k && *k; k++) {
			gboolean known = FALSE;
			for (guint i = 1; known_keys[g][i]; i++)
				known |= !strcmp(*k, known_keys[g][i]);
			if (!known)
				return pk_error(err, PK_ERROR_INPUT, "%s:%d: [%s]: unknown key '%s'", path,
						line_of(path, *grp, *k), *grp, *k);
		}
	}
	return 0;
}

/* Read an optional typed key; a present but malformed one is an error naming it. */
static int get_bool(GKeyFile *kf, const char *path, const char *group, const char *key, bool *out, GError **err)
{
	g_autoptr(GError) e = NULL;
	gboolean v;

	if (!g_key_file_has_key(kf, group, key, NULL))
		return 0;
	v = g_key_file_get_boolean(kf, group, key, &e);
	if (e) {
		g_autofree char *raw = g_key_file_get_value(kf, group, key, NULL);

		/* GLib's message names no value it takes: say them */
		return config_error(err, path, group, key, "'%s' is not a boolean: true or false",
				    raw ? g_strstrip(raw) : "");
	}
	*out = v;
	return 0;
}

static int get_uint(GKeyFile *kf, const char *path, const char *group, const char *key, unsigned *out, GError **err)
{
	g_autoptr(GError) e = NULL;
	g_autofree char *raw = NULL;
	guint64 v;

	if (!g_key_file_has_key(kf, group, key, NULL))
		return 0;
	/* g_ascii_strtoull() takes "-1" as 2^64 - 1: said as what it is, not "too large" */
	raw = g_key_file_get_value(kf, group, key, NULL);
	if (raw && *g_strchug(raw) == '-')
		return config_error(err, path, group, key, "must not be negative");
	v = g_key_file_get_uint64(kf, group, key, &e);
	if (e)
		return config_error(err, path, group, key, "'%s' is not a whole number", raw ? raw : "");
	if (v > G_MAXUINT)
		return config_error(err, path, group, key, "%s is too large (at most %u)", raw, G_MAXUINT);
	*out = (unsigned)v;
	return 0;
}

/*
 * A duration in seconds: finite, at least min, at most PK_CONFIG_SECONDS_MAX
 * (g_key_file_get_double() takes nan, inf and 1e19, which became tight
 * loops and waits that never end).
 */
static int get_seconds(GKeyFile *kf, const char *path, const char *group, const char *key, double min,
		       double *out, GError **err)
{
	g_autoptr(GError) e = NULL;
	double v;

	if (!g_key_file_has_key(kf, group, key, NULL))
		return 0;
	v = g_key_file_get_double(kf, group, key, &e);
	if (e) {
		g_autofree char *raw = g_key_file_get_value(kf, group, key, NULL);

		return config_error(err, path, group, key, "'%s' is not a number of seconds (such as 90 or 2.5)",
				    raw ? g_strstrip(raw) : "");
	}
	if (!isfinite(v))
		return config_error(err, path, group, key, "'%g' is not a number of seconds", v);
	if (v < 0)
		return config_error(err, path, group, key, "must not be negative");
	if (v < min || v > PK_CONFIG_SECONDS_MAX)
		return config_error(err, path, group, key, "%g seconds is outside %g to %d", v, min,
				    PK_CONFIG_SECONDS_MAX);
	*out = v;
	return 0;
}

static char *get_string(GKeyFile *kf, const char *group, const char *key, const char *def)
{
	char *v = kf ? g_key_file_get_string(kf, group, key, NULL) : NULL;

	if (v && *g_strstrip(v))
		return v;
	g_free(v);
	return g_strdup(def);
}

/* A value that must be one of words (NULL-terminated); def when absent. */
static int get_word(GKeyFile *kf, const char *path, const char *group, const char *key,
		    const char *const *words, char **out, GError **err)
{
	g_autofree char *v = get_string(kf, group, key, words[0]);
	g_autofree char *all = g_strjoinv(", ", (char **)words);

	for (const char *const *w = words; *w; w++)
		if (!strcmp(v, *w)) {
			*out = g_steal_pointer(&v);
			return 0;
		}
	return config_error(err, path, group, key, "'%s' is not one of %s", v, all);
}

/*
 * The contents of a password file, refused when group or others may read
 * it: a secret anyone on the host can read is no longer one (ssh refuses
 * such a key for the same reason).  The mode is checked on the descriptor
 * read, so a file swapped in between is not read unchecked.  Only a
 * regular file is read: opening a FIFO waits for a writer, and every
 * command that loads the configuration hung on it (O_NONBLOCK opens it
 * at once, and then it is refused).
 */
static int read_secret_file(const char *file, char **out, GError **err)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	int rc;

	if (fd < 0)
		return pk_error(err, PK_ERROR_INPUT, "%s: %s", file, g_strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = pk_error(err, PK_ERROR_INPUT, "%s: %s", file, g_strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		rc = pk_error(err, PK_ERROR_INPUT, "%s is not a regular file (a FIFO, a device or a "
			      "directory): a password file must be one", file);
	} else if (st.st_mode & (S_IRGRP | S_IROTH)) {
		rc = pk_error(err, PK_ERROR_INPUT, "%s is readable by %s (mode %04o): chmod 600 it",
			      file, st.st_mode & S_IROTH ? "others" : "its group",
			      (unsigned)(st.st_mode & 07777));
	} else {
		/* a password is a line: 64 KiB is plenty, and a device file cannot feed us forever */
		char *buf = g_malloc(65536);
		ssize_t n, got = 0;

		while ((n = read(fd, buf + got, 65535 - (size_t)got)) > 0 || (n < 0 && errno == EINTR))
			got += MAX(n, 0);
		buf[got] = '\0';
		if (n < 0) {
			rc = pk_error(err, PK_ERROR_INPUT, "%s: %s", file, g_strerror(errno));
			g_free(buf);
		} else {
			*out = buf;
			rc = 0;
		}
	}
	close(fd);
	return rc;
}

/*
 * A secret from password, password_file (its first line) or password_env,
 * at most one of them.  The value itself never appears in an error.
 */
static int get_password(GKeyFile *kf, const char *path, const char *group, char **out, GError **err)
{
	g_autofree char *inline_pw = g_key_file_get_string(kf, group, "password", NULL);
	g_autofree char *file = get_string(kf, group, "password_file", NULL);
	g_autofree char *env = get_string(kf, group, "password_env", NULL);
	g_autofree char *text = NULL;
	g_autoptr(GError) e = NULL;

	if (!!inline_pw + !!file + !!env > 1)
		return config_error(err, path, group, NULL, "give one of password, password_file and password_env");
	if (inline_pw) {
		*out = g_steal_pointer(&inline_pw);
	} else if (file) {
		if (read_secret_file(file, &text, &e) < 0)
			return config_error(err, path, group, "password_file", "%s", e->message);
		text[strcspn(text, "\r\n")] = '\0';
		*out = g_steal_pointer(&text);
	} else if (env) {
		const char *v = g_getenv(env);
		if (!v)
			return config_error(err, path, group, "password_env", "$%s is not set", env);
		*out = g_strdup(v);
	}
	return 0;
}

/* tls = required | try | off for a connection to url; the default is by pk_url_is_loopback(). */
static int get_tls(GKeyFile *kf, const char *path, const char *group, const char *url,
		   enum pk_tls *out, GError **err)
{
	static const char *const words[] = { "required", "try", "off", NULL };
	g_autofree char *v = NULL;

	if (!g_key_file_has_key(kf, group, "tls", NULL)) {
		*out = pk_url_is_loopback(url) ? PK_TLS_TRY : PK_TLS_REQUIRED;
		return 0;
	}
	if (get_word(kf, path, group, "tls", words, &v, err) < 0)
		return -1;
	*out = !strcmp(v, "off") ? PK_TLS_OFF : !strcmp(v, "try") ? PK_TLS_TRY : PK_TLS_REQUIRED;
	if (*out == PK_TLS_OFF && url &&
	    (g_str_has_prefix(url, "imaps://") || g_str_has_prefix(url, "smtps://")))
		return config_error(err, path, group, "tls",
				    "'off' contradicts the url %s (TLS from the start)", url);
	return 0;
}

/* start = now | all | a date (YYYY-MM-DD, midnight UTC) or an ISO 8601 time; absent: now. */
static int get_start(GKeyFile *kf, const char *path, const char *group, struct pk_source_config *s,
		     GError **err)
{
	g_autofree char *v = get_string(kf, group, "start", "now");
	g_autoptr(GTimeZone) utc = g_time_zone_new_utc();
	g_autoptr(GDateTime) t = NULL;
	int y, m, d;
	char end;

	s->start = !strcmp(v, "now") ? PK_START_NOW : !strcmp(v, "all") ? PK_START_ALL : PK_START_DATE;
	if (s->start != PK_START_DATE)
		return 0;
	if (sscanf(v, "%4d-%2d-%2d%c", &y, &m, &d, &end) == 3)
		t = g_date_time_new(utc, y, m, d, 0, 0, 0);
	else
		t = g_date_time_new_from_iso8601(v, utc);
	if (!t)
		return config_error(err, path, group, "start",
				    "'%s' is not now, all or a date (YYYY-MM-DD)", v);
	s->start_date = g_date_time_to_unix(t);
	return 0;
}

static void source_config_free(struct pk_source_config *s)
{
	if (!s)
		return;
	g_free(s->name);
	g_free(s->type);
	g_free(s->url);
	g_free(s->path);
	g_free(s->user);
	if (s->password)
		memset(s->password, 0, strlen(s->password));
	g_free(s->password);
	g_free(s->list);
	g_free(s->archive);
	g_free(s->ca_file);
	g_free(s);
}

/*
 * A path of the config (owned, may be NULL): a relative one is the
 * config file's neighbour, wherever the command runs (from the working
 * directory, a daemon started elsewhere or a cron job would find another).
 */
static char *beside_config(const char *config_path, char *file)
{
	g_autofree char *dir = NULL, *abs_dir = NULL, *rel = file;

	if (!file || !*file || g_path_is_absolute(file) || !config_path)
		return g_steal_pointer(&rel);
	dir = g_path_get_dirname(config_path);
	abs_dir = g_canonicalize_filename(dir, NULL);
	return g_canonicalize_filename(rel, abs_dir);
}

/*
 * [daemon] commands_from: "*", addresses and "@domain"s, split at commas
 * and blanks, lower case; none (absent or empty): NULL, commands off.  A
 * word that is none of those (a bare name, "@", "a@") is an error: a typo
 * must not open commands to nobody or to everyone.
 */
static int load_commands_from(GKeyFile *kf, const char *path, struct pk_daemon_config *d, GError **err)
{
	g_autofree char *v = g_key_file_get_string(kf, "daemon", "commands_from", NULL);
	g_auto(GStrv) words = v ? g_strsplit_set(v, ", \t", -1) : NULL;
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);

	for (char **w = words; w && *w; w++) {
		const char *at = strrchr(*w, '@');

		if (!**w)
			continue;
		if (strcmp(*w, "*") && (!at || !at[1] || strchr(at + 1, '@') || (at != *w && strchr(*w, '@') != at)))
			return config_error(err, path, "daemon", "commands_from", "'%s' is not *, an address "
					    "or an @domain", *w);
		g_ptr_array_add(out, g_ascii_strdown(*w, -1));
	}
	if (!out->len)
		return 0;
	g_ptr_array_add(out, NULL);
	d->commands_from = (char **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
	return 0;
}

/*
 * A reply mode: off, changes or always (and never, the old word for off,
 * where old_never: [daemon] reply_on was written so before there were
 * [list] groups); absent keeps *out.
 */
static int get_reply_mode(GKeyFile *kf, const char *path, const char *group, const char *key, bool old_never,
			  enum pk_reply_mode *out, GError **err)
{
	static const char *const words[] = { "off", "changes", "always", "never", NULL };
	g_autofree char *v = NULL;

	if (!g_key_file_has_key(kf, group, key, NULL))
		return 0;
	v = get_string(kf, group, key, "");
	for (int i = 0; words[i]; i++)
		if (!strcmp(v, words[i]) && (i < 3 || old_never)) {
			*out = i == 3 ? PK_REPLY_OFF : (enum pk_reply_mode)i;
			return 0;
		}
	return config_error(err, path, group, key, "'%s' is not one of off, changes, always", v);
}

/* At least min: a key whose 0 would make no sense (a reply of no lines). */
static int get_uint_min(GKeyFile *kf, const char *path, const char *group, const char *key, unsigned min,
			unsigned *out, GError **err)
{
	if (get_uint(kf, path, group, key, out, err) < 0)
		return -1;
	if (*out < min)
		return config_error(err, path, group, key, "at least %u", min);
	return 0;
}

/*
 * [daemon] commands_authserv_id: the authserv-ids to trust, split at
 * commas and blanks, lower case; none: NULL.  An id is a host name's
 * characters (what RFC 8601 calls a token, as MTAs write it): anything
 * else is a typo that no header would ever match, so an error.
 */
static int load_authserv_ids(GKeyFile *kf, const char *path, struct pk_daemon_config *d, GError **err)
{
	g_autofree char *v = g_key_file_get_string(kf, "daemon", "commands_authserv_id", NULL);
	g_auto(GStrv) words = v ? g_strsplit_set(v, ", \t", -1) : NULL;
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);

	for (char **w = words; w && *w; w++) {
		if (!**w)
			continue;
		for (const char *p = *w; *p; p++)
			if (!g_ascii_isalnum(*p) && !strchr(".-_", *p))
				return config_error(err, path, "daemon", "commands_authserv_id", "'%s' is not an "
						    "authserv-id (the name your mail server writes first in its "
						    "Authentication-Results, such as mx.example.org)", *w);
		g_ptr_array_add(out, g_ascii_strdown(*w, -1));
	}
	if (!out->len)
		return 0;
	g_ptr_array_add(out, NULL);
	d->commands_authserv_id = (char **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
	return 0;
}

static int load_daemon(GKeyFile *kf, const char *path, struct pk_config *c, GError **err)
{
	struct pk_daemon_config *d = &c->daemon;

	d->mail.from = get_string(kf, "daemon", "from", "printkbot <printkbot@localhost>");
	d->mail.cc_original = true;
	d->series_wait = 600;
	d->retry_min = 60;
	d->retry_max = 3600;
	d->lease = 120;
	d->worker_poll = 10;
	d->fetch_interval = 3600;
	d->outbox = get_string(kf, "daemon", "outbox", NULL);
	d->metrics_dir = beside_config(path, get_string(kf, "daemon", "metrics_dir", NULL));
	d->metrics_interval = 30;
	d->commands_per_hour = 5;
	d->commands_per_thread_hour = 3;
	d->reply_on = PK_REPLY_OFF;
	d->max_reply_lines = 120;
	d->commands_total_per_hour = 20;
	if (!kf)
		return 0;
	if (get_reply_mode(kf, path, "daemon", "reply_on", true, &d->reply_on, err) < 0 ||
	    /* the head and the signature alone take about 30 lines */
	    get_uint_min(kf, path, "daemon", "max_reply_lines", 40, &d->max_reply_lines, err) < 0 ||
	    get_bool(kf, path, "daemon", "cc_original", &d->mail.cc_original, err) < 0 ||
	    get_seconds(kf, path, "daemon", "series_wait", 0, &d->series_wait, err) < 0 ||
	    get_seconds(kf, path, "daemon", "retry_min", 1, &d->retry_min, err) < 0 ||
	    get_seconds(kf, path, "daemon", "retry_max", 1, &d->retry_max, err) < 0 ||
	    /* renewed every third of it: a lease of a few seconds would be lost to a busy store */
	    get_seconds(kf, path, "daemon", "lease", 3, &d->lease, err) < 0 ||
	    get_seconds(kf, path, "daemon", "worker_poll", 0.1, &d->worker_poll, err) < 0 ||
	    get_seconds(kf, path, "daemon", "fetch_interval", 1, &d->fetch_interval, err) < 0 ||
	    get_seconds(kf, path, "daemon", "metrics_interval", 1, &d->metrics_interval, err) < 0 ||
	    get_uint(kf, path, "daemon", "commands_per_hour", &d->commands_per_hour, err) < 0 ||
	    get_uint(kf, path, "daemon", "commands_per_thread_hour", &d->commands_per_thread_hour, err) < 0 ||
	    get_uint(kf, path, "daemon", "commands_total_per_hour", &d->commands_total_per_hour, err) < 0 ||
	    load_commands_from(kf, path, d, err) < 0 || load_authserv_ids(kf, path, d, err) < 0)
		return -1;
	if (!strchr(d->mail.from, '@') || strpbrk(d->mail.from, "\r\n"))
		return config_error(err, path, "daemon", "from", "'%s' is not a mail address", d->mail.from);
	return 0;
}

static int load_smtp(GKeyFile *kf, const char *path, struct pk_config *c, GError **err)
{
	struct pk_smtp_config *m = &c->smtp;

	m->url = get_string(kf, "smtp", "url", "smtp://localhost:25");
	m->timeout = 60;
	m->tls = pk_url_is_loopback(m->url) ? PK_TLS_TRY : PK_TLS_REQUIRED;
	if (!kf)
		return 0;
	if (g_key_file_has_key(kf, "smtp", "starttls", NULL))
		return config_error(err, path, "smtp", "starttls",
				    "is now tls = required | try | off (always is required, never is off)");
	m->user = get_string(kf, "smtp", "user", NULL);
	m->ca_file = get_string(kf, "smtp", "ca_file", NULL);
	if (get_tls(kf, path, "smtp", m->url, &m->tls, err) < 0 ||
	    get_bool(kf, path, "smtp", "insecure", &m->insecure, err) < 0 ||
	    get_seconds(kf, path, "smtp", "timeout", 0, &m->timeout, err) < 0 ||
	    get_password(kf, path, "smtp", &m->password, err) < 0)
		return -1;
	if (!g_str_has_prefix(m->url, "smtp://") && !g_str_has_prefix(m->url, "smtps://"))
		return config_error(err, path, "smtp", "url", "'%s' is not an smtp:// or smtps:// URL", m->url);
	return 0;
}

/*
 * Whether url is an http(s):// URL a page can link to as it is: nothing
 * in it that ends an HTML attribute or a mail header line.
 */
static bool http_url(const char *url)
{
	return (g_str_has_prefix(url, "https://") || g_str_has_prefix(url, "http://")) &&
	       !strpbrk(url, " \t\r\n\"'<>\\`");
}

static int load_source(GKeyFile *kf, const char *path, const char *group, GPtrArray *out, GError **err)
{
	static const char *const types[] = { "imap", "maildir", "mbox", "public-inbox", NULL };
	struct pk_source_config *s = g_new0(struct pk_source_config, 1);

	g_ptr_array_add(out, s);
	s->name = g_strdup(group + strlen("source "));
	s->url = get_string(kf, group, "url", NULL);
	s->path = get_string(kf, group, "path", NULL);
	s->user = get_string(kf, group, "user", NULL);
	s->list = get_string(kf, group, "list", NULL);
	s->archive = get_string(kf, group, "archive", NULL);
	s->ca_file = get_string(kf, group, "ca_file", NULL);
	s->poll_interval = 300;
	if (!g_key_file_has_key(kf, group, "type", NULL))
		return config_error(err, path, group, NULL, "no type (one of imap, maildir, mbox, public-inbox)");
	if (get_word(kf, path, group, "type", types, &s->type, err) < 0 ||
	    get_bool(kf, path, group, "insecure", &s->insecure, err) < 0 ||
	    get_bool(kf, path, group, "trusted_commands", &s->trusted_commands, err) < 0 ||
	    get_seconds(kf, path, group, "poll_interval", 0, &s->poll_interval, err) < 0 ||
	    get_tls(kf, path, group, s->url, &s->tls, err) < 0 ||
	    get_start(kf, path, group, s, err) < 0 ||
	    get_password(kf, path, group, &s->password, err) < 0)
		return -1;
	if (!strcmp(s->type, "imap") && (!s->url || (!g_str_has_prefix(s->url, "imap://") &&
						     !g_str_has_prefix(s->url, "imaps://"))))
		return config_error(err, path, group, "url", "an imap source needs url = imap[s]://host/MAILBOX");
	if (strcmp(s->type, "imap") && !s->path)
		return config_error(err, path, group, NULL, "a %s source needs a path", s->type);
	if (s->archive && !http_url(s->archive))
		return config_error(err, path, group, "archive", "'%s' is not an http(s):// URL", s->archive);
	if (s->poll_interval < 1)
		s->poll_interval = 1;
	return 0;
}

static int load_sources(GKeyFile *kf, const char *path, struct pk_config *c, GError **err)
{
	g_auto(GStrv) groups = kf ? g_key_file_get_groups(kf, NULL) : NULL;

	c->sources = g_ptr_array_new_with_free_func((GDestroyNotify)source_config_free);
	for (char **g = groups; g && *g; g++)
		if (g_str_has_prefix(*g, "source ") && load_source(kf, path, *g, c->sources, err) < 0)
			return -1;
	return 0;
}

/* A comma-separated value as words, blanks trimmed and empty ones dropped; NULL when absent. */
static char **comma_list(GKeyFile *kf, const char *group, const char *key)
{
	g_autofree char *v = g_key_file_get_string(kf, group, key, NULL);
	g_auto(GStrv) words = v ? g_strsplit(v, ",", -1) : NULL;
	GPtrArray *out;

	if (!words)
		return NULL;
	out = g_ptr_array_new();
	for (char **w = words; *w; w++)
		if (*g_strstrip(*w))
			g_ptr_array_add(out, g_strdup(*w));
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}

static void tree_group_free(struct pk_tree_group *g)
{
	g_free(g->tree.name);
	g_free(g->tree.url);
	g_strfreev(g->tree.branches);
	g_strfreev(g->tree.watch);
	g_free(g->list);
	g_strfreev(g->policy.subject_prefixes);
	g_free(g);
}

/*
 * watch = main next (or main, next): branch names, each once.  A name git
 * would refuse as a branch (a blank, .., ~ ^ : ? * [ \, a leading - or
 * a trailing / or .lock) is an error: it could never be fetched.
 */
static int get_watch(GKeyFile *kf, const char *path, const char *group, char ***out, GError **err)
{
	g_autofree char *v = g_key_file_get_string(kf, group, "watch", NULL);
	g_auto(GStrv) words = v ? g_strsplit_set(v, ", \t", -1) : NULL;
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);

	for (char **w = words; w && *w; w++) {
		if (!**w)
			continue;
		if (strstr(*w, "..") || strpbrk(*w, "~^:?*[\\") || **w == '-' || **w == '/' ||
		    g_str_has_suffix(*w, "/") || g_str_has_suffix(*w, ".lock") || strstr(*w, "//"))
			return config_error(err, path, group, "watch", "'%s' is not a branch name", *w);
		if (!g_ptr_array_find_with_equal_func(names, *w, g_str_equal, NULL))
			g_ptr_array_add(names, g_strdup(*w));
	}
	if (!names->len)
		return 0;
	g_ptr_array_add(names, NULL);
	*out = (char **)g_ptr_array_free(g_steal_pointer(&names), FALSE);
	return 0;
}

/*
 * The keys a [list] and a [tree] share into *p, from the defaults of a
 * group whose reply is def: to_author and cc_list on, positive off, no
 * embargo, 50 mails a day to the list and 20 to one author.
 */
static int load_reply_policy(GKeyFile *kf, const char *path, const char *group, enum pk_reply_mode def,
			     struct pk_reply_policy *p, GError **err)
{
	*p = (struct pk_reply_policy){ .reply = def, .to_author = true, .cc_list = true,
				       .max_per_day = 50, .max_per_author_day = 20 };
	if (get_reply_mode(kf, path, group, "reply", false, &p->reply, err) < 0 ||
	    get_bool(kf, path, group, "to_author", &p->to_author, err) < 0 ||
	    get_bool(kf, path, group, "cc_list", &p->cc_list, err) < 0 ||
	    get_bool(kf, path, group, "positive", &p->positive, err) < 0 ||
	    get_uint(kf, path, group, "embargo_minutes", &p->embargo_minutes, err) < 0 ||
	    get_uint(kf, path, group, "max_per_day", &p->max_per_day, err) < 0 ||
	    get_uint(kf, path, group, "max_per_author_day", &p->max_per_author_day, err) < 0)
		return -1;
	if (p->embargo_minutes > PK_CONFIG_SECONDS_MAX / 60)
		return config_error(err, path, group, "embargo_minutes", "%u minutes is more than 30 days",
				    p->embargo_minutes);
	if (p->reply != PK_REPLY_OFF && !p->to_author && !p->cc_list)
		return config_error(err, path, group, NULL, "to_author and cc_list are both false: nobody would "
				    "be mailed (reply = off says that)");
	return 0;
}

/* What a [tree] does with its watched branches: watch, list, reply and its policy, max_commits. */
static int load_tree_watch(GKeyFile *kf, const char *path, const char *group, const struct pk_config *c,
			   struct pk_tree_group *t, GError **err)
{
	t->max_commits = 50;
	t->list = g_key_file_get_string(kf, group, "list", NULL);
	if (g_key_file_has_key(kf, group, "reply_on", NULL))
		return config_error(err, path, group, "reply_on", "is now reply = off | changes | always (never "
				    "is off), as in a [list] group");
	if (get_watch(kf, path, group, &t->tree.watch, err) < 0 ||
	    get_uint(kf, path, group, "max_commits", &t->max_commits, err) < 0 ||
	    load_reply_policy(kf, path, group, c->daemon.reply_on, &t->policy, err) < 0)
		return -1;
	if (t->list && (!strchr(t->list, '@') || strpbrk(t->list, "\r\n")))
		return config_error(err, path, group, "list", "'%s' is not a mail address", t->list);
	if (t->max_commits < 1)
		return config_error(err, path, group, "max_commits", "at least 1 (a push of thousands is "
				    "cut to its newest max_commits, never skipped whole)");
	return 0;
}

/* [tree NAME]: url or path (one of them), branches (default master). */
static int load_trees(GKeyFile *kf, const char *path, struct pk_config *c, GError **err)
{
	g_auto(GStrv) groups = kf ? g_key_file_get_groups(kf, NULL) : NULL;

	c->trees = g_ptr_array_new_with_free_func((GDestroyNotify)tree_group_free);
	for (char **g = groups; g && *g; g++) {
		struct pk_tree_group *group;
		struct pk_tree_config *t;
		g_autofree char *url = NULL, *dir = NULL;

		if (!g_str_has_prefix(*g, "tree "))
			continue;
		url = g_key_file_get_string(kf, *g, "url", NULL);
		dir = g_key_file_get_string(kf, *g, "path", NULL);
		if (!url == !dir)
			return config_error(err, path, *g, NULL, "give url or path, one of them");
		group = g_new0(struct pk_tree_group, 1);
		t = &group->tree;
		t->name = g_strstrip(g_strdup(*g + strlen("tree ")));
		t->url = url ? g_steal_pointer(&url) : g_steal_pointer(&dir);
		t->branches = comma_list(kf, *g, "branches");
		g_ptr_array_add(c->trees, group);
		if (load_tree_watch(kf, path, *g, c, group, err) < 0 || get_bool(kf, path, *g, "trusted", &t->trusted, err) < 0)
			return -1;
		if (t->trusted) {
			guint n = c->sandbox.trusted_trees ? g_strv_length(c->sandbox.trusted_trees) : 0;

			c->sandbox.trusted_trees = g_renew(char *, c->sandbox.trusted_trees, n + 2);
			c->sandbox.trusted_trees[n] = g_strdup(t->name);
			c->sandbox.trusted_trees[n + 1] = NULL;
		}
		/* a tree that is only watched needs no branches =: master is not fetched for nothing */
		if ((!t->branches || !*t->branches) && !t->watch) {
			g_strfreev(t->branches);
			t->branches = g_strsplit("master", ",", -1);
		}
		if (!*t->name || strpbrk(t->name, " /~^:"))
			return config_error(err, path, *g, NULL, "'%s' cannot name a tree (a word without / ~ ^ :)",
					    t->name);
	}
	return 0;
}

static void list_config_free(struct pk_list_config *l)
{
	if (!l)
		return;
	g_free(l->name);
	g_free(l->address);
	g_free(l->list_id);
	g_strfreev(l->policy.subject_prefixes);
	g_free(l);
}

/*
 * subject_prefixes = tty-next, tty-linus: the words (commas or blanks
 * between them), lower case, each once; a word with a bracket or a
 * control character in it could never be one of a subject's tag.
 */
static int get_subject_prefixes(GKeyFile *kf, const char *path, const char *group, char ***out, GError **err)
{
	g_autofree char *v = g_key_file_get_string(kf, group, "subject_prefixes", NULL);
	g_auto(GStrv) words = v ? g_strsplit_set(v, ", \t", -1) : NULL;
	g_autoptr(GPtrArray) out_words = g_ptr_array_new_with_free_func(g_free);

	for (char **w = words; w && *w; w++) {
		g_autofree char *lower = g_ascii_strdown(*w, -1);
		bool bad = false;

		if (!**w)
			continue;
		for (const char *p = lower; *p; p++)
			bad |= *p == '[' || *p == ']' || g_ascii_iscntrl(*p);
		if (bad)
			return config_error(err, path, group, "subject_prefixes", "'%s' cannot be a word of a "
					    "[PATCH ...] tag", *w);
		if (!g_ptr_array_find_with_equal_func(out_words, lower, g_str_equal, NULL))
			g_ptr_array_add(out_words, g_steal_pointer(&lower));
	}
	if (!out_words->len)
		return 0;
	g_ptr_array_add(out_words, NULL);
	*out = (char **)g_ptr_array_free(g_steal_pointer(&out_words), FALSE);
	return 0;
}

/* Whether s is an addr-spec a list can have: local@domain, printable, no blanks or <>. */
static bool list_address_ok(const char *s)
{
	const char *at = strchr(s, '@');

	if (!at || at == s || !at[1] || strchr(at + 1, '@'))
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f || strchr("<>()\",;[]", *s))
			return false;
	return true;
}

/*
 * [list NAME]: address (required), list_id (default: address with its @
 * made a dot), and the reply policy, reply = changes unless it says
 * otherwise (a group is a list's opt-in).  Two groups for one address or
 * one List-Id would make a mail's policy depend on the file's order:
 * refused.
 */
static int load_list(GKeyFile *kf, const char *path, const char *group, GPtrArray *lists, GError **err)
{
	struct pk_list_config *l = g_new0(struct pk_list_config, 1);
	g_autofree char *address = get_string(kf, group, "address", NULL);
	g_autofree char *list_id = get_string(kf, group, "list_id", NULL);

	g_ptr_array_add(lists, l);
	l->name = g_strstrip(g_strdup(group + strlen("list ")));
	if (!address)
		return config_error(err, path, group, NULL, "no address (the list's posting address, which a "
				    "patch mail has in its To or Cc)");
	if (!list_address_ok(address))
		return config_error(err, path, group, "address", "'%s' is not a mail address", address);
	l->address = g_ascii_strdown(address, -1);
	if (list_id) {
		size_t n = strlen(list_id);
		g_autofree char *bare = n > 2 && list_id[0] == '<' && list_id[n - 1] == '>'
					? g_strndup(list_id + 1, n - 2) : g_strdup(list_id);

		for (const char *p = bare; *p; p++)
			if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || strchr("<>", *p))
				return config_error(err, path, group, "list_id", "'%s' is not a List-Id "
						    "(list.example.org)", list_id);
		l->list_id = g_ascii_strdown(bare, -1);
	} else {
		l->list_id = g_strdelimit(g_strdup(l->address), "@", '.');
	}
	if (load_reply_policy(kf, path, group, PK_REPLY_CHANGES, &l->policy, err) < 0 ||
	    get_subject_prefixes(kf, path, group, &l->policy.subject_prefixes, err) < 0)
		return -1;
	for (guint i = 0; i + 1 < lists->len; i++) {
		const struct pk_list_config *o = lists->pdata[i];

		if (!strcmp(o->address, l->address) || !strcmp(o->list_id, l->list_id))
			return config_error(err, path, group, NULL, "the same list as [list %s] (%s): one group a "
					    "list", o->name, !strcmp(o->address, l->address) ? o->address : o->list_id);
	}
	return 0;
}

static int load_lists(GKeyFile *kf, const char *path, struct pk_config *c, GError **err)
{
	g_auto(GStrv) groups = kf ? g_key_file_get_groups(kf, NULL) : NULL;

	c->lists = g_ptr_array_new_with_free_func((GDestroyNotify)list_config_free);
	for (char **g = groups; g && *g; g++)
		if (g_str_has_prefix(*g, "list ") && load_list(kf, path, *g, c->lists, err) < 0)
			return -1;
	return 0;
}

/* A size in MiB into bytes; absent keeps *out. */
static int get_mib(GKeyFile *kf, const char *path, const char *group, const char *key, guint64 *out,
		   GError **err)
{
	unsigned mib = (unsigned)(*out >> 20);

	if (get_uint(kf, path, group, key, &mib, err) < 0)
		return -1;
	*out = (guint64)mib << 20;
	return 0;
}

/* [build]: the compiler, its cache and make's jobs (lab/build.c). */
static int load_build(GKeyFile *kf, const char *path, struct pk_config *c, GError **err)
{
	struct pk_sandbox_config *sb = &c->sandbox;
	static const char *const ccs[] = { "auto", "gcc", "ccache", "icecc", NULL };
	g_autofree char *cc = NULL;

	if (get_word(kf, path, "build", "cc", ccs, &cc, err) < 0 ||
	    get_uint(kf, path, "build", "jobs", &sb->jobs, err) < 0)
		return -1;
	for (unsigned i = 0; ccs[i]; i++)
		if (!strcmp(cc, ccs[i]))
			sb->cc = (enum pk_build_cc)i;
	c->ccache_dir = get_string(kf, "build", "ccache_dir", NULL);
	if (c->ccache_dir && !g_path_is_absolute(c->ccache_dir))
		return config_error(err, path, "build", "ccache_dir", "'%s' is not an absolute path",
				    c->ccache_dir);
	sb->ccache_dir = c->ccache_dir;
	return 0;
}

/* The sandbox and the limits of [policy]; see sandbox.h for what each does. */
static int load_sandbox(GKeyFile *kf, const char *path, struct pk_config *c, GError **err)
{
	static const char *const modes[] = { "on", "off", NULL };
	struct pk_sandbox_config *sb = &c->sandbox;
	g_autofree char *mode = NULL;
	guint64 mail = c->policy.max_mail_size;

	if (get_word(kf, path, "policy", "sandbox", modes, &mode, err) < 0 ||
	    get_seconds(kf, path, "policy", "build_timeout", 0, &sb->build_timeout, err) < 0 ||
	    get_seconds(kf, path, "policy", "build_cpu_seconds", 0, &sb->build.cpu_seconds, err) < 0 ||
	    get_mib(kf, path, "policy", "build_memory_mb", &sb->build.memory, err) < 0 ||
	    get_mib(kf, path, "policy", "build_file_mb", &sb->build.file_size, err) < 0 ||
	    get_uint(kf, path, "policy", "build_processes", &sb->build.processes, err) < 0 ||
	    get_mib(kf, path, "policy", "layer_mb", &sb->layer_size, err) < 0 ||
	    get_mib(kf, path, "policy", "max_console_mb", &sb->console_cap, err) < 0 ||
	    get_mib(kf, path, "policy", "max_capture_mb", &sb->capture_cap, err) < 0 ||
	    get_mib(kf, path, "policy", "max_mail_mb", &mail, err) < 0)
		return -1;
	sb->mode = c->policy.sandbox = strcmp(mode, "off") ? PK_SANDBOX_ON : PK_SANDBOX_OFF;
	c->policy.max_mail_size = (size_t)mail;
	c->sandbox_user = get_string(kf, "policy", "sandbox_user", PK_SANDBOX_USER);
	sb->user = c->sandbox_user;
	return load_build(kf, path, c, err);
}

/*
 * [site] (report --site, report/site.h): url, where readers reach the
 * site, and source_url, the address of a kernel source line: both
 * http(s), source_url with {path} in it.  Without kf, none.
 */
/* [test] arch = x86_64 | arm64 (lab/arch.h); x86_64 when not given. */
static int load_test_arch(GKeyFile *kf, const char *path, struct pk_test_config *t, GError **err)
{
	g_autofree char *name = g_key_file_get_string(kf, "test", "arch", NULL);

	t->arch = &pk_arch_x86_64;
	if (name && !(t->arch = pk_arch_by_name(g_strstrip(name))))
		return config_error(err, path, "test", "arch", "'%s' is not an architecture of the lab (%s)", name,
				    pk_arch_names());
	return 0;
}

static int load_site(GKeyFile *kf, const char *path, struct pk_site_config *out, GError **err)
{
	out->url = get_string(kf, "site", "url", NULL);
	out->source_url = get_string(kf, "site", "source_url", NULL);
	if (out->url && !http_url(out->url))
		return config_error(err, path, "site", "url", "'%s' is not an http(s):// URL", out->url);
	if (out->source_url && (!http_url(out->source_url) || !strstr(out->source_url, "{path}")))
		return config_error(err, path, "site", "source_url", "'%s' is not an http(s):// URL with "
				    "{path} in it ({line}, {commit} and {base} may be there too)", out->source_url);
	return 0;
}

#define KCIDB_DEFAULT_ORIGIN "printkbot"

/* [kcidb] origin: KCIDB's pattern [a-z0-9_]+ (it starts every id). */
static int kcidb_origin(GKeyFile *kf, const char *path, char **out, GError **err)
{
	g_autofree char *origin = kf ? get_string(kf, "kcidb", "origin", NULL) : NULL;

	if (origin && (!*origin || strspn(origin, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(origin)))
		return config_error(err, path, "kcidb", "origin", "'%s' is not a KCIDB origin: lower-case letters, "
				    "digits and _ only", origin);
	*out = origin ? g_steal_pointer(&origin) : g_strdup(KCIDB_DEFAULT_ORIGIN);
	return 0;
}

/* [kcidb]: the origin, and where the daemon posts with which token (read now, its mode checked). */
static int load_kcidb(GKeyFile *kf, const char *path, struct pk_kcidb_config *out, GError **err)
{
	g_autofree char *file = kf ? get_string(kf, "kcidb", "token_file", NULL) : NULL;
	g_autoptr(GError) e = NULL;

	if (kcidb_origin(kf, path, &out->origin, err) < 0 ||
	    (kf && get_seconds(kf, path, "kcidb", "timeout", 0, &out->timeout, err) < 0))
		return -1;
	out->url = kf ? get_string(kf, "kcidb", "url", NULL) : NULL;
	if (out->url && !http_url(out->url))
		return config_error(err, path, "kcidb", "url", "'%s' is not an http(s):// URL", out->url);
	if (out->url && !file)
		return config_error(err, path, "kcidb", "token_file", "url is set: give the file of its token");
	if (file && !out->url)
		return config_error(err, path, "kcidb", "token_file", "a token without url: set url too");
	if (file) {
		if (read_secret_file(file, &out->token, &e) < 0)
			return config_error(err, path, "kcidb", "token_file", "%s", e->message);
		out->token[strcspn(out->token, "\r\n")] = '\0';
		if (!*out->token)
			return config_error(err, path, "kcidb", "token_file", "%s: its first line is empty", file);
	}
	return 0;
}

/* The file to read: path, else $PRINTKBOT_CONFIG, else DEFAULT_CONFIG if it exists, else NULL. */
static const char *config_file(const char *path)
{
	const char *env = g_getenv("PRINTKBOT_CONFIG");

	if (!path && env && *env)
		path = env;
	if (!path && g_file_test(DEFAULT_CONFIG, G_FILE_TEST_EXISTS))
		path = DEFAULT_CONFIG;
	return path;
}

/*
 * The store: [store] url (a postgresql:// URL) or [store] path (a SQLite
 * file), never both; the store picks its backend by the URL's scheme.  A
 * relative path is the config file's neighbour, wherever the command runs
 * (from the working directory, a daemon started elsewhere, or a cron job,
 * would open another, empty store).
 */
static int store_where(GKeyFile *kf, const char *path, char **out, GError **err)
{
	g_autofree char *url = g_key_file_get_string(kf, "store", "url", NULL);
	g_autofree char *file = g_key_file_get_string(kf, "store", "path", NULL);

	if (url && file)
		return pk_error(err, PK_ERROR_INPUT, "%s: [store] has both url and path: keep one", path);
	if (url && !g_str_has_prefix(url, "postgresql://") && !g_str_has_prefix(url, "postgres://"))
		return pk_error(err, PK_ERROR_INPUT, "%s: [store] url: not a postgresql:// URL", path);
	file = beside_config(path, file);
	*out = url ? g_steal_pointer(&url) : g_steal_pointer(&file);
	return 0;
}

int pk_config_store_path(char **out, const char *path, GError **err)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) e = NULL;

	*out = NULL;
	if (!(path = config_file(path)))
		return 0;
	if (config_scan(path, err) < 0)
		return -1;
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &e))
		return pk_error(err, PK_ERROR_INPUT, "%s: %s", path, e->message);
	/* the keys checked as every command checks them: a typo'd [store] pth must not mean the default store */
	if (check_known_keys(kf, path, err) < 0)
		return -1;
	return store_where(kf, path, out, err);
}

int pk_config_kcidb_origin(char **out, const char *path, GError **err)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) e = NULL;

	if (!(path = config_file(path)))
		return kcidb_origin(NULL, NULL, out, err);
	if (config_scan(path, err) < 0)
		return -1;
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &e))
		return pk_error(err, PK_ERROR_INPUT, "%s: %s", path, e->message);
	if (check_known_keys(kf, path, err) < 0)
		return -1;
	return kcidb_origin(kf, path, out, err);
}

int pk_config_site(struct pk_site_config *out, const char *path, GError **err)
{
	struct pk_site_config site = { 0 };
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) e = NULL;
	g_auto(GStrv) groups = NULL;

	site.archives = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	if (!(path = config_file(path))) {
		*out = site;
		return 0;
	}
	if (config_scan(path, err) < 0)
		goto fail;
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &e)) {
		pk_error(err, PK_ERROR_INPUT, "%s: %s", path, e->message);
		goto fail;
	}
	if (check_known_keys(kf, path, err) < 0 || load_site(kf, path, &site, err) < 0)
		goto fail;
	groups = g_key_file_get_groups(kf, NULL);
	for (char **g = groups; *g; g++) {
		char *archive;

		if (!g_str_has_prefix(*g, "source ") || !(archive = get_string(kf, *g, "archive", NULL)))
			continue;
		if (!http_url(archive)) {
			config_error(err, path, *g, "archive", "'%s' is not an http(s):// URL", archive);
			g_free(archive);
			goto fail;
		}
		g_hash_table_replace(site.archives, g_strdup(*g + strlen("source ")), archive);
	}
	*out = site;
	return 0;
fail:
	pk_site_config_clear(&site);
	return -1;
}

int pk_config_load(struct pk_config *out, const char *path, GError **err)
{
	struct pk_config c = { .policy = PK_POLICY_DEFAULT, .sandbox = PK_SANDBOX_CONFIG_INIT };
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) e = NULL;

	if (!(path = config_file(path))) {
		load_daemon(NULL, NULL, &c, NULL);
		load_smtp(NULL, NULL, &c, NULL);
		load_sources(NULL, NULL, &c, NULL);
		load_trees(NULL, NULL, &c, NULL);
		load_lists(NULL, NULL, &c, NULL);
		load_kcidb(NULL, NULL, &c.kcidb, NULL);
		*out = c;
		return 0;
	}
	if (config_scan(path, err) < 0)
		return -1;
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &e))
		return pk_error(err, PK_ERROR_INPUT, "%s: %s", path, e->message);
	if (check_known_keys(kf, path, err) < 0 ||
	    get_seconds(kf, path, "test", "boot_timeout", 0, &c.test.boot_timeout, err) < 0 ||
	    get_uint(kf, path, "test", "derived_builds", &c.test.derived_builds, err) < 0 ||
	    load_test_arch(kf, path, &c.test, err) < 0 ||
	    get_bool(kf, path, "policy", "allow_build_system", &c.policy.allow_build_system, err) < 0 ||
	    get_bool(kf, path, "policy", "allow_other_files", &c.policy.allow_other_files, err) < 0 ||
	    get_uint(kf, path, "policy", "max_files", &c.policy.max_files, err) < 0 ||
	    get_uint(kf, path, "policy", "max_lines", &c.policy.max_lines, err) < 0 ||
	    load_sandbox(kf, path, &c, err) < 0 ||
	    load_daemon(kf, path, &c, err) < 0 || load_smtp(kf, path, &c, err) < 0 ||
	    load_sources(kf, path, &c, err) < 0 || load_trees(kf, path, &c, err) < 0 ||
	    load_lists(kf, path, &c, err) < 0 ||
	    load_site(kf, path, &c.site, err) < 0 || store_where(kf, path, &c.db, err) < 0 ||
	    load_kcidb(kf, path, &c.kcidb, err) < 0) {
		pk_config_clear(&c);
		return -1;
	}
	c.path = g_strdup(path);
	c.test.base = g_key_file_get_string(kf, "test", "base", NULL);
	c.test.bases = comma_list(kf, "test", "bases");
	c.test.rules = g_key_file_get_string(kf, "test", "rules", NULL);
	c.keys = g_steal_pointer(&kf);
	*out = c;
	return 0;
}

int pk_config_check_daemon(const struct pk_config *config, GError **err)
{
	const struct pk_daemon_config *d = &config->daemon;
	const char *path = config->path ? config->path : "(no configuration file)";
	const char *at = d->mail.from ? strrchr(d->mail.from, '@') : NULL;
	bool set = config->keys && g_key_file_has_key(config->keys, "daemon", "from", NULL);
	g_autofree char *domain = NULL;

	g_autofree char *mails = d->reply_on != PK_REPLY_OFF
				 ? g_strdup_printf("[daemon] reply_on = %s", pk_reply_mode_name(d->reply_on)) : NULL;
	bool trusted = false;

	/* a From: line proves nothing: commands need a server or a source that vouches for it */
	for (guint i = 0; config->sources && i < config->sources->len; i++)
		trusted |= ((const struct pk_source_config *)config->sources->pdata[i])->trusted_commands;
	if (d->commands_from && !d->commands_authserv_id && !trusted)
		return config_error(err, path, "daemon", "commands_from", "commands by mail need a way to tell "
				    "their sender from a forger: set [daemon] commands_authserv_id to your mail "
				    "server's authserv-id, or trusted_commands = true on a source whose mail "
				    "only comes from a list that checks its posters");

	/* a list's group, and a watched branch, mail under their own reply */
	for (guint i = 0; !mails && config->lists && i < config->lists->len; i++) {
		const struct pk_list_config *l = config->lists->pdata[i];

		if (l->policy.reply != PK_REPLY_OFF)
			mails = g_strdup_printf("[list %s] reply = %s", l->name, pk_reply_mode_name(l->policy.reply));
	}
	for (guint i = 0; !mails && config->trees && i < config->trees->len; i++) {
		const struct pk_tree_group *t = config->trees->pdata[i];

		if (t->tree.watch && t->policy.reply != PK_REPLY_OFF)
			mails = g_strdup_printf("[tree %s] reply = %s", t->tree.name, pk_reply_mode_name(t->policy.reply));
	}
	if (!mails)
		return 0;
	domain = g_ascii_strdown(at ? at + 1 : "", -1);
	g_strdelimit(domain, ">", '\0');
	g_strstrip(domain);
	if (!*domain || !strcmp(domain, "localhost") || g_str_has_suffix(domain, ".localhost") ||
	    !strcmp(domain, "localhost.localdomain"))
		return config_error(err, path, "daemon", "from",
				    "%s%s%s is at localhost: with %s the bot mails people, who must "
				    "be able to answer; set from, or reply off", set ? "'" : "not set, and the default ",
				    d->mail.from ? d->mail.from : "", set ? "'" : "", mails);
	return 0;
}

/* The first key of kf that holds a secret, as "[group] key", or NULL. */
static char *secret_key(GKeyFile *kf)
{
	g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);

	for (char **g = groups; g && *g; g++) {
		g_auto(GStrv) keys = g_key_file_get_keys(kf, *g, NULL, NULL);

		for (char **k = keys; k && *k; k++) {
			g_autofree char *v = g_key_file_get_string(kf, *g, *k, NULL);

			if (!strcmp(*k, "password") || (!strcmp(*k, "url") && pk_url_has_secret(v)))
				return g_strdup_printf("[%s] %s", *g, *k);
		}
	}
	return NULL;
}

char *pk_config_secret_exposed(const struct pk_config *config)
{
	g_autofree char *key = NULL;
	struct stat st;

	if (!config->path || !config->keys || stat(config->path, &st) < 0 ||
	    !(st.st_mode & (S_IRGRP | S_IROTH)) || !(key = secret_key(config->keys)))
		return NULL;
	return g_strdup_printf("%s holds a secret (%s) and is readable by %s (mode %04o): chmod 600 it",
			       config->path, key,
			       st.st_mode & S_IROTH ? "others" : "its group", (unsigned)(st.st_mode & 07777));
}

void pk_config_clear(struct pk_config *config)
{
	g_free(config->path);
	g_free(config->db);
	g_free(config->test.base);
	g_free(config->sandbox_user);
	g_free(config->ccache_dir);
	g_free(config->daemon.mail.from);
	g_free(config->daemon.outbox);
	g_free(config->daemon.metrics_dir);
	g_strfreev(config->daemon.commands_from);
	g_strfreev(config->daemon.commands_authserv_id);
	g_free(config->smtp.url);
	g_free(config->smtp.user);
	if (config->smtp.password)
		memset(config->smtp.password, 0, strlen(config->smtp.password));
	g_free(config->smtp.password);
	g_free(config->smtp.ca_file);
	if (config->sources)
		g_ptr_array_unref(config->sources);
	if (config->trees)
		g_ptr_array_unref(config->trees);
	if (config->lists)
		g_ptr_array_unref(config->lists);
	g_strfreev(config->sandbox.trusted_trees);
	g_strfreev(config->test.bases);
	g_free(config->test.rules);
	pk_site_config_clear(&config->site);
	pk_kcidb_config_clear(&config->kcidb);
	if (config->keys)
		g_key_file_unref(config->keys);
	memset(config, 0, sizeof *config);
}
