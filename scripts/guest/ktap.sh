# SPDX-License-Identifier: GPL-2.0-only
#
# KTAP for guest scripts of scripts/initramfs-run (installed as
# /lib/ktap.sh; busybox sh).  One suite per boot, in the layout KUnit
# prints, so that `kunit.py parse` reads the console log:
#
#	. /lib/ktap.sh
#	ktap_begin <suite> <number of cases>
#	ktap_case <name> <shell function>	# 0: ok, 77: skip, else: not ok
#	ktap_end				# returns 1 if a case failed
#
# Inside a case, ktap_diag prints a "# " line and ktap_check <what> <cmd...>
# runs a check, printing it and counting a failure, and returns 0 if it
# passed, 1 if not (so "ktap_check ... || diag ..." runs the diagnosis);
# the case returns $ktap_fail (reset for every case).  ktap_skip_reason
# sets the reason of a skip; a case that failed a check is not a skip,
# whatever it returns.

ktap_suite='' ktap_nr=0 ktap_pass=0 ktap_failed=0 ktap_skipped=0 ktap_fail=0
ktap_skip_reason=''

ktap_begin() {
	ktap_suite=$1
	echo "KTAP version 1"
	echo "1..1"
	echo "    KTAP version 1"
	echo "    # Subtest: $1"
	echo "    1..$2"
}

ktap_diag() {
	echo "    # $*"
}

ktap_check() {
	local what=$1
	shift
	if "$@"; then
		echo "    # ok: $what"
		return 0
	fi
	echo "    # FAILED: $what"
	ktap_fail=1
	return 1
}

ktap_case() {
	local name=$1 fn=$2 rc
	ktap_nr=$((ktap_nr + 1))
	ktap_fail=0
	ktap_skip_reason=
	"$fn"
	rc=$?
	if [ $rc -eq 77 ] && [ $ktap_fail -eq 0 ]; then
		ktap_skipped=$((ktap_skipped + 1))
		echo "    ok $ktap_nr $name # SKIP $ktap_skip_reason"
	elif [ $rc -eq 0 ] && [ $ktap_fail -eq 0 ]; then
		ktap_pass=$((ktap_pass + 1))
		echo "    ok $ktap_nr $name"
	else
		ktap_failed=$((ktap_failed + 1))
		echo "    not ok $ktap_nr $name"
	fi
}

ktap_end() {
	echo "# $ktap_suite: pass:$ktap_pass fail:$ktap_failed skip:$ktap_skipped total:$ktap_nr"
	if [ $ktap_failed -eq 0 ]; then
		echo "ok 1 $ktap_suite"
		return 0
	fi
	echo "not ok 1 $ktap_suite"
	return 1
}
