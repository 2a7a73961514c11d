// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Module licence rules
 *
 * Which symbols a module may see, when an import is refused or makes the
 * importer inherit TAINT_PROPRIETARY_MODULE, which licence strings taint,
 * and what symbol_get() hands out.  The functions decide on facts the
 * loader has gathered (licences, taints, flags); they take no lock and do
 * not walk the module list.  kernel/module/main.c applies the decisions
 * and prints the messages.
 */

#include <linux/bitops.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/license.h>	/* uses strcmp() */

#include "internal.h"

/**
 * module_license_visible() - may an importer see a symbol of this licence
 * @gplok: the importer may use GPL-only symbols (it does not carry
 *	TAINT_PROPRIETARY_MODULE)
 * @license: licence of the export section holding the symbol
 *
 * Context: Any context.
 * Return: %false for a GPL-only symbol and an importer that may not use
 * GPL-only symbols: find_symbol() then acts as if the symbol did not
 * exist.  %true otherwise.
 */
bool module_license_visible(bool gplok, enum mod_license license)
{
	return gplok || license != GPL_ONLY;
}

/**
 * module_license_import() - verdict on one symbol import
 * @proprietary: the importer carries TAINT_PROPRIETARY_MODULE
 * @using_gplonly: the importer resolved a GPL-only symbol before this one
 * @license: licence of the symbol
 * @owner_proprietary: the module exporting the symbol carries
 *	TAINT_PROPRIETARY_MODULE (%false for symbols of the kernel proper)
 *
 * A module may not use both GPL-only symbols and symbols of a proprietary
 * module.  Whichever it resolves first decides: a module that imports
 * from a proprietary module before using any GPL-only symbol inherits the
 * taint and from then on does not see GPL-only symbols; a module that has
 * used a GPL-only symbol is refused any symbol of a proprietary module.
 * A GPL-only symbol exported by a proprietary module counts as both.
 *
 * Context: Any context.
 * Return: %MOD_IMPORT_HIDE if the importer may not see the symbol
 * (module_license_visible()), else %MOD_IMPORT_REFUSE if the symbol
 * belongs to a proprietary module and the importer uses GPL-only symbols
 * (this one included), else %MOD_IMPORT_INHERIT_TAINT if the symbol
 * belongs to a proprietary module and the importer is not yet
 * proprietary, else %MOD_IMPORT_ALLOW.
 */
enum mod_import_verdict module_license_import(bool proprietary,
					      bool using_gplonly,
					      enum mod_license license,
					      bool owner_proprietary)
{
	if (!module_license_visible(!proprietary, license))
		return MOD_IMPORT_HIDE;
	if (!owner_proprietary)
		return MOD_IMPORT_ALLOW;
	if (using_gplonly || license == GPL_ONLY)
		return MOD_IMPORT_REFUSE;
	if (!proprietary)
		return MOD_IMPORT_INHERIT_TAINT;
	return MOD_IMPORT_ALLOW;
}

/**
 * module_license_resolve() - decide one import and record it in the importer
 * @mod: the importing module
 * @license: licence of the symbol, as find_symbol() reported it
 * @owner: module exporting the symbol, %NULL for the kernel proper
 *
 * Takes the verdict of module_license_import() on @mod's state and
 * updates that state: a GPL-only symbol the importer may see marks @mod
 * as using GPL-only symbols, even when the import is then refused, and
 * %MOD_IMPORT_INHERIT_TAINT sets TAINT_PROPRIETARY_MODULE in @mod->taints
 * (the module's taint only: the kernel is tainted when a module is loaded
 * under a proprietary licence, not by inheritance).
 *
 * Context: Process context, module_mutex held, while @mod resolves its
 * symbols.
 * Return: the verdict.
 */
enum mod_import_verdict module_license_resolve(struct module *mod,
					       enum mod_license license,
					       const struct module *owner)
{
	enum mod_import_verdict verdict;

	verdict = module_license_import(test_bit(TAINT_PROPRIETARY_MODULE,
						 &mod->taints),
					mod->using_gplonly_symbols, license,
					owner &&
					test_bit(TAINT_PROPRIETARY_MODULE,
						 &owner->taints));
	if (verdict == MOD_IMPORT_HIDE)
		return verdict;

	if (license == GPL_ONLY)
		mod->using_gplonly_symbols = true;
	if (verdict == MOD_IMPORT_INHERIT_TAINT)
		set_bit(TAINT_PROPRIETARY_MODULE, &mod->taints);
	return verdict;
}

/**
 * module_license_proprietary() - does a module licence make it proprietary
 * @license: the module's "license" modinfo string, %NULL if it has none
 *
 * The GPL-compatible licences are the exact strings accepted by
 * license_is_gpl_compatible() ("GPL", "GPL v2", "GPL and additional
 * rights", "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL").  Any other
 * string, and a missing licence, is proprietary.
 *
 * Context: Any context.
 * Return: %true if a module under @license gets TAINT_PROPRIETARY_MODULE.
 */
bool module_license_proprietary(const char *license)
{
	return !license || !license_is_gpl_compatible(license);
}

/**
 * module_license_name_taint() - proprietary taint a module gets by its name
 * @name: the module's name
 *
 * A few modules are known by name: ndiswrapper is GPL itself but loads
 * proprietary Windows drivers; driverloader was caught pretending to be
 * under the GPL; upstream lve claims the GPL but provides no source.
 *
 * Context: Any context.
 * Return: %MOD_NAME_TAINT_KERNEL for ndiswrapper (taint the kernel but not
 * the module, which keeps the GPL-only symbols it needs),
 * %MOD_NAME_TAINT_MODULE for driverloader and lve (the module and the
 * kernel), %MOD_NAME_TAINT_NONE for any other name.
 */
enum mod_name_taint module_license_name_taint(const char *name)
{
	if (strcmp(name, "ndiswrapper") == 0)
		return MOD_NAME_TAINT_KERNEL;
	if (strcmp(name, "driverloader") == 0 || strcmp(name, "lve") == 0)
		return MOD_NAME_TAINT_MODULE;
	return MOD_NAME_TAINT_NONE;
}

/**
 * module_license_symbol_get() - may symbol_get() hand out a symbol
 * @license: licence of the symbol
 *
 * symbol_get() does not go through the loader, so it cannot apply the
 * import rules: it only returns GPL-only symbols, so that it cannot be
 * used to take symbols of a proprietary module without inheriting its
 * taint (since v6.6, commit 9011e49d54dc).  It does not look at the
 * owner's taint.
 *
 * Context: Any context.
 * Return: %true if @license is %GPL_ONLY.
 */
bool module_license_symbol_get(enum mod_license license)
{
	return license == GPL_ONLY;
}

/**
 * module_license_export() - licence of a module's export, as importers see it
 * @license: licence of the export section holding the symbol
 * @owner_using_gplonly: the exporting module uses GPL-only symbols
 * @gplonly_reexports: the module.gplonly_reexports policy is on
 *
 * Without the policy, a GPL module built on GPL-only symbols can export
 * wrappers around them to a proprietary module that imports nothing from
 * it and so never meets module_license_import()'s checks.  With the
 * policy on, every export of a module that uses GPL-only symbols is
 * GPL-only for its importers: a proprietary importer does not see it and
 * a GPL importer becomes a user of GPL-only symbols in turn, so a chain
 * of shims does not escape either.
 *
 * Context: Any context.
 * Return: %GPL_ONLY if the policy is on and the owner uses GPL-only
 * symbols, @license otherwise.
 */
enum mod_license module_license_export(enum mod_license license,
				       bool owner_using_gplonly,
				       bool gplonly_reexports)
{
	if (gplonly_reexports && owner_using_gplonly)
		return GPL_ONLY;
	return license;
}
