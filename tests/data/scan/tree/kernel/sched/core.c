#include "sched.h"

void sched_core(void)
{
	pr_info("core\n");
}
