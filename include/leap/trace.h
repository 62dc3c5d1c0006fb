/* SPDX-License-Identifier: MIT */
/*
 * Page-access traces: what leap-sim replays and what the agent records.
 *
 * Three formats share one record type:
 *  - text:   one access per line, "PAGE", "TID PAGE" or "PID TID PAGE";
 *            numbers are decimal, or hex with a 0x prefix;
 *  - memsim: the classic "%08x R|W" format, byte addresses in hex;
 *  - bin:    a versioned header then fixed-size little-endian records, so
 *            the agent can log millions of faults cheaply and a reader can
 *            reject a file it does not understand instead of misreading it.
 * Text formats accept '#' comments (whole line or trailing) and blank lines.
 * Every parse error names the file and line (text) or record (bin).
 *
 * Binary layout (all integers little-endian):
 *   header, LEAP_TRACE_HDR_SIZE bytes at offset 0:
 *     0  u8  magic[8]     LEAP_TRACE_MAGIC
 *     8  u32 version      LEAP_TRACE_VERSION; readers reject other versions
 *     12 u32 header_size  >= 32: readers skip bytes they do not know
 *     16 u32 record_size  >= 48, multiple of 8: readers skip the tail
 *     20 u32 flags        LEAP_TRACE_HF_*; unknown bits are rejected
 *     24 u32 page_shift   12 (pages of 4 KiB)
 *     28 u32 reserved     0
 *   records, record_size bytes each, from offset header_size:
 *     0  u64 page         virtual page number (address >> page_shift)
 *     8  u32 tid
 *     12 u32 pid          (tgid)
 *     16 u64 ts_ns        CLOCK_MONOTONIC / bpf_ktime_get_ns(), 0 if unknown
 *     24 u32 flags        LEAP_TRACE_F_* (the LEAP_EV_* bits of leap_event.h)
 *     28 u32 swap_type    swap device index when swap_offset is known
 *     32 u64 cgroup_id    cgroup v2 id, 0 if unknown
 *     40 u64 swap_offset  swap slot, LEAP_TRACE_NO_SWAP if unknown
 */
#ifndef LEAP_TRACE_H
#define LEAP_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* PNG-style: a non-ASCII first byte that no text trace starts with (so
 * one byte of lookahead tells the formats apart), and a LF to catch newline
 * mangling by text-mode transfers. */
#define LEAP_TRACE_MAGIC     "\x89LEAPTR\n"
#define LEAP_TRACE_MAGIC_LEN 8u
#define LEAP_TRACE_VERSION   1u
#define LEAP_TRACE_HDR_SIZE  32u
#define LEAP_TRACE_REC_SIZE  48u
/* Bounds a reader accepts for fields a future writer may grow. */
#define LEAP_TRACE_SIZE_MAX   4096u
#define LEAP_TRACE_PAGE_SHIFT 12u

/* Header flags. */
#define LEAP_TRACE_HF_TS     (1u << 0) /* ts_ns is meaningful */
#define LEAP_TRACE_HF_SWAP   (1u << 1) /* swap_offset/swap_type are meaningful */
#define LEAP_TRACE_HF_CGROUP (1u << 2) /* cgroup_id is meaningful */
#define LEAP_TRACE_HF_KNOWN  (LEAP_TRACE_HF_TS | LEAP_TRACE_HF_SWAP | LEAP_TRACE_HF_CGROUP)

/* Record flags: the same bits as LEAP_EV_* so the agent copies them. */
#define LEAP_TRACE_F_MAJOR (1u << 0)
#define LEAP_TRACE_F_SWAP  (1u << 1)
#define LEAP_TRACE_F_WRITE (1u << 2)

#define LEAP_TRACE_NO_SWAP (~0ULL)
/* Largest page number: a 64-bit byte address >> 12.  Larger values in a
 * text trace are typos, and the simulator's delta arithmetic relies on it. */
#define LEAP_TRACE_PAGE_MAX ((1ULL << 52) - 1)

struct leap_trace_rec {
	uint64_t page;
	uint32_t tid;
	uint32_t pid;
	uint64_t ts_ns;
	uint32_t flags;
	uint32_t swap_type;
	uint64_t cgroup_id;
	uint64_t swap_offset;
};

enum leap_trace_format {
	LEAP_TRACE_AUTO = 0, /* reader only: bin by magic, memsim by "R|W", else text */
	LEAP_TRACE_TEXT,
	LEAP_TRACE_MEMSIM,
	LEAP_TRACE_BIN,
};

const char *leap_trace_format_name(enum leap_trace_format f);
/* 0 and *out set on "auto", "text", "memsim" or "bin"; -1 otherwise. */
int leap_trace_format_parse(const char *s, enum leap_trace_format *out);

/* ---- Reader ----------------------------------------------------------- */

struct leap_trace_reader {
	FILE *f;
	const char *name;	    /* for messages; not copied */
	enum leap_trace_format fmt; /* AUTO until the first record decides */
	uint64_t line;		    /* text: line number; bin: records read */
	uint32_t rec_size;	    /* bin: record size from the header */
	uint32_t hdr_flags;	    /* bin: LEAP_TRACE_HF_* */
	char *buf;		    /* getline buffer / one binary record */
	size_t cap;
	char err[320]; /* "name:line: reason" after a -1 */
};

/*
 * Starts reading f (not closed by the reader).  fmt AUTO detects the
 * format; a binary header is read and validated here.  0 on success, -1
 * with r->err set.  Works on pipes: detection peeks one byte.
 */
int leap_trace_reader_open(struct leap_trace_reader *r, FILE *f, const char *name,
			   enum leap_trace_format fmt);
/* 1 and *rec filled, 0 at the end, -1 with r->err set (malformed input or
 * I/O error). */
int leap_trace_read(struct leap_trace_reader *r, struct leap_trace_rec *rec);
void leap_trace_reader_close(struct leap_trace_reader *r);

/* ---- Writer ----------------------------------------------------------- */

struct leap_trace_writer {
	FILE *f;
	enum leap_trace_format fmt; /* TEXT, MEMSIM or BIN */
	bool owns_file;		    /* opened from an fd: close fcloses */
	bool failed;		    /* a write failed; close reports it */
	uint64_t records;
};

/*
 * Starts a trace on f (BIN writes the header now; hdr_flags are
 * LEAP_TRACE_HF_*, ignored by text formats).  0 on success, -1 with errno.
 */
int leap_trace_writer_open(struct leap_trace_writer *w, FILE *f,
			   enum leap_trace_format fmt, uint32_t hdr_flags);
/* Same on a file descriptor; the writer works on a dup of fd, so the caller
 * still owns (and closes) fd. */
int leap_trace_writer_open_fd(struct leap_trace_writer *w, int fd,
			      enum leap_trace_format fmt, uint32_t hdr_flags);
/* Appends one record.  Text formats write what they can express (memsim:
 * byte address and R/W; text: pid/tid when non-zero).  0 or -1 with errno. */
int leap_trace_append(struct leap_trace_writer *w, const struct leap_trace_rec *rec);
/* Flushes (and fcloses an fd writer's stream).  -1 if any write failed. */
int leap_trace_writer_close(struct leap_trace_writer *w);

/* Encodes/decodes one binary record (exposed for tests and zero-copy users). */
void leap_trace_rec_encode(const struct leap_trace_rec *rec,
			   unsigned char out[LEAP_TRACE_REC_SIZE]);
void leap_trace_rec_decode(const unsigned char in[LEAP_TRACE_REC_SIZE],
			   struct leap_trace_rec *rec);

#ifdef __cplusplus
}
#endif
#endif /* LEAP_TRACE_H */
