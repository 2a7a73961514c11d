# SPDX-License-Identifier: GPL-2.0-only
#
# A case for kunit/netdevsim/run.sh (busybox sh), kept apart until the
# owner of run.sh takes it in: patches/0019, review-2 N7.
#
# devmem TCP bound to a device that is deleted while a socket still holds
# buffers of the binding.  Before patches/0019, 6.12's devmem kept the
# dma-buf mapped for the device until the binding's last page_pool was
# destroyed, which waits for those buffers: del_device returned with the
# dma-buf still attached to the deleted device, and when the holder let
# go, dma_buf_unmap_attachment() used the freed struct device (KASAN:
# use-after-free in the exporter's unmap_dma_buf(), dma_unmap_sgtable()).
# With 0019 the dma-buf is unmapped and detached at del_device.
#
# The holder is a listener stopped before it accepts: the kernel still
# completes the handshake and queues what arrives on the child socket,
# in the binding's buffers (the bound queue splits every TCP segment
# with payload into them), and nothing reads them.
#
# To take it in, in run.sh:
#   - after ". /guest/net.sh":       . /guest/devmem_unplug.sh
#     (and scripts/netdevsim-check copies this file to /guest, as it
#     does net.sh), or paste the function into run.sh;
#   - after "nsim_case netdevsim_rx_devmem case_devmem":
#       nsim_case netdevsim_rx_devmem_unplug case_devmem_unplug
#   - ktap_begin netdevsim_rx 23  ->  ktap_begin netdevsim_rx 24
#
# Uses run.sh's BUS, PORT, SEED, NSIM_TCP, PID_A, PID_B and net.sh's
# helpers (ex_a, ex_b, in_a, in_b, wait_for, is_stopped, ifindex).

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
