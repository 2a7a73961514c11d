# SPDX-License-Identifier: GPL-2.0-only
#
# Guest script of scripts/bench-e1000e (busybox sh, run as /guest/run by
# scripts/initramfs-run on the non-debug benchmark kernel; /guest holds
# nsim_tcp, e1k_tool, net.sh, the measuring helpers of the netdevsim
# benchmark as nsim_bench.sh (kunit/netdevsim/bench.sh: bench_stat,
# bench_listen, bench_window, bench_line) and the out-of-tree modules:
# e1000e_stock.ko, and e1000e_patched.ko with the control).
#
# Review 2, E9: e1000e's ordinary receive path (no memory provider bound)
# before and after patches/0015-0016, in one boot.  Two QEMU e1000e NICs
# (82574L emulation) on one QEMU hub, each in its own network namespace:
# A (10.77.0.1, the receiver, the first PCI address) and B (10.77.0.2,
# the sender, always on the built-in e1000e).  A's one PCI device is
# bound in turn to
#   stock        e1000e_stock: the pristine 6.12 e1000e built as an
#                out-of-tree module, renamed (module and pci_driver name)
#   patched      e1000e: the built-in driver with patches/0015-0016
#                (packet split from a page_pool), nothing bound to it
#   patched_mod  (e1kb_control=1 only) e1000e_patched: the patched
#                source built as a module the way stock is: how much of
#                patched/stock is built-in against module, not the patch
# The same device for every driver (not one NIC per driver): the same
# PCI slot, interrupt line, QEMU device model and hub port, so that the
# driver is the only difference.  Before every transfer A is unbound
# from its driver and bound to the transfer's (even the same one again):
# every transfer starts on a freshly probed device, new ring, new pool.
# The new interface goes into A's namespace with IPv6 off and the
# round's MTU, is brought up, and one ping from B settles ARP both ways,
# all before the measured window.  Neither namespace keeps TCP metrics
# (tcp_no_metrics_save): no connection inherits the previous one's
# ssthresh or RTT.  B stays at MTU 9000 (its link never resets during
# the rounds): A's MTU sets the segment size, through the MSS A
# advertises.  B's TSO is off (QEMU 7.2's hub, see run.sh).
#
# The transfer: nsim_tcp send in B, nsim_tcp recv in A (read() into a
# 64 KiB user buffer, e1kb_recv_size=<bytes> another size), the same
# seeded stream for every driver of a round, every byte checked by the
# receiver with stream_verify() (NSIM_TCP_VERIFY=1; no Fletcher sum on
# the receiving side, as in bench-rx).  Measured as in bench-rx: wall
# time from the sender's start to both exits, and the busy ticks of all
# CPUs over that window (/proc/stat: user, nice, system, irq, softirq;
# IRQ time accounting on).
#
# Rounds: a warm-up round (run 0, discarded by the host) and
# e1kb_rounds rounds; in each round, for each MTU of e1kb_mtus (1500
# then 9000), every driver once, the order rotated from round to round
# (round r starts with driver r mod n: stock first in even rounds,
# patched first in odd ones).  Each transfer prints
#   bench-e1k<mtu> <driver> run <r> wall <s> busy <ticks> user <ticks>
#     sys <ticks> irq <ticks> softirq <ticks> all <ticks> hz 100
#     loop_secs <s> loop_cpu <s>
# and a line with the driver A had, the packet-split counter (patched:
# must grow at MTU 9000, by a packet per 8948 bytes at least, and stay at
# MTU 1500; stock has no such counter: "-") and the ring's starvation
# counters.
#
# Parameters (kernel command line): e1kb_rounds (default 10),
# e1kb_bytes (default 33554432), e1kb_seed (default 1; round r sends
# seed + r), e1kb_mtus (default 1500,9000), e1kb_recv_size (default
# 65536), e1kb_control (default 0).

. /lib/ktap.sh
# in_a, in_b, ex_a, new_netns, quiet, wait_for
. /guest/net.sh
# bench_stat, bench_listen, bench_window, bench_line
. /guest/nsim_bench.sh

ROUNDS=${e1kb_rounds:-10}
BYTES=${e1kb_bytes:-33554432}
SEED=${e1kb_seed:-1}
MTUS=$(echo "${e1kb_mtus:-1500,9000}" | tr ',' ' ')
RSZ=${e1kb_recv_size:-65536}
CONTROL=${e1kb_control:-0}
PORT=7777
PCI=/sys/bus/pci
A_IP=10.77.0.1 B_IP=10.77.0.2
NSIM_TCP=/guest/nsim_tcp
E1K=/guest/e1k_tool
WHO="stock patched"
[ "$CONTROL" = 1 ] && WHO="stock patched patched_mod"

# drv_of <participant>: its PCI driver's name.
drv_of() {
	case $1 in
	stock) echo e1000e_stock ;;
	patched) echo e1000e ;;
	patched_mod) echo e1000e_patched ;;
	esac
}

# The driver a PCI device is bound to (empty if none).
pci_drv() {
	local l
	l=$(readlink "$PCI/devices/$1/driver" 2>/dev/null) || return 0
	basename "$l"
}

# The interface of a PCI device (in whatever namespace it is).
pci_if() { ls "$PCI/devices/$1/net/" 2>/dev/null; }

# link_up <in_a|in_b> <ifname> <seconds>: carrier within <seconds>.
link_up() {
	local i=0
	while ! $1 ip link show dev "$2" 2>/dev/null | grep -q LOWER_UP; do
		i=$((i + 1))
		[ $i -le $(($3 * 10)) ] || return 1
		usleep 100000
	done
}

# into_ns <ifname> <pid> <in_a|in_b> <address> <mtu>: as run.sh's, with
# the MTU set while the device is down (no extra reset).
into_ns() {
	ip link set dev "$1" netns "$2" 2>/dev/null ||
		"$NSIM_TCP" netns "$1" "$2"
	$3 sh -c "echo 1 > /proc/sys/net/ipv6/conf/$1/disable_ipv6" 2>/dev/null
	$3 ip addr add "$4/24" dev "$1"
	$3 ip link set dev "$1" mtu "$5"
	$3 ip link set dev "$1" up
}

# ctr <counter>: a counter of A's `ethtool -S`, "-" if it has none.
ctr() {
	local v
	v=$(in_a "$E1K" stat "$IF_A" "$1" 2>/dev/null | sed -n "s/^$1 //p")
	echo "${v:--}"
}

# bind_a <driver> <mtu>: A's PCI device unbound from its driver and bound
# to <driver>, its interface (IF_A) in A's namespace at <mtu>, up, a ping
# from B answered.
bind_a() {
	local cur
	cur=$(pci_drv "$PCI_A")
	if [ -n "$cur" ]; then
		echo "$PCI_A" > "$PCI/drivers/$cur/unbind" || return 1
	fi
	echo "$PCI_A" > "$PCI/drivers/$1/bind" || return 1
	[ "$(pci_drv "$PCI_A")" = "$1" ] || return 1
	IF_A=$(pci_if "$PCI_A")
	[ -n "$IF_A" ] || return 1
	into_ns "$IF_A" "$PID_A" in_a $A_IP "$2"
	link_up in_a "$IF_A" 20 || return 1
	# ARP both ways (A's neighbours went with its old interface).
	quiet in_b ping -c 1 -W 2 $A_IP || quiet in_b ping -c 1 -W 5 $A_IP
}

no_metrics() {
	in_a sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_no_metrics_save' &&
		in_b sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_no_metrics_save'
}

case_setup() {
	local pcis d
	ktap_check "built-in e1000e present" test -d $PCI/drivers/e1000e
	ktap_check "insmod e1000e_stock.ko (the pristine driver, renamed)" \
		insmod /guest/e1000e_stock.ko
	ktap_check "its PCI driver e1000e_stock registered" \
		test -d $PCI/drivers/e1000e_stock
	if [ "$CONTROL" = 1 ]; then
		ktap_check "insmod e1000e_patched.ko (the patched driver as a module)" \
			insmod /guest/e1000e_patched.ko
		ktap_check "its PCI driver e1000e_patched registered" \
			test -d $PCI/drivers/e1000e_patched
	fi
	[ $ktap_fail -eq 0 ] || return 1
	pcis=$(ls -d $PCI/drivers/e1000e/0000:* 2>/dev/null | sed 's|.*/||' | sort)
	PCI_A=$(echo "$pcis" | sed -n 1p)
	PCI_B=$(echo "$pcis" | sed -n 2p)
	ktap_check "two e1000e devices on the built-in driver ($PCI_A, $PCI_B)" \
		test "$(echo "$pcis" | wc -l)" -eq 2
	for d in e1000e_stock e1000e_patched; do
		[ -d $PCI/drivers/$d ] || continue
		ktap_check "$d took no device at insmod" \
			test -z "$(ls -d $PCI/drivers/$d/0000:* 2>/dev/null)"
	done
	[ $ktap_fail -eq 0 ] || return 1
	IF_B=$(pci_if "$PCI_B")
	PID_A=$(new_netns)
	PID_B=$(new_netns)
	in_a ip link set dev lo up
	in_b ip link set dev lo up
	# Each connection starts from the same state: no TCP metrics (ssthresh,
	# RTT) cached from the previous transfer, whichever driver it had.
	ktap_check "TCP metrics not saved in A and B" no_metrics
	into_ns "$IF_B" "$PID_B" in_b $B_IP 9000
	ktap_check "B's TSO off" quiet in_b "$E1K" tso "$IF_B" off
	ktap_check "link up on B ($IF_B, MTU 9000) within 20 s" \
		link_up in_b "$IF_B" 20
	# Each driver takes A once; the patched source has patches/0016's
	# counter, the pristine one not.
	for d in $WHO; do
		ktap_check "A bound to $(drv_of "$d"), MTU 9000, B's ping answered" \
			bind_a "$(drv_of "$d")" 9000 || continue
		# rx_unsplit_drop is patches/0016's (the pristine driver
		# has rx_header_split too: its packet split counter).
		if [ "$d" = stock ]; then
			ktap_check "$(drv_of "$d") has no rx_unsplit_drop counter: the pristine driver" \
				test "$(ctr rx_unsplit_drop)" = -
		else
			ktap_check "$(drv_of "$d") has rx_unsplit_drop: the patched driver" \
				test "$(ctr rx_unsplit_drop)" != -
		fi
	done
	ktap_diag "A $PCI_A, B $PCI_B ($IF_B); interrupts: $(grep -E 'eth|e1000' /proc/interrupts | tr -s ' ' | tr '\n' '|')"
	return $ktap_fail
}

# e1kb_one <participant> <bytes> <seed> <run> (MTU $E1KB_MTU): one
# transfer on a freshly bound A.
e1kb_one() {
	local who=$1 bytes=$2 seed=$3 run=$4 mtu=$E1KB_MTU kind=e1k$E1KB_MTU
	local drv s0 s1 src rrc
	drv=$(drv_of "$who")
	if ! bind_a "$drv" "$mtu"; then
		echo "bench-$kind $who run $run FAILED: A not bound to $drv, up at MTU $mtu"
		return 1
	fi
	s0=$(ctr rx_header_split)
	bench_listen "$kind" "$who" "$run" "$NSIM_TCP" recv $PORT "$bytes" \
		"$seed" "$RSZ" || return 1
	bench_window timeout 600 "$NSIM_TCP" send "$A_IP" $PORT "$bytes" "$seed"
	src=$BENCH_SRC rrc=$BENCH_RRC
	if [ $src -ne 0 ] || [ $rrc -ne 0 ] ||
	   ! grep -q "bytes=$bytes mismatches=0 " /tmp/bench.out; then
		echo "bench-$kind $who run $run FAILED (sender $src, receiver $rrc)"
		cat /tmp/bench.out /tmp/send.out
		return 1
	fi
	s1=$(ctr rx_header_split)
	# shellcheck disable=SC2046 # "secs <s> cpu <s>": two words wanted
	set -- $(grep -oE 'secs=[0-9.]+ cpu=[0-9.]+' /tmp/bench.out | tr '=' ' ')
	bench_line "$kind" "$who" "$run" "$BENCH_T0" "$BENCH_T1" "$BENCH_S0" \
		"$BENCH_S1" "${2:-0}" "${4:-0}"
	echo "bench-$kind $who run $run: driver $(pci_drv "$PCI_A") $IF_A mtu $(in_a ip link show dev "$IF_A" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')," \
		"rx_header_split ${s0}->${s1}, alloc_rx_buff_failed $(ctr alloc_rx_buff_failed)," \
		"rx_no_buffer_count $(ctr rx_no_buffer_count), rx_missed_errors $(ctr rx_missed_errors)"
	# Both drivers' path: packet split at jumbo MTU (the patched
	# driver's pages from a page_pool), none at 1500.
	[ "$s0" != - ] || return 0
	if [ "$mtu" -gt 1500 ] && [ $((s1 - s0)) -lt $((bytes / 8948)) ]; then
		echo "bench-$kind $who run $run FAILED: rx_header_split +$((s1 - s0)), under a packet per 8948 bytes"
		return 1
	fi
	if [ "$mtu" -le 1500 ] && [ "$s1" -ne "$s0" ]; then
		echo "bench-$kind $who run $run FAILED: packet split at MTU $mtu"
		return 1
	fi
}

# A warm-up round (0) and ROUNDS rounds; in each, for each MTU, every
# participant once, the order rotated (round r starts with the r mod n'th).
e1kb_rounds() {
	local r k who
	for r in $(seq 0 "$ROUNDS"); do
		for E1KB_MTU in $MTUS; do
			# shellcheck disable=SC2086 # the list, split
			set -- $WHO
			k=$((r % $#))
			while [ $k -gt 0 ]; do
				set -- "$@" "$1"
				shift
				k=$((k - 1))
			done
			for who in "$@"; do
				e1kb_one "$who" "$BYTES" $((SEED + r)) "$r" || return 1
			done
		done
	done
}

ktap_begin e1000e_bench 1
ktap_case e1000e_bench_setup case_setup
ktap_end || exit 1
echo "bench-e1k: bytes=$BYTES seed=$SEED rounds=$ROUNDS (+1 warm-up) mtus=$MTUS" \
	"recv_size=$RSZ drivers=$(echo $WHO | tr ' ' ,) verify=1" \
	"cpus=$(grep -c '^processor' /proc/cpuinfo)"
export NSIM_TCP_SUM=0 NSIM_TCP_VERIFY=1
e1kb_rounds || exit 1
echo "bench-e1k: done"
