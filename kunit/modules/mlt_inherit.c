// SPDX-License-Identifier: GPL-2.0-only
/*
 * A GPL module importing from a proprietary module first, then holding
 * a weak reference to a GPL-only symbol: it inherits the proprietary
 * taint, the GPL-only symbol is hidden and the weak reference resolves
 * to NULL, so the module loads.  scripts/modules-check checks the symbol
 * order.
 */
#include <linux/compiler.h>
#include <linux/module.h>
#include "mlt.h"

/* A weak undefined symbol, unknown to the compiler: it may be NULL. */
asm(".weak mlt_gpl_only_fn");

static bool gplonly_resolved;
module_param(gplonly_resolved, bool, 0444);
MODULE_PARM_DESC(gplonly_resolved, "the weak GPL-only reference resolved");

static int __init mlt_inherit_init(void)
{
	int (*fn)(int x) = mlt_gpl_only_fn;

	OPTIMIZER_HIDE_VAR(fn);
	gplonly_resolved = fn;
	pr_info("mlt_inherit: %d, GPL-only symbol %s\n", mlt_prop_fn(1),
		gplonly_resolved ? "resolved" : "hidden");
	return 0;
}
module_init(mlt_inherit_init);

static void __exit mlt_inherit_exit(void)
{
}
module_exit(mlt_inherit_exit);

MODULE_DESCRIPTION("module licence test: proprietary first, weak GPL-only");
MODULE_LICENSE("GPL");
