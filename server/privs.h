/* What each ktlsd process may do once it serves (README, Security).
 *
 * ktlsd starts as root (to bind ports below 1024, read root-only keys and
 * make its logs) or as an unprivileged user with CAP_NET_BIND_SERVICE
 * (systemd's AmbientCapabilities=). Once its listeners are bound and its
 * files open, before any thread exists, the process that serves clients
 * gives up every privilege for good (privs_drop). With --user, what needs
 * root later (a reload's root-only keys, the logs logrotate renamed) is
 * the privileged helper's (privsep.h), which keeps two capabilities and
 * nothing else (privs_helper). Both set no_new_privs, are not dumpable (no
 * core file, no ptrace, /proc/PID root's) and take the system call filter
 * (syscall_filter.h). */
#ifndef KTLSD_SERVER_PRIVS_H
#define KTLSD_SERVER_PRIVS_H

/* The serving process, before it starts a thread: user (NULL: keep the
 * uid) and its groups, then no capability at all: effective, permitted,
 * inheritable and ambient empty, the bounding set too where CAP_SETPCAP
 * allows (root; under systemd it is the unit's CapabilityBoundingSet=).
 * 0, or -errno after logging why (refuse to serve then). */
int privs_drop(const char *user);

/* The privileged helper: still root, with only CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH (read any key, write any log, remove the pid file),
 * and a bounding set of those two. 0 or -errno. */
int privs_helper(void);

#endif
