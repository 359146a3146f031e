// SPDX-License-Identifier: GPL-2.0-only
#include "sched.h"

static void utility_hello(void)
{
	pr_info("utility\n");
}

#ifdef CONFIG_SMP
# include "topology.c"
#endif
