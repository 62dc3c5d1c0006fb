// SPDX-License-Identifier: MIT
/*
 * Trace reader and writer (formats: include/leap/trace.h).  The reader must
 * survive any input: every malformed line becomes an error message naming
 * the file and line, never a crash or a silently wrong record.
 */
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leap/trace.h"

_Static_assert(sizeof(LEAP_TRACE_MAGIC) - 1 == LEAP_TRACE_MAGIC_LEN, "magic length");

static const char *const format_names[] = {
	[LEAP_TRACE_AUTO] = "auto",
	[LEAP_TRACE_TEXT] = "text",
	[LEAP_TRACE_MEMSIM] = "memsim",
	[LEAP_TRACE_BIN] = "bin",
};

const char *leap_trace_format_name(enum leap_trace_format f)
{
	if ((unsigned)f < sizeof(format_names) / sizeof(format_names[0]))
		return format_names[f];
	return "?";
}

int leap_trace_format_parse(const char *s, enum leap_trace_format *out)
{
	for (unsigned i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (strcmp(s, format_names[i]) == 0) {
			*out = (enum leap_trace_format)i;
			return 0;
		}
	}
	return -1;
}

/* ---- little-endian encoding ------------------------------------------ */

static void put32(unsigned char *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void put64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

void leap_trace_rec_encode(const struct leap_trace_rec *rec,
			   unsigned char out[LEAP_TRACE_REC_SIZE])
{
	put64(out + 0, rec->page);
	put32(out + 8, rec->tid);
	put32(out + 12, rec->pid);
	put64(out + 16, rec->ts_ns);
	put32(out + 24, rec->flags);
	put32(out + 28, rec->swap_type);
	put64(out + 32, rec->cgroup_id);
	put64(out + 40, rec->swap_offset);
}

void leap_trace_rec_decode(const unsigned char in[LEAP_TRACE_REC_SIZE],
			   struct leap_trace_rec *rec)
{
	rec->page = get64(in + 0);
	rec->tid = get32(in + 8);
	rec->pid = get32(in + 12);
	rec->ts_ns = get64(in + 16);
	rec->flags = get32(in + 24);
	rec->swap_type = get32(in + 28);
	rec->cgroup_id = get64(in + 32);
	rec->swap_offset = get64(in + 40);
}

/* ---- reader ----------------------------------------------------------- */

__attribute__((format(printf, 2, 3))) static int fail(struct leap_trace_reader *r,
						      const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->fmt == LEAP_TRACE_BIN && r->line == 0)
		snprintf(r->err, sizeof(r->err), "%s: header: %s", r->name, msg);
	else if (r->fmt == LEAP_TRACE_BIN)
		snprintf(r->err, sizeof(r->err), "%s: record %" PRIu64 ": %s", r->name,
			 r->line, msg);
	else
		snprintf(r->err, sizeof(r->err), "%s:%" PRIu64 ": %s", r->name, r->line,
			 msg);
	return -1;
}

static int read_exact(FILE *f, void *buf, size_t n, size_t *got)
{
	*got = fread(buf, 1, n, f);
	return *got == n ? 0 : -1;
}

static int skip_bytes(FILE *f, size_t n)
{
	unsigned char tmp[256];
	size_t got;

	while (n > 0) {
		size_t chunk = n < sizeof(tmp) ? n : sizeof(tmp);

		if (read_exact(f, tmp, chunk, &got))
			return -1;
		n -= chunk;
	}
	return 0;
}

static int open_bin(struct leap_trace_reader *r)
{
	unsigned char h[LEAP_TRACE_HDR_SIZE];
	uint32_t version, hdr_size, rec_size, flags, shift;
	size_t got;

	r->fmt = LEAP_TRACE_BIN;
	r->line = 0;
	if (read_exact(r->f, h, sizeof(h), &got)) {
		if (ferror(r->f))
			return fail(r, "header: read error: %s", strerror(errno));
		return fail(r, "truncated header (%zu of %u bytes)", got,
			    LEAP_TRACE_HDR_SIZE);
	}
	if (memcmp(h, LEAP_TRACE_MAGIC, LEAP_TRACE_MAGIC_LEN) != 0)
		return fail(r, "not a leap binary trace (bad magic)");
	version = get32(h + 8);
	hdr_size = get32(h + 12);
	rec_size = get32(h + 16);
	flags = get32(h + 20);
	shift = get32(h + 24);
	if (version != LEAP_TRACE_VERSION)
		return fail(r, "unsupported version %u (this reader knows %u)", version,
			    LEAP_TRACE_VERSION);
	if (hdr_size < LEAP_TRACE_HDR_SIZE || hdr_size > LEAP_TRACE_SIZE_MAX)
		return fail(r, "bad header size %u", hdr_size);
	if (rec_size < LEAP_TRACE_REC_SIZE || rec_size > LEAP_TRACE_SIZE_MAX ||
	    rec_size % 8 != 0)
		return fail(r, "bad record size %u", rec_size);
	if (flags & ~LEAP_TRACE_HF_KNOWN)
		return fail(r, "unknown header flags 0x%x", flags & ~LEAP_TRACE_HF_KNOWN);
	if (shift != LEAP_TRACE_PAGE_SHIFT)
		return fail(r, "unsupported page shift %u", shift);
	if (skip_bytes(r->f, hdr_size - LEAP_TRACE_HDR_SIZE))
		return fail(r, "truncated header extension");
	r->rec_size = rec_size;
	r->hdr_flags = flags;
	r->buf = malloc(rec_size);
	if (!r->buf)
		return fail(r, "out of memory");
	r->cap = rec_size;
	return 0;
}

int leap_trace_reader_open(struct leap_trace_reader *r, FILE *f, const char *name,
			   enum leap_trace_format fmt)
{
	int c;

	memset(r, 0, sizeof(*r));
	r->f = f;
	r->name = name ? name : "<trace>";
	r->fmt = fmt;
	if (fmt == LEAP_TRACE_BIN)
		return open_bin(r);
	if (fmt != LEAP_TRACE_AUTO)
		return 0;
	/* One byte of lookahead is all ungetc guarantees, and all we need:
	 * the magic starts with a byte no text trace starts with. */
	c = getc(f);
	if (c == EOF) {
		if (ferror(f))
			return fail(r, "read error: %s", strerror(errno));
		return 0; /* empty: no records, whatever the format */
	}
	ungetc(c, f);
	if ((unsigned char)c == (unsigned char)LEAP_TRACE_MAGIC[0])
		return open_bin(r);
	return 0;
}

void leap_trace_reader_close(struct leap_trace_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->cap = 0;
}

static int read_bin(struct leap_trace_reader *r, struct leap_trace_rec *rec)
{
	size_t got;

	if (read_exact(r->f, r->buf, r->rec_size, &got)) {
		if (ferror(r->f))
			return fail(r, "read error: %s", strerror(errno));
		if (got == 0)
			return 0;
		r->line++;
		return fail(r, "truncated record (%zu of %u bytes)", got, r->rec_size);
	}
	r->line++;
	leap_trace_rec_decode((const unsigned char *)r->buf, rec);
	if (rec->page > LEAP_TRACE_PAGE_MAX)
		return fail(r, "page 0x%" PRIx64 " out of range", rec->page);
	return 1;
}

/*
 * Strict unsigned parse: digits only (strtoull alone would take a sign,
 * blanks and a second 0x), hex with 0x or when base is 16.
 */
static int parse_u64(const char *tok, int base, uint64_t *out)
{
	const char *p = tok;
	char *end;
	unsigned long long v;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (*p == '\0')
		return -1;
	for (const char *q = p; *q; q++)
		if (!(base == 16 ? isxdigit((unsigned char)*q)
				 : isdigit((unsigned char)*q)))
			return -1;
	errno = 0;
	v = strtoull(p, &end, base);
	if (errno || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

#define MAX_FIELDS 4

/* Splits at blanks, drops a '#' comment; returns the field count (up to
 * MAX_FIELDS + 1, meaning "too many"). */
static int split_fields(char *s, char *field[MAX_FIELDS + 1])
{
	int n = 0;
	char *hash = strchr(s, '#');

	if (hash)
		*hash = '\0';
	for (char *tok = strtok(s, " \t\r\n\v\f"); tok;
	     tok = strtok(NULL, " \t\r\n\v\f")) {
		field[n++] = tok;
		if (n > MAX_FIELDS)
			break;
	}
	return n;
}

static bool is_op(const char *s)
{
	return (s[0] == 'R' || s[0] == 'W' || s[0] == 'r' || s[0] == 'w') && s[1] == '\0';
}

static int parse_memsim(struct leap_trace_reader *r, char **field, int n,
			struct leap_trace_rec *rec)
{
	uint64_t addr;

	if (n != 2 || !is_op(field[1]))
		return fail(r, "expected \"ADDRESS R|W\" (memsim format)");
	if (parse_u64(field[0], 16, &addr))
		return fail(r, "bad hex address \"%.40s\"", field[0]);
	rec->page = addr >> LEAP_TRACE_PAGE_SHIFT;
	if (field[1][0] == 'W' || field[1][0] == 'w')
		rec->flags |= LEAP_TRACE_F_WRITE;
	return 1;
}

static int parse_id(struct leap_trace_reader *r, const char *tok, const char *what,
		    uint32_t *out)
{
	uint64_t v;

	if (parse_u64(tok, 10, &v) || v > UINT32_MAX)
		return fail(r, "bad %s \"%.40s\"", what, tok);
	*out = (uint32_t)v;
	return 0;
}

static int parse_text(struct leap_trace_reader *r, char **field, int n,
		      struct leap_trace_rec *rec)
{
	const char *page = field[n - 1];

	if (n > 3)
		return fail(r, "too many fields (expected [[PID] TID] PAGE)");
	if (n == 3 && parse_id(r, field[0], "pid", &rec->pid))
		return -1;
	if (n >= 2 && parse_id(r, field[n - 2], "tid", &rec->tid))
		return -1;
	if (parse_u64(page, 10, &rec->page))
		return fail(r, "bad page number \"%.40s\" (decimal, or hex with 0x)",
			    page);
	if (rec->page > LEAP_TRACE_PAGE_MAX)
		return fail(r, "page number %.40s out of range", page);
	return 1;
}

static int read_text(struct leap_trace_reader *r, struct leap_trace_rec *rec)
{
	char *field[MAX_FIELDS + 1];
	ssize_t len;
	int n;

	for (;;) {
		errno = 0;
		len = getline(&r->buf, &r->cap, r->f);
		if (len < 0) {
			if (ferror(r->f) || errno == ENOMEM)
				return fail(r, "read error: %s",
					    strerror(errno ? errno : EIO));
			return 0;
		}
		r->line++;
		if (memchr(r->buf, '\0', (size_t)len))
			return fail(r, "NUL byte in text trace (binary file?)");
		n = split_fields(r->buf, field);
		if (n > 0)
			break;
	}
	if (r->fmt == LEAP_TRACE_AUTO)
		r->fmt =
			(n == 2 && is_op(field[1])) ? LEAP_TRACE_MEMSIM : LEAP_TRACE_TEXT;
	memset(rec, 0, sizeof(*rec));
	rec->swap_offset = LEAP_TRACE_NO_SWAP;
	if (r->fmt == LEAP_TRACE_MEMSIM)
		return parse_memsim(r, field, n, rec);
	return parse_text(r, field, n, rec);
}

int leap_trace_read(struct leap_trace_reader *r, struct leap_trace_rec *rec)
{
	if (r->fmt == LEAP_TRACE_BIN)
		return read_bin(r, rec);
	return read_text(r, rec);
}

/* ---- writer ----------------------------------------------------------- */

static int write_header(struct leap_trace_writer *w, uint32_t hdr_flags)
{
	unsigned char h[LEAP_TRACE_HDR_SIZE] = {0};

	memcpy(h, LEAP_TRACE_MAGIC, LEAP_TRACE_MAGIC_LEN);
	put32(h + 8, LEAP_TRACE_VERSION);
	put32(h + 12, LEAP_TRACE_HDR_SIZE);
	put32(h + 16, LEAP_TRACE_REC_SIZE);
	put32(h + 20, hdr_flags);
	put32(h + 24, LEAP_TRACE_PAGE_SHIFT);
	if (fwrite(h, sizeof(h), 1, w->f) != 1) {
		w->failed = true;
		return -1;
	}
	return 0;
}

int leap_trace_writer_open(struct leap_trace_writer *w, FILE *f,
			   enum leap_trace_format fmt, uint32_t hdr_flags)
{
	memset(w, 0, sizeof(*w));
	if (!f || fmt == LEAP_TRACE_AUTO || (unsigned)fmt > LEAP_TRACE_BIN ||
	    (hdr_flags & ~LEAP_TRACE_HF_KNOWN)) {
		errno = EINVAL;
		return -1;
	}
	w->f = f;
	w->fmt = fmt;
	if (fmt == LEAP_TRACE_BIN)
		return write_header(w, hdr_flags);
	return 0;
}

int leap_trace_writer_open_fd(struct leap_trace_writer *w, int fd,
			      enum leap_trace_format fmt, uint32_t hdr_flags)
{
	int nfd = dup(fd);
	FILE *f;

	if (nfd < 0)
		return -1;
	f = fdopen(nfd, "w");
	if (!f) {
		int e = errno;

		close(nfd);
		errno = e;
		return -1;
	}
	if (leap_trace_writer_open(w, f, fmt, hdr_flags)) {
		int e = errno;

		fclose(f);
		memset(w, 0, sizeof(*w));
		errno = e;
		return -1;
	}
	w->owns_file = true;
	return 0;
}

int leap_trace_append(struct leap_trace_writer *w, const struct leap_trace_rec *rec)
{
	unsigned char buf[LEAP_TRACE_REC_SIZE];
	int rc;

	switch (w->fmt) {
	case LEAP_TRACE_BIN:
		leap_trace_rec_encode(rec, buf);
		rc = fwrite(buf, sizeof(buf), 1, w->f) == 1 ? 0 : -1;
		break;
	case LEAP_TRACE_MEMSIM:
		rc = fprintf(w->f, "%08" PRIx64 " %c\n",
			     rec->page << LEAP_TRACE_PAGE_SHIFT,
			     (rec->flags & LEAP_TRACE_F_WRITE) ? 'W' : 'R') < 0
			     ? -1
			     : 0;
		break;
	case LEAP_TRACE_TEXT:
		if (rec->pid)
			rc = fprintf(w->f, "%" PRIu32 " %" PRIu32 " 0x%" PRIx64 "\n",
				     rec->pid, rec->tid, rec->page);
		else if (rec->tid)
			rc = fprintf(w->f, "%" PRIu32 " 0x%" PRIx64 "\n", rec->tid,
				     rec->page);
		else
			rc = fprintf(w->f, "0x%" PRIx64 "\n", rec->page);
		rc = rc < 0 ? -1 : 0;
		break;
	default:
		errno = EINVAL;
		rc = -1;
	}
	if (rc)
		w->failed = true;
	else
		w->records++;
	return rc;
}

int leap_trace_writer_close(struct leap_trace_writer *w)
{
	int rc = w->failed ? -1 : 0;

	if (!w->f)
		return rc;
	if (fflush(w->f))
		rc = -1;
	if (w->owns_file && fclose(w->f))
		rc = -1;
	w->f = NULL;
	return rc;
}
