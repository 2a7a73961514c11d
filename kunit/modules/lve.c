// SPDX-License-Identifier: GPL-2.0-only
/*
 * Named after a module the loader treats as proprietary whatever its
 * licence says: its GPL-only import is hidden.
 */
#include <linux/ktime.h>
#include <linux/module.h>

static int __init lve_init(void)
{
	return ktime_get() > 0 ? 0 : -EINVAL;
}
module_init(lve_init);

static void __exit lve_exit(void)
{
}
module_exit(lve_exit);

MODULE_DESCRIPTION("module licence test: the lve name rule");
MODULE_LICENSE("GPL");
