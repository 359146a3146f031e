#define pr_fmt(fmt) MM_PFX fmt
#include <linux/mm.h>
