/*
 * test-daemon.c - the daemon's SIGHUP reload: a new configuration takes
 * effect, sandbox limits included, only when all of it could be loaded and
 * its sources opened; a reload that fails (a config that does not parse, a
 * source that cannot be opened) keeps the old limits in force.  A newer
 * version of a series cancels the older one still in the queue.  And the
 * daemon does not start (nor reload) when it would reply From an address
 * at localhost.  [policy] max_mail_mb holds for the sources.  A patch
 * that only adds a pr_fmt() is churn and queued; one without churn is not.
 * SIGTERM during an SMTP send stops the daemon at once, the reply kept.
 * The figures for monitoring ([daemon] metrics_dir): the intake's file and
 * a worker's, written again while idle and, by the heartbeat, during a
 * job, moved by a reload, removed when a signal stops the daemon.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "lab/lab.h"
#include "base/proc.h"
#include "lab/sandbox.h"
#include "report/outbox.h"
#include "store/store.h"
#include "store/queue.h"
#include "tinyfs.h"

struct fixture {
	char *dir;
	char *config;              /* the config file the daemon reads */
	struct pk_daemon_opts opts;
	struct pk_daemon *daemon;
};

/*
 * Write the config: the store and outbox in the test's dir, the limits
 * given, and one Maildir source at maildir (relative to the dir).
 */
static void write_config(struct fixture *f, const char *policy, const char *maildir)
{
	g_autofree char *text = g_strdup_printf(
		"[store]\npath = %s/daemon.db\n"
		"[daemon]\noutbox = %s/outbox\nfrom = printkbot <bot@example.org>\n"
		"[policy]\n%s\n"
		"[source list]\ntype = maildir\nstart = all\npath = %s/%s\n",
		f->dir, f->dir, policy, f->dir, maildir);

	assert_true(g_file_set_contents(f->config, text, -1, NULL));
}

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autoptr(GError) err = NULL;

	f->dir = g_dir_make_tmp("pk-daemon-XXXXXX", NULL);
	f->config = g_build_filename(f->dir, "printkbot.conf", NULL);
	for (const char *const *sub = (const char *const[]){ "new", "cur", "tmp", NULL }; *sub; sub++) {
		g_autofree char *p = g_build_filename(f->dir, "maildir", *sub, NULL);

		assert_int_equal(g_mkdir_with_parents(p, 0700), 0);
	}
	write_config(f, "build_cpu_seconds = 100", "maildir");
	f->opts.config_path = f->config;
	if (pk_daemon_open(&f->daemon, &f->opts, &err) < 0)
		fail_msg("daemon open: %s", err->message);
	/* opening installed the first configuration's limits */
	assert_true(pk_sandbox_settings()->build.cpu_seconds == 100);
	assert_int_equal(pk_sandbox_settings()->mode, PK_SANDBOX_ON);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->dir);

	pk_daemon_close(f->daemon);
	g_assert(system(cmd) == 0);
	g_free(f->config);
	g_free(f->dir);
	g_free(f);
	return 0;
}

/* A new configuration whose source cannot be opened: the old limits stay. */
static void test_reload_source_fails(void **state)
{
	struct fixture *f = *state;

	write_config(f, "build_cpu_seconds = 200\nsandbox = off", "no-such-maildir");
	assert_int_equal(pk_daemon_reload(f->daemon), -1);
	assert_true(pk_sandbox_settings()->build.cpu_seconds == 100);
	assert_int_equal(pk_sandbox_settings()->mode, PK_SANDBOX_ON);
	/* and the daemon still reloads a good one afterwards */
	write_config(f, "build_cpu_seconds = 300", "maildir");
	assert_int_equal(pk_daemon_reload(f->daemon), 0);
	assert_true(pk_sandbox_settings()->build.cpu_seconds == 300);
}

/* A new configuration that does not parse: the old limits stay. */
static void test_reload_bad_config(void **state)
{
	struct fixture *f = *state;

	write_config(f, "build_cpu_seconds = lots", "maildir");
	assert_int_equal(pk_daemon_reload(f->daemon), -1);
	assert_true(pk_sandbox_settings()->build.cpu_seconds == 100);
	assert_true(g_file_set_contents(f->config, "[policy\nbuild_cpu_seconds = 200\n", -1, NULL));
	assert_int_equal(pk_daemon_reload(f->daemon), -1);
	assert_true(pk_sandbox_settings()->build.cpu_seconds == 100);
}

/* A good new configuration: its limits are in force once the reload returns. */
static void test_reload_ok(void **state)
{
	struct fixture *f = *state;

	write_config(f, "build_cpu_seconds = 250\nbuild_processes = 77\nsandbox = off\n"
		     "sandbox_user = someone", "maildir");
	assert_int_equal(pk_daemon_reload(f->daemon), 0);
	assert_true(pk_sandbox_settings()->build.cpu_seconds == 250);
	assert_int_equal(pk_sandbox_settings()->build.processes, 77);
	assert_int_equal(pk_sandbox_settings()->mode, PK_SANDBOX_OFF);
	assert_string_equal(pk_sandbox_settings()->user, "someone");
}

/*
 * [test] rules: read at start and on SIGHUP; a rule that does not parse
 * keeps the old configuration on a reload and stops a start, naming the
 * file, the rule and the offset.
 */
static void test_rules_file(void **state)
{
	struct fixture *f = *state;
	g_autofree char *good = g_build_filename(f->dir, "good.rules", NULL);
	g_autofree char *bad = g_build_filename(f->dir, "bad.json", NULL);
	g_autofree char *with_good = g_strdup_printf("build_cpu_seconds = 100\n[test]\nrules = %s", good);
	g_autofree char *with_bad = g_strdup_printf("build_cpu_seconds = 300\n[test]\nrules = %s", bad);
	struct pk_daemon *d = NULL;
	g_autoptr(GError) err = NULL;

	assert_true(g_file_set_contents(good, "Killed process \\d+\n", -1, NULL));
	assert_true(g_file_set_contents(bad, "{ \"rules\": [ { \"reason\": \"X\", \"pattern\": \"a[\" } ] }", -1, NULL));
	write_config(f, with_good, "maildir");
	assert_int_equal(pk_daemon_reload(f->daemon), 0);
	write_config(f, with_bad, "maildir");
	assert_int_equal(pk_daemon_reload(f->daemon), -1);
	assert_true(pk_sandbox_settings()->build.cpu_seconds == 100);
	pk_daemon_close(f->daemon);
	f->daemon = NULL;
	assert_int_equal(pk_daemon_open(&d, &f->opts, &err), -1);
	assert_null(d);
	assert_non_null(strstr(err->message, "bad.json: rules[0] (X): pattern /a[/: missing closing ] at offset 1"));
}

/* A patch mail of version v (1: no vN in the subject) into the source's Maildir new/. */
static void deliver_patch(struct fixture *f, int v)
{
	g_autofree char *path = g_strdup_printf("%s/maildir/new/patch-v%d", f->dir, v);
	g_autofree char *tag = v > 1 ? g_strdup_printf("PATCH v%d", v) : g_strdup("PATCH");
	g_autofree char *mail = g_strdup_printf(
		"From: Printk Bot Fixture <fixture@printkbot.invalid>\n"
		"Date: Tue, 1 Dec 2026 10:0%d:00 +0000\n"
		"Subject: [%s] x86/e820: say the PCI gap is free\n"
		"Message-ID: <v%d@printkbot.invalid>\n\n"
		"The boot message about the PCI gap changes text.\n\n"
		"Signed-off-by: Printk Bot Fixture <fixture@printkbot.invalid>\n---\n"
		"diff --git a/arch/x86/kernel/e820.c b/arch/x86/kernel/e820.c\n"
		"--- a/arch/x86/kernel/e820.c\n+++ b/arch/x86/kernel/e820.c\n"
		"@@ -679,7 +679,7 @@ __init void e820__setup_pci_gap(void)\n"
		" \t */\n \tpci_mem_start = gapstart;\n \n"
		"-\tpr_info(\"[mem %%#010lx-%%#010lx] available for PCI devices\\n\",\n"
		"+\tpr_info(\"[mem %%#010lx-%%#010lx] free for PCI devices (v%d)\\n\",\n"
		" \t\tgapstart, gapstart + gapsize - 1);\n }\n \n", v, tag, v, v);

	assert_true(g_file_set_contents(path, mail, -1, NULL));
}

/*
 * The daemon queues v1 of a series; when v2 arrives, v2 is queued and v1,
 * still waiting, is cancelled (the store answers which in one query).
 */
static void test_newer_series_cancels_older(void **state)
{
	struct fixture *f = *state;
	struct pk_daemon_opts once = { .config_path = f->config, .once = true, .queue_only = true };
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autoptr(GPtrArray) jobs = NULL;
	g_autoptr(pk_store) store = NULL;
	g_autoptr(GError) err = NULL;
	const struct pk_store_job *v1, *v2;

	pk_daemon_close(f->daemon);   /* one daemon per database: the run takes the lock */
	f->daemon = NULL;
	deliver_patch(f, 1);
	if (pk_daemon_run(&once, &err) < 0)
		fail_msg("run 1: %s", err->message);
	deliver_patch(f, 2);
	if (pk_daemon_run(&once, &err) < 0)
		fail_msg("run 2: %s", err->message);
	assert_int_equal(pk_store_open(&store, db, &err), 0);
	assert_int_equal(pk_store_jobs(store, PK_JOB_ANY_STATE, &jobs, &err), 0);
	assert_int_equal(jobs->len, 2);
	v1 = jobs->pdata[0];
	v2 = jobs->pdata[1];
	assert_int_equal(v1->kind, PK_JOB_SERIES);
	assert_int_equal(v1->series_version, 1);
	assert_int_equal(v1->state, PK_JOB_CANCELLED);
	assert_non_null(strstr(v1->detail, "superseded by v2"));
	assert_int_equal(v2->series_version, 2);
	assert_int_equal(v2->state, PK_JOB_QUEUED);
	assert_string_equal(v1->series_key, v2->series_key);
}

/* A mail into a Maildir's new/: its subject, and its diff after the "---". */
static void deliver_mail(const char *maildir, const char *id, const char *subject, const char *diff)
{
	g_autofree char *path = g_strdup_printf("%s/new/%s", maildir, id);
	g_autofree char *mail = g_strdup_printf(
		"From: Jane Dev <jane@example.org>\nDate: Tue, 1 Dec 2026 10:00:00 +0000\n"
		"Subject: %s\nMessage-ID: <%s@example.org>\n\nx\n---\n%s", subject, id, diff);

	assert_true(g_file_set_contents(path, mail, -1, NULL));
}

/*
 * The intake's scan gate: a pr_fmt() added touches no printk call and
 * changes every message of its file, so its series is queued; a comment
 * is skipped.
 */
static void test_pr_fmt_only_is_churn(void **state)
{
	struct fixture *f = *state;
	struct pk_daemon_opts once = { .config_path = f->config, .once = true, .queue_only = true };
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *maildir = g_build_filename(f->dir, "maildir", NULL);
	g_autoptr(GPtrArray) jobs = NULL;
	g_autoptr(pk_store) store = NULL;
	g_autoptr(GError) err = NULL;
	const struct pk_store_job *job;

	pk_daemon_close(f->daemon);
	f->daemon = NULL;
	deliver_mail(maildir, "prfmt", "[PATCH] init: prefix messages with init:",
		     "diff --git a/init/main.c b/init/main.c\n--- a/init/main.c\n+++ b/init/main.c\n"
		     "@@ -12,6 +12,8 @@\n \n #define DEBUG\n \n+#define pr_fmt(fmt) \"init: \" fmt\n+\n"
		     " #include <linux/types.h>\n #include <linux/extable.h>\n #include <linux/module.h>\n");
	deliver_mail(maildir, "comment", "[PATCH] init: say why",
		     "diff --git a/init/main.c b/init/main.c\n--- a/init/main.c\n+++ b/init/main.c\n"
		     "@@ -12,3 +12,4 @@\n \n #define DEBUG\n+/* why */\n \n");
	if (pk_daemon_run(&once, &err) < 0)
		fail_msg("run: %s", err->message);
	assert_int_equal(pk_store_open(&store, db, &err), 0);
	assert_int_equal(pk_store_jobs(store, PK_JOB_ANY_STATE, &jobs, &err), 0);
	assert_int_equal(jobs->len, 1);
	job = jobs->pdata[0];
	assert_int_equal(job->kind, PK_JOB_SERIES);
	assert_int_equal(job->state, PK_JOB_QUEUED);
	assert_non_null(strstr(job->series_key, "prefix messages with init:"));
}

/* Whether the store at db holds a mail with this Message-ID, waiting up to seconds for it. */
static bool mail_arrives(const char *db, const char *message_id, double seconds)
{
	gint64 until = g_get_monotonic_time() + (gint64)(seconds * G_USEC_PER_SEC);

	do {
		g_autoptr(pk_store) store = NULL;
		gint64 id = 0;

		if (pk_store_open(&store, db, NULL) == 0 &&
		    pk_store_mail_find(store, message_id, &id, NULL) > 0)
			return true;
		g_usleep(50000);
	} while (g_get_monotonic_time() < until);
	return false;
}

/* A patch 1/2 (its series waits for 2/2: no job runs) into a Maildir's new/. */
static void deliver_half_series(const char *maildir, const char *id)
{
	deliver_mail(maildir, id, "[PATCH 1/2] x: y",
		     "diff --git a/kernel/x.c b/kernel/x.c\n--- a/kernel/x.c\n+++ b/kernel/x.c\n"
		     "@@ -1,3 +1,3 @@\n a\n-\tpr_info(\"old\\n\");\n+\tpr_info(\"new\\n\");\n b\n");
}

/*
 * SIGHUP adding a source whose mail is there already: read at once, not
 * when something new is written to it (its watch sees only what comes).
 */
static void test_reload_reads_new_source(void **state)
{
	struct fixture *f = *state;
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *one = g_build_filename(f->dir, "maildir", NULL);
	g_autofree char *two = g_build_filename(f->dir, "maildir2", NULL);
	g_autofree char *text = NULL, *more = NULL;
	int status = 0;
	pid_t pid;

	pk_daemon_close(f->daemon);   /* the child's daemon takes the lock */
	f->daemon = NULL;
	for (const char *const *sub = (const char *const[]){ "new", "cur", "tmp", NULL }; *sub; sub++) {
		g_autofree char *p = g_build_filename(two, *sub, NULL);
		assert_int_equal(g_mkdir_with_parents(p, 0700), 0);
	}
	deliver_half_series(one, "first");
	deliver_half_series(two, "second");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_daemon_opts opts = { .config_path = f->config };
		_exit(pk_daemon_run(&opts, NULL) < 0 ? 1 : 0);
	}
	/* the first source read: the daemon is in its loop */
	assert_true(mail_arrives(db, "first@example.org", 20));
	assert_true(g_file_get_contents(f->config, &text, NULL, NULL));
	more = g_strdup_printf("%s[source two]\ntype = maildir\nstart = all\npath = %s\n", text, two);
	assert_true(g_file_set_contents(f->config, more, -1, NULL));
	assert_int_equal(kill(pid, SIGHUP), 0);
	bool read = mail_arrives(db, "second@example.org", 5);
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(read);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * One daemon per store, whatever name it is reached by: a second daemon on
 * the same database through a symlink to it, or to its directory, or a
 * hard link to it, does not start (two replied twice).
 */
static void test_one_daemon_through_symlinks(void **state)
{
	struct fixture *f = *state;
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *file_link = g_build_filename(f->dir, "other-name.db", NULL);
	g_autofree char *dir_link = g_strdup_printf("%s-link", f->dir);
	g_autofree char *via_dir = g_build_filename(dir_link, "daemon.db", NULL);
	g_autofree char *hard_link = g_build_filename(f->dir, "hard-link.db", NULL);
	const char *const names[] = { db, file_link, via_dir, hard_link };

	assert_int_equal(link(db, hard_link), 0);
	assert_int_equal(symlink(db, file_link), 0);
	assert_int_equal(symlink(f->dir, dir_link), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		struct pk_daemon_opts opts = { .config_path = f->config, .db = names[i] };
		struct pk_daemon *d = NULL;
		g_autoptr(GError) err = NULL;

		assert_int_equal(pk_daemon_open(&d, &opts, &err), -1);
		print_message("%s: %s\n", names[i], err->message);
		assert_non_null(strstr(err->message, "another printkbot daemon"));
	}
	/* the first gone, a daemon by another name starts */
	pk_daemon_close(f->daemon);
	f->daemon = NULL;
	{
		struct pk_daemon_opts opts = { .config_path = f->config, .db = file_link };
		g_autoptr(GError) err = NULL;

		if (pk_daemon_open(&f->daemon, &opts, &err) < 0)
			fail_msg("through the link: %s", err->message);
	}
	unlink(dir_link);
}

/* In the child, the outbox on a full tiny disk: run the daemon once (exit status 0 when it ran). */
static int run_on_full_outbox(const char *dir, void *data)
{
	struct pk_daemon_opts once = { .config_path = data, .once = true };
	g_autoptr(pk_outbox) ob = NULL;
	g_autoptr(GError) err = NULL;

	if (pk_outbox_open(&ob, dir, true, &err) < 0)
		return 2;
	tinyfs_fill(dir);
	if (pk_daemon_run(&once, &err) < 0) {
		fprintf(stderr, "run: %s\n", err->message);
		return 3;
	}
	return 0;
}

/*
 * A reply waiting to be sent: a mail read by a queue-only run, its reply
 * stored (not in the outbox) and a reply job for it.  The job's id.
 */
static gint64 queue_reply_to(struct fixture *f, const char *recipients)
{
	struct pk_daemon_opts queue = { .config_path = f->config, .once = true, .queue_only = true };
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *maildir = g_build_filename(f->dir, "maildir", NULL);
	g_autofree char *payload = NULL;
	g_autoptr(pk_store) store = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_store_reply r = { .message_id = "printkbot-full@example.org", .sender = "bot@example.org",
				    .recipients = (char *)recipients,
				    .text = "From: bot@example.org\r\nSubject: x\r\n\r\nhi\r\n" };
	gint64 reply_id, job_id;

	pk_daemon_close(f->daemon);   /* one daemon per database */
	f->daemon = NULL;
	deliver_half_series(maildir, "replied");
	if (pk_daemon_run(&queue, &err) < 0)
		fail_msg("queue: %s", err->message);
	assert_int_equal(pk_store_open(&store, db, &err), 0);
	assert_int_equal(pk_store_mail_find(store, "replied@example.org", &r.mail_id, &err), 1);
	assert_int_equal(pk_store_reply_add(store, &reply_id, &r, &err), 0);
	payload = g_strdup_printf("{\"reply\":%" G_GINT64_FORMAT "}", reply_id);
	assert_int_equal(pk_store_job_add(store, &job_id, PK_JOB_REPLY, payload, &err), 0);
	return job_id;
}

static gint64 queue_reply(struct fixture *f)
{
	return queue_reply_to(f, "jane@example.org");
}

/* The job job_id as the store has it now (caller frees). */
static struct pk_store_job *job_now(struct fixture *f, gint64 job_id)
{
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autoptr(pk_store) store = NULL;
	g_autoptr(GPtrArray) jobs = NULL;

	assert_int_equal(pk_store_open(&store, db, NULL), 0);
	assert_int_equal(pk_store_jobs(store, PK_JOB_ANY_STATE, &jobs, NULL), 0);
	for (guint i = 0; i < jobs->len; i++)
		if (((const struct pk_store_job *)jobs->pdata[i])->id == job_id)
			return g_ptr_array_steal_index(jobs, i);
	fail_msg("no job %" G_GINT64_FORMAT, job_id);
	return NULL;
}

/*
 * A reply that cannot be put in the outbox because the disk is full for a
 * moment: its job is tried again after the backoff, not failed for good.
 */
static void test_full_outbox_retries(void **state)
{
	struct fixture *f = *state;
	g_autofree char *outbox = g_build_filename(f->dir, "outbox", NULL);
	g_autoptr(pk_store_job) job = NULL;
	gint64 job_id = queue_reply(f);
	int rc;

	assert_int_equal(g_mkdir_with_parents(outbox, 0700), 0);
	rc = tinyfs_run(outbox, "64k", run_on_full_outbox, f->config);
	if (rc < 0)
		skip();   /* no mount namespace here */
	assert_int_equal(rc, 0);
	job = job_now(f, job_id);
	print_message("job %" G_GINT64_FORMAT ": %s\n", job->id, job->detail);
	assert_int_equal(job->state, PK_JOB_QUEUED);
	assert_true(job->not_before > 0);
	assert_non_null(strstr(job->detail, "No space left"));
	assert_non_null(strstr(job->detail, "next try in 60 s"));
}

/* An SMTP server that refuses everyone at once (554 greeting), one connection. */
static gpointer refusing_server(gpointer data)
{
	int fd = GPOINTER_TO_INT(data), c = accept(fd, NULL, NULL);

	if (c >= 0) {
		if (write(c, "554 5.7.1 no mail from you\r\n", 29) < 0) {
			/* the client sees the hang-up instead */
		}
		close(c);
	}
	return NULL;
}

/*
 * Point the config's [smtp] at a listener on loopback served by serve (one
 * thread, the listening fd its argument), run the daemon once, and return
 * the job job_id as it ended.
 */
static struct pk_store_job *run_once_with_smtp(struct fixture *f, const char *name, GThreadFunc serve,
					       gint64 job_id)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	struct pk_daemon_opts once = { .config_path = f->config, .once = true };
	g_autofree char *text = NULL, *more = NULL;
	g_autoptr(GError) err = NULL;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	GThread *server;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	assert_true(g_file_get_contents(f->config, &text, NULL, NULL));
	more = g_strdup_printf("%s[smtp]\nurl = smtp://127.0.0.1:%d\n", text, ntohs(a.sin_port));
	assert_true(g_file_set_contents(f->config, more, -1, NULL));
	server = g_thread_new(name, serve, GINT_TO_POINTER(fd));
	if (pk_daemon_run(&once, &err) < 0)
		fail_msg("run: %s", err->message);
	g_thread_join(server);
	close(fd);
	return job_now(f, job_id);
}

/* A reply the server refuses for good leaves new/: the outbox no longer counts it as waiting. */
static void test_refused_reply_leaves_new(void **state)
{
	struct fixture *f = *state;
	g_autofree char *outbox = g_build_filename(f->dir, "outbox", NULL);
	g_autoptr(pk_store_job) job = NULL;
	g_autoptr(pk_outbox) ob = NULL;
	g_autoptr(GPtrArray) waiting = NULL;
	g_autoptr(GError) err = NULL;
	gint64 job_id = queue_reply(f);

	job = run_once_with_smtp(f, "refuser", refusing_server, job_id);
	print_message("job %" G_GINT64_FORMAT ": %s\n", job->id, job->detail);
	assert_int_equal(job->state, PK_JOB_FAILED);
	assert_non_null(strstr(job->detail, "refused by the server"));
	assert_int_equal(pk_outbox_open(&ob, outbox, false, &err), 0);
	assert_int_equal(pk_outbox_waiting(ob, &waiting, &err), 0);
	assert_int_equal(waiting->len, 0);
	assert_int_equal(pk_outbox_state(ob, "printkbot-full@example.org"), PK_OUTBOX_ABSENT);
}

/*
 * [policy] max_mail_mb holds for the daemon's sources, not only for
 * `test`: a mail over it is skipped (and moved out of new/ unread), the
 * mail beside it is stored.
 */
static void test_max_mail_mb(void **state)
{
	struct fixture *f = *state;
	struct pk_daemon_opts once = { .config_path = f->config, .once = true, .queue_only = true };
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *big = g_strdup_printf("%s/maildir/new/big", f->dir);
	g_autofree char *moved = g_strdup_printf("%s/maildir/cur/big:2,", f->dir);
	g_autofree char *pad = g_strnfill(2u << 20, 'x');
	g_autofree char *mail = g_strdup_printf("From: a@example.org\nSubject: [PATCH] big\n"
						"Message-ID: <big@printkbot.invalid>\n\n%s\n", pad);
	g_autoptr(pk_store) store = NULL;
	g_autoptr(GError) err = NULL;
	gint64 id;

	pk_daemon_close(f->daemon);   /* one daemon per database: the run takes the lock */
	f->daemon = NULL;
	write_config(f, "max_mail_mb = 1", "maildir");
	deliver_patch(f, 1);
	assert_true(g_file_set_contents(big, mail, -1, NULL));
	if (pk_daemon_run(&once, &err) < 0)
		fail_msg("run: %s", err->message);
	assert_int_equal(pk_store_open(&store, db, &err), 0);
	assert_int_equal(pk_store_mail_find(store, "v1@printkbot.invalid", &id, &err), 1);
	assert_int_equal(pk_store_mail_find(store, "big@printkbot.invalid", &id, &err), 0);
	assert_true(g_file_test(moved, G_FILE_TEST_EXISTS));
}

/* stderr (the daemon's log) into f's daemon.log from now; the saved stderr back. */
static int log_start(struct fixture *f)
{
	g_autofree char *log = g_build_filename(f->dir, "daemon.log", NULL);
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved = dup(STDERR_FILENO);

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	close(fd);
	return saved;
}

/* stderr back from log_start(); what was logged since (caller frees). */
static char *log_end(struct fixture *f, int saved)
{
	g_autofree char *log = g_build_filename(f->dir, "daemon.log", NULL);
	char *text = NULL;

	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	assert_true(g_file_get_contents(log, &text, NULL, NULL));
	return text;
}

/* Run the daemon once over its Maildir, its stderr (the log) into *out_log. */
static void run_once_logged(struct fixture *f, char **out_log)
{
	struct pk_daemon_opts once = { .config_path = f->config, .once = true, .queue_only = true };
	g_autoptr(GError) err = NULL;
	int saved = log_start(f);
	int rc = pk_daemon_run(&once, &err);

	*out_log = log_end(f, saved);
	if (rc < 0)
		fail_msg("run: %s", err->message);
}

/*
 * The intake holds a patch to [policy] max_lines before its scan: one
 * over it is not scanned (a scan costs many times the diff's size), the
 * log says why, and its series is queued all the same, to be refused with
 * the limit named in its review, where a scan would have found no churn
 * and dropped it without a word.
 */
static void test_over_limits_not_scanned(void **state)
{
	struct fixture *f = *state;
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *maildir = g_build_filename(f->dir, "maildir", NULL);
	g_autoptr(GString) diff = g_string_new("diff --git a/init/big.c b/init/big.c\n--- /dev/null\n"
					       "+++ b/init/big.c\n@@ -0,0 +1,300 @@\n");
	g_autoptr(GPtrArray) jobs = NULL;
	g_autoptr(pk_store) store = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *log = NULL;

	pk_daemon_close(f->daemon);
	f->daemon = NULL;
	write_config(f, "max_lines = 100", "maildir");
	for (int i = 0; i < 300; i++)
		g_string_append_printf(diff, "+int a%d;\n", i);
	deliver_mail(maildir, "long", "[PATCH] init: a long file", diff->str);
	run_once_logged(f, &log);
	assert_non_null(strstr(log, "not scanned: the diff has 300 lines, more than the limit of 100 "
				    "([policy] max_lines)"));
	assert_int_equal(pk_store_open(&store, db, &err), 0);
	assert_int_equal(pk_store_jobs(store, PK_JOB_ANY_STATE, &jobs, &err), 0);
	assert_int_equal(jobs->len, 1);
	assert_int_equal(((const struct pk_store_job *)jobs->pdata[0])->kind, PK_JOB_SERIES);
	assert_non_null(strstr(((const struct pk_store_job *)jobs->pdata[0])->series_key, "a long file"));
}

/* A syntax error on SIGHUP is logged with its line; the old configuration stays. */
static void test_reload_syntax_error_line(void **state)
{
	struct fixture *f = *state;
	g_autofree char *text = g_strdup_printf("[store]\npath = %s/daemon.db\n[policy\nbuild_cpu_seconds = 200\n",
						f->dir);
	g_autofree char *log = NULL;
	int saved;

	assert_true(g_file_set_contents(f->config, text, -1, NULL));
	saved = log_start(f);
	assert_int_equal(pk_daemon_reload(f->daemon), -1);
	log = log_end(f, saved);
	print_message("%s", log);
	assert_non_null(strstr(log, "printkbot.conf:3: '[policy' is not a [group] line"));
	assert_true(pk_sandbox_settings()->build.cpu_seconds == 100);
}

/*
 * A [store] changed on SIGHUP is not applied (the store is opened once):
 * the log says so, and that it needs a restart, rather than "reloaded".
 */
static void test_reload_store_needs_restart(void **state)
{
	struct fixture *f = *state;
	g_autofree char *text = g_strdup_printf(
		"[store]\npath = %s/other.db\n"
		"[daemon]\noutbox = %s/outbox\nfrom = printkbot <bot@example.org>\n"
		"[source list]\ntype = maildir\nstart = all\npath = %s/maildir\n", f->dir, f->dir, f->dir);
	g_autofree char *log = NULL, *log2 = NULL;
	int saved;

	assert_true(g_file_set_contents(f->config, text, -1, NULL));
	saved = log_start(f);
	assert_int_equal(pk_daemon_reload(f->daemon), 0);
	log = log_end(f, saved);
	print_message("%s", log);
	assert_non_null(strstr(log, "[store] now names "));
	assert_non_null(strstr(log, "other.db: not applied"));
	assert_non_null(strstr(log, "reloaded (1 source(s)), but for [store]: that needs a restart"));
	/* the same store again: a plain reload */
	write_config(f, "build_cpu_seconds = 100", "maildir");
	saved = log_start(f);
	assert_int_equal(pk_daemon_reload(f->daemon), 0);
	log2 = log_end(f, saved);
	assert_null(strstr(log2, "[store]"));
}

/*
 * A second mail with a Message-ID read before is dropped with a line
 * naming the source, where the mail is and the id, not in silence.
 */
static void test_reused_message_id_logged(void **state)
{
	struct fixture *f = *state;
	g_autofree char *first = g_strdup_printf("%s/maildir/new/patch-v1", f->dir);
	g_autofree char *second = g_strdup_printf("%s/maildir/new/patch-again", f->dir);
	g_autofree char *text = NULL, *log = NULL;

	pk_daemon_close(f->daemon);   /* one daemon per database: the run takes the lock */
	f->daemon = NULL;
	deliver_patch(f, 1);
	assert_true(g_file_get_contents(first, &text, NULL, NULL));
	/* names sort: patch-again is read first, patch-v1 is the second mail */
	assert_true(g_file_set_contents(second, text, -1, NULL));
	run_once_logged(f, &log);
	print_message("%s", log);
	assert_non_null(strstr(log, "<v1@printkbot.invalid>: source list, "));
	assert_non_null(strstr(log, "/maildir/new/patch-v1: this Message-ID was read before"));
}

/*
 * Replies on and From at localhost (the default, or said): the daemon
 * refuses to start, naming the key; with no list answered it starts.  A
 * reload to such a configuration keeps the old one.
 */
static void test_from_localhost_refused(void **state)
{
	static const char *const bad[] = {
		"[daemon]\nreply_on = changes\n",
		"[daemon]\nfrom = printkbot <printkbot@localhost>\n[list l]\naddress = l@example.org\n",
		"[daemon]\nfrom = bot@LocalHost\nreply_on = always\n",
	};
	struct fixture *f = *state;
	g_autofree char *db = g_strdup_printf("[store]\npath = %s/other.db\n", f->dir);
	struct pk_daemon_opts opts = { .config_path = f->config };
	struct pk_daemon *d = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *text = g_strconcat(db, bad[i], NULL);
		g_autoptr(GError) err = NULL;

		assert_true(g_file_set_contents(f->config, text, -1, NULL));
		assert_int_equal(pk_daemon_reload(f->daemon), -1);
		assert_int_equal(pk_daemon_open(&d, &opts, &err), -1);
		print_message("%s\n", err->message);
		assert_non_null(strstr(err->message, "[daemon] from"));
		assert_non_null(strstr(err->message, "localhost"));
		assert_non_null(strstr(err->message, f->config));
	}
	{
		g_autofree char *text = g_strconcat(db, "[daemon]\nreply_on = never\n", NULL);
		g_autoptr(GError) err = NULL;

		assert_true(g_file_set_contents(f->config, text, -1, NULL));
		if (pk_daemon_open(&d, &opts, &err) < 0)
			fail_msg("reply_on = never: %s", err->message);
		pk_daemon_close(d);
	}
}

/* ---- workers ------------------------------------------------------------ */

/*
 * Roles and the intake's lock: beside a plain daemon (an intake), a
 * second intake (--queue-only) is refused, and workers start, as many as
 * wanted, reading no source.
 */
static void test_worker_roles(void **state)
{
	struct fixture *f = *state;
	struct pk_daemon_opts intake = { .config_path = f->config, .queue_only = true };
	struct pk_daemon_opts worker = { .config_path = f->config, .worker = true };
	struct pk_daemon *w1 = NULL, *w2 = NULL, *d = NULL;
	g_autoptr(GError) err = NULL;

	assert_int_equal(pk_daemon_open(&d, &intake, &err), -1);
	assert_non_null(strstr(err->message, "another printkbot daemon"));
	g_clear_error(&err);
	if (pk_daemon_open(&w1, &worker, &err) < 0 || pk_daemon_open(&w2, &worker, &err) < 0)
		fail_msg("worker: %s", err->message);
	pk_daemon_close(w1);
	pk_daemon_close(w2);
}

/*
 * A mail session of the fake SMTP server: the Message-ID of each mail
 * that came after DATA is appended to heard.  The mails taken.
 */
static int smtp_session(int c, GString *heard)
{
	g_autoptr(GIOChannel) io = g_io_channel_unix_new(c);
	bool data = false;
	char *line = NULL;
	int taken = 0;

	g_io_channel_set_encoding(io, NULL, NULL);
	g_io_channel_set_close_on_unref(io, TRUE);
#define SAY(text) do { if (write(c, text, strlen(text)) < 0) return taken; } while (0)
	SAY("220 fake\r\n");
	while (g_io_channel_read_line(io, &line, NULL, NULL, NULL) == G_IO_STATUS_NORMAL) {
		g_autofree char *l = line;

		if (data) {
			if (!strcmp(l, ".\r\n")) {
				data = false;
				taken++;
				SAY("250 ok\r\n");
			} else if (!g_ascii_strncasecmp(l, "Message-ID:", 11)) {
				g_string_append(heard, g_strstrip(l + 11));
				g_string_append_c(heard, '\n');
			}
		} else if (!g_ascii_strncasecmp(l, "EHLO", 4) || !g_ascii_strncasecmp(l, "HELO", 4)) {
			SAY("250 fake\r\n");
		} else if (!g_ascii_strncasecmp(l, "RCPT TO:<gone", 13)) {
			SAY("550 5.1.1 no such user\r\n");
		} else if (!g_ascii_strncasecmp(l, "DATA", 4)) {
			data = true;
			SAY("354 go on\r\n");
		} else if (!g_ascii_strncasecmp(l, "QUIT", 4)) {
			SAY("221 bye\r\n");
			return taken;
		} else {
			SAY("250 ok\r\n");
		}
	}
#undef SAY
	return taken;
}

/* One session of smtp_session() on the listening fd given. */
static gpointer one_smtp_session(gpointer data)
{
	int fd = GPOINTER_TO_INT(data), c = accept(fd, NULL, NULL);
	g_autoptr(GString) heard = g_string_new(NULL);

	if (c >= 0)
		smtp_session(c, heard);
	return NULL;
}

/* A recipient the server refused is logged, and not named among those the reply was sent to. */
static void test_refused_recipient_not_sent_to(void **state)
{
	struct fixture *f = *state;
	g_autoptr(pk_store_job) job = NULL;
	gint64 job_id = queue_reply_to(f, "jane@example.org\ngone@example.org\njoe@example.org");

	job = run_once_with_smtp(f, "smtp", one_smtp_session, job_id);
	print_message("job %" G_GINT64_FORMAT ": %s\n", job->id, job->detail);
	assert_int_equal(job->state, PK_JOB_DONE);
	assert_non_null(strstr(job->detail, "sent to jane@example.org, joe@example.org but 1 refused"));
	assert_null(strstr(job->detail, "gone@"));
}

/*
 * Three workers, each on its own outbox (as on three machines), on one
 * SQLite store with 30 replies to send, run at once: every reply reaches
 * the SMTP server exactly once, is recorded sent, and its job done once.
 */
static void test_workers_send_once(void **state)
{
	enum { N_REPLIES = 30, N_WORKERS = 3 };
	struct fixture *f = *state;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autoptr(GString) heard = g_string_new(NULL);
	g_autoptr(GPtrArray) done = NULL;
	g_autoptr(GError) err = NULL;
	pid_t kids[N_WORKERS];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), left = N_WORKERS;

	pk_daemon_close(f->daemon);   /* no thread of ours while the workers are forked */
	f->daemon = NULL;
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	{
		g_autoptr(pk_store) store = NULL;

		assert_int_equal(pk_store_open(&store, db, &err), 0);
		for (int i = 0; i < N_REPLIES; i++) {
			g_autofree char *mid = g_strdup_printf("patch-%d@example.org", i);
			g_autofree char *rid = g_strdup_printf("reply-%d@example.org", i);
			g_autofree char *text = g_strdup_printf("From: bot@example.org\r\nMessage-ID: <%s>\r\n"
								"Subject: x\r\n\r\nhi\r\n", rid);
			g_autofree char *payload = NULL;
			struct pk_store_mail m = { .message_id = mid, .subject = "x", .state = "queued" };
			struct pk_store_reply r = { .message_id = rid, .sender = "bot@example.org",
						    .recipients = "jane@example.org", .text = text };
			gint64 reply_id, job_id;

			assert_int_equal(pk_store_mail_add(store, &r.mail_id, NULL, &m, NULL, 0, &err), 0);
			assert_int_equal(pk_store_reply_add(store, &reply_id, &r, &err), 0);
			payload = g_strdup_printf("{\"reply\":%" G_GINT64_FORMAT "}", reply_id);
			assert_int_equal(pk_store_job_add(store, &job_id, PK_JOB_REPLY, payload, &err), 0);
		}
	}
	for (int k = 0; k < N_WORKERS; k++) {
		g_autofree char *conf = g_strdup_printf("%s/worker%d.conf", f->dir, k);
		g_autofree char *text = g_strdup_printf(
			"[store]\npath = %s\n[daemon]\noutbox = %s/outbox%d\nfrom = printkbot <bot@example.org>\n"
			"[smtp]\nurl = smtp://127.0.0.1:%d\n", db, f->dir, k, ntohs(a.sin_port));

		assert_true(g_file_set_contents(conf, text, -1, NULL));
		kids[k] = fork();
		assert_true(kids[k] >= 0);
		if (kids[k] == 0) {
			struct pk_daemon_opts opts = { .config_path = conf, .worker = true, .once = true };

			close(fd);
			_exit(pk_daemon_run(&opts, NULL) < 0 ? 1 : 0);
		}
	}
	/* serve until every worker is done: one session at a time, as a small server would */
	while (left) {
		struct pollfd p = { fd, POLLIN, 0 };
		int status;
		pid_t pid;

		if (poll(&p, 1, 100) > 0) {
			int c = accept(fd, NULL, NULL);

			if (c >= 0)
				smtp_session(c, heard);
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			left--;
		}
	}
	close(fd);
	{
		g_auto(GStrv) ids = g_strsplit(heard->str, "\n", -1);
		g_autoptr(pk_store) store = NULL;

		assert_int_equal(g_strv_length(ids), N_REPLIES + 1);   /* and the empty last */
		for (int i = 0; i < N_REPLIES; i++) {
			g_autofree char *want = g_strdup_printf("<reply-%d@example.org>", i);
			struct pk_store_reply *r = NULL;
			guint n = 0;

			for (char **id = ids; *id; id++)
				n += !strcmp(*id, want);
			if (n != 1)
				fail_msg("%s sent %u times", want, n);
			assert_int_equal(pk_store_open(&store, db, &err), 0);
			assert_int_equal(pk_store_reply_by_message_id(store, want + 1, &r, &err), 0);
			g_clear_pointer(&store, pk_store_close);
		}
		assert_int_equal(pk_store_open(&store, db, &err), 0);
		assert_int_equal(pk_store_jobs(store, PK_JOB_DONE, &done, &err), 0);
		assert_int_equal(done->len, N_REPLIES);
		for (guint i = 0; i < done->len; i++)
			assert_int_equal(((struct pk_store_job *)done->pdata[i])->attempts, 1);
	}
}

/*
 * A series job queued for the worker of f's config: one patch mail
 * stored, the payload naming it as the intake writes it.  Its id.
 */
static gint64 queue_series(struct fixture *f)
{
	static const char raw[] =
		"From: Jane Dev <jane@example.org>\nDate: Tue, 1 Dec 2026 10:00:00 +0000\n"
		"Subject: [PATCH] x: say it\nMessage-ID: <lab-1@example.org>\n\nx\n---\n"
		"--- a/x.c\n+++ b/x.c\n@@ -1,3 +1,3 @@\n a\n-\tpr_info(\"old\\n\");\n"
		"+\tpr_info(\"new\\n\");\n b\n";
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *payload = NULL;
	g_autoptr(pk_store) store = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_store_mail m = { .message_id = "lab-1@example.org", .subject = "[PATCH] x: say it",
				   .state = "queued" };
	gint64 mail_id, job_id;

	assert_int_equal(pk_store_open(&store, db, &err), 0);
	assert_int_equal(pk_store_mail_add(store, &mail_id, NULL, &m, raw, strlen(raw), &err), 0);
	payload = g_strdup_printf("{\"mails\":[%" G_GINT64_FORMAT "],\"total\":1}", mail_id);
	assert_int_equal(pk_store_job_add_series(store, &job_id, "lab-1", 1, payload, &err), 0);
	return job_id;
}

/*
 * A worker whose lab is not set up (an empty $PRINTKBOT_CACHE) claims no
 * series job: it stops with the reason, and the job stays queued, not
 * tried, for a worker that can test it.  Before, it claimed the job and
 * failed it for good within the second.
 */
static void test_worker_without_lab(void **state)
{
	struct fixture *f = *state;
	g_autofree char *cache = g_build_filename(f->dir, "empty-cache", NULL);
	struct pk_daemon_opts opts = { .config_path = f->config, .worker = true, .once = true };
	g_autoptr(pk_store_job) job = NULL;
	g_autoptr(GError) err = NULL;
	gint64 job_id;

	pk_daemon_close(f->daemon);
	f->daemon = NULL;
	g_setenv("PRINTKBOT_CACHE", cache, TRUE);
	job_id = queue_series(f);
	assert_int_equal(pk_daemon_run(&opts, &err), -1);
	g_unsetenv("PRINTKBOT_CACHE");
	print_message("%s\n", err->message);
	assert_non_null(strstr(err->message, "the kernel lab is not set up (no kernel tree at"));
	assert_non_null(strstr(err->message, "run 'printkbot setup'"));
	job = job_now(f, job_id);
	assert_int_equal(job->state, PK_JOB_QUEUED);
	assert_int_equal(job->attempts, 0);
}

/*
 * A series the worker fails on for a reason of its own (here a lab that
 * passes the check, its base commit there, but whose lock cannot be
 * taken: a directory stands where the lock file goes) goes back to the
 * queue with a retry time, not failed for good: it is no result of the
 * patch.
 */
static void test_worker_error_requeues(void **state)
{
	struct fixture *f = *state;
	g_autofree char *cache = g_build_filename(f->dir, "broken-cache", NULL);
	struct pk_daemon_opts opts = { .config_path = f->config, .worker = true, .once = true };
	g_autoptr(pk_store_job) job = NULL;
	g_autoptr(GError) err = NULL;
	struct pk_lab lab = { .lock_fd = -1 };
	gint64 job_id, now = g_get_real_time() / G_USEC_PER_SEC;

	pk_daemon_close(f->daemon);
	f->daemon = NULL;
	g_setenv("PRINTKBOT_CACHE", cache, TRUE);
	assert_int_equal(pk_lab_open(&lab, &err), 0);
	{
		g_autofree char *makefile = g_build_filename(lab.tree, "Makefile", NULL);
		g_autofree char *stamp = pk_lab_ready_stamp(&lab);
		g_autofree char *guest = g_path_get_dirname(lab.initrd);
		g_autofree char *builds = g_path_get_dirname(stamp);

		g_autofree char *lock = g_build_filename(lab.cache, "lock", NULL);
		const char *init[] = { "git", "-C", lab.tree, "init", "-q", NULL };
		const char *add[] = { "git", "-C", lab.tree, "add", "Makefile", NULL };
		const char *commit[] = { "git", "-C", lab.tree, "-c", "user.name=Jane Dev", "-c",
					 "user.email=jane@example.org", "commit", "-q", "-m", "base", NULL };
		const char *tag[] = { "git", "-C", lab.tree, "tag", PK_LAB_BASE_TAG, NULL };

		assert_int_equal(g_mkdir_with_parents(lab.tree, 0755), 0);
		assert_int_equal(g_mkdir_with_parents(guest, 0755), 0);
		assert_int_equal(g_mkdir_with_parents(builds, 0755), 0);
		assert_true(g_file_set_contents(makefile, "VERSION = 6\nPATCHLEVEL = 12\n", -1, NULL));
		assert_true(g_file_set_contents(stamp, lab.config_hash, -1, NULL));
		assert_true(g_file_set_contents(lab.initrd, "", 0, NULL));
		assert_int_equal(pk_proc_step("git init", init, NULL, NULL, NULL), 0);
		assert_int_equal(pk_proc_step("git add", add, NULL, NULL, NULL), 0);
		assert_int_equal(pk_proc_step("git commit", commit, NULL, NULL, NULL), 0);
		assert_int_equal(pk_proc_step("git tag", tag, NULL, NULL, NULL), 0);
		assert_int_equal(g_mkdir_with_parents(lock, 0755), 0);
	}
	assert_int_equal(pk_lab_check(&lab, NULL), 0);
	pk_lab_clear(&lab);
	job_id = queue_series(f);
	if (pk_daemon_run(&opts, &err) < 0)
		fail_msg("worker: %s", err->message);
	g_unsetenv("PRINTKBOT_CACHE");
	job = job_now(f, job_id);
	print_message("%s: %s\n", pk_job_state_name(job->state), job->detail);
	assert_int_equal(job->state, PK_JOB_QUEUED);
	assert_int_equal(job->attempts, 1);
	assert_non_null(strstr(job->detail, "the worker failed, not the series: next try in"));
	assert_true(job->not_before > now);
}

/*
 * A job that outlives its lease (an SMTP server that greets after 5 s, a
 * lease of 3 s): the worker's heartbeat renews it, so it is never taken
 * back while the worker lives, and the reply goes out once, in one attempt.
 */
static void test_lease_renewed(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *conf = g_build_filename(f->dir, "slow.conf", NULL);
	g_autofree char *text = NULL;
	g_autoptr(GString) heard = g_string_new(NULL);
	g_autoptr(pk_store_job) job = NULL;
	gint64 job_id = queue_reply(f), deadline;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c, status = 0;
	pid_t kid;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	text = g_strdup_printf("[store]\npath = %s\n[daemon]\noutbox = %s/outbox\nlease = 3\n"
			       "from = printkbot <bot@example.org>\n[smtp]\nurl = smtp://127.0.0.1:%d\n",
			       db, f->dir, ntohs(a.sin_port));
	assert_true(g_file_set_contents(conf, text, -1, NULL));
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		struct pk_daemon_opts opts = { .config_path = conf, .worker = true, .once = true };

		close(fd);
		_exit(pk_daemon_run(&opts, NULL) < 0 ? 1 : 0);
	}
	c = accept(fd, NULL, NULL);
	assert_true(c >= 0);
	/* the worker waits for the greeting past its first lease: still its job, renewed */
	deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	while (g_get_monotonic_time() < deadline)
		g_usleep(100000);
	{
		g_autoptr(pk_store) store = NULL;
		g_autoptr(GArray) ids = NULL;

		assert_int_equal(pk_store_open(&store, db, NULL), 0);
		assert_int_equal(pk_store_jobs_requeue_expired(store, &ids, NULL), 0);
		assert_int_equal(ids->len, 0);
	}
	job = job_now(f, job_id);
	print_message("job %" G_GINT64_FORMAT ": %s, held by %s until %+" G_GINT64_FORMAT " s\n", job->id,
		      pk_job_state_name(job->state), job->worker,
		      job->lease_until - g_get_real_time() / G_USEC_PER_SEC);
	assert_int_equal(job->state, PK_JOB_RUNNING);
	g_clear_pointer(&job, pk_store_job_free);
	assert_int_equal(smtp_session(c, heard), 1);
	assert_int_equal(waitpid(kid, &status, 0), kid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd);
	job = job_now(f, job_id);
	assert_int_equal(job->state, PK_JOB_DONE);
	assert_int_equal(job->attempts, 1);
}

/* ---- figures for monitoring ([daemon] metrics_dir) ----------------------- */

/* The value of the sample series (its name and labels as written) in text, or NULL; caller frees. */
static char *sample(const char *text, const char *series)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	size_t n = strlen(series);

	for (char **l = lines; *l; l++)
		if (!strncmp(*l, series, n) && (*l)[n] == ' ')
			return g_strdup(*l + n + 1);
	return NULL;
}

/* The file at path, which must be there. */
static char *read_text(const char *path)
{
	char *text = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		fail_msg("%s: not written", path);
	return text;
}

/* Whether path exists (want) or not, waiting up to seconds for it. */
static bool file_becomes(const char *path, bool want, double seconds)
{
	gint64 until = g_get_monotonic_time() + (gint64)(seconds * G_USEC_PER_SEC);

	do {
		if (g_file_test(path, G_FILE_TEST_EXISTS) == want)
			return true;
		g_usleep(50000);
	} while (g_get_monotonic_time() < until);
	return false;
}

/*
 * The intake's file, beside the config when metrics_dir is relative: the
 * store's queue (every kind and state, zeros too), the histograms, and
 * the source's last read as the store has it, under a name that needs
 * escaping; no worker's figures in a queue-only daemon's.
 */
static void test_metrics_intake(void **state)
{
	struct fixture *f = *state;
	struct pk_daemon_opts once = { .config_path = f->config, .once = true, .queue_only = true };
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *maildir = g_build_filename(f->dir, "maildir", NULL);
	g_autofree char *path = g_build_filename(f->dir, "metrics", "printkbot-daemon.prom", NULL);
	g_autofree char *metrics = g_build_filename(f->dir, "metrics", NULL);
	g_autofree char *conf = g_strdup_printf("[store]\npath = %s\n[daemon]\noutbox = %s/outbox\n"
						"from = printkbot <bot@example.org>\nseries_wait = 0\n"
						"metrics_dir = metrics\n[source l\\i\"st]\ntype = maildir\n"
						"start = all\npath = %s\n", db, f->dir, maildir);
	g_autofree char *text = NULL, *queued = NULL, *read = NULL, *want = NULL, *zero = NULL;
	g_autoptr(pk_store) store = NULL;
	g_autoptr(GPtrArray) sources = NULL;
	g_autoptr(GError) err = NULL;

	pk_daemon_close(f->daemon);
	f->daemon = NULL;
	assert_true(g_file_set_contents(f->config, conf, -1, NULL));
	assert_int_equal(g_mkdir(metrics, 0755), 0);
	deliver_mail(maildir, "one", "[PATCH] x: y",
		     "diff --git a/kernel/x.c b/kernel/x.c\n--- a/kernel/x.c\n+++ b/kernel/x.c\n"
		     "@@ -1,3 +1,3 @@\n a\n-\tpr_info(\"old\\n\");\n+\tpr_info(\"new\\n\");\n b\n");
	if (pk_daemon_run(&once, &err) < 0)
		fail_msg("run: %s", err->message);
	text = read_text(path);
	queued = sample(text, "printkbot_jobs{kind=\"series\",state=\"queued\"}");
	zero = sample(text, "printkbot_jobs{kind=\"reply\",state=\"failed\"}");
	assert_string_equal(queued, "1");
	assert_string_equal(zero, "0");
	assert_non_null(strstr(text, "# TYPE printkbot_mail_to_reply_seconds histogram\n"));
	assert_non_null(strstr(text, "printkbot_mail_to_review_seconds_count 0\n"));
	assert_non_null(strstr(text, "printkbot_source_mails_total{source=\"l\\\\i\\\"st\",type=\"maildir\"} 1\n"));
	assert_int_equal(pk_store_open(&store, db, &err), 0);
	assert_int_equal(pk_store_sources(store, &sources, &err), 0);
	for (guint i = 0; i < sources->len; i++) {
		const struct pk_store_source *src = sources->pdata[i];

		if (!strcmp(src->name, "l\\i\"st"))
			want = g_strdup_printf("%" G_GINT64_FORMAT, src->last_read);
	}
	assert_non_null(want);
	read = sample(text, "printkbot_source_last_read_timestamp_seconds{source=\"l\\\\i\\\"st\","
			    "type=\"maildir\"}");
	assert_non_null(read);
	assert_string_equal(read, want);
	assert_true(g_ascii_strtoll(read, NULL, 10) > 1700000000);
	assert_null(strstr(text, "printkbot_worker"));
}

/*
 * A worker's file is its own (printkbot-worker-PID.prom: its jobs, idle),
 * without the store's figures; the file of a worker of this machine that
 * is gone is removed when a worker starts, a live one's is not.
 */
static void test_metrics_worker(void **state)
{
	struct fixture *f = *state;
	struct pk_daemon_opts opts = { .config_path = f->config, .worker = true, .once = true };
	g_autofree char *metrics = g_build_filename(f->dir, "metrics", NULL);
	g_autofree char *conf = g_strdup_printf("[store]\npath = %s/daemon.db\n[daemon]\noutbox = %s/outbox\n"
						"from = printkbot <bot@example.org>\nmetrics_dir = %s\n",
						f->dir, f->dir, metrics);
	g_autofree char *mine = g_strdup_printf("%s/printkbot-worker-%d.prom", metrics, (int)getpid());
	g_autofree char *live = g_strdup_printf("%s/printkbot-worker-%d.prom", metrics, (int)getppid());
	g_autofree char *gone = NULL, *text = NULL, *busy = NULL, *series = NULL, *done = NULL;
	g_autoptr(GError) err = NULL;
	int status;
	pid_t kid;

	pk_daemon_close(f->daemon);
	f->daemon = NULL;
	assert_true(g_file_set_contents(f->config, conf, -1, NULL));
	assert_int_equal(g_mkdir(metrics, 0755), 0);
	/* a process that was and is no more: its pid is free */
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0)
		_exit(0);
	assert_int_equal(waitpid(kid, &status, 0), kid);
	gone = g_strdup_printf("%s/printkbot-worker-%d.prom", metrics, (int)kid);
	assert_true(g_file_set_contents(gone, "x 1\n", -1, NULL));
	assert_true(g_file_set_contents(live, "x 1\n", -1, NULL));
	if (pk_daemon_run(&opts, &err) < 0)
		fail_msg("worker: %s", err->message);
	assert_false(g_file_test(gone, G_FILE_TEST_EXISTS));
	assert_true(g_file_test(live, G_FILE_TEST_EXISTS));
	text = read_text(mine);
	series = g_strdup_printf("printkbot_worker_busy{worker=\"%s:%d\"}", g_get_host_name(), (int)getpid());
	busy = sample(text, series);
	assert_string_equal(busy, "0");
	g_free(series);
	series = g_strdup_printf("printkbot_worker_jobs_total{worker=\"%s:%d\",kind=\"series\",end=\"done\"}",
				 g_get_host_name(), (int)getpid());
	done = sample(text, series);
	assert_string_equal(done, "0");
	assert_null(strstr(text, "printkbot_jobs"));
	assert_null(strstr(text, "printkbot_source"));
}

/*
 * A running daemon writes its file again every metrics_interval while it
 * waits; SIGHUP with another metrics_dir moves the file there (the old
 * one goes); a daemon stopped by a signal leaves no file.
 */
static void test_metrics_reload_and_stop(void **state)
{
	struct fixture *f = *state;
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *maildir = g_build_filename(f->dir, "maildir", NULL);
	g_autofree char *one = g_build_filename(f->dir, "m1", NULL);
	g_autofree char *two = g_build_filename(f->dir, "m2", NULL);
	g_autofree char *in_one = g_build_filename(one, "printkbot-daemon.prom", NULL);
	g_autofree char *in_two = g_build_filename(two, "printkbot-daemon.prom", NULL);
	const char *fmt = "[store]\npath = %s\n[daemon]\noutbox = %s/outbox\nfrom = printkbot <bot@example.org>\n"
			  "metrics_dir = %s\nmetrics_interval = 1\n[source list]\ntype = maildir\n"
			  "start = all\npath = %s\n";
	g_autofree char *conf1 = g_strdup_printf(fmt, db, f->dir, one, maildir);
	g_autofree char *conf2 = g_strdup_printf(fmt, db, f->dir, two, maildir);
	struct stat first, later;
	bool rewritten = false, moved, removed;
	gint64 until;
	int status = 0;
	pid_t pid;

	pk_daemon_close(f->daemon);
	f->daemon = NULL;
	assert_int_equal(g_mkdir(one, 0755), 0);
	assert_int_equal(g_mkdir(two, 0755), 0);
	assert_true(g_file_set_contents(f->config, conf1, -1, NULL));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_daemon_opts opts = { .config_path = f->config, .queue_only = true };
		_exit(pk_daemon_run(&opts, NULL) < 0 ? 1 : 0);
	}
	assert_true(file_becomes(in_one, true, 20));
	assert_int_equal(stat(in_one, &first), 0);
	/* nothing happens, yet the file is replaced (a new inode) within a few seconds */
	until = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	while (!rewritten && g_get_monotonic_time() < until) {
		g_usleep(100000);
		rewritten = stat(in_one, &later) == 0 && later.st_ino != first.st_ino;
	}
	assert_true(g_file_set_contents(f->config, conf2, -1, NULL));
	assert_int_equal(kill(pid, SIGHUP), 0);
	moved = file_becomes(in_two, true, 10) && file_becomes(in_one, false, 5);
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	removed = !g_file_test(in_two, G_FILE_TEST_EXISTS);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(rewritten);
	assert_true(moved);
	assert_true(removed);
}

/*
 * During a job the loop is held (a build, a boot, here an SMTP server
 * that greets after 3 s): the heartbeat thread writes the worker's file,
 * busy, every metrics_interval; once done, the job is counted.
 */
static void test_metrics_during_job(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *conf = g_build_filename(f->dir, "slow.conf", NULL);
	g_autofree char *metrics = g_build_filename(f->dir, "metrics", NULL);
	g_autofree char *text = NULL, *path = NULL, *busy_series = NULL, *done_series = NULL;
	g_autofree char *busy = NULL, *done = NULL, *after = NULL;
	g_autoptr(GString) heard = g_string_new(NULL);
	gint64 deadline;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c, status = 0, inodes = 0;
	ino_t last = 0;
	pid_t kid;

	queue_reply(f);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	assert_int_equal(g_mkdir(metrics, 0755), 0);
	text = g_strdup_printf("[store]\npath = %s\n[daemon]\noutbox = %s/outbox\nmetrics_dir = %s\n"
			       "metrics_interval = 1\nfrom = printkbot <bot@example.org>\n"
			       "[smtp]\nurl = smtp://127.0.0.1:%d\n", db, f->dir, metrics, ntohs(a.sin_port));
	assert_true(g_file_set_contents(conf, text, -1, NULL));
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		struct pk_daemon_opts opts = { .config_path = conf, .worker = true, .once = true };

		close(fd);
		_exit(pk_daemon_run(&opts, NULL) < 0 ? 1 : 0);
	}
	path = g_strdup_printf("%s/printkbot-worker-%d.prom", metrics, (int)kid);
	busy_series = g_strdup_printf("printkbot_worker_busy{worker=\"%s:%d\"}", g_get_host_name(), (int)kid);
	done_series = g_strdup_printf("printkbot_worker_jobs_total{worker=\"%s:%d\",kind=\"reply\","
				      "end=\"done\"}", g_get_host_name(), (int)kid);
	c = accept(fd, NULL, NULL);
	assert_true(c >= 0);
	/* the worker waits for the greeting: its file says busy, and is written again meanwhile */
	deadline = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
	while (g_get_monotonic_time() < deadline) {
		g_autofree char *now = NULL, *b = NULL;
		struct stat st;

		g_usleep(100000);
		if (stat(path, &st) < 0 || !g_file_get_contents(path, &now, NULL, NULL))
			continue;
		if (st.st_ino != last && (b = sample(now, busy_series)) && !strcmp(b, "1"))
			inodes++;
		last = st.st_ino;
		if (!busy)
			busy = sample(now, busy_series);
	}
	assert_int_equal(smtp_session(c, heard), 1);
	assert_int_equal(waitpid(kid, &status, 0), kid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd);
	after = read_text(path);
	done = sample(after, done_series);
	print_message("written %d times, busy, while the job ran\n", inodes);
	assert_string_equal(busy, "1");
	assert_true(inodes >= 2);
	assert_string_equal(done, "1");
	g_free(busy);
	busy = sample(after, busy_series);
	assert_string_equal(busy, "0");
	assert_non_null(strstr(after, "printkbot_worker_last_job_end_timestamp_seconds{"));
	unlink(path);
}

/*
 * The fake SMTP server's side of a mail up to its last line: greeted,
 * every command answered, the mail read to its final dot, which is
 * never answered (a server stuck in its end-of-data checks).  1 when
 * the dot came.
 */
static int smtp_until_dot(int c)
{
	g_autoptr(GIOChannel) io = g_io_channel_unix_new(c);
	bool data = false;
	char *line = NULL;

	g_io_channel_set_encoding(io, NULL, NULL);
#define SAY(text) do { if (write(c, text, strlen(text)) < 0) return 0; } while (0)
	SAY("220 fake\r\n");
	while (g_io_channel_read_line(io, &line, NULL, NULL, NULL) == G_IO_STATUS_NORMAL) {
		g_autofree char *l = line;

		if (data && !strcmp(l, ".\r\n"))
			return 1;
		if (data)
			continue;
		if (!g_ascii_strncasecmp(l, "DATA", 4)) {
			data = true;
			SAY("354 go on\r\n");
		} else {
			SAY("250 fake\r\n");
		}
	}
#undef SAY
	return 0;
}

/* Where the fake server of stop_during_send() is when the daemon gets SIGTERM. */
enum stall {
	STALL_GREETING,     /* it took the connection and never greets */
	STALL_AFTER_DOT,    /* it has the whole mail and never answers its final dot */
	ANSWER_AFTER_STOP,  /* it answers the dot 250, a second after the SIGTERM */
};

/*
 * SIGTERM while the SMTP server says nothing, the timeout a minute: the
 * daemon stops within a few seconds.  Stalled, the reply is not
 * recorded as sent, still waits in the outbox's new/, and its job is
 * queued again for the next start (after the dot the server may yet
 * deliver it: sending it again is SMTP's own ambiguity, as after a
 * crash).  A server that answers the dot within the stop's grace has
 * taken the mail: recorded as sent, never sent again.
 */
static void stop_during_send(struct fixture *f, enum stall stall)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	g_autofree char *db = g_build_filename(f->dir, "daemon.db", NULL);
	g_autofree char *outbox = g_build_filename(f->dir, "outbox", NULL);
	g_autofree char *conf = g_build_filename(f->dir, "stall.conf", NULL);
	g_autofree char *text = NULL;
	g_autoptr(pk_store_job) job = NULL;
	g_autoptr(pk_outbox) ob = NULL;
	g_autoptr(pk_store) store = NULL;
	struct pk_store_reply *r = NULL;
	gint64 job_id = queue_reply(f), asked, took;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c, status = 0;
	pid_t kid, gone = 0;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	text = g_strdup_printf("[store]\npath = %s\n[daemon]\noutbox = %s\nfrom = printkbot <bot@example.org>\n"
			       "[smtp]\nurl = smtp://127.0.0.1:%d\ntimeout = 60\n", db, outbox, ntohs(a.sin_port));
	assert_true(g_file_set_contents(conf, text, -1, NULL));
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		struct pk_daemon_opts opts = { .config_path = conf, .worker = true, .once = true };

		close(fd);
		_exit(pk_daemon_run(&opts, NULL) < 0 ? 1 : 0);
	}
	c = accept(fd, NULL, NULL);
	assert_true(c >= 0);
	if (stall != STALL_GREETING)
		assert_int_equal(smtp_until_dot(c), 1);
	g_usleep(G_USEC_PER_SEC / 2);
	assert_int_equal(kill(kid, SIGTERM), 0);
	asked = g_get_monotonic_time();
	if (stall == ANSWER_AFTER_STOP) {
		g_usleep(G_USEC_PER_SEC);
		assert_int_equal(write(c, "250 taken\r\n", 11), 11);
	}
	while (!gone && g_get_monotonic_time() - asked < 30 * G_USEC_PER_SEC) {
		gone = waitpid(kid, &status, WNOHANG);
		if (!gone)
			g_usleep(20000);
	}
	took = g_get_monotonic_time() - asked;
	if (!gone) {
		kill(kid, SIGKILL);
		waitpid(kid, &status, 0);
	}
	close(c);
	close(fd);
	print_message("stopped %.1f s after SIGTERM\n", took / 1e6);
	assert_int_equal(gone, kid);
	assert_true(took < 10 * G_USEC_PER_SEC);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	job = job_now(f, job_id);
	print_message("job %" G_GINT64_FORMAT ": %s, %s\n", job->id, pk_job_state_name(job->state), job->detail);
	assert_int_equal(job->state, stall == ANSWER_AFTER_STOP ? PK_JOB_DONE : PK_JOB_QUEUED);
	assert_int_equal(job->not_before, 0);
	assert_int_equal(pk_store_open(&store, db, NULL), 0);
	assert_int_equal(pk_store_reply_by_message_id(store, "printkbot-full@example.org", &r, NULL), 1);
	assert_int_equal(r->sent != 0, stall == ANSWER_AFTER_STOP);
	pk_store_reply_free(r);
	assert_int_equal(pk_outbox_open(&ob, outbox, false, NULL), 0);
	assert_int_equal(pk_outbox_state(ob, "printkbot-full@example.org"),
			 stall == ANSWER_AFTER_STOP ? PK_OUTBOX_SENT : PK_OUTBOX_WAITING);
}

static void test_stop_during_send(void **state)
{
	stop_during_send(*state, STALL_GREETING);
}

static void test_stop_after_dot(void **state)
{
	stop_during_send(*state, STALL_AFTER_DOT);
}

static void test_stop_after_dot_answered(void **state)
{
	stop_during_send(*state, ANSWER_AFTER_STOP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reload_source_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_bad_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rules_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_series_cancels_older, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pr_fmt_only_is_churn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_from_localhost_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_mail_mb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_over_limits_not_scanned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reused_message_id_logged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_syntax_error_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_store_needs_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_reads_new_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_daemon_through_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_outbox_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_reply_leaves_new, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_recipient_not_sent_to, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_roles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workers_send_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_renewed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_without_lab, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_error_requeues, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_intake, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_worker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_reload_and_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_during_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_during_send, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_after_dot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_after_dot_answered, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
