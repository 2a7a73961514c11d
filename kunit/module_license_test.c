// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the module licence rules (kernel/module/license.c).
 *
 * The decision tables are written out in full, independently of the
 * code: each row is one combination of inputs and the verdict the loader
 * must reach.  The sequence cases drive module_license_resolve() on
 * private struct modules in the order a module resolves its symbols, and
 * find_exported_symbol_in_section() runs on synthetic symbol tables, so
 * no module is loaded.
 */

#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/string.h>

#include "internal.h"

static const char *const verdict_names[] = {
	[MOD_IMPORT_ALLOW]		= "allow",
	[MOD_IMPORT_INHERIT_TAINT]	= "inherit",
	[MOD_IMPORT_HIDE]		= "hide",
	[MOD_IMPORT_REFUSE]		= "refuse",
};

static const char *lic_name(enum mod_license license)
{
	return license == GPL_ONLY ? "GPL-only" : "plain";
}

static struct module *fake_module(struct kunit *test, const char *name,
				  bool proprietary)
{
	struct module *mod = kunit_kzalloc(test, sizeof(*mod), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mod);
	strscpy(mod->name, name, sizeof(mod->name));
	if (proprietary)
		set_bit(TAINT_PROPRIETARY_MODULE, &mod->taints);
	return mod;
}

static bool is_proprietary(const struct module *mod)
{
	return test_bit(TAINT_PROPRIETARY_MODULE, &mod->taints);
}

/* ===== Visibility ===== */

struct visible_case {
	bool gplok;
	enum mod_license license;
	bool visible;
};

static const struct visible_case visible_cases[] = {
	{ .gplok = true,  .license = NOT_GPL_ONLY, .visible = true },
	{ .gplok = true,  .license = GPL_ONLY,     .visible = true },
	{ .gplok = false, .license = NOT_GPL_ONLY, .visible = true },
	{ .gplok = false, .license = GPL_ONLY,     .visible = false },
};

static void visible_desc(const struct visible_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s importer, %s symbol",
		 c->gplok ? "gplok" : "!gplok", lic_name(c->license));
}

KUNIT_ARRAY_PARAM(visible, visible_cases, visible_desc);

static void module_license_test_visible(struct kunit *test)
{
	const struct visible_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, module_license_visible(c->gplok, c->license),
			c->visible);
}

/* ===== Import verdict ===== */

struct import_case {
	bool proprietary;
	bool using_gplonly;
	enum mod_license license;
	bool owner_proprietary;
	enum mod_import_verdict verdict;
	const char *why;
};

static const struct import_case import_cases[] = {
	/* GPL importer, no GPL-only symbol used yet */
	{ false, false, NOT_GPL_ONLY, false, MOD_IMPORT_ALLOW, "plain use" },
	{ false, false, NOT_GPL_ONLY, true,  MOD_IMPORT_INHERIT_TAINT,
	  "first contact with a proprietary module" },
	{ false, false, GPL_ONLY,     false, MOD_IMPORT_ALLOW, "GPL-only use" },
	{ false, false, GPL_ONLY,     true,  MOD_IMPORT_REFUSE,
	  "GPL-only export of a proprietary module" },
	/* GPL importer that already used a GPL-only symbol */
	{ false, true,  NOT_GPL_ONLY, false, MOD_IMPORT_ALLOW, "plain use" },
	{ false, true,  NOT_GPL_ONLY, true,  MOD_IMPORT_REFUSE,
	  "GPL-only user meets a proprietary module" },
	{ false, true,  GPL_ONLY,     false, MOD_IMPORT_ALLOW, "GPL-only use" },
	{ false, true,  GPL_ONLY,     true,  MOD_IMPORT_REFUSE,
	  "GPL-only user meets a proprietary module" },
	/* proprietary importer (licence, name or inherited taint) */
	{ true,  false, NOT_GPL_ONLY, false, MOD_IMPORT_ALLOW, "plain use" },
	{ true,  false, NOT_GPL_ONLY, true,  MOD_IMPORT_ALLOW,
	  "already proprietary, nothing to inherit" },
	{ true,  false, GPL_ONLY,     false, MOD_IMPORT_HIDE, "GPL-only hidden" },
	{ true,  false, GPL_ONLY,     true,  MOD_IMPORT_HIDE, "GPL-only hidden" },
	/* unreachable state (a proprietary module never resolves GPL-only) */
	{ true,  true,  NOT_GPL_ONLY, false, MOD_IMPORT_ALLOW, "unreachable" },
	{ true,  true,  NOT_GPL_ONLY, true,  MOD_IMPORT_REFUSE, "unreachable" },
	{ true,  true,  GPL_ONLY,     false, MOD_IMPORT_HIDE, "unreachable" },
	{ true,  true,  GPL_ONLY,     true,  MOD_IMPORT_HIDE, "unreachable" },
};

static void import_desc(const struct import_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE,
		 "%s importer%s, %s symbol of a %s owner: %s (%s)",
		 c->proprietary ? "proprietary" : "GPL",
		 c->using_gplonly ? " using GPL-only" : "",
		 lic_name(c->license),
		 c->owner_proprietary ? "proprietary" : "GPL",
		 verdict_names[c->verdict], c->why);
}

KUNIT_ARRAY_PARAM(import, import_cases, import_desc);

static void module_license_test_import(struct kunit *test)
{
	const struct import_case *c = test->param_value;
	enum mod_import_verdict verdict;

	verdict = module_license_import(c->proprietary, c->using_gplonly,
					c->license, c->owner_proprietary);
	KUNIT_EXPECT_STREQ(test, verdict_names[verdict],
			   verdict_names[c->verdict]);
}

/*
 * The same table through module_license_resolve(): the verdict, and the
 * importer's state afterwards.
 */
static void module_license_test_resolve(struct kunit *test)
{
	const struct import_case *c = test->param_value;
	struct module *mod = fake_module(test, "importer", c->proprietary);
	struct module *owner = fake_module(test, "owner", c->owner_proprietary);
	enum mod_import_verdict verdict;
	bool using_after, proprietary_after;

	mod->using_gplonly_symbols = c->using_gplonly;
	verdict = module_license_resolve(mod, c->license, owner);
	KUNIT_EXPECT_STREQ(test, verdict_names[verdict],
			   verdict_names[c->verdict]);

	/* A visible GPL-only symbol marks the importer, refused or not. */
	using_after = c->using_gplonly ||
		      (c->license == GPL_ONLY && c->verdict != MOD_IMPORT_HIDE);
	KUNIT_EXPECT_EQ(test, mod->using_gplonly_symbols, using_after);

	proprietary_after = c->proprietary ||
			    c->verdict == MOD_IMPORT_INHERIT_TAINT;
	KUNIT_EXPECT_EQ(test, is_proprietary(mod), proprietary_after);

	/* Only the importer changes, and only its proprietary bit. */
	KUNIT_EXPECT_EQ(test, mod->taints & ~BIT(TAINT_PROPRIETARY_MODULE), 0UL);
	KUNIT_EXPECT_EQ(test, is_proprietary(owner), c->owner_proprietary);
	KUNIT_EXPECT_FALSE(test, owner->using_gplonly_symbols);
}

/* A symbol of the kernel proper has no owner module. */
static void module_license_test_kernel_owner(struct kunit *test)
{
	struct module *gpl = fake_module(test, "gpl", false);
	struct module *prop = fake_module(test, "prop", true);

	KUNIT_EXPECT_EQ(test, module_license_resolve(gpl, NOT_GPL_ONLY, NULL),
			MOD_IMPORT_ALLOW);
	KUNIT_EXPECT_EQ(test, module_license_resolve(gpl, GPL_ONLY, NULL),
			MOD_IMPORT_ALLOW);
	KUNIT_EXPECT_TRUE(test, gpl->using_gplonly_symbols);
	KUNIT_EXPECT_EQ(test, module_license_resolve(prop, NOT_GPL_ONLY, NULL),
			MOD_IMPORT_ALLOW);
	KUNIT_EXPECT_EQ(test, module_license_resolve(prop, GPL_ONLY, NULL),
			MOD_IMPORT_HIDE);
	KUNIT_EXPECT_FALSE(test, prop->using_gplonly_symbols);
	KUNIT_EXPECT_FALSE(test, is_proprietary(gpl));
}

/* ===== Order dependence ===== */

/* GPL-only symbol first, then a proprietary owner: refused. */
static void module_license_test_gplonly_then_proprietary(struct kunit *test)
{
	struct module *shim = fake_module(test, "shim", false);
	struct module *blob = fake_module(test, "blob", true);
	struct module *lib = fake_module(test, "lib", false);

	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, GPL_ONLY, lib),
			MOD_IMPORT_ALLOW);
	KUNIT_EXPECT_TRUE(test, shim->using_gplonly_symbols);
	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, NOT_GPL_ONLY, blob),
			MOD_IMPORT_REFUSE);
	/* Refused, not tainted; every further proprietary import refused. */
	KUNIT_EXPECT_FALSE(test, is_proprietary(shim));
	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, NOT_GPL_ONLY, blob),
			MOD_IMPORT_REFUSE);
	/* GPL symbols stay available. */
	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, GPL_ONLY, NULL),
			MOD_IMPORT_ALLOW);
	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, NOT_GPL_ONLY, lib),
			MOD_IMPORT_ALLOW);
}

/* Proprietary owner first: taint inherited, then GPL-only symbols hidden. */
static void module_license_test_proprietary_then_gplonly(struct kunit *test)
{
	struct module *shim = fake_module(test, "shim", false);
	struct module *blob = fake_module(test, "blob", true);
	struct module *lib = fake_module(test, "lib", false);

	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, NOT_GPL_ONLY, lib),
			MOD_IMPORT_ALLOW);
	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, NOT_GPL_ONLY, blob),
			MOD_IMPORT_INHERIT_TAINT);
	KUNIT_EXPECT_TRUE(test, is_proprietary(shim));
	KUNIT_EXPECT_FALSE(test, shim->using_gplonly_symbols);

	/* Inherited once: the next import from the blob is a plain one. */
	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, NOT_GPL_ONLY, blob),
			MOD_IMPORT_ALLOW);
	/* find_symbol() now searches for it with gplok == false. */
	KUNIT_EXPECT_FALSE(test, module_license_visible(!is_proprietary(shim),
							GPL_ONLY));
	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, GPL_ONLY, lib),
			MOD_IMPORT_HIDE);
	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, GPL_ONLY, NULL),
			MOD_IMPORT_HIDE);
	KUNIT_EXPECT_FALSE(test, shim->using_gplonly_symbols);
	KUNIT_EXPECT_EQ(test, module_license_resolve(shim, NOT_GPL_ONLY, lib),
			MOD_IMPORT_ALLOW);
}

/*
 * A GPL-only export of a proprietary module is refused, and the attempt
 * alone marks the importer as a user of GPL-only symbols: a plain symbol
 * of the same proprietary module is refused next, where it would have
 * been inherited.
 */
static void module_license_test_gplonly_of_proprietary(struct kunit *test)
{
	struct module *mod = fake_module(test, "gpl", false);
	struct module *blob = fake_module(test, "blob", true);

	KUNIT_EXPECT_EQ(test, module_license_resolve(mod, GPL_ONLY, blob),
			MOD_IMPORT_REFUSE);
	KUNIT_EXPECT_TRUE(test, mod->using_gplonly_symbols);
	KUNIT_EXPECT_EQ(test, module_license_resolve(mod, NOT_GPL_ONLY, blob),
			MOD_IMPORT_REFUSE);
	KUNIT_EXPECT_FALSE(test, is_proprietary(mod));
}

/* ===== Licence strings and names ===== */

struct license_case {
	const char *license;
	bool proprietary;
};

static const struct license_case license_cases[] = {
	{ "GPL",			false },
	{ "GPL v2",			false },
	{ "GPL and additional rights",	false },
	{ "Dual BSD/GPL",		false },
	{ "Dual MIT/GPL",		false },
	{ "Dual MPL/GPL",		false },
	{ NULL,				true },
	{ "unspecified",		true },
	{ "",				true },
	{ "Proprietary",		true },
	{ "GPL v3",			true },
	{ "GPL-2.0",			true },
	{ "gpl",			true },
	{ "GPL ",			true },
	{ "Dual BSD/GPL v2",		true },
	{ "BSD",			true },
	{ "MIT",			true },
	{ "Dual MIT/GPL\n",		true },
};

static void license_desc(const struct license_case *c, char *desc)
{
	if (!c->license)
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "no licence");
	else
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%.*s\"",
			 (int)strcspn(c->license, "\n"), c->license);
}

KUNIT_ARRAY_PARAM(license, license_cases, license_desc);

static void module_license_test_license_string(struct kunit *test)
{
	const struct license_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, module_license_proprietary(c->license),
			c->proprietary);
}

struct name_case {
	const char *name;
	enum mod_name_taint taint;
};

static const struct name_case name_cases[] = {
	{ "ndiswrapper",	MOD_NAME_TAINT_KERNEL },
	{ "driverloader",	MOD_NAME_TAINT_MODULE },
	{ "lve",		MOD_NAME_TAINT_MODULE },
	{ "lve2",		MOD_NAME_TAINT_NONE },
	{ "lv",			MOD_NAME_TAINT_NONE },
	{ "ndiswrapper_x",	MOD_NAME_TAINT_NONE },
	{ "NDISWRAPPER",	MOD_NAME_TAINT_NONE },
	{ "driver_loader",	MOD_NAME_TAINT_NONE },
	{ "e1000",		MOD_NAME_TAINT_NONE },
	{ "",			MOD_NAME_TAINT_NONE },
};

static void name_desc(const struct name_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%s\"", c->name);
}

KUNIT_ARRAY_PARAM(name, name_cases, name_desc);

static void module_license_test_name_taint(struct kunit *test)
{
	const struct name_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, module_license_name_taint(c->name), c->taint);
}

/* ===== symbol_get() ===== */

static void module_license_test_symbol_get(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, module_license_symbol_get(GPL_ONLY));
	KUNIT_EXPECT_FALSE(test, module_license_symbol_get(NOT_GPL_ONLY));
}

/* ===== The gplonly_reexports policy ===== */

struct export_case {
	enum mod_license license;
	bool owner_using_gplonly;
	bool policy;
	enum mod_license seen;
};

static const struct export_case export_cases[] = {
	{ NOT_GPL_ONLY, false, false, NOT_GPL_ONLY },
	{ NOT_GPL_ONLY, true,  false, NOT_GPL_ONLY },
	{ GPL_ONLY,     false, false, GPL_ONLY },
	{ GPL_ONLY,     true,  false, GPL_ONLY },
	{ NOT_GPL_ONLY, false, true,  NOT_GPL_ONLY },
	{ NOT_GPL_ONLY, true,  true,  GPL_ONLY },
	{ GPL_ONLY,     false, true,  GPL_ONLY },
	{ GPL_ONLY,     true,  true,  GPL_ONLY },
};

static void export_desc(const struct export_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE,
		 "policy %s, %s export of a module %susing GPL-only: %s",
		 c->policy ? "on" : "off", lic_name(c->license),
		 c->owner_using_gplonly ? "" : "not ", lic_name(c->seen));
}

KUNIT_ARRAY_PARAM(export, export_cases, export_desc);

static void module_license_test_export(struct kunit *test)
{
	const struct export_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, module_license_export(c->license,
						    c->owner_using_gplonly,
						    c->policy),
			c->seen);
}

static const bool policy_settings[] = { false, true };

static void policy_desc(const bool *policy, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "gplonly_reexports=%d", *policy);
}

KUNIT_ARRAY_PARAM(policy, policy_settings, policy_desc);

/* Import one plain export of @owner as the loader does under @policy. */
static enum mod_import_verdict import_export(struct module *mod,
					     struct module *owner,
					     bool policy)
{
	return module_license_resolve(mod,
				      module_license_export(NOT_GPL_ONLY,
							    owner->using_gplonly_symbols,
							    policy),
				      owner);
}

/*
 * The shim loophole: a GPL shim built on a GPL-only symbol exports a
 * plain wrapper; a proprietary module imports the wrapper and nothing
 * else.  Mainline allows it; the policy hides the wrapper, and makes a
 * GPL module importing it a GPL-only user (so chains of shims fail too).
 */
static void module_license_test_shim_reexport(struct kunit *test)
{
	bool policy = *(const bool *)test->param_value;
	struct module *shim = fake_module(test, "shim", false);
	struct module *blob = fake_module(test, "blob", true);
	struct module *gpl = fake_module(test, "gpl", false);
	struct module *other = fake_module(test, "other", true);

	KUNIT_ASSERT_EQ(test, module_license_resolve(shim, GPL_ONLY, NULL),
			MOD_IMPORT_ALLOW);

	KUNIT_EXPECT_EQ(test, import_export(blob, shim, policy),
			policy ? MOD_IMPORT_HIDE : MOD_IMPORT_ALLOW);

	/* A GPL importer of the wrapper is allowed either way ... */
	KUNIT_EXPECT_EQ(test, import_export(gpl, shim, policy),
			MOD_IMPORT_ALLOW);
	KUNIT_EXPECT_EQ(test, gpl->using_gplonly_symbols, policy);
	/* ... but with the policy it can no longer use a proprietary one. */
	KUNIT_EXPECT_EQ(test, module_license_resolve(gpl, NOT_GPL_ONLY, other),
			policy ? MOD_IMPORT_REFUSE : MOD_IMPORT_INHERIT_TAINT);

	/* A module not using GPL-only symbols exports as before. */
	KUNIT_EXPECT_EQ(test, import_export(other, blob, policy),
			MOD_IMPORT_ALLOW);
}

/* ===== find_symbol() on synthetic symbol tables ===== */

static const char sym_name_a[] = "mlt_alpha";
static const char sym_name_b[] = "mlt_bravo";
static const char sym_name_c[] = "mlt_charlie";
static const char *const sym_names[] = { sym_name_a, sym_name_b, sym_name_c };
static int sym_values[3];
static struct kernel_symbol sym_table[3];	/* sorted by name */
static const s32 sym_crcs[3] = { 0x1111, 0x2222, 0x3333 };

static void set_kernel_symbol(struct kunit *test, struct kernel_symbol *sym,
			      const char *name, void *value)
{
#ifdef CONFIG_HAVE_ARCH_PREL32_RELOCATIONS
	long name_off = (long)name - (long)&sym->name_offset;
	long value_off = (long)value - (long)&sym->value_offset;

	KUNIT_ASSERT_EQ(test, (long)(int)name_off, name_off);
	KUNIT_ASSERT_EQ(test, (long)(int)value_off, value_off);
	sym->name_offset = name_off;
	sym->value_offset = value_off;
	sym->namespace_offset = 0;
#else
	sym->name = name;
	sym->value = (unsigned long)value;
	sym->namespace = NULL;
#endif
}

static int find_symbol_init(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(sym_table); i++)
		set_kernel_symbol(test, &sym_table[i], sym_names[i],
				  &sym_values[i]);
	return 0;
}

struct section_case {
	enum mod_license license;
	bool gplok;
	bool found;
};

static const struct section_case section_cases[] = {
	{ NOT_GPL_ONLY, true,  true },
	{ NOT_GPL_ONLY, false, true },
	{ GPL_ONLY,     true,  true },
	{ GPL_ONLY,     false, false },
};

static void section_desc(const struct section_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s section, %s importer: %s",
		 lic_name(c->license), c->gplok ? "gplok" : "!gplok",
		 c->found ? "found" : "hidden");
}

KUNIT_ARRAY_PARAM(section, section_cases, section_desc);

static void module_license_test_find_in_section(struct kunit *test)
{
	const struct section_case *c = test->param_value;
	struct module *owner = fake_module(test, "owner", false);
	const struct symsearch syms = {
		.start = sym_table,
		.stop = sym_table + ARRAY_SIZE(sym_table),
		.crcs = sym_crcs,
		.license = c->license,
	};
	static const char *const absent[] = {
		"mlt_", "mlt_alph", "mlt_alphaa", "mlt_b", "mlt_delta", "", "a",
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(sym_table); i++) {
		struct find_symbol_arg fsa = {
			.name = sym_names[i],
			.gplok = c->gplok,
			.license = c->license == GPL_ONLY ?
				   NOT_GPL_ONLY : GPL_ONLY, /* overwritten */
		};

		KUNIT_EXPECT_EQ_MSG(test,
				    find_exported_symbol_in_section(&syms, owner,
								    &fsa),
				    c->found, "%s", sym_names[i]);
		if (!c->found) {
			KUNIT_EXPECT_NULL(test, fsa.sym);
			KUNIT_EXPECT_NULL(test, fsa.owner);
			continue;
		}
		KUNIT_EXPECT_PTR_EQ(test, fsa.sym, &sym_table[i]);
		KUNIT_EXPECT_PTR_EQ(test, fsa.owner, owner);
		KUNIT_EXPECT_EQ(test, fsa.license, c->license);
		KUNIT_EXPECT_PTR_EQ(test, fsa.crc,
				    IS_ENABLED(CONFIG_MODVERSIONS) ?
				    &sym_crcs[i] : NULL);
		KUNIT_EXPECT_PTR_EQ(test, (void *)kernel_symbol_value(fsa.sym),
				    (void *)&sym_values[i]);
	}

	for (i = 0; i < ARRAY_SIZE(absent); i++) {
		struct find_symbol_arg fsa = {
			.name = absent[i],
			.gplok = true,
		};

		KUNIT_EXPECT_FALSE_MSG(test,
				       find_exported_symbol_in_section(&syms,
								       owner,
								       &fsa),
				       "\"%s\"", absent[i]);
		KUNIT_EXPECT_NULL(test, fsa.sym);
	}
}

/* An empty table (a module exporting nothing) finds nothing. */
static void module_license_test_find_in_empty_section(struct kunit *test)
{
	const struct symsearch syms = {
		.start = sym_table, .stop = sym_table, .license = NOT_GPL_ONLY,
	};
	struct find_symbol_arg fsa = { .name = sym_name_a, .gplok = true };

	KUNIT_EXPECT_FALSE(test, find_exported_symbol_in_section(&syms, NULL,
								 &fsa));
}

/*
 * find_symbol() over the kernel's own tables: _printk is a plain export,
 * __symbol_get a GPL-only one (kernel/module/main.c).
 */
static void module_license_test_find_symbol_kernel(struct kunit *test)
{
	struct find_symbol_arg plain = { .name = "_printk", .gplok = false };
	struct find_symbol_arg gpl = { .name = "__symbol_get", .gplok = true };
	struct find_symbol_arg hidden = { .name = "__symbol_get" };
	struct find_symbol_arg none = { .name = "mlt_no_such_symbol",
					.gplok = true };
	bool found_plain, found_gpl, found_hidden, found_none;

	preempt_disable();
	found_plain = find_symbol(&plain);
	found_gpl = find_symbol(&gpl);
	found_hidden = find_symbol(&hidden);
	found_none = find_symbol(&none);
	preempt_enable();

	KUNIT_ASSERT_TRUE(test, found_plain);
	KUNIT_EXPECT_EQ(test, plain.license, NOT_GPL_ONLY);
	KUNIT_EXPECT_NULL(test, plain.owner);
	KUNIT_EXPECT_PTR_EQ(test, (void *)kernel_symbol_value(plain.sym),
			    (void *)_printk);

	KUNIT_ASSERT_TRUE(test, found_gpl);
	KUNIT_EXPECT_EQ(test, gpl.license, GPL_ONLY);
	KUNIT_EXPECT_NULL(test, gpl.owner);
	KUNIT_EXPECT_PTR_EQ(test, (void *)kernel_symbol_value(gpl.sym),
			    (void *)__symbol_get);

	KUNIT_EXPECT_FALSE(test, found_hidden);
	KUNIT_EXPECT_FALSE(test, found_none);
}

/* ===== Suite ===== */

static struct kunit_case module_license_test_cases[] = {
	KUNIT_CASE_PARAM(module_license_test_visible, visible_gen_params),
	KUNIT_CASE_PARAM(module_license_test_import, import_gen_params),
	KUNIT_CASE_PARAM(module_license_test_resolve, import_gen_params),
	KUNIT_CASE(module_license_test_kernel_owner),
	KUNIT_CASE(module_license_test_gplonly_then_proprietary),
	KUNIT_CASE(module_license_test_proprietary_then_gplonly),
	KUNIT_CASE(module_license_test_gplonly_of_proprietary),
	KUNIT_CASE_PARAM(module_license_test_license_string,
			 license_gen_params),
	KUNIT_CASE_PARAM(module_license_test_name_taint, name_gen_params),
	KUNIT_CASE(module_license_test_symbol_get),
	KUNIT_CASE_PARAM(module_license_test_export, export_gen_params),
	KUNIT_CASE_PARAM(module_license_test_shim_reexport, policy_gen_params),
	KUNIT_CASE_PARAM(module_license_test_find_in_section,
			 section_gen_params),
	KUNIT_CASE(module_license_test_find_in_empty_section),
	KUNIT_CASE(module_license_test_find_symbol_kernel),
	{}
};

static struct kunit_suite module_license_test_suite = {
	.name = "module_license",
	.init = find_symbol_init,
	.test_cases = module_license_test_cases,
};

kunit_test_suites(&module_license_test_suite);

MODULE_DESCRIPTION("KUnit tests for the module licence rules");
MODULE_LICENSE("GPL");
