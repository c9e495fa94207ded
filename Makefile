# linerate — `make demo` runs the main job on this machine, `make test` is
# what CI runs (.ci/run). Both install what is missing on a fresh Debian
# machine: Debian packages through apt-get when root, Go tools through the
# Go module proxy.

SHELL      := /bin/bash
GO         ?= go
BIN        := $(CURDIR)/bin
LINERATE   := $(BIN)/linerate
STATICCHECK_VERSION := v0.8.2
FUZZTIME   ?= 10s
# The interface carrying the default route: the demo only reads it.
IFACE      ?= $(shell awk '$$2 == "00000000" { print $$1; exit }' /proc/net/route 2>/dev/null)

# Fuzz targets run for FUZZTIME each in `make test`: package:target.
FUZZ_TARGETS := \
	./topology/cpuset:FuzzParseList \
	./topology/cpuset:FuzzParseMask \
	./topology/cpuset:FuzzMaskRoundTrip \
	./topology/interrupts:FuzzParse \
	./topology/irqname:FuzzMatchName \
	./internal/vmtest:FuzzParseModulesDep \
	./pktgen:FuzzParseDeviceFile \
	./pktgen:FuzzDecodeHeader

.PHONY: all build demo test deps vmtest-deps lint unit fuzz crossbuild bench-pktgen clean

all: build

# deps: what a fresh machine lacks. gcc is needed for -race (cgo).
deps:
	@command -v $(GO) >/dev/null || { echo "make: Go is missing: install Go 1.26 (https://go.dev/dl) and re-run" >&2; exit 1; }
	@if ! command -v gcc >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev; \
		else echo "make: gcc is missing (needed by go test -race): apt-get install gcc" >&2; exit 1; fi; \
	fi
	@$(GO) mod download

# vmtest-deps: what the real-kernel guest tests of internal/vmtest need:
# qemu (TCG), xz for compressed modules, cpio to cross-check the initramfs
# writer, and apt package lists that name the kernel (the tests fetch the
# kernel and busybox-static themselves with `apt-get download`, into
# .cache/vmtest). Not root and something missing: the guest tests skip
# (outside CI) and this says so.
VMTEST_TOOLS := qemu-system-x86_64:qemu-system-x86 xz:xz-utils cpio:cpio
vmtest-deps:
	@command -v apt-get >/dev/null || { echo "make: no apt-get: the vmtest guest tests will skip" >&2; exit 0; }; \
	missing=; for t in $(VMTEST_TOOLS); do command -v $${t%%:*} >/dev/null || missing="$$missing $${t##*:}"; done; \
	update=; apt-cache depends linux-image-cloud-amd64 2>/dev/null | grep -q 'Depends: linux-image-[0-9]' || update=yes; \
	if [ -z "$$missing$$update" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "make: the vmtest guest tests need$${missing:+ apt-get install$$missing}$${update:+ apt-get update}: run make vmtest-deps as root; until then they skip" >&2; exit 0; \
	fi; \
	apt-get update -qq && if [ -n "$$missing" ]; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends$$missing; fi

build: deps
	@mkdir -p $(BIN)
	$(GO) build -o $(LINERATE) ./cmd/linerate

# demo: plan NUMA-local queue IRQ pinning for this machine's own NIC.
# It only reads the host; nothing is changed.
demo: build
	@if [ -z "$(IFACE)" ]; then echo "make demo: no default-route interface found; run: make demo IFACE=<name>" >&2; exit 1; fi
	$(LINERATE) irq show --iface $(IFACE)
	@echo
	$(LINERATE) irq plan --iface $(IFACE)

test: deps vmtest-deps lint unit fuzz crossbuild

lint: $(BIN)/staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(BIN)/staticcheck ./...

$(BIN)/staticcheck:
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

unit:
	$(GO) test -race -count=1 ./...

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) $$pkg; \
	done

# crossbuild: the tree builds (and its tests compile) off Linux too.
crossbuild:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...

# bench-pktgen: in a qemu guest with the real pktgen, the same run set up
# by a shell loop (as samples/pktgen does) and by `linerate send`,
# alternately; prints the pps of each and the ratio (target >= 0.98).
bench-pktgen: deps vmtest-deps
	LINERATE_BENCH=1 $(GO) test -count=1 -run '^TestBenchPktgenDriver$$' -v ./internal/vmtest/

clean:
	rm -rf $(BIN)
