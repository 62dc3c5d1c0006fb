/* SPDX-License-Identifier: MIT */
/*
 * leap wire protocol: what leap-swapd (through user/memclient) and the
 * leap-memd memory servers say to each other.  Versioned and length-checked:
 * every message is a fixed header plus `length` payload bytes, and the
 * decoder refuses anything whose lengths, counts or offsets do not add up
 * before a single payload byte is trusted.
 *
 * All integers are little-endian.  Header, LEAP_WIRE_HDR_SIZE bytes:
 *   0  u32 magic      LEAP_WIRE_MAGIC
 *   4  u16 version    LEAP_WIRE_VERSION (no other version is accepted)
 *   6  u8  opcode     LEAP_WOP_*
 *   7  u8  flags      LEAP_WF_REPLY on replies; other bits must be 0
 *   8  u64 req_id     chosen by the client, echoed in the reply
 *   16 u32 length     payload bytes that follow (<= LEAP_WIRE_MAX_PAYLOAD)
 *   20 u32 reserved   0
 *
 * Payloads (request / reply):
 *   HELLO  req  u16 min_version, u16 max_version, u32 reserved (0),
 *               u8 client_nonce[32]
 *          rep  u32 page_size, u32 max_batch, u64 capacity_pages,
 *               u64 instance (random per server start), u8 server_nonce[32],
 *               u8 server_mac[32] = HMAC-SHA256(secret, "S" client_nonce
 *               server_nonce)
 *   AUTH   req  u8 mac[32] = HMAC-SHA256(secret, "C" server_nonce client_nonce)
 *          rep  (empty)
 *   READ   req  u32 dev, u32 count, u64 offset[count]
 *          rep  u32 dev, u32 count, u64 present (bit i: page i was ever
 *               written on this server), count pages (absent ones zeroed)
 *   WRITE  req  u32 dev, u32 count, u64 offset[count], count pages
 *          rep  u32 dev, u32 count
 *   FREE   req  u32 dev, u32 count, u64 offset[count]  (the slots a discard
 *               released: the server forgets them and reuses their memory)
 *          rep  u32 dev, u32 count
 *   STATS  req  (empty)
 *          rep  u32 n, u32 reserved (0), u64 value[n]  (LEAP_WSTAT_* order)
 *   ERROR  rep  u32 code (LEAP_WERR_*), u32 msg_len, msg_len bytes of text
 * Offsets are byte offsets on the device, page-aligned and below
 * LEAP_WIRE_MAX_OFFSET; 1 <= count <= LEAP_WIRE_MAX_BATCH.
 *
 * Authentication is mutual: the client checks the server's MAC before it
 * trusts the server with a single page (an impostor on the port would
 * otherwise receive swapped memory), the server checks the client's before
 * it serves one.  The role byte keeps either answer from being replayed as
 * the other.
 *
 * A connection must HELLO then AUTH before anything else; the server closes
 * it after any error except LEAP_WERR_RANGE / LEAP_WERR_NOSPACE (the message
 * itself was well-formed, so the stream is still in sync).
 */
#ifndef LEAP_WIRE_H
#define LEAP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define LEAP_WIRE_MAGIC	     0x5750414CU /* "LAPW" read as little-endian bytes */
#define LEAP_WIRE_VERSION    1
#define LEAP_WIRE_HDR_SIZE   24
#define LEAP_WIRE_PAGE_SIZE  4096
#define LEAP_WIRE_MAX_BATCH  64 /* pages per READ/WRITE: one u64 presence mask */
#define LEAP_WIRE_NONCE_LEN  32
#define LEAP_WIRE_MAC_LEN    32
#define LEAP_WIRE_MAX_ERRMSG 128
#define LEAP_WIRE_MAX_STATS  32
/* 256 TiB per device: far beyond any swap device, small enough that
 * offset + page size never overflows and a bogus offset is caught early. */
#define LEAP_WIRE_MAX_OFFSET (1ULL << 48)
#define LEAP_WIRE_IO_HDR     8	/* u32 dev, u32 count */
#define LEAP_WIRE_FH_MAX     16 /* regions per FH_MOVE list (LEAP_FH_MAX_SPAN) */
/* The largest payload: a full WRITE request. */
#define LEAP_WIRE_MAX_PAYLOAD                                                            \
	(LEAP_WIRE_IO_HDR + LEAP_WIRE_MAX_BATCH * (8 + LEAP_WIRE_PAGE_SIZE))
#define LEAP_WIRE_MAX_MSG (LEAP_WIRE_HDR_SIZE + LEAP_WIRE_MAX_PAYLOAD)

#define LEAP_WIRE_HELLO_REQ_LEN (8 + LEAP_WIRE_NONCE_LEN)
#define LEAP_WIRE_HELLO_REP_LEN (4 + 4 + 8 + 8 + LEAP_WIRE_NONCE_LEN + LEAP_WIRE_MAC_LEN)

enum leap_wire_op {
	LEAP_WOP_HELLO = 1,
	LEAP_WOP_AUTH = 2,
	LEAP_WOP_READ = 3,
	LEAP_WOP_WRITE = 4,
	LEAP_WOP_STATS = 5,
	LEAP_WOP_ERROR = 6,
	LEAP_WOP_MAP = 7,     /* one-sided transports only (RDMA): see below */
	LEAP_WOP_FH_MOVE = 8, /* RDMA with a pin budget (Firehose): see below */
	LEAP_WOP_FREE = 9,
	LEAP_WOP_MAX = LEAP_WOP_FREE,
};

#define LEAP_WF_REPLY 0x01

/* Error codes: on the wire in ERROR replies, and (negated) as the decoder's
 * return values. */
enum leap_wire_err {
	LEAP_WERR_OK = 0,
	LEAP_WERR_SHORT = 1,   /* fewer bytes than the header/payload needs */
	LEAP_WERR_MAGIC = 2,   /* bad magic */
	LEAP_WERR_VERSION = 3, /* unsupported version */
	LEAP_WERR_OP = 4,      /* unknown opcode or flags */
	LEAP_WERR_LENGTH = 5,  /* length field disagrees with the payload */
	LEAP_WERR_BATCH = 6,   /* count 0 or above LEAP_WIRE_MAX_BATCH */
	LEAP_WERR_OFFSET = 7,  /* unaligned or beyond LEAP_WIRE_MAX_OFFSET */
	LEAP_WERR_AUTH = 8,    /* authentication failed or missing */
	LEAP_WERR_STATE = 9,   /* message not allowed now (e.g. READ before AUTH) */
	LEAP_WERR_RANGE = 10,  /* offset beyond what the server holds */
	LEAP_WERR_NOSPACE = 11,
	LEAP_WERR_INTERNAL = 12,
	LEAP_WERR_MAX = LEAP_WERR_INTERNAL,
};

enum leap_wire_stat {
	LEAP_WSTAT_CAPACITY_PAGES,
	LEAP_WSTAT_USED_PAGES,
	LEAP_WSTAT_READ_REQS,
	LEAP_WSTAT_WRITE_REQS,
	LEAP_WSTAT_PAGES_READ,
	LEAP_WSTAT_PAGES_WRITTEN,
	LEAP_WSTAT_CLIENTS,	  /* connected now */
	LEAP_WSTAT_CLIENTS_TOTAL, /* accepted since start */
	LEAP_WSTAT_AUTH_FAILURES,
	LEAP_WSTAT_BAD_MESSAGES,
	LEAP_WSTAT_MAP_REQS, /* MAP requests (RDMA: pages then move one-sided) */
	LEAP_WSTAT_PAGES_MAPPED,
	LEAP_WSTAT_MR_REGS, /* memory registrations (RDMA) */
	LEAP_WSTAT_MR_DEREGS,
	LEAP_WSTAT_MR_BYTES, /* bytes registered now */
	/* Firehose (leap-memd --pin-budget; all 0 without it) */
	LEAP_WSTAT_FH_BUDGET,	   /* M: bytes the server may pin */
	LEAP_WSTAT_FH_REGION_SIZE, /* bytes per region */
	LEAP_WSTAT_FH_SHARE,	   /* p: regions each client may hold */
	LEAP_WSTAT_FH_MOVES,	   /* move requests served */
	LEAP_WSTAT_FH_REFUSED,	   /* move requests refused (over the share) */
	LEAP_WSTAT_FH_VICTIM_HITS, /* pins served from the victim FIFO */
	LEAP_WSTAT_FH_PINNED,	   /* bytes pinned now */
	LEAP_WSTAT_FH_PINNED_PEAK, /* the most ever pinned at once (<= budget) */
	LEAP_WSTAT_PAGES_FREED,	   /* pages FREE released */
	LEAP_WSTAT_NR,
};

struct leap_wire_hdr {
	uint32_t magic;
	uint16_t version;
	uint8_t opcode;
	uint8_t flags;
	uint64_t req_id;
	uint32_t length;
};

/* A decoded message.  Pointers point into the decoded buffer. */
struct leap_wire_msg {
	struct leap_wire_hdr hdr;
	union {
		struct {
			uint16_t min_version, max_version;
			const uint8_t *nonce;
		} hello;
		struct {
			uint32_t page_size, max_batch;
			uint64_t capacity_pages, instance;
			const uint8_t *nonce, *mac;
		} hello_rep;
		struct {
			const uint8_t *mac;
		} auth;
		struct {
			uint32_t dev, count;
			uint64_t present;		      /* READ reply */
			uint64_t offset[LEAP_WIRE_MAX_BATCH]; /* requests */
			const uint8_t *pages;		      /* WRITE req, READ rep */
		} io;
		struct {
			uint32_t n;
			uint64_t value[LEAP_WIRE_MAX_STATS];
		} stats;
		struct {
			uint32_t dev, count, flags; /* flags: both */
			uint32_t rkey;		    /* the rest: reply */
			uint64_t present, base, len;
			uint64_t offset[LEAP_WIRE_MAX_BATCH]; /* request */
			uint32_t idx[LEAP_WIRE_MAX_BATCH];    /* reply */
		} map;
		struct {
			uint32_t nunpin, npin;
			uint32_t unpin[LEAP_WIRE_FH_MAX]; /* request */
			uint32_t pin[LEAP_WIRE_FH_MAX];	  /* request */
			uint32_t status, flags, share;	  /* the rest: reply */
			uint64_t base, size, region_size;
			uint32_t rkey[LEAP_WIRE_FH_MAX];
		} fh;
		struct {
			uint32_t code, msg_len;
			const char *msg; /* not NUL-terminated */
		} error;
	} u;
};

/* Names for logs; never NULL. */
const char *leap_wire_op_name(unsigned op);
const char *leap_wire_err_name(unsigned err);

/*
 * Decodes and validates a header from len bytes.  Returns 0, or
 * -LEAP_WERR_SHORT / _MAGIC / _VERSION / _OP / _LENGTH.  A transport reads
 * the header first and uses this to refuse an oversize length before
 * reading (or allocating for) the payload.
 */
int leap_wire_decode_hdr(const void *buf, size_t len, struct leap_wire_hdr *h);

/*
 * Decodes one whole message (header + payload, exactly len bytes) into m,
 * validating every field.  Returns 0 or a negative LEAP_WERR_*.
 */
int leap_wire_decode(const void *buf, size_t len, struct leap_wire_msg *m);

/*
 * Encoders write into buf (cap bytes) and return the message size, or -1 if
 * cap is too small or an argument is out of range (count, offsets, ...).
 */
long leap_wire_enc_hello(void *buf, size_t cap, uint64_t id,
			 const uint8_t nonce[LEAP_WIRE_NONCE_LEN]);
long leap_wire_enc_hello_rep(void *buf, size_t cap, uint64_t id, uint64_t capacity_pages,
			     uint64_t instance, const uint8_t nonce[LEAP_WIRE_NONCE_LEN],
			     const uint8_t mac[LEAP_WIRE_MAC_LEN]);
long leap_wire_enc_auth(void *buf, size_t cap, uint64_t id,
			const uint8_t mac[LEAP_WIRE_MAC_LEN]);
long leap_wire_enc_empty(void *buf, size_t cap, unsigned op, unsigned flags, uint64_t id);
/*
 * READ / WRITE requests: header, dev, count and offsets.  For a WRITE the
 * header's length includes count pages, which the caller sends right after
 * the returned bytes (so pages need no copy).
 */
long leap_wire_enc_io_req(void *buf, size_t cap, unsigned op, uint64_t id, uint32_t dev,
			  uint32_t count, const uint64_t *offset);
/* READ reply prefix (the caller appends count pages), WRITE reply and FREE
 * reply (the same shape: dev, count).  enc_io_req also encodes FREE. */
long leap_wire_enc_read_rep(void *buf, size_t cap, uint64_t id, uint32_t dev,
			    uint32_t count, uint64_t present);
long leap_wire_enc_write_rep(void *buf, size_t cap, uint64_t id, uint32_t dev,
			     uint32_t count);
long leap_wire_enc_free_rep(void *buf, size_t cap, uint64_t id, uint32_t dev,
			    uint32_t count);
long leap_wire_enc_stats_rep(void *buf, size_t cap, uint64_t id, const uint64_t *value,
			     uint32_t n);
long leap_wire_enc_error(void *buf, size_t cap, uint64_t id, uint32_t code,
			 const char *msg);

/*
 * MAP (RDMA transport only; a TCP server answers ERROR OP).  Pages then move
 * with one-sided RDMA READ/WRITE on the server's exported page store, so the
 * client must learn where each page lives:
 *   request: u32 dev, u32 count, u32 flags (LEAP_WMAP_ALLOC: allocate absent
 *            pages, all or nothing, else ERROR NOSPACE), u32 0, u64 offset[count]
 *   reply:   u32 dev, u32 count, u64 present, u32 rkey, u32 flags,
 *            u64 base, u64 len (the exported region), u32 idx[count]
 * flags LEAP_WMAP_REP_FH: the server pins its store under a budget
 * (Firehose): rkey is 0 and means nothing; the client reaches a page only
 * through a firehose to its region, obtained with FH_MOVE.
 * Page i of the request is at base + idx[i] * PAGE_SIZE when present bit i
 * is set; idx[i] is 0 otherwise.  The decoder refuses a reply whose region
 * wraps or is not page-aligned, or any page outside it: a client never
 * aims an RDMA operation outside what the server exported.  Only after AUTH.
 */
#define LEAP_WMAP_ALLOC	      0x1
#define LEAP_WMAP_REP_FH      0x1
#define LEAP_WIRE_MAP_REQ_HDR 16
#define LEAP_WIRE_MAP_REP_HDR 40
long leap_wire_enc_map_req(void *buf, size_t cap, uint64_t id, uint32_t dev,
			   uint32_t count, uint32_t flags, const uint64_t *offset);
long leap_wire_enc_map_rep(void *buf, size_t cap, uint64_t id, uint32_t dev,
			   uint32_t count, uint64_t present, uint32_t rkey,
			   uint32_t flags, uint64_t base, uint64_t len,
			   const uint32_t *idx);

/*
 * FH_MOVE (RDMA with a pin budget only; docs/registration.md, Firehose):
 * the store [base, base + size) is registered on demand in regions of
 * region_size bytes (region i at base + i * region_size), and each client
 * may hold at most `share` of them.  A move gives some up and asks for
 * others:
 *   request: u32 nunpin, u32 npin, u32 unpin[nunpin], u32 pin[npin]
 *            (each list <= LEAP_WIRE_FH_MAX; both empty: just the geometry)
 *   reply:   u32 status (0, or a positive errno: EDQUOT over the share,
 *            EINVAL a bad list, else a registration failure), u32 flags
 *            (LEAP_WFH_UNPINNED: the unpins took effect), u32 share,
 *            u32 npin (the request's on success, else 0), u64 base,
 *            u64 size, u64 region_size, u32 rkey[npin]
 * The decoder refuses a geometry that is not page-aligned, wraps, has a
 * region size that is not a power of two of at least a page, or a size
 * that is not whole regions.  The client checks base and size against
 * MAP's exported region, so every page it aims at lies inside one region.
 */
#define LEAP_WFH_UNPINNED    0x1
#define LEAP_WIRE_FH_REQ_HDR 8
#define LEAP_WIRE_FH_REP_HDR 40
long leap_wire_enc_fh_req(void *buf, size_t cap, uint64_t id, uint32_t nunpin,
			  const uint32_t *unpin, uint32_t npin, const uint32_t *pin);
long leap_wire_enc_fh_rep(void *buf, size_t cap, uint64_t id, uint32_t status,
			  uint32_t flags, uint32_t share, uint64_t base, uint64_t size,
			  uint64_t region_size, uint32_t npin, const uint32_t *rkey);

/* ---- authentication (user/wire/auth.c, OpenSSL libcrypto) --------------- */

#define LEAP_SECRET_MIN 16
#define LEAP_SECRET_MAX 4096

/* Fills nonce from the OS CSPRNG; 0 or -1. */
int leap_wire_nonce(uint8_t nonce[LEAP_WIRE_NONCE_LEN]);
#define LEAP_WIRE_ROLE_CLIENT 'C'
#define LEAP_WIRE_ROLE_SERVER 'S'
/* mac = HMAC-SHA256(secret, role || a || b); 0 or -1.  The client answers
 * with (server nonce, client nonce), the server with (client nonce, server
 * nonce). */
int leap_wire_mac(const uint8_t *secret, size_t secret_len, uint8_t role,
		  const uint8_t a[LEAP_WIRE_NONCE_LEN],
		  const uint8_t b[LEAP_WIRE_NONCE_LEN], uint8_t mac[LEAP_WIRE_MAC_LEN]);
/* Constant-time check of the other side's answer; 1 if it matches. */
int leap_wire_mac_ok(const uint8_t *secret, size_t secret_len, uint8_t role,
		     const uint8_t a[LEAP_WIRE_NONCE_LEN],
		     const uint8_t b[LEAP_WIRE_NONCE_LEN],
		     const uint8_t mac[LEAP_WIRE_MAC_LEN]);
/*
 * Reads a shared secret from path: a regular file (symlinks refused) with
 * no group or other permission bits (0600 or 0400), LEAP_SECRET_MIN..MAX
 * bytes after one trailing newline is stripped.  Returns the length, or -1
 * with a reason in err.
 */
long leap_secret_load(const char *path, uint8_t *secret, size_t cap, char *err,
		      size_t errlen);

#endif /* LEAP_WIRE_H */
