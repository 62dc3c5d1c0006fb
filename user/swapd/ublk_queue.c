// SPDX-License-Identifier: MIT
/*
 * One ublk queue: a thread with its own io_uring that holds a FETCH_REQ or
 * COMMIT_AND_FETCH_REQ command for every tag, and a few workers that serve
 * the requests through the shared request layer (io.c).
 *
 * Why the split: the driver takes commands of a queue only from the one
 * task that fetched its tags (__ublk_ch_uring_cmd refuses others once
 * ubq_daemon is set, ublk_mark_io_ready sets it), and delivers requests
 * as task work to that task.  The request layer blocks on the servers, so
 * a lone thread would serve one request at a time whatever the depth.
 * Here the queue thread only moves commands: a completed FETCH hands the
 * tag to a worker, a worker's result comes back through an eventfd that
 * the ring also reads, and the queue thread commits it (and fetches the
 * next request on the same tag) in one COMMIT_AND_FETCH_REQ.  Up to
 * `workers` requests of a queue are served at once; the request layer is
 * thread-safe (memclient pipelines concurrent calls, the cache and the
 * counters have their locks).
 *
 * Data moves by copy: without UBLK_F_USER_COPY the driver copies a WRITE
 * into the tag's buffer before the fetch completes and a READ out of it at
 * commit (ublk_map_io / ublk_unmap_io).
 *
 * The ring uses IORING_SETUP_COOP_TASKRUN: the driver's task work (new
 * requests, io_uring_cmd_complete_in_task) is signalled without an IPI and
 * runs in the queue thread's io_uring_enter, where that thread waits
 * anyway; it never interrupts a worker (task work goes to the submitter).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ublk.h"

#define EFD_DATA     UINT64_MAX	 /* user_data of the eventfd read */
#define THREAD_STACK (256 << 10) /* mlockall locks whole stacks */

struct ublk_q {
	struct ublk_dev *dev;
	uint16_t id;
	const struct ublksrv_io_desc *iod; /* mmap of the driver's descriptors */
	size_t iod_len;
	uint8_t *bufs; /* depth * max_io */
	struct io_uring ring;
	bool ring_ok;
	int efd;
	uint64_t efd_val;
	pthread_t thread;
	bool started;
	pthread_t *w;
	unsigned nw;
	/* Startup handshake with ublk_queue_start. */
	pthread_mutex_t lock;
	pthread_cond_t cond, work_cond;
	int setup; /* 0 pending, 1 fetched, -1 failed */
	bool ended;
	/* Under lock: tags to serve (FIFO) and served tags to commit. */
	uint16_t *todo, *done;
	unsigned todo_head, todo_n, done_n;
	int32_t *res; /* per tag, written by the worker before it is done */
	bool stop_workers;
	unsigned live; /* tags whose command is with the driver or being served */
};

static uint8_t *tag_buf(struct ublk_q *q, uint16_t tag)
{
	return q->bufs + (size_t)tag * q->dev->max_io;
}

static int prep_io_cmd(struct ublk_q *q, uint32_t op, uint16_t tag, int32_t result)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	struct ublksrv_io_cmd *cmd;

	if (!sqe)
		return -1; /* cannot happen: the ring holds depth + 2 entries */
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = q->dev->cdev_fd;
	sqe->cmd_op = op;
	sqe->user_data = tag;
	/* 16 bytes: the command area of a 64-byte SQE holds it (the driver
	 * reads it with io_uring_sqe_cmd). */
	cmd = (struct ublksrv_io_cmd *)&sqe->addr3;
	cmd->q_id = q->id;
	cmd->tag = tag;
	cmd->result = result;
	cmd->addr = (uint64_t)(uintptr_t)tag_buf(q, tag);
	return 0;
}

static void prep_efd_read(struct ublk_q *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

	io_uring_prep_read(sqe, q->efd, &q->efd_val, sizeof(q->efd_val), 0);
	sqe->user_data = EFD_DATA;
}

static void log_reject(struct ublk_q *q, const struct ublksrv_io_desc *d, int err)
{
	uint64_t n = __atomic_add_fetch(&q->dev->rejected, 1, __ATOMIC_RELAXED);

	if (n <= 8 || !(n & (n - 1)))
		fprintf(stderr,
			"leap-swapd: ublkb%d: refused request #%llu: op %u flags 0x%x "
			"sector %llu sectors %u: %s\n",
			q->dev->id, (unsigned long long)n, d->op_flags & 0xff,
			d->op_flags >> 8, (unsigned long long)d->start_sector,
			d->nr_sectors, strerror(err));
}

/* Serves one request; the result for COMMIT_AND_FETCH_REQ. */
static int32_t serve(struct ublk_q *q, uint16_t tag)
{
	struct ublk_dev *dev = q->dev;
	struct ublksrv_io_desc d;
	enum ublkp_action a;
	uint64_t off;
	uint32_t len;
	int err, rc = 0;

	__atomic_add_fetch(&dev->served[q->id], 1, __ATOMIC_RELAXED);
	/* One copy: the descriptor is the driver's memory. */
	memcpy(&d, (const void *)&q->iod[tag], sizeof(d));
	a = ublkp_check(&d, dev->sd->size, dev->block, dev->max_io, &off, &len, &err);
	switch (a) {
	case UBLKP_DO_READ:
		rc = swapd_io_read(dev->sd, tag_buf(q, tag), len, off);
		break;
	case UBLKP_DO_WRITE:
		rc = swapd_io_write(dev->sd, tag_buf(q, tag), len, off);
		break;
	case UBLKP_DO_DISCARD:
		rc = swapd_io_discard(dev->sd, off, len);
		break;
	case UBLKP_DO_FLUSH:
		break; /* a write is on the servers before it completes */
	case UBLKP_DO_REJECT:
		log_reject(q, &d, err);
		rc = -err;
		break;
	}
	return ublkp_result(a, len, rc);
}

static void *worker_main(void *arg)
{
	struct ublk_q *q = arg;
	const uint64_t one = 1;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		uint16_t tag;

		while (!q->todo_n && !q->stop_workers)
			pthread_cond_wait(&q->work_cond, &q->lock);
		if (!q->todo_n)
			break;
		tag = q->todo[q->todo_head];
		q->todo_head = (q->todo_head + 1) % q->dev->depth;
		q->todo_n--;
		pthread_mutex_unlock(&q->lock);
		q->res[tag] = serve(q, tag);
		pthread_mutex_lock(&q->lock);
		q->done[q->done_n++] = tag;
		pthread_mutex_unlock(&q->lock);
		/* Wakes the queue thread's ring (its eventfd read). */
		if (write(q->efd, &one, sizeof(one)) != sizeof(one))
			fprintf(stderr, "leap-swapd: ublk queue %u: eventfd: %s\n", q->id,
				strerror(errno));
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* Commits every served tag (and fetches the next request on it). */
static void commit_done(struct ublk_q *q)
{
	uint16_t tags[UBLK_MAX_QUEUE_DEPTH];
	unsigned n;

	pthread_mutex_lock(&q->lock);
	n = q->done_n;
	memcpy(tags, q->done, n * sizeof(tags[0]));
	q->done_n = 0;
	pthread_mutex_unlock(&q->lock);
	for (unsigned i = 0; i < n; i++)
		prep_io_cmd(q, UBLK_U_IO_COMMIT_AND_FETCH_REQ, tags[i], q->res[tags[i]]);
}

static void hand_to_worker(struct ublk_q *q, uint16_t tag)
{
	pthread_mutex_lock(&q->lock);
	q->todo[(q->todo_head + q->todo_n) % q->dev->depth] = tag;
	q->todo_n++;
	pthread_cond_signal(&q->work_cond);
	pthread_mutex_unlock(&q->lock);
}

static void set_setup(struct ublk_q *q, int v)
{
	pthread_mutex_lock(&q->lock);
	q->setup = v;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

/* Maps the descriptors, creates the ring, fetches every tag.  0 or -1. */
static int queue_setup(struct ublk_q *q)
{
	struct ublk_dev *dev = q->dev;
	long page = sysconf(_SC_PAGESIZE);
	unsigned entries = 4;
	struct io_uring_cqe *cqe;
	int rc;

	q->iod_len = ublkp_desc_length(dev->depth, (uint32_t)page);
	q->iod = mmap(NULL, q->iod_len, PROT_READ, MAP_SHARED | MAP_POPULATE,
		      dev->cdev_fd, (off_t)ublkp_desc_offset(q->id, (uint32_t)page));
	if (q->iod == MAP_FAILED) {
		q->iod = NULL;
		fprintf(stderr,
			"leap-swapd: ublk queue %u: mmap of the descriptors: %s\n", q->id,
			strerror(errno));
		return -1;
	}
	while (entries < (unsigned)dev->depth + 2)
		entries *= 2;
	rc = io_uring_queue_init(entries, &q->ring, IORING_SETUP_COOP_TASKRUN);
	if (rc == -EINVAL) /* before 5.19 */
		rc = io_uring_queue_init(entries, &q->ring, 0);
	if (rc) {
		fprintf(stderr, "leap-swapd: ublk queue %u: io_uring: %s\n", q->id,
			strerror(-rc));
		return -1;
	}
	q->ring_ok = true;
	for (uint16_t t = 0; t < dev->depth; t++)
		prep_io_cmd(q, UBLK_U_IO_FETCH_REQ, t, 0);
	prep_efd_read(q);
	rc = io_uring_submit(&q->ring);
	if (rc != dev->depth + 1) {
		fprintf(stderr, "leap-swapd: ublk queue %u: submitting the fetches: %s\n",
			q->id, rc < 0 ? strerror(-rc) : "short submit");
		return -1;
	}
	/* A fetch the driver refuses completes at once; an accepted one only
	 * when a request arrives, and none can before START_DEV. */
	if (!io_uring_peek_cqe(&q->ring, &cqe)) {
		fprintf(stderr, "leap-swapd: ublk queue %u: FETCH_REQ of tag %llu: %s\n",
			q->id, (unsigned long long)cqe->user_data, strerror(-cqe->res));
		return -1;
	}
	q->live = dev->depth;
	return 0;
}

static void *queue_main(void *arg)
{
	struct ublk_q *q = arg;
	struct ublk_dev *dev = q->dev;

	if (queue_setup(q)) {
		set_setup(q, -1);
		return NULL;
	}
	set_setup(q, 1);
	while (q->live) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		bool efd = false;
		int rc = io_uring_submit_and_wait(&q->ring, 1);

		if (rc < 0 && rc != -EINTR) {
			fprintf(stderr, "leap-swapd: ublk queue %u: io_uring_enter: %s\n",
				q->id, strerror(-rc));
			break;
		}
		io_uring_for_each_cqe(&q->ring, head, cqe)
		{
			seen++;
			if (cqe->user_data == EFD_DATA) {
				efd = true;
				continue;
			}
			if (cqe->res == UBLK_IO_RES_OK) {
				hand_to_worker(q, (uint16_t)cqe->user_data);
				continue;
			}
			/* UBLK_IO_RES_ABORT: the device stops; anything else is a
			 * command the driver refused (logged: it should not
			 * happen).  Either way the tag is gone. */
			if (cqe->res != UBLK_IO_RES_ABORT)
				fprintf(stderr,
					"leap-swapd: ublkb%d queue %u: command on tag "
					"%llu: "
					"%s\n",
					dev->id, q->id,
					(unsigned long long)cqe->user_data,
					strerror(-cqe->res));
			q->live--;
		}
		io_uring_cq_advance(&q->ring, seen);
		if (efd) {
			commit_done(q);
			prep_efd_read(q);
		}
	}
	pthread_mutex_lock(&q->lock);
	q->stop_workers = true;
	q->ended = true;
	pthread_cond_broadcast(&q->work_cond);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void queue_free(struct ublk_q *q)
{
	if (q->ring_ok)
		io_uring_queue_exit(&q->ring);
	if (q->iod)
		munmap((void *)q->iod, q->iod_len);
	if (q->efd >= 0)
		close(q->efd);
	free(q->bufs);
	free(q->todo);
	free(q->done);
	free(q->res);
	free(q->w);
	free(q);
}

struct ublk_q *ublk_queue_start(struct ublk_dev *dev, uint16_t qid)
{
	struct ublk_q *q = calloc(1, sizeof(*q));
	pthread_attr_t attr;
	int setup;

	if (!q)
		goto nomem;
	q->dev = dev;
	q->id = qid;
	q->efd = eventfd(0, EFD_CLOEXEC);
	q->todo = calloc(dev->depth, sizeof(*q->todo));
	q->done = calloc(dev->depth, sizeof(*q->done));
	q->res = calloc(dev->depth, sizeof(*q->res));
	q->nw = dev->workers;
	q->w = calloc(q->nw, sizeof(*q->w));
	if (posix_memalign((void **)&q->bufs, 4096, (size_t)dev->depth * dev->max_io))
		q->bufs = NULL;
	if (q->efd < 0 || !q->todo || !q->done || !q->res || !q->w || !q->bufs) {
		if (q->efd < 0)
			q->efd = -1;
		queue_free(q);
		goto nomem;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	pthread_cond_init(&q->work_cond, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	for (unsigned i = 0; i < q->nw; i++)
		if (pthread_create(&q->w[i], &attr, worker_main, q)) {
			q->nw = i;
			break;
		}
	q->started = q->nw && !pthread_create(&q->thread, &attr, queue_main, q);
	pthread_attr_destroy(&attr);
	if (!q->started) {
		fprintf(stderr, "leap-swapd: ublk queue %u: cannot start threads\n", qid);
		ublk_queue_join(q); /* stops the workers that did start */
		return NULL;
	}
	pthread_mutex_lock(&q->lock);
	while (!q->setup)
		pthread_cond_wait(&q->cond, &q->lock);
	setup = q->setup;
	pthread_mutex_unlock(&q->lock);
	if (setup < 0) {
		ublk_queue_join(q);
		return NULL;
	}
	return q;
nomem:
	fprintf(stderr, "leap-swapd: ublk queue %u: out of memory\n", qid);
	return NULL;
}

bool ublk_queue_ended(struct ublk_q *q)
{
	bool e;

	pthread_mutex_lock(&q->lock);
	e = q->ended;
	pthread_mutex_unlock(&q->lock);
	return e;
}

void ublk_queue_join(struct ublk_q *q)
{
	if (q->started)
		pthread_join(q->thread, NULL);
	pthread_mutex_lock(&q->lock);
	q->stop_workers = true;
	pthread_cond_broadcast(&q->work_cond);
	pthread_mutex_unlock(&q->lock);
	for (unsigned i = 0; i < q->nw; i++)
		pthread_join(q->w[i], NULL);
	queue_free(q);
}
