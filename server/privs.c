#include "server/privs.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "server/log.h"

/* Set by privs_drop before the workers start; read by the signal thread. */
static bool kept;

/* capset(2) on the calling thread, without libcap: effective and permitted
 * as masks of the first 32 capabilities (all ktlsd uses). */
static int set_caps(uint32_t effective, uint32_t permitted)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	data[0].effective = effective;
	data[0].permitted = permitted;
	return (int)syscall(SYS_capset, &hdr, data);
}

#define READ_ANY (1u << CAP_DAC_READ_SEARCH)

int privs_drop(const char *user)
{
	struct passwd *pw = getpwnam(user);
	if (!pw) {
		log_msg(LOG_ERROR, "--user %s: no such user", user);
		return -ENOENT;
	}
	/* KEEPCAPS: the setuid below leaves the permitted set alone (and
	 * clears the effective one), so set_caps can narrow it to READ_ANY. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || initgroups(pw->pw_name, pw->pw_gid) < 0 ||
	    setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) {
		int e = errno;
		log_msg(LOG_ERROR, "--user %s: %s", user, strerror(e));
		return -e;
	}
	prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	if (set_caps(0, READ_ANY) < 0) {
		int e = errno;
		log_msg(LOG_ERROR, "--user %s: dropping capabilities: %s", user, strerror(e));
		return -e;
	}
	if (setuid(0) == 0) { /* must be impossible now */
		log_msg(LOG_ERROR, "--user %s: could regain root; refusing to run", user);
		return -EPERM;
	}
	kept = true;
	return 0;
}

void privs_read_begin(void)
{
	if (kept && set_caps(READ_ANY, READ_ANY) < 0)
		log_msg(LOG_WARN, "reload: cannot raise CAP_DAC_READ_SEARCH: %s; reading as %u",
			strerror(errno), (unsigned)getuid());
}

void privs_read_end(void)
{
	if (kept)
		set_caps(0, READ_ANY);
}

void privs_thread_forget(void)
{
	if (kept)
		set_caps(0, 0);
}
