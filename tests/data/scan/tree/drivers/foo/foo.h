#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#include <linux/printk.h>
