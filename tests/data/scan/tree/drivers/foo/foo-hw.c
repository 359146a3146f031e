#include <linux/io.h>

static void foo_hw(void)
{
	pr_info("hw\n");
}
