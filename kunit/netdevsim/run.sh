# SPDX-License-Identifier: GPL-2.0-only
#
# Guest script of scripts/netdevsim-check (busybox sh, run as /guest/run
# by scripts/initramfs-run; /guest holds nsim_tcp and nsim_netgpu).
#
# Two netdevsim devices (one port, one queue each), each in its own
# network namespace, linked as peers, 10.77.0.1 (A, the receiver) and
# 10.77.0.2 (B, the sender).  TCP carries a seeded pattern from B to A,
# every byte checked by the receiver, with A's emulated header split
# (debugfs ports/0/rx_split) off and on, and with A's rx queue restarted
# (ports/0/queue_reset) in the middle of a transfer.  The split path is
# proven by A's rx_split_{packets,bytes,drops} counters.
#
# netgpu (the NIC unit of lib/netgpu): a context of host memory binds
# A's rx queue 0 (nsim_netgpu), so that the split path writes payloads
# into its pages; then the guards of patches/0011-0013, down/up and
# unbind while bound; the teardown deletes A under a binding.
#
# netgpu's zero-copy transmit: B sends from a region of a context on its
# device (nsim_netgpu send), A checks every byte (nsim_tcp recv); the
# same with B's egress losing 3 % of its packets (netem: retransmits read
# the region again); the region removed mid-stream; from a udmabuf it is
# refused; a sender killed mid-stream leaves nothing pinned once the
# stack lets its last skbs go.
#
# The memory cgroup: a large rx ring and regions added until memory.max
# are charged to the group of their user, and given back at the close.
#
# Parameters (kernel command line, name=value): nsim_bytes (default
# 4194304), nsim_seed (default 1), nsim_netgpu_bytes (default 32768, a
# multiple of 8:
# the netgpu transfers, which the receiver cannot read, so they must fit
# its receive buffer), nsim_rx_bytes (default 67108864: the netgpu-rx
# transfers over IPv4 and IPv6 into host memory, a udmabuf, a vgem
# buffer and a virtio-gpu buffer, four passes through their 16 MiB;
# the zero-copy send, eight through its 8 MiB region; twice that for
# libnetgpu's example, two passes through its 64 MiB udmabuf),
# nsim_cut_bytes (default 1073741824: the streams cut by design, by an
# unplug or a SIGKILL, never complete),
# nsim_rx_small (default 16777216: the hostile users' and the memory
# removed mid-stream, received and sent, and the send with loss), nsim_gcov (1: print the .gcda files at the end,
# for make coverage).

. /lib/ktap.sh
# in_a, transfer, wait_for, ng_start, ngrx, pins_back, case_kmemleak...
. /guest/net.sh

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
NSIM_NETGPU=/guest/nsim_netgpu
NETGPU_RX=/guest/netgpu-rx
NETGPU_FUZZ=/guest/netgpu-fuzz
FUZZ_SECS=${nsim_fuzz_secs:-60}
FUZZ_SEED=${nsim_fuzz_seed:-1}
NGRX_PIN=
NG_PAGES=512
NG_BYTES=${nsim_netgpu_bytes:-32768}
RX_BYTES=${nsim_rx_bytes:-67108864}
CUT_BYTES=${nsim_cut_bytes:-1073741824}
RX_SMALL=${nsim_rx_small:-16777216}
NG_OK=0

counter() { cat "$A_DFS/$1"; }

case_setup() {
	ktap_check "netdevsim bus present" test -d $BUS
	[ $ktap_fail -eq 0 ] || return 1
	# The kmemleak case reports what leaked from here on, not at boot.
	echo clear > /sys/kernel/debug/kmemleak 2>/dev/null
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

# rx_gso_trace on|off: trace A's received GSO skbs (netif_receive_skb
# tracepoint, gso_size > 0) into the ring buffer, emptied at "on".
TRACE=/sys/kernel/tracing
rx_gso_trace() {
	local ev=$TRACE/events/net/netif_receive_skb_entry
	if [ "$1" = on ]; then
		[ -d $TRACE/events ] || mount -t tracefs nodev $TRACE
		echo "name == \"$IF_A\" && gso_size > 0" > $ev/filter &&
			: > $TRACE/trace && echo 1 > $ev/enable
	else
		echo 0 > $ev/enable
		grep -o 'ip_summed=[0-9]*' $TRACE/trace | sort | uniq -c | tr -s ' \n' ' '
	fi
}

# all_partial <rx_gso_trace off's counts>: some skbs, all ip_summed=3.
all_partial() {
	echo "$1" | grep -q 'ip_summed=3' && ! echo "$1" | grep -q 'ip_summed=[^3]'
}

case_tcp_split() {
	local p0 b0 d0 p1 b1 d1 sums
	echo 1 > $A_DFS/rx_split
	p0=$(counter rx_split_packets) b0=$(counter rx_split_bytes) d0=$(counter rx_split_drops)
	ktap_check "netif_receive_skb tracepoint on for $IF_A's GSO skbs" rx_gso_trace on
	ktap_check "transfer $BYTES bytes, seed $((SEED + 1)), split on" \
		transfer split "$BYTES" $((SEED + 1))
	sums=$(rx_gso_trace off)
	# Review 2, N3: the peer's CHECKSUM_PARTIAL (3) kept with the new
	# headers, as GRO gives it, not CHECKSUM_UNNECESSARY (1) without a
	# valid csum_start.
	ktap_check "every split GSO skb CHECKSUM_PARTIAL (ip_summed counts: ${sums:-none})" \
		all_partial "$sums"
	p1=$(counter rx_split_packets) b1=$(counter rx_split_bytes) d1=$(counter rx_split_drops)
	ktap_diag "rx_split_packets +$((p1 - p0)) rx_split_bytes +$((b1 - b0)) rx_split_drops +$((d1 - d0))"
	ktap_check "split path taken" test $((p1 - p0)) -gt 0
	ktap_check "split payload bytes >= bytes sent" test $((b1 - b0)) -ge "$BYTES"
	ktap_diag "split payload bytes beyond the stream (retransmitted): $((b1 - b0 - $BYTES))"
	ktap_check "no split drops" test $((d1 - d0)) -eq 0
	# Review 2, N5: the split's MAX_SKB_FRAGS guard (patches/0009)
	# cannot trigger because B, the sender, cannot raise its GSO limits
	# above netdevsim's tso_max_size (64 KiB): rtnetlink refuses them,
	# so no GSO skb over 16 pages of payload reaches A.  64 KiB itself
	# is accepted (the tool's request is sound; it is the default).
	for attr in gso_max_size gso_ipv4_max_size; do
		ktap_check "$IF_B $attr 131072 refused (rtnetlink: too big $attr)" \
			setlink_refused $attr 131072
		ktap_check "$IF_B $attr 65537 refused" setlink_refused $attr 65537
		ktap_check "$IF_B $attr 65536 accepted" \
			quiet in_b "$NSIM_NETGPU" setlink "$IF_B" $attr 65536
	done
	return $ktap_fail
}

# setlink_refused <attr> <bytes>: B's RTM_SETLINK of its <attr>
# (nsim_netgpu setlink: busybox's ip has no gso_max_size) fails with
# rtnetlink's "too big <attr>".
setlink_refused() {
	in_b "$NSIM_NETGPU" setlink "$IF_B" "$1" "$2" 2>&1 |
		grep -q "refused: Invalid argument (too big $1)"
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
# A non-mmap AF_PACKET reader on A meanwhile is 0013's reproducer with
# in-tree devmem alone (review 2, G1): af_packet clones and trims every
# unreadable skb, pskb_expand_head() takes a ref on each frag, and
# without 0013 that is get_page(NULL) (mutant 0013-devmem-frag-ref).
case_devmem() {
	local p0 b0 d0 p1 b1 d1 rpid rrc src pid prc n=$((BYTES / 2)) bg
	echo 0 > $A_DFS/rx_split
	p0=$(counter rx_split_packets) b0=$(counter rx_split_bytes) d0=$(counter rx_split_drops)
	rm -f /tmp/recv.out /tmp/dmp.out
	( ex_a "$NSIM_NETGPU" packet "$IF_A" 120 ) > /tmp/dmp.out 2>&1 &
	bg=$!
	wait_for /tmp/dmp.out '^packet: pid|nsim_netgpu: exit' 30
	( ex_a "$NSIM_TCP" devmem "$IF_A" $PORT "$n" $((SEED + 8)) 16 ) > /tmp/recv.out 2>&1 &
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
	pid=$(sed -n 's/^packet: pid \([0-9]*\) .*/\1/p' /tmp/dmp.out)
	[ -n "$pid" ] && kill -TERM "$pid"
	wait "$bg"
	prc=$?
	while read -r l; do ktap_diag "devmem: $l"; done < /tmp/recv.out
	ktap_diag "devmem: $(cat /tmp/send.out)"
	diag_file devmem /tmp/dmp.out
	ktap_diag "rx_split_packets +$((p1 - p0)) rx_split_bytes +$((b1 - b0)) rx_split_drops +$((d1 - d0))"
	ktap_check "udmabuf bound to rx queue 0" grep -q "bound 16 MiB" /tmp/recv.out
	ktap_check "sender sent $n bytes" test $src -eq 0
	ktap_check "receiver got $n bytes in dma-buf frags, all matching" test $rrc -eq 0
	ktap_check "sums match" test "$(sed -n 's/.*recv .*sum=\([0-9a-f]*\).*/\1/p' /tmp/recv.out)" = \
		"$(sed -n 's/.*send .*sum=\([0-9a-f]*\).*/\1/p' /tmp/send.out)"
	ktap_check "split path taken with the provider (rx_split off)" test $((p1 - p0)) -gt 0
	ktap_check "a non-mmap AF_PACKET reader got the devmem packets cut to their headers (0013)" \
		test $prc -eq 0
	ktap_check "queue unbound: plain transfer after, split off" \
		transfer after_devmem $((BYTES / 4)) $((SEED + 9))
	# No wait for the binding's dma-buf to be detached before the
	# teardown removes the device: patches/0019 detaches it when the
	# device goes (6.12 used the removed device in dma_unmap_sg()).
	return $ktap_fail
}

# devmem bound to a device deleted while a socket holds buffers of the
# binding (review 2, N7; patches/0019), from kunit/netdevsim/devmem_unplug.sh.
case_devmem_unplug() {
	local E_ID=15 F_ID=16 IF_E IF_F IDX_E IDX_F dpid hpid spid rc
	local n=1048576 hold=65536 E_IP=10.79.0.1
	local bufinfo=/sys/kernel/debug/dma_buf/bufinfo

	echo "$E_ID 1 1" > $BUS/new_device
	echo "$F_ID 1 1" > $BUS/new_device
	ip link set dev "$(ls $BUS/devices/netdevsim$E_ID/net/)" name dmue0
	ip link set dev "$(ls $BUS/devices/netdevsim$F_ID/net/)" name dmuf0
	IF_E=$(ls $BUS/devices/netdevsim$E_ID/net/)
	IF_F=$(ls $BUS/devices/netdevsim$F_ID/net/)
	ktap_check "devmem_unplug: a third pair ($IF_E, $IF_F)" \
		test "$IF_E" = dmue0 -a "$IF_F" = dmuf0
	ip link set dev "$IF_E" netns "$PID_A" 2>/dev/null ||
		"$NSIM_TCP" netns "$IF_E" "$PID_A"
	ip link set dev "$IF_F" netns "$PID_B" 2>/dev/null ||
		"$NSIM_TCP" netns "$IF_F" "$PID_B"
	in_a ip addr add $E_IP/24 dev "$IF_E"
	in_b ip addr add 10.79.0.2/24 dev "$IF_F"
	in_a ip link set dev "$IF_E" up
	in_b ip link set dev "$IF_F" up
	IDX_E=$(ifindex in_a ip link show dev "$IF_E")
	IDX_F=$(ifindex in_b ip link show dev "$IF_F")
	exec 7< /proc/$PID_A/ns/net
	exec 8< /proc/$PID_B/ns/net
	ktap_check "devmem_unplug: pair linked" \
		sh -c "echo '7:$IDX_E 8:$IDX_F' > $BUS/link_device"
	exec 7<&- 8<&-

	# 1. devmem binds a udmabuf to E's rx queue 0 and waits for a stream.
	( ex_a "$NSIM_TCP" devmem "$IF_E" $PORT $n $((SEED + 50)) 16 ) \
		> /tmp/dmu.out 2>&1 &
	dpid=$!
	wait_for /tmp/dmu.out 'listening on' 30 $dpid
	ktap_check "devmem_unplug: udmabuf bound to $IF_E rx queue 0" \
		grep -q "bound 16 MiB" /tmp/dmu.out

	# 2. The holder: stopped in accept(), its connection's data queued
	# in the binding's buffers.
	( ex_a "$NSIM_TCP" recv $((PORT + 1)) $hold $((SEED + 51)) ) \
		> /tmp/dmuh.out 2>&1 &
	hpid=$!
	wait_for /tmp/dmuh.out listening 30 $hpid
	kill -STOP $hpid
	ktap_check "devmem_unplug: the holder (pid $hpid) stopped" \
		is_stopped $hpid nsim_tcp
	( ex_b timeout 30 "$NSIM_TCP" send $E_IP $((PORT + 1)) $hold \
		$((SEED + 51)) ) > /tmp/dmuhs.out 2>&1 &
	spid=$!
	sleep 2

	# 3. The devmem stream; the receiver exits, which unbinds.  The
	# binding lives on in its old page_pool, which the holder keeps.
	in_b timeout 60 "$NSIM_TCP" send $E_IP $PORT $n $((SEED + 50)) \
		> /tmp/dmus.out 2>&1
	wait $dpid
	rc=$?
	ktap_diag "devmem_unplug: $(grep 'recv bytes' /tmp/dmu.out)"
	ktap_check "devmem_unplug: the devmem receiver got $n bytes (exit $rc)" \
		test $rc -eq 0
	ktap_check "devmem_unplug: after the unbind, the dma-buf still attached to netdevsim$E_ID (the holder keeps the binding)" \
		grep -q "netdevsim$E_ID\$" $bufinfo

	# 4. E deleted under the binding's buffers.
	ktap_check "devmem_unplug: del_device $IF_E" \
		sh -c "echo $E_ID > $BUS/del_device"
	ktap_check "devmem_unplug: the dma-buf detached from netdevsim$E_ID by del_device, the holder still holding (patches/0019)" \
		sh -c "! grep -q 'netdevsim$E_ID\$' $bufinfo"

	# 5. The holder lets go: the pool goes (page_pool_release_retry()
	# retries every second), the binding with it.  Before 0019 the unmap
	# then used the deleted device.
	kill -KILL $hpid
	wait $hpid
	kill $spid 2>/dev/null
	wait $spid
	"$NSIM_TCP" kick > /dev/null 2>&1
	sleep 3
	ktap_check "devmem_unplug: no KASAN report once the binding is freed" \
		sh -c "! dmesg | grep -q 'BUG: KASAN'"
	echo $F_ID > $BUS/del_device
	return $ktap_fail
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

# ----- netgpu -----
#
# nsim_netgpu bind, in netns A, holds a context of NG_PAGES pages of host
# memory with A's rx queue 0 bound (netgpu its page_pool memory
# provider) from netgpu_bind to netgpu_unbind, and runs the commands
# ng_cmd appends to its command file.  There is no socket receive path
# yet: the receiver (nsim_netgpu recv-unreadable) proves the payload went
# into netgpu buffers by recv() failing with EFAULT while the data stays
# queued, and the bind tool finds the stream in its pages.  Every wait is
# bounded; a case whose binding is gone fails at once.

# Every counter of the context reads 0 (no queue bound).
ng_ctx_zero() {
	grep -q '^stats ctx ' /tmp/ng.reply &&
		! sed -n 's/^stats ctx //p' /tmp/ng.reply | tr ' ' '\n' | grep -qv '=0$'
}

# The last poll answer: EPOLLOUT (room in the fill ring), no ERR or HUP.
ng_poll_ok() {
	grep -q '^poll revents .* OUT' /tmp/ng.reply &&
		! grep -qE '^poll revents .*(ERR|HUP)' /tmp/ng.reply
}

ng_bound() {
	[ $NG_OK -eq 1 ] && return 0
	ktap_diag "netgpu: no binding (netgpu_bind failed or the tool is gone)"
	return 1
}

# ng_transfer <label> <bytes> <seed> [devmem]: B sends <bytes> of the
# nsim_tcp pattern of <seed> to A, whose receiver waits for all of it to
# be queued, expects recv() to fail with EFAULT (with devmem, also
# recvmsg(MSG_SOCK_DEVMEM) with ENODEV), then ends its side, so the
# sender finishes, and holds the socket with the data queued in netgpu
# buffers until ng_release.  0 if B sent it all and the receiver holds.
ng_transfer() {
	local src
	rm -f /tmp/ngr.out /tmp/send.out
	NGR_PID=
	( ex_a "$NSIM_NETGPU" recv-unreadable $PORT "$2" 120 ${4:-} ) > /tmp/ngr.out 2>&1 &
	NGR_BG=$!
	wait_for /tmp/ngr.out 'listening|nsim_netgpu: exit' 30
	in_b timeout 60 "$NSIM_TCP" send "$A_IP" $PORT "$2" "$3" > /tmp/send.out 2>&1
	src=$?
	wait_for /tmp/ngr.out '^holding|nsim_netgpu: exit' 30
	NGR_PID=$(sed -n 's/^holding pid \([0-9]*\) .*/\1/p' /tmp/ngr.out)
	diag_file "$1" /tmp/ngr.out
	ktap_diag "$1: $(cat /tmp/send.out) (exit $src)"
	[ $src -eq 0 ] && [ -n "$NGR_PID" ]
}

# ng_release <label>: the receiver of ng_transfer closes its socket; its
# exit status (0: its checks passed).
ng_release() {
	local rc
	[ -n "$NGR_PID" ] && kill -TERM "$NGR_PID" 2>/dev/null
	wait "$NGR_BG"
	rc=$?
	NGR_PID=
	ktap_diag "$1: $(grep -E '^(released|hold timeout|result)' /tmp/ngr.out | tr '\n' ' ')(exit $rc)"
	return $rc
}

# Host memory registered and A's queue 0 bound; a transfer lands in it.
case_netgpu_bind() {
	local p0 p1 n=$(((NG_BYTES + 4095) / 4096)) nz
	NG_OK=0
	ktap_check "/dev/netgpu_mem and /dev/netgpu present (CONFIG_NETGPU)" \
		test -c /dev/netgpu_mem -a -c /dev/netgpu
	[ $ktap_fail -eq 0 ] || return 1
	echo 0 > $A_DFS/rx_split
	ng_start /tmp/ng.out /tmp/ng.cmd $NG_PAGES 900
	ktap_check "kernel has the netgpu NIC interface (BIND_QUEUE not EOPNOTSUPP: CONFIG_NETGPU_NIC=y)" \
		sh -c "! grep -q '^BIND_QUEUE: EOPNOTSUPP' /tmp/ng.out"
	ktap_check "$NG_PAGES pages of host memory registered, $IF_A rx queue 0 bound" \
		grep -q '^bound queue 0 ' /tmp/ng.out
	ktap_check "fill ring mapped: header all zero, prod/cons/flags at 0/128/256, entries at 384" \
		grep -q '^ring: prod 0 cons 0 flags 0 (at 0/128/256, entries at 384)$' /tmp/ng.out
	if ! grep -q '^ready$' /tmp/ng.out; then
		wait "$NG_BG"
		return 1
	fi
	NG_OK=1

	p0=$(counter rx_split_packets)
	ktap_check "B sends $NG_BYTES bytes to A while bound" \
		ng_transfer netgpu_bind "$NG_BYTES" $((SEED + 20))
	p1=$(counter rx_split_packets)
	ktap_diag "netgpu_bind: rx_split_packets +$((p1 - p0))"
	ktap_check "split path taken with netgpu (rx_split off)" test $((p1 - p0)) -gt 0
	ktap_check "all $NG_BYTES bytes queued at A" \
		grep -q "^queued $NG_BYTES of $NG_BYTES " /tmp/ngr.out
	ktap_check "recv() fails with EFAULT: the payload is in netgpu buffers" \
		grep -q '^recv: EFAULT' /tmp/ngr.out
	ktap_check "the data stays queued" \
		grep -q "^still queued $NG_BYTES bytes after recv" /tmp/ngr.out

	ng_cmd check $((SEED + 20)) "$NG_BYTES"
	ktap_check "every byte of the stream is in netgpu's pages, chunks at page starts" \
		grep -q "^check .* covered=$NG_BYTES/$NG_BYTES " /tmp/ng.reply
	ktap_check "the stream's first bytes start a page" \
		grep -q '^check .* first=page' /tmp/ng.reply
	nz=$(sed -n 's/^check .* pages_nonzero=\([0-9]*\) .*/\1/p' /tmp/ng.reply)
	ktap_check "at least $n pages written" test "${nz:-0}" -ge $n

	ng_cmd stats
	ktap_check "stats: the bufs_* gauges add up to the $NG_PAGES buffers" \
		test "$(ng_stat ifq bufs_total)" -eq $NG_PAGES
	ktap_check "stats: at least $n buffers left the free list" \
		test $(($(ng_stat ifq bufs_nic) + $(ng_stat ifq bufs_stack))) -ge $n
	ktap_check "stats: none with user space or in an rx ring" \
		test "$(ng_stat ifq bufs_user)/$(ng_stat ifq bufs_rx_ring)" = 0/0
	ktap_check "stats: the 3 bad fill entries skipped, one per reason (unaligned, no region, never given)" \
		test "$(ng_stat ifq fill_unaligned)/$(ng_stat ifq fill_no_region)/$(ng_stat ifq fill_never_given)/$(ng_stat ifq fill_taken)" = 1/1/1/0
	ktap_check "stats: the context's sums are the queue's" \
		test "$(sed -n 's/^stats ifq //p' /tmp/ng.reply)" = "$(sed -n 's/^stats ctx //p' /tmp/ng.reply)"
	ng_cmd ring
	ktap_check "fill ring: the kernel consumed them (cons = prod = 3)" \
		grep -q '^ring prod=3 cons=3 flags=0$' /tmp/ng.reply
	ng_cmd poll
	ktap_check "poll: EPOLLOUT, no EPOLLERR/EPOLLHUP" ng_poll_ok
	ng_cmd bind2
	ktap_check "another context binding queue 0 fails with EEXIST" \
		grep -q '^bind2 queue 0: EEXIST$' /tmp/ng.reply
	ktap_check "another context binding any queue fails with EBUSY" \
		grep -q '^bind2 any: EBUSY$' /tmp/ng.reply
	ktap_check "receiver passed its checks and closed" ng_release netgpu_bind
	return $ktap_fail
}

# While bound and with data queued: (a) recvmsg(MSG_SOCK_DEVMEM) on the
# netgpu flow (patches/0011), (b) a non-mmap AF_PACKET reader on A, which
# clones and trims every skb (patches/0013), (c) netlink queue-get and
# page-pool-get of A (patches/0012), (d) which name the bound queue's
# netgpu context, and the pool's, by the id the tool's fds show in
# their fdinfo (patches/0021-0022; no queue has the nest after the
# unbind: case_netgpu_unbind).
# A splat fails the console scan.
case_netgpu_guards() {
	local pid rc id q
	ng_bound || return 1
	rm -f /tmp/ngp.out
	( ex_a "$NSIM_NETGPU" packet "$IF_A" 120 ) > /tmp/ngp.out 2>&1 &
	NGP_BG=$!
	wait_for /tmp/ngp.out '^packet: pid|nsim_netgpu: exit' 30
	ktap_check "B sends $NG_BYTES bytes to A while bound, an AF_PACKET socket reading" \
		ng_transfer netgpu_guards "$NG_BYTES" $((SEED + 21)) devmem
	ktap_check "recv() fails with EFAULT" grep -q '^recv: EFAULT' /tmp/ngr.out
	ktap_check "(a) recvmsg(MSG_SOCK_DEVMEM) fails with ENODEV" \
		grep -q '^devmem recvmsg: ENODEV$' /tmp/ngr.out
	ktap_check "(a) the data stays queued" \
		grep -q "^still queued $NG_BYTES bytes after devmem recvmsg" /tmp/ngr.out

	in_a "$NSIM_NETGPU" netlink "$IF_A" > /tmp/ngn.out 2>&1
	rc=$?
	diag_file netgpu_guards /tmp/ngn.out
	ktap_check "(c) queue-get and page-pool-get of $IF_A report no dma-buf" test $rc -eq 0
	ktap_check "(c) they list its queues and pools" \
		grep -q '^netlink: queues=[1-9][0-9]* pools=[1-9]' /tmp/ngn.out
	id=$(sed -n 's/^netgpu-ctx-id:[[:space:]]*//p' /proc/$NG_PID/fdinfo/* 2>/dev/null | sort -u)
	q=$(sed -n 's/^netgpu-rx-queue:[[:space:]]*//p' /proc/$NG_PID/fdinfo/* 2>/dev/null | head -1)
	ktap_diag "netgpu_guards: the bind tool's fds: context ${id:-none}, rx queue ${q:-none}"
	ktap_check "(d) the context's fd and its queue's fd show one context id (${id:-none}) and the queue (${q:-none})" \
		sh -c "[ -n '$id' ] && [ \$(echo '$id' | wc -l) -eq 1 ] && [ -n '$q' ]"
	ktap_check "(d) queue-get: rx queue ${q:-?} of $IF_A has the netgpu nest of context ${id:-?}, no other queue has one" \
		sh -c "grep -q '^queue ifindex [0-9]* rx $q napi [0-9]* dmabuf none netgpu $id\$' /tmp/ngn.out &&
		       [ \$(grep -c '^queue .* netgpu [^n]' /tmp/ngn.out) -eq 1 ]"
	ktap_check "(d) page-pool-get: a pool of $IF_A has the netgpu nest of context ${id:-?}" \
		grep -q "^page-pool id [0-9]* ifindex [0-9]* inflight [0-9]* detached no dmabuf none netgpu $id\$" /tmp/ngn.out

	pid=$(sed -n 's/^packet: pid \([0-9]*\) .*/\1/p' /tmp/ngp.out)
	[ -n "$pid" ] && kill -TERM "$pid"
	wait "$NGP_BG"
	rc=$?
	diag_file netgpu_guards /tmp/ngp.out
	ktap_check "(b) AF_PACKET got packets cut to their headers, nothing else cut" test $rc -eq 0
	ktap_check "receiver passed its checks and closed" ng_release netgpu_guards
	ng_cmd stats
	return $ktap_fail
}

# Down and up while bound: the binding stays on the rx queue (its memory
# provider parameters), the pool the device re-creates is netgpu's.
case_netgpu_updown() {
	local p0 p1
	ng_bound || return 1
	in_a ip link set dev "$IF_A" down
	ng_cmd poll
	ktap_check "down: poll reports no EPOLLERR/EPOLLHUP" ng_poll_ok
	ng_cmd stats
	ktap_check "down: every buffer back on netgpu's free list (the pool went)" \
		test "$(ng_stat ifq bufs_cache)" -eq $NG_PAGES
	in_a ip link set dev "$IF_A" up
	ng_cmd poll
	ktap_check "up: poll reports EPOLLOUT, no EPOLLERR/EPOLLHUP" ng_poll_ok
	p0=$(counter rx_split_packets)
	ktap_check "B sends $NG_BYTES bytes to A after down/up" \
		ng_transfer netgpu_updown "$NG_BYTES" $((SEED + 22))
	p1=$(counter rx_split_packets)
	ktap_diag "netgpu_updown: rx_split_packets +$((p1 - p0))"
	ktap_check "split path taken after up (rx_split off)" test $((p1 - p0)) -gt 0
	ktap_check "recv() fails with EFAULT: still netgpu buffers" \
		grep -q '^recv: EFAULT' /tmp/ngr.out
	ng_cmd check $((SEED + 22)) "$NG_BYTES"
	ktap_check "every byte of the stream is in netgpu's pages" \
		grep -q "^check .* covered=$NG_BYTES/$NG_BYTES " /tmp/ng.reply
	ktap_check "receiver passed its checks and closed" ng_release netgpu_updown
	return $ktap_fail
}

# Closing the queue fd unbinds: the rx queue gets an ordinary page_pool,
# and transfers are readable again.
case_netgpu_unbind() {
	local p0 rc
	ng_bound || return 1
	ng_cmd unbind
	ng_cmd stats
	ktap_check "the context's counters all read 0: no queue left" ng_ctx_zero
	in_a "$NSIM_NETGPU" netlink "$IF_A" > /tmp/ngn.out 2>&1
	diag_file netgpu_unbind /tmp/ngn.out
	ktap_check "queue-get: no queue of $IF_A has a netgpu nest after the unbind" \
		sh -c "grep -q '^netlink: queues=[1-9]' /tmp/ngn.out && ! grep -q '^queue .* netgpu [^n]' /tmp/ngn.out"
	ktap_check "pp_hold takes a page: rx queue 0 has a page_pool of pages again" \
		sh -c "echo 1 > $A_DFS/pp_hold"
	echo 0 > $A_DFS/pp_hold
	echo 1 > $A_DFS/rx_split
	p0=$(counter rx_split_packets)
	ktap_check "transfer $((BYTES / 4)) bytes after unbind, split on, every byte checked" \
		transfer netgpu_unbind_split $((BYTES / 4)) $((SEED + 23))
	ktap_check "split path taken with page_pool pages" \
		test "$(counter rx_split_packets)" -gt "$p0"
	echo 0 > $A_DFS/rx_split
	p0=$(counter rx_split_packets)
	ktap_check "transfer $((BYTES / 4)) bytes after unbind, split off, every byte checked" \
		transfer netgpu_unbind_plain $((BYTES / 4)) $((SEED + 24))
	ktap_check "split path not taken" test "$(counter rx_split_packets)" -eq "$p0"
	ng_cmd quit
	wait "$NG_BG"
	rc=$?
	NG_OK=0
	ktap_check "bind tool closed everything and exited 0" test $rc -eq 0
	return $ktap_fail
}

# ----- netgpu's socket receive path (netgpu-rx) -----
#
# netgpu-rx in A binds rx queue 0 with its memory, accepts B's
# connection, attaches the socket and reads rx descriptors until B
# closes, checking every byte of the nsim_tcp stream where the
# descriptors say it is (dma-bufs through their own mmap()).

# ng_trace on|off: every netgpu tracepoint into the ring buffer, emptied
# at "on" (overwrite mode keeps the newest events of a long stream).
ng_trace() {
	if [ "$1" = on ]; then
		[ -d $TRACE/events ] || mount -t tracefs nodev $TRACE
		: > $TRACE/trace && echo 1 > $TRACE/events/netgpu/enable
	else
		echo 0 > $TRACE/events/netgpu/enable
	fi
}

# ng_trace_saw <ifindex>: the stream's queue (rxq 0 of <ifindex>) was
# refilled, a descriptor written, and the queue unbound with its restart
# done (err=0) when netgpu-rx closed it; each record as netgpu.rst
# documents it.
ng_trace_saw() {
	local t=$TRACE/trace
	grep -qE "netgpu_refill: ifindex=$1 rxq=0 fill=[0-9]+ free=[0-9]+ cached=[0-9]+$" $t &&
		grep -qE 'netgpu_rx_desc: ctx=[0-9]+ addr=0x[0-9a-f]+ len=[0-9]+ flags=0x[01]$' $t &&
		grep -qE "netgpu_unbind: ifindex=$1 rxq=0 err=0$" $t || {
		echo "# netgpu trace: $(grep -c netgpu_ $t) records; the last:"
		grep netgpu_ $t | tail -3 | sed 's/^/#   /'
		return 1
	}
}

case_netgpu_rx_host() {
	local p0 ifindex
	echo 1 > $A_DFS/rx_split
	p0=$(counter rx_split_packets)
	ifindex=$(in_a ip -o link show dev "$IF_A" | cut -d: -f1)
	ng_trace on
	ktap_check "netgpu-rx: $RX_BYTES bytes over IPv4 into host memory, every byte checked" \
		ngrx netgpu_rx_host "$RX_BYTES" $((SEED + 30)) -m host -s 16
	ng_trace off
	ktap_check "tracefs: the stream's refills, descriptors and unbind (netgpu:*)" \
		ng_trace_saw "$ifindex"
	ktap_check "the device split the packets (rx_split_packets grew)" \
		test "$(counter rx_split_packets)" -gt "$p0"
	ktap_check "closing netgpu-rx leaves no page pool behind" ngrx_pools_gone
	# netgpu_updown took A down, which flushed its IPv6 address.
	in_a ip -6 addr add $A_IP6/64 dev "$IF_A" 2>/dev/null
	TO=$A_IP6 ktap_check "netgpu-rx: $RX_BYTES bytes over IPv6 into host memory, every byte checked" \
		ngrx netgpu_rx_host6 "$RX_BYTES" $((SEED + 31)) -m host -s 16
	return $ktap_fail
}

# drm_card <driver>: the /dev/dri/card node of DRM driver vgem or
# virtio_gpu, by the name debugfs gives each minor (the order of the
# cards is the order the drivers probed in).
drm_card() {
	local n
	for n in /sys/kernel/debug/dri/[0-9]*; do
		case ${n##*/} in *[!0-9]*) continue ;; esac	# by minor only
		case $(cat "$n/name" 2>/dev/null) in
		"$1 "*) echo "/dev/dri/card${n##*/}"; return 0 ;;
		esac
	done
	return 1
}

case_netgpu_rx_dmabuf() {
	local vgem virtio
	echo 1 > $A_DFS/rx_split
	ktap_check "netgpu-rx: $RX_BYTES bytes into a udmabuf, checked through its mmap()" \
		ngrx netgpu_rx_udmabuf "$RX_BYTES" $((SEED + 32)) -m udmabuf -s 16
	vgem=$(drm_card vgem)
	ktap_check "vgem present ($vgem)" test -c "$vgem"
	ktap_check "netgpu-rx: $RX_BYTES bytes into a vgem buffer, checked through its mmap()" \
		ngrx netgpu_rx_vgem "$RX_BYTES" $((SEED + 33)) -m drm -s 16 --drm-dev "$vgem"
	# A GPU driver with a device: QEMU's virtio-gpu-pci (netdevsim-check
	# adds it), its dumb buffer exported through PRIME.
	virtio=$(drm_card virtio_gpu)
	ktap_check "virtio-gpu present ($virtio)" test -c "$virtio"
	ktap_check "netgpu-rx: $RX_BYTES bytes into a virtio-gpu buffer, checked through its mmap()" \
		ngrx netgpu_rx_virtio_gpu "$RX_BYTES" $((SEED + 42)) -m drm -s 16 --drm-dev "$virtio"
	TO=$A_IP6 ktap_check "netgpu-rx: $RX_BYTES bytes over IPv6 into a udmabuf with host memory for copies" \
		ngrx netgpu_rx_udmabuf6 "$RX_BYTES" $((SEED + 34)) -m udmabuf -s 16 --copy-mib 1
	TO=$A_IP6 ktap_check "netgpu-rx: $RX_BYTES bytes over IPv6 into a vgem buffer" \
		ngrx netgpu_rx_vgem6 "$RX_BYTES" $((SEED + 41)) -m drm -s 16 --drm-dev "$vgem"
	ktap_check "no page pool left behind" ngrx_pools_gone
	ktap_check "no dma-buf left (udmabuf, vgem and virtio-gpu buffers released)" \
		no_dmabufs
	return $ktap_fail
}

# libnetgpu against the kernel: its example (tools/lib/netgpu/examples/
# udmabuf-rx.c, built as the README builds it) receives B's stream into a
# udmabuf through the library's calls and receive loop alone: every byte
# accounted (zero copy or copied by the kernel), most of them zero copy,
# nothing left behind.  The bytes themselves are netgpu-rx's to check
# (built on the same library, above).
case_libnetgpu_example() {
	local port rc src zc cp bytes=$((RX_BYTES * 2))
	echo 1 > $A_DFS/rx_split
	rm -f /tmp/example.out
	( ex_a timeout 120 /guest/udmabuf-rx "$IF_A" $PORT ) > /tmp/example.out 2>&1 &
	NGRX_BG=$!
	# It says nothing until the end: listening is A's tcp6 table's.
	port=$(printf '%04X' $PORT)
	for rc in $(seq 100); do
		in_a grep -q ":$port 0\{32\}:0000 0A" /proc/net/tcp6 && break
		usleep 50000
	done
	in_b timeout 300 "$NSIM_TCP" send $A_IP $PORT "$bytes" $((SEED + 45)) > /tmp/send.out 2>&1
	src=$?
	ktap_diag "libnetgpu_example: $(cat /tmp/send.out) (exit $src)"
	[ $src -eq 0 ] || kill "$NGRX_BG" 2>/dev/null
	wait "$NGRX_BG"
	rc=$?
	diag_file libnetgpu_example /tmp/example.out
	zc=$(sed -n 's/^udmabuf-rx: \([0-9]*\) bytes zero copy, \([0-9]*\) copied$/\1/p' /tmp/example.out)
	cp=$(sed -n 's/^udmabuf-rx: \([0-9]*\) bytes zero copy, \([0-9]*\) copied$/\2/p' /tmp/example.out)
	ktap_check "the example sent $bytes bytes and exited 0 (sender $src, example $rc)" \
		test $src -eq 0 -a $rc -eq 0
	ktap_check "its receive loop accounted every byte (${zc:-?} zero copy + ${cp:-?} copied)" \
		test "$((${zc:-0} + ${cp:-0}))" -eq "$bytes"
	ktap_check "most of them zero copy" test "${zc:-0}" -gt $((bytes / 2))
	ktap_check "no page pool left behind" ngrx_pools_gone
	ktap_check "no dma-buf left" no_dmabufs
	return $ktap_fail
}

# The memory taken back mid-stream (NETGPU_MEM_IOCTL_REMOVE_REGION while
# the queue is bound and data flows): the queue stops (its fd reports
# POLLHUP), what the NIC already wrote still arrives as descriptors, the
# rest in ordinary memory through recv(); every byte checked, nothing
# left behind.
case_netgpu_rx_remove() {
	local mem args zc cp rcv src
	for mem in host udmabuf; do
		args="-m $mem -s 4"
		[ $mem = host ] || args="$args --copy-mib 1"
		ktap_check "remove_$mem: netgpu-rx listening" \
			ngrx_start netgpu_rx_remove_$mem -n "$RX_SMALL" -v $((SEED + 42)) -t 60 \
			--remove-region $((RX_SMALL / 4)) $args
		in_b timeout 120 "$NSIM_TCP" send "$A_IP" $PORT "$RX_SMALL" $((SEED + 42)) > /tmp/send.out 2>&1
		src=$?
		# A sender that never connected leaves the receiver in accept().
		[ $src -eq 0 ] || kill "$NGRX_BG" 2>/dev/null
		ktap_check "remove_$mem: the sender sent it all" test $src -eq 0
		ktap_check "remove_$mem: netgpu-rx got every byte right" \
			ngrx_end netgpu_rx_remove_$mem
		ktap_check "remove_$mem: the queue stopped when the regions went" \
			grep -q '^netgpu-rx: removed the regions at .* the queue stopped' /tmp/ngrx.out
		zc=$(sed -n 's/.* zc=\([0-9]*\) .*/\1/p' /tmp/ngrx.out)
		cp=$(sed -n 's/.* copied=\([0-9]*\) .*/\1/p' /tmp/ngrx.out)
		rcv=$(sed -n 's/.* recv=\([0-9]*\) .*/\1/p' /tmp/ngrx.out)
		ktap_check "remove_$mem: into netgpu memory before (${zc:-none} zero copy, ${cp:-none} copied), recv() after (${rcv:-none} bytes)" \
			test $((${zc:-0} + ${cp:-0})) -ge $((RX_SMALL / 4)) -a "${rcv:-0}" -gt 0
		ktap_check "remove_$mem: no page pool left behind" ngrx_pools_gone
		ktap_check "remove_$mem: queue 0 binds again afterwards" \
			ngrx netgpu_rx_after_remove_$mem $((RX_SMALL / 4)) $((SEED + 43)) -m host -s 4
	done
	ktap_check "remove: no dma-buf left" no_dmabufs
	return $ktap_fail
}

# Hostile and unlucky users: one that never gives buffers back (the
# stream stalls, closing frees everything; the segments that find the
# provider dry are dropped as NOMEM), one that gives back garbage
# and twice (rejected and counted, the stream still arrives whole), one
# killed with SIGKILL mid-stream (netgpu-rx itself: $NGRX_BG is its pid,
# and it must die of the signal with the stream part way).
case_netgpu_rx_hostile() {
	local spid rej p0 o0 o1 rc src d0 d1 drops
	echo 1 > $A_DFS/rx_split
	# Review 2, N5: of the split's drop reasons only NOMEM is reachable
	# here, when the provider has no buffer for a segment's payload.
	# DEV_READY needs a bus device without dma-direct or coherent DMA,
	# or a buffer with no page behind its DMA address (every region
	# here is RAM); PKT_TOO_BIG a payload over MAX_SKB_FRAGS pages
	# (case_tcp_split: the GSO limits forbid it); HDR_TRUNC and
	# SKB_CSUM a peer's skb shorter than the headers it was parsed for,
	# or its checksum field outside them.
	ktap_check "hold: skb:kfree_skb tracepoint on" drop_trace on
	d0=$(counter rx_split_drops)
	ktap_check "hold: netgpu-rx listening" \
		ngrx_start netgpu_rx_hold -m host -s 1 -t 5 --hostile hold
	# $! is nsim_tcp itself (busybox's timeout execs it): the kill below
	# reaches it.
	( ex_b timeout 30 "$NSIM_TCP" send "$A_IP" $PORT "$RX_SMALL" $((SEED + 35)) ) > /tmp/send.out 2>&1 &
	spid=$!
	ktap_check "hold: the stream stalls, netgpu-rx says so and exits 0" \
		ngrx_end netgpu_rx_hold
	ktap_check "hold: fewer bytes than sent arrived" \
		grep -q 'stalled as expected' /tmp/ngrx.out
	kill "$spid" 2>/dev/null
	wait "$spid"
	ktap_check "hold: closing freed every buffer (no page pool left)" ngrx_pools_gone
	# The provider is gone: no segment can find it dry any more, and
	# the counter and the trace cover the same drops.
	d1=$(counter rx_split_drops)
	drops=$(drop_trace off nsim_)
	ktap_diag "hold: rx_split_drops +$((d1 - d0)), drops traced in netdevsim: ${drops:-none}"
	ktap_check "hold: segments dropped while the provider was dry (rx_split_drops +$((d1 - d0)))" \
		test $((d1 - d0)) -gt 0
	ktap_check "hold: each traced as NOMEM ($(drop_count "$drops" NOMEM) for rx_split_drops +$((d1 - d0)))" \
		test "$(drop_count "$drops" NOMEM)" -eq $((d1 - d0))

	ktap_check "garbage: every byte arrives and is checked" \
		ngrx netgpu_rx_garbage $((RX_SMALL / 4)) $((SEED + 36)) -m host -s 4 --hostile garbage
	rej=$(sed -n 's/.* fill_rejected=\([0-9]*\) .*/\1/p' /tmp/ngrx.out)
	ktap_check "garbage: the kernel rejected the bad fill entries ($rej)" \
		test "${rej:-0}" -gt 0
	# Each buffer twice in one batch: the second entry is stale whenever
	# the kernel reads it (netgpu_nic_test_fill_stale), so every byte
	# must arrive intact.
	ktap_check "double: every byte arrives and is checked" \
		ngrx netgpu_rx_double $((RX_SMALL / 4)) $((SEED + 37)) -m host -s 4 --hostile double
	rej=$(sed -n 's/.* fill_rejected=\([0-9]*\) .*/\1/p' /tmp/ngrx.out)
	ktap_check "double: the second returns were rejected ($rej)" \
		test "${rej:-0}" -gt 0

	p0=$(pins_out)
	ktap_check "kill: netgpu-rx listening" \
		ngrx_start netgpu_rx_kill -m host -s 4 -t 60
	o0=$(ip_in_octets "$PID_A")
	( ex_b timeout 60 "$NSIM_TCP" send "$A_IP" $PORT "$RX_SMALL" $((SEED + 38)) ) > /tmp/send.out 2>&1 &
	spid=$!
	wait_for /tmp/ngrx.out '^netgpu-rx: bound' 30
	# Killed once a MiB of the stream has arrived (at some 30 MB/s, the
	# whole of it takes about half a second).
	wait_octets "$PID_A" $((o0 + 1048576)) 30
	o1=$(ip_in_octets "$PID_A")
	ktap_check "kill: netgpu-rx (pid $NGRX_BG) receiving, $((o1 - o0)) IP bytes of the $RX_SMALL-byte stream in" \
		alive_as "$NGRX_BG" netgpu-rx
	kill -KILL "$NGRX_BG"
	wait "$NGRX_BG"
	rc=$?
	wait "$spid"
	src=$?
	diag_file netgpu_rx_kill /tmp/ngrx.out
	ktap_diag "netgpu_rx_kill: $(cat /tmp/send.out) (exit $src)"
	ktap_check "kill: netgpu-rx died of the SIGKILL (status $rc, 137 expected) before its report" \
		sh -c "[ $rc -eq 137 ] && ! grep -q '^netgpu-rx: bytes=' /tmp/ngrx.out"
	ktap_check "kill: the stream was cut: the sender failed (exit $src)" \
		test "$src" -ne 0
	ktap_check "kill: SIGKILL mid-stream freed every buffer (no page pool left)" \
		ngrx_pools_gone
	ktap_check "kill: every page it pinned unpinned (no more than the $p0 pins out before it)" \
		pins_back "$p0"
	ktap_check "kill: queue 0 binds again afterwards" \
		ngrx netgpu_rx_after_kill $((RX_SMALL / 4)) $((SEED + 39)) -m host -s 4
	return $ktap_fail
}

# The ABI fuzzer (kunit/selftests/netgpu-fuzz.c): four processes call
# every ioctl of both devices and of the queue fds with random structs
# and sizes, map random offsets, write random ring indices and close in
# random order, binding A's queue 0 among the rest, for FUZZ_SECS.  It
# fails on a worker killed by a signal it did not send, a worker hung in
# a call, a worker that exited with an error, a netgpu ioctl on a pipe
# that did not fail with ENOTTY and a queue fd returned not open or not
# O_CLOEXEC; the console scan
# of netdevsim-check fails on any splat, and the kmemleak case at the
# end on any leak.  Afterwards nothing of it is left and the queue works.
case_netgpu_fuzz() {
	local p0 rc
	p0=$(pins_out)
	ktap_diag "netgpu-fuzz: repeat with: make netdevsim-check FUZZ_SECS=$FUZZ_SECS FUZZ_SEED=$FUZZ_SEED"
	in_a timeout $((FUZZ_SECS + 120)) "$NETGPU_FUZZ" -s "$FUZZ_SEED" -t "$FUZZ_SECS" \
		-p 4 -i "$IF_A" -q 0 > /tmp/fuzz.out 2>&1
	rc=$?
	diag_file netgpu-fuzz /tmp/fuzz.out
	ktap_check "netgpu-fuzz ran $FUZZ_SECS s and exited 0 (exit $rc)" test $rc -eq 0
	ktap_diag "$(grep '^netgpu-fuzz: done ' /tmp/fuzz.out)"
	ktap_check "netgpu-fuzz made calls" \
		grep -q '^netgpu-fuzz: done .* calls=[1-9]' /tmp/fuzz.out
	ktap_check "no page pool left behind" ngrx_pools_gone
	ktap_check "every page it pinned unpinned (no more than the $p0 pins out before it)" \
		pins_back "$p0"
	ktap_check "no dma-buf left" no_dmabufs
	ktap_check "queue 0 binds and receives afterwards" \
		ngrx netgpu_rx_after_fuzz $((RX_SMALL / 4)) $((SEED + 44)) -m host -s 4
	return $ktap_fail
}

# A device unplugged while netgpu-rx receives a stream on it: a second
# linked pair (C in A's namespace, D in B's), so that the teardown still
# has A.  del_device returns (unregister_netdevice() does not wait for
# netgpu's references), netgpu-rx sees the stream stop and stops after 5 s
# without progress (exit 1, "no progress for 5 s", nothing else wrong),
# and no destroyed page pool is left waiting for buffers.
case_netgpu_rx_unplug() {
	local C_ID=13 D_ID=14 IF_C IF_D IDX_C IDX_D spid t0 t1 got rc
	echo "$C_ID 1 1" > $BUS/new_device
	echo "$D_ID 1 1" > $BUS/new_device
	# Named apart from A and B's devices, which the namespaces hold.
	ip link set dev "$(ls $BUS/devices/netdevsim$C_ID/net/)" name ngc0
	ip link set dev "$(ls $BUS/devices/netdevsim$D_ID/net/)" name ngd0
	IF_C=$(ls $BUS/devices/netdevsim$C_ID/net/)
	IF_D=$(ls $BUS/devices/netdevsim$D_ID/net/)
	ktap_check "second pair named ngc0, ngd0 ($IF_C, $IF_D)" \
		test "$IF_C" = ngc0 -a "$IF_D" = ngd0
	ip link set dev "$IF_C" netns "$PID_A" 2>/dev/null ||
		"$NSIM_TCP" netns "$IF_C" "$PID_A"
	ip link set dev "$IF_D" netns "$PID_B" 2>/dev/null ||
		"$NSIM_TCP" netns "$IF_D" "$PID_B"
	in_a ip addr add 10.78.0.1/24 dev "$IF_C"
	in_b ip addr add 10.78.0.2/24 dev "$IF_D"
	in_a ip link set dev "$IF_C" up
	in_b ip link set dev "$IF_D" up
	IDX_C=$(ifindex in_a ip link show dev "$IF_C")
	IDX_D=$(ifindex in_b ip link show dev "$IF_D")
	exec 7< /proc/$PID_A/ns/net
	exec 8< /proc/$PID_B/ns/net
	ktap_check "second pair linked ($IF_C, $IF_D)" \
		sh -c "echo '7:$IDX_C 8:$IDX_D' > $BUS/link_device"
	exec 7<&- 8<&-
	# The receiver on CPU 0, the sender on CPU 1: D's transmit runs C's
	# NAPI, so C's skbs are allocated on CPU 1 and freed by CPU 0's
	# reads onto CPU 1's defer list (below).
	NGRX_PIN="taskset -c 0"
	ktap_check "netgpu-rx listening on $IF_C" \
		ngrx_start netgpu_rx_unplug -i "$IF_C" -m host -s 4 -t 5
	NGRX_PIN=
	( ex_b taskset -c 1 timeout 60 "$NSIM_TCP" send 10.78.0.1 $PORT "$CUT_BYTES" $((SEED + 40)) ) > /tmp/send.out 2>&1 &
	spid=$!
	wait_for /tmp/ngrx.out '^netgpu-rx: bound' 30
	sleep 1
	t0=$(cut -d' ' -f1 /proc/uptime)
	ktap_check "del_device $IF_C mid-stream" \
		sh -c "echo $C_ID > $BUS/del_device"
	t1=$(cut -d' ' -f1 /proc/uptime)
	ktap_diag "netgpu_rx_unplug: del_device took $(awk "BEGIN { print $t1 - $t0 }") s"
	ktap_check "del_device did not wait for netgpu (under 10 s)" \
		awk "BEGIN { exit !($t1 - $t0 < 10) }"
	ngrx_end netgpu_rx_unplug
	rc=$?
	ktap_check "netgpu-rx had bound $IF_C" \
		grep -q "^netgpu-rx: bound $IF_C " /tmp/ngrx.out
	ktap_check "netgpu-rx stopped for want of data: exit 1 (exit $rc), 'no progress for 5 s', no other error" \
		ngrx_unplugged netgpu_rx_unplug $rc
	ktap_check "the sender still running after it (pid $spid: $(pcomm $spid), state $(pstate $spid)): the signal below reaches it" \
		alive_as $spid nsim_tcp
	kill "$spid" 2>/dev/null
	wait "$spid"
	got=$(sed -n 's/^netgpu-rx: bytes=\([0-9]*\) .*/\1/p' /tmp/ngrx.out)
	ktap_check "netgpu-rx got part of the stream (${got:-none} of $CUT_BYTES bytes), all of it right" \
		sh -c "[ '${got:-0}' -gt 0 ] && [ '${got:-0}' -lt $CUT_BYTES ] && grep -q ' mismatches=0 ' /tmp/ngrx.out"
	# The reads freed skbs that C's NAPI allocated on another CPU:
	# skb_attempt_defer_free() parks them on that CPU's defer list, which
	# only its next NET_RX softirq empties, and with C gone that CPU may
	# receive nothing more for a long time (the pool kept 17, 1 and 33
	# buffers for over 50 s before this was understood).  So: if a pool
	# is still there after 5 s, run NET_RX on every CPU, and then none
	# may be left.
	if ! ngrx_pools_gone_within 5; then
		ktap_diag "netgpu_rx_unplug: in flight after 5 s, before kicking the defer lists:"
		diag_file netgpu /tmp/ngn.out
		"$NSIM_TCP" kick > /tmp/kick.out 2>&1
		ktap_diag "netgpu_rx_unplug: $(cat /tmp/kick.out)"
	else
		ktap_diag "netgpu_rx_unplug: no pool left 5 s after the unplug (nothing on a defer list)"
	fi
	ktap_check "no page pool left behind (within 5 s of NET_RX on every CPU)" \
		ngrx_pools_gone_within 5
	echo $D_ID > $BUS/del_device
	return $ktap_fail
}

# netgpu_device_gone, in the teardown: A's queue 0 bound again, and data
# that A's receiver holds in netgpu buffers, when A is deleted.
ng_gone_start() {
	NG_GONE=0
	if ! ng_start /tmp/ng2.out /tmp/ng2.cmd 128 300; then
		ktap_check "netgpu: $IF_A rx queue 0 bound again" false
		wait "$NG_BG"
		return
	fi
	NG_GONE=1
	ktap_check "netgpu: B sends $NG_BYTES bytes that A's receiver holds" \
		ng_transfer netgpu_gone "$NG_BYTES" $((SEED + 25))
}

# A is gone: the queue fd reports it, the context is dead, closing all
# of it and then the socket leaves no page pool behind (and no splat).
ng_gone_check() {
	local rc
	[ "$NG_GONE" = 1 ] || return
	ktap_check "netgpu: queue fd reports EPOLLERR|EPOLLHUP within 10 s of del_device" \
		wait_for /tmp/ng2.out '^hup: queue fd revents .*ERR HUP' 10 "$NG_PID"
	ktap_diag "netgpu: $(grep '^hup:' /tmp/ng2.out)"
	ng_cmd dead
	ktap_check "netgpu: every call on the context fails with ENODEV" \
		grep -q '^dead: 5 of 5 ' /tmp/ng.reply
	ktap_check "netgpu: counters still readable" \
		grep -q '^dead GET_STATS ctx: ok$' /tmp/ng.reply
	ng_cmd stats
	ng_cmd quit
	wait "$NG_BG"
	rc=$?
	ktap_check "netgpu: bind tool closed everything and exited 0" test $rc -eq 0
	ktap_check "netgpu: receiver closed its socket after the device went" \
		ng_release netgpu_gone
	ktap_check "netgpu: no page pool left in A's namespace within 10 s" \
		ng_no_pools 10
}

# ng_no_pools <seconds>: page-pool-get of netns A lists none.
ng_no_pools() {
	local i=0
	while ! in_a "$NSIM_NETGPU" netlink - > /tmp/ngn.out 2>&1 ||
	      grep -q '^page-pool id ' /tmp/ngn.out; do
		i=$((i + 1))
		if [ $i -gt $(($1 * 2)) ]; then
			diag_file netgpu /tmp/ngn.out
			return 1
		fi
		usleep 500000
	done
}

# The page pp_hold takes is freed late, after A is unregistered: the
# orphaned-pool path.  The netgpu bind of ng_gone_start replaces the pool
# it came from, which is then destroyed with the page still out.
case_teardown() {
	echo 1 > $A_DFS/pp_hold
	exec 5<&- 6<&-
	ng_gone_start
	ktap_check "del_device A" sh -c "echo $A_ID > $BUS/del_device"
	ng_gone_check
	ktap_check "del_device B" sh -c "echo $B_ID > $BUS/del_device"
	kill "$PID_A" "$PID_B"
	return $ktap_fail
}

# ----- netgpu's zero-copy transmit (nsim_netgpu send) -----
#
# nsim_netgpu send, in B, attaches its socket to a context of B's device
# and a region (no queue bound: sending needs none) and sends the nsim_tcp
# stream from the region's pages; nsim_tcp recv, in A, checks every byte.
# Each accepted send completes once on the completion ring when neither
# the stack nor the device reads it any more; the region stays pinned
# until the last one.  Every wait is bounded.

# A's emulated header split on: A's netdevsim "DMA"s B's frags into its
# own buffers and frees B's skb, as a device that read the pages would,
# so no send is copied; with it off, netdevsim hands B's skb to A's
# stack, whose local delivery copies the frags of every skb
# (skb_orphan_frags_rx()), so every send completes as copied.
case_netgpu_tx_host() {
	echo 1 > $A_DFS/rx_split
	ngtx_host tx_host "$RX_BYTES" $((SEED + 60)) none
}

# tcp_retrans <in_a|in_b>: the namespace's TcpRetransSegs (/proc/net/snmp).
tcp_retrans() {
	"$1" cat /proc/net/snmp | awk '/^Tcp:/ {
		if (!c) { for (i = 1; i <= NF; i++) if ($i == "RetransSegs") c = i }
		else print $c }'
}

# The same send with B's egress losing 3 % of its packets (netem, by
# nsim_netgpu netem: busybox has no tc): the lost segments are sent
# again from the region's pages (TCP's retransmit queue holds the frags,
# so each send completes only once its last retransmission is acked),
# and the stream still arrives whole, each send completed once.  A's
# split off: every send completes as copied (see tx_host).
case_netgpu_tx_loss() {
	local r0 r1
	echo 0 > $A_DFS/rx_split
	ktap_check "tx_loss: netem on B's $IF_B drops 3 % of the packets" \
		in_b "$NSIM_NETGPU" netem "$IF_B" 300 || return 1
	r0=$(tcp_retrans in_b)
	ngtx_host tx_loss "$RX_SMALL" $((SEED + 63)) all
	r1=$(tcp_retrans in_b)
	in_b "$NSIM_NETGPU" netem "$IF_B" 0
	ktap_check "tx_loss: B retransmitted from the region (${r0:-?} to ${r1:-?} segments)" \
		test "${r1:-0}" -gt "${r0:-0}"
	return $ktap_fail
}

# The region removed (REMOVE_REGION) while a quarter of the stream is
# accepted and much of it still in the stack: the next SEND fails (ENODEV
# or EFAULT), every send accepted before completes once, the receiver
# gets exactly the bytes accepted, all of them right (the removed
# region's pages stay pinned, and are read, until the last skb is gone),
# and then every pin returns.
case_netgpu_tx_remove() {
	local p0 src rc s c sent got
	echo 1 > $A_DFS/rx_split
	p0=$(pins_out)
	ktap_check "tx_remove: nsim_tcp listening in A" \
		ngtx_recv "$RX_SMALL" $((SEED + 64)) || return 1
	in_b timeout 300 "$NSIM_NETGPU" send "$IF_B" "$A_IP" $PORT "$RX_SMALL" \
		$((SEED + 64)) remove > /tmp/ngtx.out 2>&1
	src=$?
	diag_file netgpu_tx_remove /tmp/ngtx.out
	ngtx_recv_end netgpu_tx_remove 60
	rc=$?
	s=$(ngtx_field sends) c=$(ngtx_field completions)
	sent=$(sed -n 's/^nsim_netgpu: send bytes=\([0-9]*\) .*/\1/p' /tmp/ngtx.out)
	got=$(sed -n 's/^nsim_tcp: recv bytes=\([0-9]*\) .*/\1/p' /tmp/recv.out)
	ktap_check "tx_remove: the SEND after REMOVE_REGION failed with ENODEV or EFAULT (exit $src)" \
		sh -c "[ $src -eq 0 ] && grep -Eq '^nsim_netgpu: send removed after=[1-9][0-9]* errno=(ENODEV|EFAULT)$' /tmp/ngtx.out"
	ktap_check "tx_remove: each of the $s sends accepted completed once ($c completions, $(ngtx_field copied) copied), none pending or lost" \
		sh -c "[ $s -gt 0 ] && [ $c -eq $s ] && [ $(ngtx_field reaped) -eq $s ] && [ $(ngtx_field copied)/$(ngtx_field pending)/$(ngtx_field lost)/$(ngtx_field unexpected) = 0/0/0/0 ]"
	ktap_check "tx_remove: A received the ${sent:-?} bytes accepted (${got:-none}), every byte right (exit $rc)" \
		sh -c "[ -n '$sent' ] && [ '${got:-x}' = '$sent' ] && [ $sent -lt $RX_SMALL ] && grep -q ' mismatches=0 ' /tmp/recv.out"
	ktap_check "tx_remove: the removed region unpinned (no more than the $p0 pins out before)" \
		ngtx_pins_back "$p0" 30
	return $ktap_fail
}

# A udmabuf region cannot be sent from on 6.12 (no net_iov in transmit
# skbs): the first SEND fails with EOPNOTSUPP.  The receiver, there for
# the connection, gets no byte and ends when the sender closes.
case_netgpu_tx_dmabuf_refused() {
	local p0 src rc
	p0=$(pins_out)
	ktap_check "tx_dmabuf_refused: nsim_tcp listening in A" \
		ngtx_recv 0 $((SEED + 61)) || return 1
	in_b timeout 60 "$NSIM_NETGPU" send "$IF_B" "$A_IP" $PORT "$RX_SMALL" \
		$((SEED + 61)) udmabuf > /tmp/ngtx.out 2>&1
	src=$?
	diag_file netgpu_tx_dmabuf_refused /tmp/ngtx.out
	ngtx_recv_end netgpu_tx_dmabuf_refused 10
	rc=$?
	ktap_check "tx_dmabuf_refused: the first SEND from a udmabuf region failed with EOPNOTSUPP (exit $src)" \
		sh -c "[ $src -eq 0 ] && grep -q '^nsim_netgpu: send dmabuf refused errno=EOPNOTSUPP$' /tmp/ngtx.out"
	ktap_check "tx_dmabuf_refused: the receiver got no byte and ended (exit $rc)" \
		sh -c "[ $rc -eq 0 ] && grep -q '^nsim_tcp: recv bytes=0 mismatches=0 ' /tmp/recv.out"
	ktap_check "tx_dmabuf_refused: no process left (receiver pid $NGTX_RX: $(pstate "$NGTX_RX"))" \
		test "$(pstate "$NGTX_RX")" = gone
	ktap_check "tx_dmabuf_refused: no dma-buf left" no_dmabufs
	ktap_check "tx_dmabuf_refused: the udmabuf's pages unpinned (no more than the $p0 pins out before)" \
		pins_back "$p0"
	return $ktap_fail
}

# The sender killed with SIGKILL mid-stream (nsim_netgpu itself: ex_b and
# busybox's timeout exec it, so $! is its pid).  Its sends still in the
# stack keep the region pinned until their skbs go: the socket, closed
# at the exit, still sends what it holds, then its end; the receiver gets
# a part of the stream, all of it right.
case_netgpu_tx_killed() {
	local p0 o0 o1 pid rc rrc got
	echo 1 > $A_DFS/rx_split
	p0=$(pins_out)
	ktap_check "tx_killed: nsim_tcp listening in A" \
		ngtx_recv "$CUT_BYTES" $((SEED + 62)) || return 1
	o0=$(ip_in_octets "$PID_A")
	( ex_b timeout 300 "$NSIM_NETGPU" send "$IF_B" "$A_IP" $PORT "$CUT_BYTES" \
		$((SEED + 62)) host ) > /tmp/ngtx.out 2>&1 &
	pid=$!
	wait_for /tmp/ngtx.out '^attached socket|^nsim_netgpu: exit' 30 "$pid"
	# Killed once a MiB of the stream has arrived.
	wait_octets "$PID_A" $((o0 + 1048576)) 30
	o1=$(ip_in_octets "$PID_A")
	ktap_check "tx_killed: nsim_netgpu (pid $pid) sending, $((o1 - o0)) IP bytes of the $CUT_BYTES-byte stream in" \
		alive_as "$pid" nsim_netgpu
	kill -KILL "$pid"
	wait "$pid"
	rc=$?
	diag_file netgpu_tx_killed /tmp/ngtx.out
	ngtx_recv_end netgpu_tx_killed 60
	rrc=$?
	got=$(sed -n 's/^nsim_tcp: recv bytes=\([0-9]*\) .*/\1/p' /tmp/recv.out)
	ktap_check "tx_killed: nsim_netgpu died of the SIGKILL (status $rc, 137 expected) before its report" \
		sh -c "[ $rc -eq 137 ] && ! grep -q '^nsim_netgpu: send bytes=' /tmp/ngtx.out"
	ktap_check "tx_killed: A got part of the stream (${got:-none} of $CUT_BYTES bytes), all of it right, and ended (exit $rrc)" \
		sh -c "[ '${got:-0}' -gt 0 ] && [ '${got:-0}' -lt $CUT_BYTES ] && grep -q ' mismatches=0 ' /tmp/recv.out"
	ktap_check "tx_killed: every page it pinned unpinned within 30 s (no more than the $p0 pins out before it)" \
		ngtx_pins_back "$p0" 30
	ktap_check "tx_killed: no process left (sender pid $pid: $(pstate "$pid"), receiver pid $NGTX_RX: $(pstate "$NGTX_RX"))" \
		test "$(pstate "$pid")/$(pstate "$NGTX_RX")" = gone/gone
	return $ktap_fail
}

# udmabuf's error paths (patches/0018): UDMABUF_CREATE with its 1st,
# 2nd, ... allocation failing (fail-nth, GFP_KERNEL included), until it
# completes; none may leave a folio pinned.  Without 0018 a failed
# unpin-list entry left it and every later folio of the range pinned.
case_udmabuf_fail_nth() {
	local d=/sys/kernel/debug a rc
	for a in failslab fail_page_alloc; do
		cat $d/$a/ignore-gfp-wait > /tmp/$a.igw
		cat $d/$a/verbose > /tmp/$a.verbose
		echo N > $d/$a/ignore-gfp-wait
		echo 0 > $d/$a/verbose
	done
	"$NSIM_NETGPU" udmabuf-sweep 64 > /tmp/ub.out 2>&1
	rc=$?
	for a in failslab fail_page_alloc; do
		cat /tmp/$a.igw > $d/$a/ignore-gfp-wait
		cat /tmp/$a.verbose > $d/$a/verbose
	done
	diag_file udmabuf /tmp/ub.out
	ktap_check "every failed UDMABUF_CREATE left no folio pinned (exit $rc)" test $rc -eq 0
	ktap_check "the sweep failed allocations" grep -q 'faults=[1-9]' /tmp/ub.out
	return $ktap_fail
}

# Review 2, L4: the kernel memory netgpu allocates for a user is charged
# to the user's memory cgroup.  nsim_netgpu memcg runs alone in a child
# group of cgroup2 with the memory controller, in A's namespace (a
# context of $IF_A, a TCP connection over A's 127.0.0.1), and reports the
# group's memory.current around two things:
# - ATTACH_SOCKET with the largest rx ring (NETGPU_QUEUE_MAX_ENTRIES,
#   2^20 entries of 16 bytes: 16 MiB and a page): memory.current rises by
#   the ring's size while it exists, and falls back once it is closed;
# - one udmabuf added to one area as a region again and again (the area
#   takes duplicates), with memory.max MEMCG_LIMIT KiB above
#   memory.current: each region (its struct, its xarray slot) is
#   charged, so an add fails with ENOMEM, within MEMCG_LIMIT KiB / 64
#   bytes adds (a region's struct alone is larger: two mutexes, two work
#   items); closing the area gives all of it back.
# An uncharged ring rises by its page array and page tables only; with
# uncharged region structs the adds reach the bound without ENOMEM (the
# xarray's nodes, charged too, are a node per 64 slots: some 10-20 bytes
# an add).  memory.current also counts what memcg's per-CPU stocks hold
# ahead, up to 64 pages a CPU: each comparison allows that (slack).  An
# add that cannot be charged calls the OOM killer, which finds the tool
# exempt (oom_score_adj -1000), prints its report ("no killable
# processes") on the console, and the add fails.
CG_ROOT=/sys/fs/cgroup
CG_NAME=netgpu_memcg
CG=$CG_ROOT/$CG_NAME
MEMCG_LIMIT=4096

# memcg_group: cgroup2 at $CG_ROOT (mounted if need be), the memory
# controller on for its children, the group $CG.
memcg_group() {
	[ -f $CG_ROOT/cgroup.controllers ] ||
		mount -t cgroup2 none $CG_ROOT || return 1
	grep -qw memory $CG_ROOT/cgroup.controllers &&
		echo +memory > $CG_ROOT/cgroup.subtree_control &&
		mkdir -p $CG && test -f $CG/memory.current
}

# memcg_field <ring|regions> <name>: a figure of the tool's report, -1
# without it.
memcg_field() {
	local v
	v=$(sed -n "s/^nsim_netgpu: memcg $1:.* $2=\([0-9A-Za-z-]*\).*/\1/p" /tmp/memcg.out)
	echo "${v:--1}"
}

case_memcg() {
	local slack adds rc bytes b w a n err e
	ktap_check "memcg: cgroup2, the memory controller on, group $CG" \
		memcg_group || return 1
	slack=$((($(grep -c ^processor /proc/cpuinfo) + 1) * 256))
	adds=$((MEMCG_LIMIT * 1024 / 64))
	# The shell moves itself into the group, then execs the tool
	# (nsenter execs it too): the tool is the group's only process.
	sh -c "echo \$\$ > $CG/cgroup.procs && echo -1000 > /proc/self/oom_score_adj && exec nsenter -t $PID_A -n $NSIM_NETGPU memcg $IF_A $CG $MEMCG_LIMIT $adds $slack" \
		> /tmp/memcg.out 2>&1
	rc=$?
	diag_file memcg /tmp/memcg.out
	ktap_check "memcg: nsim_netgpu memcg ran in $CG (exit $rc)" \
		sh -c "[ $rc -eq 0 ] && grep -q '^nsim_netgpu: memcg in 0::/$CG_NAME\$' /tmp/memcg.out"

	bytes=$(memcg_field ring bytes) b=$(memcg_field ring before)
	w=$(memcg_field ring with) a=$(memcg_field ring after)
	ktap_check "memcg: a $(memcg_field ring entries)-entry rx ring ($bytes bytes) charged while it exists: memory.current +$((w - b)), at least its size less $slack KiB" \
		test "$bytes" -gt 0 -a $((w - b)) -ge $((bytes - slack * 1024))
	ktap_check "memcg: given back at its close: memory.current $a, at most $slack KiB above the $b before" \
		test "$a" -ge 0 -a "$a" -le $((b + slack * 1024))

	n=$(memcg_field regions adds) err=$(memcg_field regions errno)
	b=$(memcg_field regions before) e=$(memcg_field regions at_end)
	a=$(memcg_field regions after)
	ktap_check "memcg: one udmabuf added as a region until ENOMEM ($err) after $n adds, fewer than $adds, memory.max $MEMCG_LIMIT KiB above memory.current (+$((e - b)))" \
		test "$err" = ENOMEM -a "$n" -gt 0 -a "$n" -lt "$adds"
	[ "$n" -gt 0 ] && ktap_diag "memcg: $(((e - b) / n)) bytes charged a region"
	ktap_check "memcg: all given back at the area's close: memory.current $a, at most $slack KiB above the $b before" \
		test "$a" -ge 0 -a "$a" -le $((b + slack * 1024))
	ktap_diag "memcg: memory.events $(tr '\n' ' ' < $CG/memory.events)"
	ktap_check "memcg: the group met memory.max, and the OOM killer killed nothing" \
		sh -c "grep -q '^max [1-9]' $CG/memory.events && grep -q '^oom_kill 0\$' $CG/memory.events"
	ktap_check "memcg: the group removed" rmdir $CG
	ktap_check "memcg: no dma-buf left" no_dmabufs
	return $ktap_fail
}

# ----- scripts/bench-rx (nsim_bench=<rounds>): kunit/netdevsim/bench.sh -----

# nsim_cases=a,b (kernel command line, e.g. NSIM_ARGS=nsim_cases=netgpu_guards):
# run only these cases (names without netdevsim_rx_) besides setup and
# teardown; the others are reported as skipped.
nsim_skip() {
	ktap_skip_reason="not in nsim_cases=$nsim_cases"
	return 77
}

nsim_case() {
	local short=${1#netdevsim_rx_}
	if [ -n "${nsim_cases:-}" ] && [ "$short" != setup ] &&
	   [ "$short" != teardown ]; then
		case ",$nsim_cases," in
		*",$short,"*) ;;
		*) ktap_case "$1" nsim_skip; return ;;
		esac
	fi
	ktap_case "$1" "$2"
}

if [ -n "${nsim_bench:-}" ]; then
	ktap_begin netdevsim_bench 1
	ktap_case netdevsim_bench_setup case_setup
	ktap_end
	. /guest/bench.sh
	bench_rx "$nsim_bench" && bench_tx "$nsim_bench"
	exit
fi

ktap_begin netdevsim_rx 31
nsim_case netdevsim_rx_setup case_setup
nsim_case netdevsim_rx_tcp_plain case_tcp_plain
nsim_case netdevsim_rx_tcp_split case_tcp_split
nsim_case netdevsim_rx_tcp_split_small_writes case_tcp_split_small_writes
nsim_case netdevsim_rx_tcp6_split case_tcp6_split
nsim_case netdevsim_rx_tcp_split_jumbo case_tcp_split_jumbo
nsim_case netdevsim_rx_queue_reset_under_traffic case_queue_reset_under_traffic
nsim_case netdevsim_rx_queue_reset_down case_queue_reset_down
nsim_case netdevsim_rx_devmem case_devmem
nsim_case netdevsim_rx_devmem_unplug case_devmem_unplug
nsim_case netdevsim_rx_pp_hold case_pp_hold
nsim_case netdevsim_rx_netgpu_bind case_netgpu_bind
nsim_case netdevsim_rx_netgpu_guards case_netgpu_guards
nsim_case netdevsim_rx_netgpu_updown case_netgpu_updown
nsim_case netdevsim_rx_netgpu_unbind case_netgpu_unbind
nsim_case netdevsim_rx_netgpu_rx_host case_netgpu_rx_host
nsim_case netdevsim_rx_netgpu_rx_dmabuf case_netgpu_rx_dmabuf
nsim_case netdevsim_rx_libnetgpu_example case_libnetgpu_example
nsim_case netdevsim_rx_netgpu_rx_hostile case_netgpu_rx_hostile
nsim_case netdevsim_rx_netgpu_rx_remove case_netgpu_rx_remove
nsim_case netdevsim_rx_netgpu_fuzz case_netgpu_fuzz
nsim_case netdevsim_rx_netgpu_rx_unplug case_netgpu_rx_unplug
nsim_case netdevsim_rx_netgpu_tx_host case_netgpu_tx_host
nsim_case netdevsim_rx_netgpu_tx_loss case_netgpu_tx_loss
nsim_case netdevsim_rx_netgpu_tx_remove case_netgpu_tx_remove
nsim_case netdevsim_rx_netgpu_tx_dmabuf_refused case_netgpu_tx_dmabuf_refused
nsim_case netdevsim_rx_netgpu_tx_killed case_netgpu_tx_killed
nsim_case netdevsim_rx_udmabuf_fail_nth case_udmabuf_fail_nth
nsim_case netdevsim_rx_memcg case_memcg
nsim_case netdevsim_rx_teardown case_teardown
nsim_case netdevsim_rx_kmemleak case_kmemleak
ktap_end
# make coverage: the profile of everything above, on the console.
if [ "${nsim_gcov:-0}" = 1 ]; then
	sh /guest/gcov-dump.sh
fi
