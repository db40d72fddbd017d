# poot — top-level build. `make` builds, `make check` installs what is needed,
# builds, runs every test, then the unit tests under ASan+UBSan and the fuzzers.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
CMAKE_FLAGS ?=
FUZZ_CC    ?= $(shell command -v clang-19 || command -v clang)

.PHONY: all deps configure build test asan fuzz check demo clean format

all: build

deps:
	@scripts/deps.sh

configure:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE fuzz

asan:
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPOOT_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) -L unit

fuzz:
	@CC=$(FUZZ_CC) cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOOT_FUZZ=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@cd $(FUZZ_BUILD) && ctest --output-on-failure -j $(JOBS) -L fuzz

check: deps
	@$(MAKE) --no-print-directory test
	@$(MAKE) --no-print-directory asan
	@$(MAKE) --no-print-directory fuzz

# Generate text with the bundled demo model (models/poot-demo.gguf) on the
# best device present (ptx, rocm, vulkan, wgpu; lavapipe runs Vulkan on the CPU).
DEMO_PROMPT ?= Once upon a time
demo: deps build
	@$(BUILD)/tools/poot generate -p "$(DEMO_PROMPT)" -n 200 --temp 0
	@echo

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
