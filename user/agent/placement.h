/* SPDX-License-Identifier: MIT */
/*
 * Where a window is issued: on the CPU its fault completed on, the faulting
 * thread's (leap_event.cpu), as Linux's own swap readahead runs in the
 * faulting thread.  A prefetch does its work on the target's memory (page
 * tables, LRU, memcg charge, reclaim) from the CPU it runs on; from another
 * CPU that work competes with the program's (TLB shootdowns, cache lines
 * moving), dearer in a guest with shadow page tables (design.md section 5).
 * Measured on the development machine: docs/agent.md, "Where the window
 * is issued".  The issuing thread (the event thread, or a worker)
 * moves itself to the fault's CPU before it issues, within the CPUs it
 * was allowed at start, and stays there until a fault on another CPU asks
 * for a window: a program that stays on its CPU costs one move.
 */
#ifndef LEAP_AGENT_PLACEMENT_H
#define LEAP_AGENT_PLACEMENT_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

struct placement {
	bool follow;	   /* move to the fault's CPU (--prefetch-cpu fault) */
	int on;		   /* the CPU this thread is bound to now; -1: none yet */
	cpu_set_t allowed; /* the thread's CPUs at start */
	uint64_t moves;	   /* times it moved */
};

/* This thread's placement: follow or not, its CPUs now. */
void placement_init(struct placement *p, bool follow);
/* Before issuing for a fault that completed on cpu: move there if
 * following and allowed. */
void placement_move(struct placement *p, uint32_t cpu);

#endif
