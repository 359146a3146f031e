/*
 * test-lablock.c - the lab's lock (lab.h's pk_lab_lock()): a second
 * printkbot that waits for it says who holds it (the holder's command
 * line, pid, and for how long), and takes it once it is let go; a lock
 * file whose holder is gone names nobody.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab/lab.h"
#include "base/util.h"

/*
 * A child that takes the lab's lock, its stderr into the pipe's write
 * end; exits 0 once it has it.  held is the parent's locked fd, which the
 * child must not keep open (a flock belongs to the open file, which fork
 * shares): another printkbot would not have it.
 */
static pid_t waiter(int err_fd, int held)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_lab lab;

		close(held);
		dup2(err_fd, STDERR_FILENO);
		if (pk_lab_open(&lab, NULL) < 0 || pk_lab_lock(&lab, NULL) < 0)
			_exit(1);
		pk_lab_clear(&lab);
		_exit(0);
	}
	return pid;
}

static void test_waiter_names_the_holder(void **state)
{
	g_autofree char *cache = g_dir_make_tmp("test-lablock-XXXXXX", NULL);
	g_autofree char *want = g_strdup_printf("(pid %ld, for ", (long)getpid());
	g_autofree char *lock_path = NULL, *left = NULL, *rm = NULL;
	struct pk_lab lab;
	char said[1024];
	ssize_t n = 0;
	int pipefd[2], status;
	pid_t child;

	(void)state;
	g_setenv("PRINTKBOT_CACHE", cache, TRUE);
	assert_int_equal(pk_lab_open(&lab, NULL), 0);
	assert_int_equal(pk_lab_lock(&lab, NULL), 0);
	assert_int_equal(pipe(pipefd), 0);
	child = waiter(pipefd[1], lab.lock_fd);
	close(pipefd[1]);
	/* its one line says it waits, and for whom: this test, by its command line and pid */
	for (ssize_t r; n < (ssize_t)sizeof said - 1 && !memchr(said, '\n', n) &&
	     (r = read(pipefd[0], said + n, sizeof said - 1 - n)) > 0;)
		n += r;
	said[n] = '\0';
	print_message("%s", said);
	assert_non_null(strstr(said, "waiting for "));
	assert_non_null(strstr(said, "test-lablock"));
	assert_non_null(strstr(said, want));
	/* let go: the waiter takes it and ends */
	pk_lab_clear(&lab);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(pipefd[0]);
	/* and the file names nobody once it is let go */
	lock_path = g_build_filename(cache, "lock", NULL);
	assert_true(g_file_get_contents(lock_path, &left, NULL, NULL));
	assert_string_equal(left, "");
	g_unsetenv("PRINTKBOT_CACHE");
	rm = g_strdup_printf("rm -rf '%s'", cache);
	assert_int_equal(system(rm), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waiter_names_the_holder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
