/* test-config.c - the configuration file: values, defaults, and errors that name the key. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "config/config.h"
#include "lab/sandbox.h"

/* Write text to a temporary file; returns its path (caller unlinks and frees). */
static char *write_tmp(const char *text)
{
	char *path = NULL;
	int fd = g_file_open_tmp("printkbot-config-XXXXXX.conf", &path, NULL);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_values_and_defaults(void **state)
{
	g_autofree char *path = write_tmp("[test]\nbase = v6.12\nboot_timeout = 20.5\n"
					  "[policy]\nallow_build_system = true\nmax_files = 7\n");
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_string_equal(c.test.base, "v6.12");
	assert_true(c.test.boot_timeout == 20.5);
	assert_true(c.policy.allow_build_system);
	assert_false(c.policy.allow_other_files);
	assert_int_equal(c.policy.max_files, 7);
	assert_int_equal(c.policy.max_lines, 20000);   /* the default stays */
	assert_null(c.db);
	assert_ptr_equal(c.test.arch, &pk_arch_x86_64);   /* the default */
	pk_config_clear(&c);
	unlink(path);
}

/* [test] arch names one of the lab's architectures; another word is an error naming them. */
static void test_arch(void **state)
{
	g_autofree char *good = write_tmp("[test]\narch = arm64\n"), *bad = write_tmp("[test]\narch = sparc64\n");
	g_autoptr(GError) err = NULL;
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, good, NULL), 0);
	assert_ptr_equal(c.test.arch, pk_arch_by_name("arm64"));
	pk_config_clear(&c);
	assert_int_equal(pk_config_load(&c, bad, &err), -1);
	assert_non_null(strstr(err->message, "[test] arch"));
	assert_non_null(strstr(err->message, "'sparc64' is not an architecture of the lab (x86_64, arm64)"));
	unlink(good);
	unlink(bad);
}

/* A relative [store] path is beside the config file, not in the working directory. */
static void test_store_path_relative(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("printkbot-config-XXXXXX", NULL);
	g_autofree char *conf = g_build_filename(dir, "printkbot.conf", NULL);
	g_autofree char *want = g_build_filename(dir, "db", "printkbot.db", NULL);
	g_autofree char *only = NULL;
	struct pk_config c;

	assert_true(g_file_set_contents(conf, "[store]\npath = db/printkbot.db\n", -1, NULL));
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(pk_config_load(&c, conf, NULL), 0);
	assert_string_equal(c.db, want);
	pk_config_clear(&c);
	/* what history, report and db read */
	assert_int_equal(pk_config_store_path(&only, conf, NULL), 0);
	assert_string_equal(only, want);
	unlink(conf);
	rmdir(dir);
}

/* [daemon] metrics_dir: none by default; a relative one is beside the config file, as [store] path. */
static void test_metrics_keys(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("printkbot-config-XXXXXX", NULL);
	g_autofree char *conf = g_build_filename(dir, "printkbot.conf", NULL);
	g_autofree char *want = g_build_filename(dir, "metrics", NULL);
	g_autofree char *empty = write_tmp("");
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, empty, NULL), 0);
	assert_null(c.daemon.metrics_dir);
	assert_true(c.daemon.metrics_interval == 30);
	pk_config_clear(&c);
	assert_true(g_file_set_contents(conf, "[daemon]\nmetrics_dir = metrics\nmetrics_interval = 5\n",
					-1, NULL));
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(pk_config_load(&c, conf, NULL), 0);
	assert_string_equal(c.daemon.metrics_dir, want);
	assert_true(c.daemon.metrics_interval == 5);
	pk_config_clear(&c);
	assert_true(g_file_set_contents(conf, "[daemon]\nmetrics_dir = /srv/m\n", -1, NULL));
	assert_int_equal(pk_config_load(&c, conf, NULL), 0);
	assert_string_equal(c.daemon.metrics_dir, "/srv/m");
	pk_config_clear(&c);
	unlink(conf);
	unlink(empty);
	rmdir(dir);
}

/* [store] url names a PostgreSQL store (the store picks it by its scheme); never with path. */
static void test_store_url(void **state)
{
	g_autofree char *path = write_tmp("[store]\nurl = postgresql://bot@db.example.org/printkbot\n");
	g_autofree char *both = write_tmp("[store]\nurl = postgresql://db/p\npath = /var/p.db\n");
	g_autofree char *other = write_tmp("[store]\nurl = mysql://db/p\n");
	g_autoptr(GError) err = NULL;
	g_autofree char *only = NULL;
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_string_equal(c.db, "postgresql://bot@db.example.org/printkbot");
	pk_config_clear(&c);
	assert_int_equal(pk_config_store_path(&only, path, NULL), 0);
	assert_string_equal(only, "postgresql://bot@db.example.org/printkbot");
	assert_int_equal(pk_config_load(&c, both, &err), -1);
	assert_non_null(strstr(err->message, "both url and path"));
	g_clear_error(&err);
	assert_int_equal(pk_config_load(&c, other, &err), -1);
	assert_non_null(strstr(err->message, "not a postgresql:// URL"));
	g_clear_error(&err);
	/* the readers of the store (history, db check) refuse a typo as the rest do, not the default store */
	{
		g_autofree char *typo = write_tmp("[store]\npth = /var/p.db\n");
		g_autofree char *none = NULL;

		assert_int_equal(pk_config_store_path(&none, typo, &err), -1);
		assert_non_null(strstr(err->message, "unknown key 'pth'"));
		assert_null(none);
		unlink(typo);
	}
	unlink(path);
	unlink(both);
	unlink(other);
}

/* A source's archive: where its list's mails are on the web (reply.h's patch link), none by default. */
static void test_source_archive(void **state)
{
	g_autofree char *path = write_tmp("[source a]\ntype = mbox\npath = /a\n"
					  "archive = https://lore.kernel.org/linux-serial/\n"
					  "[source b]\ntype = mbox\npath = /b\n");
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_int_equal(c.sources->len, 2);
	assert_string_equal(((struct pk_source_config *)c.sources->pdata[0])->archive,
			    "https://lore.kernel.org/linux-serial/");
	assert_null(((struct pk_source_config *)c.sources->pdata[1])->archive);
	pk_config_clear(&c);
	unlink(path);
}

/*
 * [site]: loaded with the rest, and alone by pk_config_site() (report
 * --site) with each source's archive, and no password file opened (one
 * that does not exist is no error there).
 */
static void test_site(void **state)
{
	g_autofree char *path = write_tmp("[site]\nurl = https://bot.example.org/\n"
					  "source_url = https://git.example.org/tree/{path}?id={commit}#n{line}\n"
					  "[source a]\ntype = imap\nurl = imaps://h/A\npassword_file = /nonexistent\n"
					  "archive = https://lore.kernel.org/a/\n"
					  "[source b]\ntype = mbox\npath = /b\n");
	struct pk_site_config site;
	struct pk_config c;

	assert_int_equal(pk_config_site(&site, path, NULL), 0);
	assert_string_equal(site.url, "https://bot.example.org/");
	assert_string_equal(site.source_url, "https://git.example.org/tree/{path}?id={commit}#n{line}");
	assert_int_equal(g_hash_table_size(site.archives), 1);
	assert_string_equal(g_hash_table_lookup(site.archives, "a"), "https://lore.kernel.org/a/");
	pk_site_config_clear(&site);
	assert_int_equal(pk_config_load(&c, path, NULL), -1);   /* the password file is missing */
	unlink(path);

	g_free(path);
	path = write_tmp("[site]\nurl = https://bot.example.org/\n");
	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_string_equal(c.site.url, "https://bot.example.org/");
	assert_null(c.site.source_url);
	pk_config_clear(&c);
	unlink(path);
}

/*
 * [kcidb]: the origin (KCIDB's pattern), and a url with the token of a
 * file only its owner reads; each mistake an error naming the key.
 */
static void test_kcidb(void **state)
{
	g_autofree char *token = write_tmp("s3cret\nsecond line\n");
	g_autofree char *open_token = write_tmp("s3cret\n");
	g_autofree char *empty_token = write_tmp("\n");
	g_autofree char *good = NULL;
	struct pk_config c;
	const struct { const char *text, *error; } bad[] = {
		{ "[kcidb]\norigin = Printkbot\n", "[kcidb] origin: 'Printkbot' is not a KCIDB origin" },
		{ "[kcidb]\norigin = print-kbot\n", "not a KCIDB origin" },
		{ "[kcidb]\nurl = ftp://x/\n", "[kcidb] url: 'ftp://x/' is not an http(s):// URL" },
		{ "[kcidb]\nurl = https://kcidb.example.org/submit\n", "[kcidb] token_file: url is set" },
		{ "[kcidb]\nsubmit = yes\n", "submit" },
	};

	chmod(token, 0600);
	chmod(empty_token, 0600);
	chmod(open_token, 0644);
	good = g_strdup_printf("[kcidb]\norigin = lab_2\nurl = https://kcidb.example.org/submit\ntoken_file = %s\n"
			       "timeout = 10\n", token);
	{
		g_autofree char *path = write_tmp(good);

		assert_int_equal(pk_config_load(&c, path, NULL), 0);
		assert_string_equal(c.kcidb.origin, "lab_2");
		assert_string_equal(c.kcidb.url, "https://kcidb.example.org/submit");
		assert_string_equal(c.kcidb.token, "s3cret");
		assert_true(c.kcidb.timeout == 10);
		pk_config_clear(&c);
		unlink(path);
	}
	{
		g_autofree char *path = write_tmp("[store]\npath = x.db\n");
		g_autofree char *origin = NULL;

		assert_int_equal(pk_config_load(&c, path, NULL), 0);
		assert_string_equal(c.kcidb.origin, "printkbot");
		assert_null(c.kcidb.url);
		pk_config_clear(&c);
		assert_int_equal(pk_config_kcidb_origin(&origin, path, NULL), 0);
		assert_string_equal(origin, "printkbot");
		unlink(path);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(bad) + 2; i++) {
		g_autofree char *text = i < G_N_ELEMENTS(bad) ? g_strdup(bad[i].text)
			: g_strdup_printf("[kcidb]\nurl = http://127.0.0.1:1/submit\ntoken_file = %s\n",
					  i == G_N_ELEMENTS(bad) ? open_token : empty_token);
		const char *want = i < G_N_ELEMENTS(bad) ? bad[i].error
				   : i == G_N_ELEMENTS(bad) ? "(mode 0644): chmod 600 it" : "its first line is empty";
		g_autofree char *path = write_tmp(text);
		g_autoptr(GError) err = NULL;

		assert_int_equal(pk_config_load(&c, path, &err), -1);
		if (!strstr(err->message, want))
			fail_msg("%s: %s", text, err->message);
		unlink(path);
	}
	unlink(token);
	unlink(open_token);
	unlink(empty_token);
}

/* [test] bases in order and rules, [tree NAME] with path or url and branches (master by default), fetch_interval. */
static void test_bases_and_trees(void **state)
{
	g_autofree char *path = write_tmp("[test]\nbases = debian:6.1, net/main\nrules = /etc/npd.json\n"
					  "[daemon]\nfetch_interval = 60\n"
					  "[tree net]\npath = /srv/net.git\nbranches = main, next\n"
					  "[tree tip]\nurl = https://example.org/tip.git\n");
	g_autofree char *bad = write_tmp("[tree x]\nbranches = main\n");
	g_autoptr(GError) err = NULL;
	struct pk_config c;
	const struct pk_tree_group *t;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_string_equal(c.test.bases[0], "debian:6.1");
	assert_string_equal(c.test.bases[1], "net/main");
	assert_null(c.test.bases[2]);
	assert_string_equal(c.test.rules, "/etc/npd.json");
	assert_true(c.daemon.fetch_interval == 60);
	assert_int_equal(c.trees->len, 2);
	t = c.trees->pdata[0];
	assert_string_equal(t->tree.name, "net");
	assert_string_equal(t->tree.url, "/srv/net.git");
	assert_string_equal(t->tree.branches[1], "next");
	assert_null(t->tree.watch);
	/* [daemon] reply_on's: off, as every list without a group of its own */
	assert_int_equal(t->policy.reply, PK_REPLY_OFF);
	assert_int_equal(t->max_commits, 50);
	t = c.trees->pdata[1];
	assert_string_equal(t->tree.branches[0], "master");
	pk_config_clear(&c);
	assert_int_equal(pk_config_load(&c, bad, &err), -1);
	assert_non_null(strstr(err->message, "[tree x]: give url or path"));
	unlink(path);
	unlink(bad);
}

struct bad_case {
	const char *text;
	const char *error_has;
};

/*
 * [tree NAME] watch: branch names (blanks or commas), each once, fetched
 * too; a watched-only tree fetches no master; list, reply (the
 * daemon's reply_on by default) and the keys of a [list], max_commits;
 * bad names and values refused, reply_on said to be reply now.
 */
static void test_tree_watch(void **state)
{
	g_autofree char *path = write_tmp("[daemon]\nreply_on = always\n"
					  "[tree lab]\nurl = git://127.0.0.1:9418/lab.git\nwatch = main next, main\n"
					  "list = lab@example.org\nmax_commits = 3\n"
					  "[tree net]\npath = /srv/net.git\nbranches = main\nwatch = fixes\nreply = off\n"
					  "embargo_minutes = 30\ncc_list = false\nmax_per_day = 0\n");
	static const struct bad_case bad_watch[] = {
		{ "[tree x]\npath = /x\nwatch = ma..in\n", "[tree x] watch: 'ma..in' is not a branch name" },
		{ "[tree x]\npath = /x\nwatch = -rf\n", "[tree x] watch: '-rf' is not a branch name" },
		{ "[tree x]\npath = /x\nwatch = main\nreply = sometimes\n",
		  "[tree x] reply: 'sometimes' is not one of off, changes, always" },
		{ "[tree x]\npath = /x\nwatch = main\nreply_on = never\n", "[tree x] reply_on: is now reply =" },
		{ "[tree x]\npath = /x\nwatch = main\nreply = never\n", "[tree x] reply: 'never' is not one of" },
		{ "[tree x]\npath = /x\nwatch = main\nsubject_prefixes = net\n", "[tree x]: unknown key "
		  "'subject_prefixes'" },
		{ "[tree x]\npath = /x\nwatch = main\nto_author = false\ncc_list = false\nreply = changes\n",
		  "[tree x]: to_author and cc_list are both false" },
		{ "[tree x]\npath = /x\nwatch = main\nmax_commits = 0\n", "[tree x] max_commits: at least 1" },
		{ "[tree x]\npath = /x\nwatch = main\nlist = nobody\n", "[tree x] list: 'nobody' is not a mail" },
	};
	const struct pk_tree_group *t;
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	t = c.trees->pdata[0];
	assert_null(t->tree.branches);
	assert_string_equal(t->tree.watch[0], "main");
	assert_string_equal(t->tree.watch[1], "next");
	assert_null(t->tree.watch[2]);
	assert_true(pk_tree_watches(&t->tree, "next"));
	assert_false(pk_tree_watches(&t->tree, "master"));
	assert_string_equal(t->list, "lab@example.org");
	assert_int_equal(t->policy.reply, PK_REPLY_ALWAYS);
	assert_true(t->policy.to_author && t->policy.cc_list && !t->policy.positive);
	assert_int_equal(t->policy.embargo_minutes, 0);
	assert_int_equal(t->policy.max_per_day, 50);
	assert_int_equal(t->policy.max_per_author_day, 20);
	assert_int_equal(t->max_commits, 3);
	t = c.trees->pdata[1];
	assert_string_equal(t->tree.branches[0], "main");
	assert_string_equal(t->tree.watch[0], "fixes");
	assert_int_equal(t->policy.reply, PK_REPLY_OFF);
	assert_int_equal(t->policy.embargo_minutes, 30);
	assert_false(t->policy.cc_list);
	assert_int_equal(t->policy.max_per_day, 0);
	pk_config_clear(&c);
	unlink(path);
	for (size_t i = 0; i < G_N_ELEMENTS(bad_watch); i++) {
		g_autofree char *bad = write_tmp(bad_watch[i].text);
		g_autoptr(GError) err = NULL;

		assert_int_equal(pk_config_load(&c, bad, &err), -1);
		if (!strstr(err->message, bad_watch[i].error_has))
			fail_msg("%s: %s", bad_watch[i].text, err->message);
		unlink(bad);
	}
}

/*
 * [list NAME]: address (lower case), list_id (derived from the address,
 * or given with or without <>), reply = changes in a group, the policy
 * keys and their defaults; [daemon] reply_on (off by default, never read
 * as off) and max_reply_lines; bad values refused with the key.
 */
static void test_lists(void **state)
{
	g_autofree char *path = write_tmp("[daemon]\nreply_on = never\nmax_reply_lines = 80\n"
					  "[list serial]\naddress = Linux-Serial@vger.kernel.org\n"
					  "[list net]\naddress = netdev@vger.kernel.org\nlist_id = <NetDev.example.org>\n"
					  "reply = always\nto_author = false\npositive = true\nembargo_minutes = 60\n"
					  "subject_prefixes = net-next, NET net\nmax_per_day = 3\nmax_per_author_day = 1\n");
	static const struct bad_case bad[] = {
		{ "[list x]\nreply = changes\n", "[list x]: no address" },
		{ "[list x]\naddress = nobody\n", "[list x] address: 'nobody' is not a mail address" },
		{ "[list x]\naddress = a b@example.org\n", "[list x] address: 'a b@example.org' is not" },
		{ "[list x]\naddress = x@example.org\nreply = sometimes\n",
		  "[list x] reply: 'sometimes' is not one of off, changes, always" },
		{ "[list x]\naddress = x@example.org\nreply = never\n", "[list x] reply: 'never' is not" },
		{ "[list x]\naddress = x@example.org\npositive = maybe\n", "[list x] positive" },
		{ "[list x]\naddress = x@example.org\nembargo_minutes = -5\n", "[list x] embargo_minutes: must not" },
		{ "[list x]\naddress = x@example.org\nembargo_minutes = 50000\n",
		  "[list x] embargo_minutes: 50000 minutes is more than 30 days" },
		{ "[list x]\naddress = x@example.org\nmax_per_day = lots\n", "[list x] max_per_day" },
		{ "[list x]\naddress = x@example.org\nsubject_prefixes = [net]\n",
		  "[list x] subject_prefixes: '[net]' cannot be a word" },
		{ "[list x]\naddress = x@example.org\nlist_id = a b\n", "[list x] list_id: 'a b' is not a List-Id" },
		{ "[list x]\naddress = x@example.org\ncolour = blue\n", "[list x]: unknown key 'colour'" },
		{ "[list x]\naddress = x@example.org\nto_author = false\ncc_list = false\n",
		  "[list x]: to_author and cc_list are both false" },
		{ "[list x]\naddress = x@example.org\n[list y]\naddress = X@example.org\n",
		  "[list y]: the same list as [list x] (x@example.org)" },
		{ "[list x]\naddress = x@example.org\n[list y]\naddress = y@example.org\nlist_id = x.example.org\n",
		  "[list y]: the same list as [list x] (x.example.org)" },
		{ "[daemon]\nreply_on = sometimes\n", "[daemon] reply_on: 'sometimes' is not one of off, changes" },
		{ "[daemon]\nmax_reply_lines = 10\n", "[daemon] max_reply_lines: at least 40" },
	};
	const struct pk_list_config *l;
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_int_equal(c.daemon.reply_on, PK_REPLY_OFF);
	assert_int_equal(c.daemon.max_reply_lines, 80);
	assert_int_equal(c.lists->len, 2);
	l = c.lists->pdata[0];
	assert_string_equal(l->name, "serial");
	assert_string_equal(l->address, "linux-serial@vger.kernel.org");
	assert_string_equal(l->list_id, "linux-serial.vger.kernel.org");
	assert_int_equal(l->policy.reply, PK_REPLY_CHANGES);
	assert_true(l->policy.to_author && l->policy.cc_list && !l->policy.positive);
	assert_int_equal(l->policy.embargo_minutes, 0);
	assert_null(l->policy.subject_prefixes);
	assert_int_equal(l->policy.max_per_day, 50);
	assert_int_equal(l->policy.max_per_author_day, 20);
	l = c.lists->pdata[1];
	assert_string_equal(l->list_id, "netdev.example.org");
	assert_int_equal(l->policy.reply, PK_REPLY_ALWAYS);
	assert_false(l->policy.to_author);
	assert_true(l->policy.positive);
	assert_int_equal(l->policy.embargo_minutes, 60);
	assert_string_equal(l->policy.subject_prefixes[0], "net-next");
	assert_string_equal(l->policy.subject_prefixes[1], "net");
	assert_null(l->policy.subject_prefixes[2]);
	assert_int_equal(l->policy.max_per_day, 3);
	assert_int_equal(l->policy.max_per_author_day, 1);
	pk_config_clear(&c);
	unlink(path);
	/* the defaults without a file: nothing answered */
	assert_int_equal(pk_config_load(&c, NULL, NULL), 0);
	assert_int_equal(c.daemon.reply_on, PK_REPLY_OFF);
	assert_int_equal(c.daemon.max_reply_lines, 120);
	assert_int_equal(c.lists->len, 0);
	pk_config_clear(&c);
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *file = write_tmp(bad[i].text);
		g_autoptr(GError) err = NULL;

		assert_int_equal(pk_config_load(&c, file, &err), -1);
		if (!strstr(err->message, bad[i].error_has))
			fail_msg("%s: %s", bad[i].text, err->message);
		unlink(file);
	}
}

/*
 * [policy] sandbox and limits: parsed into the config; they become the
 * process's settings only when the caller installs them, as a copy.
 */
static void test_sandbox_and_limits(void **state)
{
	g_autofree char *path = write_tmp("[build]\ncc = icecc\njobs = 12\nccache_dir = /var/cache/pk-ccache\n[policy]\nsandbox = off\nsandbox_user = builder\n"
					  "build_timeout = 600\nbuild_cpu_seconds = 120\n"
					  "build_memory_mb = 1024\nbuild_file_mb = 100\nbuild_processes = 64\n"
					  "max_console_mb = 1\nmax_capture_mb = 2\nmax_mail_mb = 3\n");
	g_autofree char *defaults = write_tmp("[policy]\nmax_files = 7\n");
	const struct pk_sandbox_config *now;
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_int_equal(c.sandbox.mode, PK_SANDBOX_OFF);
	assert_int_equal(c.policy.sandbox, PK_SANDBOX_OFF);
	assert_string_equal(c.sandbox.user, "builder");
	assert_true(c.sandbox.build_timeout == 600 && c.sandbox.build.cpu_seconds == 120);
	assert_true(c.sandbox.build.memory == 1024ull << 20);
	assert_true(c.sandbox.build.file_size == 100ull << 20);
	assert_int_equal(c.sandbox.build.processes, 64);
	assert_true(c.sandbox.console_cap == 1u << 20 && c.sandbox.capture_cap == 2u << 20);
	assert_int_equal(c.policy.max_mail_size, 3u << 20);
	assert_true(c.sandbox.cc == PK_BUILD_CC_ICECC && c.sandbox.jobs == 12);
	assert_string_equal(c.sandbox.ccache_dir, "/var/cache/pk-ccache");
	assert_int_equal(pk_sandbox_settings()->mode, PK_SANDBOX_ON);   /* loading installs nothing */
	pk_sandbox_configure(&c.sandbox);
	pk_config_clear(&c);
	now = pk_sandbox_settings();
	assert_int_equal(now->mode, PK_SANDBOX_OFF);
	assert_string_equal(now->user, "builder");   /* a copy: the config is cleared */
	assert_string_equal(now->ccache_dir, "/var/cache/pk-ccache");

	assert_int_equal(pk_config_load(&c, defaults, NULL), 0);
	assert_int_equal(c.sandbox.mode, PK_SANDBOX_ON);
	assert_int_equal(c.policy.sandbox, PK_SANDBOX_ON);
	assert_string_equal(c.sandbox.user, PK_SANDBOX_USER);
	assert_true(c.sandbox.build.memory == 4ull << 30);
	assert_true(c.sandbox.cc == PK_BUILD_CC_AUTO && c.sandbox.jobs == 0);
	assert_null(c.sandbox.ccache_dir);
	assert_int_equal(c.policy.max_mail_size, 64u << 20);
	assert_int_equal(pk_sandbox_settings()->mode, PK_SANDBOX_OFF);
	pk_sandbox_configure(&c.sandbox);
	pk_config_clear(&c);
	assert_int_equal(pk_sandbox_settings()->mode, PK_SANDBOX_ON);
	unlink(path);
	unlink(defaults);
}

static const struct bad_case bad[] = {
	{ "[policy]\nsandbox = maybe\n", "[policy] sandbox: 'maybe' is not one of on, off" },
	{ "[build]\ncc = clang\n", ":2: [build] cc: 'clang' is not one of auto, gcc, ccache, icecc" },
	{ "[build]\njobs = many\n", "[build] jobs" },
	{ "[build]\nccache_dir = ccache\n", ":2: [build] ccache_dir: 'ccache' is not an absolute path" },
	{ "[policy]\nbuild_memory_mb = lots\n", "[policy] build_memory_mb" },
	{ "[policy]\nallow_build_sytem = true\n", "[policy]: unknown key 'allow_build_sytem'" },
	{ "[policy]\nallow_build_system = maybe\n", "[policy] allow_build_system" },
	{ "[policy]\nmax_files = lots\n", "[policy] max_files" },
	{ "[test]\nboot_timeout = -3\n", "must not be negative" },
	/* g_key_file_get_double() takes these; each was a tight loop or a wait for ever */
	{ "[daemon]\nretry_max = nan\n", ":2: [daemon] retry_max: 'nan' is not a number of seconds" },
	{ "[daemon]\nretry_min = 0\n", "[daemon] retry_min: 0 seconds is outside 1 to 2592000" },
	/* a lease renewed every third of it: under 3 s, a busy store would lose it */
	{ "[daemon]\nlease = 2\n", "[daemon] lease: 2 seconds is outside 3 to 2592000" },
	{ "[daemon]\nworker_poll = 0\n", "[daemon] worker_poll: 0 seconds is outside 0.1 to" },
	{ "[daemon]\nmetrics_interval = 0\n", "[daemon] metrics_interval: 0 seconds is outside 1 to" },
	{ "[daemon]\nseries_wait = inf\n", "[daemon] series_wait: 'inf' is not a number of seconds" },
	{ "[daemon]\nseries_wait = -inf\n", "[daemon] series_wait: '-inf' is not a number" },
	{ "[smtp]\ntimeout = 1e19\n", "[smtp] timeout: 1e+19 seconds is outside 0 to 2592000" },
	{ "[source l]\ntype = imap\nurl = imap://h/INBOX\npoll_interval = NaN\n",
	  ":4: [source l] poll_interval: 'nan' is not a number of seconds" },
	{ "[policy]\nbuild_timeout = 1e308\n", "[policy] build_timeout: 1e+308 seconds is outside" },
	{ "[policy]\nbuild_cpu_seconds = INF\n", "[policy] build_cpu_seconds: 'inf'" },
	{ "[test]\nboot_timeout = 2592001\n", "[test] boot_timeout: 2.592e+06 seconds is outside" },
	{ "this is not a key file\n", "printkbot-config-" },
	{ "[source l]\ntype = mbox\npath = /x\narchive = lore.kernel.org/l/\n",
	  "[source l] archive: 'lore.kernel.org/l/' is not an http(s):// URL" },
	{ "[site]\nurl = javascript:alert(1)\n", ":2: [site] url: 'javascript:alert(1)' is not an http(s):// URL" },
	{ "[site]\nurl = https://x.example/\"><script>\n", "[site] url: " },
	{ "[site]\nsource_url = https://git.example.org/tree/\n", "[site] source_url: " },
	{ "[site]\nsource_url = ftp://x/{path}\n", "[site] source_url: 'ftp://x/{path}' is not" },
	{ "[site]\nbase = x\n", "[site]: unknown key 'base'" },
	{ "[smtp]\ntls = maybe\n", "[smtp] tls: 'maybe' is not one of required, try, off" },
	{ "[smtp]\nstarttls = always\n", "[smtp] starttls: is now tls = required | try | off" },
	{ "[smtp]\nurl = smtps://mail.example.org\ntls = off\n", "[smtp] tls: 'off' contradicts" },
	{ "[source l]\ntype = imap\nurl = imaps://h/INBOX\ntls = off\n", "[source l] tls: 'off' contradicts" },
	{ "[source l]\ntype = mbox\npath = /x\nstart = yesterday\n",
	  "[source l] start: 'yesterday' is not now, all or a date (YYYY-MM-DD)" },
	{ "[source l]\ntype = mbox\npath = /x\nstart = 2024-02-30\n", "[source l] start: '2024-02-30'" },
	/* a negative count is said to be one, not "too large" (strtoull wraps it) */
	{ "[policy]\nmax_files = -1\n", ":2: [policy] max_files: must not be negative" },
	{ "[build]\njobs = -4\n", ":2: [build] jobs: must not be negative" },
	/* a key that is missing: at its group's line, not line 0 */
	{ "[smtp]\ntimeout = 5\n\n[source l]\ntype = imap\n", ":4: [source l] url: an imap source needs url" },
	/* GKeyFile keeps a trailing comment in the value: refused, not a value "5 # few" */
	{ "[policy]\nmax_files = 5 # few\n", ":2: [policy] max_files: a # after the value would be part of it" },
	{ "[smtp]\npassword = s3cret\t# the old one\n", ":2: [smtp] password: a # after the value" },
	/* a group or a key given twice merged in silence, the last winning */
	{ "[policy]\nmax_files = 5\n[test]\nbase = v6.1\n[policy]\nmax_lines = 9\n",
	  ":5: [policy]: given again (first at line 1)" },
	{ "[policy]\nmax_files = 5\nmax_lines = 9\n  max_files=6\n", ":4: [policy] max_files: given again (first at line 2)" },
	/* a line GKeyFile cannot parse: where it is */
	{ "[policy]\nmax_files = 5\n[test\n", ":3: '[test' is not a [group] line" },
	{ "[policy]\nmax_files = 5\nsandbox\n", ":3: 'sandbox' is not a [group], a key = value or a # comment" },
	/* a value of the wrong type says what it is not, and what would do */
	{ "[policy]\nallow_build_system = yes\n", "[policy] allow_build_system: 'yes' is not a boolean: true or false" },
	{ "[policy]\nmax_files = lots\n", "[policy] max_files: 'lots' is not a whole number" },
	{ "[test]\nboot_timeout = soon\n", "[test] boot_timeout: 'soon' is not a number of seconds" },
};

static void test_bad_values_name_the_key(void **state)
{
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		g_autofree char *path = write_tmp(bad[i].text);
		g_autoptr(GError) err = NULL;
		struct pk_config c;

		assert_int_equal(pk_config_load(&c, path, &err), -1);
		print_message("%s\n", err->message);
		assert_non_null(strstr(err->message, bad[i].error_has));
		assert_non_null(strstr(err->message, path));
		unlink(path);
	}
}

static void test_missing_named_file(void **state)
{
	g_autoptr(GError) err = NULL;
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, "/nonexistent/printkbot.conf", &err), -1);
	assert_non_null(strstr(err->message, "/nonexistent/printkbot.conf"));
}

/* Loopback is localhost, 127.0.0.0/8 and ::1, by their literal forms only. */
static void test_loopback(void **state)
{
	static const struct { const char *url; bool loopback; } cases[] = {
		{ "smtp://localhost:25", true },
		{ "smtp://LocalHost", true },
		{ "imap://127.0.0.1:143/INBOX", true },
		{ "imap://127.3.2.1/lists%2Fserial", true },
		{ "smtp://[::1]:587", true },
		{ "imaps://user@127.0.0.1/INBOX", true },
		{ "smtp://localhost.example.org", false },
		{ "imap://127.0.0.1.example.org/INBOX", false },
		{ "smtp://128.0.0.1", false },
		{ "smtp://10.0.0.1", false },
		{ "smtp://[::2]", false },
		{ "smtp://mail.example.org:25", false },
		{ "not a url", false },
		{ NULL, false },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		print_message("%s\n", cases[i].url ? cases[i].url : "(null)");
		assert_int_equal(pk_url_is_loopback(cases[i].url), cases[i].loopback);
	}
	/* a login never goes in clear unless off says so */
	assert_int_equal(pk_tls_enforced(PK_TLS_TRY, true), PK_TLS_REQUIRED);
	assert_int_equal(pk_tls_enforced(PK_TLS_TRY, false), PK_TLS_TRY);
	assert_int_equal(pk_tls_enforced(PK_TLS_OFF, true), PK_TLS_OFF);
	assert_int_equal(pk_tls_enforced(PK_TLS_REQUIRED, false), PK_TLS_REQUIRED);
}

/* tls: required by default, try on loopback, as written when written. */
static void test_tls_defaults(void **state)
{
	g_autofree char *path = write_tmp(
		"[smtp]\nurl = smtp://mail.example.org:587\n"
		"[source remote]\ntype = imap\nurl = imap://imap.example.org/INBOX\n"
		"[source local]\ntype = imap\nurl = imap://127.0.0.1:1143/INBOX\n"
		"[source said]\ntype = imap\nurl = imap://[::1]/INBOX\ntls = required\n"
		"[source clear]\ntype = imap\nurl = imap://imap.example.org/INBOX\ntls = off\n");
	g_autofree char *local = write_tmp("[smtp]\nurl = smtp://127.0.0.1:25\n");
	struct pk_config c;
	const struct pk_source_config *s;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_int_equal(c.smtp.tls, PK_TLS_REQUIRED);
	assert_int_equal(c.sources->len, 4);
	s = c.sources->pdata[0];
	assert_int_equal(s->tls, PK_TLS_REQUIRED);
	s = c.sources->pdata[1];
	assert_int_equal(s->tls, PK_TLS_TRY);
	s = c.sources->pdata[2];
	assert_int_equal(s->tls, PK_TLS_REQUIRED);
	s = c.sources->pdata[3];
	assert_int_equal(s->tls, PK_TLS_OFF);
	pk_config_clear(&c);
	assert_int_equal(pk_config_load(&c, local, NULL), 0);
	assert_int_equal(c.smtp.tls, PK_TLS_TRY);
	pk_config_clear(&c);
	unlink(path);
	unlink(local);
}

/* start: now by default for every type, all, a date at midnight UTC, or an ISO 8601 time. */
static void test_start(void **state)
{
	g_autofree char *path = write_tmp(
		"[source a]\ntype = imap\nurl = imaps://h/INBOX\n"
		"[source b]\ntype = public-inbox\npath = /srv/pi\n"
		"[source c]\ntype = mbox\npath = /x.mbox\n"
		"[source d]\ntype = maildir\npath = /md\nstart = all\n"
		"[source e]\ntype = mbox\npath = /x.mbox\nstart = 2024-03-01\n"
		"[source f]\ntype = mbox\npath = /x.mbox\nstart = 2024-03-01T12:00:00+01:00\n");
	static const struct { enum pk_source_start start; gint64 date; } want[] = {
		{ PK_START_NOW, 0 }, { PK_START_NOW, 0 }, { PK_START_NOW, 0 }, { PK_START_ALL, 0 },
		{ PK_START_DATE, 1709251200 }, { PK_START_DATE, 1709251200 + 11 * 3600 },
	};
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, path, NULL), 0);
	assert_int_equal(c.sources->len, G_N_ELEMENTS(want));
	for (guint i = 0; i < c.sources->len; i++) {
		const struct pk_source_config *s = c.sources->pdata[i];

		assert_int_equal(s->start, want[i].start);
		assert_int_equal(s->start_date, want[i].date);
	}
	pk_config_clear(&c);
	unlink(path);
}

/* A password file group or others may read is refused, naming the file and its mode. */
static void test_password_file_mode(void **state)
{
	static const struct { mode_t mode; const char *error_has; } cases[] = {
		{ 0644, "is readable by others (mode 0644): chmod 600 it" },
		{ 0640, "is readable by its group (mode 0640)" },
		{ 0604, "is readable by others (mode 0604)" },
		{ 0600, NULL },
		{ 0400, NULL },
	};
	g_autofree char *secret = write_tmp("s3cret\nsecond line\n");
	g_autofree char *text = g_strdup_printf("[smtp]\nuser = bot\npassword_file = %s\n", secret);
	g_autofree char *path = write_tmp(text);

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) err = NULL;
		struct pk_config c;

		assert_int_equal(chmod(secret, cases[i].mode), 0);
		if (!cases[i].error_has) {
			assert_int_equal(pk_config_load(&c, path, NULL), 0);
			assert_string_equal(c.smtp.password, "s3cret");
			pk_config_clear(&c);
			continue;
		}
		assert_int_equal(pk_config_load(&c, path, &err), -1);
		print_message("%s\n", err->message);
		assert_non_null(strstr(err->message, cases[i].error_has));
		assert_non_null(strstr(err->message, secret));
		assert_non_null(strstr(err->message, "[smtp] password_file"));
		assert_null(strstr(err->message, "s3cret"));
	}
	unlink(secret);
	unlink(path);
}

/*
 * A FIFO (or a device, a directory) as password_file is refused at once:
 * opening a FIFO waited for a writer, and every command hung.  The load
 * runs in a child that an alarm ends, so a hang fails the test.
 */
static void test_password_file_not_regular(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("printkbot-config-XXXXXX", NULL);
	g_autofree char *fifo = g_build_filename(dir, "pw", NULL);
	const char *const files[] = { fifo, "/dev/null", dir };

	assert_int_equal(mkfifo(fifo, 0600), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
		g_autofree char *text = g_strdup_printf("[smtp]\nuser = bot\npassword_file = %s\n", files[i]);
		g_autofree char *path = write_tmp(text);
		int status = 0;
		pid_t pid;

		fflush(NULL);
		if ((pid = fork()) == 0) {
			g_autoptr(GError) err = NULL;
			struct pk_config c;

			alarm(5);
			if (pk_config_load(&c, path, &err) == 0)
				_exit(1);
			fprintf(stderr, "%s\n", err->message);
			_exit(strstr(err->message, "is not a regular file") &&
			      strstr(err->message, "[smtp] password_file") ? 0 : 2);
		}
		assert_true(pid > 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));   /* not ended by the alarm */
		assert_int_equal(WEXITSTATUS(status), 0);
		unlink(path);
	}
	unlink(fifo);
	rmdir(dir);
}

/*
 * A file that holds a secret (a password key, a url with a password or a
 * token) and that group or others may read gets a warning naming the
 * file, the key and the mode, never the secret; one without a secret,
 * or readable by its owner alone, none.
 */
static void test_secret_exposed(void **state)
{
	static const struct { const char *text; mode_t mode; const char *warning_has; } cases[] = {
		{ "[store]\nurl = postgresql://bot:s3cret@db/p\n", 0644,
		  "holds a secret ([store] url) and is readable by others (mode 0644): chmod 600 it" },
		{ "[store]\nurl = postgresql://bot@db/p?password=s3cret\n", 0640,
		  "([store] url) and is readable by its group (mode 0640)" },
		{ "[tree net]\nurl = https://ghp_s3cret@github.com/x/net.git\n", 0604, "([tree net] url)" },
		{ "[smtp]\nuser = bot\npassword = s3cret\n", 0640, "([smtp] password)" },
		{ "[store]\nurl = postgresql://bot:s3cret@db/p\n", 0600, NULL },
		{ "[store]\nurl = postgresql://bot@db/p\n[tree net]\nurl = https://git.example.org/net.git\n",
		  0644, NULL },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *path = write_tmp(cases[i].text);
		g_autofree char *warning = NULL;
		struct pk_config c;

		assert_int_equal(chmod(path, cases[i].mode), 0);
		assert_int_equal(pk_config_load(&c, path, NULL), 0);
		warning = pk_config_secret_exposed(&c);
		if (!cases[i].warning_has) {
			assert_null(warning);
		} else {
			assert_non_null(warning);
			print_message("%s\n", warning);
			assert_non_null(strstr(warning, cases[i].warning_has));
			assert_non_null(strstr(warning, path));
			assert_null(strstr(warning, "s3cret"));
		}
		pk_config_clear(&c);
		unlink(path);
	}
}

/* The daemon's own check: From at localhost is refused only when it replies. */
static void test_check_daemon(void **state)
{
	static const struct { const char *text; bool ok; } cases[] = {
		{ "[daemon]\nfrom = bot@example.org\n", true },
		{ "[daemon]\nreply_on = never\n", true },
		{ "[daemon]\nreply_on = always\n", false },
		/* no list answered: nobody mailed, the default From is no harm */
		{ "[daemon]\nfrom = Bot <bot@localhost>\n", true },
		{ "[daemon]\nfrom = Bot <bot@localhost>\nreply_on = changes\n", false },
		{ "[daemon]\nfrom = bot@mail.localhost\nreply_on = always\n", false },
		{ "[list l]\naddress = l@example.org\n", false },
		{ "[list l]\naddress = l@example.org\nreply = off\n", true },
		{ "[daemon]\nfrom = bot@localhost.example.org\n", true },
		/* a watched branch mails the authors of its commits: from must be real too */
		{ "[daemon]\nreply_on = never\n[tree t]\npath = /t\nwatch = main\n", true },
		{ "[daemon]\nreply_on = never\n[tree t]\npath = /t\nwatch = main\nreply = changes\n", false },
		{ "[daemon]\nreply_on = never\n[tree t]\npath = /t\nreply = changes\n", true },
		{ "[daemon]\nreply_on = always\n[tree t]\npath = /t\nwatch = main\n", false },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *path = write_tmp(cases[i].text);
		g_autoptr(GError) err = NULL;
		struct pk_config c;

		assert_int_equal(pk_config_load(&c, path, NULL), 0);
		assert_int_equal(pk_config_check_daemon(&c, &err), cases[i].ok ? 0 : -1);
		if (!cases[i].ok)
			assert_non_null(strstr(err->message, "[daemon] from"));
		pk_config_clear(&c);
		unlink(path);
	}
}

/* The example shipped with the sources is itself a valid configuration. */
static void test_example_loads(void **state)
{
	struct pk_config c;

	assert_int_equal(pk_config_load(&c, PK_SRCDIR "/config.example", NULL), 0);
	pk_config_clear(&c);
}

/* [daemon] lease and worker_poll: the defaults, and values given. */
static void test_worker_keys(void **state)
{
	g_autofree char *given = write_tmp("[daemon]\nlease = 30\nworker_poll = 0.5\n");
	g_autofree char *empty = write_tmp("");
	struct pk_config c = { 0 };

	assert_int_equal(pk_config_load(&c, empty, NULL), 0);
	assert_true(c.daemon.lease == 120 && c.daemon.worker_poll == 10);
	pk_config_clear(&c);
	assert_int_equal(pk_config_load(&c, given, NULL), 0);
	assert_true(c.daemon.lease == 30 && c.daemon.worker_poll == 0.5);
	pk_config_clear(&c);
	unlink(given);
	unlink(empty);
}

/* [daemon] commands_from: off by default; *, addresses and @domains, lower case; a typo is an error. */
static void test_commands_keys(void **state)
{
	g_autofree char *empty = write_tmp("");
	g_autofree char *given = write_tmp("[daemon]\ncommands_from = Max@Example.org, @kernel.org *\n"
					   "commands_per_hour = 10\ncommands_per_thread_hour = 0\n");
	g_autofree char *blank = write_tmp("[daemon]\ncommands_from = \n");
	g_autofree char *bad = write_tmp("[daemon]\ncommands_from = max, @example.org\n");
	g_autofree char *twice = write_tmp("[daemon]\ncommands_from = a@b@c\n");
	g_autoptr(GError) err = NULL;
	struct pk_config c = { 0 };

	assert_int_equal(pk_config_load(&c, empty, NULL), 0);
	assert_null(c.daemon.commands_from);
	assert_int_equal(c.daemon.commands_per_hour, 5);
	assert_int_equal(c.daemon.commands_per_thread_hour, 3);
	pk_config_clear(&c);
	assert_int_equal(pk_config_load(&c, given, NULL), 0);
	assert_int_equal(g_strv_length(c.daemon.commands_from), 3);
	assert_string_equal(c.daemon.commands_from[0], "max@example.org");
	assert_string_equal(c.daemon.commands_from[1], "@kernel.org");
	assert_string_equal(c.daemon.commands_from[2], "*");
	assert_int_equal(c.daemon.commands_per_hour, 10);
	assert_int_equal(c.daemon.commands_per_thread_hour, 0);
	pk_config_clear(&c);
	assert_int_equal(pk_config_load(&c, blank, NULL), 0);
	assert_null(c.daemon.commands_from);
	pk_config_clear(&c);
	assert_int_equal(pk_config_load(&c, bad, &err), -1);
	assert_non_null(strstr(err->message, "[daemon] commands_from: 'max' is not"));
	g_clear_error(&err);
	assert_int_equal(pk_config_load(&c, twice, &err), -1);
	assert_non_null(strstr(err->message, "commands_from"));
	unlink(empty);
	unlink(given);
	unlink(blank);
	unlink(bad);
	unlink(twice);
}

/*
 * What vouches for a command's sender: [daemon] commands_authserv_id
 * (ids, lower case; a word that no header could hold is an error),
 * [source] trusted_commands; the global cap's default.  The daemon does
 * not start with commands_from but neither: a From: line alone would be
 * believed.
 */
static void test_commands_auth_keys(void **state)
{
	static const struct {
		const char *text;
		const char *error;    /* of loading, or NULL */
		bool check;           /* pk_config_check_daemon() passes */
	} cases[] = {
		{ "[daemon]\nreply_on = never\ncommands_from = max@example.org\n", NULL, false },
		{ "[daemon]\nreply_on = never\ncommands_from = max@example.org\ncommands_authserv_id = mx.example.org\n",
		  NULL, true },
		{ "[daemon]\nreply_on = never\ncommands_from = max@example.org\n"
		  "[source s]\ntype = mbox\npath = /x\ntrusted_commands = true\n", NULL, true },
		{ "[daemon]\nreply_on = never\ncommands_from = max@example.org\n"
		  "[source s]\ntype = mbox\npath = /x\ntrusted_commands = false\n", NULL, false },
		{ "[daemon]\nreply_on = never\ncommands_authserv_id = mx.example.org\n", NULL, true },
		{ "[daemon]\nreply_on = never\n", NULL, true },
		{ "[daemon]\ncommands_authserv_id = mx.example.org; dkim=pass\n", "'mx.example.org;' is not an authserv-id" },
		{ "[daemon]\ncommands_authserv_id = \"mx\"\n", "is not an authserv-id" },
		{ "[source s]\ntype = mbox\npath = /x\ntrusted_commands = maybe\n", "[source s] trusted_commands" },
		{ "[daemon]\ncommands_total_per_hour = -1\n", "commands_total_per_hour: must not be negative" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *path = write_tmp(cases[i].text);
		g_autoptr(GError) err = NULL;
		struct pk_config c = { 0 };
		int rc = pk_config_load(&c, path, &err);

		if (cases[i].error) {
			if (rc == 0 || !strstr(err->message, cases[i].error))
				fail_msg("case %zu: %s", i, rc ? err->message : "loaded");
		} else {
			if (rc)
				fail_msg("case %zu: %s", i, err->message);
			rc = pk_config_check_daemon(&c, &err);
			if ((rc == 0) != cases[i].check)
				fail_msg("case %zu: check %s", i, rc ? err->message : "passed");
			if (rc)
				assert_non_null(strstr(err->message, "[daemon] commands_from: commands by mail need a "
							    "way to tell their sender from a forger"));
			pk_config_clear(&c);
		}
		unlink(path);
	}

	g_autofree char *given = write_tmp("[daemon]\ncommands_authserv_id = MX.example.org, mx2.example.org\n"
					   "commands_total_per_hour = 7\n"
					   "[source a]\ntype = mbox\npath = /a\ntrusted_commands = true\n"
					   "[source b]\ntype = mbox\npath = /b\n");
	g_autofree char *empty = write_tmp("");
	struct pk_config c = { 0 };

	assert_int_equal(pk_config_load(&c, empty, NULL), 0);
	assert_null(c.daemon.commands_authserv_id);
	assert_int_equal(c.daemon.commands_total_per_hour, 20);
	pk_config_clear(&c);
	assert_int_equal(pk_config_load(&c, given, NULL), 0);
	assert_int_equal(g_strv_length(c.daemon.commands_authserv_id), 2);
	assert_string_equal(c.daemon.commands_authserv_id[0], "mx.example.org");
	assert_string_equal(c.daemon.commands_authserv_id[1], "mx2.example.org");
	assert_int_equal(c.daemon.commands_total_per_hour, 7);
	assert_true(((struct pk_source_config *)c.sources->pdata[0])->trusted_commands);
	assert_false(((struct pk_source_config *)c.sources->pdata[1])->trusted_commands);
	pk_config_clear(&c);
	unlink(given);
	unlink(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_and_defaults),
		cmocka_unit_test(test_arch),
		cmocka_unit_test(test_store_url),
		cmocka_unit_test(test_store_path_relative),
		cmocka_unit_test(test_worker_keys),
		cmocka_unit_test(test_commands_auth_keys),
		cmocka_unit_test(test_metrics_keys),
		cmocka_unit_test(test_commands_keys),
		cmocka_unit_test(test_source_archive),
		cmocka_unit_test(test_site),
		cmocka_unit_test(test_bases_and_trees),
		cmocka_unit_test(test_kcidb),
		cmocka_unit_test(test_tree_watch),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_sandbox_and_limits),
		cmocka_unit_test(test_bad_values_name_the_key),
		cmocka_unit_test(test_missing_named_file),
		cmocka_unit_test(test_example_loads),
		cmocka_unit_test(test_secret_exposed),
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_tls_defaults),
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_password_file_mode),
		cmocka_unit_test(test_password_file_not_regular),
		cmocka_unit_test(test_check_daemon),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
