// SPDX-License-Identifier: MIT
/* Issuing a window on its fault's CPU (placement.h). */
#include <string.h>

#include "placement.h"

void placement_init(struct placement *p, bool follow)
{
	memset(p, 0, sizeof(*p));
	p->follow = follow;
	p->on = -1;
	if (sched_getaffinity(0, sizeof(p->allowed), &p->allowed))
		p->follow = false; /* more CPUs than a cpu_set_t holds: stay put */
}

void placement_move(struct placement *p, uint32_t cpu)
{
	cpu_set_t one;

	if (!p->follow || (int)cpu == p->on || cpu >= CPU_SETSIZE ||
	    !CPU_ISSET(cpu, &p->allowed))
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	/* sched_setaffinity(0, ...) binds the calling thread only. */
	if (sched_setaffinity(0, sizeof(one), &one))
		return;
	p->on = (int)cpu;
	p->moves++;
}
