// SPDX-License-Identifier: MIT
/*
 * The fake registration backend: no memory is touched; every operation costs
 * T = a * pages + b microseconds of modelled time (issue 6's numbers:
 * registration a = 0.77, b = 7.42; deregistration a = 0.22, b = 1.1).  It
 * keeps the set of live handles so tests catch a double or unknown
 * deregistration, a span whose length does not match its registration, and
 * leaks (pinned_bytes != 0 at the end).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "leap/reg.h"

double leap_reg_cost_us(double a, double b, uint64_t pages)
{
	return a * (double)pages + b;
}

void leap_reg_fake_init(struct leap_reg_fake *f, uint64_t page_size)
{
	memset(f, 0, sizeof(*f));
	f->page_size = page_size ? page_size : 4096;
	f->reg_a = LEAP_REG_COST_REG_A;
	f->reg_b = LEAP_REG_COST_REG_B;
	f->dereg_a = LEAP_REG_COST_DEREG_A;
	f->dereg_b = LEAP_REG_COST_DEREG_B;
	f->next_handle = 1; /* 0 is never a live handle */
}

void leap_reg_fake_fini(struct leap_reg_fake *f)
{
	free(f->live);
	free(f->live_len);
	f->live = NULL;
	f->live_len = NULL;
	f->live_cap = 0;
}

bool leap_reg_fake_live(const struct leap_reg_fake *f, uint64_t h)
{
	return h < f->live_cap && f->live[h];
}

static uint64_t pages_of(const struct leap_reg_fake *f, uint64_t len)
{
	return (len + f->page_size - 1) / f->page_size;
}

static int fake_reg(void *ctx, uint64_t addr, uint64_t len, struct leap_reg_key *key)
{
	struct leap_reg_fake *f = ctx;
	uint64_t h;

	if (len == 0 || addr + len < addr)
		return -EINVAL;
	if (f->fail_in > 0 && --f->fail_in == 0)
		return -EIO;
	h = f->next_handle;
	if (h >= f->live_cap) {
		uint64_t cap = f->live_cap ? f->live_cap * 2 : 1024;
		uint8_t *l = realloc(f->live, cap);
		uint64_t *ll;

		if (!l)
			return -ENOMEM;
		f->live = l;
		ll = realloc(f->live_len, cap * sizeof(*ll));
		if (!ll)
			return -ENOMEM;
		f->live_len = ll;
		memset(f->live + f->live_cap, 0, cap - f->live_cap);
		f->live_cap = cap;
	}
	f->next_handle++;
	f->live[h] = 1;
	f->live_len[h] = len;
	key->handle = h;
	key->lkey = (uint32_t)h;
	key->rkey = (uint32_t)(h ^ 0x5a5a0000u);
	f->regs++;
	f->reg_pages += pages_of(f, len);
	f->reg_us += leap_reg_cost_us(f->reg_a, f->reg_b, pages_of(f, len));
	f->pinned_bytes += len;
	if (f->pinned_bytes > f->pinned_peak)
		f->pinned_peak = f->pinned_bytes;
	return 0;
}

static void fake_dereg(void *ctx, const struct leap_reg_span *spans, size_t n)
{
	struct leap_reg_fake *f = ctx;

	for (size_t i = 0; i < n; i++) {
		uint64_t h = spans[i].key.handle;

		if (!leap_reg_fake_live(f, h) || f->live_len[h] != spans[i].len) {
			f->errors++;
			continue;
		}
		f->live[h] = 0;
		f->deregs++;
		f->dereg_pages += pages_of(f, spans[i].len);
		/* A batch is n operations: batching moves deregistration off
		 * the lookup path, it does not make the NIC's work cheaper. */
		f->dereg_us += leap_reg_cost_us(f->dereg_a, f->dereg_b,
						pages_of(f, spans[i].len));
		f->pinned_bytes -= spans[i].len;
	}
}

void leap_reg_fake_ops(struct leap_reg_fake *f, struct leap_reg_ops *ops)
{
	ops->reg = fake_reg;
	ops->dereg = fake_dereg;
	ops->ctx = f;
}
