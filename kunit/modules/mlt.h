/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Symbols of the module licence test modules (scenarios.sh).  The
 * modules that declare MODULE_LICENSE("Proprietary") do so to play a
 * proprietary module; their source is GPL like the rest.
 */
#ifndef _MLT_H
#define _MLT_H

/* mlt_gpl_exporter (GPL) */
int mlt_gpl_only_fn(int x);	/* EXPORT_SYMBOL_GPL */
int mlt_plain_fn(int x);	/* EXPORT_SYMBOL */

/* mlt_prop_exporter ("Proprietary") */
int mlt_prop_fn(int x);		/* EXPORT_SYMBOL */
int mlt_prop_gpl_fn(int x);	/* EXPORT_SYMBOL_GPL */

/* mlt_reexport_shim (GPL, built on a GPL-only kernel symbol) */
int mlt_shim_wrapper(int x);	/* EXPORT_SYMBOL */

#endif /* _MLT_H */
