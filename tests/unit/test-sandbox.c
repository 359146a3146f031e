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

#include "lab/sandbox.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_argv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uid_and_tmp_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own, setup, teardown),
	};

	return cmocka_run_group_tests_name("sandbox", tests, NULL, NULL);
}
