# courier's everyday tasks. `make test` is the one command that runs every
# test; CI runs exactly that.

GO ?= go
TASK ?=
BIN := bin/courier

.PHONY: all build run test vet bench bench-go fuzz crash-test install clean

all: build

# courier is built without cgo: a static binary, which starts a few
# milliseconds sooner and runs on any Linux of the same architecture,
# such as the machine without internet that the code lives on.
STATIC := CGO_ENABLED=0

# 'courier --version' names the commit it was built from, passed here so
# that it does not depend on go's VCS stamping (none in a git worktree,
# nor with GOFLAGS=-buildvcs=false).
STAMP = -ldflags "-X github.com/courier-agent/courier/internal/cli.stamped=$$(git describe --tags --always --dirty=+changes --abbrev=12 2>/dev/null)"

build:
	$(STATIC) $(GO) build $(STAMP) -o $(BIN) ./cmd/courier

# Start a session in this folder: make run TASK="write hello.py that prints hello"
run:
	@test -n "$(TASK)" || { echo 'usage: make run TASK="what the LLM should do"'; exit 2; }
	$(STATIC) $(GO) run ./cmd/courier new "$(TASK)"

vet:
	@out=$$(gofmt -l cmd internal prompts); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	# courier builds for Windows and macOS too, where nothing confines
	# commands and each waits for the person's yes.
	GOOS=windows $(GO) vet ./...
	GOOS=darwin $(GO) vet ./...

# gotestsum prints each package's result, then each skipped test with its
# reason and the whole output of each failing test.
GOTESTSUM := gotest.tools/gotestsum@v1.13.0
test: vet
	$(GO) run $(GOTESTSUM) --format pkgname -- ./...

# The speed and memory floors, each measured (Go benchmarks, real courier
# processes, courier side by side with repomix, a real 'courier watch') and
# printed as a table saying whether each is met. BENCH_FLAGS="-quick" for a
# first look, BENCH_FLAGS="-rows parsed" for some rows only.
BENCH_FLAGS ?=
bench:
	$(GO) run ./cmd/courier-bench $(BENCH_FLAGS)

# Every Go benchmark of every package, without the table.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Fuzz the reply parser (FUZZTIME=10m for a longer run).
FUZZTIME ?= 2m
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./internal/protocol/

# The crash test with many more kill points than `make test` uses.
CRASH_ITERATIONS ?= 300
crash-test:
	COURIER_CRASH_ITERATIONS=$(CRASH_ITERATIONS) $(GO) test -run TestCrash -count=1 -timeout 60m -v ./cmd/courier/

install:
	$(STATIC) $(GO) install $(STAMP) ./cmd/courier

clean:
	rm -rf bin
