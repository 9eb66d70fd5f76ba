# Shoal — the two commands a new machine needs are `make run` and `make test`.
# Every target installs what it needs first (scripts/bootstrap is idempotent).

SHELL := /bin/bash
SHOAL := build/apps/shoal
FUZZ_SECONDS ?= 10
# `make install`: ~/.local without root, /usr/local as root (override with PREFIX=…).
PREFIX ?= $(if $(filter 0,$(shell id -u)),/usr/local,$(HOME)/.local)
# Extra flags for `shoal up` in `make run` (e.g. SHOAL_UP_FLAGS="--port 4300").
SHOAL_UP_FLAGS ?=
# How the `try` line names the binary: `shoal` when one is on PATH (`make install`).
TRY := $(if $(shell command -v shoal 2>/dev/null),shoal,$(SHOAL))

.PHONY: all bootstrap configure build build-run run down install test unit fuzz-build \
        fuzz-smoke fuzz fuzz-long soak bench asan tsan format format-check lint check-docs check-structure clean

all: build

bootstrap:
	@scripts/bootstrap

# Configured once; afterwards the build itself re-runs CMake when a CMakeLists.txt changes.
configure: bootstrap
	@test -f build/build.ninja || cmake --preset default >/dev/null

build: configure
	@cmake --build --preset default

# Only what running needs: the `shoal` binary and the demo agent (not the test suite).
build-run: configure
	@cmake --build --preset default --target shoal shoal-ack shoal-demo-agent

# Start Shoal's main job on the embedded default: a local broker, the planes and the seat daemon
# with two DEMO seats (scripts/demo-seats: a scripted demo agent, not an AI), then show it all.
# Rerunnable: a mesh that is up and seats that exist are left as they are.
run: build-run
	@$(SHOAL) up $(SHOAL_UP_FLAGS)
	@scripts/demo-seats build/apps
	@$(SHOAL) status
	@$(SHOAL) daemon status
	@echo "→ try: $(TRY) send dm \"Demo Ada\" \"hello\" --wait replied   then: $(TRY) inbox   (stop: make down)"

down: build-run
	@$(SHOAL) down

# `shoal`, `shoal-ack` and `shoal-demo-agent` into $(PREFIX)/bin, and shell completion for bash.
install: build-run
	@cmake --install build --prefix "$(PREFIX)" >/dev/null
	@mkdir -p "$(PREFIX)/share/bash-completion/completions"
	@$(SHOAL) completion bash > "$(PREFIX)/share/bash-completion/completions/shoal"
	@echo "✓ installed shoal, shoal-ack and shoal-demo-agent in $(PREFIX)/bin (bash completion too)"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "! $(PREFIX)/bin is not on your PATH: add it (export PATH=\"$(PREFIX)/bin:\$$PATH\")";; esac

# Everything CI runs: formatting, the docs and structure checks, the fuzz smoke run, then every
# CTest test.
test: build format-check check-docs check-structure fuzz-smoke
	@ctest --preset default

# The docs point at nothing outside the repository, and module READMEs match the code.
check-docs:
	@scripts/check-docs

# No #include crosses the module layers upwards; no .cc over 1,500 lines, no header over 300.
check-structure:
	@scripts/check-structure

unit: build
	@ctest --preset unit

fuzz-build: bootstrap
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz --target fuzz_all

fuzz-smoke: fuzz-build
	@fuzz/run.sh $(FUZZ_SECONDS) build-fuzz

fuzz: fuzz-build
	@fuzz/run.sh 300 build-fuzz

# The long tier (not in `make test`): every fuzz target to FUZZ_RUNS executions (docs/reliability.md).
FUZZ_RUNS ?= 10000000
fuzz-long: fuzz-build
	@fuzz/run.sh --runs $(FUZZ_RUNS) build-fuzz

# The soak (not in `make test`): SOAK_SECONDS of mixed traffic through the real binary with random
# daemon, runtime and broker kills, counting by id what each runtime read (tests/soak/README.md).
SOAK_SECONDS ?= 3600
soak: build-run
	@tests/soak/run.sh $(SOAK_SECONDS)

# SHOAL_BENCH_QUICK=1 shrinks dm_bench, roster_bench, seat_bench, channel_bench and burst_bench to CI size
# (bench/README.md).
bench: build
	@build/bench/wire_bench
	@build/bench/journal_bench
	@build/bench/dm_bench
	@build/bench/roster_bench
	@build/bench/seat_bench
	@build/bench/channel_bench
	@build/bench/burst_bench

asan: bootstrap
	@cmake --preset asan >/dev/null && cmake --build --preset asan && ctest --preset asan

tsan: bootstrap
	@cmake --preset tsan >/dev/null && cmake --build --preset tsan && ctest --preset tsan

FORMAT_FILES = $(shell git ls-files '*.h' '*.cc')

format:
	@clang-format -i $(FORMAT_FILES)

format-check:
	@clang-format --dry-run --Werror $(FORMAT_FILES) && echo "✓ formatting"

lint: configure
	@run-clang-tidy -quiet -p build $(filter %.cc,$(FORMAT_FILES))

clean:
	@rm -rf build build-asan build-tsan build-fuzz
