# Makefile: build, run, test and measure rocketns.
GO      ?= go
BIN     := bin
PKGS    := ./...
BENCHTIME ?= 1s
# The version stamped into every binary (--version, the start-up banner,
# rocketns_build_info): the tag or commit, "-dirty" for uncommitted changes.
# Stamped through the linker because CI and image builds often run with
# -buildvcs=false, which leaves the toolchain's own record empty.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X github.com/rocketns/rocketns/core/buildinfo.version=$(VERSION)
# The interop tests with the official Go client are a module of their own,
# so the client and what it pulls in stay out of the server's go.mod.
INTEROP := core/interop
# Linters, pinned and run through the module proxy, so that they stay out
# of both go.mod files.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOVULNCHECK ?= $(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0
VULNDB_VERSION := v0.0.0-20261105234957-e22db6528018
# The test, vet and lint targets build without the tree's path (-trimpath),
# so the path of a checkout is not part of what the build cache keys on: a
# second clone or a worktree reuses the compiled packages, vet results and
# test binaries of the first instead of building them all again. Stack
# traces then name files by import path.
TESTENV := GOFLAGS='-trimpath $(GOFLAGS)'
# Packages tested at once. go test's default is one per core, but several
# packages spend most of their time waiting on timers (raft elections,
# idle deadlines), and on a shared machine the scheduler shares the cores
# out per runnable thread: four at once finish sooner in both cases.
TESTP ?= 4

.PHONY: all build image version run test test-all e2e test-short vet lint alloc vulncheck fmt docs bench clean profile loadgen loadgen-smoke fuzz fuzz-ci durability soak

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/namesrv ./cmd/namesrv
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/nsadmin ./cmd/nsadmin

# The NameServer on its defaults: 0.0.0.0:9876, KV file under $$HOME/namesrv.
run: build
	./$(BIN)/namesrv

# The verdict to wait for before a commit, in minutes: gofmt, vet and
# staticcheck, the unit and in-process tests of every package with the race
# detector (the interop module's too), then the zero-allocation guards
# without it. The end-to-end tier (`make e2e`) is left out.
test: vet lint
	$(TESTENV) $(GO) test -race -count=1 -p $(TESTP) $(PKGS)
	cd $(INTEROP) && $(TESTENV) $(GO) test -race -count=1 ./...
	$(MAKE) alloc

# Both tiers, as CI runs them.
test-all: test e2e

# The end-to-end tier: the tests in files built only with the e2e tag
# (`//go:build e2e`), the ones that build and run the real binaries (kill -9
# durability, signals, the controller as processes with and without raft
# security, the migration procedure, the version stamp, the compare scenario
# and a pinned child), drive Chromium or Docker, kill a child mid-write, or
# soak a server for many seconds (the chaos, attack and route-table soaks at
# their small size; `make soak` runs them at full size). It runs exactly
# those tests, with -race; the rest of their packages ran in `make test`.
# One of them alone: go test -tags e2e -run '^TestDurability$$' ./cmd/namesrv
E2E_FILES = $(shell grep -rl --include='*_test.go' '^//go:build e2e$$' . | grep -v '^./$(INTEROP)/')
E2E_PKGS  = $(sort $(patsubst %/,%,$(dir $(E2E_FILES))))
E2E_TESTS = $(shell sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing\.T).*/\1/p' $(E2E_FILES) | sort -u | paste -sd '|' -)
e2e:
	$(TESTENV) $(GO) test -tags e2e -race -count=1 -timeout 30m -run '^($(E2E_TESTS))$$' $(E2E_PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)
	cd $(INTEROP) && $(GO) test -short -count=1 ./...

# Vet and staticcheck see the e2e files too: with the tag, every file of a
# package is built.
vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(TESTENV) $(GO) vet -tags e2e $(PKGS)
	cd $(INTEROP) && $(TESTENV) $(GO) vet ./...
	$(TESTENV) $(GO) vet .ci/vulnfilter.go

lint:
	$(TESTENV) $(STATICCHECK) -tags e2e $(PKGS)
	cd $(INTEROP) && $(TESTENV) $(STATICCHECK) ./...

# The zero-allocation guards (and the inflation-bomb memory check) skip
# under -race, where allocation counts mean nothing, and so do the tests
# that run one goroutine over large inputs (they call
# codectest.SkipUnderRace: the detector can find nothing there and
# multiplies their cost). This runs them all without it, building only the
# packages that hold one. A test that skips here fails the target, so none
# can stop running unnoticed.
ALLOC_GUARDS := Alloc|NotInflated
LPAREN := (
NORACE_FILES = $(shell grep -rlE --include='*_test.go' -e '^func Test[A-Za-z0-9_]*($(ALLOC_GUARDS))' -e 'SkipUnderRace[$(LPAREN)]' . | grep -v '^./$(INTEROP)/')
NORACE_TESTS = $(shell awk 'match($$0, /^func (Test|Fuzz)[A-Za-z0-9_]*[$(LPAREN)]/) { name = substr($$0, 6, RLENGTH - 6) } /codectest\.SkipUnderRace[$(LPAREN)]/ && name { print name }' $(NORACE_FILES) | sort -u | paste -sd '|' -)
ALLOC_PKGS = $(sort $(patsubst %/,%,$(dir $(NORACE_FILES))))
alloc:
	@out=$$($(TESTENV) $(GO) test -count=1 -run '$(ALLOC_GUARDS)|^($(NORACE_TESTS))$$$$' -v $(ALLOC_PKGS) 2>&1); status=$$?; \
	echo "$$out" | grep -E '^(--- |FAIL|panic)'; \
	if [ $$status -ne 0 ]; then echo "$$out" | tail -50; exit $$status; fi; \
	if echo "$$out" | grep -q -e '--- SKIP'; then echo "a test skipped without -race"; exit 1; fi; \
	n=$$(echo "$$out" | grep -c -e '--- PASS'); \
	if [ "$$n" -eq 0 ]; then echo "no allocation guard matched $(ALLOC_GUARDS)"; exit 1; fi; \
	echo "alloc: $$n tests passed without -race"

# govulncheck against a vulnerability database built offline from the
# golang.org/x/vulndb module (pinned above, fetched through the module
# proxy) into bin/. Vulnerabilities the code reaches in a module fail the
# target; those in the standard library are listed with the Go release
# that fixes them (the fix is a toolchain update, not a code change).
VULNDB := $(BIN)/vulndb-$(VULNDB_VERSION)
vulncheck:
	@set -e; if [ ! -f $(VULNDB)/index/db.json ]; then \
		tmp=$$(mktemp -d); \
		src=$$(cd $$tmp && $(GO) mod download -json golang.org/x/vulndb@$(VULNDB_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
		rmdir $$tmp; \
		rm -rf $(VULNDB).tmp; \
		$(GO) run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) -vulns "$$src/data/osv" -out $(VULNDB).tmp; \
		mv $(VULNDB).tmp $(VULNDB); \
	fi
	@report=$$(mktemp); trap 'rm -f "$$report"' EXIT; \
	$(GOVULNCHECK) -db file://$(abspath $(VULNDB)) -format json $(PKGS) >"$$report"; \
	$(GO) run .ci/vulnfilter.go <"$$report"

fmt:
	gofmt -w $$(git ls-files '*.go')

# The docs' tables of keys (docs/configuration.md, the README's main
# settings, the key lists of the other pages of docs/, the migration
# guide's Java keys), rewritten from config's table; go test ./core/config
# fails while they differ.
docs:
	$(GO) test -count=1 -run TestDocsGenerated ./core/config -update

# Every fuzz target, one after the other, each for FUZZTIME (a duration, or
# a count of executions like 10000x). A failure leaves the input under the
# package's testdata/fuzz/; commit it as a regression seed (plain `go test`
# replays it) and fix the bug.
#
# Go 1.26's fuzz coordinator can end a duration run with a bare "context
# deadline exceeded" and no input written (go.dev/issue/75804, fixed in Go
# 1.27): its deadline races the workers' shutdown. Such a run is reported
# and not counted as a failure only if it wrote no input and the target's
# corpus then replays clean; any other failure stops the loop.
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	./codec:FuzzDecode \
	./codec:FuzzJSONHeader \
	./codec:FuzzBinaryHeader \
	./codec:FuzzReadCommandChunks \
	./codec/body:FuzzDecodeRegisterBroker \
	./codec/body:FuzzCompressedLayout \
	./codec/body:FuzzAppendJSON \
	./codec/body:FuzzDecodeKVTable \
	./codec/body:FuzzDecodeTopicRoute \
	./codec/body:FuzzDecodeClusterInfo \
	./codec/body:FuzzDecodeTopicList \
	./codec/body:FuzzDecodeControllerBodies \
	./core/controller:FuzzDecodeBatch \
	./core/controller:FuzzRestore \
	./core/kv:FuzzOpen \
	./core/routesnap:FuzzDecode \
	./codec/properties:FuzzParse \
	./codec/properties:FuzzDocument \
	./core/config:FuzzApply
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f "$$log"' EXIT; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; dir=$$pkg/testdata/fuzz/$$name; \
		before=$$(ls "$$dir" 2>/dev/null | wc -l); \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		if $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg >"$$log" 2>&1; then \
			cat "$$log"; continue; \
		fi; \
		cat "$$log"; \
		after=$$(ls "$$dir" 2>/dev/null | wc -l); \
		if [ "$$after" = "$$before" ] && grep -q '^    context deadline exceeded$$' "$$log" && \
			! grep -q -e 'Failing input written' -e '^panic' -e 'Error Trace' "$$log" && \
			$(GO) test -count=1 -run "^$$name\$$" $$pkg; then \
			echo "fuzz $$name: coordinator deadline race (go.dev/issue/75804), no input written, corpus replays clean"; \
			continue; \
		fi; \
		exit 1; \
	done

# A fixed number of executions of each target, for CI: a count has no
# wall-clock deadline, so the coordinator race above cannot happen there.
FUZZCOUNT ?= 10000x
fuzz-ci:
	$(MAKE) fuzz FUZZTIME=$(FUZZCOUNT)

# The kill -9 durability test alone (it also runs in `make e2e`).
durability:
	$(GO) test -tags e2e -count=1 -run '^TestDurability$$' -v ./cmd/namesrv

# The chaos and soak suite at full size: 300 simulated brokers x 10k topics,
# expiry, dropped connections, register/unregister races, reconnect storms,
# the resource attacks (TestSoakAttacks: partial 16 MiB frames, pipeliners
# that never read, a connection flood, huge registrations; live heap under
# the budget plus overhead), the controller's (TestSoakControllerAttacks: a
# stranger's state changes and spoofed heartbeats, the attack report's flood
# of 20,000 broker sets and 200,000 liveness entries against the bounds, the
# status page over the flooded state), the controller's raft attacks
# (TestRaftAttacks: forged entries, forced elections, huge terms, 20,000
# held connections), and the randomized differential suites against the
# model of the Java rules (in process and over the wire) with many more
# seeds, with -race
# (several minutes on two cores). `make e2e` runs the chaos and route-table
# soaks at a small size, `make test` the controller's attack suites at a
# small size and the differential suites with a few seeds; `make test-short`
# skips them.
SOAKFLAGS ?= -race
soak:
	ROCKETNS_SOAK=1 $(GO) test -tags e2e $(SOAKFLAGS) -count=1 -timeout 30m -run '^(TestSoak|TestDifferential|TestWireDifferential|TestOneIDTwoAddressesAgree|TestRaftAttacks)' -v ./core/route/... ./core/server ./core/ctlserver

# Micro-benchmarks beside the hot path (codec, shard, route, kv).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./codec/... ./shard/... ./core/...

# The load generator (bench/): bin/nsbench -h lists scenarios and flags.
loadgen:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/nsbench ./bench/cmd/nsbench

# The container image, stamped with the same version as the binaries.
IMAGE ?= rocketns
image:
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE):$(VERSION) .

# The version the binaries are stamped with.
version:
	@echo $(VERSION)

# Every scenario for about a second against an in-process server.
loadgen-smoke:
	$(GO) test -tags e2e -count=1 -run TestSmokeScenarios -v ./bench/...

clean:
	rm -rf $(BIN)

# A 30 s CPU profile and a heap profile of bin/namesrv under the route
# scenario, saved to pprof/out/. pprof/README.md says how to read them.
PROFILE_PORT ?= 19877
PPROF_ADDR   ?= 127.0.0.1:16061
profile: build loadgen
	@mkdir -p pprof/out
	@dir=$$(mktemp -d); \
	./$(BIN)/namesrv --bindAddress 127.0.0.1 --listenPort $(PROFILE_PORT) --kvConfigPath $$dir/kv.json \
		--set configStorePath=$$dir/namesrv.properties --logLevel warn --pprof-addr $(PPROF_ADDR) & pid=$$!; \
	trap "kill $$pid 2>/dev/null; wait $$pid 2>/dev/null; rm -rf $$dir" EXIT; sleep 1; \
	./$(BIN)/nsbench -addr 127.0.0.1:$(PROFILE_PORT) -server-pid $$pid -scenario route -brokers 4 -topics 1000 \
		-per-topic 2 -conns 32 -depth 4 -duration 40s -limit=false -quiet & load=$$!; \
	sleep 5; \
	$(GO) tool pprof -proto -output pprof/out/cpu.pprof "http://$(PPROF_ADDR)/debug/pprof/profile?seconds=30" && \
	$(GO) tool pprof -proto -output pprof/out/heap.pprof "http://$(PPROF_ADDR)/debug/pprof/heap" && \
	$(GO) tool pprof -proto -output pprof/out/mutex.pprof "http://$(PPROF_ADDR)/debug/pprof/mutex"; \
	wait $$load; echo "profiles in pprof/out: go tool pprof -top bin/namesrv pprof/out/cpu.pprof"
