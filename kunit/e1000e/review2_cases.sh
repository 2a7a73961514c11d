# SPDX-License-Identifier: GPL-2.0-only
#
# A check for kunit/e1000e/run.sh (busybox sh), not wired in yet:
# review-2 E8 on patches/0016 (fails on the series before the fix).  E4
# (case_bind_dry) and E7 (rx_drop in case_updown) are in run.sh.
#
# To take it in, in run.sh:
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
