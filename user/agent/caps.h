/* SPDX-License-Identifier: MIT */
#ifndef LEAP_AGENT_CAPS_H
#define LEAP_AGENT_CAPS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * After BPF is loaded and attached, keep only what the agent still uses:
 * CAP_SYS_NICE (process_madvise), CAP_SYS_PTRACE (PTRACE_MODE_READ on other
 * users' processes: pidfd and /proc/PID/pagemap), CAP_DAC_READ_SEARCH
 * permitted only (agent_open_proc_file()) and CAP_BPF, or
 * CAP_SYS_ADMIN on kernels older than 5.8, for target map updates on
 * reload.  keep_sys_admin: also CAP_SYS_ADMIN, for backend mode when
 * processes the agent must read swap slots of can appear later (a
 * /proc/PID/pagemap file shows them only when opened with CAP_SYS_ADMIN,
 * swapslot.h).  Writes the kept set into desc.  Returns 0 or -errno.
 */
int agent_drop_caps(char *desc, size_t len, bool keep_sys_admin);
/*
 * open(2) of a file under /proc/PID with CAP_DAC_READ_SEARCH effective on
 * the calling thread for the open alone.  /proc/PID/pagemap is mode 0400,
 * owned by the process's user (fs/proc/base.c: REG("pagemap", S_IRUSR));
 * the file permission check (generic_permission()) comes before the ptrace
 * one, so root without CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH is refused a
 * PostgreSQL backend's (user postgres), CAP_SYS_PTRACE or not.
 * agent_drop_caps() keeps CAP_DAC_READ_SEARCH permitted, not effective;
 * capabilities are per thread (capset(2)), so the agent's other threads
 * never hold it.  Opens plainly where it is not permitted.  Sets errno.
 */
int agent_open_proc_file(const char *path, int flags);
/* The effective set of this process as text (cap_to_text). */
int agent_caps_text(char *desc, size_t len);

#endif
