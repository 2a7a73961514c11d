// SPDX-License-Identifier: GPL-2.0-only
/*
 * Plays a proprietary module using a plain export of a GPL module that
 * uses no GPL-only symbol: allowed with or without gplonly_reexports.
 */
#include <linux/module.h>
#include "mlt.h"

static int __init mlt_prop_plain_user_init(void)
{
	return mlt_plain_fn(1) == 3 ? 0 : -EINVAL;
}
module_init(mlt_prop_plain_user_init);

static void __exit mlt_prop_plain_user_exit(void)
{
}
module_exit(mlt_prop_plain_user_exit);

MODULE_DESCRIPTION("module licence test: proprietary user of a plain export");
MODULE_LICENSE("Proprietary");
