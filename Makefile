# SPDX-License-Identifier: GPL-2.0-only
#
# netgpu: `make kunit` is the main job, `make check` the test command.
# See README.md.

NETGPU_CACHE	?= $(HOME)/.cache/netgpu
KSRC_TAR	?= /usr/src/linux-source-6.12.tar.xz
PRISTINE	:= $(NETGPU_CACHE)/linux-source-6.12
SRC		:= $(NETGPU_CACHE)/src
BUILD		:= $(NETGPU_CACHE)/build-kunit
BENCH_BUILD	:= $(NETGPU_CACHE)/build-bench
OUT		:= $(CURDIR)/build
# Suites to run; kunit.py's --filter_glob (empty: all).
FILTER		?=
# The fault-injection boot options every suite relies on (patches/0001).
# netgpu's fault points get their boot parameter too, unarmed
# (probability 0): the parser runs in every boot, the suites arm them.
FAULT_ARGS	:= failslab.ignore_gfp_wait=N fail_page_alloc.ignore_gfp_wait=N \
		   fail_page_alloc.min_order=0 \
		   failslab.verbose=1 fail_page_alloc.verbose=1 \
		   fail_netgpu_refill=1,0,0,-1 fail_netgpu_dma_map=1,0,0,-1 \
		   fail_netgpu_rx_ring=1,0,0,-1 fail_netgpu_tx=1,0,0,-1

CCACHE_DIR	?= $(NETGPU_CACHE)/ccache
# ccache's depend mode: a miss compiles once and hashes the headers the
# compiler's -MMD file names, instead of running the preprocessor first.
# On a fresh machine every file misses; measured on four kernel files
# of the debug build: plain gcc 37.3 s, ccache's default mode 46.4 s
# (+25 %), depend mode 40.6 s (+9 %).  Hits are as before.
CCACHE_DEPEND	?= 1
export NETGPU_CACHE PRISTINE SRC OUT CCACHE_DIR CCACHE_DEPEND BUILD BENCH_BUILD FAULT_ARGS

.PHONY: all deps pristine stage build kunit check lint series bench kcsan mutants coverage clean help
all: kunit

help:
	@sed -n 's/^| `make \([^`]*\)` | \(.*\) |$$/make \1: \2/p' README.md

deps:
	@scripts/deps

# The pristine tree: unpacked once, never modified.
$(PRISTINE)/Makefile: | deps
	@mkdir -p $(NETGPU_CACHE)
	@echo "unpacking $(KSRC_TAR) into $(NETGPU_CACHE)"
	@rm -rf $(PRISTINE).tmp && mkdir -p $(PRISTINE).tmp
	@tar -C $(PRISTINE).tmp --strip-components=1 -xf $(KSRC_TAR)
	@rm -rf $(PRISTINE) && mv $(PRISTINE).tmp $(PRISTINE)

pristine: deps $(PRISTINE)/Makefile

stage: pristine
	@mkdir -p $(NETGPU_CACHE)
	@flock $(NETGPU_CACHE)/build.lock scripts/stage $(PRISTINE) $(SRC)

# Compile lib/netgpu/ only (quick check; needs one `make kunit` first).
build: stage
	@flock $(NETGPU_CACHE)/build.lock $(MAKE) -C $(SRC) O=$(BUILD) \
		ARCH=x86_64 CC='$(NETGPU_CACHE)/bin/ccache-cc gcc' -j$$(nproc) lib/netgpu/

kunit: stage
	@scripts/kunit-run kunit $(CURDIR)/.kunitconfig $(BUILD) \
		--kernel_args '$(FAULT_ARGS)' \
		$(if $(FILTER),'$(FILTER)')
	@scripts/scan-log $(OUT)/kunit.console.log

check: stage
	@scripts/check

lint: stage
	@scripts/lint

series: stage
	@scripts/series

bench: stage
	@scripts/bench

# Each mutant of kunit/mutants on the kunit kernel, killed by its cases.
mutants: stage
	@scripts/mutants $(MUTANTS)

# The library suites and the smoke campaign on a KCSAN kernel.
kcsan: stage
	@scripts/kcsan

# Module licence scenarios in QEMU (kunit/modules/) on the kernel that
# `make kunit` built last; writes build/modules.{ktap,json,console.log}.
modules-check: stage
	@BUILD=$(BUILD) scripts/modules-check

# The busybox base image of scripts/initramfs-run (cached).
initramfs:
	@scripts/initramfs-run --base-only

.PHONY: modules-check initramfs

# netdevsim queue API and emulated header split under TCP in QEMU
# (kunit/netdevsim/) on the kernel that `make kunit` built last; writes
# build/netdevsim.{ktap,json,console.log}.  NSIM_BYTES= NSIM_SEED=
# The ABI fuzzer's run in the netdevsim boot (60 s in make check; longer:
# make netdevsim-check FUZZ_SECS=600 FUZZ_SEED=7).
FUZZ_SECS	?= 60
FUZZ_SEED	?= 1
netdevsim-check: stage
	@NSIM_FUZZ_SECS=$(FUZZ_SECS) NSIM_FUZZ_SEED=$(FUZZ_SEED) \
		scripts/netdevsim-check

# e1000e's page_pool packet split and memory provider (patches/0015-0016)
# under TCP between two emulated e1000e NICs in QEMU (kunit/e1000e/), on
# the kernel that `make kunit` built last; writes
# build/e1000e.{ktap,json,console.log}.  E1000E_RX_BYTES= (default 16 MiB)
# E1000E_BYTES= E1000E_SMALL= E1000E_SEED= (scripts/e1000e-check).
e1000e-check: stage
	@scripts/e1000e-check

# TCP received three ways (recv(), netgpu, devmem TCP) over netdevsim, on
# the kernel `make kunit` built last; ratios of the medians.
bench-rx: stage
	@scripts/bench-rx

# Review 2's E9: e1000e's ordinary receive path before and after
# patches/0015-0016 (the pristine driver as an out-of-tree module against
# the built-in patched one, one emulated NIC, one boot of the bench
# kernel); builds the bench kernel and the module under the build lock.
# E1000E_BENCH_ROUNDS= E1000E_BENCH_BYTES= E1000E_BENCH_SEED=
# E1000E_BENCH_MTUS= E1000E_BENCH_CONTROL=1 (scripts/bench-e1000e).
bench-e1000e: stage
	@scripts/bench-e1000e

.PHONY: netdevsim-check e1000e-check bench-rx bench-e1000e

# One torture campaign over the receive path (fault/campaigns/): CAMPAIGN=
# (default smoke) SEED= DURATION= (seconds) JOBS= (shards side by side)
# PLANT= (a planted bug of fault/plant/) KIMG= (scripts/torture).
torture: pristine
	@scripts/torture

# Merge the shards' reports (build/torture/*/report.json) into one.
torture-report:
	@scripts/torture-report

# The torture shards as LAVA jobs, run by Debian's lava-dispatcher on
# this machine (lava-run, no server): CAMPAIGN= SEED= DURATION= JOBS=
# KIMG= as make torture; LAVA_URL= writes the jobs for a server instead.
# The dispatcher is installed here only (scripts/deps lava), not by make
# check.  Shards and merged report in build/torture-lava/ (fault/README.md,
# "Campaigns on LAVA").
torture-lava: pristine
	@scripts/deps lava
	@TORTURE_BOOT=lava scripts/torture

# make torture and make torture-lava of the same shards, compared.
torture-lava-compare:
	@scripts/torture-compare $(OUT)/torture $(OUT)/torture-lava

# The LAVA side of a shard without a boot: a recorded console of make
# torture (REPLAY=, default build/torture/smoke-1/console.log) played
# back by fault/lava/stub-qemu under lava-run; the report must come out
# the same (seconds; needs root, as lava-run does).
torture-lava-replay: pristine
	@scripts/deps lava
	@TORTURE_BOOT=lava LAVA_QEMU=$(CURDIR)/fault/lava/stub-qemu \
		STUB_REPLAY=$(abspath $(or $(REPLAY),$(OUT)/torture/smoke-1/console.log)) \
		TORTURE_DIR=$(OUT)/torture-lava-replay \
		KIMG=$(or $(KIMG),$(OUT)/kunit.bzImage) scripts/torture; \
	scripts/torture-compare $(OUT)/torture $(OUT)/torture-lava-replay

# The in-kernel campaign over the control path (fault/netgpu_torture.c):
# SEED= DURATION_MS= FAIL_PERMILLE= CONTROL_THREADS= LOOKUP_THREADS=
# REVOKE_MS= (scripts/torture-control).
torture-control: stage
	@scripts/torture-control

.PHONY: torture torture-report torture-control torture-lava torture-lava-compare torture-lava-replay

# GCOV kernel, all suites, lcov + genhtml into coverage/html/; enforces coverage/threshold.
coverage: stage
	@scripts/coverage

# The ring protocol and netdevsim's queue start against tools/memory-model
# (kunit/litmus/): seconds.
litmus: stage
	@scripts/litmus-check

# Other architectures, each its own minimal kernel and build directory
# (scripts/arch-run): by default the library suites on 32-bit ARM (two
# vCPUs under multi-threaded TCG), as make check runs them; also
# available: ARCHES='arm i386 arm64' (the library suites on i386,
# netgpu_queue on arm64).
ARCHES		?= arm
arch-check: stage
	@set -e; for a in $(ARCHES); do \
		scripts/arch-run $$a; scripts/scan-log $(OUT)/$$a.console.log; \
	done

.PHONY: litmus arch-check

clean:
	rm -rf $(OUT) coverage/html
