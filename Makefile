# ccarena: everything a fresh Debian 12 machine needs, installed into the
# project-local .venv (Python 3.11 and cargo are assumed; apt packages are
# installed only when missing).
#
#   make deps    system packages + .venv with the Python dependencies
#   make build   compile the simulator into .venv (maturin) and the live engine's delay line
#   make test    cargo tests + pytest (warnings are errors)
#   make demo    BBR 10 ms vs 50 ms on 100 Mbit/s -> runs/demo
#   make bench   simulator speed (and ns-3.44's, if installed); a 1 Gbit/s parking lot of 100 flows, 100,000 short flows (~25 s)
#   make reproduce        every figure of the BBQ paper -> runs/reproduce/index.md
#   make bench-reproduce  wall time of `ccarena reproduce all` (budget: 15 min)
#   make bench-delayline  live delay line throughput and CPU (root; a 10-s live run at 10 Gbit/s, one at 1 Gbit/s)
#   make bench-agreement  simulator vs live on every example, full length (root; ~25 min)
#   make bench-parking-lot  the parking lot's max-min shares, BBR and CUBIC: 10 simulator seeds vs 5 live runs each (root; ~15 min)
#   make bench-fidelity   simulator (host models) vs repeated kernel runs, flow by flow, and a lone BBR flow's queue (live part cached in docs/; --live: root, ~80 min)
#   make bench-slow-start  where a CUBIC flow's HyStart leaves slow start: simulator seeds vs live runs on both bottlenecks (ARGS="--live N": N runs on each, root; ~2 min for 6)
#   make bench-sweep      a 200-point sweep (BBR 10 vs 50 ms, 60 s each) on all cores: points/min, overhead outside the engine
#   make bench-scorecard  the scorecard of every algorithm, twice (seeds 1-5, 6-10): wall time, Kendall's tau of the rankings
#   make bench-memory     peak RSS of one BBR flow at 10 Gbit/s for 60 s and 600 s simulated, hock-single's 10 Gbit/s flow, `ccarena run` on a 10M-line link trace and on 100,000 workload flows (~3 min)

SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV        := .venv
PY          := $(VENV)/bin/python
DEPS_STAMP  := $(VENV)/.deps.stamp
# The native module maturin builds in place; its presence is the build stamp.
CORE_SO     := python/ccarena/_core.abi3.so
# For the BPF build test of cc/*.c (clang -target bpf, vmlinux.h from bpftool).
APT_PACKAGES := clang llvm bpftool libbpf-dev
# The live engine's testbed (ip, tc; sysctl), and iperf3 for `live run --app iperf3`.
APT_PACKAGES += iproute2 procps iperf3
# The HTML report's test: a real headless browser (Debian's chromium, driven by Selenium).
APT_PACKAGES += chromium chromium-driver
# The live engine's userspace delay line (crates/delayline).
DELAYLINE := target/release/delayline
# Anything that changes the native module; Python sources are installed
# editable by maturin and need no rebuild.
NATIVE_SOURCES := Cargo.toml $(wildcard Cargo.lock) pyproject.toml \
	$(shell find crates cc tests/cc -path crates/delayline -prune -o -type f \( -name '*.rs' -o -name '*.c' -o -name '*.h' -o -name 'Cargo.toml' \) -print 2>/dev/null)

NS3_VENV := .ns3venv
NS3_BIN  := bench/ns3-build/dumbbell344
NS3_SRC  := ../shared/peers/ns3/dumbbell.cc

.PHONY: help deps build test demo bench bench-ns3-setup reproduce bench-reproduce bench-delayline bench-agreement bench-parking-lot bench-fidelity bench-slow-start bench-memory bench-sweep bench-scorecard clean

help:
	@sed -n '/^#   make/s/^#   //p' Makefile

# Root installs directly; otherwise through sudo when there is one.
SUDO := $(shell [ "$$(id -u)" = 0 ] || command -v sudo)

define apt_install_missing
	missing=""; \
	for p in $(1); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "apt-get install:$$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps: $(DEPS_STAMP)

$(DEPS_STAMP): pyproject.toml Makefile
	@$(call apt_install_missing,$(APT_PACKAGES))
	@test -x $(PY) || python3 -m venv $(VENV)
	@# One list of Python requirements: pyproject.toml's build, runtime and test sets.
	@$(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb")); \
		print("\n".join(p["build-system"]["requires"] + p["project"]["dependencies"] \
		+ p["project"]["optional-dependencies"]["test"]))' > $(VENV)/requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check -r $(VENV)/requirements.txt
	@touch $@

build: $(CORE_SO) $(DELAYLINE)

$(DELAYLINE): Cargo.toml $(wildcard Cargo.lock) $(shell find crates/delayline -type f 2>/dev/null)
	cargo build --release -p delayline

$(CORE_SO): $(DEPS_STAMP) $(NATIVE_SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release
	@test -x $(VENV)/bin/ccarena
	@touch $@

test: build
	cargo test --release --workspace
	$(VENV)/bin/pytest -W error tests/

demo: build
	$(VENV)/bin/ccarena run examples/bbr-rtt-unfairness.toml --out runs/demo

bench: build
	$(PY) bench/bench_sim.py

reproduce: build
	$(VENV)/bin/ccarena reproduce all --out runs/reproduce

bench-reproduce: build
	$(PY) bench/bench_reproduce.py

bench-delayline: build
	$(PY) bench/bench_delayline.py

bench-agreement: build
	$(PY) bench/bench_agreement.py

bench-parking-lot: build
	$(PY) bench/bench_parking_lot.py $(ARGS)

bench-fidelity: build
	$(PY) bench/bench_fidelity.py $(ARGS)

bench-slow-start: build
	$(PY) bench/bench_slow_start_exit.py $(ARGS)

bench-memory: build
	$(PY) bench/bench_memory.py

bench-sweep: build
	$(PY) bench/bench_sweep.py

bench-scorecard: build
	$(PY) bench/bench_scorecard.py

# ns-3.44 for `make bench`'s comparison, per ../shared/peers/ns3/README.md.
bench-ns3-setup: $(NS3_BIN)

$(NS3_VENV)/.installed:
	@$(call apt_install_missing,time g++)
	test -x $(NS3_VENV)/bin/pip || python3 -m venv $(NS3_VENV)
	$(NS3_VENV)/bin/pip install -q --disable-pip-version-check ns3==3.44.post0
	@touch $@

$(NS3_BIN): $(NS3_VENV)/.installed $(NS3_SRC)
	@mkdir -p $(@D)
	W=$$(echo $(abspath $(NS3_VENV))/lib/python3*/site-packages/ns3); \
	g++ -std=c++20 -O2 -I$$W/include -o $@ $(NS3_SRC) -L$$W/lib64 -Wl,-rpath,$$W/lib64 \
		-lns3.44-applications -lns3.44-point-to-point -lns3.44-internet -lns3.44-traffic-control \
		-lns3.44-network -lns3.44-bridge -lns3.44-stats -lns3.44-core

clean:
	rm -rf runs target python/ccarena/_core*.so
