#include "server/core/page_guard.h"

#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

/* One guard per thread: each worker seals on its own thread. */
static _Thread_local struct {
	sigjmp_buf back;
	const struct iovec *ranges;
	int n;
	volatile sig_atomic_t armed;
} guard;

static bool guarded(const void *addr)
{
	const char *a = addr;

	for (int i = 0; i < guard.n; i++) {
		const char *b = guard.ranges[i].iov_base;
		if (a >= b && a < b + guard.ranges[i].iov_len)
			return true;
	}
	return false;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (guard.armed && guarded(si->si_addr)) {
		guard.armed = 0;
		/* SA_NODEFER: SIGBUS was not blocked for the handler, so the
		 * jump leaves the signal mask as it was (no mask saved). */
		siglongjmp(guard.back, 1);
	}
	/* Not ours: the access is made again, and kills as it would have. */
	signal(sig, SIG_DFL);
}

void page_guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

bool page_guard_call(const struct iovec *ranges, int n, void (*fn)(void *), void *arg)
{
	if (sigsetjmp(guard.back, 0))
		return false;
	guard.ranges = ranges;
	guard.n = n;
	guard.armed = 1;
	fn(arg);
	guard.armed = 0;
	return true;
}
