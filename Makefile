# Makefile: build, run, test and measure rocketns.
GO      ?= go
BIN     := bin
PKGS    := ./...
BENCHTIME ?= 1s

.PHONY: all build run test test-short vet fmt bench clean

all: build

build:
	$(GO) build -o $(BIN)/namesrv ./cmd/namesrv

# The NameServer on its defaults: 0.0.0.0:9876, KV file under $$HOME/namesrv.
run: build
	./$(BIN)/namesrv

# Everything: vet, then every test with the race detector.
test: vet
	$(GO) test -race -count=1 $(PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# Micro-benchmarks beside the hot path (codec, shard, route, kv).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./codec/... ./shard/... ./core/...

clean:
	rm -rf $(BIN)
