/*
 * test-watch.c - watched branches, through the daemon itself (run once a
 * step, as cron would) on a lab whose tree is a small git repository
 * and a [tree] that is another one.  Only commits without logging churn
 * are pushed, so nothing is built: what is checked is the watch and the
 * push job around the test.  A branch seen for the first time starts
 * there; a push is one job, its commits along first parents oldest
 * first, a merge listed and not tested; each tested commit is stored and
 * its author mailed (reply = always), To the author, Cc the committer
 * and the list; a force-push that rewords one commit and changes another
 * tests only the changed one (the reworded has the same patch-id on the
 * same parent tree), and mails only about it; a push over max_commits is
 * cut to its newest, with a note; commits of a queued push that left the
 * branch are skipped; a push job left running by a worker that died is
 * taken over, and what it stored is not done again; a deleted branch is
 * dropped, and seen again starts anew.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "lab/lab.h"
#include "report/outbox.h"
#include "report/pushes.h"
#include "store/store.h"
#include "store/queue.h"
#include "base/proc.h"
#include "daemon-lab-fixture.h"

struct fixture {
	struct daemon_lab d;
};

/* A commit on upstream's checked-out branch adding file with text; its id (caller frees). */
static char *commit_file(struct fixture *f, const char *file, const char *text, const char *subject)
{
	g_autofree char *path = g_build_filename(f->d.upstream, file, NULL);

	assert_true(g_file_set_contents(path, text, -1, NULL));
	GIT(f->d.upstream, "add", file);
	GIT(f->d.upstream, "commit", "-q", "-m", subject);
	return git(f->d.upstream, (const char *[]){ "rev-parse", "HEAD", NULL });
}

static void write_config_policy(struct fixture *f, unsigned max_commits, const char *policy)
{
	g_autofree char *text = g_strdup_printf(
		"[policy]\n%s\n"
		"[store]\npath = %s/watch.db\n"
		"[daemon]\noutbox = %s/outbox\nfrom = printkbot <bot@example.org>\nreply_on = never\n"
		"retry_min = 3600\n"
		"[smtp]\nurl = smtp://127.0.0.1:9\n"
		"[tree lab]\npath = %s\nwatch = main\nlist = lab@example.org\nreply = always\n"
		"max_commits = %u\n", policy, f->d.dir, f->d.dir, f->d.upstream, max_commits);

	assert_true(g_file_set_contents(f->d.config, text, -1, NULL));
}

static void write_config(struct fixture *f, unsigned max_commits)
{
	write_config_policy(f, max_commits, "");
}

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);

	daemon_lab_init(&f->d, "pk-watch", "PK_TEST_WATCH", "int main(void) { return 0; }\n");
	write_config(f, 4);
	*state = f;
	return 0;
}

/* PK_TEST_WATCH_LOG=1 shows the daemon's log of each run, PK_TEST_WATCH_KEEP=1 keeps the dir */
static int teardown(void **state)
{
	struct fixture *f = *state;

	daemon_lab_clear(&f->d);
	g_free(f);
	return 0;
}

/* The daemon once: fetch, compare, run what is due.  Its log (caller frees). */
static char *run_once(struct fixture *f)
{
	return daemon_lab_run_once(&f->d, false);
}

static struct pk_store *store_of(struct fixture *f)
{
	return daemon_lab_store(&f->d, "watch.db");
}

/* The newest push and its commits. */
static struct pk_store_push *newest_push(struct pk_store *s, GPtrArray **out_commits)
{
	g_autoptr(GPtrArray) pushes = NULL;
	struct pk_store_push *p = NULL;

	assert_int_equal(pk_store_pushes(s, "lab/main", 1, &pushes, NULL), 0);
	assert_int_equal(pushes->len, 1);
	assert_int_equal(pk_store_push_get(s, ((struct pk_store_push *)pushes->pdata[0])->id, &p, out_commits,
					   NULL), 1);
	return p;
}

static struct pk_store_push_commit *nth(GPtrArray *commits, guint i)
{
	assert_true(i < commits->len);
	return commits->pdata[i];
}

/* The files in the outbox's new/ (the mails rendered and not sent: SMTP is down). */
static unsigned outbox_mails(struct fixture *f)
{
	g_autofree char *dir = g_build_filename(f->d.dir, "outbox", "new", NULL);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	unsigned n = 0;

	while (d && g_dir_read_name(d))
		n++;
	return n;
}

static void test_watch(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL, *tip = NULL, *a = NULL, *b = NULL, *a2 = NULL, *b2 = NULL, *side = NULL;
	g_autoptr(pk_store) s = NULL;
	g_autoptr(pk_store_push) p = NULL;
	g_autoptr(GPtrArray) commits = NULL;
	gint64 source = 0, count = 0;

	/* 1. first sight: the tip noted, nothing tested */
	log = run_once(f);
	assert_non_null(strstr(log, "tree lab: branch main seen for the first time"));
	s = store_of(f);
	assert_int_equal(pk_store_count(s, "pushes", &count, NULL), 0);
	assert_int_equal(count, 0);
	pk_store_close(g_steal_pointer(&s));

	/* 2. a push: A, a merge of a side branch, B; first parents only, the merge not tested */
	a = commit_file(f, "a.c", "int a;\n", "a: add a");
	GIT(f->d.upstream, "checkout", "-q", "-b", "side", "HEAD~1");
	side = commit_file(f, "s.c", "int s;\n", "s: on the side");
	GIT(f->d.upstream, "checkout", "-q", "main");
	GIT(f->d.upstream, "merge", "-q", "--no-ff", "-m", "Merge side", "side");
	b = commit_file(f, "b.c", "int b;\n", "b: add b");
	g_clear_pointer(&log, g_free);
	log = run_once(f);
	assert_non_null(strstr(log, "3 new commits along first parents (1 merge), queued"));
	s = store_of(f);
	p = newest_push(s, &commits);
	assert_false(p->forced);
	assert_int_equal(p->commits, 3);
	assert_string_equal(p->job_state, "done");
	assert_string_equal(nth(commits, 0)->commit_id, a);
	assert_string_equal(nth(commits, 0)->state, "tested");
	assert_string_equal(nth(commits, 0)->verdict, "no-churn");
	assert_string_equal(nth(commits, 0)->author, "Jane Dev <jane@example.org>");
	assert_string_equal(nth(commits, 0)->committer, "Max Maint <max@example.org>");
	assert_non_null(nth(commits, 0)->mail_message_id);
	assert_string_equal(nth(commits, 1)->state, "merge");
	assert_string_equal(nth(commits, 2)->commit_id, b);
	assert_string_equal(nth(commits, 2)->state, "tested");
	assert_true(nth(commits, 0)->review_id > 0);
	assert_int_equal(outbox_mails(f), 2);
	assert_null(strstr(log, side));
	{
		/* the mail: To the author, Cc the committer and the list */
		struct pk_store_reply *r = NULL;

		assert_int_equal(pk_store_reply_by_message_id(s, nth(commits, 0)->mail_message_id, &r, NULL), 1);
		assert_string_equal(r->recipients, "jane@example.org\nmax@example.org\nlab@example.org");
		assert_non_null(strstr(r->text, "Subject: [lab:main 1/3] a: add a: no-churn"));
		assert_int_equal(r->mail_id, 0);
		pk_store_reply_free(r);
	}
	/* stored like any tested commit: history and report find it by commit */
	{
		struct pk_history_filter hf = { .commit = a };
		g_autoptr(GPtrArray) rows = NULL;
		g_autofree char *prefix = g_strndup(a, 12);
		g_autoptr(GError) err = NULL;
		gint64 review = 0;

		assert_int_equal(pk_store_history(s, &rows, &hf, NULL), 0);
		assert_int_equal(pk_store_review_of_commit(s, prefix, &review, NULL), 1);
		assert_int_equal(review, nth(commits, 0)->review_id);
		assert_int_equal(pk_store_review_of_commit(s, "0000000000ff", &review, NULL), 0);
		assert_int_equal(pk_store_review_of_commit(s, "xyz", &review, &err), -1);
		assert_non_null(strstr(err->message, "is not a commit id"));
	}
	assert_int_equal(pk_store_source_state_get(s, p->source_id, "tip", &tip, NULL), 1);
	assert_string_equal(tip, b);
	source = p->source_id;
	g_clear_pointer(&p, pk_store_push_free);
	g_clear_pointer(&commits, g_ptr_array_unref);
	pk_store_close(g_steal_pointer(&s));

	/* 3. a force-push: A reworded (same patch, same parent tree), B replaced by another change */
	GIT(f->d.upstream, "reset", "-q", "--hard", "HEAD~3");
	GIT(f->d.upstream, "cherry-pick", a);
	GIT(f->d.upstream, "commit", "-q", "--amend", "-m", "a: add a, reworded");
	a2 = git(f->d.upstream, (const char *[]){ "rev-parse", "HEAD", NULL });
	b2 = commit_file(f, "b.c", "int b2;\n", "b: add b, another way");
	g_clear_pointer(&log, g_free);
	log = run_once(f);
	assert_non_null(strstr(log, "(forced): 2 new commits"));
	assert_non_null(strstr(log, "not tested again, no mail"));
	s = store_of(f);
	p = newest_push(s, &commits);
	assert_true(p->forced);
	assert_string_equal(nth(commits, 0)->commit_id, a2);
	assert_string_equal(nth(commits, 0)->state, "tested-before");
	assert_string_equal(nth(commits, 0)->verdict, "no-churn");
	assert_null(nth(commits, 0)->mail_message_id);
	assert_string_equal(nth(commits, 1)->commit_id, b2);
	assert_string_equal(nth(commits, 1)->state, "tested");
	assert_int_equal(outbox_mails(f), 3);
	{
		/* as history --pushes and report --push show it */
		g_autofree char *text = pk_push_text(p, commits);
		g_autoptr(JsonNode) json = pk_push_json(p, commits);
		JsonArray *listed = json_object_get_array_member(json_node_get_object(json), "commits");

		assert_non_null(strstr(text, ", lab/main, "));
		assert_non_null(strstr(text, ", forced, job "));
		assert_non_null(strstr(text, "  tested-before  no-churn "));
		assert_non_null(strstr(text, "(the same patch-id on the same parent tree as "));
		assert_non_null(strstr(text, "  waiting  b: add b, another way\n"));
		assert_int_equal(json_array_get_length(listed), 2);
		assert_string_equal(json_object_get_string_member(json_array_get_object_element(listed, 0), "state"),
				    "tested-before");
	}
	g_clear_pointer(&p, pk_store_push_free);
	g_clear_pointer(&commits, g_ptr_array_unref);
	pk_store_close(g_steal_pointer(&s));

	/* 4. six commits, max_commits = 4: the newest four tested, two left out with a note */
	for (int i = 1; i <= 6; i++) {
		g_autofree char *file = g_strdup_printf("c%d.c", i);
		g_autofree char *subject = g_strdup_printf("c: number %d", i);

		g_free(commit_file(f, file, "int c;\n", subject));
	}
	g_clear_pointer(&log, g_free);
	log = run_once(f);
	assert_non_null(strstr(log, "2 older commits"));
	assert_non_null(strstr(log, "left out: the push brought 6 along first parents, more than max_commits = 4"));
	s = store_of(f);
	p = newest_push(s, &commits);
	assert_int_equal(p->left_out, 2);
	assert_int_equal(p->commits, 4);
	assert_non_null(strstr(p->note, "2 older commits"));
	assert_string_equal(nth(commits, 0)->subject, "c: number 3");
	g_clear_pointer(&p, pk_store_push_free);
	g_clear_pointer(&commits, g_ptr_array_unref);

	/* 5. a push queued before a force-push took its commits off the branch: skipped */
	{
		struct pk_store_push_commit gone = { .commit_id = side, .parent = a, .subject = "s: on the side",
						     .author = "Jane Dev <jane@example.org>" };
		struct pk_store_push queued = { .source_id = source, .tree = "lab", .branch = "main",
						.old_tip = a, .new_tip = side };
		g_autoptr(GPtrArray) one = g_ptr_array_new();
		g_autofree char *payload = NULL;
		gint64 id, job;

		g_ptr_array_add(one, &gone);
		assert_int_equal(pk_store_push_add(s, &id, &queued, one, NULL), 0);
		payload = g_strdup_printf("{\"push\":%" G_GINT64_FORMAT "}", id);
		assert_int_equal(pk_store_job_add(s, &job, PK_JOB_PUSH, payload, NULL), 0);
		assert_int_equal(pk_store_push_set_job(s, id, job, NULL), 0);
	}
	pk_store_close(g_steal_pointer(&s));
	g_clear_pointer(&log, g_free);
	log = run_once(f);
	assert_non_null(strstr(log, "left the branch (a force-push) before it was tested"));
	s = store_of(f);
	p = newest_push(s, &commits);
	assert_string_equal(nth(commits, 0)->state, "skipped");
	g_clear_pointer(&p, pk_store_push_free);
	g_clear_pointer(&commits, g_ptr_array_unref);
	pk_store_close(g_steal_pointer(&s));

	/* 6. a worker killed in the middle of a push's job: taken over, its stored commit not again */
	{
		g_autofree char *d1 = commit_file(f, "d1.c", "int d1;\n", "d: one");
		g_autofree char *d2 = commit_file(f, "d2.c", "int d2;\n", "d: two");
		g_autoptr(pk_store_job) job = NULL;
		struct pk_store_worker gone = { "host:1", NULL, 0, 60 };
		g_autofree char *boot = NULL, *ns = g_file_read_link("/proc/self/ns/pid", NULL);
		g_autofree char *machine = NULL;
		struct pk_store_push_commit done = { 0 };
		pid_t child = fork();

		/* a worker of this machine whose process is gone: a child that exited */
		if (child == 0)
			_exit(0);
		assert_true(child > 0 && waitpid(child, NULL, 0) == child);
		assert_true(g_file_get_contents("/proc/sys/kernel/random/boot_id", &boot, NULL, NULL));
		machine = g_strdup_printf("%s/%s", g_strstrip(boot), ns ? ns : "pid");
		gone.machine = machine;
		gone.pid = child;
		g_clear_pointer(&log, g_free);
		s = store_of(f);
		{
			/* what the watch would store for it, by hand: the job held by the dead worker */
			struct pk_store_push_commit one = { .commit_id = d1, .subject = "d: one",
							    .author = "Jane Dev <jane@example.org>" };
			struct pk_store_push_commit two = { .commit_id = d2, .subject = "d: two",
							    .author = "Jane Dev <jane@example.org>" };
			g_autofree char *old = NULL;
			g_autoptr(GPtrArray) both = g_ptr_array_new();
			g_autofree char *payload = NULL;
			struct pk_store_push queued = { .source_id = source, .tree = "lab", .branch = "main",
							.new_tip = d2 };
			gint64 id, jid;

			assert_int_equal(pk_store_source_state_get(s, source, "tip", &old, NULL), 1);
			queued.old_tip = old;
			g_ptr_array_add(both, &one);
			g_ptr_array_add(both, &two);
			assert_int_equal(pk_store_source_state_swap(s, source, "tip", old, d2, NULL), 1);
			assert_int_equal(pk_store_push_add(s, &id, &queued, both, NULL), 0);
			payload = g_strdup_printf("{\"push\":%" G_GINT64_FORMAT "}", id);
			assert_int_equal(pk_store_job_add(s, &jid, PK_JOB_PUSH, payload, NULL), 0);
			assert_int_equal(pk_store_push_set_job(s, id, jid, NULL), 0);
			assert_int_equal(pk_store_job_claim(s, &gone, PK_JOB_PUSH, 0, &job, NULL, NULL), 1);
			assert_int_equal(job->id, jid);
		}
		p = newest_push(s, &commits);
		done.id = nth(commits, 0)->id;
		done.state = "tested";
		done.verdict = "no-churn";
		done.patch_key = "stored before the kill";
		assert_int_equal(pk_store_push_commit_set(s, &done, NULL), 0);
		g_clear_pointer(&p, pk_store_push_free);
		g_clear_pointer(&commits, g_ptr_array_unref);
		pk_store_close(g_steal_pointer(&s));
		log = run_once(f);
		assert_non_null(strstr(log, "was running when the daemon stopped: queued again"));
		assert_null(strstr(log, "testing 1/2"));
		assert_non_null(strstr(log, "testing 2/2"));
		assert_non_null(strstr(log, "2 commits: no-churn, 1 stored by an earlier run; 0 tested before"));
		s = store_of(f);
		p = newest_push(s, &commits);
		assert_string_equal(p->job_state, "done");
		assert_string_equal(nth(commits, 0)->patch_key, "stored before the kill");
		assert_string_equal(nth(commits, 1)->state, "tested");
		g_clear_pointer(&p, pk_store_push_free);
		g_clear_pointer(&commits, g_ptr_array_unref);
		pk_store_close(g_steal_pointer(&s));
	}
	assert_int_equal(outbox_mails(f), 8);

	/* 7. the branch deleted: dropped, its tip forgotten; made again: seen for the first time */
	GIT(f->d.upstream, "checkout", "-q", "side");
	GIT(f->d.upstream, "branch", "-q", "-D", "main");
	g_clear_pointer(&log, g_free);
	log = run_once(f);
	assert_non_null(strstr(log, "tree lab: branch main was deleted"));
	s = store_of(f);
	p = newest_push(s, NULL);
	assert_null(p->new_tip);
	g_clear_pointer(&tip, g_free);
	assert_int_equal(pk_store_source_state_get(s, source, "tip", &tip, NULL), 1);
	assert_null(tip);
	pk_store_close(g_steal_pointer(&s));
	GIT(f->d.upstream, "checkout", "-q", "-b", "main");
	g_clear_pointer(&log, g_free);
	log = run_once(f);
	assert_non_null(strstr(log, "tree lab: branch main seen for the first time"));
	assert_int_equal(outbox_mails(f), 8);
}

/* A file of n lines, each line, into text (caller frees). */
static char *lines_of(const char *line, unsigned n)
{
	GString *text = g_string_sized_new(strlen(line) * n);

	for (unsigned i = 0; i < n; i++)
		g_string_append(text, line);
	return g_string_free(text, FALSE);
}

/*
 * A pushed commit is held to [policy]'s limits as a mail is.  A commit
 * adding a file of 21 MiB (max_mail_mb = 1) and one touching three files
 * (max_files = 2) are not read: no patch key, no scan, the memory of the
 * whole run far below the file's size; each is tested as refused, its
 * review naming the limit's key, and mailed.  The commit after them,
 * within the limits, is tested as ever.
 */
static void test_watch_limits(void **state)
{
	struct fixture *f = *state;
	g_autofree char *log = NULL, *huge = lines_of("int a;\n", 3u << 20);
	g_autoptr(pk_store) s = NULL;
	g_autoptr(pk_store_push) p = NULL;
	g_autoptr(GPtrArray) commits = NULL;
	struct rusage ru;
	long before;
	static const char *const want[] = {
		"add up to 22020096 bytes (big.c alone 22020096), more than the limit of 1048576 bytes of a diff "
		"([policy] max_mail_mb)",
		"the commit touches 3 files, more than the limit of 2 ([policy] max_files)",
		NULL,
	};

	write_config_policy(f, 4, "max_mail_mb = 1\nmax_files = 2");
	g_free(run_once(f));
	g_free(commit_file(f, "big.c", huge, "big: a generated table"));
	g_clear_pointer(&huge, g_free);
	{
		g_autofree char *one = g_build_filename(f->d.upstream, "f1.c", NULL);
		g_autofree char *two = g_build_filename(f->d.upstream, "f2.c", NULL);

		assert_true(g_file_set_contents(one, "int f1;\n", -1, NULL));
		assert_true(g_file_set_contents(two, "int f2;\n", -1, NULL));
		GIT(f->d.upstream, "add", "f1.c", "f2.c");
		g_free(commit_file(f, "f3.c", "int f3;\n", "f: three files"));
	}
	g_free(commit_file(f, "ok.c", "int ok;\n", "ok: a small change"));
	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	before = ru.ru_maxrss;
	log = run_once(f);
	s = store_of(f);
	p = newest_push(s, &commits);
	assert_int_equal(commits->len, 3);
	for (guint i = 0; i < commits->len; i++) {
		g_autofree char *model = NULL;

		assert_string_equal(nth(commits, i)->state, "tested");
		assert_string_equal(nth(commits, i)->verdict, want[i] ? "refused" : "no-churn");
		assert_int_equal(nth(commits, i)->patch_key != NULL, i == 2);
		assert_int_equal(pk_store_review_get(s, nth(commits, i)->review_id, &model, NULL, NULL), 0);
		if (want[i] && !strstr(model, want[i]))
			fail_msg("commit %u: no \"%s\" in its review: %s", i + 1, want[i], model);
	}
	assert_int_equal(outbox_mails(f), 3);
	/* the 21 MiB file was never read whole: its diff alone would take 150 MB more (its scan, more) */
	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	print_message("peak RSS %ld MB, %ld MB more than before the run\n", ru.ru_maxrss >> 10,
		      (ru.ru_maxrss - before) >> 10);
	assert_true(ru.ru_maxrss - before < 100 << 10);
}

/*
 * SIGTERM while the daemon reads a huge commit (no limits set: 0 each):
 * its diff and its scan stop at once, not when the 1.5 million calls
 * are all judged.  The daemon runs in a child; its peak memory tells how
 * far the scan went (judged whole: 1.6 GB, 38 s after the signal on a
 * busy 2-CPU machine; stopped: 225 MB, 2.4 s; under ASan 650 MB).
 */
static void test_watch_stop_in_scan(void **state)
{
	struct fixture *f = *state;
	g_autofree char *huge = lines_of("\tpr_info(\"a table line\\n\");\n", 1500000);
	g_autofree char *logpath = g_build_filename(f->d.dir, "daemon.log", NULL);
	struct rusage ru;
	gint64 until, sent;
	double seconds;
	int status;
	pid_t child;

	write_config_policy(f, 4, "max_mail_mb = 0\nmax_files = 0\nmax_lines = 0");
	g_free(run_once(f));
	g_free(commit_file(f, "table.c", huge, "table: a huge one"));
	g_clear_pointer(&huge, g_free);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct pk_daemon_opts once = { .config_path = f->d.config, .once = true };
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, STDERR_FILENO);
		_exit(pk_daemon_run(&once, NULL) < 0 ? 1 : 0);
	}
	/* the job has begun its commit: its diff, then the scan, take many seconds from here */
	until = g_get_monotonic_time() + 600 * G_USEC_PER_SEC;
	for (;;) {
		g_autofree char *text = NULL;

		if (g_file_get_contents(logpath, &text, NULL, NULL) && strstr(text, "testing 1/1"))
			break;
		assert_true(g_get_monotonic_time() < until);
		assert_int_equal(waitpid(child, &status, WNOHANG), 0);
		g_usleep(20000);
	}
	sent = g_get_monotonic_time();
	assert_int_equal(kill(child, SIGTERM), 0);
	assert_int_equal(wait4(child, &status, 0, &ru), child);
	seconds = (double)(g_get_monotonic_time() - sent) / G_USEC_PER_SEC;
	print_message("ended %.1f s after SIGTERM, peak RSS %ld MB\n", seconds, ru.ru_maxrss >> 10);
	{
		g_autofree char *text = NULL;

		assert_true(g_file_get_contents(logpath, &text, NULL, NULL));
		if (!strstr(text, "stopped by a signal"))
			fail_msg("the daemon did not stop on SIGTERM:\n%s", text);
	}
	assert_true(WIFEXITED(status));
	assert_true(ru.ru_maxrss < 1 << 20);
	assert_true(seconds < 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_watch_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_stop_in_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
