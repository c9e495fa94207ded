# linerate — `make demo` runs the main job on this machine, `make test` is
# what CI runs (.ci/run). Both install what is missing on a fresh Debian
# machine: Debian packages through apt-get when root, Go tools through the
# Go module proxy.

SHELL      := /bin/bash
GO         ?= go
BIN        := $(CURDIR)/bin
LINERATE   := $(BIN)/linerate
STATICCHECK_VERSION := v0.8.2
# nfpm builds the .deb (make package): a Go tool from the module proxy,
# installed under ./bin at this version, outside go.mod.
NFPM_VERSION := v2.48.0
# The gRPC API: proto/linerate/v1/*.proto and the Go generated from it
# (committed). The generators are pinned; protoc is Debian's (3.21).
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
PROTO_DIR  := proto
PROTO_SRCS := $(sort $(wildcard $(PROTO_DIR)/linerate/v1/*.proto))
PROTO_GEN  := $(PROTO_SRCS:.proto=.pb.go) $(PROTO_SRCS:.proto=_grpc.pb.go)
FUZZTIME   ?= 10s
# The interface carrying the default route: demo-irq only reads it.
IFACE      ?= $(shell awk '$$2 == "00000000" { print $$1; exit }' /proc/net/route 2>/dev/null)

# Fuzz targets run for FUZZTIME each in `make test`: package:target.
FUZZ_TARGETS := \
	./topology/cpuset:FuzzParseList \
	./topology/cpuset:FuzzParseMask \
	./topology/cpuset:FuzzMaskRoundTrip \
	./topology/interrupts:FuzzParse \
	./topology/irqname:FuzzMatchName \
	./topology:FuzzParseARP \
	./cmd/linerate/internal/vm:FuzzParseModulesDep \
	./pktgen:FuzzParseDeviceFile \
	./pktgen:FuzzDecodeHeader \
	./receiver:FuzzParseFrame \
	./coordinator/results:FuzzDecode \
	./coordinator/search:FuzzSearch

.PHONY: package package-deps reliability bench-start bench-afxdp-receiver bench-latency bench-scale bench-vm bench-vm-engines bench-smoke bench-deps traffic-deps all build demo demo-netns demo-irq test traffic deps vmtest-deps report-deps proto-deps proto proto-check lint unit fuzz crossbuild bench-pktgen clean

all: build

# deps: what a fresh machine lacks. gcc is needed for -race (cgo); nft
# loads the firewall doctor/nft's traffic test checks (in its own
# namespaces; without nft that test skips).
deps:
	@command -v $(GO) >/dev/null || { echo "make: Go is missing: install Go 1.26 (https://go.dev/dl) and re-run" >&2; exit 1; }
	@if ! command -v gcc >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev; \
		else echo "make: gcc is missing (needed by go test -race): apt-get install gcc" >&2; exit 1; fi; \
	fi
	@if ! command -v nft >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nftables; \
		else echo "make: nft is missing (the doctor/nft traffic test skips without it): apt-get install nftables" >&2; fi; \
	fi
	@$(GO) mod download

# vmtest-deps: what the real-kernel guests of cmd/linerate/internal/vm and .../vmtest need:
# qemu (TCG), xz for compressed modules, cpio to cross-check the initramfs
# writer, trafgen (netsniff-ng) that TestLabVMHosts gives its guests
# (lab up --guest-file), and apt package lists that offer the pinned kernel and
# busybox-static (cmd/linerate/internal/vm/pins.txt; the tests fetch them
# themselves with `apt-get download package=version` into .cache/vmtest
# and check their sha256). Not root and something missing: the guest
# tests skip (outside CI) and this says so.
VMTEST_TOOLS := qemu-system-x86_64:qemu-system-x86 xz:xz-utils cpio:cpio trafgen:netsniff-ng
VMTEST_PINS  := cmd/linerate/internal/vm/pins.txt
vmtest-deps:
	@command -v apt-get >/dev/null || { echo "make: no apt-get: the vmtest guest tests will skip" >&2; exit 0; }; \
	missing=; for t in $(VMTEST_TOOLS); do command -v $${t%%:*} >/dev/null || missing="$$missing $${t##*:}"; done; \
	update=; for p in $$(awk '!/^#/ && NF == 4 { print $$2 "=" $$3 }' $(VMTEST_PINS)); do \
		apt-cache show "$$p" >/dev/null 2>&1 || update=yes; done; \
	if [ -z "$$missing$$update" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "make: the vmtest guest tests need$${missing:+ apt-get install$$missing}$${update:+ apt-get update}: run make vmtest-deps as root; until then they skip" >&2; exit 0; \
	fi; \
	apt-get update -qq && if [ -n "$$missing" ]; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends$$missing; fi

# report-deps: Debian's chromium (and the fonts it recommends), which
# renders the HTML report headless in coordinator/report's
# TestReportHeadlessChromium. Not root and it is missing: that test skips
# (outside CI, where it fails) and this says so.
report-deps:
	@if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then exit 0; fi; \
	command -v apt-get >/dev/null || { echo "make: no apt-get and no chromium: the headless report test will skip" >&2; exit 0; }; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "make: the headless report test needs chromium: run make report-deps as root (apt-get install chromium); until then it skips" >&2; exit 0; \
	fi; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation

# traffic-deps: Debian's irqbalance (1.9.2), which the netns lab's
# TestLabRunPreflightStrict starts itself in the foreground, banning every
# IRQ, to be refused by --preflight strict. Installed with the services'
# start denied (policy-rc.d, as in a container) and, where systemd runs,
# disabled: it must never run as a service here. Not root and it is
# missing: that test skips (outside CI, where it fails) and this says so.
traffic-deps:
	@if command -v irqbalance >/dev/null; then exit 0; fi; \
	command -v apt-get >/dev/null || { echo "make: no apt-get and no irqbalance: the lab's strict pre-flight test will skip" >&2; exit 0; }; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "make: the lab's strict pre-flight test needs irqbalance: run make traffic-deps as root (apt-get install irqbalance); until then it skips" >&2; exit 0; \
	fi; \
	deny=; if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && deny=yes; fi; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends irqbalance; rc=$$?; \
	if [ -n "$$deny" ]; then rm -f /usr/sbin/policy-rc.d; fi; \
	if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then systemctl disable --now irqbalance >/dev/null 2>&1 || true; fi; \
	exit $$rc

# package-deps: Debian's debootstrap, with which the package tests
# (TestPackageInstallRemove, TestUnitUnderSystemd) make their Debian chroot
# on first use (/var/cache/linerate/debian), and systemd-container's
# systemd-nspawn, which boots that chroot with systemd as its PID 1 for
# TestUnitUnderSystemd. Not root and one is missing: the tests needing it
# skip (outside CI, where they fail) and this says so.
package-deps:
	@if command -v debootstrap >/dev/null && command -v systemd-nspawn >/dev/null; then exit 0; fi; \
	command -v apt-get >/dev/null || { echo "make: no apt-get, and debootstrap or systemd-nspawn is missing: the package tests will skip" >&2; exit 0; }; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "make: the package tests need debootstrap and systemd-nspawn: run make package-deps as root (apt-get install debootstrap systemd-container); until then they skip" >&2; exit 0; \
	fi; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap systemd-container

# proto-deps: protoc and the well-known types (google/protobuf/*.proto)
# from Debian when root, the two Go generators at their pinned versions
# under ./bin (one directory per version, so bumping a pin reinstalls).
PROTOC_GEN_GO      := $(BIN)/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)/protoc-gen-go
PROTOC_GEN_GO_GRPC := $(BIN)/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)/protoc-gen-go-grpc
proto-deps: $(PROTOC_GEN_GO) $(PROTOC_GEN_GO_GRPC)
	@if ! command -v protoc >/dev/null || [ ! -f /usr/include/google/protobuf/timestamp.proto ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends protobuf-compiler libprotobuf-dev; \
		else echo "make: protoc or the protobuf well-known types are missing: apt-get install protobuf-compiler libprotobuf-dev" >&2; exit 1; fi; \
	fi

$(PROTOC_GEN_GO):
	GOBIN=$(@D) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)

$(PROTOC_GEN_GO_GRPC):
	GOBIN=$(@D) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)

# protoc-gen runs protoc with the pinned plugins, writing under $(1).
protoc-gen = protoc -I $(PROTO_DIR) -I /usr/include \
	--plugin=protoc-gen-go=$(PROTOC_GEN_GO) --plugin=protoc-gen-go-grpc=$(PROTOC_GEN_GO_GRPC) \
	--go_out=$(1) --go_opt=paths=source_relative \
	--go-grpc_out=$(1) --go-grpc_opt=paths=source_relative \
	$(PROTO_SRCS:$(PROTO_DIR)/%=%)

# proto: regenerate the committed Go code from the .proto files.
proto: proto-deps
	$(call protoc-gen,$(PROTO_DIR))

# proto-check: regenerate into a temporary directory and fail when the
# committed code differs (someone edited a .proto without `make proto`, or
# edited the generated code). The "protoc vX" header line is not compared:
# it names the local protoc, not a difference in the code.
proto-check: proto-deps
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(call protoc-gen,$$tmp) && \
	status=0 && for f in $(PROTO_GEN); do \
		if ! diff -u -I '^//[[:space:]]*protoc[[:space:]]' "$$f" "$$tmp/$${f#$(PROTO_DIR)/}" >"$$tmp/diff" 2>&1; then \
			echo "make proto-check: $$f is not what $(PROTO_SRCS) generates; run make proto:" >&2; \
			head -40 "$$tmp/diff" >&2; status=1; \
		fi; \
	done; exit $$status

build: deps
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -o $(LINERATE) ./cmd/linerate

# package: the .deb of this checkout (bin/package/linerate_VERSION_ARCH.deb)
# with nfpm: the static binary (make build), the agent's systemd unit
# (packaging/linerate-agent.service), the commented default
# /etc/linerate/agent.yaml (a conffile), a man page for every command and
# the bash, zsh and fish completions; all but the unit are generated here
# from the binary's own commands (the hidden `linerate gen`, cobra's
# `completion`), so none of them is in git or can drift. Its version is the
# binary's (`linerate version`) as a Debian version (`linerate gen
# debian-version`). PACKAGE_DIR: where the .deb goes.
PACKAGE_DIR ?= $(BIN)/package
NFPM        := $(BIN)/nfpm@$(NFPM_VERSION)/nfpm
PKG_STAGE   := $(BIN)/package/stage
package: build $(NFPM)
	@set -e; rm -rf $(PKG_STAGE); mkdir -p $(PKG_STAGE)/man $(PKG_STAGE)/completion $(PACKAGE_DIR); \
	cp $(LINERATE) $(PKG_STAGE)/linerate; \
	date=$$(git log -1 --format=%cs 2>/dev/null || date -u +%F); \
	$(LINERATE) gen man --dir $(PKG_STAGE)/man --date $$date >/dev/null; \
	gzip -9n $(PKG_STAGE)/man/*.1; \
	$(LINERATE) gen agent-config > $(PKG_STAGE)/agent.yaml; \
	$(LINERATE) completion bash > $(PKG_STAGE)/completion/linerate.bash; \
	$(LINERATE) completion zsh > $(PKG_STAGE)/completion/_linerate; \
	$(LINERATE) completion fish > $(PKG_STAGE)/completion/linerate.fish; \
	version=$$($(LINERATE) gen debian-version); \
	case "$$version" in 0~dev) echo "make package: $$($(LINERATE) version): the package is version $$version (build in a git clone for the commit's version)" >&2;; esac; \
	LINERATE_DEB_VERSION=$$version LINERATE_DEB_ARCH=$$($(GO) env GOARCH) \
		$(NFPM) package --config packaging/nfpm.yaml --packager deb --target $(PACKAGE_DIR)/ | grep -v '^$$'

$(NFPM):
	GOBIN=$(@D) $(GO) install github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION)

# demo: the main job on one machine (root), on hosts with kernels of
# their own: two senders and a receiver, each a qemu guest (4 vCPUs in two
# NUMA nodes, a 4-queue virtio NIC on node 1) whose agent serf finds and
# the coordinator drives over mutual TLS; queue IRQs pinned onto node 1 on
# both ends and shown to fire there, kernel pktgen sending, one 3-second
# fan-in reconciled to the packet, every affinity restored and nothing
# left behind. It installs qemu and fetches the pinned guest kernel
# (vmtest-deps, then the lab's own fetch into /var/cache/linerate/vm).
# demo-netns: the same mission on network namespaces, in seconds (no queue
# IRQs, no pktgen: the xdp engine sends). demo-irq: the queue-IRQ plan for
# this machine's own NIC (reads only).
# 5 kpps a flow: what paced kernel pktgen holds in a TCG guest here with
# three guests on two CPUs (the VM e2e tests' rate).
DEMO_RATE ?= 5000
demo: build vmtest-deps
	@if [ "$$(id -u)" != 0 ]; then echo "make demo: the lab needs root (namespaces, taps, XDP): sudo make demo" >&2; exit 1; fi
	$(LINERATE) lab run --hosts vm --senders 2 --receivers 1 --pattern fan-in --duration 3s --rate $(DEMO_RATE)
demo-netns: build
	@if [ "$$(id -u)" != 0 ]; then echo "make demo-netns: the lab needs root (namespaces, XDP): sudo make demo-netns" >&2; exit 1; fi
	$(LINERATE) lab run --senders 2 --receivers 2 --duration 3s
demo-irq: build
	@if [ -z "$(IFACE)" ]; then echo "make demo-irq: no default-route interface found; run: make demo-irq IFACE=<name>" >&2; exit 1; fi
	$(LINERATE) irq show --iface $(IFACE)
	@echo
	$(LINERATE) irq plan --iface $(IFACE)

test: deps vmtest-deps report-deps traffic-deps package-deps proto-check lint unit traffic bench-smoke fuzz crossbuild

# lint: vet with and without the traffic tag (both builds compile);
# staticcheck with it only: that build is every file, and without the
# traffic tests it would call what only they use unused.
lint: $(BIN)/staticcheck
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags traffic ./...
	$(BIN)/staticcheck -tags traffic ./...

$(BIN)/staticcheck:
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# unit: every test that sends no real traffic, packages in parallel (the
# import rules of internal/deprules among them).
unit:
	$(GO) test -race -count=1 ./...

# traffic: the tests in files built with the traffic tag (lab, guest,
# pacing, XDP and AF_PACKET tests: they send real traffic or boot qemu),
# one package at a time and only those tests: run side by side on this
# machine's few CPUs they slow each other into false loss and false
# pacing errors.
TRAFFIC_TAGGED = grep -lE '^//go:build.*\<traffic\>' $$(git ls-files -co --exclude-standard '*_test.go')
traffic:
	@set -e; files=$$($(TRAFFIC_TAGGED)); \
	pkgs=$$(for f in $$files; do echo ./$${f%/*}; done | sort -u); \
	tests=$$(sed -nE 's/^func (Test[A-Za-z0-9_]*)\(.*/\1/p' $$files | sort -u | paste -sd'|'); \
	echo "$(GO) test -race -count=1 -timeout 30m -tags traffic -p 1 -run '^($$tests)\$$'" $$pkgs; \
	$(GO) test -race -count=1 -timeout 30m -tags traffic -p 1 -run "^($$tests)\$$" $$pkgs

# reliability: the reliability suite at full size (root): agents and
# coordinators SIGKILLed mid-run, a management link cut, every gRPC
# request type fuzzed, every long-running command signalled at every
# phase, bad input of every kind (docs/reliability.md); prints the figures
# and writes them into docs/reliability.md. make test runs the same tests
# at their small default size in traffic (about 2 minutes on 2 CPUs).
RELIABILITY_N ?= 20
reliability: deps
	@if [ "$$(id -u)" != 0 ]; then echo "make reliability: needs root (namespaces, XDP): sudo make reliability" >&2; exit 1; fi
	N=$(RELIABILITY_N) GO=$(GO) ./bench/reliability.sh

# fuzz: a target that ends with the engine's own "context deadline
# exceeded" and no failing input (the workers missed the end of the run;
# seen on this 2-CPU machine) runs once more; a real finding fails.
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; out=$$(mktemp); \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		if $(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s $$pkg >$$out 2>&1; then cat $$out; \
		elif grep -q 'context deadline exceeded' $$out && ! grep -q 'Failing input written' $$out; then \
			cat $$out; echo "fuzz $$name: the engine timed out at the end, no failing input: once more"; \
			$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s $$pkg || { rm -f $$out; exit 1; }; \
		else cat $$out; rm -f $$out; exit 1; fi; \
		rm -f $$out; \
	done

# crossbuild: the tree builds (and its tests, traffic ones too, compile)
# off Linux too.
crossbuild:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(GO) vet -tags traffic ./...

# bench-deps: what a bench script runs besides linerate, from Debian
# when root: BENCH_TOOLS, command:package pairs, each target its own
# (bench-generators: trafgen from netsniff-ng, iperf3 and jq;
# bench-vm-engines: trafgen and jq; bench-start and bench-vm: jq). Not root and one is missing: this fails naming it
# (the scripts need root anyway).
BENCH_TOOLS ?= jq:jq
bench-generators: BENCH_TOOLS = trafgen:netsniff-ng iperf3:iperf3 jq:jq
bench-vm-engines: BENCH_TOOLS = trafgen:netsniff-ng jq:jq
bench-deps:
	@missing=; for t in $(BENCH_TOOLS); do command -v $${t%%:*} >/dev/null || missing="$$missing $${t##*:}"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "make: the bench scripts need apt-get install$$missing (as root)" >&2; exit 1; fi; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends$$missing

# gobench runs one Go test ($(1)) of package $(2) with -v and the
# environment $(3), printing the lines that match the ERE $(4), and fails
# unless the test ran and passed: a test renamed, skipped (qemu missing,
# not root) or filtered out would otherwise end in "ok".
define gobench
@set -o pipefail; out=$$(mktemp); trap 'rm -f "$$out"' EXIT; \
echo "$(3) $(GO) test -count=1 -timeout 20m -tags traffic -run '^$(1)$$' -v $(2)"; \
env $(3) $(GO) test -count=1 -timeout 20m -tags traffic -run '^$(1)$$' -v $(2) | tee "$$out" | grep -E '$(4)'; \
grep -q '^--- PASS: $(1) ' "$$out" || { grep -E -- '--- SKIP|no tests to run' "$$out" >&2; echo "make: $(1) in $(2) did not run and pass (above)" >&2; exit 1; }
endef

# bench-pktgen: in a qemu guest with the real pktgen, the same run set up
# by a shell loop (as samples/pktgen does) and by `linerate send`,
# alternately, PKTGEN_ROUNDS rounds of PKTGEN_COUNT packets; prints the
# pps of each and the ratio (target >= 0.98).
PKTGEN_ROUNDS ?= 5
PKTGEN_COUNT ?= 300000
bench-pktgen: deps vmtest-deps
	$(call gobench,TestBenchPktgenDriver,./cmd/linerate/internal/vmtest/,LINERATE_BENCH=1 ROUNDS=$(PKTGEN_ROUNDS) COUNT=$(PKTGEN_COUNT),)

# bench-scale: a fleet on loopback — SCALE_AGENTS agents (serf + mutual-TLS
# gRPC, each its own certificate) in SCALE_PROCS processes, as hosts would
# run them — discovered and health-checked by a coordinator, then one
# scheduled start over SCALE_SENDERS of them; prints the figures and the
# targets' verdicts (docs/benchmarks.md). Run it alone on the machine.
SCALE_AGENTS ?= 1000
SCALE_PROCS ?= 8
SCALE_SENDERS ?= 256
bench-scale: deps
	$(call gobench,TestScale,./cmd/linerate/internal/scaletest/,LINERATE_SCALE_AGENTS=$(SCALE_AGENTS) LINERATE_SCALE_PROCS=$(SCALE_PROCS) LINERATE_SCALE_SENDERS=$(SCALE_SENDERS),scale_test|PASS|FAIL|ok)

# bench-start: the scheduled start measured at the traffic in the 2x2 lab
# (root): first-frame and first-arrival spread per round, medians and the
# target verdict (first-frame p99 <= 200 µs); figures in docs/benchmarks.md.
bench-start: build bench-deps
	LINERATE=$(LINERATE) ./bench/start-spread.sh

# bench-generators: xdp, afxdp and afpacket backends against trafgen, iperf3 and,
# when XDP_TRAFFICGEN and XDP_BENCH name xdp-tools binaries, xdp-trafficgen
# and the xdp-bench drop sink, on one veth pair (root); figures in
# docs/benchmarks.md.
bench-generators: build bench-deps
	LINERATE=$(LINERATE) ./bench/generators.sh

# bench-afxdp-receiver: the xdp sender's fastest rate into recv --method
# afxdp (need_wakeup off and on) and --method xdp on one veth pair (root),
# counted against what the veth delivered; figures in docs/benchmarks.md.
bench-afxdp-receiver: build bench-deps
	LINERATE=$(LINERATE) ./bench/afxdp-receiver.sh

# bench-latency: what timing every packet costs the receiver (root): the
# xdp sender's rate into recv with --latency oneway against off on a veth
# pair, alternating, and the per-packet cost of the XDP program and the
# accounting core from their Go benchmarks; figures in docs/benchmarks.md.
bench-latency: build bench-deps
	LINERATE=$(LINERATE) GO=$(GO) ./bench/latency-cost.sh

# bench-vm: the VM-host lab's figures (root): boot to agent ready per
# guest, the pps kernel pktgen reaches between guests (TCG, or KVM where
# /dev/kvm works), make demo's wall time; figures in docs/benchmarks.md.
bench-vm: build vmtest-deps bench-deps
	LINERATE=$(LINERATE) ./bench/vm-figures.sh

# bench-vm-engines: the engines between two VM hosts (root; issue 21):
# unpaced 64 B runs of every sender backend (kernel, xdp, afxdp with
# need_wakeup off and on, afpacket) and trafgen (in the sender guest: lab
# up --guest-file, lab exec) into the xdp method, then the fastest
# into the xdp, afxdp and afpacket methods, one lab run each, alternating,
# ROUNDS rounds; figures in docs/benchmarks.md. Not in make test (minutes).
bench-vm-engines: build vmtest-deps bench-deps
	LINERATE=$(LINERATE) ./bench/vm-engines.sh

# bench-smoke: every bench script and bench-* target, through its make
# target, at a smoke size (the sizes below: one short round, one small
# fleet, one guest run of each kind), as make test runs them: each must
# run end to end, every tool it compares and every parse of its output,
# and fails on a failed command or a missing output field. It proves the
# scripts run, not the figures: no target is judged. The reliability
# script runs one part (make test's traffic pass runs them all at this
# size) into a copy of docs/reliability.md. Not root: skipped, except in
# CI (CI=true), where it fails.
RELIABILITY_SMOKE_RUN := ^TestReliabilityPartition
bench-smoke:
	@if [ "$$(id -u)" != 0 ]; then \
		if [ "$$CI" = true ]; then echo "make bench-smoke: needs root (namespaces, XDP, qemu), and CI runs as root" >&2; exit 1; fi; \
		echo "make bench-smoke: needs root (namespaces, XDP, qemu): skipped; sudo make bench-smoke" >&2; exit 0; \
	fi; \
	set -e; all=$$(date +%s); doc=$$(mktemp); trap 'rm -f "$$doc"' EXIT; cp docs/reliability.md "$$doc"; \
	smoke() { local s=$$(date +%s); echo "bench-smoke: $$*"; "$$@"; echo "bench-smoke: $$3 took $$(( $$(date +%s) - s )) s"; }; \
	smoke $(MAKE) --no-print-directory bench-generators ROUNDS=1 SECS=1 WARM=100000; \
	smoke $(MAKE) --no-print-directory bench-start ROUNDS=1 COUNT=20000; \
	smoke $(MAKE) --no-print-directory bench-latency ROUNDS=1 COUNT=50000 BENCHTIME=100000x; \
	smoke $(MAKE) --no-print-directory bench-afxdp-receiver ROUNDS=1 COUNT=50000; \
	smoke $(MAKE) --no-print-directory bench-scale SCALE_AGENTS=8 SCALE_PROCS=2 SCALE_SENDERS=4; \
	smoke $(MAKE) --no-print-directory reliability RELIABILITY_N= RUN='$(RELIABILITY_SMOKE_RUN)' DOC="$$doc"; \
	smoke $(MAKE) --no-print-directory bench-pktgen PKTGEN_ROUNDS=1 PKTGEN_COUNT=30000; \
	smoke $(MAKE) --no-print-directory bench-vm ROUNDS=1 DURATION=1s; \
	echo "bench-smoke: every bench script ran; $$(( $$(date +%s) - all )) s"

clean:
	rm -rf $(BIN)
