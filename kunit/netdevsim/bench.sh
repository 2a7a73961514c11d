# SPDX-License-Identifier: GPL-2.0-only
#
# scripts/bench-rx's guest part (busybox sh), sourced by
# kunit/netdevsim/run.sh when the kernel command line has
# nsim_bench=<rounds>, after its setup (the netdevsim pair, A receiving
# in its namespace from B): bench_rx <rounds>.
#
# One TCP stream from B (nsim_tcp send, the same seeded bytes for every
# receiver of a round), over the same emulated receive DMA of A (header
# split into page_pool buffers: rx_split on for the plain receiver, a
# memory provider for the others), received four ways:
#   recv         nsim_tcp recv: read() into a 64 KiB buffer
#   netgpu       netgpu-rx into a 64 MiB udmabuf
#   netgpu_host  netgpu-rx into 64 MiB of host memory
#   devmem       nsim_tcp devmem: devmem TCP into a 64 MiB udmabuf, with
#                ncdevmem's buffer sizes and token returns
# Every receiver checks the bytes with the same routine (stream_verify(),
# kunit/netdevsim/stream.h) unless nsim_bench_verify=0, in which case none
# does; nsim_tcp's Fletcher sum, which netgpu-rx does not compute, is off.
# netgpu-rx and devmem both bracket each batch of dma-buf reads with one
# DMA_BUF_IOCTL_SYNC START/END pair.
#
# A warm-up round (run 0, every receiver once) is discarded by the host
# side; then <rounds> rounds, the receivers' order rotated each round
# (round r starts with receiver r mod 4), so that each is first, second,
# third and last equally often.  Each transfer prints:
#   bench-rx <receiver> run <r> wall <s> busy <ticks> user <ticks>
#     sys <ticks> irq <ticks> softirq <ticks> all <ticks> hz 100
#     loop_secs <s> loop_cpu <s>
# wall: from the sender's start to the exit of both (/proc/uptime);
# busy: user+nice+system+irq+softirq of all CPUs over the same window
# (/proc/stat's "cpu" line, in USER_HZ ticks: the sender, NAPI and the
# emulated DMA in softirq, the receiver, all of it; with
# CONFIG_IRQ_TIME_ACCOUNTING interrupt time is measured, not sampled);
# all: every CPU's ticks, idle included; loop_*: the receiver's own
# figures over its receive loop (getrusage), for reference.

# bench_stat: "busy user sys irq softirq all" ticks of all CPUs.
bench_stat() {
	awk '$1 == "cpu" {
		print $2 + $3 + $4 + $7 + $8, $2 + $3, $4, $7, $8,
		      $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9
		exit
	}' /proc/stat
}

# bench_one <receiver> <bytes> <seed> <run>
bench_one() {
	local who=$1 bytes=$2 seed=$3 run=$4 verify=${nsim_bench_verify:-1}
	local rpid rrc src t0 t1 s0 s1 v=
	[ "$verify" = 0 ] || v="-v $seed"
	rm -f /tmp/bench.out /tmp/send.out
	# shellcheck disable=SC2086 # $v: no option or "-v <seed>"
	case $who in
	recv)	set -- "$NSIM_TCP" recv $PORT "$bytes" "$seed" ;;
	netgpu)	set -- "$NETGPU_RX" -i "$IF_A" -q 0 -l $PORT -m udmabuf \
			-s 64 -n "$bytes" $v -t 120 ;;
	netgpu_host) set -- "$NETGPU_RX" -i "$IF_A" -q 0 -l $PORT -m host \
			-s 64 -n "$bytes" $v -t 120 ;;
	devmem)	set -- "$NSIM_TCP" devmem "$IF_A" $PORT "$bytes" "$seed" 64 ;;
	esac
	# The receiver itself is $! (ex_a execs it).
	( ex_a "$@" ) > /tmp/bench.out 2>&1 &
	rpid=$!
	if ! wait_for /tmp/bench.out 'listening' 60 "$rpid"; then
		echo "bench-rx $who run $run FAILED: no listener"
		cat /tmp/bench.out
		kill "$rpid" 2>/dev/null
		return 1
	fi
	s0=$(bench_stat)
	t0=$(cut -d' ' -f1 /proc/uptime)
	in_b "$NSIM_TCP" send "$A_IP" $PORT "$bytes" "$seed" > /tmp/send.out 2>&1
	src=$?
	wait "$rpid"
	rrc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	s1=$(bench_stat)
	if [ $src -ne 0 ] || [ $rrc -ne 0 ] ||
	   ! grep -q "bytes=$bytes mismatches=0 " /tmp/bench.out; then
		echo "bench-rx $who run $run FAILED (sender $src, receiver $rrc)"
		cat /tmp/bench.out /tmp/send.out
		return 1
	fi
	echo "$s0 $s1" | awk -v who="$who" -v run="$run" -v t0="$t0" -v t1="$t1" \
		-v loop="$(grep -oE 'secs=[0-9.]+ cpu=[0-9.]+' /tmp/bench.out | tr '=' ' ')" '{
		split(loop, l, " ")
		printf("bench-rx %s run %d wall %.2f busy %d user %d sys %d irq %d softirq %d all %d hz 100 loop_secs %.3f loop_cpu %.3f\n",
		       who, run, t1 - t0, $7 - $1, $8 - $2, $9 - $3, $10 - $4,
		       $11 - $5, $12 - $6, l[2] + 0, l[4] + 0)
	}'
	grep -E '^(nsim_tcp|netgpu-rx): .*bytes=' /tmp/bench.out |
		sed "s/^/bench-rx $who run $run: /"
}

bench_rx() {
	local rounds=$1 bytes=${nsim_bench_bytes:-134217728} r k who
	local order="recv netgpu netgpu_host devmem"
	echo "bench-rx: bytes=$bytes seed=$SEED rounds=$rounds (+1 warm-up)" \
		"verify=${nsim_bench_verify:-1} tokens=${nsim_bench_tokens:-frag}" \
		"cpus=$(grep -c '^processor' /proc/cpuinfo)"
	# The receivers' environment: no Fletcher sum (netgpu-rx has none),
	# the byte check as asked, devmem's token returns.
	export NSIM_TCP_SUM=0 NSIM_TCP_VERIFY="${nsim_bench_verify:-1}"
	export NSIM_TCP_TOKENS="${nsim_bench_tokens:-frag}"
	echo 1 > "$A_DFS/rx_split"
	for r in $(seq 0 "$rounds"); do
		# Rotate: round r starts with receiver (r mod 4).
		# shellcheck disable=SC2086 # the list, split
		set -- $order
		k=$((r % 4))
		while [ $k -gt 0 ]; do
			set -- "$@" "$1"
			shift
			k=$((k - 1))
		done
		for who in "$@"; do
			bench_one "$who" "$bytes" $((SEED + r)) "$r" || return 1
		done
	done
	echo "bench-rx: done"
}
