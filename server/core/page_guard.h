/* ktlsd's own reads of a file's mapped pages. Only there can a file that
 * shrank under a download raise SIGBUS (mmap(2): an access to a page of the
 * mapping past the file's end); the kernel's reads of such pages (a send
 * from them) fail with EFAULT instead. The user-space TLS sealer encrypts
 * straight from the mapping, sparing the copy of every byte a file read
 * would make (bench/run --large-only: _copy_to_iter was a fifth of the
 * server's CPU in a 1 GiB HTTP/1.1 download), and reads through here. */
#ifndef KTLSD_SERVER_PAGE_GUARD_H
#define KTLSD_SERVER_PAGE_GUARD_H

#include <stdbool.h>
#include <sys/uio.h>

/* The process's SIGBUS handler: once, before any thread that reads mapped
 * pages starts. A SIGBUS outside page_guard_call, or at an address outside
 * its ranges, takes the default action (a core dump at the access). */
void page_guard_install(void);

/* Calls fn(arg) with ranges[0, n) guarded: a SIGBUS in one of them ends
 * fn at once, and false is returned. What fn was doing is then lost half
 * done: the caller throws its state away (the connection ends). Not
 * nested; fn must hold no lock and allocate nothing across its reads of
 * the ranges. */
bool page_guard_call(const struct iovec *ranges, int n, void (*fn)(void *), void *arg);

#endif
