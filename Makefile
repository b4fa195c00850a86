# flapjack — see README.md. `make run` starts a working system; `make test` installs what the
# tests need (as root, with apt-get) and runs them.
GO      ?= go
BIN     := bin/flapjack
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@2025.1.1

.PHONY: build run test test-deps lint bench fuzz clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/flapjack

run: build
	$(BIN) server

test-deps:
	@./scripts/test-deps.sh

test: test-deps
	$(GO) vet ./...
	$(GO) test -race -timeout 15m ./...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench: build test-deps
	$(GO) run ./cmd/flapjack-bench

clean:
	rm -rf bin
