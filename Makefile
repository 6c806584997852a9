# The two commands:  make run   |   make test
# Everything else is here for developers: make build, make models, make format,
# make test SANITIZE=1 (the C++ unit tests under ASan + UBSan, in build-asan/),
# make fuzz SECONDS=N (every libFuzzer target N seconds, clang, in build-fuzz/),
# make install PREFIX=/usr/local (cmake --install).

MAKEFLAGS += --no-print-directory
BUILD   ?= build
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=
ifeq ($(CI),true)
  CMAKE_FLAGS += -DRAGD_WERROR=ON
endif
DATA    ?= $(HOME)/.local/share/ragd
VENV    := $(BUILD)/venv

SECONDS ?= 60
FUZZ_BUILD ?= build-fuzz
PREFIX  ?= /usr/local

.PHONY: run test build build-server build-sanitize configure deps test-deps models venv format clean fuzz install

run: deps models build-server
	@mkdir -p $(DATA)
	$(BUILD)/ragd serve --data $(DATA) --ingest-if-empty docs/sample

ifeq ($(SANITIZE),1)
# The C++ unit tests only (the asan-ubsan test preset leaves out e2e and the
# eval gate, which need the release binary and take long).
test: test-deps models build-sanitize
	ctest --preset asan-ubsan -j $(JOBS) --timeout 1800
else
test: test-deps models build venv
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 1800
endif

deps:
	@scripts/install-deps

test-deps:
	@scripts/install-deps --test

models:
	@scripts/fetch-models

configure:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release --log-level=WARNING $(CMAKE_FLAGS)

# Everything: server, tests, benchmarks.
build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The server alone (what `make run` needs).
build-server: configure
	@cmake --build $(BUILD) -j $(JOBS) --target ragd

# AddressSanitizer + UndefinedBehaviorSanitizer build (CMakePresets.json: asan-ubsan).
build-sanitize:
	@cmake --preset asan-ubsan --log-level=WARNING $(CMAKE_FLAGS)
	@cmake --build --preset asan-ubsan -j $(JOBS)

# ragd, its pages, the default configuration and the systemd unit under
# $(PREFIX) (cmake/Install.cmake); DESTDIR=/some/root stages them for a package.
install: build-server
	cmake --install $(BUILD) --prefix $(PREFIX)

# The libFuzzer targets of tests/fuzz/, built with clang + ASan + UBSan in
# $(FUZZ_BUILD)/ and run SECONDS seconds each, one after another; prints
# executions, exec/s and crashes per target (tests/fuzz/README.md).
fuzz: test-deps models
	@tests/fuzz/run-fuzz --build-dir $(FUZZ_BUILD) --seconds $(SECONDS) --jobs $(JOBS)

# Python clients for the black-box tests (openai, selenium), kept inside build/.
venv: $(VENV)/.ready
$(VENV)/.ready: tests/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r tests/requirements.txt
	@touch $@

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf $(BUILD)
