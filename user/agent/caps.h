/* SPDX-License-Identifier: MIT */
#ifndef LEAP_AGENT_CAPS_H
#define LEAP_AGENT_CAPS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * After BPF is loaded and attached, keep only what the agent still uses:
 * CAP_SYS_NICE (process_madvise), CAP_SYS_PTRACE (PTRACE_MODE_READ on other
 * users' processes: pidfd and /proc/PID/pagemap) and CAP_BPF, or
 * CAP_SYS_ADMIN on kernels older than 5.8, for target map updates on
 * reload.  keep_sys_admin: also CAP_SYS_ADMIN, for backend mode when
 * processes the agent must read swap slots of can appear later (a
 * /proc/PID/pagemap file shows them only when opened with CAP_SYS_ADMIN,
 * swapslot.h).  Writes the kept set into desc.  Returns 0 or -errno.
 */
int agent_drop_caps(char *desc, size_t len, bool keep_sys_admin);
/* The effective set of this process as text (cap_to_text). */
int agent_caps_text(char *desc, size_t len);

#endif
