// SPDX-License-Identifier: GPL-2.0-only
/* Plays a proprietary module importing a GPL-only module export. */
#include <linux/module.h>
#include "mlt.h"

static int __init mlt_prop_user_init(void)
{
	return mlt_gpl_only_fn(1) == 2 ? 0 : -EINVAL;
}
module_init(mlt_prop_user_init);

static void __exit mlt_prop_user_exit(void)
{
}
module_exit(mlt_prop_user_exit);

MODULE_DESCRIPTION("module licence test: proprietary user of a GPL-only symbol");
MODULE_LICENSE("Proprietary");
