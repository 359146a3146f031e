#include "foo.h"

static int foo_probe(void)
{
	pr_info("foo up\n");
	return 0;
}
