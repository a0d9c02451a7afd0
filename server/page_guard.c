#include "server/page_guard.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

/* The jump back to page_guard_run of the thread that faulted: a fault is
 * delivered to the thread that caused it, so a thread-local is exact. */
static __thread sigjmp_buf *guard;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *jb = guard;

	(void)si;
	(void)uc;
	if (jb && si->si_code != SI_USER && si->si_code != SI_TKILL) {
		guard = NULL;
		siglongjmp(*jb, 1);
	}
	/* Not ours: the default action, when the instruction runs again. */
	signal(sig, SIG_DFL);
}

int page_guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL) < 0 ? -errno : 0;
}

int page_guard_run(void (*fn)(void *arg), void *arg)
{
	sigjmp_buf jb;

	/* The signal mask is saved (1): the jump leaves the handler, whose
	 * SIGBUS would otherwise stay blocked, and a blocked SIGBUS from a
	 * fault kills the process. */
	if (sigsetjmp(jb, 1)) {
		guard = NULL;
		return -EFAULT;
	}
	guard = &jb;
	fn(arg);
	guard = NULL;
	return 0;
}
