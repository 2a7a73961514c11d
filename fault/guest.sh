# SPDX-License-Identifier: GPL-2.0-only
#
# Guest script of scripts/torture (busybox sh, run as /guest/run by
# scripts/initramfs-run): one torture campaign over netgpu's real
# receive path.  /guest/campaign.env holds the campaign, normalized by
# the host (scripts/torture): C_NAME, C_SEED, C_DURATION, C_PAIRS,
# C_STREAM_BYTES, C_MEMORY, C_HOSTILE, C_HOSTILE_PERMILLE,
# C_REVOKE_PERMILLE, C_UNPLUG_PERMILLE, C_RESET_PERMILLE, C_TX_PERMILLE,
# C_FUZZ_PROCS,
# C_FAULTS (the armed sites) and C_FAULT_<site> ("probability interval
# times space who"), C_REPEAT (the command that repeats the run).
#
# What runs: C_PAIRS pairs of linked netdevsim devices (receiver ngr<i>
# in namespace A, sender ngs<i> in namespace B), each with a worker
# that runs streams one after another until the campaign's time is up:
# netgpu-rx binds ngr<i>'s queue, B sends a seeded stream of a drawn
# size (with send(), or, C_TX_PERMILLE of the streams, with netgpu's
# zero-copy SEND from a host region of a context on ngs<i>: nsim_netgpu
# send), netgpu-rx checks every byte.  Each stream draws its memory, a
# hostile behaviour, and an event (its memory removed, its device
# deleted, its queue restarted) from the worker's generator, seeded
# from the campaign's seed.  Beside them, C_FUZZ_PROCS ABI fuzzers on a
# device of their own, and the fault sites armed in debugfs.
#
# Every 10 s: a progress line and a checkpoint of netgpu's accounting
# (/sys/kernel/debug/netgpu/accounting).  At the end, with the faults
# disarmed: the invariants (accounting, contexts gone, page pools gone,
# pins back, no dma-buf left, kmemleak clean).  The report is KTAP (one
# suite, torture_<name>) with "# report: " lines that scripts/torture
# turns into text and JSON.

. /lib/ktap.sh
# in_a, in_b, new_netns, wait_for, pins_out, pins_back, no_dmabufs,
# ngrx_pools_gone, case_kmemleak...
. /guest/net.sh
. /guest/campaign.env

NSIM_TCP=/guest/nsim_tcp
NSIM_NETGPU=/guest/nsim_netgpu
NETGPU_RX=/guest/netgpu-rx
NETGPU_FUZZ=/guest/netgpu-fuzz
BUS=/sys/bus/netdevsim
NDFS=/sys/kernel/debug/netdevsim
DFS=/sys/kernel/debug
ACCT=$DFS/netgpu/accounting
W=/tmp/torture
FUZZ_ID=300
# A stream that makes no progress for this long is stuck: a finding
# for a nice stream.
RX_TIMEOUT=30
SEND_TIMEOUT=240

mkdir -p $W
: > $W/streams
: > $W/findings

now() { cut -d. -f1 /proc/uptime; }
in_f() { nsenter -t "$PID_F" -n "$@"; }

# pools_gone_in_f: within 10 s, no page pool of namespace F (the
# fuzzers') waits for buffers in flight.
pools_gone_in_f() {
	local i=0
	[ -n "${PID_F:-}" ] || return 0
	while ! in_f "$NSIM_NETGPU" netlink - > /tmp/ngf.out 2>&1 ||
	      grep -q ' detached yes ' /tmp/ngf.out; do
		i=$((i + 1))
		[ $i -le 20 ] || { diag_file netgpu /tmp/ngf.out; return 1; }
		[ $i -ne 4 ] || "$NSIM_TCP" kick > /dev/null 2>&1
		usleep 500000
	done
}

# check <what> <command...>: ktap_check (0 if the check passed, 1 if
# not), for "check ... || finding ...".
check() { ktap_check "$@"; }

finding() {
	echo "at $(($(now) - ${START:-$(now)})) s: $*" >> $W/findings
	ktap_diag "finding: $*"
}

report() { echo "    # report: $*"; }

# pick <comma list>: one of its words, drawn from $RANDOM, in PICKED
# (not printed: a command substitution's subshell would draw from a
# copy of the generator, and the caller's next draw repeat it).
pick() {
	local n=0 k w
	for w in $(echo "$1" | tr , ' '); do n=$((n + 1)); done
	k=$((RANDOM % n))
	for w in $(echo "$1" | tr , ' '); do
		[ $k -eq 0 ] && { PICKED=$w; return; }
		k=$((k - 1))
	done
}

# ----- devices -----

# pair_up <i>: netdevsim devices 100+2i (ngr<i>, namespace A,
# 10.90.<i>.1) and 101+2i (ngs<i>, namespace B, 10.90.<i>.2), linked,
# up, header split on.  Under injected faults a step may fail: retried.
pair_up() {
	local i=$1 r=$((100 + 2 * $1)) s=$((101 + 2 * $1)) ir is try
	for try in 1 2 3 4 5 6 7 8; do
		pair_down "$i"
		echo "$r 1 1" > $BUS/new_device 2>/dev/null || continue
		echo "$s 1 1" > $BUS/new_device 2>/dev/null || continue
		ip link set dev "$(ls $BUS/devices/netdevsim$r/net/)" name ngr$i 2>/dev/null &&
		ip link set dev "$(ls $BUS/devices/netdevsim$s/net/)" name ngs$i 2>/dev/null &&
		ip link set dev ngr$i netns "$PID_A" 2>/dev/null &&
		ip link set dev ngs$i netns "$PID_B" 2>/dev/null &&
		in_a ip addr add 10.90.$i.1/24 dev ngr$i 2>/dev/null &&
		in_b ip addr add 10.90.$i.2/24 dev ngs$i 2>/dev/null &&
		in_a ip link set dev ngr$i up 2>/dev/null &&
		in_b ip link set dev ngs$i up 2>/dev/null || continue
		echo 1 > $NDFS/netdevsim$r/ports/0/rx_split || continue
		ir=$(ifindex in_a ip link show dev ngr$i)
		is=$(ifindex in_b ip link show dev ngs$i)
		echo "5:$ir 6:$is" > $BUS/link_device 2>/dev/null || continue
		return 0
	done
	return 1
}

pair_down() {
	local r=$((100 + 2 * $1)) s=$((101 + 2 * $1))
	[ -d $BUS/devices/netdevsim$r ] && echo $r > $BUS/del_device
	[ -d $BUS/devices/netdevsim$s ] && echo $s > $BUS/del_device
	return 0
}

# ----- faults -----

# fault_arm <site> <probability> <interval> <times> <space> <who>: who
# is "all" (every context), "atomic" (every context, allocations that
# may not sleep: NAPI's, the socket path's GFP_ATOMIC ones) or
# "receivers" (the task filter: the receivers only, make-it-fail).
# times -1 becomes 10^9, so that what is left tells the count.
fault_arm() {
	local d=$DFS/$1 t=$4
	[ -d "$d" ] || { finding "fault site $1 is not in debugfs ($d)"; return 1; }
	[ "$t" = -1 ] && t=1000000000
	echo 0 > "$d/probability"
	echo 0 > "$d/verbose"
	echo "$3" > "$d/interval"
	echo "$t" > "$d/times"
	echo "$5" > "$d/space"
	[ -f "$d/min-order" ] && echo 0 > "$d/min-order"
	case $6 in
	all|atomic) echo N > "$d/task-filter" ;;
	receivers) echo Y > "$d/task-filter"; MIF=1 ;;
	esac
	if [ -f "$d/ignore-gfp-wait" ]; then
		[ "$6" = atomic ] && echo Y > "$d/ignore-gfp-wait" ||
			echo N > "$d/ignore-gfp-wait"
	fi
	echo "$t" > $W/times.$1
	echo "$2" > "$d/probability"
}

faults_on() {
	local site
	MIF=0
	for site in $C_FAULTS; do
		eval "fault_arm $site \$C_FAULT_$site"
	done
}

# Disarmed, and the count of each site's injected faults reported.
faults_off() {
	local site t0 t
	for site in $C_FAULTS; do
		[ -f $W/times.$site ] || continue
		echo 0 > $DFS/$site/probability
		t0=$(cat $W/times.$site)
		t=$(cat $DFS/$site/times)
		echo "$site $((t0 - t))" >> $W/injected
	done
}

all_pools_gone() { ngrx_pools_gone && pools_gone_in_f; }

# ----- accounting -----

# acct_balanced: every context's buffers add up (lost 0) and its user
# references are the descriptors it handed out less those given back
# (urefs = outstanding).  Under traffic a snapshot may fall between
# two steps of one buffer: up to 20 reads, 100 ms apart.
acct_balanced() {
	local n=0
	# No accounting file: nothing can be checked, which is a failure,
	# not a balance.
	[ -r $ACCT ] || { echo "no $ACCT" > $W/acct.bad; return 1; }
	while [ $n -lt 20 ]; do
		awk '/^ctx / { for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
			       if (v["lost"] != 0 || v["urefs"] != v["outstanding"]) bad++ }
		     END { exit bad > 0 }' $ACCT && return 0
		n=$((n + 1))
		usleep 100000
	done
	# cat, not cp: a debugfs file has no size.
	cat $ACCT > $W/acct.bad
	return 1
}

checkpoint() {
	CHECKPOINTS=$((CHECKPOINTS + 1))
	acct_balanced && return 0
	if [ ! -r $ACCT ]; then
		finding "checkpoint $CHECKPOINTS: no $ACCT: the accounting cannot be checked"
		return 1
	fi
	finding "checkpoint $CHECKPOINTS: accounting unbalanced for 2 s: $(grep -v '^contexts' $W/acct.bad | awk '{ for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
		if (v["lost"] != 0 || v["urefs"] != v["outstanding"]) printf "%s; ", $0 }')"
}

# Whether CONFIG_DMA_API_DEBUG tracks mappings: it disables itself for
# good when one of its own allocations fails ("DMA-API: cacheline
# tracking ENOMEM, dma-debug disabled"), which an injected fault may do;
# its list then keeps entries it no longer removes, naming devices that
# may be freed (reading them would be a use-after-free of its own).
dma_debug_on() {
	[ -r $DFS/dma-api/dump ] && [ "$(cat $DFS/dma-api/disabled 2>/dev/null)" = N ]
}

# DMA mappings live (the DMA-API debug list), "none" without it.
dma_maps() {
	dma_debug_on || { echo none; return; }
	wc -l < $DFS/dma-api/dump
}

# maps_by_dev <when>: the DMA-API list's live mappings, counted by
# driver, device, type and direction, to the console.
maps_by_dev() {
	dma_debug_on || return 0
	awk '{ print $1, $2, $3, $10 }' $DFS/dma-api/dump | sort | uniq -c > $W/maps
	diag_file "DMA mappings $1 (count, driver, device, type, direction)" $W/maps
}

# back_to <what> <command> <start>: the command prints <start> again
# within 5 s (mappings and charges of closing queues may still be going).
back_to() {
	local i=0
	while [ "$($2)" != "$3" ]; do
		i=$((i + 1))
		[ $i -le 10 ] || { ktap_diag "$1: $($2), $3 before"; return 1; }
		usleep 500000
	done
}

# ----- streams -----

# fault_times: "<site>=<times left>" of each armed site, for
# injected_since (the count drops by one per injected fault).
fault_times() {
	local site
	for site in $C_FAULTS; do
		echo "$site=$(cat $DFS/$site/times 2>/dev/null)"
	done
}

# injected_since <site>: the armed <site> injected a fault since
# $FAULT_T0 (fault_times at the start of the stream).  Any process's
# fault counts (the count is the site's), so this shows only that a
# fault could have been this one; none injected shows it was not.
injected_since() {
	local t0 t
	t0=$(echo "$FAULT_T0" | sed -n "s/^$1=//p")
	t=$(cat $DFS/$1/times 2>/dev/null)
	[ -n "$t0" ] && [ -n "$t" ] && [ "$t" -lt "$t0" ]
}

# fault_who <site>: who the site was armed for (its C_FAULT_<site>'s
# fifth field: all, atomic or receivers).
fault_who() {
	eval "echo \$C_FAULT_$1" | awk '{ print $5 }'
}

# excused <error line>: an error one of the campaign's armed faults
# injected since the stream began ($FAULT_T0) could have caused:
# ENOMEM of a call that allocates (not the socket path's reads: they
# allocate nothing that can fail them) when failslab or fail_page_alloc,
# armed for every context or for the receivers' task filter (MIF=1: the
# erring process is such a receiver), injected; ENOMEM of the calls that
# map memory for the device when fail_netgpu_dma_map injected;
# EADDRINUSE of listen() under failslab; ENOSPC of memfd_create() under
# the task filter.  An ENOMEM while no site that can cause it injected
# anything is the code's own (tests.md 1.3: it was forgiven for any
# call of a receiver under the task filter, injected or not, and for
# the mapping calls whenever fail_netgpu_dma_map was armed).
excused() {
	local site
	case $1 in
	*": Cannot allocate memory") ;;
	# inet_csk_get_port() reports a bind bucket it could not allocate
	# (GFP_ATOMIC) as a port in use.
	"listen: Address already in use")
		case " $C_FAULTS " in
		*" failslab "*) return 0 ;;
		esac
		return 1 ;;
	# shmem reports an inode it could not allocate as ENOSPC.
	"memfd: No space left on device")
		[ "$MIF" = 1 ]
		return ;;
	*) return 1 ;;
	esac
	case $1 in
	NETGPU_SOCKQ_IOCTL_RECV:*|recv:*) return 1 ;;
	esac
	for site in $C_FAULTS; do
		case $site/$(fault_who $site) in
		# "atomic" fails only allocations that may not sleep, which
		# no call of a receiver's setup makes.
		failslab/all|fail_page_alloc/all) ;;
		failslab/receivers|fail_page_alloc/receivers)
			[ "$MIF" = 1 ] || continue ;;
		fail_netgpu_dma_map/receivers)
			[ "$MIF" = 1 ] || continue
			case $1 in
			NETGPU_CTX_IOCTL_ATTACH_REGION:*|NETGPU_CTX_IOCTL_ATTACH_DEV:*|NETGPU_CTX_IOCTL_BIND_QUEUE:*) ;;
			*) continue ;;
			esac ;;
		fail_netgpu_dma_map/*)
			case $1 in
			NETGPU_CTX_IOCTL_ATTACH_REGION:*|NETGPU_CTX_IOCTL_ATTACH_DEV:*|NETGPU_CTX_IOCTL_BIND_QUEUE:*) ;;
			*) continue ;;
			esac ;;
		*) continue ;;
		esac
		injected_since $site && return 0
	done
	return 1
}

# tx_faulted <sender output>: netgpu's sender stopped by an injected
# fail_netgpu_tx (a SEND failing with ENODEV: no region is removed in a
# TX stream) while that site is armed.
tx_faulted() {
	case " $C_FAULTS " in
	*" fail_netgpu_tx "*) grep -q '^send: ENODEV after ' "$1" ;;
	*) return 1 ;;
	esac
}

# tx_setup_excused <sender output>: netgpu's sender failed to attach its
# region with ENOMEM (mapping it for the device) while
# fail_netgpu_dma_map is armed, as excused() allows a receiver.
tx_setup_excused() {
	# The receiver's task filter (MIF) is not the sender's.
	grep -q '^ATTACH_REGION [0-9]*: ENOMEM$' "$1" &&
		( MIF=0; excused "NETGPU_CTX_IOCTL_ATTACH_REGION: Cannot allocate memory" )
}

# record: the stream's line (stream()'s variables), to $W/streams and
# the console.
record() {
	local line

	line=$(echo "stream $i.$k seed $sseed bytes $bytes mem $mem hostile $hostile event $ev event_rc ${evrc:--} sender $sender sent $src tx_sends ${txs:-0} tx_completions ${txc:-0} rx_exit $rrc got ${got:-0} mismatches ${mm:-0} zc ${zc:-0} result $res errno ${err:-none}" |
	       tr -s ' ')
	echo "$line" >> $W/streams
	ktap_diag "$line"
}

# stream <i> <k>: one stream on pair i, its parameters drawn from the
# worker's $RANDOM; one line in $W/streams.
stream() {
	local i=$1 k=$2 port=$((20000 + $1 * 1000 + $2 % 1000)) bytes mem hostile ev r
	local sseed args rpid spid src rrc out=$W/rx.$1 tx=$W/tx.$1 at res err got mm zc
	local dev=$((100 + 2 * $1)) cpid unplugged=0 evrc=- sender=tcp txs txc tl
	local FAULT_T0
	sseed=$(( (C_SEED * 7919 + i * 104729 + k) % 2147483647 + 1 ))
	bytes=$(( C_STREAM_BYTES / 4 + (RANDOM * 32768 + RANDOM) % (C_STREAM_BYTES * 3 / 4 + 1) ))
	pick "$C_MEMORY"
	mem=$PICKED
	hostile=nice
	if [ $((RANDOM % 1000)) -lt "$C_HOSTILE_PERMILLE" ]; then
		pick "$C_HOSTILE"
		hostile=$PICKED
	fi
	ev=none
	r=$((RANDOM % 1000))
	# A stream that is killed meets nothing else.
	if [ $hostile = kill ]; then
		:
	elif [ $r -lt "$C_REVOKE_PERMILLE" ]; then
		ev=revoke
	elif [ $r -lt $((C_REVOKE_PERMILLE + C_UNPLUG_PERMILLE)) ]; then
		ev=unplug
	elif [ $r -lt $((C_REVOKE_PERMILLE + C_UNPLUG_PERMILLE + C_RESET_PERMILLE)) ]; then
		ev=reset
	fi
	# Where the event strikes: bytes for a removal, else milliseconds
	# after the bind.
	# The sender is not drawn: C_TX_PERMILLE of each worker's streams,
	# spread evenly from its first streams on (pairs out of phase), so
	# that a minute of smoke sends with netgpu whatever the generator
	# gives (busybox's, seeded 17 and 18, drew its first TX stream only
	# at the fifth and ninth: a run of refused setups then reached no
	# SEND at all).  No $RANDOM taken here: campaigns without TX draw as
	# they always did.
	[ $(((k + i) * ${C_TX_PERMILLE:-0} / 1000)) -gt \
	  $(((k + i - 1) * ${C_TX_PERMILLE:-0} / 1000)) ] && sender=netgpu
	at=$((100 + RANDOM % 1500))
	[ $ev = revoke ] && at=$((bytes / 8 + (RANDOM * 32768 + RANDOM) % (bytes / 2)))

	args="-i ngr$i -q 0 -l $port -n $bytes -v $sseed -m $mem -s 4"
	[ "$mem" = host ] || args="$args --copy-mib 1"
	case $hostile in
	hold) args="$args -t 5 --hostile hold" ;;
	garbage|double) args="$args -t $RX_TIMEOUT --hostile $hostile" ;;
	*) args="$args -t $RX_TIMEOUT" ;;
	esac
	[ $ev = revoke ] && args="$args --remove-region $at"
	# Under the task filter from before it registers anything; its
	# output through a pipe, which takes no slab allocation: a write to
	# tmpfs under the filter could lose the lines the result is read
	# from.
	[ "$MIF" = 1 ] && args="$args --make-it-fail"

	# The armed sites' counts before the receiver and the sender
	# start: what excused() may blame.
	FAULT_T0=$(fault_times)
	rm -f $W/fifo.$i
	mkfifo $W/fifo.$i
	cat $W/fifo.$i > $out &
	cpid=$!
	nsenter -t "$PID_A" -n $NETGPU_RX $args > $W/fifo.$i 2>&1 &
	rpid=$!
	if ! wait_for $out '^netgpu-rx: listening' 30 $rpid; then
		# Not listening after 30 s and still there: stuck.
		kill -KILL $rpid 2>/dev/null
		wait $rpid
		rrc=$?
		wait $cpid
		res=refused
		err=$(sed -n 's/^netgpu-rx: \(.*\): \(.*\)$/\1: \2/p' $out | head -n 1)
		excused "$err" || res=failed
		src=-
		record
		[ $res = refused ] || finding "stream $i.$k: netgpu-rx did not listen: $(head -n 3 $out | tr '\n' ' ')"
		return
	fi
	if [ $sender = netgpu ]; then
		nsenter -t "$PID_B" -n timeout $SEND_TIMEOUT $NSIM_NETGPU send ngs$i 10.90.$i.1 $port $bytes $sseed host > $tx 2>&1 &
	else
		nsenter -t "$PID_B" -n timeout $SEND_TIMEOUT $NSIM_TCP send 10.90.$i.1 $port $bytes $sseed > $tx 2>&1 &
	fi
	spid=$!
	case $hostile/$ev in
	kill/*)
		wait_for $out '^netgpu-rx: bound' 30 $rpid &&
			{ usleep $((at * 1000)); kill -KILL $rpid 2>/dev/null; } ;;
	*/unplug)
		wait_for $out '^netgpu-rx: bound' 30 $rpid &&
			{ usleep $((at * 1000)); echo $dev > $BUS/del_device && unplugged=1
			  # Nothing more arrives: a receiver still waiting
			  # after 5 s is told to stop (SIGTERM: it reports).
			  wait_for $out '^netgpu-rx: bytes=' 5 $rpid ||
				kill -TERM $rpid 2>/dev/null; } ;;
	*/reset)
		# The restart's status goes into the stream's line: only a
		# restart that happened makes an ok_reset.
		wait_for $out '^netgpu-rx: bound' 30 $rpid &&
			{ usleep $((at * 1000)); echo "0 1" 2>/dev/null > $NDFS/netdevsim$dev/ports/0/queue_reset; evrc=$?; } ;;
	esac
	# The receiver ends on its own: the stream whole, a stall or no
	# connection for its timeout, an error, or killed.  The sender then
	# has 10 s: it may wait for a close that never comes (the receiver
	# or its device gone, or the receiver's RST dropped by an injected
	# fault: a reset is never sent again).
	wait $rpid
	rrc=$?
	r=0
	while kill -0 $spid 2>/dev/null && [ $r -lt 20 ]; do
		usleep 500000
		r=$((r + 1))
	done
	kill $spid 2>/dev/null
	wait $spid
	src=$?
	wait $cpid
	got=$(sed -n 's/^netgpu-rx: bytes=\([0-9]*\) .*/\1/p' $out)
	mm=$(sed -n 's/.* mismatches=\([0-9]*\) .*/\1/p' $out)
	zc=$(sed -n 's/.* zc=\([0-9]*\) .*/\1/p' $out)
	err=$(grep -v '^netgpu-rx: \(bytes=\|listening\|bound\|removed\|stalled\|user references\)' $out |
	      sed -n 's/^netgpu-rx: \(.*\): \(.*\)$/\1: \2/p' | head -n 1)
	# netgpu's sender: its sends and their completions, as it reported
	# them (no line: it died or was stopped before).
	tl=$(grep '^nsim_netgpu: send bytes=' $tx)
	txs=$(echo "$tl" | sed -n 's/.* sends=\([0-9]*\) .*/\1/p')
	txc=$(echo "$tl" | sed -n 's/.* completions=\([0-9]*\) .*/\1/p')
	res=ok
	if [ -n "$tl" ] && ! echo "$tl" | grep -q ' lost=0 .* unexpected=0 '; then
		# A completion the ring had no room for, or one naming no
		# send: never, whatever the stream met.
		res=tx_lost
		finding "stream $i.$k (seed $sseed): netgpu's sender: $tl"
	elif [ "${mm:-0}" -gt 0 ]; then
		res=corrupt
		finding "stream $i.$k (seed $sseed): ${mm} bad bytes: $(grep bytes= $out)"
	elif grep -q '^netgpu-rx: user references' $out; then
		res=leak
		finding "stream $i.$k (seed $sseed): $(grep '^netgpu-rx: user references' $out)"
	elif [ $hostile = kill ] && [ $rrc -eq 137 ]; then
		# Only a receiver that died of the SIGKILL was killed; one that
		# ended before it is judged as any other below.
		res=killed
	elif [ $ev = unplug ] && [ "$unplugged" = 1 ] && [ $rrc -eq 1 ] &&
	     [ "${got:-0}" -lt "$bytes" ] && { [ -z "$err" ] || excused "$err"; }; then
		# Its device deleted mid-stream: nothing more arrives, the
		# receiver stops without progress or on the SIGTERM above
		# (exit 1, the stream short, no error but an excused one).
		res=unplugged
	elif [ $hostile = hold ]; then
		res=held
		grep -q 'stalled as expected' $out || [ "$rrc" -eq 0 ] || res=failed
	elif [ $rrc -eq 0 ] && [ "$got" = "$bytes" ] && [ $sender = netgpu ] &&
	     [ $src -ne 0 ]; then
		# Every byte arrived: netgpu's sender must have seen every
		# send complete once (its exit 0).
		res=tx_incomplete
		finding "stream $i.$k (seed $sseed): every byte arrived, but netgpu's sender exited $src: $(tr '\n' ' ' < $tx)"
	elif [ $rrc -eq 0 ] && [ "$got" = "$bytes" ]; then
		# Every byte arrived and was checked, whatever became of
		# the sender's wait for the close.
		res=ok
	elif [ $sender = netgpu ] && tx_faulted $tx; then
		# fail_netgpu_tx ended the send (ENODEV, nothing of that
		# SEND taken): the receiver gets a part of the stream, all
		# of it right, and every send accepted before completed.
		if [ -n "$tl" ] && [ "$txs" = "$txc" ] &&
		   echo "$tl" | grep -q ' pending=0 '; then
			res=tx_faulted
		else
			res=tx_incomplete
			finding "stream $i.$k (seed $sseed): netgpu's sender ended by fail_netgpu_tx with sends not completed: $(tr '\n' ' ' < $tx)"
		fi
	elif [ -n "$err" ] && excused "$err"; then
		res=refused
	elif [ $sender = netgpu ] && [ "${got:-0}" -eq 0 ] &&
	     tx_setup_excused $tx; then
		# netgpu's sender could not set up (its region's mapping for
		# the device under fail_netgpu_dma_map): it never connected,
		# the receiver waited for nothing.
		res=tx_refused
	else
		res=failed
	fi
	if [ $res = failed ]; then
		finding "stream $i.$k (seed $sseed, $mem, $hostile, event $ev, sender $sender): receiver exit $rrc, sender exit $src, $(grep -v '^netgpu-rx: listening' $out | tr '\n' ' ') / $(tr '\n' ' ' < $tx)"
	fi
	if [ $ev = reset ] && [ $res = ok ]; then
		# The write failed (an injected fault; netdevsim refuses a
		# restart of a queue that is down): no restart under the
		# stream, not an ok_reset.
		[ "$evrc" = 0 ] && res=ok_reset || res=ok_reset_refused
	fi
	[ $ev = revoke ] && [ $res = ok ] && res=ok_revoked
	record
	if [ $ev = unplug ]; then
		pair_up "$i" || finding "pair $i: could not be created again after its unplug"
	fi
}

# A worker's streams: until the campaign's time is up, or exactly
# C_STREAMS of them (streams = N: what each stream is, and so the
# operations, follow from the seed alone, however fast the host).
more_streams() {
	if [ "${C_STREAMS:-0}" -gt 0 ]; then
		[ "$1" -lt "$C_STREAMS" ]
	else
		[ "$(now)" -lt "$END" ]
	fi
}

worker() {
	local i=$1 k=0
	RANDOM=$((C_SEED * 16 + i + 1))
	rm -f $W/worker-$i.done
	while more_streams $k; do
		k=$((k + 1))
		stream "$i" "$k"
	done
	touch $W/worker-$i.done
}

# Whether a worker is still making streams (by the file each leaves at
# its end: kill -0 would also find one exited but not yet reaped).
workers_alive() {
	local i
	for i in $(seq 0 $((C_PAIRS - 1))); do
		[ -f $W/worker-$i.done ] || return 0
	done
	return 1
}

fuzzer() {
	nsenter -t "$PID_F" -n timeout $((C_DURATION + 120)) $NETGPU_FUZZ \
		-s "$C_SEED" -t "$C_DURATION" -p "$C_FUZZ_PROCS" -i ngf0 -q 0 > $W/fuzz.out 2>&1
	echo $? > $W/fuzz.rc
}

# ----- cases -----

case_setup() {
	ktap_check "netdevsim bus present" test -d $BUS
	[ $ktap_fail -eq 0 ] || return 1
	echo clear > $DFS/kmemleak 2>/dev/null
	MAPS0=$(dma_maps)
	PID_A=$(new_netns)
	PID_B=$(new_netns)
	in_a ip link set dev lo up
	in_b ip link set dev lo up
	exec 5< /proc/$PID_A/ns/net
	exec 6< /proc/$PID_B/ns/net
	for i in $(seq 0 $((C_PAIRS - 1))); do
		ktap_check "pair $i up (ngr$i, ngs$i)" pair_up "$i"
	done
	if [ "$C_FUZZ_PROCS" -gt 0 ]; then
		echo "$FUZZ_ID 1 1" > $BUS/new_device
		ip link set dev "$(ls $BUS/devices/netdevsim$FUZZ_ID/net/)" name ngf0
		# A namespace of their own: the fuzzers listen on ports of
		# their choosing.
		PID_F=$(new_netns)
		ip link set dev ngf0 netns "$PID_F"
		in_f ip link set dev ngf0 up
		ktap_check "fuzzers' device ngf0 in namespace F" quiet in_f ip link show dev ngf0
	fi
	ktap_check "ping over pair 0" quiet in_b ping -c 2 -W 5 10.90.0.1
	PINS0=$(pins_out)
	ktap_diag "before the campaign: FOLL_PIN pins out $PINS0, DMA mappings $MAPS0 (before the devices)"
	# Each invariant's source: an invariant that cannot be read is a
	# failure, never a silent pass (review-2 tests.md 1.3).
	ktap_check "netgpu's accounting readable ($ACCT)" test -r $ACCT
	ktap_check "FOLL_PIN counters in /proc/vmstat (pins out: $PINS0)" test "$PINS0" != none
	ktap_check "the DMA-API debug list readable and on ($DFS/dma-api: CONFIG_DMA_API_DEBUG)" \
		test "$MAPS0" != none
	ktap_check "dma-buf debugfs readable" test -r $DFS/dma_buf/bufinfo
	ktap_check "kmemleak present" test -w $DFS/kmemleak
	return $ktap_fail
}

progress() {
	local t=$(($(now) - START))
	awk -v t=$t -v d=$C_DURATION -v f=$(wc -l < $W/findings) -v c=$CHECKPOINTS '
		{ n++; for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
		  res[v["result"]]++; got += v["got"] }
		END { printf "    # torture: %d/%d s streams %d (", t, d, n
		      s = ""; for (k in res) { printf "%s%s %d", s, k, res[k]; s = ", " }
		      printf ") bytes %d checkpoints %d findings %d\n", got, c, f }' $W/streams
}

case_traffic() {
	local i
	START=$(now)
	END=$((START + C_DURATION))
	CHECKPOINTS=0
	ktap_diag "campaign $C_NAME seed $C_SEED duration $C_DURATION s: $C_PAIRS pairs,$([ "${C_STREAMS:-0}" -gt 0 ] && echo " $C_STREAMS streams per pair,") streams up to $C_STREAM_BYTES bytes, faults: ${C_FAULTS:-none}"
	faults_on
	[ "$C_FUZZ_PROCS" -gt 0 ] && { fuzzer & FUZZ_BG=$!; }
	WORKERS=
	for i in $(seq 0 $((C_PAIRS - 1))); do
		worker "$i" &
		WORKERS="$WORKERS $!"
	done
	# Progress and a checkpoint every 10 s of guest time, on the mark,
	# until the time is up (or, with C_STREAMS, the workers are done).
	next=$START
	while if [ "${C_STREAMS:-0}" -gt 0 ]; then workers_alive
	      else [ "$(now)" -lt "$END" ]; fi; do
		next=$((next + 10))
		while [ "$(now)" -lt "$next" ]; do sleep 1; done
		progress
		checkpoint
	done
	ktap_diag "time is up: waiting for the streams under way"
	for i in $WORKERS; do wait "$i"; done
	[ -n "${FUZZ_BG:-}" ] && wait "$FUZZ_BG"
	faults_off
	progress
	checkpoint
	maps_by_dev "after the traffic and the fuzzers"
	if [ "$C_FUZZ_PROCS" -gt 0 ]; then
		diag_file netgpu-fuzz $W/fuzz.out
		check "netgpu-fuzz exited 0 ($(cat $W/fuzz.rc))" test "$(cat $W/fuzz.rc)" = 0 ||
			finding "netgpu-fuzz exited $(cat $W/fuzz.rc)"
	fi
	for i in $(seq 0 $((C_PAIRS - 1))); do
		ktap_check "streams ran on pair $i ($(grep -c "^stream $i\." $W/streams))" \
			grep -q "^stream $i\." $W/streams
	done
	ktap_check "no finding during the traffic" test ! -s $W/findings
	return $ktap_fail
}

case_invariants() {
	local i=0
	# Every context gone once its owners are (revocations and scrubs
	# may still be queued).  No accounting file fails the check.
	while [ -r $ACCT ] && ! grep -q '^contexts 0$' $ACCT; do
		i=$((i + 1))
		[ $i -le 40 ] || break
		[ $i -ne 10 ] || "$NSIM_TCP" kick > /dev/null 2>&1
		usleep 250000
	done
	check "accounting: no context left ($ACCT)" grep -q '^contexts 0$' $ACCT ||
		{ [ -r $ACCT ] && diag_file accounting $ACCT; finding "contexts left after the campaign (or no $ACCT)"; }
	check "no page pool left waiting for buffers in A" ngrx_pools_gone ||
		finding "page pools still in flight after the campaign"
	check "no page pool left waiting for buffers in F (the fuzzers')" pools_gone_in_f ||
		finding "page pools of the fuzzers' device still in flight after the campaign"
	check "pins back to $PINS0" pins_back "$PINS0" ||
		finding "FOLL_PIN pins out: $(pins_out), $PINS0 before ($(grep -E '^nr_foll_pin_(acquired|released) ' /proc/vmstat | tr '\n' ' '))"
	check "no dma-buf left (exporters hold no attachment)" no_dmabufs ||
		finding "dma-bufs left after the campaign"
	# The devices' own page pools keep pages mapped while they live.
	maps_by_dev "while the devices live"
	for i in $(seq 0 $((C_PAIRS - 1))); do pair_down "$i"; done
	[ -d $BUS/devices/netdevsim$FUZZ_ID ] && echo $FUZZ_ID > $BUS/del_device
	# A pool still waiting for pages once its device is gone keeps
	# their DMA mappings past the device (6.12's page_pool holds no
	# reference on it): reading the DMA-API list would then touch the
	# freed device.  So the pools first, the mappings only if none.
	if ! check "no page pool left waiting for buffers once the devices are gone" \
		all_pools_gone; then
		finding "page pools left with buffers in flight after their devices went"
	elif [ "$MAPS0" = none ]; then
		check "DMA mappings: the DMA-API debug list was readable before the campaign" false
		finding "DMA mappings not checked: no DMA-API debug list ($DFS/dma-api)"
	elif ! dma_debug_on; then
		# dma-debug turned itself off after one of its own allocations
		# failed under an injected fault: its list is stale from then
		# on.  Reported (not a silent pass); host regions are unpinned
		# only once unmapped, so the pins above stand for their
		# mappings.
		ktap_diag "DMA mappings not checked: dma-debug disabled itself ($(dmesg | grep -m 1 'dma-debug disabled'))"
		echo 1 > $W/dma_unchecked
	else
		check "DMA mappings back to $MAPS0 once the devices are gone" \
			back_to "DMA mappings" dma_maps "$MAPS0" ||
			finding "DMA mappings: $(dma_maps), $MAPS0 before the campaign"
	fi
	kill "$PID_A" "$PID_B" ${PID_F:-}
	return $ktap_fail
}

case_leaks() {
	case_kmemleak ||
		finding "after kmemleak's scans: $(grep -c . /tmp/kmemleak.out 2>/dev/null || echo no) lines of leak report, $(pins_out) FOLL_PIN pins out"
	return $ktap_fail
}

# The report, for scripts/torture: one line per kind of thing.
final_report() {
	report "campaign $C_NAME seed $C_SEED duration $C_DURATION"
	report "repeat $C_REPEAT"
	awk '{ for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
	       n++; res[v["result"]]++; kind[v["mem"] "/" v["hostile"] "/" v["event"]]++
	       if (v["sender"] == "netgpu") { tx++; txs += v["tx_sends"]; txc += v["tx_completions"] }
	       got += v["got"]; if (v["mismatches"] == 0) ver += v["got"]; zc += v["zc"]
	       if (v["errno"] != "none") { e = $0; sub(/.* errno /, "", e); err[e]++ } }
	     END { printf "    # report: streams %d\n", n
		   for (k in res) printf "    # report: result %s %d\n", k, res[k]
		   for (k in kind) printf "    # report: operation %s %d\n", k, kind[k]
		   for (k in err) printf "    # report: errno %s = %d\n", k, err[k]
		   printf "    # report: bytes moved %d verified %d zero_copy %d\n", got, ver, zc
		   printf "    # report: operation tx_streams %d\n", tx
		   printf "    # report: operation tx_sends %d\n", txs
		   printf "    # report: operation tx_completions %d\n", txc }' $W/streams
	[ -f $W/fuzz.out ] && report "operation fuzz $(sed -n 's/^netgpu-fuzz: done //p' $W/fuzz.out)"
	[ -f $W/injected ] && while read -r site n; do report "fault $site $n"; done < $W/injected
	[ -f $W/dma_unchecked ] && report "unchecked DMA mappings: dma-debug disabled itself under an injected fault"
	report "checkpoints $CHECKPOINTS"
	report "findings $(wc -l < $W/findings)"
	while read -r l; do report "finding $l"; done < $W/findings
}

# One case per armed fault site: ok if the campaign injected faults
# there.  A site never reached fails (a fault point cut off from the
# code must not pass), unless the campaign declares that it may be
# (its may_miss key, C_MAY_MISS): then the case is skipped, saying so.
case_fault_site() {
	local n
	n=$(sed -n "s/^$SITE //p" $W/injected 2>/dev/null)
	ktap_diag "$SITE: ${n:-no} faults injected ($(eval echo \$C_FAULT_$SITE))"
	[ "${n:-0}" -gt 0 ] && return 0
	case " ${C_MAY_MISS:-} " in
	*" $SITE "*)
		ktap_skip_reason="no fault injected at $SITE (may_miss in the campaign)"
		return 77 ;;
	esac
	ktap_diag "FAILED: no fault injected at $SITE, and the campaign's may_miss does not name it"
	return 1
}

set -- $C_FAULTS
ktap_begin "torture_$C_NAME" $((4 + $#))
ktap_case "torture_${C_NAME}_setup" case_setup
if [ $ktap_failed -eq 0 ]; then
	ktap_case "torture_${C_NAME}_traffic" case_traffic
	for SITE in $C_FAULTS; do
		ktap_case "torture_${C_NAME}_fault_$SITE" case_fault_site
	done
	ktap_case "torture_${C_NAME}_invariants" case_invariants
	ktap_case "torture_${C_NAME}_kmemleak" case_leaks
fi
final_report
ktap_end
