/* SPDX-License-Identifier: MIT */
/*
 * The transport under the wire protocol, behind a small vtable so that an
 * RDMA verbs transport can slot in beside TCP with the same semantics: a
 * connection carries a byte stream of whole wire messages, is non-blocking,
 * and exposes one pollable fd that becomes readable when recv can make
 * progress (for verbs: the completion channel's fd).  Messages are never
 * interleaved: a sender writes one message completely before the next.
 *
 * One-sided transports (RDMA, user/wire/rdma.c) add the optional calls at
 * the end: a server exports memory and grants access to a peer once it has
 * authenticated; a client moves whole pages with RDMA READ/WRITE at remote
 * addresses it learned through the protocol's MAP message.  A byte stream
 * is the wrong shape for that (the point is that the server's CPU does not
 * copy pages), so the page path is a separate call that memclient uses when
 * it is there, and the stream stays for HELLO/AUTH/STATS/MAP.  A stream
 * send never returns -EAGAIN on such a transport: it waits for send slots
 * (bounded), since the pollable fd (a completion channel) never reports
 * writability.  docs/backend.md explains the choice.
 */
#ifndef LEAP_WIRE_TRANSPORT_H
#define LEAP_WIRE_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

struct leap_transport;

/* Memory a server exports to authenticated peers (one-sided transports). */
struct leap_export {
	uint64_t base, len;
	uint32_t rkey;
};

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

	/* ---- optional: one-sided transports only (NULL for TCP) ---- */
	/* Server: registers [addr, addr + len) for remote READ/WRITE through
	 * the listener's device (once; undone by close of the listener). */
	int (*export_mem)(struct leap_conn *l, void *addr, size_t len,
			  struct leap_export *ex, char *err, size_t errlen);
	/* Server with a pin budget (Firehose) instead of export_mem: registers
	 * one region [addr, addr + len) for remote READ/WRITE through the
	 * listener's device; 0 with its rkey and a handle for dereg_region, or
	 * -errno. */
	int (*reg_region)(struct leap_conn *l, void *addr, size_t len, uint32_t *rkey,
			  void **handle);
	void (*dereg_region)(struct leap_conn *l, void *handle);
	/* Server: the peer has authenticated: let it reach exported memory.
	 * Before this a connection has no remote access at all, whatever
	 * rkey it guesses. */
	int (*grant)(struct leap_conn *c);
	/* Client: n (<= LEAP_WIRE_MAX_BATCH) pages at remote addresses raddr[i]
	 * (rkey) into out[i], or from pages (n consecutive pages) to them.
	 * 0 or -errno; after an error the connection is unusable (close it:
	 * a page is never reported read or written unless it was). */
	int (*read_pages)(struct leap_conn *c, uint32_t rkey, const uint64_t *raddr,
			  uint32_t n, uint8_t *const *out, int64_t deadline_ms);
	int (*write_pages)(struct leap_conn *c, uint32_t rkey, const uint64_t *raddr,
			   uint32_t n, const void *pages, int64_t deadline_ms);
};

extern const struct leap_transport leap_tcp_transport;
/* RDMA verbs over RDMA CM (RC queue pairs); user/wire/rdma.c. */
extern const struct leap_transport leap_rdma_transport;

/* Transport by name ("tcp", "rdma"); NULL if unknown. */
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

struct addrinfo;
/* "ADDR:PORT" (or "[v6]:PORT") to addrinfo, stream sockets, numeric port;
 * passive for listeners.  0, or -EINVAL with the reason in err. */
int leap_addr_resolve(const char *addr, int passive, struct addrinfo **res, char *err,
		      size_t errlen);
/* A socket address as "ADDR:PORT" / "[v6]:PORT" ("?" if it cannot be). */
void leap_addr_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t n);

/* Splits "HOST:PORT" / "[HOST]:PORT" into host and port; 0 or -1. */
int leap_addr_split(const char *addr, char *host, size_t hostlen, char *port,
		    size_t portlen);

#endif /* LEAP_WIRE_TRANSPORT_H */
