/* A seccomp filter for both ktlsd processes, set after their privileges
 * are dropped (privs.h): it refuses the system calls a static-file server
 * never makes and an exploit reaches for next, so that a bug turned into
 * code execution cannot run a program (execve), read or steer another
 * process (ptrace, process_vm_*), grow a user namespace with capabilities
 * in it (unshare, clone with CLONE_NEW*, setns), mount, load BPF or kernel
 * modules, or use the kernel surfaces local exploits like (userfaultfd,
 * perf_event_open, keyrings, open_by_handle_at).
 *
 * It is a deny list, not an allow list, on purpose: most of ktlsd's I/O is
 * io_uring operations, which are not system calls and which seccomp never
 * sees, so an allow list would confine little while breaking on every new
 * call glibc or OpenSSL makes. The calls refused answer EPERM; clone3
 * answers ENOSYS, so that glibc falls back to clone, whose flags the filter
 * can read. A call from another ABI (i386's int 0x80 on x86-64, x32) ends
 * the process. */
#ifndef KTLSD_SERVER_SYSCALL_FILTER_H
#define KTLSD_SERVER_SYSCALL_FILTER_H

/* Installs the filter on the calling thread (and the threads it starts):
 * 0, or -errno. Needs no_new_privs set first. On an architecture the
 * filter does not know, installs nothing and returns -ENOTSUP. */
int syscall_filter_install(void);

#endif
