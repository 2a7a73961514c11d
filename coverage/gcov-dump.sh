#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest script of `make coverage` (scripts/initramfs-run runs it as
# /guest/run, busybox sh).  The built-in KUnit suites have run before
# /init; copy every .gcda file the kernel exposes under
# /sys/kernel/debug/gcov (seq_file: read with cat, not cp, as
# Documentation/dev-tools/gcov.rst says) and print them on the console
# as a gzipped tar in base64 between two marker lines.

# Keep kernel messages out of the data.
echo 1 > /proc/sys/kernel/printk

gcov=/sys/kernel/debug/gcov
if [ ! -d $gcov ]; then
	echo "gcov-dump: no $gcov (CONFIG_GCOV_KERNEL, debugfs)"
	exit 1
fi
mkdir -p /tmp/gcov
cd $gcov || exit 1
n=0
for f in $(find . -name '*.gcda'); do
	mkdir -p "/tmp/gcov/${f%/*}"
	cat "$f" > "/tmp/gcov/$f" || exit 1
	n=$((n + 1))
done
echo "gcov-dump: $n .gcda files"
[ $n -gt 0 ] || exit 1
echo "GCOV-DUMP-BEGIN"
tar -C /tmp/gcov -cf - . | gzip -9 | base64
echo "GCOV-DUMP-END"
