# flapjack — see README.md. `make run` starts a working system; `make test` installs what the
# tests need (as root, with apt-get) and runs them.
GO      ?= go
BIN     := bin/flapjack
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# staticcheck 2025.1.1 (the proxy serves it under its module version)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.6.1
FUZZTIME ?= 15s
# package:target pairs run by `make fuzz` (and so by `make test`) for FUZZTIME each
FUZZ_TARGETS := ./schema:FuzzParseEvent ./internal/humantime:FuzzParse ./receiver:FuzzParseNagiosLine ./receiver:FuzzParseNSCALine \
	./receiver:FuzzRunJSON ./timerestriction:FuzzParse \
	./timerestriction:FuzzRRule ./gateways/jabber:FuzzParseCommand ./oncall:FuzzParse ./oncall:FuzzShifts

.PHONY: build static image deb run test test-deps lint bench fuzz clean screenshots

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/flapjack

# What the image and the package ship: linux/amd64, static (CGO_ENABLED=0, so it runs on an image
# without a C library), without symbol tables. SOURCE_DATE_EPOCH (the commit's time) stamps every
# file, so two builds of one commit are byte for byte the same.
STATIC := bin/static/flapjack
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
# SPDX licence expression for the image label and the package; NOASSERTION until the project
# declares one.
LICENCE ?= NOASSERTION
PACKAGE := $(GO) run ./cmd/flapjack-package
PACKAGE_FLAGS = --binary $(STATIC) --version $(VERSION) --created $(SOURCE_DATE_EPOCH) --licence "$(LICENCE)"

static:
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags "$(LDFLAGS) -s -w" -o $(STATIC) ./cmd/flapjack

# bin/flapjack-image.tar: an OCI image as a docker-archive (docker load -i, podman load -i), built
# without a Docker engine or a base image
image: static
	$(PACKAGE) image $(PACKAGE_FLAGS) --out bin/flapjack-image.tar

# bin/flapjack_<version>_amd64.deb (the version mapped from git describe: README "Install"), the
# only one there, so `dpkg -i bin/flapjack_*_amd64.deb` installs it
deb: static
	rm -f bin/flapjack_*_amd64.deb
	$(PACKAGE) deb $(PACKAGE_FLAGS) --out-dir bin

run: build
	$(BIN) server

test-deps:
	@./scripts/test-deps.sh

test: test-deps
	$(GO) vet ./...
	$(GO) test -race -timeout 15m ./...
	@echo "executive, notifier, replay and queue again on the embedded Redis of make run"
	FLAPJACK_TEST_REDIS=embedded $(GO) test -count=1 -timeout 10m ./executive ./notifier ./queue ./model/... ./retention
	@$(MAKE) --no-print-directory fuzz

# the web UI's browser test (headless Chromium), saving its screenshots for the README
screenshots: test-deps
	FLAPJACK_SCREENSHOTS=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run '^TestBrowser' ./web/

fuzz:
	@GO="$(GO)" FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh $(FUZZ_TARGETS)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# BENCH_FLAGS=--quick for a ten times smaller smoke run. BENCH_BASELINE is a git revision built
# and measured in the same run, its figures printed beside this tree's: by default the tree
# before performance round two (issue 20); BENCH_BASELINE= skips it.
BENCH_BASELINE ?= 77426bd
bench: build test-deps
	@if [ -n "$(BENCH_BASELINE)" ]; then \
		rm -rf bin/baseline-src && mkdir -p bin/baseline-src && \
		git archive $(BENCH_BASELINE) | tar -x -C bin/baseline-src && \
		(cd bin/baseline-src && $(GO) build -o ../flapjack-baseline ./cmd/flapjack) && rm -rf bin/baseline-src; fi
	$(GO) run ./cmd/flapjack-bench --binary $(BIN) $(if $(BENCH_BASELINE),--baseline bin/flapjack-baseline) $(BENCH_FLAGS)
	$(GO) test -run '^$$' -bench BenchmarkWebhook1000Alerts -benchmem -count=1 ./receiver/alertmanager

clean:
	rm -rf bin
