# The two commands:  make run   |   make test
# Everything else is here for developers: make build, make models, make format.

MAKEFLAGS += --no-print-directory
BUILD   ?= build
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=
ifeq ($(CI),true)
  CMAKE_FLAGS += -DRAGD_WERROR=ON
endif
DATA    ?= $(HOME)/.local/share/ragd
VENV    := $(BUILD)/venv

.PHONY: run test build build-server configure deps test-deps models venv format clean

run: deps models build-server
	@mkdir -p $(DATA)
	$(BUILD)/ragd serve --data $(DATA) --ingest-if-empty docs/sample

test: test-deps models build venv
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 1800

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
