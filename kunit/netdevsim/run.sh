# SPDX-License-Identifier: GPL-2.0-only
#
# Guest script of scripts/netdevsim-check (busybox sh, run as /guest/run
# by scripts/initramfs-run; /guest holds nsim_tcp).
#
# Two netdevsim devices (one port, one queue each), each in its own
# network namespace, linked as peers, 10.77.0.1 (A, the receiver) and
# 10.77.0.2 (B, the sender).  TCP carries a seeded pattern from B to A,
# every byte checked by the receiver, with A's emulated header split
# (debugfs ports/0/rx_split) off and on, and with A's rx queue restarted
# (ports/0/queue_reset) in the middle of a transfer.  The split path is
# proven by A's rx_split_{packets,bytes,drops} counters.
#
# Parameters (kernel command line, name=value): nsim_bytes (default
# 4194304), nsim_seed (default 1), nsim_devmem_no_wait (see
# devmem_detached).

. /lib/ktap.sh

BYTES=${nsim_bytes:-4194304}
SEED=${nsim_seed:-1}
PORT=7777
BUS=/sys/bus/netdevsim
DFS=/sys/kernel/debug/netdevsim
A_ID=11 B_ID=12
A_DFS=$DFS/netdevsim$A_ID/ports/0
B_DFS=$DFS/netdevsim$B_ID/ports/0
A_IP=10.77.0.1 B_IP=10.77.0.2
A_IP6=fd77::1 B_IP6=fd77::2
NSIM_TCP=/guest/nsim_tcp

in_a() { nsenter -t "$PID_A" -n "$@"; }
in_b() { nsenter -t "$PID_B" -n "$@"; }
ifindex() { "$@" | sed -n '1s/^\([0-9]*\):.*/\1/p'; }

# A new process in a new network namespace; prints its PID once the
# namespace is in place.
new_netns() {
	local pid self
	unshare -n sleep 100000 < /dev/null > /dev/null 2>&1 &
	pid=$!
	self=$(readlink /proc/self/ns/net)
	while [ "$(readlink /proc/$pid/ns/net 2>/dev/null)" = "$self" ]; do
		usleep 10000
	done
	echo "$pid"
}

counter() { cat "$A_DFS/$1"; }
quiet() { "$@" > /dev/null 2>&1; }

# transfer <label> <bytes> <seed> [<write size>] [<background command>]:
# B sends, A receives; both lines go to the console; returns 0 if both
# ends moved <bytes> and the receiver saw no bad byte and the sums match.
transfer() {
	local label=$1 bytes=$2 seed=$3 wsz=${4:-65536} bg=${5:-} rpid rrc src srcsum rsum
	rm -f /tmp/recv.out
	in_a "$NSIM_TCP" recv $PORT "$bytes" "$seed" > /tmp/recv.out 2>&1 &
	rpid=$!
	while ! grep -q listening /tmp/recv.out 2>/dev/null; do
		usleep 20000
		kill -0 $rpid 2>/dev/null || break
	done
	[ -n "$bg" ] && { $bg & bgpid=$!; }
	in_b "$NSIM_TCP" send "${TO:-$A_IP}" $PORT "$bytes" "$seed" "$wsz" > /tmp/send.out 2>&1
	src=$?
	wait $rpid
	rrc=$?
	[ -n "$bg" ] && wait $bgpid
	ktap_diag "$label: $(grep -v listening /tmp/recv.out)"
	ktap_diag "$label: $(cat /tmp/send.out)"
	rsum=$(sed -n 's/.*recv .*sum=\([0-9a-f]*\).*/\1/p' /tmp/recv.out)
	srcsum=$(sed -n 's/.*send .*sum=\([0-9a-f]*\).*/\1/p' /tmp/send.out)
	[ $src -eq 0 ] && [ $rrc -eq 0 ] && [ -n "$rsum" ] && [ "$rsum" = "$srcsum" ]
}

case_setup() {
	ktap_check "netdevsim bus present" test -d $BUS
	[ $ktap_fail -eq 0 ] || return 1
	echo "$A_ID 1 1" > $BUS/new_device
	echo "$B_ID 1 1" > $BUS/new_device
	IF_A=$(ls $BUS/devices/netdevsim$A_ID/net/)
	IF_B=$(ls $BUS/devices/netdevsim$B_ID/net/)
	ktap_check "devices created ($IF_A, $IF_B)" test -n "$IF_A" -a -n "$IF_B"
	PID_A=$(new_netns)
	PID_B=$(new_netns)
	ip link set dev "$IF_A" netns "$PID_A" 2>/dev/null ||
		"$NSIM_TCP" netns "$IF_A" "$PID_A"
	ip link set dev "$IF_B" netns "$PID_B" 2>/dev/null ||
		"$NSIM_TCP" netns "$IF_B" "$PID_B"
	ktap_check "$IF_A moved to netns A" quiet in_a ip link show dev "$IF_A"
	ktap_check "$IF_B moved to netns B" quiet in_b ip link show dev "$IF_B"
	in_a ip addr add $A_IP/24 dev "$IF_A"
	in_b ip addr add $B_IP/24 dev "$IF_B"
	in_a sh -c "echo 0 > /proc/sys/net/ipv6/conf/$IF_A/accept_dad"
	in_b sh -c "echo 0 > /proc/sys/net/ipv6/conf/$IF_B/accept_dad"
	in_a ip -6 addr add $A_IP6/64 dev "$IF_A"
	in_b ip -6 addr add $B_IP6/64 dev "$IF_B"
	in_a ip link set dev "$IF_A" up
	in_b ip link set dev "$IF_B" up
	in_a ip link set dev lo up
	in_b ip link set dev lo up
	IDX_A=$(ifindex in_a ip link show dev "$IF_A")
	IDX_B=$(ifindex in_b ip link show dev "$IF_B")
	exec 5< /proc/$PID_A/ns/net
	exec 6< /proc/$PID_B/ns/net
	ktap_check "link_device 5:$IDX_A 6:$IDX_B" \
		sh -c "echo '5:$IDX_A 6:$IDX_B' > $BUS/link_device"
	ktap_check "debugfs knobs present" \
		test -f $A_DFS/rx_split -a -f $A_DFS/rx_split_packets -a \
		-f $A_DFS/rx_split_bytes -a -f $A_DFS/rx_split_drops -a \
		-f $A_DFS/queue_reset
	ktap_check "ping B -> A" quiet in_b ping -c 2 -W 5 $A_IP
	ktap_check "ping6 B -> A" quiet in_b ping6 -c 2 -W 5 $A_IP6
	return $ktap_fail
}

case_tcp_plain() {
	local p0
	echo 0 > $A_DFS/rx_split
	p0=$(counter rx_split_packets)
	ktap_check "transfer $BYTES bytes, seed $SEED, split off" \
		transfer plain "$BYTES" "$SEED"
	ktap_check "split path not taken (rx_split_packets $p0 -> $(counter rx_split_packets))" \
		test "$(counter rx_split_packets)" -eq "$p0"
	return $ktap_fail
}

case_tcp_split() {
	local p0 b0 d0 p1 b1 d1
	echo 1 > $A_DFS/rx_split
	p0=$(counter rx_split_packets) b0=$(counter rx_split_bytes) d0=$(counter rx_split_drops)
	ktap_check "transfer $BYTES bytes, seed $((SEED + 1)), split on" \
		transfer split "$BYTES" $((SEED + 1))
	p1=$(counter rx_split_packets) b1=$(counter rx_split_bytes) d1=$(counter rx_split_drops)
	ktap_diag "rx_split_packets +$((p1 - p0)) rx_split_bytes +$((b1 - b0)) rx_split_drops +$((d1 - d0))"
	ktap_check "split path taken" test $((p1 - p0)) -gt 0
	ktap_check "split payload bytes >= bytes sent" test $((b1 - b0)) -ge "$BYTES"
	ktap_diag "split payload bytes beyond the stream (retransmitted): $((b1 - b0 - $BYTES))"
	ktap_check "no split drops" test $((d1 - d0)) -eq 0
	return $ktap_fail
}

case_tcp_split_small_writes() {
	local p0 b0 p1 b1 n=$((BYTES / 4))
	echo 1 > $A_DFS/rx_split
	p0=$(counter rx_split_packets) b0=$(counter rx_split_bytes)
	ktap_check "transfer $n bytes in 1000-byte writes, split on" \
		transfer small "$n" $((SEED + 2)) 1000
	p1=$(counter rx_split_packets) b1=$(counter rx_split_bytes)
	ktap_diag "rx_split_packets +$((p1 - p0)) rx_split_bytes +$((b1 - b0))"
	ktap_check "split payload bytes >= bytes sent" test $((b1 - b0)) -ge "$n"
	ktap_diag "split payload bytes beyond the stream (retransmitted): $((b1 - b0 - $n))"
	return $ktap_fail
}

# Eight restarts of A's rx queue, 0.1 s apart (run by transfer in the
# background, $rpid the receiver): the number that succeeded, and how
# many of them the receiver was still running after, go to /tmp/resets.
case_tcp6_split() {
	local p0 b0 p1 b1
	echo 1 > $A_DFS/rx_split
	p0=$(counter rx_split_packets) b0=$(counter rx_split_bytes)
	TO=$A_IP6 ktap_check "transfer $BYTES bytes over IPv6, split on" \
		transfer ipv6 "$BYTES" $((SEED + 6))
	p1=$(counter rx_split_packets) b1=$(counter rx_split_bytes)
	ktap_diag "rx_split_packets +$((p1 - p0)) rx_split_bytes +$((b1 - b0))"
	ktap_check "split payload bytes >= bytes sent" test $((b1 - b0)) -ge "$BYTES"
	ktap_diag "split payload bytes beyond the stream (retransmitted): $((b1 - b0 - $BYTES))"
	return $ktap_fail
}

# MTU 9000 and 8000-byte writes: segments that are not GSO and still
# need three rx buffers each.
case_tcp_split_jumbo() {
	local b0 b1 n=$((BYTES / 2))
	in_a ip link set dev "$IF_A" mtu 9000
	in_b ip link set dev "$IF_B" mtu 9000
	echo 1 > $A_DFS/rx_split
	b0=$(counter rx_split_bytes)
	ktap_check "transfer $n bytes at MTU 9000 in 8000-byte writes, split on" \
		transfer jumbo "$n" $((SEED + 7)) 8000
	b1=$(counter rx_split_bytes)
	ktap_diag "rx_split_bytes +$((b1 - b0))"
	ktap_check "split payload bytes >= bytes sent" test $((b1 - b0)) -ge "$n"
	ktap_diag "split payload bytes beyond the stream (retransmitted): $((b1 - b0 - $n))"
	in_a ip link set dev "$IF_A" mtu 1500
	in_b ip link set dev "$IF_B" mtu 1500
	return $ktap_fail
}

# devmem TCP, the in-tree memory provider: a udmabuf bound to A's rx
# queue 0 (netdev BIND_RX, which restarts the queue through the queue
# API), so the split path's buffers are net_iovs written through their
# DMA addresses; the receiver reads them back through the memfd.
case_devmem() {
	local p0 b0 d0 p1 b1 d1 rpid rrc src n=$((BYTES / 2))
	echo 0 > $A_DFS/rx_split
	p0=$(counter rx_split_packets) b0=$(counter rx_split_bytes) d0=$(counter rx_split_drops)
	rm -f /tmp/recv.out
	in_a "$NSIM_TCP" devmem "$IF_A" $PORT "$n" $((SEED + 8)) 16 > /tmp/recv.out 2>&1 &
	rpid=$!
	while ! grep -q listening /tmp/recv.out 2>/dev/null; do
		usleep 20000
		kill -0 $rpid 2>/dev/null || break
	done
	in_b "$NSIM_TCP" send $A_IP $PORT "$n" $((SEED + 8)) > /tmp/send.out 2>&1
	src=$?
	wait $rpid
	rrc=$?
	p1=$(counter rx_split_packets) b1=$(counter rx_split_bytes) d1=$(counter rx_split_drops)
	while read -r l; do ktap_diag "devmem: $l"; done < /tmp/recv.out
	ktap_diag "devmem: $(cat /tmp/send.out)"
	ktap_diag "rx_split_packets +$((p1 - p0)) rx_split_bytes +$((b1 - b0)) rx_split_drops +$((d1 - d0))"
	ktap_check "udmabuf bound to rx queue 0" grep -q "bound 16 MiB" /tmp/recv.out
	ktap_check "sender sent $n bytes" test $src -eq 0
	ktap_check "receiver got $n bytes in dma-buf frags, all matching" test $rrc -eq 0
	ktap_check "sums match" test "$(sed -n 's/.*recv .*sum=\([0-9a-f]*\).*/\1/p' /tmp/recv.out)" = \
		"$(sed -n 's/.*send .*sum=\([0-9a-f]*\).*/\1/p' /tmp/send.out)"
	ktap_check "split path taken with the provider (rx_split off)" test $((p1 - p0)) -gt 0
	ktap_check "queue unbound: plain transfer after, split off" \
		transfer after_devmem $((BYTES / 4)) $((SEED + 9))
	# 6.12's devmem detaches the dma-buf from the device only when the
	# last page_pool of the binding is destroyed, which can be seconds
	# after the unbind (page_pool_release_retry); a device removed
	# before that is used after free by dma_unmap_sg() (KASAN).  Wait
	# for the attachment to go before the teardown case removes it.
	ktap_check "devmem dma-buf detached from netdevsim$A_ID within 30 s" \
		devmem_detached
	return $ktap_fail
}

# nsim_devmem_no_wait=1 on the kernel command line skips the wait: the
# teardown then may hit the use-after-free (timing: 1 boot in 4 so far).
devmem_detached() {
	local i=0
	[ -n "${nsim_devmem_no_wait:-}" ] && return 0
	while grep -q "netdevsim$A_ID\$" /sys/kernel/debug/dma_buf/bufinfo; do
		i=$((i + 1))
		[ $i -le 300 ] || return 1
		usleep 100000
	done
	ktap_diag "devmem: dma-buf detached $((i / 10)).$((i % 10)) s after the next transfer ended"
}

queue_resets() {
	local i ok=0 live=0
	for i in 1 2 3 4 5 6 7 8; do
		usleep 100000
		echo "0 1" 2>/dev/null > $A_DFS/queue_reset && ok=$((ok + 1))
		kill -0 "$rpid" 2>/dev/null && live=$((live + 1))
	done
	echo "$ok $live" > /tmp/resets
}

case_queue_reset_under_traffic() {
	local p0 p1
	echo 1 > $A_DFS/rx_split
	p0=$(counter rx_split_packets)
	ktap_check "queue_reset mode 0 refused" \
		sh -c "! echo '0 0' > $A_DFS/queue_reset 2>/dev/null"
	ktap_check "queue_reset of queue 1 refused (1 queue)" \
		sh -c "! echo '1 1' > $A_DFS/queue_reset 2>/dev/null"
	ktap_check "queue_reset 0 1 while idle" sh -c "echo '0 1' > $A_DFS/queue_reset"
	ktap_check "transfer $((BYTES * 4)) bytes with 8 queue resets, split on" \
		transfer reset $((BYTES * 4)) $((SEED + 3)) 65536 queue_resets
	p1=$(counter rx_split_packets)
	set -- $(cat /tmp/resets)
	ktap_diag "queue resets: $1 of 8 succeeded, $2 with the receiver still running"
	ktap_check "8 of 8 queue resets succeeded" test "$1" -eq 8
	ktap_check "at least one while the transfer ran" test "$2" -ge 1
	ktap_check "split path taken after the resets" test $((p1 - p0)) -gt 0
	echo 0 > $A_DFS/rx_split
	ktap_check "transfer $BYTES bytes after the resets, split off" \
		transfer plain2 "$BYTES" $((SEED + 4))
	return $ktap_fail
}

case_queue_reset_down() {
	in_a ip link set dev "$IF_A" down
	ktap_check "queue_reset refused while down" \
		sh -c "! echo '0 1' > $A_DFS/queue_reset 2>/dev/null"
	in_a ip link set dev "$IF_A" up
	echo 1 > $A_DFS/rx_split
	ktap_check "transfer after down/up, split on" \
		transfer updown $((BYTES / 4)) $((SEED + 5))
	echo 0 > $A_DFS/rx_split
	return $ktap_fail
}

case_pp_hold() {
	ktap_check "pp_hold takes a page of the DMA-mapped pool" \
		sh -c "echo 1 > $A_DFS/pp_hold"
	ktap_check "pp_hold reads y" test "$(cat $A_DFS/pp_hold)" = y
	ktap_check "pp_hold gives it back" sh -c "echo 0 > $A_DFS/pp_hold"
	return $ktap_fail
}

case_teardown() {
	echo 1 > $A_DFS/pp_hold	# freed late: the orphaned-pool path
	exec 5<&- 6<&-
	ktap_check "del_device A" sh -c "echo $A_ID > $BUS/del_device"
	ktap_check "del_device B" sh -c "echo $B_ID > $BUS/del_device"
	kill "$PID_A" "$PID_B"
	return $ktap_fail
}

ktap_begin netdevsim_rx 11
ktap_case netdevsim_rx_setup case_setup
ktap_case netdevsim_rx_tcp_plain case_tcp_plain
ktap_case netdevsim_rx_tcp_split case_tcp_split
ktap_case netdevsim_rx_tcp_split_small_writes case_tcp_split_small_writes
ktap_case netdevsim_rx_tcp6_split case_tcp6_split
ktap_case netdevsim_rx_tcp_split_jumbo case_tcp_split_jumbo
ktap_case netdevsim_rx_queue_reset_under_traffic case_queue_reset_under_traffic
ktap_case netdevsim_rx_queue_reset_down case_queue_reset_down
ktap_case netdevsim_rx_devmem case_devmem
ktap_case netdevsim_rx_pp_hold case_pp_hold
ktap_case netdevsim_rx_teardown case_teardown
ktap_end
