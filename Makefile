# The two commands a newcomer runs are `make demo` and `make test`; every other target is
# something they pull in. Heavy artifacts live in $(KAFKASTACK_CACHE), outside the repo, and
# each install script returns at once when its pinned artifact is already there.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
export KAFKASTACK_CACHE ?= $(HOME)/.cache/kafkastack
export PATH := $(CURDIR)/$(VENV)/bin:$(KAFKASTACK_CACHE)/bin:$(PATH)

.PHONY: demo test test-setup heavy-nodes heavy-others lint unit venv lock toolchain doctor nodes-toolchain images kafka-jars spark-jars spark-cds system-deps bench clean

venv: $(VENV)/.installed

# uv installs the locked packages (about 30 s where pip took 1 min warm and 4 min cold); it lives
# in the cache, one folder per pinned version, and also re-resolves the lock (`make lock`).
UV_VERSION := 0.13.9
UV := $(KAFKASTACK_CACHE)/uv-$(UV_VERSION)/bin/uv
# Its cache is ours too, pruned after each install: pyspark comes as a source archive, and each
# build of it left 1.3 GiB there (34 GiB after a day of fresh clones on one machine).
export UV_CACHE_DIR := $(KAFKASTACK_CACHE)/uv-cache
$(UV):
	$(PYTHON) -m venv $(KAFKASTACK_CACHE)/uv-$(UV_VERSION)
	$(KAFKASTACK_CACHE)/uv-$(UV_VERSION)/bin/pip install -q uv==$(UV_VERSION)

# Reinstall only when the dependencies change. Every package comes from requirements.lock,
# checked against its recorded hashes; the project itself is added without resolving anything.
# --seed: pip in the venv too (the packaging test builds a wheel with it).
# From uv's cache alone first (--offline): online, uv asks the index about pyspark's source
# archive again, gets no answer it may cache, and so builds pyspark anew (31 CPU-seconds, 37 s
# of every fresh clone's set-up); from the cache the venv takes 1 s. When the cache lacks a
# locked package (a fresh machine, a changed lock), the install goes online.
$(VENV)/.installed: pyproject.toml requirements.lock | $(UV)
	scripts/check-java.sh
	test -x $(VENV)/bin/python || $(UV) venv -q --seed --python $(PYTHON) $(VENV)
	$(UV) pip install -q --offline --python $(VENV)/bin/python --require-hashes -r requirements.lock \
	  2>/dev/null || { echo "uv's cache lacks a locked package: installing online" >&2; \
	  $(UV) pip install -q --python $(VENV)/bin/python --require-hashes -r requirements.lock; }
	$(UV) pip install -q --python $(VENV)/bin/python --no-deps -e .
	$(UV) cache prune -q
	touch $@

# Re-resolve requirements.lock after changing dependencies in pyproject.toml (review the diff).
lock: | $(UV)
	$(UV) pip compile pyproject.toml --extra dev --generate-hashes \
	  --python-version 3.11 --python-platform x86_64-unknown-linux-gnu -q -o requirements.lock

system-deps:
	scripts/install-system-deps.sh

# The jars, then the class archive their JVMs map (a broker starts in about half the CPU time).
kafka-jars: system-deps
	scripts/kafka/fetch.sh
	scripts/kafka/class-archive.sh

# Spark's s3a connector at the pyspark wheel's Hadoop version (the venv tells which).
spark-jars: venv system-deps
	scripts/spark/fetch.sh

# The driver JVM's class archive (spark_sizing/class_archive.py): about a minute once per JDK and
# set of pyspark jar files (checkouts whose venv came from uv's cache share one: seconds), then
# every Spark start is seconds shorter.
spark-cds: venv
	$(VENV)/bin/python -m spark_sizing.class_archive_recorder

toolchain:
	scripts/toolchain/build-all.sh

# Every engine, cluster and node binary present, and the engine's versions equal to the SDK's.
doctor: venv toolchain nodes-toolchain
	$(VENV)/bin/kafkastack doctor

# Real nodes (the `nodes` tier, docs/real-nodes.md): kubelet and kube-proxy from the control
# plane's module, containerd 2.x, CoreDNS, Multus (the second network); then the images they
# run, built here (no registry is reachable; the CoreDNS image holds the binary built here).
# After the control plane: the kubelet is built from the same wrapper module and pins, and from a
# Go build cache the control plane's build has filled (317 s instead of 554 s cold). Then the Go
# caches go: the real nodes need the disk more than a rebuild of the same pins needs them.
nodes-toolchain: toolchain
	scripts/toolchain/build-kubelet.sh
	scripts/toolchain/build-containerd.sh
	scripts/toolchain/build-coredns.sh
	scripts/toolchain/build-multus.sh
	scripts/toolchain/drop-go-caches.sh

# Kafka 4.3.1, and Kafka 3.9.1 with ZooKeeper for the 3.9 mode (kafka-jars fetches both lines).
images: system-deps kafka-jars nodes-toolchain
	scripts/images/build.sh

# mypy's cache lives outside the checkout, as the engine's typechecker's does (infra/engine.py),
# but apart from it (other options): a fresh clone checks its modules by content hash against
# it instead of checking all from scratch (65 CPU-seconds).
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	MYPY_CACHE_DIR=$(KAFKASTACK_CACHE)/mypy-lint $(VENV)/bin/mypy infra spark_sizing kafkastack bench

# No JVM, no Go-built binary, no server: runs on a fresh clone after `make venv`, in a random
# order each time (pytest-randomly prints the seed to repeat it).
UNIT := not spark and not s3 and not kafka and not engine and not cluster and not toolchain and not nodes
unit: venv
	$(VENV)/bin/pytest -p randomly -m "$(UNIT)" $(PYTEST_ARGS)

# Everything the suite needs. `make test` builds it in two lanes: the Go builds keep the two cores
# busy while the venv, the Maven downloads and Spark's class archive wait on the network and disk.
test-setup: venv system-deps kafka-jars spark-jars spark-cds doctor nodes-toolchain images lint

# The tests in two lanes: the real nodes beside everything else. One after the other the heavy
# tiers left the cores 44 % idle (they wait on probes, elections, pod starts), so side by side
# they share the cores instead of queueing. The nodes lane is the longer one and starts at once;
# the other opens with the fast tier (in a random order), then the other heavy tiers. Each
# lane has its own temporary folder and prints its slowest steps, so the log shows where the
# suite's time budget goes; each command's output shows once it ends (the fast tier's first).
HEAVY := not ($(UNIT))
LANE_TMP ?= $(or $(TMPDIR),/tmp)/kafkastack-lanes
HEAVY_PYTEST = $(VENV)/bin/pytest -p no:randomly -p no:cacheprovider --durations=20 \
  --basetemp=$(LANE_TMP)/$@ $(PYTEST_ARGS)
test:
	$(MAKE) --jobs=2 --output-sync=target test-setup
	$(MAKE) --jobs=2 --output-sync=line heavy-nodes heavy-others

heavy-nodes:
	mkdir -p $(LANE_TMP)
	$(HEAVY_PYTEST) -m nodes

heavy-others:
	mkdir -p $(LANE_TMP)
	$(VENV)/bin/pytest -p randomly -m "$(UNIT)" $(PYTEST_ARGS)
	$(HEAVY_PYTEST) -m "$(HEAVY) and not nodes"

demo: venv spark-cds toolchain
	$(VENV)/bin/kafkastack demo

bench: venv spark-cds toolchain
	$(VENV)/bin/python bench/sizing.py
	$(VENV)/bin/python bench/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache out demo-out
