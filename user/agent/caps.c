// SPDX-License-Identifier: MIT
/* Capability dropping with libcap (cap_get_proc / cap_set_proc). */
#include <errno.h>
#include <fcntl.h>
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
	cap_value_t dac = CAP_DAC_READ_SEARCH;
	cap_t caps = cap_init();
	int n = keep_sys_admin ? 4 : 3, rc = 0;

	if (!caps)
		return -errno;
	/* CAP_BPF exists from 5.8; before that bpf() needs CAP_SYS_ADMIN. */
	if (!CAP_IS_SUPPORTED(CAP_BPF))
		keep[2] = CAP_SYS_ADMIN;
	if (cap_set_flag(caps, CAP_PERMITTED, n, keep, CAP_SET) ||
	    cap_set_flag(caps, CAP_EFFECTIVE, n, keep, CAP_SET) ||
	    cap_set_flag(caps, CAP_PERMITTED, 1, &dac, CAP_SET) || cap_set_proc(caps))
		rc = -errno;
	cap_free(caps);
	if (rc == 0)
		rc = agent_caps_text(desc, len);
	return rc;
}

int agent_open_proc_file(const char *path, int flags)
{
	cap_value_t dac = CAP_DAC_READ_SEARCH;
	cap_flag_value_t permitted = CAP_CLEAR, effective = CAP_CLEAR;
	cap_t caps = cap_get_proc();
	bool raised = false;
	int fd, err;

	if (caps && !cap_get_flag(caps, dac, CAP_PERMITTED, &permitted) &&
	    !cap_get_flag(caps, dac, CAP_EFFECTIVE, &effective) && permitted == CAP_SET &&
	    effective == CAP_CLEAR &&
	    !cap_set_flag(caps, CAP_EFFECTIVE, 1, &dac, CAP_SET))
		raised = cap_set_proc(caps) == 0;
	fd = open(path, flags);
	err = errno;
	if (raised &&
	    (cap_set_flag(caps, CAP_EFFECTIVE, 1, &dac, CAP_CLEAR) || cap_set_proc(caps)))
		fprintf(stderr,
			"leap-agent: cannot lower CAP_DAC_READ_SEARCH again: %s\n",
			strerror(errno));
	cap_free(caps);
	errno = err;
	return fd;
}
