#define pr_fmt(fmt) "rcu: " fmt

#include <linux/kernel.h>

void rcu_init(void)
{
	pr_info("Hierarchical RCU implementation.\n");
}

#include "tree_plugin.h"
