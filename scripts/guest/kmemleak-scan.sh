#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest script of scripts/kmemleak-boot (scripts/initramfs-run runs it as
# /guest/run, busybox sh).  The built-in KUnit suites have run before
# /init.  The test kernel has no automatic kmemleak scan (it stalls a
# TCG guest for minutes in the middle of the suites), so scan now, once
# the suites' objects are old enough to be reported (kmemleak skips
# objects younger than 5 s), and print the report on the console: every
# leak is an "unreferenced object" there, and the scan itself logs
# "kmemleak: N new suspected memory leaks".

k=/sys/kernel/debug/kmemleak
if [ ! -w $k ]; then
	echo "kmemleak-scan: no $k (CONFIG_DEBUG_KMEMLEAK, debugfs)"
	exit 1
fi
sleep 6
# A second scan catches objects whose last reference went during the
# first.  A write fails if kmemleak turned itself off (kmemleak=off, or
# its own allocation failure): then nothing would be reported.
for i in 1 2; do
	echo scan > $k || { echo "kmemleak-scan: scan $i failed"; exit 1; }
done
echo "kmemleak-scan: report begin"
cat $k
echo "kmemleak-scan: report end"
