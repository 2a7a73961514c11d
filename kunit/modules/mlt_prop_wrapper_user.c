// SPDX-License-Identifier: GPL-2.0-only
/* Plays a proprietary module using only the shim's plain wrapper. */
#include <linux/module.h>
#include "mlt.h"

static int __init mlt_prop_wrapper_user_init(void)
{
	return mlt_shim_wrapper(1) == 6 ? 0 : -EINVAL;
}
module_init(mlt_prop_wrapper_user_init);

static void __exit mlt_prop_wrapper_user_exit(void)
{
}
module_exit(mlt_prop_wrapper_user_exit);

MODULE_DESCRIPTION("module licence test: proprietary user of the shim");
MODULE_LICENSE("Proprietary");
