/*
 * test-sandbox.c - what a child in the sandbox can see and do: its
 * command line, and (when bubblewrap can run here) the real thing: no
 * network, no host files but the bound ones, read-only where it should
 * be, an unprivileged uid, a capped /tmp, a build dir handed over.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <pwd.h>
#include <signal.h>

#include "lab/sandbox.h"
#include "base/cgroup.h"
#include "base/util.h"

struct dirs {
	char *top, *ro, *rw;
};

static int setup(void **state)
{
	struct dirs *d = g_new0(struct dirs, 1);

	d->top = g_dir_make_tmp("printkbot-sandbox-XXXXXX", NULL);
	d->ro = g_build_filename(d->top, "tree", NULL);
	d->rw = g_build_filename(d->top, "build", NULL);
	g_mkdir(d->ro, 0755);
	g_mkdir(d->rw, 0755);
	chmod(d->top, 0700);   /* like /root: the sandbox user cannot cross it on the host */
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dirs *d = *state;
	const char *argv[] = { "rm", "-rf", d->top, NULL };
	struct pk_proc_result r;

	pk_proc_run(&r, argv, NULL, NULL);
	g_free(d->top);
	g_free(d->ro);
	g_free(d->rw);
	g_free(d);
	return 0;
}

static bool has(GPtrArray *a, const char *x, const char *y)
{
	for (guint i = 0; i + 1 < a->len && a->pdata[i]; i++)
		if (!strcmp(a->pdata[i], x) && (!y || (a->pdata[i + 1] && !strcmp(a->pdata[i + 1], y))))
			return true;
	return false;
}

/* The command line: namespaces, binds at the same path, the environment, setpriv as root. */
static void test_argv(void **state)
{
	struct dirs *d = *state;
	const char *ro[] = { d->ro, NULL }, *rw[] = { d->rw, NULL }, *env[] = { "A=b=c", NULL };
	const char *argv[] = { "make", "-j2", NULL };
	struct pk_sandbox sb = { .ro = ro, .rw = rw, .env = env, .cwd = d->ro };
	g_autoptr(GPtrArray) a = pk_sandbox_argv(&sb, argv, NULL);
	const char *missing[] = { "/nonexistent/printkbot", NULL };
	struct pk_sandbox bad = { .ro = missing };
	g_autoptr(GError) err = NULL;

	if (geteuid() == 0 && !pk_sandbox_usable(NULL))
		skip();
	assert_non_null(a);
	assert_string_equal(a->pdata[0], "bwrap");
	assert_null(a->pdata[a->len - 1]);
	assert_string_equal(a->pdata[a->len - 2], "-j2");
	assert_string_equal(a->pdata[a->len - 3], "make");
	assert_true(has(a, "--unshare-net", NULL) && has(a, "--unshare-pid", NULL));
	assert_true(has(a, "--ro-bind", d->ro) && has(a, "--bind", d->rw));
	assert_true(has(a, "--clearenv", NULL) && has(a, "--setenv", "A"));
	assert_true(has(a, "--chdir", d->ro));
	assert_true(has(a, "--dir", d->top));       /* the parent, made crossable */
	assert_false(has(a, "--ro-bind", "/etc"));  /* never all of /etc */
	assert_false(has(a, "--bind", "/"));
	if (geteuid() == 0)
		assert_true(has(a, "setpriv", NULL) && has(a, "--no-new-privs", NULL));
	assert_null(pk_sandbox_argv(&bad, argv, &err));
	assert_non_null(strstr(err->message, "/nonexistent/printkbot"));
}

/* Run script in a sandbox over d; its output in *out. */
static bool run_in(struct dirs *d, const char *script, guint64 tmp_size, GString *out)
{
	const char *ro[] = { d->ro, NULL }, *rw[] = { d->rw, NULL };
	const char *argv[] = { "sh", "-c", script, NULL };
	struct pk_sandbox sb = { .ro = ro, .rw = rw, .cwd = d->rw, .tmp_size = tmp_size };
	g_autoptr(GPtrArray) a = pk_sandbox_argv(&sb, argv, NULL);
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result r;

	assert_non_null(a);
	o.capture = out;
	o.timeout = 60;
	assert_int_equal(pk_proc_run(&r, (const char *const *)a->pdata, &o, NULL), 0);
	print_message("%s", out->str);
	return pk_proc_ok(&r);
}

struct live_case {
	const char *name;
	const char *script;   /* exits 0 when the sandbox did its part */
};

static const struct live_case live[] = {
	{ "the build dir is writable", "echo x > ./made && cat ./made" },
	{ "the tree is read-only", "! echo x > ../tree/x 2>/dev/null" },
	{ "/usr is read-only", "! touch /usr/printkbot-x 2>/dev/null" },
	{ "/tmp is private and writable", "echo x > /tmp/x && test -f /tmp/x" },
	{ "no /root, /home, /run, /var", "! ls /root /home /run /var 2>/dev/null" },
	{ "not all of /etc", "test -f /etc/passwd && ! test -e /etc/hostname && ! test -e /etc/shadow" },
	{ "no network", "! python3 -c 'import socket; socket.create_connection((\"192.0.2.1\", 80), 3)' 2>/dev/null" },
	{ "only a loopback", "grep -q '^ *lo:' /proc/net/dev && test $(grep -c : /proc/net/dev) -eq 1" },
	{ "no other processes", "test $(ls /proc | grep -c '^[0-9]') -lt 6" },
	{ "no capabilities", "grep -q '^CapEff:.*0000000000000000' /proc/self/status" },
};

static void test_live(void **state)
{
	struct dirs *d = *state;

	if (!pk_sandbox_usable(NULL))
		skip();
	assert_int_equal(pk_sandbox_own(d->rw, NULL), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(live); i++) {
		g_autoptr(GString) out = g_string_new(NULL);

		print_message("%s\n", live[i].name);
		assert_true(run_in(d, live[i].script, 0, out));
	}
}

/* As root: an unprivileged uid inside, and /tmp is capped. */
static void test_uid_and_tmp_size(void **state)
{
	struct dirs *d = *state;
	g_autoptr(GString) id = g_string_new(NULL), big = g_string_new(NULL);

	if (!pk_sandbox_usable(NULL))
		skip();
	assert_true(run_in(d, "id -u", 0, id));
	if (geteuid() == 0)
		assert_int_not_equal(atoi(id->str), 0);
	assert_false(run_in(d, "head -c 3000000 /dev/zero > /tmp/big", 1u << 20, big));
	assert_non_null(strstr(big->str, "No space left"));
}

/*
 * pk_sandbox_own(): root's files in the build dir become the sandbox
 * user's, a symlink is changed itself (not its target), a file with a
 * second link elsewhere is left alone.
 */
static void test_own(void **state)
{
	struct dirs *d = *state;
	g_autofree char *sub = g_build_filename(d->rw, "include", NULL);
	g_autofree char *file = g_build_filename(sub, "autoconf.h", NULL);
	g_autofree char *outside = g_build_filename(d->top, "outside", NULL);
	g_autofree char *slink = g_build_filename(d->rw, "link", NULL);
	g_autofree char *hard = g_build_filename(d->rw, "hard", NULL);
	struct stat st, st_out;

	if (geteuid() != 0 || !pk_sandbox_active())
		skip();
	g_mkdir(sub, 0755);
	g_file_set_contents(file, "x", 1, NULL);
	g_file_set_contents(outside, "x", 1, NULL);
	assert_int_equal(symlink(outside, slink), 0);
	assert_int_equal(link(outside, hard), 0);
	assert_int_equal(pk_sandbox_own(d->rw, NULL), 0);
	assert_int_equal(lstat(file, &st), 0);
	assert_int_not_equal(st.st_uid, 0);
	assert_int_equal(lstat(sub, &st), 0);
	assert_int_not_equal(st.st_uid, 0);
	assert_int_equal(lstat(slink, &st), 0);
	assert_int_not_equal(st.st_uid, 0);
	assert_int_equal(stat(outside, &st_out), 0);
	assert_int_equal(st_out.st_uid, 0);   /* neither through the symlink nor the hard link */
}

/* Run script in a sandbox over d under limits, as builds run (pk_sandbox_run()); its output in *out. */
static bool run_limited(struct dirs *d, const char *script, const struct pk_limits *limits, GString *out)
{
	const char *ro[] = { d->ro, NULL }, *rw[] = { d->rw, NULL };
	const char *argv[] = { "sh", "-c", script, NULL };
	struct pk_sandbox sb = { .ro = ro, .rw = rw, .cwd = d->rw, .limits = limits };
	struct pk_proc_opts o = PK_PROC_OPTS_INIT;
	struct pk_proc_result r;
	bool sandboxed = false;

	o.capture = out;
	o.timeout = 120;
	assert_int_equal(pk_sandbox_run(&r, &sandboxed, &sb, argv, &o, NULL), 0);
	assert_true(sandboxed);
	print_message("%s", out->str);
	return pk_proc_ok(&r);
}

/* How many processes uid has now. */
static unsigned processes_of(uid_t uid)
{
	g_autoptr(GDir) proc = g_dir_open("/proc", 0, NULL);
	const char *name;
	unsigned n = 0;

	while (proc && (name = g_dir_read_name(proc))) {
		g_autofree char *path = g_build_filename("/proc", name, NULL);
		struct stat st;

		if (g_ascii_isdigit(*name) && stat(path, &st) == 0 && st.st_uid == uid)
			n++;
	}
	return n;
}

/*
 * The process limit is per sandbox, not per uid: while another worker's
 * build (40 processes of the same sandbox user, outside this sandbox)
 * runs, a sandbox capped at 30 still starts its few; and a sandbox that
 * forks past its own cap is stopped.  Under RLIMIT_NPROC (one count for
 * the whole uid) the first fails: one patch's fork bomb stopped every
 * other worker's builds and boots.
 */
static void test_process_cap_is_per_sandbox(void **state)
{
	struct dirs *d = *state;
	struct pk_limits cap = { .processes = 30 };
	g_autoptr(GString) few = g_string_new(NULL), bomb = g_string_new(NULL);
	g_autoptr(GError) why = NULL;
	g_autofree char *probe = NULL, *uid_s = NULL, *gid_s = NULL;
	struct passwd *pw = getpwnam(PK_SANDBOX_USER);
	GPid other;

	if (geteuid() != 0 || !pk_sandbox_active() || !pw)
		skip();
	if (!(probe = pk_cgroup_make(1, &why))) {
		print_message("no pids cgroup here: %s\n", why->message);
		skip();
	}
	pk_cgroup_remove(probe);
	assert_int_equal(pk_sandbox_own(d->rw, NULL), 0);
	uid_s = g_strdup_printf("%u", (unsigned)pw->pw_uid);
	gid_s = g_strdup_printf("%u", (unsigned)pw->pw_gid);
	{
		const char *argv[] = { "setpriv", "--reuid", uid_s, "--regid", gid_s, "--clear-groups", "sh", "-c",
				       "for i in $(seq 40); do sleep 120 & done; wait", NULL };

		assert_true(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD,
					  NULL, NULL, &other, NULL));
	}
	for (int i = 0; i < 500 && processes_of(pw->pw_uid) < 40; i++)
		g_usleep(20000);   /* the other build starting its processes: nothing tells when */
	assert_true(processes_of(pw->pw_uid) >= 40);
	assert_true(run_limited(d, "for i in 1 2 3 4 5; do sleep 0.2 & done; wait; echo started", &cap, few));
	assert_non_null(strstr(few->str, "started"));
	assert_false(run_limited(d, "for i in $(seq 60); do sleep 2 & done || exit 1; wait", &cap, bomb));
	kill(-other, SIGKILL);
	kill(other, SIGKILL);
	{
		const char *argv[] = { "pkill", "-KILL", "-u", uid_s, "sleep", NULL };
		struct pk_proc_result r;

		pk_proc_run(&r, argv, NULL, NULL);
	}
	g_spawn_close_pid(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_argv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uid_and_tmp_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_cap_is_per_sandbox, setup, teardown),
	};

	return cmocka_run_group_tests_name("sandbox", tests, NULL, NULL);
}
