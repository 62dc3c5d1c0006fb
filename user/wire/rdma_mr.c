// SPDX-License-Identifier: MIT
/*
 * The registration interface (rdma_mr.h): the default implementation over
 * ibv_reg_mr, pluggable ops, and the counters every registration goes
 * through.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "rdma_mr.h"

static int verbs_reg(void *ctx, struct ibv_pd *pd, void *addr, size_t len, int access,
		     struct leap_mr *mr)
{
	struct ibv_mr *m;

	(void)ctx;
	m = ibv_reg_mr(pd, addr, len, access);
	if (!m)
		return errno ? -errno : -ENOMEM;
	mr->addr = addr;
	mr->len = len;
	mr->lkey = m->lkey;
	mr->rkey = m->rkey;
	mr->handle = m;
	return 0;
}

static int verbs_dereg(void *ctx, struct leap_mr *mr)
{
	int rc;

	(void)ctx;
	rc = ibv_dereg_mr(mr->handle);
	return rc > 0 ? -rc : rc;
}

static const struct leap_mr_ops verbs_ops = {
	.name = "verbs",
	.reg = verbs_reg,
	.dereg = verbs_dereg,
};

static const struct leap_mr_ops *ops = &verbs_ops;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct leap_mr_stats stats;

void leap_mr_set_ops(const struct leap_mr_ops *o)
{
	ops = o ? o : &verbs_ops;
}

const struct leap_mr_ops *leap_mr_get_ops(void)
{
	return ops;
}

int leap_mr_reg(struct ibv_pd *pd, void *addr, size_t len, int access, struct leap_mr *mr)
{
	int rc;

	memset(mr, 0, sizeof(*mr));
	if (!addr || !len)
		return -EINVAL;
	rc = ops->reg(ops->ctx, pd, addr, len, access, mr);
	pthread_mutex_lock(&lock);
	if (rc) {
		stats.failures++;
	} else {
		stats.regs++;
		stats.bytes += len;
		stats.bytes_total += len;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

int leap_mr_dereg(struct leap_mr *mr)
{
	int rc;

	if (!mr->len)
		return 0;
	rc = ops->dereg(ops->ctx, mr);
	pthread_mutex_lock(&lock);
	stats.deregs++;
	stats.bytes -= mr->len;
	pthread_mutex_unlock(&lock);
	memset(mr, 0, sizeof(*mr));
	return rc;
}

void leap_mr_get_stats(struct leap_mr_stats *st)
{
	pthread_mutex_lock(&lock);
	*st = stats;
	pthread_mutex_unlock(&lock);
}
