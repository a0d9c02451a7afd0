/* Reading a file's mapped pages in user space. A page past the end of a
 * file that shrank after it was mapped is SIGBUS, which would end the
 * process; the kernel's own copy from such a page (a send from a mapping)
 * fails with EFAULT instead. page_guard_run gives user-space reads the
 * kernel's answer: it runs a function with that SIGBUS turned into
 * -EFAULT for the calling thread, so the transport can end the one
 * response (as a splice that found the file short) and go on. */
#ifndef KTLSD_SERVER_PAGE_GUARD_H
#define KTLSD_SERVER_PAGE_GUARD_H

/* Installs the SIGBUS handler: once, before any thread reads a mapping.
 * 0 or -errno. */
int page_guard_install(void);

/* Runs fn(arg) and returns 0, or -EFAULT if it touched a mapped page that
 * no longer exists (fn was cut short where it faulted: whatever it was
 * writing is incomplete). A SIGBUS outside page_guard_run, or a second one
 * inside, keeps its default action. fn must not hold locks or allocate:
 * it may be left in the middle. */
int page_guard_run(void (*fn)(void *arg), void *arg);

#endif
