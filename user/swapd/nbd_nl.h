/* SPDX-License-Identifier: MIT */
/* The kernel NBD driver's netlink commands leap-swapd uses (nbd_nl.c). */
#ifndef LEAP_SWAPD_NBD_NL_H
#define LEAP_SWAPD_NBD_NL_H

#include <stddef.h>
#include <stdint.h>

/*
 * NBD_CMD_CONNECT: nfds sockets (this process's fds; the driver serves one
 * hardware queue per socket, and wants NBD_FLAG_CAN_MULTI_CONN in
 * server_flags for more than one), size bytes in blocks of block bytes,
 * server_flags (NBD_FLAG_*), dead_timeout_s (NBD_ATTR_DEAD_CONN_TIMEOUT; 0:
 * none, I/O fails as soon as every connection is dead).  *index: the
 * device wanted, or -1 for any free one; set to the device connected.  0,
 * or -1 with the reason in err (the driver missing has its own message).
 */
int nbd_nl_connect(const int *fds, int nfds, uint64_t size, uint64_t block,
		   uint64_t server_flags, unsigned dead_timeout_s, int *index, char *err,
		   size_t errlen);
/*
 * NBD_CMD_RECONFIGURE of the configured device nbd<index>: each socket
 * replaces one dead connection (nbd_reconnect_socket; one with no dead slot
 * left is dropped by the driver).  0, or -1 with the reason in err.
 */
int nbd_nl_reconfigure(int index, const int *fds, int nfds, unsigned dead_timeout_s,
		       char *err, size_t errlen);
/* 0 if the driver is there (its netlink family resolves), else -1 and why. */
int nbd_nl_probe(char *err, size_t errlen);
/* NBD_CMD_DISCONNECT: the kernel sends NBD_CMD_DISC and shuts its end. */
int nbd_nl_disconnect(int index, char *err, size_t errlen);

#endif /* LEAP_SWAPD_NBD_NL_H */
