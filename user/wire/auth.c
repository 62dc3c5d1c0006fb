// SPDX-License-Identifier: MIT
/*
 * Shared-secret challenge-response for the wire protocol.  The crypto is
 * OpenSSL's libcrypto (HMAC-SHA256, RAND_bytes, CRYPTO_memcmp): a
 * hand-written HMAC or a rand()-based nonce would be the weak link of the
 * only thing that keeps other local users away from swapped memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "leap/wire.h"

int leap_wire_nonce(uint8_t nonce[LEAP_WIRE_NONCE_LEN])
{
	return RAND_bytes(nonce, LEAP_WIRE_NONCE_LEN) == 1 ? 0 : -1;
}

int leap_wire_mac(const uint8_t *secret, size_t secret_len, uint8_t role,
		  const uint8_t a[LEAP_WIRE_NONCE_LEN],
		  const uint8_t b[LEAP_WIRE_NONCE_LEN], uint8_t mac[LEAP_WIRE_MAC_LEN])
{
	uint8_t msg[1 + 2 * LEAP_WIRE_NONCE_LEN];
	unsigned int len = 0;

	if (secret_len > LEAP_SECRET_MAX)
		return -1;
	msg[0] = role;
	memcpy(msg + 1, a, LEAP_WIRE_NONCE_LEN);
	memcpy(msg + 1 + LEAP_WIRE_NONCE_LEN, b, LEAP_WIRE_NONCE_LEN);
	if (!HMAC(EVP_sha256(), secret, (int)secret_len, msg, sizeof(msg), mac, &len) ||
	    len != LEAP_WIRE_MAC_LEN)
		return -1;
	return 0;
}

int leap_wire_mac_ok(const uint8_t *secret, size_t secret_len, uint8_t role,
		     const uint8_t a[LEAP_WIRE_NONCE_LEN],
		     const uint8_t b[LEAP_WIRE_NONCE_LEN],
		     const uint8_t mac[LEAP_WIRE_MAC_LEN])
{
	uint8_t want[LEAP_WIRE_MAC_LEN];
	int ok;

	if (leap_wire_mac(secret, secret_len, role, a, b, want))
		return 0;
	ok = CRYPTO_memcmp(want, mac, LEAP_WIRE_MAC_LEN) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}

static long fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

long leap_secret_load(const char *path, uint8_t *secret, size_t cap, char *err,
		      size_t errlen)
{
	uint8_t buf[LEAP_SECRET_MAX + 2];
	struct stat st;
	size_t n = 0;
	ssize_t r;
	int fd;

	/* O_NOFOLLOW: a symlink could point the check at another file. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		close(fd);
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errlen, "%s: not a regular file", path);
	}
	if (st.st_mode & 077) {
		close(fd);
		return fail(err, errlen,
			    "%s: mode %04o gives group/other access; chmod 600 it", path,
			    (unsigned)(st.st_mode & 07777));
	}
	while (n < sizeof(buf)) {
		r = read(fd, buf + n, sizeof(buf) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			return fail(err, errlen, "%s: %s", path, strerror(errno));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n < LEAP_SECRET_MIN || n > LEAP_SECRET_MAX || n > cap) {
		OPENSSL_cleanse(buf, sizeof(buf));
		return fail(err, errlen, "%s: secret must be %d..%d bytes, got %zu%s",
			    path, LEAP_SECRET_MIN, LEAP_SECRET_MAX, n,
			    n > LEAP_SECRET_MAX ? "+" : "");
	}
	memcpy(secret, buf, n);
	OPENSSL_cleanse(buf, sizeof(buf));
	return (long)n;
}
