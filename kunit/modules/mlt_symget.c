// SPDX-License-Identifier: GPL-2.0-only
/*
 * A GPL module calling symbol_get() on four exports: only the GPL-only
 * ones may be returned (since v6.6), whoever owns them.  The results are
 * read-only parameters; the references taken are dropped at exit.
 */
#include <linux/module.h>
#include "mlt.h"

static bool got_gpl_only, got_plain, got_prop, got_prop_gpl;
module_param(got_gpl_only, bool, 0444);
module_param(got_plain, bool, 0444);
module_param(got_prop, bool, 0444);
module_param(got_prop_gpl, bool, 0444);

static int __init mlt_symget_init(void)
{
	int (*fn)(int x);

	fn = symbol_get(mlt_gpl_only_fn);
	got_gpl_only = fn && fn(1) == 2;
	fn = symbol_get(mlt_plain_fn);
	got_plain = fn;
	if (fn)
		symbol_put(mlt_plain_fn);
	fn = symbol_get(mlt_prop_fn);
	got_prop = fn;
	if (fn)
		symbol_put(mlt_prop_fn);
	fn = symbol_get(mlt_prop_gpl_fn);
	got_prop_gpl = fn && fn(1) == 5;
	return 0;
}
module_init(mlt_symget_init);

static void __exit mlt_symget_exit(void)
{
	if (got_gpl_only)
		symbol_put(mlt_gpl_only_fn);
	if (got_prop_gpl)
		symbol_put(mlt_prop_gpl_fn);
}
module_exit(mlt_symget_exit);

MODULE_DESCRIPTION("module licence test: symbol_get() rules");
MODULE_LICENSE("GPL");
