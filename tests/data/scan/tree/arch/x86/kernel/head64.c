#define pr_fmt(fmt) "%s: " fmt, __func__
