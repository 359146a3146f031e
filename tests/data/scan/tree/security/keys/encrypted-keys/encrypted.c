// SPDX-License-Identifier: GPL-2.0-only
#include <linux/module.h>

static int valid_master_desc(const char *desc)
{
	if (!desc) {
		pr_err("encrypted_key: key description missing\n");
		return -EINVAL;
	}
	if (strlen(desc) != 32) {
		printk(KERN_ERR "encrypted_key: key description must be 32 characters\n");
		return -EINVAL;
	}
	return 0;
}
