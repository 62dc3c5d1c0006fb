// SPDX-License-Identifier: MIT
/*
 * leap-agent's backend link (user/agent/backend.c): the control protocol's
 * command formatting and reply parsing, the swap-type evidence, and a whole
 * exchange against a fake leap-swapd on a socketpair, including a reply
 * that does not fit the request and a peer that hangs up.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine_test.h"
#include "../../user/agent/backend.h"

static void format_prefetch(void **state)
{
	uint64_t slots[] = {1, 22, 18446744073709551615ULL};
	char buf[128];
	(void)state;

	assert_int_equal(backend_format_prefetch(buf, sizeof(buf), slots, 3),
			 strlen("PREFETCH 1 22 18446744073709551615\n"));
	assert_string_equal(buf, "PREFETCH 1 22 18446744073709551615\n");
	/* Too small: nothing, never a truncated command. */
	assert_int_equal(backend_format_prefetch(buf, 20, slots, 3), 0);
	assert_int_equal(backend_format_prefetch(buf, 10, slots, 0),
			 strlen("PREFETCH\n"));
}

static void parse_reply(void **state)
{
	uint64_t q = 0, d = 0, v = 0;
	(void)state;

	assert_int_equal(backend_parse_reply("OK queued=5 dropped=2", &q, &d), 0);
	assert_int_equal(q, 5);
	assert_int_equal(d, 2);
	assert_int_equal(backend_parse_reply("ERR slot 9 out of range", &q, &d), -EPROTO);
	assert_int_equal(backend_parse_reply("OK queued=5", &q, &d), -EPROTO);
	assert_int_equal(backend_parse_reply("OK queued=x dropped=0", &q, &d), -EPROTO);
	assert_int_equal(backend_parse_reply("OKAY queued=1 dropped=0", &q, &d), -EPROTO);
	/* Whole keys only: "hits" is not "evicted_hits" or "hitsx". */
	assert_int_equal(backend_parse_stat("OK evicted_hits=7 hits=3", "hits", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(backend_parse_stat("OK evicted_hits=7", "hits", &v), -ENOENT);
	assert_int_equal(backend_parse_stat("OK hitsx=1", "hits", &v), -ENOENT);
	assert_int_equal(backend_parse_stat("OK hits=99999999999999999999", "hits", &v),
			 -EPROTO);
}

/* A fake leap-swapd: answers each line with the reply it is given. */
struct fake {
	int fd;
	const char *reply; /* NULL: hang up on the first line */
	char last[256];
};

static void *fake_swapd(void *arg)
{
	struct fake *f = arg;
	char buf[256];
	ssize_t n;

	while ((n = read(f->fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		snprintf(f->last, sizeof(f->last), "%s", buf);
		if (!f->reply)
			break;
		/* One reply per line: pipelined commands arrive together. */
		for (char *p = buf; (p = strchr(p, '\n')); p++)
			if (write(f->fd, f->reply, strlen(f->reply)) < 0)
				goto out;
	}
out:
	close(f->fd);
	return NULL;
}

static void link_up(struct backend *b, struct fake *f, pthread_t *t, const char *reply)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	memset(b, 0, sizeof(*b));
	b->fd = sv[0];
	b->dev_pages = 100;
	b->notes = calloc(BACKEND_NOTES, sizeof(*b->notes));
	assert_non_null(b->notes);
	f->fd = sv[1];
	f->reply = reply;
	assert_int_equal(pthread_create(t, NULL, fake_swapd, f), 0);
}

static void exchange(void **state)
{
	uint64_t slots[] = {0, 5, 6, 100, 99};
	struct backend b;
	struct fake f = {0};
	pthread_t t;
	(void)state;

	link_up(&b, &f, &t, "OK queued=3 dropped=0\n");
	/* Slot 0 (the swap header) and 100 (past the device) never go out. */
	assert_int_equal(backend_prefetch(&b, slots, 5), 3);
	assert_string_equal(f.last, "PREFETCH 5 6 99\n");
	assert_int_equal(b.st.out_of_range, 2);
	assert_int_equal(b.st.queued, 3);
	/* A reply that does not account for the batch is a protocol error. */
	f.reply = "OK queued=1 dropped=0\n";
	assert_int_equal(backend_prefetch(&b, slots + 1, 2), -EPROTO);
	backend_close(&b);
	pthread_join(t, NULL);
}

/*
 * The device's swap type from evidence: pagemap showed (type, offset) for
 * a page, then a fault on that page read device slot offset.
 */
static void type_evidence(void **state)
{
	struct backend b;
	(void)state;

	memset(&b, 0, sizeof(b));
	b.notes = calloc(BACKEND_NOTES, sizeof(*b.notes));
	assert_non_null(b.notes);
	b.swap_type = 0; /* /proc/swaps position, wrong after a swapoff hole */
	/* Another page, another process, another slot: no evidence. */
	backend_note(&b, 10, 0x1000, 1, 500);
	assert_false(backend_confirm(&b, 10, 0x1001, 500));
	assert_false(backend_confirm(&b, 11, 0x1000, 500));
	assert_false(backend_confirm(&b, 10, 0x1000, 501));
	assert_int_equal(b.st.type_votes, 0);
	/* Type 1 confirmed SWAPSLOT_VOTES_SWITCH times: the agent switches. */
	for (int i = 0; i < SWAPSLOT_VOTES_SWITCH - 1; i++) {
		backend_note(&b, 10, 0x2000 + i, 1, 600 + i);
		assert_false(backend_confirm(&b, 10, 0x2000 + i, 600 + i));
		/* a note is used once */
		assert_false(backend_confirm(&b, 10, 0x2000 + i, 600 + i));
	}
	backend_note(&b, 10, 0x3000, 1, 700);
	assert_true(backend_confirm(&b, 10, 0x3000, 700));
	assert_int_equal(b.swap_type, 1);
	assert_int_equal(b.st.type_switches, 1);
	assert_int_equal(b.st.type_votes, SWAPSLOT_VOTES_SWITCH);
	free(b.notes);
}

static void hangup(void **state)
{
	uint64_t slots[] = {5};
	struct backend b;
	struct fake f = {0};
	pthread_t t;
	(void)state;

	link_up(&b, &f, &t, NULL);
	assert_int_equal(backend_prefetch(&b, slots, 1), -ECONNRESET);
	assert_int_equal(b.fd, -1);
	assert_int_equal(backend_prefetch(&b, slots, 1), -ENOTCONN);
	assert_int_equal(b.st.errors, 1);
	backend_close(&b);
	pthread_join(t, NULL);
}

/*
 * Pushes that do not wait: the replies are read by later calls, counted,
 * and all of them before a command that waits for its own.
 */
static void async_push(void **state)
{
	uint64_t slots[] = {5, 6}, v = 0;
	struct backend b;
	struct fake f = {0};
	pthread_t t;
	(void)state;

	link_up(&b, &f, &t, "OK queued=2 dropped=0\n");
	for (int i = 0; i < 3; i++)
		assert_int_equal(backend_prefetch_async(&b, slots, 2), 2);
	assert_int_equal(backend_stat(&b, "queued", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(b.async_n, 0);
	assert_int_equal(b.st.queued, 6);
	assert_int_equal(b.st.commands, 3);
	/* More than the ring of owed replies holds: it is emptied first. */
	for (int i = 0; i < BACKEND_ASYNC_MAX + 6; i++)
		assert_int_equal(backend_prefetch_async(&b, slots, 2), 2);
	assert_true(b.async_n <= BACKEND_ASYNC_MAX);
	assert_int_equal(backend_stat(&b, "queued", &v), 0);
	assert_int_equal(b.st.queued, 6 + 2 * (BACKEND_ASYNC_MAX + 6));
	/* A reply that does not add up is an error, and the link stays. */
	f.reply = "OK queued=1 dropped=0\n";
	assert_int_equal(backend_prefetch_async(&b, slots, 2), 2);
	assert_int_equal(backend_stat(&b, "queued", &v), 0);
	assert_int_equal(b.st.errors, 1);
	assert_true(b.fd >= 0);
	backend_close(&b);
	pthread_join(t, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_prefetch), cmocka_unit_test(parse_reply),
		cmocka_unit_test(exchange),	   cmocka_unit_test(type_evidence),
		cmocka_unit_test(hangup),	   cmocka_unit_test(async_push),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
