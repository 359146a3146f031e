/* sched.h: included by several units, so no one unit */
#include <linux/printk.h>
