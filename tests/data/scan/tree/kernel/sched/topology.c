// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler topology setup/handling methods
 */
#include <linux/bsearch.h>

static void sched_domain_debug(int cpu)
{
	pr_info("CPU%d attaching NULL sched-domain.\n", cpu);
	pr_err("ERROR: domain->span does not contain CPU%d\n", cpu);
	printk(KERN_DEBUG "CPU%d attaching sched-domain(s):\n", cpu);
	pr_cont(" groups:");
	pr_debug("%s: done\n", __func__);
}
