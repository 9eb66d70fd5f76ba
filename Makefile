# Shoal — the two commands a new machine needs are `make run` and `make test`.
# Every target installs what it needs first (scripts/bootstrap is idempotent).

SHELL := /bin/bash
SHOAL := build/apps/shoal
FUZZ_SECONDS ?= 15

.PHONY: all bootstrap configure build run down test unit fuzz-build fuzz-smoke fuzz bench \
        asan tsan format format-check lint clean

all: build

bootstrap:
	@scripts/bootstrap

configure: bootstrap
	@cmake --preset default >/dev/null

build: configure
	@cmake --build --preset default

# Start Shoal's main job on the embedded default: a local broker, the planes and the seat daemon
# with two DEMO seats (scripts/demo-seats: a scripted demo agent, not an AI), then show it all.
run: build
	@$(SHOAL) up
	@scripts/demo-seats build/apps
	@$(SHOAL) status
	@$(SHOAL) daemon status
	@echo "→ try: $(SHOAL) send dm \"Demo Ada\" \"hello\" --wait surfaced   then: $(SHOAL) ps   (stop: $(SHOAL) down)"

down: build
	@$(SHOAL) down

# Everything CI runs: formatting, the fuzz smoke run, then every CTest test (unit + integration).
test: build format-check fuzz-smoke
	@ctest --preset default

unit: build
	@ctest --preset unit

fuzz-build: bootstrap
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz --target fuzz_all

fuzz-smoke: fuzz-build
	@fuzz/run.sh $(FUZZ_SECONDS) build-fuzz

fuzz: fuzz-build
	@fuzz/run.sh 300 build-fuzz

# SHOAL_BENCH_QUICK=1 shrinks dm_bench, roster_bench, seat_bench and channel_bench to CI size
# (bench/README.md).
bench: build
	@build/bench/wire_bench
	@build/bench/journal_bench
	@build/bench/dm_bench
	@build/bench/roster_bench
	@build/bench/seat_bench
	@build/bench/channel_bench

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
