// SPDX-License-Identifier: GPL-2.0-only
/* A GPL module exporting one GPL-only and one plain symbol. */
#include <linux/module.h>
#include "mlt.h"

int mlt_gpl_only_fn(int x)
{
	return x + 1;
}
EXPORT_SYMBOL_GPL(mlt_gpl_only_fn);

int mlt_plain_fn(int x)
{
	return x + 2;
}
EXPORT_SYMBOL(mlt_plain_fn);

MODULE_DESCRIPTION("module licence test: GPL exporter");
MODULE_LICENSE("GPL");
