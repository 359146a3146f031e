/*
 * daemon-lab-fixture.h - what the daemon's step-by-step tests share
 * (test-watch, test-commands): a temporary directory with a lab that
 * passes pk_lab_check() although no kernel is in it (its tree a clone of
 * a small git repository, "upstream", with a kernel's VERSION and
 * PATCHLEVEL; the setup stamp and initramfs written as setup would), git
 * run on either repository, and the daemon run once as cron would, its
 * log captured.  Nothing here builds: the tests choose what they queue so
 * that nothing must.  A test includes it once, after cmocka.h; the
 * helpers are static, for one test program each.
 */
#ifndef PK_TEST_DAEMON_LAB_FIXTURE_H
#define PK_TEST_DAEMON_LAB_FIXTURE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "lab/lab.h"
#include "store/store.h"
#include "base/proc.h"

struct daemon_lab {
	char *dir;        /* the test's directory, removed by daemon_lab_clear() */
	char *config;     /* dir/printkbot.conf: the test writes it */
	char *upstream;   /* dir/upstream: the repository the lab's tree was cloned from */
	struct pk_lab lab;
	const char *env_prefix; /* $<prefix>_LOG=1 prints each daemon log, $<prefix>_KEEP=1 keeps dir */
};

/*
 * git -C dir args..., authored by Jane Dev and committed by Max Maint (a
 * commit's author and committer differ, as on a maintainer's branch); a
 * failure fails the test.  Its output, stripped (caller frees).
 */
G_GNUC_UNUSED static char *git(const char *dir, const char *const *args)
{
	const char *argv[24] = { "git", "-C", dir, "-c", "user.name=Jane Dev", "-c", "user.email=jane@example.org",
				 "-c", "init.defaultBranch=main" };
	const char *env[] = { "GIT_COMMITTER_NAME=Max Maint", "GIT_COMMITTER_EMAIL=max@example.org", NULL };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result r;
	GString *out = g_string_new(NULL);
	unsigned n = 9;

	for (; *args; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	o.capture = out;
	o.env = env;
	assert_int_equal(pk_proc_run(&r, argv, &o, NULL), 0);
	if (!pk_proc_ok(&r))
		fail_msg("git %s: %s", argv[9], out->str);
	return g_strstrip(g_string_free(out, FALSE));
}

#define GIT(dir, ...) g_free(git(dir, (const char *[]){ __VA_ARGS__, NULL }))

/*
 * A new directory (named after prefix, e.g. "pk-watch") whose cache/ is
 * $PRINTKBOT_CACHE and holds a lab that passes pk_lab_check(); upstream/
 * a git repository on branch main with one commit, "base", of a Makefile
 * (6.12) and init.c with init_c as its text; the lab's tree a clone of
 * it.  env_prefix as in struct daemon_lab.
 */
G_GNUC_UNUSED static void daemon_lab_init(struct daemon_lab *d, const char *prefix, const char *env_prefix,
					  const char *init_c)
{
	g_autofree char *name = g_strconcat(prefix, "-XXXXXX", NULL);
	g_autofree char *cache = NULL, *stamp = NULL, *guest = NULL, *builds = NULL, *mk = NULL, *src = NULL;
	g_autoptr(GError) err = NULL;

	memset(d, 0, sizeof *d);
	d->env_prefix = env_prefix;
	d->dir = g_dir_make_tmp(name, NULL);
	assert_non_null(d->dir);
	d->config = g_build_filename(d->dir, "printkbot.conf", NULL);
	d->upstream = g_build_filename(d->dir, "upstream", NULL);
	cache = g_build_filename(d->dir, "cache", NULL);
	g_setenv("PRINTKBOT_CACHE", cache, TRUE);
	d->lab.lock_fd = -1;
	assert_int_equal(pk_lab_open(&d->lab, &err), 0);
	/* what setup leaves: its stamp for the lab's config and the guest's initramfs */
	stamp = pk_lab_ready_stamp(&d->lab);
	guest = g_path_get_dirname(d->lab.initrd);
	builds = g_path_get_dirname(stamp);
	assert_int_equal(g_mkdir_with_parents(guest, 0755), 0);
	assert_int_equal(g_mkdir_with_parents(builds, 0755), 0);
	assert_true(g_file_set_contents(stamp, d->lab.config_hash, -1, NULL));
	assert_true(g_file_set_contents(d->lab.initrd, "", 0, NULL));
	assert_int_equal(g_mkdir_with_parents(d->upstream, 0755), 0);
	mk = g_build_filename(d->upstream, "Makefile", NULL);
	src = g_build_filename(d->upstream, "init.c", NULL);
	assert_true(g_file_set_contents(mk, "VERSION = 6\nPATCHLEVEL = 12\n", -1, NULL));
	assert_true(g_file_set_contents(src, init_c, -1, NULL));
	GIT(d->upstream, "init", "-q");
	GIT(d->upstream, "add", "Makefile", "init.c");
	GIT(d->upstream, "commit", "-q", "-m", "base");
	GIT(d->dir, "clone", "-q", d->upstream, d->lab.tree);
	/* the lab's default base, as setup tags it: what pk_lab_check() looks for first */
	GIT(d->lab.tree, "tag", PK_LAB_BASE_TAG);
	if (pk_lab_check(&d->lab, &err) < 0)
		fail_msg("lab: %s", err->message);
}

G_GNUC_UNUSED static void daemon_lab_clear(struct daemon_lab *d)
{
	g_autofree char *keep = g_strconcat(d->env_prefix, "_KEEP", NULL);
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", d->dir);

	g_unsetenv("PRINTKBOT_CACHE");
	pk_lab_clear(&d->lab);
	if (getenv(keep))
		print_message("kept %s\n", d->dir);
	else
		g_assert(system(cmd) == 0);
	g_free(d->upstream);
	g_free(d->config);
	g_free(d->dir);
}

/* The daemon once on d->config (queue_only: the intake alone): its log (caller frees). */
G_GNUC_UNUSED static char *daemon_lab_run_once(struct daemon_lab *d, bool queue_only)
{
	struct pk_daemon_opts once = { .config_path = d->config, .once = true, .queue_only = queue_only };
	g_autofree char *log = g_build_filename(d->dir, "daemon.log", NULL);
	g_autofree char *show = g_strconcat(d->env_prefix, "_LOG", NULL);
	g_autoptr(GError) err = NULL;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved = dup(STDERR_FILENO), rc;
	char *text = NULL;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	close(fd);
	rc = pk_daemon_run(&once, &err);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	assert_true(g_file_get_contents(log, &text, NULL, NULL));
	if (rc < 0)
		fail_msg("run: %s\n%s", err->message, text);
	if (getenv(show))
		print_message("%s", text);
	return text;
}

/* The store at dir/name, which the test's config names. */
G_GNUC_UNUSED static struct pk_store *daemon_lab_store(struct daemon_lab *d, const char *name)
{
	g_autofree char *db = g_build_filename(d->dir, name, NULL);
	struct pk_store *s = NULL;

	assert_int_equal(pk_store_open(&s, db, NULL), 0);
	return s;
}

#endif
