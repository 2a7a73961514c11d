# SPDX-License-Identifier: GPL-2.0-only
#
# Module licence scenarios: the guest script of scripts/modules-check,
# run by scripts/initramfs-run in /guest with the test modules beside it.
# Prints one KTAP suite: module_loading (policy off, then turned on at
# run time), or module_loading_boot_policy when the kernel was booted
# with module.gplonly_reexports=1.
#
# Each case clears the kernel log, loads and unloads modules with
# insmod/rmmod and checks return codes, /proc/sys/kernel/tainted,
# /sys/module/*/{taint,holders,refcnt,parameters} and the loader's
# messages, byte for byte.  Cases run in order and share loaded modules
# where said; the kernel's proprietary taint never goes away, so the
# cases that need it clear come first.

. /lib/ktap.sh

policy=/sys/module/module/parameters/gplonly_reexports

# --- helpers -----------------------------------------------------------

log_start() {
	dmesg -c > /dev/null
}

# Print the kernel messages of the case so far as diagnostics.
log_show() {
	dmesg | sed 's/^\[[ 0-9.]*\] //' |
		grep -E '^(mlt|lve|ndiswrapper)|symbol_get|Unknown symbol' |
		while read -r line; do ktap_diag "dmesg: $line"; done
}

has_msg() {
	dmesg | grep -qF -- "$1"
}

no_msg() {
	! has_msg "$1"
}

loaded() {
	[ -d "/sys/module/$1" ]
}

not_loaded() {
	! loaded "$1"
}

load() {
	local m=$1
	shift
	insmod "/guest/$m.ko" "$@" 2>/tmp/insmod.err
}

load_ok() {
	ktap_check "insmod $1 succeeds" load "$@"
}

load_refused() {
	ktap_check "insmod $1 fails" not load "$@"
	ktap_check "$1 is not loaded" not_loaded "$1"
}

not() {
	! "$@"
}

unload() {
	rmmod "$1" 2>/dev/null
}

taint_is() {	# taint_is <module> <flags>
	[ "$(cat "/sys/module/$1/taint")" = "$2" ]
}

kernel_proprietary() {
	[ $(($(cat /proc/sys/kernel/tainted) & 1)) -eq 1 ]
}

holds() {	# holds <holder> <module>
	[ -e "/sys/module/$2/holders/$1" ]
}

refcnt_is() {
	[ "$(cat "/sys/module/$1/refcnt")" = "$2" ]
}

param_is() {	# param_is <module> <param> <value>
	[ "$(cat "/sys/module/$1/parameters/$2")" = "$3" ]
}

msg() {
	ktap_check "message: $1" has_msg "$1"
}

unload_all() {
	for m in mlt_symget mlt_chain mlt_prop_wrapper_user mlt_prop_plain_user \
		 mlt_inherit mlt_gpl_user ndiswrapper mlt_reexport_shim \
		 mlt_prop_exporter mlt_gpl_exporter; do
		loaded $m && rmmod $m
	done
	true
}

# --- policy off ---------------------------------------------------------

case_gpl_uses_gplonly() {
	log_start
	ktap_check "kernel not proprietary-tainted yet" not kernel_proprietary
	load_ok mlt_gpl_exporter
	load_ok mlt_gpl_user
	ktap_check "mlt_gpl_user taint is O" taint_is mlt_gpl_user O
	ktap_check "mlt_gpl_exporter taint is O" taint_is mlt_gpl_exporter O
	ktap_check "kernel still not proprietary-tainted" not kernel_proprietary
	ktap_check "mlt_gpl_user holds mlt_gpl_exporter" \
		holds mlt_gpl_user mlt_gpl_exporter
	ktap_check "mlt_gpl_exporter refcnt is 1" refcnt_is mlt_gpl_exporter 1
	ktap_check "no licence message" no_msg "module license"
	log_show
}

case_unload_order() {
	log_start
	ktap_check "rmmod mlt_gpl_exporter fails while held" \
		not unload mlt_gpl_exporter
	ktap_check "mlt_gpl_exporter still loaded" loaded mlt_gpl_exporter
	ktap_check "rmmod mlt_gpl_user" unload mlt_gpl_user
	ktap_check "holder gone" not holds mlt_gpl_user mlt_gpl_exporter
	ktap_check "mlt_gpl_exporter refcnt is 0" refcnt_is mlt_gpl_exporter 0
	ktap_check "rmmod mlt_gpl_exporter" unload mlt_gpl_exporter
	ktap_check "mlt_gpl_exporter unloaded" not_loaded mlt_gpl_exporter
	log_show
}

case_proprietary_licence_taints() {
	log_start
	load_ok mlt_prop_exporter
	ktap_check "mlt_prop_exporter taint is PO" taint_is mlt_prop_exporter PO
	ktap_check "kernel proprietary-tainted" kernel_proprietary
	msg "mlt_prop_exporter: module license 'Proprietary' taints kernel."
	msg "mlt_prop_exporter: module license taints kernel."
	log_show
}

case_proprietary_refused_gplonly() {
	log_start
	load_ok mlt_gpl_exporter
	load_refused mlt_prop_user
	msg "mlt_prop_user: Unknown symbol mlt_gpl_only_fn (err -2)"
	ktap_check "mlt_gpl_exporter has no holder" \
		refcnt_is mlt_gpl_exporter 0
	log_show
}

case_proprietary_plain_allowed() {
	log_start
	load_ok mlt_prop_plain_user
	ktap_check "mlt_prop_plain_user taint is PO" \
		taint_is mlt_prop_plain_user PO
	ktap_check "mlt_prop_plain_user holds mlt_gpl_exporter" \
		holds mlt_prop_plain_user mlt_gpl_exporter
	ktap_check "rmmod mlt_prop_plain_user" unload mlt_prop_plain_user
	log_show
}

case_shim_gplonly_then_proprietary() {
	log_start
	load_refused mlt_shim
	msg "mlt_shim: module using GPL-only symbols uses symbols mlt_prop_fn from proprietary module mlt_prop_exporter."
	msg "mlt_shim: Unknown symbol mlt_prop_fn (err -2)"
	ktap_check "no taint inherited" no_msg "mlt_shim: module uses symbols"
	ktap_check "mlt_prop_exporter refcnt is 0" refcnt_is mlt_prop_exporter 0
	log_show
}

case_proprietary_first_inherits() {
	log_start
	load_ok mlt_inherit
	msg "mlt_inherit: module uses symbols mlt_prop_fn from proprietary module mlt_prop_exporter, inheriting taint."
	ktap_check "mlt_inherit taint is PO" taint_is mlt_inherit PO
	ktap_check "weak GPL-only reference hidden (NULL)" \
		param_is mlt_inherit gplonly_resolved N
	ktap_check "mlt_inherit holds mlt_prop_exporter" \
		holds mlt_inherit mlt_prop_exporter
	ktap_check "mlt_inherit does not hold mlt_gpl_exporter" \
		not holds mlt_inherit mlt_gpl_exporter
	ktap_check "rmmod mlt_prop_exporter fails while held" \
		not unload mlt_prop_exporter
	ktap_check "rmmod mlt_inherit" unload mlt_inherit
	ktap_check "mlt_prop_exporter refcnt is 0" refcnt_is mlt_prop_exporter 0
	log_show
}

case_proprietary_first_then_gplonly() {
	log_start
	load_refused mlt_inherit_strong
	msg "mlt_inherit_strong: module uses symbols mlt_prop_fn from proprietary module mlt_prop_exporter, inheriting taint."
	msg "mlt_inherit_strong: Unknown symbol mlt_gpl_only_fn (err -2)"
	ktap_check "no GPL-only refusal message" \
		no_msg "mlt_inherit_strong: module using GPL-only symbols"
	log_show
}

case_symbol_get() {
	log_start
	load_ok mlt_symget
	ktap_check "symbol_get(GPL-only of a GPL module) returned it" \
		param_is mlt_symget got_gpl_only Y
	ktap_check "symbol_get(plain of a GPL module) refused" \
		param_is mlt_symget got_plain N
	ktap_check "symbol_get(plain of a proprietary module) refused" \
		param_is mlt_symget got_prop N
	msg "failing symbol_get of non-GPLONLY symbol mlt_plain_fn."
	msg "failing symbol_get of non-GPLONLY symbol mlt_prop_fn."
	ktap_check "mlt_gpl_exporter refcnt is 1 (symbol_get)" \
		refcnt_is mlt_gpl_exporter 1
	ktap_check "symbol_get adds no holders link" \
		not holds mlt_symget mlt_gpl_exporter
	ktap_check "rmmod mlt_gpl_exporter fails while referenced" \
		not unload mlt_gpl_exporter
	log_show
}

# symbol_get() looks at the licence only: a GPL-only export of a
# proprietary module is returned and no taint is inherited (mainline).
case_symbol_get_owner_taint() {
	log_start
	ktap_check "symbol_get(GPL-only of a proprietary module) returned it" \
		param_is mlt_symget got_prop_gpl Y
	ktap_check "mlt_symget taint is O (nothing inherited)" \
		taint_is mlt_symget O
	ktap_check "mlt_prop_exporter refcnt is 1 (symbol_get)" \
		refcnt_is mlt_prop_exporter 1
	ktap_check "rmmod mlt_symget (symbol_put at exit)" unload mlt_symget
	ktap_check "mlt_gpl_exporter refcnt back to 0" \
		refcnt_is mlt_gpl_exporter 0
	ktap_check "mlt_prop_exporter refcnt back to 0" \
		refcnt_is mlt_prop_exporter 0
	log_show
}

case_lve_by_name() {
	log_start
	load_refused lve
	msg "lve: Unknown symbol ktime_get (err -2)"
	log_show
}

case_policy_off_shim() {
	log_start
	ktap_check "gplonly_reexports is off" param_is module gplonly_reexports N
	load_ok mlt_reexport_shim
	ktap_check "mlt_reexport_shim taint is O" taint_is mlt_reexport_shim O
	load_ok mlt_prop_wrapper_user
	ktap_check "mlt_prop_wrapper_user taint is PO" \
		taint_is mlt_prop_wrapper_user PO
	ktap_check "mlt_prop_wrapper_user holds mlt_reexport_shim" \
		holds mlt_prop_wrapper_user mlt_reexport_shim
	ktap_check "rmmod mlt_prop_wrapper_user" unload mlt_prop_wrapper_user
	log_show
}

case_policy_off_chain() {
	log_start
	load_ok mlt_chain
	msg "mlt_chain: module uses symbols mlt_prop_fn from proprietary module mlt_prop_exporter, inheriting taint."
	ktap_check "mlt_chain taint is PO" taint_is mlt_chain PO
	ktap_check "rmmod mlt_chain" unload mlt_chain
	log_show
}

case_policy_on_shim() {
	log_start
	ktap_check "turn gplonly_reexports on" sh -c "echo 1 > $policy"
	ktap_check "gplonly_reexports is on" param_is module gplonly_reexports Y
	load_refused mlt_prop_wrapper_user
	msg "mlt_prop_wrapper_user: proprietary module cannot use symbol mlt_shim_wrapper of mlt_reexport_shim: exports of modules using GPL-only symbols are GPL-only (module.gplonly_reexports)."
	msg "mlt_prop_wrapper_user: Unknown symbol mlt_shim_wrapper (err -2)"
	ktap_check "mlt_reexport_shim refcnt is 0" refcnt_is mlt_reexport_shim 0
	log_show
}

case_policy_on_plain() {
	log_start
	load_ok mlt_prop_plain_user
	ktap_check "rmmod mlt_prop_plain_user" unload mlt_prop_plain_user
	log_show
}

case_policy_on_chain() {
	log_start
	load_refused mlt_chain
	msg "mlt_chain: module using GPL-only symbols uses symbols mlt_prop_fn from proprietary module mlt_prop_exporter."
	ktap_check "no taint inherited" no_msg "inheriting taint"
	log_show
}

case_policy_stays_on() {
	log_start
	ktap_check "writing 0 fails" not sh -c "echo 0 > $policy 2>/dev/null"
	ktap_check "gplonly_reexports still on" param_is module gplonly_reexports Y
	log_show
}

case_unload_all() {
	log_start
	unload_all
	for m in mlt_gpl_exporter mlt_prop_exporter mlt_reexport_shim; do
		ktap_check "$m unloaded" not_loaded $m
	done
	log_show
}

# --- booted with module.gplonly_reexports=1 -----------------------------

case_boot_policy_on() {
	log_start
	ktap_check "gplonly_reexports is on from boot" \
		param_is module gplonly_reexports Y
}

case_ndiswrapper_by_name() {
	log_start
	ktap_check "kernel not proprietary-tainted yet" not kernel_proprietary
	load_ok ndiswrapper
	ktap_check "ndiswrapper taint is O (not P)" taint_is ndiswrapper O
	ktap_check "kernel proprietary-tainted" kernel_proprietary
	msg "ndiswrapper: module license taints kernel."
	ktap_check "no licence string message" no_msg "module license '"
	ktap_check "rmmod ndiswrapper" unload ndiswrapper
	log_show
}

case_boot_policy_shim() {
	log_start
	load_ok mlt_reexport_shim
	load_ok mlt_prop_exporter
	load_refused mlt_prop_wrapper_user
	msg "mlt_prop_wrapper_user: proprietary module cannot use symbol mlt_shim_wrapper of mlt_reexport_shim: exports of modules using GPL-only symbols are GPL-only (module.gplonly_reexports)."
	load_refused mlt_chain
	msg "mlt_chain: module using GPL-only symbols uses symbols mlt_prop_fn from proprietary module mlt_prop_exporter."
	log_show
}

case_boot_policy_plain() {
	log_start
	load_ok mlt_gpl_exporter
	load_ok mlt_prop_plain_user
	ktap_check "mlt_prop_plain_user taint is PO" \
		taint_is mlt_prop_plain_user PO
	log_show
}

# --- main -----------------------------------------------------------------

if grep -q 'module.gplonly_reexports=1' /proc/cmdline; then
	ktap_begin module_loading_boot_policy 5
	ktap_case boot_param_turns_policy_on case_boot_policy_on
	ktap_case ndiswrapper_taints_kernel_not_module case_ndiswrapper_by_name
	ktap_case boot_policy_refuses_shim_reexport case_boot_policy_shim
	ktap_case boot_policy_allows_plain_export case_boot_policy_plain
	ktap_case unload_all case_unload_all
else
	ktap_begin module_loading 18
	ktap_case gpl_module_uses_gplonly_export case_gpl_uses_gplonly
	ktap_case unload_order_follows_holders case_unload_order
	ktap_case proprietary_licence_taints_kernel case_proprietary_licence_taints
	ktap_case proprietary_module_refused_gplonly_export case_proprietary_refused_gplonly
	ktap_case proprietary_module_uses_plain_export case_proprietary_plain_allowed
	ktap_case gplonly_first_then_proprietary_refused case_shim_gplonly_then_proprietary
	ktap_case proprietary_first_inherits_taint_hides_gplonly case_proprietary_first_inherits
	ktap_case proprietary_first_then_gplonly_refused case_proprietary_first_then_gplonly
	ktap_case symbol_get_returns_gplonly_only case_symbol_get
	ktap_case symbol_get_ignores_owner_taint case_symbol_get_owner_taint
	ktap_case lve_is_proprietary_by_name case_lve_by_name
	ktap_case policy_off_shim_reexport_allowed case_policy_off_shim
	ktap_case policy_off_chain_inherits_taint case_policy_off_chain
	ktap_case policy_on_shim_reexport_refused case_policy_on_shim
	ktap_case policy_on_plain_export_allowed case_policy_on_plain
	ktap_case policy_on_chain_refused case_policy_on_chain
	ktap_case policy_cannot_be_turned_off case_policy_stays_on
	ktap_case unload_all case_unload_all
fi
ktap_end
