// SPDX-License-Identifier: GPL-2.0-only
/* A GPL module using a GPL-only kernel export and a GPL-only module export. */
#include <linux/ktime.h>
#include <linux/module.h>
#include "mlt.h"

static int __init mlt_gpl_user_init(void)
{
	pr_info("mlt_gpl_user: %lld %d\n", ktime_get(), mlt_gpl_only_fn(1));
	return 0;
}
module_init(mlt_gpl_user_init);

static void __exit mlt_gpl_user_exit(void)
{
}
module_exit(mlt_gpl_user_exit);

MODULE_DESCRIPTION("module licence test: GPL user of GPL-only symbols");
MODULE_LICENSE("GPL");
