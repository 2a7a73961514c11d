// SPDX-License-Identifier: GPL-2.0-only
/*
 * A GPL module importing from a proprietary module first, then a
 * GPL-only symbol: it inherits the taint and the GPL-only import fails.
 */
#include <linux/module.h>
#include "mlt.h"

static int __init mlt_inherit_strong_init(void)
{
	return mlt_prop_fn(1) + mlt_gpl_only_fn(1) == 6 ? 0 : -EINVAL;
}
module_init(mlt_inherit_strong_init);

static void __exit mlt_inherit_strong_exit(void)
{
}
module_exit(mlt_inherit_strong_exit);

MODULE_DESCRIPTION("module licence test: proprietary first, then GPL-only");
MODULE_LICENSE("GPL");
