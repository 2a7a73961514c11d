# SPDX-License-Identifier: GPL-2.0-only
#
# Shell helpers of the guest scripts that move TCP between two network
# namespaces, A (the receiver) and B (the sender), and bind netgpu to A's
# rx queue: kunit/netdevsim/run.sh and kunit/e1000e/run.sh source this
# file as /guest/net.sh (busybox sh), after /lib/ktap.sh.
#
# The caller sets: PID_A, PID_B (a process in each namespace), IF_A (A's
# device), A_IP, PORT, NSIM_TCP, NSIM_NETGPU and NETGPU_RX (the tools'
# paths); NGRX_PIN (a command prefix for netgpu-rx, e.g. taskset) and
# TO (B's destination, default A_IP) may be set around a call.

in_a() { nsenter -t "$PID_A" -n "$@"; }
in_b() { nsenter -t "$PID_B" -n "$@"; }
# ex_a / ex_b <command...>: exec the command in A or B, replacing the
# shell: for "( ex_a tool ... ) &", whose $! is then the tool itself.
# A backgrounded function ("in_a tool ... &") is a subshell of busybox
# sh that waits for nsenter's child: $! is that subshell, and SIGSTOP or
# SIGKILL sent to it never reaches the tool (review-2 T1).  nsenter
# without -p execs, and so do busybox's timeout and taskset: the pid
# stays the tool's through "( ex_b timeout 60 tool ... ) &".
ex_a() { exec nsenter -t "$PID_A" -n "$@"; }
ex_b() { exec nsenter -t "$PID_B" -n "$@"; }

# pstate <pid>: the state letter of /proc/<pid>/stat (R, S, T, Z...),
# "gone" without the process.
pstate() {
	local s
	s=$(cat /proc/"$1"/stat 2>/dev/null) || { echo gone; return; }
	s=${s##*) }
	echo "${s%% *}"
}

# pcomm <pid>: its command name.
pcomm() { cat /proc/"$1"/comm 2>/dev/null || echo gone; }

# alive_as <pid> <comm>: <pid> is <comm> and has not exited.
alive_as() {
	[ "$(pcomm "$1")" = "$2" ] && case $(pstate "$1") in gone|Z|X) false ;; esac
}

# is_stopped <pid> <comm>: <pid> is <comm> itself (not a shell around
# it) and stopped (state T), within 2 s of the SIGSTOP.
is_stopped() {
	local i=0
	while [ "$(pstate "$1")" != T ]; do
		i=$((i + 1))
		[ $i -le 20 ] || break
		usleep 100000
	done
	ktap_diag "pid $1: $(pcomm "$1"), state $(pstate "$1")"
	[ "$(pcomm "$1")" = "$2" ] && [ "$(pstate "$1")" = T ]
}
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

quiet() { "$@" > /dev/null 2>&1; }

# ip_in_octets <pid>: the IP bytes (headers included) the namespace of
# <pid> has received (IpExt InOctets of /proc/<pid>/net/netstat).
ip_in_octets() {
	awk '$1 == "IpExt:" {
		if (!h) { for (i = 2; i <= NF; i++) n[i] = $i; h = 1; next }
		for (i = 2; i <= NF; i++) if (n[i] == "InOctets") print $i
		exit }' /proc/"$1"/net/netstat
}

# wait_octets <pid> <count> <seconds>: 0 once ip_in_octets <pid> reached
# <count>, polling every 10 ms; 1 after <seconds>.
wait_octets() {
	local i=0
	while [ "$(ip_in_octets "$1")" -lt "$2" ]; do
		i=$((i + 1))
		[ $i -le $(($3 * 100)) ] || return 1
		usleep 10000
	done
}

# drop_trace on | off <function>: skb drops (the skb:kfree_skb tracepoint,
# which kfree_skb_reason() fires, dropwatch's source) into the ring
# buffer, emptied at "on".  "off" prints, on one line, "<count>
# <REASON>" for each drop reason (printed symbolically, as
# include/trace/events/skb.h does) of the drops freed in a function
# whose name starts with <function> (their location, %pS), e.g.
# e1000_clean_rx_irq_ps, or nsim_ (netdevsim's drop may be inlined into
# its NAPI poll).
drop_trace() {
	local tr=/sys/kernel/tracing
	local ev=$tr/events/skb/kfree_skb
	if [ "$1" = on ]; then
		[ -d $tr/events ] || mount -t tracefs nodev $tr
		echo 0 > $ev/filter && : > $tr/trace && echo 1 > $ev/enable
	else
		echo 0 > $ev/enable
		sed -n "s/.* location=$2[^ ]* .*reason: \([A-Z0-9_]*\)\$/\1/p" \
			$tr/trace | sort | uniq -c | tr -s ' \n' ' '
	fi
}

# drop_count <drop_trace off's output> <REASON>: its count of <REASON>
# (0 if none).
drop_count() {
	echo "$1" | awk -v r="$2" '
		{ for (i = 2; i <= NF; i += 2) if ($i == r) n = $(i - 1) }
		END { print n + 0 }'
}

# ngrx_unplugged <label> <rc>: netgpu-rx (-t 5, no -n) whose device went
# away mid-stream: nothing more arrives, so it must have stopped on its
# own timeout, exit 1 with "no progress for 5 s" and nothing else wrong
# (an ioctl error, a descriptor outside its memory, a bad byte).
ngrx_unplugged() {
	local errs
	errs=$(grep '^netgpu-rx: ' /tmp/ngrx.out | grep -v '^netgpu-rx: \(listening\|bound\|bytes=\|no progress for 5 s\)')
	[ -z "$errs" ] || ktap_diag "$1: unexpected: $errs"
	[ "$2" -eq 1 ] && [ -z "$errs" ] &&
		grep -q '^netgpu-rx: no progress for 5 s$' /tmp/ngrx.out
}


# transfer <label> <bytes> <seed> [<write size>] [<background command>]:
# B sends, A receives; both lines go to the console; returns 0 if both
# ends moved <bytes> and the receiver saw no bad byte and the sums match.
transfer() {
	local label=$1 bytes=$2 seed=$3 wsz=${4:-65536} bg=${5:-} rpid rrc src srcsum rsum
	local tmo=${TRANSFER_TIMEOUT:-120}
	rm -f /tmp/recv.out
	# Both ends give up after $tmo s (TRANSFER_TIMEOUT): a stream that
	# stalls fails its case instead of the whole boot's time limit.
	( ex_a timeout "$tmo" "$NSIM_TCP" recv $PORT "$bytes" "$seed" ) > /tmp/recv.out 2>&1 &
	rpid=$!
	while ! grep -q listening /tmp/recv.out 2>/dev/null; do
		usleep 20000
		kill -0 $rpid 2>/dev/null || break
	done
	[ -n "$bg" ] && { $bg & bgpid=$!; }
	in_b timeout "$tmo" "$NSIM_TCP" send "${TO:-$A_IP}" $PORT "$bytes" "$seed" "$wsz" > /tmp/send.out 2>&1
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

# wait_for <file> <ERE> <seconds> [<pid>]: 0 once a line of <file>
# matches; 1 after <seconds>, or as soon as <pid> is gone.
wait_for() {
	local i=0 n=$(($3 * 20))
	while ! grep -qE "$2" "$1" 2>/dev/null; do
		if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
			grep -qE "$2" "$1" 2>/dev/null
			return
		fi
		i=$((i + 1))
		[ $i -le $n ] || return 1
		usleep 50000
	done
}

diag_file() {
	local l
	while read -r l; do ktap_diag "$1: $l"; done < "$2"
}

# ng_start <output> <command file> <pages> <seconds>: the bind tool on
# $IF_A; 0 once it is bound and reads commands.
ng_start() {
	NG_OUT=$1 NG_CMD=$2 NG_SEQ=0 NG_PID=
	rm -f "$NG_OUT"
	: > "$NG_CMD"
	( ex_a "$NSIM_NETGPU" bind "$IF_A" "$3" "$4" "$NG_CMD" ) > "$NG_OUT" 2>&1 &
	NG_BG=$!
	wait_for "$NG_OUT" '^(ready|nsim_netgpu: exit)' 60
	NG_PID=$(sed -n 's/^nsim_netgpu: pid \([0-9]*\) .*/\1/p' "$NG_OUT")
	diag_file netgpu "$NG_OUT"
	grep -q '^ready$' "$NG_OUT"
}

# ng_cmd <command> [<args>]: run a command of the bind tool; its reply,
# without the command's number, goes to /tmp/ng.reply and the console.
# 1 without an answer within 30 s (the tool gone: NG_OK=0).
ng_cmd() {
	NG_SEQ=$((NG_SEQ + 1))
	echo "$NG_SEQ $*" >> "$NG_CMD"
	if ! wait_for "$NG_OUT" "^$NG_SEQ done\$" 30 "$NG_PID"; then
		: > /tmp/ng.reply
		ktap_diag "netgpu: no answer to '$*'"
		kill -0 "$NG_PID" 2>/dev/null || NG_OK=0
		return 1
	fi
	sed -n "s/^$NG_SEQ //p" "$NG_OUT" | grep -v '^done$' > /tmp/ng.reply
	diag_file netgpu /tmp/ng.reply
}

# ng_stat <ifq|ctx> <counter>: a counter of the last stats answer, -1 if
# it has none.
ng_stat() {
	local v
	v=$(sed -n "s/^stats $1 //p" /tmp/ng.reply | tr ' ' '\n' | sed -n "s/^$2=//p")
	echo "${v:--1}"
}

# ngrx_start <label> <netgpu-rx args...>: netgpu-rx listening in A;
# NGRX_BG its pid (netgpu-rx's own: the signals sent to it reach it).
ngrx_start() {
	local label=$1
	shift
	rm -f /tmp/ngrx.out
	( ex_a $NGRX_PIN "$NETGPU_RX" -i "$IF_A" -q 0 -l $PORT "$@" ) > /tmp/ngrx.out 2>&1 &
	NGRX_BG=$!
	wait_for /tmp/ngrx.out '^netgpu-rx: listening' 60 "$NGRX_BG" ||
		{ diag_file "$label" /tmp/ngrx.out; return 1; }
}

# ngrx_end <label>: wait for netgpu-rx; its exit status, its output to
# the console.
ngrx_end() {
	local rc
	wait "$NGRX_BG"
	rc=$?
	diag_file "$1" /tmp/ngrx.out
	return $rc
}

# ngrx <label> <bytes> <seed> <netgpu-rx args...>: B sends <bytes> of the
# stream of <seed> (to ${TO:-$A_IP}); 0 if B sent it all and netgpu-rx
# got exactly those bytes, all checked, most of them zero copy.
ngrx() {
	local label=$1 bytes=$2 seed=$3 src zc
	shift 3
	ngrx_start "$label" -n "$bytes" -v "$seed" -t 60 "$@" || return 1
	in_b timeout 300 "$NSIM_TCP" send "${TO:-$A_IP}" $PORT "$bytes" "$seed" > /tmp/send.out 2>&1
	src=$?
	ktap_diag "$label: $(cat /tmp/send.out) (exit $src)"
	# A sender that never connected leaves the receiver in accept().
	[ $src -eq 0 ] || kill "$NGRX_BG" 2>/dev/null
	ngrx_end "$label" || return 1
	zc=$(sed -n 's/.* zc=\([0-9]*\) .*/\1/p' /tmp/ngrx.out)
	[ $src -eq 0 ] && grep -q "bytes=$bytes mismatches=0 " /tmp/ngrx.out &&
		[ "${zc:-0}" -gt $((bytes / 2)) ]
}

# ngrx_pools_gone: within 10 s, no destroyed page pool is left in A
# waiting for buffers in flight (a netgpu pool of an unbound queue goes
# once the scrub gave every buffer back).
# ngrx_pools_gone_within <seconds>: the same, quietly, for a shorter time.
ngrx_pools_gone_within() {
	local i=0
	while ! in_a "$NSIM_NETGPU" netlink - > /tmp/ngn.out 2>&1 ||
	      grep -q ' detached yes ' /tmp/ngn.out; do
		i=$((i + 1))
		[ $i -le $(($1 * 2)) ] || return 1
		usleep 500000
	done
}

ngrx_pools_gone() {
	local i=0
	while ! in_a "$NSIM_NETGPU" netlink - > /tmp/ngn.out 2>&1 ||
	      grep -q ' detached yes ' /tmp/ngn.out; do
		i=$((i + 1))
		if [ $((i % 20)) -eq 0 ]; then
			ktap_diag "netgpu: pools after $((i / 2)) s:"
			diag_file netgpu /tmp/ngn.out
			in_a netstat -tan 2>&1 | grep -v LISTEN > /tmp/ngs.out
			diag_file "netgpu: sockets" /tmp/ngs.out
		fi
		if [ $i -gt 240 ]; then
			return 1
		fi
		# Skbs parked on an idle CPU's defer list hold their buffers
		# until that CPU's next NET_RX (case_netgpu_rx_unplug of
		# kunit/netdevsim/run.sh).
		[ $i -ne 10 ] || "$NSIM_TCP" kick > /dev/null 2>&1
		usleep 500000
	done
	[ $i -lt 20 ] || ktap_diag "netgpu: the pools went after $((i / 2)) s"
}

# no_dmabufs: debugfs lists no dma-buf (within 5 s).
no_dmabufs() {
	local i=0
	test -r /sys/kernel/debug/dma_buf/bufinfo || return 1
	while grep -q '^Total [1-9]' /sys/kernel/debug/dma_buf/bufinfo; do
		i=$((i + 1))
		if [ $i -gt 10 ]; then
			diag_file dma_buf /sys/kernel/debug/dma_buf/bufinfo
			return 1
		fi
		usleep 500000
	done
}

# pins_out: FOLL_PIN pins taken and not yet released, in the whole guest
# (netgpu's host regions are its only long-term pinner here).
# Per-CPU deltas folded first; "none" if the counters are missing.
pins_out() {
	echo 1 > /proc/sys/vm/stat_refresh 2>/dev/null
	awk '/^nr_foll_pin_acquired /{ a = $2; n++ } /^nr_foll_pin_released /{ r = $2; n++ }
	     END { if (n == 2) print a - r; else print "none" }' /proc/vmstat
}

# pins_back <count>: pins_out is down to <count> or less within 5 s
# (regions of earlier receivers may still be going, with their pools:
# those are released too, never added).  Kicks the CPUs' defer lists
# after 2 s (see case_netgpu_rx_unplug of kunit/netdevsim/run.sh).
pins_back() {
	local i=0
	[ "$(pins_out)" != none ] || return 1
	while [ "$(pins_out)" -gt "$1" ]; do
		i=$((i + 1))
		[ $i -le 10 ] || return 1
		[ $i -ne 4 ] || "$NSIM_TCP" kick > /dev/null 2>&1
		usleep 500000
	done
}

# ----- netgpu's zero-copy transmit (nsim_netgpu send), B to A -----

# ngtx_recv <bytes> <seed>: nsim_tcp recv listening in A; NGTX_RX its pid
# (nsim_tcp's own).  1, and no receiver left, if it does not listen.
ngtx_recv() {
	rm -f /tmp/recv.out
	( ex_a "$NSIM_TCP" recv $PORT "$1" "$2" ) > /tmp/recv.out 2>&1 &
	NGTX_RX=$!
	wait_for /tmp/recv.out listening 30 "$NGTX_RX" && return 0
	kill "$NGTX_RX" 2>/dev/null
	wait "$NGTX_RX"
	diag_file "nsim_tcp recv" /tmp/recv.out
	return 1
}

# ngtx_recv_end <label> <seconds>: the receiver's exit status once it
# reported (SIGTERM after <seconds> without a report), its output to the
# console.
ngtx_recv_end() {
	local rc
	wait_for /tmp/recv.out '^nsim_tcp: recv bytes=' "$2" "$NGTX_RX" ||
		kill "$NGTX_RX" 2>/dev/null
	wait "$NGTX_RX"
	rc=$?
	diag_file "$1" /tmp/recv.out
	return $rc
}

# ngtx_pins_back <count> <seconds>: pins_back <count>, tried for up to
# <seconds> (5 s a try): a send's region stays pinned until the stack let
# its last skb go.
ngtx_pins_back() {
	local t=5
	while ! pins_back "$1"; do
		[ $t -lt "$2" ] || return 1
		t=$((t + 5))
	done
}

# ngtx_field <name>: a field of the sender's report, -1 without one.
ngtx_field() {
	local v
	v=$(sed -n "s/^nsim_netgpu: send .* $1=\([0-9]*\) .*/\1/p" /tmp/ngtx.out)
	echo "${v:--1}"
}

# ngtx_host <label> <bytes> <seed> <none|all>: nsim_netgpu send in B,
# from a host region of a context on $IF_B, <bytes> of the seeded stream
# to nsim_tcp recv in A: every send completes once, every byte arrives
# right, the region is unpinned afterwards; none or all of the sends
# completed as copied (tx_copied: a device that read the pages itself,
# or a receiver's stack that had to copy B's frags).  Checks of its own
# (ktap_check).
ngtx_host() {
	local l=$1 p0 src rc s c cp
	p0=$(pins_out)
	ktap_check "$l: nsim_tcp listening in A" ngtx_recv "$2" "$3" || return 1
	in_b timeout 300 "$NSIM_NETGPU" send "$IF_B" "$A_IP" $PORT "$2" "$3" \
		host > /tmp/ngtx.out 2>&1
	src=$?
	diag_file "$l" /tmp/ngtx.out
	ngtx_recv_end "$l" 60
	rc=$?
	s=$(ngtx_field sends) c=$(ngtx_field completions) cp=$(ngtx_field copied)
	ktap_check "$l: B sent $2 bytes zero copy from host memory (exit $src)" \
		sh -c "[ $src -eq 0 ] && grep -q '^nsim_netgpu: send bytes=$2 ' /tmp/ngtx.out"
	ktap_check "$l: each of the $s sends completed once ($c completions), none pending or lost" \
		sh -c "[ $s -gt 0 ] && [ $c -eq $s ] && [ $(ngtx_field reaped) -eq $s ] && [ $(ngtx_field pending)/$(ngtx_field lost)/$(ngtx_field unexpected) = 0/0/0 ]"
	if [ "$4" = none ]; then
		ktap_check "$l: no send copied ($cp): the device read the region's pages" \
			test "$cp" -eq 0
	else
		ktap_check "$l: every send completed as copied ($cp of $s): A's stack copied B's frags" \
			test "$cp" -eq "$s"
	fi
	ktap_check "$l: A received $2 bytes, every byte right (exit $rc)" \
		sh -c "[ $rc -eq 0 ] && grep -q '^nsim_tcp: recv bytes=$2 mismatches=0 ' /tmp/recv.out"
	ktap_check "$l: the region unpinned (no more than the $p0 pins out before)" \
		ngtx_pins_back "$p0" 30
	return $ktap_fail
}

# After everything: kmemleak finds nothing (killed receivers, unplugged
# devices and whatever else the cases did included).  The test kernel
# has no automatic scan; objects younger than 5 s are not reported,
# hence the wait; a second scan catches what the first freed.
case_kmemleak() {
	local k=/sys/kernel/debug/kmemleak i
	ktap_check "kmemleak present" test -w $k || return $ktap_fail
	sleep 6
	for i in 1 2; do
		ktap_check "kmemleak scan $i" sh -c "echo scan > $k"
	done
	ktap_check "no page left pinned (FOLL_PIN pins out: none)" pins_back 0
	cat $k > /tmp/kmemleak.out
	ktap_check "kmemleak reports no leak" test ! -s /tmp/kmemleak.out ||
		diag_file kmemleak /tmp/kmemleak.out
	return $ktap_fail
}
