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
#                (nsim_bench_recv_size=<bytes> another size)
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

# bench_listen <rx|tx> <who> <run> <receiver...>: the receiver started in
# A (itself $BENCH_RPID: ex_a execs it), its output in /tmp/bench.out;
# 1, said, if it does not listen within 60 s.
bench_listen() {
	local kind=$1 who=$2 run=$3
	shift 3
	rm -f /tmp/bench.out /tmp/send.out
	( ex_a "$@" ) > /tmp/bench.out 2>&1 &
	BENCH_RPID=$!
	wait_for /tmp/bench.out 'listening' 60 "$BENCH_RPID" && return 0
	echo "bench-$kind $who run $run FAILED: no listener"
	cat /tmp/bench.out
	kill "$BENCH_RPID" 2>/dev/null
	return 1
}

# bench_window <sender...>: the sender run in B to its end, then the
# receiver ($BENCH_RPID) waited for; around both, the window's
# /proc/uptime (BENCH_T0, BENCH_T1) and bench_stat (BENCH_S0,
# BENCH_S1); the exit statuses in BENCH_SRC and BENCH_RRC.  The
# sender's output in /tmp/send.out.
bench_window() {
	BENCH_S0=$(bench_stat)
	BENCH_T0=$(cut -d' ' -f1 /proc/uptime)
	in_b "$@" > /tmp/send.out 2>&1
	BENCH_SRC=$?
	wait "$BENCH_RPID"
	BENCH_RRC=$?
	BENCH_T1=$(cut -d' ' -f1 /proc/uptime)
	BENCH_S1=$(bench_stat)
}

# bench_line <rx|tx> <who> <run> <t0> <t1> <stat0> <stat1> <loop_secs>
# <loop_cpu>: the transfer's line (see above).
bench_line() {
	echo "$6 $7" | awk -v kind="$1" -v who="$2" -v run="$3" -v t0="$4" \
		-v t1="$5" -v ls="$8" -v lc="$9" '{
		printf("bench-%s %s run %d wall %.2f busy %d user %d sys %d irq %d softirq %d all %d hz 100 loop_secs %.3f loop_cpu %.3f\n",
		       kind, who, run, t1 - t0, $7 - $1, $8 - $2, $9 - $3,
		       $10 - $4, $11 - $5, $12 - $6, ls + 0, lc + 0)
	}'
}

# bench_one <receiver> <bytes> <seed> <run>
bench_one() {
	local who=$1 bytes=$2 seed=$3 run=$4 verify=${nsim_bench_verify:-1}
	local rrc src v=
	[ "$verify" = 0 ] || v="-v $seed"
	# shellcheck disable=SC2086 # $v: no option or "-v <seed>"
	case $who in
	recv)	set -- "$NSIM_TCP" recv $PORT "$bytes" "$seed" \
			"${nsim_bench_recv_size:-65536}" ;;
	netgpu)	set -- "$NETGPU_RX" -i "$IF_A" -q 0 -l $PORT -m udmabuf \
			-s 64 -n "$bytes" $v -t 120 ;;
	netgpu_host) set -- "$NETGPU_RX" -i "$IF_A" -q 0 -l $PORT -m host \
			-s 64 -n "$bytes" $v -t 120 ;;
	devmem)	set -- "$NSIM_TCP" devmem "$IF_A" $PORT "$bytes" "$seed" 64 ;;
	esac
	bench_listen rx "$who" "$run" "$@" || return 1
	bench_window "$NSIM_TCP" send "$A_IP" $PORT "$bytes" "$seed"
	src=$BENCH_SRC rrc=$BENCH_RRC
	if [ $src -ne 0 ] || [ $rrc -ne 0 ] ||
	   ! grep -q "bytes=$bytes mismatches=0 " /tmp/bench.out; then
		echo "bench-rx $who run $run FAILED (sender $src, receiver $rrc)"
		cat /tmp/bench.out /tmp/send.out
		return 1
	fi
	# shellcheck disable=SC2046 # "secs <s> cpu <s>": two words wanted
	set -- $(grep -oE 'secs=[0-9.]+ cpu=[0-9.]+' /tmp/bench.out | tr '=' ' ')
	bench_line rx "$who" "$run" "$BENCH_T0" "$BENCH_T1" "$BENCH_S0" \
		"$BENCH_S1" "${2:-0}" "${4:-0}"
	grep -E '^(nsim_tcp|netgpu-rx): .*bytes=' /tmp/bench.out |
		sed "s/^/bench-rx $who run $run: /"
}

# bench_rounds <rounds> <seed> <one> <participant>...: a warm-up round
# (run 0, every participant once) and <rounds> rounds, the participants'
# order rotated from round to round (round r starts with participant
# r mod n, so each is first, second... equally often); each transfer is
# <one> <participant> <bytes> <seed + r> <r>.
bench_rounds() {
	local rounds=$1 seed=$2 one=$3 bytes=${nsim_bench_bytes:-134217728}
	local order r k who
	shift 3
	order=$*
	for r in $(seq 0 "$rounds"); do
		# shellcheck disable=SC2086 # the list, split
		set -- $order
		k=$((r % $#))
		while [ $k -gt 0 ]; do
			set -- "$@" "$1"
			shift
			k=$((k - 1))
		done
		for who in "$@"; do
			"$one" "$who" "$bytes" $((seed + r)) "$r" || return 1
		done
	done
}

bench_rx() {
	echo "bench-rx: bytes=${nsim_bench_bytes:-134217728} seed=$SEED rounds=$1 (+1 warm-up)" \
		"verify=${nsim_bench_verify:-1} tokens=${nsim_bench_tokens:-frag}" \
		"recv_size=${nsim_bench_recv_size:-65536}" \
		"cpus=$(grep -c '^processor' /proc/cpuinfo)"
	# The receivers' environment: no Fletcher sum (netgpu-rx has none),
	# the byte check as asked, devmem's token returns.
	export NSIM_TCP_SUM=0 NSIM_TCP_VERIFY="${nsim_bench_verify:-1}"
	export NSIM_TCP_TOKENS="${nsim_bench_tokens:-frag}"
	echo 1 > "$A_DFS/rx_split"
	bench_rounds "$1" "$SEED" bench_one recv netgpu netgpu_host devmem ||
		return 1
	echo "bench-rx: done"
}

# ----- the send benchmark (after bench_rx, in the same boot) -----
#
# One TCP stream from B to A's nsim_tcp recv (the same receiver, the
# same byte check for every sender), sent three ways by nsim_netgpu send
# from 8 MiB of host memory in 256 KiB slots, each slot filled with the
# next bytes of the stream by the same routine before it is sent:
#   netgpu  NETGPU_SOCKQ_IOCTL_SEND, completions on the completion ring
#   copy    send()
#   msgzc   send(MSG_ZEROCOPY), notifications on the error queue
# A's emulated header split on: A's netdevsim "DMA"s B's frags and frees
# B's skbs, as a device that read them would (no copy on A's side, so
# netgpu's and MSG_ZEROCOPY's pages are really not copied).  Rounds,
# rotation and the figures as bench_rx's: each transfer prints
#   bench-tx <sender> run <r> wall <s> busy <ticks> ... (as bench-rx)
# with loop_secs/loop_cpu the sender's own figures.

# bench_tx_one <sender> <bytes> <seed> <run>
bench_tx_one() {
	local who=$1 bytes=$2 seed=$3 run=$4 mode rrc src
	case $who in
	netgpu) mode=host ;;
	*) mode=$who ;;
	esac
	bench_listen tx "$who" "$run" "$NSIM_TCP" recv $PORT "$bytes" "$seed" ||
		return 1
	bench_window "$NSIM_NETGPU" send "$IF_B" "$A_IP" $PORT "$bytes" "$seed" \
		"$mode"
	src=$BENCH_SRC rrc=$BENCH_RRC
	if [ $src -ne 0 ] || [ $rrc -ne 0 ] ||
	   ! grep -q "bytes=$bytes mismatches=0 " /tmp/bench.out ||
	   ! grep -q "^nsim_netgpu: send bytes=$bytes " /tmp/send.out; then
		echo "bench-tx $who run $run FAILED (sender $src, receiver $rrc)"
		cat /tmp/bench.out /tmp/send.out
		return 1
	fi
	bench_line tx "$who" "$run" "$BENCH_T0" "$BENCH_T1" "$BENCH_S0" "$BENCH_S1" \
		"$(sed -n 's/^nsim_netgpu: send .* secs=\([0-9.]*\).*/\1/p' /tmp/send.out)" 0
	grep -E '^nsim_netgpu: send bytes=' /tmp/send.out |
		sed "s/^/bench-tx $who run $run: /"
}

bench_tx() {
	echo "bench-tx: bytes=${nsim_bench_bytes:-134217728} seed=$((SEED + 100)) rounds=$1 (+1 warm-up)" \
		"verify=${nsim_bench_verify:-1} cpus=$(grep -c '^processor' /proc/cpuinfo)"
	export NSIM_TCP_SUM=0 NSIM_TCP_VERIFY="${nsim_bench_verify:-1}"
	echo 1 > "$A_DFS/rx_split"
	bench_rounds "$1" $((SEED + 100)) bench_tx_one netgpu copy msgzc ||
		return 1
	echo "bench-tx: done"
}
