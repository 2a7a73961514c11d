// SPDX-License-Identifier: GPL-2.0-only
/*
 * Named after the module the loader taints by name: the kernel becomes
 * proprietary-tainted, the module does not and keeps its GPL-only symbols.
 */
#include <linux/ktime.h>
#include <linux/module.h>

static int __init ndiswrapper_init(void)
{
	return ktime_get() > 0 ? 0 : -EINVAL;
}
module_init(ndiswrapper_init);

static void __exit ndiswrapper_exit(void)
{
}
module_exit(ndiswrapper_exit);

MODULE_DESCRIPTION("module licence test: the ndiswrapper name rule");
MODULE_LICENSE("GPL");
