/*
 * test-options.c - every command's command line, parsed without running
 * the command: both spellings of every option, durations with units, bad
 * numbers and unknown options refused naming them, -h/--help and
 * `help CMD` alike, and what main sets up for a command that needs the
 * store.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "cmd/commands.h"

/* ---------------------------------------------------------------- helpers */

/* argv from a NULL-terminated list of words: the caller's array, borrowed strings. */
#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })

static int count(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

static int parse(struct pk_cmd_ctx *ctx, char **argv, GError **err)
{
	const struct pk_command *cmd = pk_command_find(argv[0]);

	assert_non_null(cmd);
	return pk_command_parse(ctx, cmd, count(argv), argv, err);
}

static const void *value(const struct pk_cmd_ctx *ctx, const char *option)
{
	const struct pk_command *cmd = pk_command_find(ctx->name);
	const void *v = pk_cmdline_value(&ctx->cmdline, cmd->spec->options, option);

	assert_non_null(v);
	return v;
}

/*
 * The words that make a line of cmd valid around the option tested: an
 * option its checks want (before: the option tested comes after and wins),
 * and as many arguments as it needs.
 */
static void add_words(GPtrArray *argv, const struct pk_command *cmd, const char *flag, bool before)
{
	/* opt: the option the row is for (its flag's start), NULL: any; arg "": no argument */
	static const struct { const char *cmd, *opt, *before, *arg; } good[] = {
		{ "report", "--site", NULL, "" }, { "report", "--full", "--site=/s", "" },
		{ "report", NULL, NULL, "1" }, { "db", NULL, NULL, "check" }, { "scan", NULL, "--tree=/t", NULL },
		/* check's other options are --test's */
		{ "check", NULL, "--test", NULL },
	};
	const char *word = before ? NULL : "x";
	bool found = false;

	for (size_t i = 0; i < G_N_ELEMENTS(good) && !found; i++)
		if (!strcmp(cmd->name, good[i].cmd) && (!good[i].opt || g_str_has_prefix(flag, good[i].opt))) {
			word = before ? good[i].before : good[i].arg;
			found = true;
		}
	if (before && word)
		g_ptr_array_add(argv, (char *)word);
	if (!before && word && !*word)
		return;
	for (unsigned i = 0; !before && i < MAX(cmd->spec->args_min, word && found ? 1u : 0u); i++)
		g_ptr_array_add(argv, (char *)word);
}

/* A rule file that parses: --rules is read when the line is checked (written by main()). */
static char *rules_file;

/* A good value for an option of type t, and what it parses to (as text, for comparing). */
static const char *sample_type(enum pk_option_type t)
{
	switch (t) {
	case PK_OPT_FLAG: return NULL;
	case PK_OPT_STRING: return "some value";
	case PK_OPT_COUNT: return "7";
	case PK_OPT_DURATION: return "2m";
	case PK_OPT_DATE: case PK_OPT_DATE_END: return "2024-05-01";
	}
	return NULL;
}

static const char *sample(const struct pk_option *o)
{
	return !strcmp(o->name, "rules") ? rules_file : sample_type(o->type);
}

static void assert_sample(const struct pk_cmd_ctx *ctx, const struct pk_option *o)
{
	const void *v = value(ctx, o->name);

	switch (o->type) {
	case PK_OPT_FLAG: assert_true(*(const bool *)v); break;
	case PK_OPT_STRING: assert_string_equal(*(const char *const *)v, sample(o)); break;
	case PK_OPT_COUNT: assert_int_equal(*(const unsigned *)v, 7); break;
	case PK_OPT_DURATION: assert_true(*(const double *)v == 120); break;
	case PK_OPT_DATE: assert_int_equal(*(const gint64 *)v, 1714521600); break;
	case PK_OPT_DATE_END: assert_int_equal(*(const gint64 *)v, 1714521600 + 86400); break;
	}
}

/* Parse cmd with one option given as words (and the arguments it needs); 0 or -1 with err. */
static int parse_with(struct pk_cmd_ctx *ctx, const struct pk_command *cmd, const char *w1,
		      const char *w2, GError **err)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	int rc;

	g_ptr_array_add(argv, (char *)cmd->name);
	add_words(argv, cmd, w1, true);
	g_ptr_array_add(argv, (char *)w1);
	if (w2)
		g_ptr_array_add(argv, (char *)w2);
	add_words(argv, cmd, w1, false);
	g_ptr_array_add(argv, NULL);
	rc = pk_command_parse(ctx, cmd, (int)argv->len - 1, (char **)argv->pdata, err);
	return rc;
}

/* ---------------------------------------------------------------- every command */

/* --opt=V and --opt V parse alike, for every option of every command. */
static void test_every_option_both_spellings(void **state)
{
	for (const struct pk_command *cmd = pk_commands; cmd->name; cmd++) {
		for (const struct pk_option *o = cmd->spec->options; o->name; o++) {
			g_autofree char *flag = g_strconcat("--", o->name, NULL);
			g_autofree char *joined = sample(o) ? g_strconcat(flag, "=", sample(o), NULL) : NULL;
			g_autoptr(GError) err = NULL;
			struct pk_cmd_ctx ctx;

			if (parse_with(&ctx, cmd, flag, sample(o), &err) < 0)
				fail_msg("%s %s: %s", cmd->name, flag, err->message);
			assert_sample(&ctx, o);
			assert_false(ctx.cmdline.help);
			pk_cmd_ctx_clear(&ctx);
			if (!joined)
				continue;
			assert_int_equal(parse_with(&ctx, cmd, joined, NULL, &err), 0);
			assert_sample(&ctx, o);
			pk_cmd_ctx_clear(&ctx);
		}
	}
}

/* A typed option with a bad value, a flag with a value, an unknown option: errors naming them. */
static void test_every_bad_value_names_the_option(void **state)
{
	for (const struct pk_command *cmd = pk_commands; cmd->name; cmd++) {
		for (const struct pk_option *o = cmd->spec->options; o->name; o++) {
			g_autofree char *flag = g_strconcat("--", o->name, NULL);
			g_autofree char *flag_value = g_strconcat(flag, "=abc", NULL);
			g_autoptr(GError) err = NULL;
			struct pk_cmd_ctx ctx;

			if (o->type == PK_OPT_STRING)
				continue;
			assert_int_equal(parse_with(&ctx, cmd, o->type == PK_OPT_FLAG ? flag_value : flag,
						    o->type == PK_OPT_FLAG ? NULL : "abc", &err), -1);
			assert_true(g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE));
			assert_non_null(strstr(err->message, flag));
			assert_non_null(strstr(err->message, "abc"));
			assert_null(ctx.cmdline.opts);   /* left cleared */
		}
	}
	for (const struct pk_command *cmd = pk_commands; cmd->name; cmd++) {
		g_autoptr(GError) err = NULL;
		struct pk_cmd_ctx ctx;

		assert_int_equal(parse_with(&ctx, cmd, "--no-such-option", NULL, &err), -1);
		assert_true(g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION));
		assert_non_null(strstr(err->message, "--no-such-option"));
	}
}

/* Every option is in the command's usage text, which is its documentation. */
static void test_every_option_documented(void **state)
{
	for (const struct pk_command *cmd = pk_commands; cmd->name; cmd++) {
		g_autofree char *synopsis = g_strdup_printf("usage: printkbot %s", cmd->name);

		assert_true(g_str_has_prefix(cmd->spec->usage, synopsis));
		for (const struct pk_option *o = cmd->spec->options; o->name; o++) {
			g_autofree char *flag = g_strconcat("--", o->name, NULL);

			assert_non_null(strstr(cmd->spec->usage, flag));
		}
	}
}

/* The options main acts on are taken by the commands that need them. */
static void test_needs_have_their_options(void **state)
{
	for (const struct pk_command *cmd = pk_commands; cmd->name; cmd++) {
		/* every reader of the store honours --config's [store] path */
		if (cmd->needs & (PK_NEEDS_STORE | PK_NEEDS_STORE_PATH)) {
			assert_non_null(pk_option_find(cmd->spec->options, "db"));
			assert_non_null(pk_option_find(cmd->spec->options, "config"));
		}
		if (cmd->needs & PK_NEEDS_CONFIG)
			assert_non_null(pk_option_find(cmd->spec->options, "config"));
		/* check sets up the store itself, with --test only: without it, it touches none */
		if (pk_option_find(cmd->spec->options, "no-store") && strcmp(cmd->name, "check"))
			assert_true(cmd->needs & PK_NEEDS_STORE);
	}
	/* what the brief of each says: setup (which reads [test] arch) and scan need nothing set up,
	   history no lab */
	assert_int_equal(pk_command_find("setup")->needs, PK_NEEDS_CONFIG);
	assert_int_equal(pk_command_find("scan")->needs, 0);
	assert_int_equal(pk_command_find("check")->needs, 0);
	assert_int_equal(pk_command_find("daemon")->needs, 0);
	assert_int_equal(pk_command_find("db")->needs, PK_NEEDS_STORE_PATH);
	assert_int_equal(pk_command_find("history")->needs, PK_NEEDS_STORE | PK_NEEDS_STORE_READONLY);
	assert_int_equal(pk_command_find("report")->needs, PK_NEEDS_STORE | PK_NEEDS_STORE_READONLY);
	assert_int_equal(pk_command_find("queue")->needs,
			 PK_NEEDS_CONFIG | PK_NEEDS_STORE | PK_NEEDS_STORE_READONLY);
	/* boot builds, under the configuration's sandbox and [build] */
	assert_int_equal(pk_command_find("boot")->needs, PK_NEEDS_LAB | PK_NEEDS_CONFIG);
	assert_null(pk_command_find("nosuch"));
}

/* ---------------------------------------------------------------- help */

/* Run pk_command_dispatch(argv) with stdout into a string; *rc its status. */
static char *dispatch_stdout(char **argv, int *rc)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDOUT_FILENO);
	g_autoptr(GString) out = g_string_new(NULL);
	char buf[4096];
	size_t n;

	assert_non_null(tmp);
	fflush(stdout);
	assert_true(dup2(fileno(tmp), STDOUT_FILENO) >= 0);
	*rc = pk_command_dispatch(count(argv), argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(tmp);
	while ((n = fread(buf, 1, sizeof(buf), tmp)) > 0)
		g_string_append_len(out, buf, n);
	fclose(tmp);
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/* `help CMD`, `CMD --help` and `CMD -h` print the same usage, and exit 0. */
static void test_help_cmd_is_cmd_help(void **state)
{
	for (const struct pk_command *cmd = pk_commands; cmd->name; cmd++) {
		int rc_help = -1, rc_long = -1, rc_short = -1;
		g_autofree char *help = dispatch_stdout(ARGV("help", (char *)cmd->name), &rc_help);
		g_autofree char *longh = dispatch_stdout(ARGV((char *)cmd->name, "--help"), &rc_long);
		g_autofree char *shorth = dispatch_stdout(ARGV((char *)cmd->name, "-h"), &rc_short);

		assert_int_equal(rc_help, 0);
		assert_int_equal(rc_long, 0);
		assert_int_equal(rc_short, 0);
		assert_string_equal(help, longh);
		assert_string_equal(help, shorth);
		assert_string_equal(help, cmd->spec->usage);
	}
	{
		int rc = -1;
		g_autofree char *out = dispatch_stdout(ARGV("help", "nosuch"), &rc);

		assert_int_equal(rc, 2);
		assert_string_equal(out, "");
	}
}

/* --help needs none of the command's arguments, and is seen after them too. */
static void test_help_needs_no_arguments(void **state)
{
	struct pk_cmd_ctx ctx;

	assert_int_equal(parse(&ctx, ARGV("test", "--help"), NULL), 0);
	assert_true(ctx.cmdline.help);
	pk_cmd_ctx_clear(&ctx);
	assert_int_equal(parse(&ctx, ARGV("run", "a..b", "-h"), NULL), 0);
	assert_true(ctx.cmdline.help);
	pk_cmd_ctx_clear(&ctx);
}

/* ---------------------------------------------------------------- particular lines */

/* Durations: a plain number is seconds; s, m, h; anything else is refused. */
static void test_durations(void **state)
{
	static const struct { const char *text; double seconds; } good[] = {
		{ "60", 60 }, { "90s", 90 }, { "1m", 60 }, { "2m", 120 }, { "1.5m", 90 },
		{ "1h", 3600 }, { "0", 0 }, { "0.5", 0.5 }, { ".5s", 0.5 },
	};
	static const char *const bad[] = {
		"", "abc", "1x", "1mm", "m", "-5", "+5", " 5", "5 ", "1e999", "inf", "nan", "1ms", "1d",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
		double v = -1;

		assert_int_equal(pk_duration_parse(&v, good[i].text), 0);
		assert_true(v == good[i].seconds);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		double v = -1;

		assert_int_equal(pk_duration_parse(&v, bad[i]), -1);
		assert_true(v == -1);   /* untouched */
	}
}

/* `--timeout 1m` is a minute, not a second; `--timeout abc` is refused naming --timeout. */
static void test_timeout(void **state)
{
	static const struct { const char *cmd, *w1, *w2; double seconds; } good[] = {
		{ "test", "--timeout", "1m", 60 }, { "test", "--timeout=90s", NULL, 90 },
		{ "test", "--timeout", "45", 45 }, { "run", "--timeout=1h", NULL, 3600 },
		{ "bisect", "--timeout", "2m", 120 }, { "boot", "--timeout", "15", 15 },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
		struct pk_cmd_ctx ctx;

		assert_int_equal(parse_with(&ctx, pk_command_find(good[i].cmd), good[i].w1, good[i].w2, NULL), 0);
		assert_true(*(const double *)value(&ctx, "timeout") == good[i].seconds);
		pk_cmd_ctx_clear(&ctx);
	}
	{
		g_autoptr(GError) err = NULL;
		struct pk_cmd_ctx ctx;

		assert_int_equal(parse(&ctx, ARGV("test", "--timeout", "abc", "x.patch"), &err), -1);
		assert_non_null(strstr(err->message, "--timeout"));
		assert_non_null(strstr(err->message, "'abc'"));
	}
}

struct line_case {
	char **argv;
	int rc;                 /* 0 or -1 */
	const char *option;     /* with rc 0: an option to check, or NULL */
	const char *string;     /* its string value (or NULL when not given) */
	unsigned n_args;        /* with rc 0: how many other arguments */
	const char *arg0;       /* the first of them */
	const char *error_has;  /* with rc -1: in the message */
};

/* The spellings the e2e scripts, the README and the bench scripts use, and some errors. */
static void test_lines(void **state)
{
	/* not static: the argv arrays are compound literals */
	const struct line_case cases[] = {
		{ ARGV("test", "--json", "--all", "p.patch"), 0, "all", NULL, 1, "p.patch" },
		{ ARGV("test", "--json", "--config", "l.conf", "p.patch"), 0, "config", "l.conf", 1, "p.patch" },
		{ ARGV("test", "--no-store", "p.patch"), 0, "no-store", NULL, 1, "p.patch" },
		{ ARGV("test", "--allow-build-system", "p.patch", "-"), 0, "allow-build-system", NULL, 2, "p.patch" },
		{ ARGV("test", "--base=v6.12", "p.patch"), 0, "base", "v6.12", 1, "p.patch" },
		{ ARGV("test", "p.patch", "--db", "x.db"), 0, "db", "x.db", 1, "p.patch" },
		{ ARGV("test"), -1, .error_has = "missing PATCH" },
		{ ARGV("boot", "--json", "--timeout", "60", "printkbot-test-panic"), 0, "json", NULL, 1, "printkbot-test-panic" },
		{ ARGV("boot", "--cmdline=loglevel=8 quiet"), 0, "cmdline", "loglevel=8 quiet", 0, NULL },
		{ ARGV("boot", "a", "b"), -1, .error_has = "unexpected argument 'b'" },
		{ ARGV("test", "--arch", "arm64", "p.patch"), 0, "arch", "arm64", 1, "p.patch" },
		{ ARGV("index-diff", "--arch=arm64", "debian:6.1", "debian:6.12"), 0, "arch", "arm64", 2, "debian:6.1" },
		{ ARGV("scan", "--arch", "arm64", "a.c"), -1, .error_has = "--arch" },   /* a scan builds nothing */
		{ ARGV("scan", "--json", "--tree", "/t", "f.patch"), 0, "tree", "/t", 1, "f.patch" },
		{ ARGV("scan", "--tree=/t", "--describe", "--json", "a.c", "b.c"), 0, "tree", "/t", 2, "a.c" },
		{ ARGV("scan", "-"), 0, "tree", NULL, 1, "-" },
		{ ARGV("scan", "--", "--json"), 0, NULL, NULL, 1, "--json" },
		{ ARGV("scan", "--describe", "a.c"), -1, .error_has = "--describe needs --tree" },
		{ ARGV("history", "--json", "--file", "arch/x86/kernel/e820.c"), 0, "file", "arch/x86/kernel/e820.c", 0, NULL },
		{ ARGV("history", "--json", "--grep", "attaching NULL sched-domain"), 0, "grep", "attaching NULL sched-domain", 0, NULL },
		{ ARGV("history", "--author=Printk Bot Fixture"), 0, "author", "Printk Bot Fixture", 0, NULL },
		{ ARGV("history", "--grep", "-->"), 0, "grep", "-->", 0, NULL },   /* a value may start with '-' */
		{ ARGV("history", "--grep", "caf\xc3\xa9 \xff"), 0, "grep", "caf\xc3\xa9 \xff", 0, NULL },   /* bytes as given */
		{ ARGV("history", "e820"), -1, .error_has = "unexpected argument 'e820'" },
		{ ARGV("history", "--limit", "0"), -1, .error_has = "--limit" },
		{ ARGV("history", "--since", "yesterday"), -1, .error_has = "'yesterday'" },
		{ ARGV("report", "--html=/tmp/r.html", "1", "--db", "/tmp/none.db"), 0, "html", "/tmp/r.html", 1, "1" },
		{ ARGV("report", "--html", "/tmp/r.html", "--db=/tmp/none.db", "12"), 0, "db", "/tmp/none.db", 1, "12" },
		{ ARGV("report", "abc"), -1, .error_has = "review id" },
		{ ARGV("report", "0"), -1, .error_has = "review id" },
		{ ARGV("report"), -1, .error_has = "missing ID" },
		{ ARGV("db", "check", "--db=/tmp/x.db"), 0, "db", "/tmp/x.db", 1, "check" },
		{ ARGV("db", "--db", "/tmp/x.db", "check"), 0, "db", "/tmp/x.db", 1, "check" },
		{ ARGV("db", "vacuum"), -1, .error_has = "unknown db command 'vacuum'" },
		{ ARGV("db"), -1, .error_has = "missing" },
		{ ARGV("run", "--json", "printkbot-base..cleanup"), 0, "json", NULL, 1, "printkbot-base..cleanup" },
		{ ARGV("run", "--repo", "/u", "cleanup"), 0, "repo", "/u", 1, "cleanup" },
		{ ARGV("run", "--all-parents", "--repo=/u", "tip", "^base"), 0, "repo", "/u", 2, "tip" },
		{ ARGV("run"), -1, .error_has = "missing RANGE" },
		{ ARGV("bisect", "--json", "--repo", "/u", "b..c", "--message", "available for PCI devices"),
		  0, "message", "available for PCI devices", 1, "b..c" },
		{ ARGV("bisect", "--message=", "b..c"), -1, .error_has = "--message" },
		{ ARGV("daemon", "--config", "p.conf", "--once"), 0, "config", "p.conf", 0, NULL },
		{ ARGV("daemon", "--config=p.conf", "--queue-only"), 0, "queue-only", NULL, 0, NULL },
		{ ARGV("daemon", "now"), -1, .error_has = "unexpected argument 'now'" },
		{ ARGV("queue", "--config", "p.conf", "--json"), 0, "json", NULL, 0, NULL },
		{ ARGV("queue", "--state=queued"), 0, "state", "queued", 0, NULL },
		{ ARGV("queue", "--sources", "--json"), 0, "sources", NULL, 0, NULL },
		{ ARGV("setup", "now"), -1, .error_has = "unexpected argument 'now'" },
		{ ARGV("setup", "--json"), -1, .error_has = "unknown option --json" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		const struct line_case *c = &cases[i];
		g_autoptr(GError) err = NULL;
		struct pk_cmd_ctx ctx;

		assert_int_equal(parse(&ctx, c->argv, &err), c->rc);
		if (c->rc < 0) {
			assert_non_null(err);
			assert_non_null(strstr(err->message, c->error_has));
			continue;
		}
		assert_int_equal(ctx.cmdline.n_args, c->n_args);
		if (c->arg0)
			assert_string_equal(ctx.cmdline.args[0], c->arg0);
		assert_null(ctx.cmdline.args[c->n_args]);
		if (c->option && pk_option_find(pk_command_find(c->argv[0])->spec->options, c->option)->type == PK_OPT_FLAG)
			assert_true(*(const bool *)value(&ctx, c->option));
		else if (c->option)
			assert_string_equal(*(const char *const *)value(&ctx, c->option) ?: "(null)",
					    c->string ? c->string : "(null)");
		pk_cmd_ctx_clear(&ctx);
	}
}

/* --since is the day's midnight UTC, --until the next one; ISO 8601 times as they are. */
static void test_dates(void **state)
{
	struct pk_cmd_ctx ctx;

	assert_int_equal(parse(&ctx, ARGV("history", "--since", "2024-01-01", "--until=2024-01-01"), NULL), 0);
	assert_int_equal(*(const gint64 *)value(&ctx, "since"), 1704067200);
	assert_int_equal(*(const gint64 *)value(&ctx, "until"), 1704067200 + 86400);
	pk_cmd_ctx_clear(&ctx);
	assert_int_equal(parse(&ctx, ARGV("history", "--until", "2024-01-01T12:00:00Z"), NULL), 0);
	assert_int_equal(*(const gint64 *)value(&ctx, "until"), 1704067200 + 43200);
	pk_cmd_ctx_clear(&ctx);
}

/* ---------------------------------------------------------------- setting up */

/* Remove dir and the files in it (the stores' -wal and -shm files too). */
static void remove_dir(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree char *path = g_build_filename(dir, name, NULL);
		g_unlink(path);
	}
	g_rmdir(dir);
}

/* Make an empty store at path, as the daemon or `db migrate` would. */
static void make_store(const char *path)
{
	struct pk_store *s = NULL;

	assert_int_equal(pk_store_open(&s, path, NULL), 0);
	pk_store_close(s);
}

/*
 * A store-only command gets the store at --db, else the config's [store]
 * path; no lab.  They only read: a store that is not there is not made.
 */
static void test_setup_store(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("printkbot-options-XXXXXX", NULL);
	g_autofree char *db = g_build_filename(dir, "given.db", NULL);
	g_autofree char *conf_db = g_build_filename(dir, "config.db", NULL);
	g_autofree char *conf = g_build_filename(dir, "p.conf", NULL);
	g_autofree char *conf_text = g_strdup_printf("[store]\npath = %s\n", conf_db);
	const struct pk_command *history = pk_command_find("history"), *queue = pk_command_find("queue");
	struct pk_cmd_ctx ctx;

	g_autoptr(GError) err = NULL;

	assert_true(g_file_set_contents(conf, conf_text, -1, NULL));
	assert_int_equal(parse(&ctx, ARGV("history", "--db", db), NULL), 0);
	assert_int_equal(pk_command_setup(&ctx, history, &err), -1);
	assert_non_null(strstr(err->message, "no database"));
	assert_false(g_file_test(db, G_FILE_TEST_EXISTS));
	pk_cmd_ctx_clear(&ctx);

	make_store(db);
	make_store(conf_db);
	assert_int_equal(parse(&ctx, ARGV("history", "--db", db), NULL), 0);
	assert_int_equal(pk_command_setup(&ctx, history, NULL), 0);
	assert_non_null(ctx.store);
	assert_null(ctx.lab.tree);
	assert_true(g_file_test(db, G_FILE_TEST_EXISTS));
	pk_cmd_ctx_clear(&ctx);

	assert_int_equal(parse(&ctx, ARGV("queue", "--config", conf), NULL), 0);
	assert_int_equal(pk_command_setup(&ctx, queue, NULL), 0);
	assert_non_null(ctx.store);
	assert_string_equal(ctx.config.db, conf_db);
	assert_true(g_file_test(conf_db, G_FILE_TEST_EXISTS));
	pk_cmd_ctx_clear(&ctx);

	remove_dir(dir);
}

/*
 * history, report and db take --config for its [store] path (and read
 * nothing else of it: a password file they may not read is no error);
 * --db still wins; db only names the file, it does not open it.
 */
static void test_store_readers_take_config(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("printkbot-options-XXXXXX", NULL);
	g_autofree char *db = g_build_filename(dir, "given.db", NULL);
	g_autofree char *conf_db = g_build_filename(dir, "config.db", NULL);
	g_autofree char *conf = g_build_filename(dir, "p.conf", NULL);
	g_autofree char *conf_text = g_strdup_printf("[store]\npath = %s\n\n[smtp]\nurl = smtp://localhost\n"
						     "password_file = %s/no-such-file\n", conf_db, dir);
	/* each with an argument it takes */
	char *readers[][2] = { { "history", "--json" }, { "report", "1" } };
	const struct pk_command *dbcmd = pk_command_find("db");
	struct pk_cmd_ctx ctx;

	assert_true(g_file_set_contents(conf, conf_text, -1, NULL));
	make_store(db);
	make_store(conf_db);
	for (size_t i = 0; i < G_N_ELEMENTS(readers); i++) {
		const struct pk_command *cmd = pk_command_find(readers[i][0]);

		assert_int_equal(parse(&ctx, ARGV(readers[i][0], "--config", conf, readers[i][1]), NULL), 0);
		assert_int_equal(pk_command_setup(&ctx, cmd, NULL), 0);
		assert_non_null(ctx.store);
		assert_string_equal(pk_store_path(ctx.store), conf_db);
		pk_cmd_ctx_clear(&ctx);

		assert_int_equal(parse(&ctx, ARGV(readers[i][0], "--config", conf, "--db", db, readers[i][1]), NULL), 0);
		assert_int_equal(pk_command_setup(&ctx, cmd, NULL), 0);
		assert_string_equal(pk_store_path(ctx.store), db);
		pk_cmd_ctx_clear(&ctx);
	}
	g_unlink(conf_db);
	assert_int_equal(parse(&ctx, ARGV("db", "check", "--config", conf), NULL), 0);
	assert_int_equal(pk_command_setup(&ctx, dbcmd, NULL), 0);
	assert_string_equal(ctx.config.db, conf_db);
	assert_null(ctx.store);
	assert_false(g_file_test(conf_db, G_FILE_TEST_EXISTS));
	pk_cmd_ctx_clear(&ctx);
	remove_dir(dir);
}

/*
 * test checks its inputs before it takes the lab (the spec's inputs hook,
 * run by pk_command_setup() before pk_lab_take()): an input it cannot
 * read, or a directory, is said at once, not after another printkbot's
 * build; a readable one passes.
 */
static void test_test_checks_inputs_first(void **state)
{
	const struct pk_command *test = pk_command_find("test");
	char *missing[] = { "test", "/nonexistent/x.patch", NULL };
	char *dir[] = { "test", "/tmp", NULL };
	char *readable[] = { "test", "tests/data/test/text-change.patch", NULL };
	char **lines[] = { missing, dir, readable };
	const char *said[] = { "cannot read /nonexistent/x.patch", "it is a directory", NULL };

	(void)state;
	assert_non_null(test->spec->inputs);
	for (size_t i = 0; i < G_N_ELEMENTS(lines); i++) {
		g_autoptr(GError) err = NULL;
		struct pk_cmd_ctx ctx;

		assert_int_equal(pk_command_parse(&ctx, test, 2, lines[i], &err), 0);
		if (said[i]) {
			assert_int_equal(test->spec->inputs(&ctx, &err), -1);
			assert_non_null(strstr(err->message, said[i]));
		} else {
			assert_int_equal(test->spec->inputs(&ctx, &err), 0);
		}
		pk_cmdline_clear(&ctx.cmdline);
	}
}

int main(void)
{
	int fd = g_file_open_tmp("printkbot-options-XXXXXX.rules", &rules_file, NULL);
	int rc;

	g_assert(fd >= 0 && write(fd, "ok\n", 3) == 3);
	close(fd);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_option_both_spellings),
		cmocka_unit_test(test_every_bad_value_names_the_option),
		cmocka_unit_test(test_every_option_documented),
		cmocka_unit_test(test_needs_have_their_options),
		cmocka_unit_test(test_help_cmd_is_cmd_help),
		cmocka_unit_test(test_help_needs_no_arguments),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_dates),
		cmocka_unit_test(test_setup_store),
		cmocka_unit_test(test_store_readers_take_config),
		cmocka_unit_test(test_test_checks_inputs_first),
	};
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(rules_file);
	g_free(rules_file);
	return rc;
}
