// SPDX-License-Identifier: GPL-2.0-only
/*
 * A GPL module importing the shim's wrapper, then a symbol of a
 * proprietary module.  Without the gplonly_reexports policy the wrapper
 * is a plain symbol and the module inherits the proprietary taint; with
 * it, the wrapper is GPL-only and the proprietary import is refused.
 */
#include <linux/module.h>
#include "mlt.h"

static int __init mlt_chain_init(void)
{
	return mlt_shim_wrapper(1) + mlt_prop_fn(1) == 10 ? 0 : -EINVAL;
}
module_init(mlt_chain_init);

static void __exit mlt_chain_exit(void)
{
}
module_exit(mlt_chain_exit);

MODULE_DESCRIPTION("module licence test: a chain through the shim");
MODULE_LICENSE("GPL");
