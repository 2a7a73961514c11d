// SPDX-License-Identifier: GPL-2.0-only
/*
 * Plays a proprietary module exporting a plain and a GPL-only symbol.
 * It uses no GPL-only symbol (modpost would refuse to build it).
 */
#include <linux/module.h>
#include "mlt.h"

int mlt_prop_fn(int x)
{
	return x + 3;
}
EXPORT_SYMBOL(mlt_prop_fn);

int mlt_prop_gpl_fn(int x)
{
	return x + 4;
}
EXPORT_SYMBOL_GPL(mlt_prop_gpl_fn);

MODULE_DESCRIPTION("module licence test: proprietary exporter");
MODULE_LICENSE("Proprietary");
