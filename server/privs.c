#include "server/privs.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "server/core/log.h"
#include "server/syscall_filter.h"

#define CAP_BIT(c) (UINT64_C(1) << (c))
#define HELPER_CAPS (CAP_BIT(CAP_DAC_OVERRIDE) | CAP_BIT(CAP_DAC_READ_SEARCH))

/* capset(2) on the calling thread, without libcap. */
static int caps_set(uint64_t effective, uint64_t permitted)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	data[0].effective = (uint32_t)effective;
	data[1].effective = (uint32_t)(effective >> 32);
	data[0].permitted = (uint32_t)permitted;
	data[1].permitted = (uint32_t)(permitted >> 32);
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

static uint64_t caps_effective(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		return 0;
	return data[0].effective | (uint64_t)data[1].effective << 32;
}

/* The bounding set cut down to keep: done while CAP_SETPCAP is in effect
 * (root's), else left as the parent gave it (0). */
static int bound_to(uint64_t keep)
{
	if (!(caps_effective() & CAP_BIT(CAP_SETPCAP)))
		return 0;
	/* PR_CAPBSET_READ fails past the kernel's last capability. */
	for (int c = 0; c < 64 && prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
		if (!(keep & CAP_BIT(c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
			return -errno;
	return 0;
}

/* What both processes end with: no ambient set (EINVAL: a kernel before
 * 4.3 has none), effective and permitted as given, no inheritable; never
 * more by execve (no_new_privs), no core dump or ptrace (not dumpable), and
 * the system call filter. */
static int seal(uint64_t caps, const char *who)
{
	int rc = 0;

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		rc = -errno;
	if (rc == 0)
		rc = caps_set(caps, caps);
	if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		rc = -errno;
	if (rc == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		rc = -errno;
	if (rc < 0) {
		log_msg(LOG_ERROR, "%s: dropping privileges: %s", who, strerror(-rc));
		return rc;
	}
	rc = syscall_filter_install();
	if (rc == -ENOTSUP) {
		log_msg(LOG_DEBUG, "%s: no system call filter for this architecture", who);
		rc = 0;
	} else if (rc < 0) {
		log_msg(LOG_ERROR, "%s: installing the system call filter: %s", who, strerror(-rc));
	}
	return rc;
}

int privs_drop(const char *user)
{
	struct passwd *pw = NULL;
	int rc;

	if (user && !(pw = getpwnam(user))) {
		log_msg(LOG_ERROR, "--user %s: no such user", user);
		return -ENOENT;
	}
	rc = bound_to(0);
	if (rc < 0) {
		log_msg(LOG_ERROR, "emptying the capability bounding set: %s", strerror(-rc));
		return rc;
	}
	/* Without PR_SET_KEEPCAPS, setuid away from root clears the
	 * effective, permitted and ambient sets by itself. */
	if (pw && (initgroups(pw->pw_name, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 ||
	           setuid(pw->pw_uid) < 0)) {
		int e = errno;
		log_msg(LOG_ERROR, "--user %s: %s", user, strerror(e));
		return -e;
	}
	rc = seal(0, user ? user : "the server");
	if (rc < 0)
		return rc;
	if (pw && pw->pw_uid != 0 && setuid(0) == 0) { /* must be impossible now */
		log_msg(LOG_ERROR, "--user %s: could regain root; refusing to run", user);
		return -EPERM;
	}
	return 0;
}

int privs_helper(void)
{
	int rc = bound_to(HELPER_CAPS);

	if (rc < 0) {
		log_msg(LOG_ERROR, "privileged helper: the capability bounding set: %s",
		        strerror(-rc));
		return rc;
	}
	return seal(HELPER_CAPS & caps_effective(), "privileged helper");
}
