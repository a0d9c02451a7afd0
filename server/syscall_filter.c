#include "server/syscall_filter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#endif

/* LeakSanitizer stops the process at exit with ptrace, from a thread of
 * its own: a sanitizer build must keep ptrace to report leaks. */
#if defined(__SANITIZE_ADDRESS__)
#define KEEP_PTRACE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KEEP_PTRACE 1
#endif
#endif

/* Refused with EPERM. */
static const int denied[] = {
    SYS_execve,
    SYS_execveat,
#ifndef KEEP_PTRACE
    SYS_ptrace,
#endif
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_unshare,
    SYS_setns,
    SYS_mount,
    SYS_umount2,
    SYS_pivot_root,
    SYS_chroot,
#ifdef SYS_open_tree
    SYS_open_tree,
    SYS_move_mount,
    SYS_fsopen,
    SYS_fsconfig,
    SYS_fsmount,
    SYS_fspick,
#endif
#ifdef SYS_mount_setattr
    SYS_mount_setattr,
#endif
    SYS_bpf,
    SYS_perf_event_open,
    SYS_userfaultfd,
    SYS_keyctl,
    SYS_add_key,
    SYS_request_key,
    SYS_init_module,
    SYS_finit_module,
    SYS_delete_module,
    SYS_kexec_load,
#ifdef SYS_kexec_file_load
    SYS_kexec_file_load,
#endif
    SYS_reboot,
    SYS_swapon,
    SYS_swapoff,
    SYS_acct,
    SYS_quotactl,
    SYS_name_to_handle_at,
    SYS_open_by_handle_at,
    SYS_fanotify_init,
#ifdef SYS_iopl
    SYS_iopl,
    SYS_ioperm,
#endif
};

/* clone's flags that make a namespace: with a user namespace, the caller
 * holds every capability inside it. */
#define NEW_NAMESPACES                                                                             \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
	 CLONE_NEWCGROUP)

#define DENIED_N (sizeof(denied) / sizeof(denied[0]))

int syscall_filter_install(void)
{
#ifndef FILTER_ARCH
	return -ENOTSUP;
#else
	/* The low 32 bits of clone's first argument, its flags. */
	const unsigned flags_off = offsetof(struct seccomp_data, args[0]) +
	                           (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0);
	struct sock_filter f[16 + 2 * DENIED_N];
	unsigned n = 0;

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                      offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
	/* x32's numbers: the same calls under other numbers. */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
	for (size_t i = 0; i < DENIED_N; i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		                                      (unsigned)denied[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(
		    BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	}
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
	                                      SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, flags_off);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NEW_NAMESPACES, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
	                                      SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
	/* SPEC_ALLOW: on a CPU whose speculative store bypass mitigation is
	 * left to prctl and seccomp (spec_store_bypass_disable=seccomp, the
	 * default where it applies), a filter would otherwise switch it on
	 * for every worker and slow all their code (the kernel's
	 * Documentation/admin-guide/kernel-parameters.txt,
	 * spec_store_bypass_disable); a machine that wants it says =on. Where
	 * seccomp(2) is refused (an older unit's SystemCallFilter=), prctl
	 * sets the same filter without the flag. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog) == 0)
		return 0;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0 ? -errno : 0;
#endif
}
