# SPDX-License-Identifier: GPL-2.0-only
#
#   sh /guest/lava-results <guest output>
#
# Guest side of a torture shard run as a LAVA job (scripts/lava-boot
# installs it as /guest/lava-results; busybox sh and awk): the campaign's
# KTAP, as fault/guest.sh printed it and the test definition saved it,
# turned into LAVA test cases with lava-test-case (which the test shell
# puts on the PATH):
#
#   <case>                      pass, fail or skip, one per KTAP case
#                               (setup, traffic, one per armed fault
#                               site, invariants, kmemleak)
#   <case>.<n>_<check>          pass or fail, one per check of the case
#                               ("# ok: ..." / "# FAILED: ..."): the
#                               invariants, each on its own
#   torture_<name>              the suite: pass or fail
#   report.<figure>             pass, with the figure as a measurement:
#                               streams, results, operations, bytes,
#                               faults injected by site, checkpoints;
#                               report.findings fails if there are any
#   guest_exit                  pass if the guest script exited 0
#
# The KTAP itself stays in the job's log (the console): the host rebuilds
# report.json from it (scripts/lava-boot, scripts/torture-json), so the
# test cases here are LAVA's own view, not the source of the report.
# A missing suite line (the guest died mid-run) leaves the suite case
# out: LAVA reports the job incomplete.

out=${1:-/tmp/torture.out}
cases=/tmp/lava-results.cases
if [ ! -r "$out" ]; then
	lava-test-case guest_exit --result fail
	exit 0
fi

tr -d '\r' < "$out" | awk '
	function slug(s) {
		gsub(/[^A-Za-z0-9_.-]+/, "_", s)
		sub(/^_+/, "", s)
		sub(/_+$/, "", s)
		return substr(s, 1, 60)
	}
	/^KTAP version 1$/ { started = 1 }
	!started { next }
	/^    # (ok|FAILED): / {
		r = ($2 == "ok:") ? "pass" : "fail"
		w = $0
		sub(/^    # (ok|FAILED): /, "", w)
		nc++
		check[nc] = slug(w)
		cres[nc] = r
		next
	}
	/^    (ok|not ok) [0-9]+ / {
		line = $0
		sub(/^    /, "", line)
		r = "pass"
		if (line ~ /^not ok/) { r = "fail"; sub(/^not ok [0-9]+ /, "", line) }
		else sub(/^ok [0-9]+ /, "", line)
		if (line ~ / # SKIP/) r = "skip"
		name = line
		sub(/ .*/, "", name)
		for (j = 1; j <= nc; j++)
			printf "%s.%02d_%s %s\n", name, j, check[j], cres[j]
		nc = 0
		print name, r
		next
	}
	/^(ok|not ok) 1 / {
		r = ($1 == "ok") ? "pass" : "fail"
		name = $0
		sub(/^(ok|not ok) 1 /, "", name)
		print slug(name), r
		next
	}
	/^    # report: / {
		w = $0
		sub(/^    # report: /, "", w)
		n = split(w, f, " ")
		if (f[1] == "streams" || f[1] == "checkpoints")
			print "report." f[1], "pass", f[2], f[1]
		else if (f[1] == "findings")
			print "report.findings", (f[2] == 0 ? "pass" : "fail"), f[2], "findings"
		else if (f[1] == "result" && n == 3)
			print "report.result." slug(f[2]), "pass", f[3], "streams"
		else if (f[1] == "operation" && f[2] == "fuzz") {
			for (j = 3; j <= n; j++)
				if (split(f[j], kv, "=") == 2 && kv[1] !~ /^(procs|secs|seed)$/)
					print "report.operation.fuzz_" slug(kv[1]), "pass", kv[2], "operations"
		} else if (f[1] == "operation" && n == 3)
			print "report.operation." slug(f[2]), "pass", f[3], "operations"
		else if (f[1] == "fault" && n == 3)
			print "report.fault." slug(f[2]), "pass", f[3], "faults"
		else if (f[1] == "bytes" && n == 7) {
			print "report.bytes.moved", "pass", f[3], "bytes"
			print "report.bytes.verified", "pass", f[5], "bytes"
			print "report.bytes.zero_copy", "pass", f[7], "bytes"
		}
		next
	}
	/^initramfs-run: guest exit [0-9]+$/ {
		print "guest_exit", ($4 == 0 ? "pass" : "fail")
	}' > "$cases"

while read -r id result measurement units; do
	if [ -n "$measurement" ]; then
		lava-test-case "$id" --result "$result" \
			--measurement "$measurement" --units "$units"
	else
		lava-test-case "$id" --result "$result"
	fi
done < "$cases"
exit 0
