/* Tests server/syscall_filter.c in a child process (the filter is for
 * good): what it refuses answers EPERM (clone3: ENOSYS), what a server does
 * still works, threads included. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/syscall_filter.h"
#include "tests/unit/check_run.h"

static int token;

static void *thread_main(void *arg)
{
	return arg;
}

/* In the child: 0 when every check holds, else the number of the first
 * that did not. */
static int filtered(void)
{
	char *const argv[] = {"true", NULL};
	pthread_t t;
	void *ret = NULL;
	int fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return 1;
	int rc = syscall_filter_install();
	if (rc == -ENOTSUP)
		return 0; /* an architecture it does not know: nothing to test */
	if (rc < 0)
		return 2;
	/* Valgrind ends the process when an execve fails ("I can't recover
	 * from execve() failing"): under it, not asked. */
	const char *preload = getenv("LD_PRELOAD");
	bool valgrind = preload && strstr(preload, "vgpreload");
	if (!valgrind && (execv("/bin/true", argv) != -1 || errno != EPERM))
		return 3;
	if (unshare(CLONE_NEWUSER) != -1 || errno != EPERM)
		return 4;
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return 5;
	char attr[128] = {0}; /* BPF_MAP_CREATE of nothing: EINVAL, were it let through */
	if (syscall(SYS_bpf, 0, attr, sizeof(attr)) != -1 || errno != EPERM)
		return 7;
	/* What a server does: open, read, threads (glibc falls back from
	 * clone3 to clone, whose flags make no namespace). */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 8;
	close(fd);
	if (pthread_create(&t, NULL, thread_main, &token) != 0 || pthread_join(t, &ret) != 0 ||
	    ret != &token)
		return 9;
	return 0;
}

START_TEST(test_filter)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(filtered());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syscall_filter");
	TCase *tc = tcase_create("syscall_filter");

	tcase_add_test(tc, test_filter);
	suite_add_tcase(s, tc);
	return check_run(s);
}
