#include <linux/module.h>

static int exar_probe(void)
{
	pr_info("exar\n");
	return 0;
}
