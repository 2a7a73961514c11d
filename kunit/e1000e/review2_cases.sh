# SPDX-License-Identifier: GPL-2.0-only
#
# Cases and checks for kunit/e1000e/run.sh (busybox sh), kept apart until
# the owner of run.sh takes them in: review-2 E4, E7, E8 on
# patches/0016.  Each fails on the series before the fix.
#
# To take them in, in run.sh:
#   - after ". /guest/net.sh":  . /guest/review2_cases.sh (and
#     scripts/e1000e-check copies this file to /guest), or paste;
#   - E4: "ktap_case e1000e_rx_bind_dry case_bind_dry" after the
#     bind_unbind case, and ktap_begin e1000e_rx 8 -> 9;
#   - E7: in case_updown(), "d0=$(rx_drop)" before the first
#     "u0=$(ctr rx_unsplit_drop)", and after the ping check:
#         d1=$(rx_drop)
#         ktap_check "the 4 + 3 drops in rx_dropped too (/proc/net/dev drop +$((d1 - d0)))" \
#                 test $((d1 - d0)) -ge 7
#     (before 0016's fix, e1000e_get_stats64() left rx_dropped at 0);
#   - E8: needs an "rxcsum" command in e1k_tool (below), then
#     rxcsum_after_unbind in case_bind_unbind() around its (a) part,
#     as shown at the function.
#
# e1k_tool rxcsum <ifname> on|off|get: ETHTOOL_SRXCSUM (unless get), then
# ETHTOOL_GRXCSUM, printing "rxcsum <0|1>"; in e1k_tool.c's main(), as
# its "tso" command does:
#	struct ethtool_value ev = { .cmd = ETHTOOL_SRXCSUM };
#	if (strcmp(argv[3], "get")) {
#		ev.data = !strcmp(argv[3], "on");
#		if (e1k_ioctl(fd, argv[2], &ev) < 0) return 1;
#	}
#	ev.cmd = ETHTOOL_GRXCSUM;
#	if (e1k_ioctl(fd, argv[2], &ev) < 0) return 1;
#	printf("rxcsum %u\n", ev.data);
# (e1k_ioctl standing for the SIOCETHTOOL call the tool already makes.)

# rx_drop: the drop column of A's device in A's /proc/net/dev, which is
# rx_dropped + rx_missed_errors of ndo_get_stats64().
rx_drop() {
	in_a sed 's/:/ /' /proc/net/dev | awk -v i="$IF_A" '$1 == i { print $5 }'
}

# E4: a provider that cannot fill the seventeen descriptors the refill
# needs to hand the device its first sixteen (it writes the tail when it
# fills the first descriptor of the next group) must not bind: before
# the fix, the restart reported success and the ring had nothing posted,
# so A received nothing until the unbind.  netgpu with 8 buffers (8
# pages; one page per descriptor at MTU 1500).
case_bind_dry() {
	local bufs
	if ng_start /tmp/ngd.out /tmp/ngd.cmd 8 60; then
		ng_cmd stats
		bufs=$(ng_stat ifq bufs_nic)
		( in_b timeout 20 "$NSIM_TCP" send $A_IP $PORT 65536 $((SEED + 60)) ) \
			> /dev/null 2>&1
		ng_cmd unbind
		ng_cmd quit
		wait "$NG_BG"
		ktap_check "(dry) netgpu with 8 buffers refused (it bound, bufs_nic $bufs)" false
	else
		diag_file netgpu /tmp/ngd.out
		ktap_check "(dry) netgpu with 8 buffers refused with ENOMEM (patches/0016)" \
			grep -q 'BIND_QUEUE queue 0: ENOMEM' /tmp/ngd.out
	fi
	ktap_check "(dry) A receives after the refused bind" \
		transfer after_dry $((SMALL / 4)) $((SEED + 61))
	ktap_check "(dry) no page pool left behind" ngrx_pools_gone
	return $ktap_fail
}

# E8: rx checksumming that a user turned off while a provider was bound
# (e1000_fix_features() keeps it on, "on [requested off]") is off once
# the provider is gone; before the fix it stayed on until some other
# feature update.  In case_bind_unbind(), (a):
#	after "ktap_check "(a) netgpu binds $IF_A rx queue 0 under the stream""
#		rxcsum_off_while_bound
#	after "ktap_check "(a) unbound, the bind tool exited 0""
#		rxcsum_after_unbind
rxcsum_off_while_bound() {
	ktap_check "(a) rx checksumming stays on while bound, though turned off" \
		test "$(in_a "$E1K" rxcsum "$IF_A" off)" = "rxcsum 1"
}

rxcsum_after_unbind() {
	ktap_check "(a) rx checksumming off after the unbind, as the user asked" \
		test "$(in_a "$E1K" rxcsum "$IF_A" get)" = "rxcsum 0"
	in_a "$E1K" rxcsum "$IF_A" on > /dev/null
}
