/* SPDX-License-Identifier: MIT */
/*
 * The transport under the wire protocol, behind a small vtable so that an
 * RDMA verbs transport can slot in beside TCP with the same semantics: a
 * connection carries a byte stream of whole wire messages, is non-blocking,
 * and exposes one pollable fd that becomes readable when recv can make
 * progress (for verbs: the completion channel's fd).  Messages are never
 * interleaved: a sender writes one message completely before the next.
 */
#ifndef LEAP_WIRE_TRANSPORT_H
#define LEAP_WIRE_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct leap_transport;

struct leap_conn {
	const struct leap_transport *t;
	int fd; /* pollable; -1 when closed */
	void *priv;
	char peer[64]; /* for logs */
};

struct leap_transport {
	const char *name;
	/* Listens on "ADDR:PORT" ("[v6]:PORT" too); port 0 picks one. */
	int (*listen)(struct leap_conn *l, const char *addr, char *err, size_t errlen);
	/* One pending connection, non-blocking; 0, or -errno (-EAGAIN: none). */
	int (*accept)(struct leap_conn *l, struct leap_conn *c);
	/* Connects within timeout_ms; the connection is non-blocking after. */
	int (*connect)(struct leap_conn *c, const char *addr, int timeout_ms, char *err,
		       size_t errlen);
	/* Bytes sent (possibly fewer than asked), or -errno (-EAGAIN). */
	ssize_t (*send)(struct leap_conn *c, const struct iovec *iov, int iovcnt);
	/* Bytes received, 0 at end of stream, or -errno (-EAGAIN). */
	ssize_t (*recv)(struct leap_conn *c, void *buf, size_t len);
	void (*close)(struct leap_conn *c);
	/* The bound address of a listener, "ADDR:PORT". */
	int (*local_addr)(struct leap_conn *l, char *buf, size_t len);
};

extern const struct leap_transport leap_tcp_transport;

/* Transport by name ("tcp"); NULL if unknown. */
const struct leap_transport *leap_transport_find(const char *name);

/*
 * Blocking helpers over a non-blocking connection for clients: the whole
 * iovec / exactly len bytes, or -errno (-ETIMEDOUT past deadline_ms of
 * CLOCK_MONOTONIC, -ECONNRESET at end of stream).
 */
int leap_conn_send_all(struct leap_conn *c, struct iovec *iov, int iovcnt,
		       int64_t deadline_ms);
int leap_conn_recv_all(struct leap_conn *c, void *buf, size_t len, int64_t deadline_ms);

int64_t leap_now_ms(void);

/* Splits "HOST:PORT" / "[HOST]:PORT" into host and port; 0 or -1. */
int leap_addr_split(const char *addr, char *host, size_t hostlen, char *port,
		    size_t portlen);

#endif /* LEAP_WIRE_TRANSPORT_H */
