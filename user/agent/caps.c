// SPDX-License-Identifier: MIT
/* Capability dropping with libcap (cap_get_proc / cap_set_proc). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>

#include "caps.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

int agent_caps_text(char *desc, size_t len)
{
	cap_t caps = cap_get_proc();
	char *text;

	if (!caps)
		return -errno;
	text = cap_to_text(caps, NULL);
	if (!text) {
		cap_free(caps);
		return -errno;
	}
	snprintf(desc, len, "%s", text);
	cap_free(text);
	cap_free(caps);
	return 0;
}

int agent_drop_caps(char *desc, size_t len, bool keep_sys_admin)
{
	cap_value_t keep[4] = {CAP_SYS_NICE, CAP_SYS_PTRACE, CAP_BPF, CAP_SYS_ADMIN};
	cap_t caps = cap_init();
	int n = keep_sys_admin ? 4 : 3, rc = 0;

	if (!caps)
		return -errno;
	/* CAP_BPF exists from 5.8; before that bpf() needs CAP_SYS_ADMIN. */
	if (!CAP_IS_SUPPORTED(CAP_BPF))
		keep[2] = CAP_SYS_ADMIN;
	if (cap_set_flag(caps, CAP_PERMITTED, n, keep, CAP_SET) ||
	    cap_set_flag(caps, CAP_EFFECTIVE, n, keep, CAP_SET) || cap_set_proc(caps))
		rc = -errno;
	cap_free(caps);
	if (rc == 0)
		rc = agent_caps_text(desc, len);
	return rc;
}
