// SPDX-License-Identifier: GPL-2.0-only
/*
 * A GPL shim using a GPL-only kernel symbol, then a symbol of a
 * proprietary module.  The loader resolves undefined symbols in symbol
 * table order; scripts/modules-check checks that ktime_get comes
 * first.
 */
#include <linux/ktime.h>
#include <linux/module.h>
#include "mlt.h"

static int __init mlt_shim_init(void)
{
	pr_info("mlt_shim: %lld %d\n", ktime_get(), mlt_prop_fn(1));
	return 0;
}
module_init(mlt_shim_init);

static void __exit mlt_shim_exit(void)
{
}
module_exit(mlt_shim_exit);

MODULE_DESCRIPTION("module licence test: GPL shim, GPL-only first");
MODULE_LICENSE("GPL");
