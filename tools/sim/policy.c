// SPDX-License-Identifier: MIT
/* Policy names, defaults and dispatch. */
#include <string.h>

#include "policy.h"

static const struct {
	const char *name;
	const struct sim_policy_ops *ops;
} policies[SIM_POL_COUNT] = {
	[SIM_POL_NONE] = {"none", &sim_policy_none_ops},
	[SIM_POL_LINUX] = {"linux", &sim_policy_linux_ops},
	[SIM_POL_LINUX_CLUSTER] = {"linux-cluster", &sim_policy_linux_cluster_ops},
	[SIM_POL_NEXT_N] = {"next-n", &sim_policy_next_n_ops},
	[SIM_POL_STRIDE] = {"stride", &sim_policy_stride_ops},
	[SIM_POL_LEAP] = {"leap", &sim_policy_leap_ops},
	[SIM_POL_LEAP_THREAD] = {"leap-thread", &sim_policy_leap_ops},
};

void sim_policy_opts_default(struct sim_policy_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->page_cluster = 3; /* vm.page-cluster's default: 8 pages */
	o->window = 8;
	leap_params_default(&o->leap);
}

const char *sim_policy_name(enum sim_policy_kind k)
{
	return (unsigned)k < SIM_POL_COUNT ? policies[k].name : "?";
}

int sim_policy_parse(const char *s, enum sim_policy_kind *out)
{
	for (int i = 0; i < SIM_POL_COUNT; i++) {
		if (strcmp(s, policies[i].name) == 0) {
			*out = (enum sim_policy_kind)i;
			return 0;
		}
	}
	return -1;
}

const char *sim_policy_names(void)
{
	static char buf[160];

	if (!buf[0]) {
		for (int i = 0; i < SIM_POL_COUNT; i++) {
			if (i)
				strcat(buf, ", ");
			strcat(buf, policies[i].name);
		}
	}
	return buf;
}

int sim_policy_init(struct sim_policy *p, enum sim_policy_kind k,
		    const struct sim_policy_opts *o, const struct sim_trace *t)
{
	memset(p, 0, sizeof(*p));
	if ((unsigned)k >= SIM_POL_COUNT)
		return -1;
	p->kind = k;
	p->ops = policies[k].ops;
	p->opts = *o;
	p->trace = t;
	return p->ops->init ? p->ops->init(p, t) : 0;
}

void sim_policy_fini(struct sim_policy *p)
{
	if (p->ops && p->ops->fini)
		p->ops->fini(p);
	p->ops = NULL;
}
