// SPDX-License-Identifier: GPL-2.0-only
/*
 * The shim of the loophole: a GPL module built on a GPL-only kernel
 * symbol exports a plain wrapper around it, and imports nothing from
 * the proprietary module that uses the wrapper.
 */
#include <linux/ktime.h>
#include <linux/module.h>
#include "mlt.h"

int mlt_shim_wrapper(int x)
{
	return ktime_get() > 0 ? x + 5 : 0;
}
EXPORT_SYMBOL(mlt_shim_wrapper);

MODULE_DESCRIPTION("module licence test: GPL shim re-exporting a wrapper");
MODULE_LICENSE("GPL");
