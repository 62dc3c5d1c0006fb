/* SPDX-License-Identifier: MIT */
/* The kernel NBD driver's netlink commands leap-swapd uses (nbd_nl.c). */
#ifndef LEAP_SWAPD_NBD_NL_H
#define LEAP_SWAPD_NBD_NL_H

#include <stddef.h>
#include <stdint.h>

/*
 * NBD_CMD_CONNECT: one socket (sock_fd, this process's), size bytes in
 * blocks of block bytes, server_flags (NBD_FLAG_*).  *index: the device
 * wanted, or -1 for any free one; set to the device connected.  0, or -1
 * with the reason in err (the driver missing has its own message).
 */
int nbd_nl_connect(int sock_fd, uint64_t size, uint64_t block, uint64_t server_flags,
		   int *index, char *err, size_t errlen);
/* 0 if the driver is there (its netlink family resolves), else -1 and why. */
int nbd_nl_probe(char *err, size_t errlen);
/* NBD_CMD_DISCONNECT: the kernel sends NBD_CMD_DISC and shuts its end. */
int nbd_nl_disconnect(int index, char *err, size_t errlen);

#endif /* LEAP_SWAPD_NBD_NL_H */
