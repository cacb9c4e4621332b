# locklab's commands. `make test` is what CI runs; `make help` lists the rest.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO      ?= go
BIN     := $(CURDIR)/bin
TOOLS   := $(CURDIR)/tools
PROTOC_VERSION := 3.21.12

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# --- tools: every version pinned in tools/go.mod or here -----------------------

# protoc's Go plugins and k6, as tools/go.mod names them (make tools builds
# all three in one go build).
PROTOC_PLUGINS := google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc
K6_PKG         := go.k6.io/k6

$(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc &: $(TOOLS)/go.mod $(TOOLS)/go.sum
	@mkdir -p $(BIN)
	cd $(TOOLS) && $(GO) build -o $(BIN)/ $(PROTOC_PLUGINS)

.PHONY: protoc
protoc: ## install protoc from Debian if it is missing (pinned by PROTOC_VERSION)
	@if ! command -v protoc >/dev/null; then \
		echo "installing protobuf-compiler from Debian"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq protobuf-compiler >/dev/null; fi
	@v=$$(protoc --version | awk '{print $$2}'); if [ "$$v" != "$(PROTOC_VERSION)" ]; then \
		echo "protoc $$v found, $(PROTOC_VERSION) wanted: generated code would differ" >&2; exit 1; fi

.PHONY: proto
proto: protoc $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc ## regenerate the Go code from proto/
	PATH=$(BIN):$$PATH protoc -I proto \
		--go_out=proto --go_opt=paths=source_relative \
		--go-grpc_out=proto --go-grpc_opt=paths=source_relative \
		proto/locklab/v1/locklab.proto

.PHONY: proto-check
proto-check: proto ## fail if the checked-in generated code is stale
	@git diff --exit-code -- proto || { echo "generated code in proto/ is stale: run 'make proto' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- proto 2>/dev/null)"

# k6 is built from source at the version pinned in tools/go.mod (no prebuilt
# downloads); it is rebuilt only when tools/go.mod or tools/go.sum change.
# tools/go.mod requires the modules k6 shares with the server (grpc, x/net,
# protobuf, the Prometheus client, go-redis, …) at go.mod's versions, so
# that make test compiles each shared package once for both
# (internal/housecheck's TestToolsShareVersions keeps them so).
$(BIN)/k6: $(TOOLS)/go.mod $(TOOLS)/go.sum
	@mkdir -p $(BIN)
	cd $(TOOLS) && $(GO) build -o $(BIN)/k6 $(K6_PKG)
	@touch $@

.PHONY: k6
k6: $(BIN)/k6 ## build the pinned k6 (tools/go.mod) into bin/k6

# ghz (the bank seed's load generator) is built from source too, from its own
# tools module (tools/ghz/go.mod), so that its dependencies cannot move k6's;
# the runner refuses any other version than the one pinned there.
$(BIN)/ghz: $(TOOLS)/ghz/go.mod $(TOOLS)/ghz/go.sum
	@mkdir -p $(BIN)
	cd $(TOOLS)/ghz && $(GO) build -o $(BIN)/ghz github.com/bojand/ghz/cmd/ghz
	@touch $@

.PHONY: ghz
ghz: $(BIN)/ghz ## build the pinned ghz (tools/ghz/go.mod) into bin/ghz

# --- the server and the comparison --------------------------------------------

.PHONY: build
build: ## build the server into bin/locklab and the Go load driver into bin/load
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/locklab .
	$(GO) build -o $(BIN)/load ./cmd/load

# h2load (Debian's nghttp2-client) is the counter's ceiling driver: a C
# HTTP/2 load tool that sends one fixed gRPC frame (docs/methodology.md).
.PHONY: h2load
h2load: ## install Debian's nghttp2-client (h2load) if it is missing
	@if ! command -v h2load >/dev/null; then \
		echo "installing nghttp2-client (h2load) from Debian"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq nghttp2-client >/dev/null; fi

# ARGS go to the runner, e.g. make compare ARGS="-driver k6 -ladder -reps 3";
# see `go run ./cmd/compare -h` and docs/methodology.md.
ARGS ?=
RUNNER = GHZ=$(BIN)/ghz $(GO) run ./cmd/compare -k6 $(BIN)/k6 -load $(BIN)/load -server $(BIN)/locklab

.PHONY: compare
compare: build h2load ## the main job: the runner's defaults (go run ./cmd/compare -h), through the validity gate, with an A/A control → results/<timestamp>/ (< 8 min)
	LOCKLAB_COMMAND="make compare$(if $(ARGS), ARGS=\"$(ARGS)\")" $(RUNNER) $(ARGS)

# The validity gate's own trial (docs/validity.md): the same comparison
# beside a bursty background load — a busy loop on every CPU, on for
# BURST_ON of every BURST_EVERY seconds — which the runner must notice,
# rerun around and, where too little is left clean, withhold its verdicts
# over. The load stops with the comparison.
BURST_ON    ?= 1.5
BURST_EVERY ?= 6

.PHONY: compare-busy
compare-busy: build h2load ## make compare beside a bursty background load (busy loops on every CPU, 1.5 s of every 6 s): the gate must see it
	@set -m; ( while :; do \
		for c in $$(seq $$(nproc)); do timeout $(BURST_ON) sh -c 'while :; do :; done' & done; wait; \
		sleep $$(awk 'BEGIN { print $(BURST_EVERY) - $(BURST_ON) }'); done ) & burst=$$!; \
	trap 'kill -- -$$burst 2>/dev/null' EXIT; \
	LOCKLAB_COMMAND="make compare-busy$(if $(ARGS), ARGS=\"$(ARGS)\")" $(RUNNER) $(ARGS)

# The cores study (docs/cores.md), two plans. CORES_CHECK: the server on 1
# and 2 CPUs (on a 2-CPU machine h2load shares the 2-CPU server's CPUs,
# -share-cpus) with no work, 20 µs and 40 µs in every increment: the report's
# model is fitted on the 1-CPU runs at no work and 40 µs and predicts the
# four points it did not see (1 CPU at 20 µs, 2 CPUs at all three).
# CORES_DEMANDS: every design's D_serial and N* without work, on the counter
# and the bank's transfers, at 1 server CPU with the driver on its own.
# cmd/compare's tests read these two lines and check that their runs fit the
# time make help states. Both leave out the A/A control (-aa=false): their
# time goes to the comparisons they exist for, and the default comparison
# states the machine's noise floor.
CORES_OUT     ?= docs/results/cores
CORES_CHECK   := -aa=false -server-cpus 1,2 -share-cpus -reps 5 -work 0,20us,40us -workloads counter -driver h2load -modes mutex,inputQ,inputQ-batch,combining
CORES_DEMANDS := -aa=false -server-cpus 1 -workloads counter,bank-A -driver go -vus 100 -modes all -reps 3

.PHONY: cores
cores: build h2load ## the cores study: a queueing model fitted on some runs predicts those it held out, at 1 and 2 server CPUs; every design's D_serial and N* → docs/results/cores/ (~5.9 min)
	rm -rf $(CORES_OUT)/model $(CORES_OUT)/no-work
	LOCKLAB_COMMAND="make cores: compare $(CORES_CHECK)" $(RUNNER) $(CORES_CHECK) -out $(CORES_OUT)/model $(ARGS)
	LOCKLAB_COMMAND="make cores: compare $(CORES_DEMANDS)" $(RUNNER) $(CORES_DEMANDS) -out $(CORES_OUT)/no-work $(ARGS)

# The crossover study (docs/cores.md, "The crossover"): at 2 server CPUs,
# the work per command at which each owner design overtakes mutex. The
# ladder of work levels runs at 1 CPU too: the model is fitted on the 1-CPU
# runs at no work and 40 µs, predicts the crossover at 2 CPUs, and the
# 2-CPU ladder measures it (the paired ratio's change of sign). cmd/compare's
# tests check its time against make help's.
CROSSOVER_OUT ?= docs/results/crossover
CROSSOVER     := -aa=false -server-cpus 1,2 -share-cpus -reps 6 -work 0,5us,10us,20us,40us -workloads counter -driver h2load -modes mutex,inputQ,inputQ-batch,inputQ-spin

.PHONY: crossover
crossover: build h2load ## the work per command at which each owner design overtakes mutex at 2 server CPUs: predicted by the model from runs at the other count, measured on a ladder of work levels → docs/results/crossover/ (~8.0 min)
	rm -rf $(CROSSOVER_OUT)
	LOCKLAB_COMMAND="make crossover: compare $(CROSSOVER)" $(RUNNER) $(CROSSOVER) -out $(CROSSOVER_OUT) $(ARGS)

# The why study (docs/operations.md, "Where the CPU went"): the server's CPU
# profile folded into categories in every run, two plans. WHY_H2LOAD: the
# default h2load counter group with every combination run with attribution
# and without in each block, so that the report states what attribution
# costs. WHY_CORES: the cores study's 2-CPU case with 20 µs of work in every
# increment, the driver sharing the server's CPUs, with attribution on.
# cmd/compare's tests read these two lines and check that their runs fit the
# time make help states. Neither runs the A/A control (-aa=false), as the
# cores study.
WHY_OUT    ?= docs/results/why
WHY_H2LOAD := -aa=false -workloads counter -driver h2load -h2load-vus 100 -modes mutex,inputQ,noop -attribute off,on -reps 12
WHY_CORES  := -aa=false -server-cpus 2 -share-cpus -work 20us -workloads counter -driver h2load -h2load-vus 100 -modes mutex,inputQ,inputQ-batch,noop -attribute on -reps 11

.PHONY: why
why: build h2load ## where each design's server CPU goes, per category, h2load counter group and the 2-CPU 20 µs case → docs/results/why/ (~4.8 min)
	rm -rf $(WHY_OUT)/h2load $(WHY_OUT)/cores-2cpu-20us
	LOCKLAB_COMMAND="make why: compare $(WHY_H2LOAD)" $(RUNNER) $(WHY_H2LOAD) -out $(WHY_OUT)/h2load $(ARGS)
	LOCKLAB_COMMAND="make why: compare $(WHY_CORES)" $(RUNNER) $(WHY_CORES) -out $(WHY_OUT)/cores-2cpu-20us $(ARGS)

# The ledger study (docs/operations.md, "Where each call's time went"): every
# call's server-side time by state (running, runnable, blocked on a channel
# or a lock, ...) from the server's execution trace, two plans.
# LEDGER_DEFAULT: the default groups (the counter and the bank at 10 and 100
# callers, the server on 1 CPU) with every run traced. LEDGER_CORES: the
# cores study's 2-CPU case with 20 µs of work, every run twice in every
# block, traced and not, so that the report says what tracing costs. Every
# run's record also carries the store's own clocks (the wait for the serial
# resource, the batch), which the server always measures, and the report
# shows them beside the ledger.
# cmd/compare's tests check that their runs fit the time make help states.
LEDGER_OUT     ?= docs/results/ledger
LEDGER_DEFAULT := -aa=false -driver go -modes mutex,inputQ,inputQ-spin,noop -ledger on -reps 6
LEDGER_CORES   := -aa=false -server-cpus 2 -share-cpus -work 20us -workloads counter -driver h2load -modes mutex,inputQ,inputQ-spin,noop -ledger off,on -reps 6

.PHONY: ledger
ledger: build h2load ## where each call's time went, by state, from execution traces: the default groups and the 2-CPU 20 µs case → docs/results/ledger/ (~8.8 min)
	rm -rf $(LEDGER_OUT)/default $(LEDGER_OUT)/cores-2cpu-20us
	LOCKLAB_COMMAND="make ledger: compare $(LEDGER_DEFAULT)" $(RUNNER) $(LEDGER_DEFAULT) -out $(LEDGER_OUT)/default $(ARGS)
	LOCKLAB_COMMAND="make ledger: compare $(LEDGER_CORES)" $(RUNNER) $(LEDGER_CORES) -out $(LEDGER_OUT)/cores-2cpu-20us $(ARGS)

# The runtimes study (docs/runner.md, "The Go runtime as a factor"): the
# server built by two Go releases, every design on both in every block,
# two plans. RUNTIMES_DEFAULT: the default groups (make compare's plan, its
# A/A control included). RUNTIMES_CORES: the cores study's 2-CPU case with
# 20 µs of work in every increment (CORES_CHECK at 2 server CPUs), where
# the runtime's scheduling and locking bind. The go command fetches go1.27.3
# through the module proxy the first time (about 76 MB, into the module
# cache), before the first run; the runner builds one server per runtime
# into bin/runtime/. cmd/compare's tests read these two lines and check
# that their runs fit the time make help states.
comma := ,
RUNTIMES_OUT     ?= docs/results/runtimes
RUNTIMES_DEFAULT := -modes mutex,inputQ,inputQ-spin,noop -runtime go1.26.8,go1.27.3
RUNTIMES_CORES   := -aa=false -server-cpus 2 -share-cpus -reps 11 -work 20us -workloads counter -driver h2load -modes mutex,inputQ,inputQ-spin,inputQ-batch,combining,noop -runtime go1.26.8,go1.27.3

.PHONY: runtimes
runtimes: build h2load ## the designs (the awake owner among them) on go1.26.8 and go1.27.3 in the same blocks: the default groups and the 2-CPU 20 µs case → docs/results/runtimes/ (~21 min)
	@for tc in $(subst $(comma), ,$(lastword $(RUNTIMES_DEFAULT))); do GOTOOLCHAIN=$${tc%%+*} $(GO) version; done
	rm -rf $(RUNTIMES_OUT)/default $(RUNTIMES_OUT)/cores-2cpu-20us
	LOCKLAB_COMMAND="make runtimes: compare $(RUNTIMES_DEFAULT)" $(RUNNER) $(RUNTIMES_DEFAULT) -out $(RUNTIMES_OUT)/default $(ARGS)
	LOCKLAB_COMMAND="make runtimes: compare $(RUNTIMES_CORES)" $(RUNNER) $(RUNTIMES_CORES) -out $(RUNTIMES_OUT)/cores-2cpu-20us $(ARGS)

# The bank over a database (docs/database.md): the default comparison's bank
# group (bank-A, the Go driver, 10 and 100 callers) with the bank in MariaDB,
# a private instance per run that the run's server starts; every design that
# serves it (-modes all: the others are n/a, db-rowlock among those that
# serve), at pools of 1, 9 and 32 connections. 8 blocks: the paired analysis
# needs 5 clean, so a few blocks the machine spoils still leave a verdict
# (with 5, one spoiled block withheld its group's). cmd/compare's tests check
# that its runs fit the time make help states.
BANK_DB_OUT ?= docs/results/bank-db
BANK_DB     := -workloads bank-A -driver go -backend mysql -db-pool 1,9,32 -modes all -reps 8

.PHONY: bank-db
bank-db: build db-servers ## the bank in MariaDB, each run's own: every design that serves it, db-rowlock among them, at database pools of 1, 9 and 32 → docs/results/bank-db/ (~25.7 min)
	rm -rf $(BANK_DB_OUT)
	LOCKLAB_COMMAND="make bank-db: compare $(BANK_DB)" $(RUNNER) $(BANK_DB) -out $(BANK_DB_OUT) $(ARGS)

# The capacity study (docs/methodology.md, "Capacity under an objective"):
# its defaults are the noop probe and floor, then 5 blocks × 6 designs ×
# (4 ladder rates + 2 bisection steps) = 180 runs of 0.25 s warm-up + 1 s,
# about 1.65 s each with starting and stopping, and in every block 17
# overload runs (each design under each policy that applies to it) of
# 0.25 + 1 + 1 s and their overhead: the runner's estimate is 9.3 minutes on
# 2 CPUs, and it prints it before the first run; the validity gate's
# reruns come on top. cmd/compare's tests hold the estimate to this line.
CAPACITY_OUT ?= docs/results/capacity

.PHONY: capacity
capacity: build ## capacity study → docs/results/capacity/: counter × mutex/inputQ/inputQ-batch/combining/sharded/noop, open-model ladder + knee brackets at p99 ≤ 3× the noop server's floor, latency at fixed rates, overload per admission policy in every block (~9.3 min)
	rm -rf $(CAPACITY_OUT)/runs $(CAPACITY_OUT)/runs.tar.gz
	LOCKLAB_COMMAND="make capacity$(if $(ARGS), ARGS=\"$(ARGS)\")" $(RUNNER) -study capacity -out $(CAPACITY_OUT) $(ARGS)

# One run's server profiled: a CPU profile and a runtime trace over its
# measured window, saved beside the run's raw JSON (docs/methodology.md).
# PROFILE picks the run (its number or id) of the plan that ARGS describe.
PROFILE ?= 1
PROFILE_ARGS ?= -driver go -workloads counter -modes inputQ -baseline inputQ -aa=false -vus 100 -reps 1 -duration 5s

.PHONY: profile
profile: build ## CPU profile and runtime trace of one run's server → results/<timestamp>/runs/ (~6 s)
	LOCKLAB_COMMAND="make profile" $(RUNNER) $(PROFILE_ARGS) -profile $(PROFILE) $(ARGS)

# A finished study folder packed for readers: its runs/ (and a logs.tar.gz
# beside it) become one runs.tar.gz, which -rerender, -diff and cmd/seeds
# read in its place. The runner checks that the report renders the same
# bytes from the archive as from runs/ before it removes anything
# (internal/lab/pack). Runs nothing; seconds.
.PHONY: pack-results
pack-results: ## pack a finished study's raw runs into one archive: make pack-results DIR=docs/results/<study> (checks its report first)
	@test -n "$(DIR)" || { echo 'make pack-results: give the study folder, DIR=docs/results/<study>' >&2; exit 2; }
	$(GO) run ./cmd/compare -pack $(DIR)

# --- the seeds: each source experiment in its own table -------------------------

# Every seed writes docs/results/seeds/<seed>/: its raw runs (runs/, meta.json)
# and README.md, the seed's own table beside its published figures
# (internal/lab/seeds). SEED_MODES are the designs side by side.
#
# Time, estimated from runs × durations on 2 CPUs: the runner prints its own
# estimate before the ladder and the nGrinder runs, and make help states it
# (cmd/compare's tests check the lines against it). The ladder is 3 arms (2
# modes and the A/A control's second mutex) × 6 levels × 2 reps = 36 k6 runs
# of 1 s warm-up + 5 s, plus connecting; nGrinder 2 × 3 blocks of the design
# and its A/A twin, 1 s + 5 s each. The bank is 20 ghz runs of 0.5 s warm-up +
# under a second of calls + starting ghz twice, about a minute; rpcx 8 runs of
# 20,000 calls at a few thousand calls/s, about a minute (cmd/seeds prints no
# estimate for those two). The bank over a database is the same rows and its
# four reads again through Redis, 14 runs per design, each a server over a
# private MariaDB (about 2 s to make, start and stop) with its calls at the
# seed's slowest published rate (seeds.BankDBEstimate; make help states it,
# checked by cmd/compare's tests). From a fresh clone, building k6 and ghz
# adds a few minutes.
SEEDS_OUT            := docs/results/seeds
SEED_MODES           ?= mutex,inputQ
# Over a database also db-rowlock, which leaves the order to the row locks,
# as the seed's service did.
SEED_DB_MODES        ?= mutex,inputQ,db-rowlock
SEED_LADDER_REPS     ?= 2
SEED_LADDER_DURATION ?= 5s
SEED_LADDER_ARGS      = -driver k6 -ladder -workloads counter -modes $(SEED_MODES) -reps $(SEED_LADDER_REPS) -duration $(SEED_LADDER_DURATION) -warmup 1s
# RPCX_REQUESTS=1000000 sends the page's full million per row (~30× longer).
RPCX_REQUESTS        ?=
SEED_NGRINDER_ARGS   ?= -driver go -workloads bank-A -vus 100 -durability wal -duration 5s -warmup 1s -reps 3
SEED_NGRINDER_BEFORE ?= mutex
SEED_NGRINDER_AFTER  ?= inputQ-batch
SEEDS_CMD             = GHZ=$(BIN)/ghz $(GO) run ./cmd/seeds

.PHONY: seeds seed-ladder seed-bank seed-bank-db seed-rpcx seed-ngrinder
seeds: seed-ladder seed-bank seed-bank-db seed-rpcx seed-ngrinder ## every seed, each into docs/results/seeds/<seed>/

seed-ladder: build $(BIN)/k6 ## the inputQ-vs-mutex k6 ladder: 10…1000 VUs, the seed's k6 columns (~4.3 min)
	rm -rf $(SEEDS_OUT)/ladder/runs $(SEEDS_OUT)/ladder/runs.tar.gz
	LOCKLAB_COMMAND="make seed-ladder" $(RUNNER) $(SEED_LADDER_ARGS) -out $(SEEDS_OUT)/ladder
	$(SEEDS_CMD) ladder -in $(SEEDS_OUT)/ladder

seed-bank: build $(BIN)/ghz ## the gRPC bank benchmark with ghz: its scenarios and request counts, 20 in parallel
	LOCKLAB_COMMAND="make seed-bank" $(SEEDS_CMD) bank -out $(SEEDS_OUT)/bank -modes $(SEED_MODES) -server $(BIN)/locklab

seed-bank-db: build $(BIN)/ghz db-servers ## the bank benchmark as it ran: over MariaDB with a pool of 9 and Redis, 20 in parallel, reads with the cache off and on (~3.9 min)
	LOCKLAB_COMMAND="make seed-bank-db" $(SEEDS_CMD) bank -backend mysql -out $(SEEDS_OUT)/bank-db -modes $(SEED_DB_MODES) -server $(BIN)/locklab

seed-rpcx: build $(BIN)/ghz ## the rpcx page: a 581-byte value at 100…5000 clients, mean/median/max/min/p99/TPS
	LOCKLAB_COMMAND="make seed-rpcx$(if $(RPCX_REQUESTS), RPCX_REQUESTS=$(RPCX_REQUESTS))" $(SEEDS_CMD) rpcx -out $(SEEDS_OUT)/rpcx \
		-modes $(SEED_MODES) -server $(BIN)/locklab $(if $(RPCX_REQUESTS),-requests $(RPCX_REQUESTS))

seed-ngrinder: build ## the nGrinder before/after report: mutex before, inputQ-batch after (~1.2 min)
	rm -rf $(SEEDS_OUT)/ngrinder/before $(SEEDS_OUT)/ngrinder/after
	LOCKLAB_COMMAND="make seed-ngrinder (before)" $(RUNNER) $(SEED_NGRINDER_ARGS) -modes $(SEED_NGRINDER_BEFORE) -baseline $(SEED_NGRINDER_BEFORE) -out $(SEEDS_OUT)/ngrinder/before
	LOCKLAB_COMMAND="make seed-ngrinder (after)" $(RUNNER) $(SEED_NGRINDER_ARGS) -modes $(SEED_NGRINDER_AFTER) -baseline $(SEED_NGRINDER_AFTER) -out $(SEEDS_OUT)/ngrinder/after
	LOCKLAB_COMMAND="make seed-ngrinder" $(SEEDS_CMD) ngrinder -before $(SEEDS_OUT)/ngrinder/before -after $(SEEDS_OUT)/ngrinder/after -out $(SEEDS_OUT)/ngrinder

# --- tests ---------------------------------------------------------------------

# make test in two stages. First the house check and the tools side by side:
# Debian's packages in one apt-get (debs) and the module's own dependencies
# (modules) download while the tools build from source and the house check
# compiles and runs (test-builds), so that the CPUs work while the network
# does (a failed house check still stops make test before the checks).
# Then the checks in order: go test vets every package with every
# analyzer go vet runs (GOTESTVET=-vet=all) and runs the browser test
# beside the rest (GOTESTFLAGS=-tags=browser), and e2e runs every mode at
# once (E2E_JOBS=all) with one-second smokes (E2E_SECONDS=1) and ghz-run
# linked from the race-enabled packages go test compiled (E2E_SEEDS_RACE=1).
.PHONY: test
test: ## everything CI runs: tracked files in order, generated code fresh, vet, race tests, k6 end to end, report.html in a browser
	@GOGC=$(TESTGOGC) $(MAKE) --no-print-directory -j6 debs modules test-builds
	@GOGC=$(TESTGOGC) $(MAKE) --no-print-directory proto-check fmt unit e2e GOTESTVET=-vet=all GOTESTFLAGS=-tags=browser E2E_JOBS=all E2E_SECONDS=1 E2E_SEEDS_RACE=1
	@echo "make test: all checks passed"

# TESTGOGC is the GOGC make test runs its go commands with, and so the
# compiler and every process the tests start: the compiler collects garbage
# a quarter as often, for about a quarter more memory (from empty caches on
# two CPUs: the standard library 106 → 85 CPU-seconds, the race-enabled
# build of the tests 290 → 262). No test reads the setting.
TESTGOGC ?= 400

# make test's builds: the standard library (std) compiled once while the
# tools modules download, then k6 and protoc's Go plugins in one go build
# (tools), ghz and the house check side by side. go commands running at
# once share a build cache but not the work in progress: started together
# on an empty cache, each compiled the standard library and the packages
# they share for itself (this step from empty caches on two CPUs: about 500
# CPU-seconds and 4 min 16 s started together, 430 and 3 min 41 s so).
.PHONY: test-builds
test-builds:
	@$(MAKE) --no-print-directory std tool-modules
	@$(MAKE) --no-print-directory house tools $(BIN)/ghz

.PHONY: std
std: # the standard library into the build cache (no -race: the tools' builds)
	$(GO) build std

.PHONY: tool-modules
tool-modules: # the tools modules' dependencies into the module cache
	cd $(TOOLS) && $(GO) mod download
	cd $(TOOLS)/ghz && $(GO) mod download

.PHONY: tools
tools: ## build the pinned k6 and protoc's Go plugins (tools/go.mod) into bin/, in one go build
	@mkdir -p $(BIN)
	cd $(TOOLS) && $(GO) build -o $(BIN)/ $(K6_PKG) $(PROTOC_PLUGINS)
	@touch $(BIN)/k6 $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc

# The Debian packages the tests use, those missing installed in one apt-get:
# protoc (make proto, pinned by PROTOC_VERSION), h2load (nghttp2-client),
# Chromium (browser-test), and MariaDB's and Redis's servers (the bank over a
# database: its tests start private instances). The protoc, h2load, chromium
# and db-servers targets install their own. mariadbd lives in /usr/sbin.
DEBS := protoc:protobuf-compiler h2load:nghttp2-client chromium:chromium mariadbd:mariadb-server redis-server:redis-server haproxy:haproxy nginx:nginx

.PHONY: modules
modules: # the module's dependencies into the module cache (go.sum checks them)
	$(GO) mod download

.PHONY: debs
debs: ## install Debian's protoc, h2load, Chromium, MariaDB and Redis, those missing, in one apt-get
	@missing=""; for d in $(DEBS); do PATH="$$PATH:/usr/sbin" command -v "$${d%%:*}" >/dev/null || missing="$$missing $${d#*:}"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing from Debian"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq $$missing >/dev/null; fi

# The repository's own rules for what it tracks, stated once in
# internal/housecheck: an executable is a script (#!), no file is over the
# size limit but those its exceptions name, with their reasons, and
# .gitignore ignores every build output. `make unit` runs it too; make test
# runs it first, beside the tools' downloads and builds.
.PHONY: house
house: ## tracked files: executables are scripts, none over the size limit (internal/housecheck), build outputs ignored; tools/go.mod shares go.mod's versions
	$(GO) test -count=1 ./internal/housecheck

.PHONY: fmt
fmt: ## gofmt: every tracked Go file formatted
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed" >&2; exit 1; }

.PHONY: vet
vet: fmt ## gofmt and go vet
	$(GO) vet ./...
	$(GO) vet -tags browser ./internal/lab/report

# GOTESTVET=-vet=all makes go test's vet pass run every analyzer go vet
# runs. make test vets that way, inside the race-enabled go test, rather
# than with make vet: go vet compiles every dependency without -race for
# its type information, a second compilation of them all (about two minutes
# of CPU from empty caches).
GOTESTVET ?=

# GOTESTFLAGS=-tags=browser adds the browser test (browser-test) to make
# unit's run: make test sets it, so the report package is compiled and
# tested once, its browser test beside the other packages' tests (Chromium
# comes with the Debian packages, debs).
GOTESTFLAGS ?=

# TESTPKGS is how many packages go test builds and tests at once: one more
# than the machine has CPUs (go test's default is as many). Several of the
# longest packages spend much of their time waiting — servers starting, a
# database, fsync, timed runs pinned to one CPU — and one package more
# keeps the CPUs busy meanwhile (on two CPUs, 301 s → 228 s of tests with
# warm caches).
TESTPKGS ?= $(shell echo $$(( $$(nproc) + 1 )))

.PHONY: unit
unit: $(BIN)/k6 h2load db-servers ## go test -race over every package (the runner's end-to-end test drives k6 and h2load; the database's tests start MariaDB and Redis)
	$(GO) test -race -count=1 -p $(TESTPKGS) $(GOTESTVET) $(GOTESTFLAGS) -timeout 15m ./...

# The bank over a database (-backend mysql) and its tests start private
# MariaDB and Redis servers (internal/dbinst): Debian's packages, installed
# where missing. locklab never uses the packages' own services: it starts
# its own instances, in directories of its own.
.PHONY: db-servers
db-servers: ## install Debian's MariaDB and Redis servers if missing (the bank over a database, -backend mysql)
	@missing=""; for d in mariadbd:mariadb-server redis-server:redis-server; do PATH="$$PATH:/usr/sbin" command -v "$${d%%:*}" >/dev/null || missing="$$missing $${d#*:}"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing from Debian"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq $$missing >/dev/null; fi

.PHONY: chromium
chromium: ## install Debian's Chromium if it is missing (for browser-test)
	@if ! command -v chromium >/dev/null; then \
		echo "installing chromium from Debian"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq chromium >/dev/null; fi

.PHONY: browser-test
browser-test: chromium ## report.html opened in headless Chromium, network cut off: the charts are drawn
	$(GO) test -race -count=1 $(GOTESTVET) -tags browser -run 'InBrowser' ./internal/lab/report

.PHONY: e2e
e2e: $(BIN)/k6 $(BIN)/ghz ## end-to-end: every k6 script, the Go driver and ghz against the server in every mode, invariants checked
	K6=$(BIN)/k6 GHZ=$(BIN)/ghz GO=$(GO) $(if $(E2E_JOBS),E2E_JOBS=$(E2E_JOBS)) $(if $(E2E_SECONDS),E2E_SECONDS=$(E2E_SECONDS)) $(if $(E2E_SEEDS_RACE),E2E_SEEDS_RACE=$(E2E_SEEDS_RACE)) k6/e2e.sh

# Every native fuzz target (func FuzzX in any package), found with go test
# -list, runs for FUZZTIME. A finding is written to the package's
# testdata/fuzz/FuzzX/ and fails the run; commit it once fixed, and `make
# unit` replays it with the seeds ever after. docs/operations.md, "Fuzzing".
FUZZTIME ?= 20s

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each (default 20s)
	@for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) "$$pkg"; \
		done; \
	done

.PHONY: agree
agree: $(BIN)/k6 $(BIN)/ghz ## k6, the Go driver and ghz agree within 15% on calls/s and p50 (open model, 1000 calls/s; run on a quiet machine)
	E2E_MODES=mutex E2E_AGREE=0.15 K6=$(BIN)/k6 GHZ=$(BIN)/ghz GO=$(GO) k6/e2e.sh

# --- benchmarks ----------------------------------------------------------------

$(BIN)/benchstat: $(TOOLS)/go.mod $(TOOLS)/go.sum
	@mkdir -p $(BIN)
	cd $(TOOLS) && $(GO) build -o $(BIN)/ golang.org/x/perf/cmd/benchstat
	@touch $@

# BenchmarkStore is 222 benchmarks: 7 designs × 30 rows (Increment and
# TransferMoney × 3 parallelisms × 3 critical sections, GetValue, GetBalance,
# Put, Get × 3 parallelisms) plus atomic's 12 (the counter only).
#
# Rounds, not -count: each round is one `go test -count 1` over every design,
# and BENCH_STORE_ROUNDS rounds run one after another, so the designs of a row
# run seconds apart in every round and the machine's drift falls on all of
# them alike (-count N would run one design's N runs back to back). benchreport
# pairs round i of one design with round i of another; 10 rounds give the
# median a 95% interval (benchmath needs 6) and the paired ratios room to
# separate designs. The rounds' raw output is concatenated: benchstat and
# benchreport read a repeated name as one more run.
#
# -cpu: 1, 2, and every power of two up to the machine's CPUs, and the
# machine's own count if it is not one (benchreport -cpu-list $(nproc); on 64
# CPUs 1,2,4,...,64). Set BENCH_STORE_CPUS to choose.
#
# Time: benchmarks × CPU counts × rounds × (BENCH_STORE_TIME + ramp-up and
# set-up). On 2 CPUs, 222 × 2 × 10 = 4,440 runs; a run of 50ms took 83ms of
# wall time here (go test grows b.N up to the goal and overshoots it by a
# fifth), so ~6 min. 100ms would take ~12: the rounds cost the benchtime, and
# 10 × 50ms measure a row nearly as long as the 6 × 100ms they replace.
# Every further CPU count adds ~3 min (a 64-CPU machine: 7 counts, ~21 min).
# BENCH_STORE_RUN is the -bench regexp: `make bench-store BENCH_STORE_RUN=
# 'Store/op=Increment$$/work=0s' BENCH_STORE_TIME=1x BENCH_STORE_ROUNDS=2` is a
# smoke run of a few rows.
# The raw output is kept beside the report gzipped (bench.txt.gz, a few tens of
# KB): ~4,400 lines would be over the size limit for committed files
# (internal/housecheck) even with go test's padding squeezed. benchreport
# reads it as it is; benchstat after zcat.
BENCH_STORE_TIME   ?= 50ms
BENCH_STORE_ROUNDS ?= 10
BENCH_STORE_CPUS   ?= $(shell $(GO) run ./cmd/benchreport -cpu-list $$(nproc))
BENCH_STORE_RUN    ?= Store
BENCH_STORE_OUT    := docs/results/store

# The store's designs across Go releases: the same benchmarks as bench-store,
# the hot counter and transfers without work, built by each toolchain of
# BENCH_RUNTIMES in turn inside every round (so the machine's drift falls on
# both alike), then benchstat's comparison of the two (Mann–Whitney U, 95%
# intervals). On 2 CPUs: 102 rows (the designs that serve each op × 3
# parallelisms × 2 CPU counts) × 2 toolchains × 10 rounds took 4 min here.
# The go command fetches go1.27.3 through the module proxy the first time.
BENCH_RUNTIMES     ?= go1.26.8 go1.27.3
BENCH_RUNTIMES_RUN ?= Store/op=(Increment|TransferMoney)$$/work=0s/
BENCH_RUNTIMES_OUT := docs/results/runtimes/store

.PHONY: bench-store-runtimes
bench-store-runtimes: $(BIN)/benchstat ## the store's designs built by each Go release (BENCH_RUNTIMES), rounds interleaved, and benchstat's comparison → docs/results/runtimes/store/
	@mkdir -p $(BENCH_RUNTIMES_OUT)
	@for tc in $(BENCH_RUNTIMES); do rm -f $(BIN)/bench-store-$$tc.txt; GOTOOLCHAIN=$$tc $(GO) version || exit 2; done
	@cpus='$(BENCH_STORE_CPUS)'; for round in $$(seq 1 $(BENCH_STORE_ROUNDS)); do \
		for tc in $(BENCH_RUNTIMES); do \
			echo "bench-store-runtimes: round $$round of $(BENCH_STORE_ROUNDS), $$tc, -cpu $$cpus" >&2; \
			GOTOOLCHAIN=$$tc $(GO) test -run '^$$' -bench '$(BENCH_RUNTIMES_RUN)' -benchmem -benchtime $(BENCH_STORE_TIME) -cpu "$$cpus" -count 1 -timeout 30m ./store \
				>> $(BIN)/bench-store-$$tc.txt || exit 1; \
		done; \
	done
	@for tc in $(BENCH_RUNTIMES); do gzip -9n < $(BIN)/bench-store-$$tc.txt > $(BENCH_RUNTIMES_OUT)/$$tc.txt.gz; done
	{ echo '# make bench-store-runtimes: BenchmarkStore -bench '"'"'$(BENCH_RUNTIMES_RUN)'"'"' -cpu $(BENCH_STORE_CPUS), $(BENCH_STORE_ROUNDS) rounds, each built by $(BENCH_RUNTIMES); raw output in <toolchain>.txt.gz'; \
	  $(BIN)/benchstat $(foreach tc,$(BENCH_RUNTIMES),$(tc)=$(BIN)/bench-store-$(tc).txt); } > $(BENCH_RUNTIMES_OUT)/benchstat.txt
	@echo "bench-store-runtimes: $(BENCH_RUNTIMES_OUT)/benchstat.txt"

# What the server's measuring costs per command, for every design: the same
# increments through a bare store, with its serial demand measured, with its
# store time measured (every command or 1 in 16), and with both as the server
# runs them (-metrics-addr adds nothing here: it reads the same figures).
.PHONY: bench-measure
bench-measure: $(BIN)/benchstat ## price the server's measurements (store latency, serial demand) per design → docs/results/measure-bench.txt and its raw output measure-bench.raw.txt
	$(GO) test -run '^$$' -bench MeasuredStore -benchmem -cpu 2 -count 6 -benchtime 200ms ./server | tee $(BIN)/bench-measure.txt
	tr -s ' \t' ' ' < $(BIN)/bench-measure.txt > docs/results/measure-bench.raw.txt
	{ echo '# make bench-measure: BenchmarkMeasuredStore (server/measure_bench_test.go), benchstat -col /measure -row /design,/par; raw output in measure-bench.raw.txt'; \
	  $(BIN)/benchstat -col /measure -row /design,/par $(BIN)/bench-measure.txt; } > docs/results/measure-bench.txt

.PHONY: bench-store
bench-store: ## benchmark every store design × op × parallelism × critical section × CPU count, in rounds → docs/results/store/
	@mkdir -p $(BIN) $(BENCH_STORE_OUT)
	@rm -f $(BIN)/bench-store.txt
	@cpus='$(BENCH_STORE_CPUS)'; test -n "$$cpus" || { echo "bench-store: no CPU list (BENCH_STORE_CPUS)" >&2; exit 2; }; \
	for round in $$(seq 1 $(BENCH_STORE_ROUNDS)); do \
		echo "bench-store: round $$round of $(BENCH_STORE_ROUNDS), -cpu $$cpus" >&2; \
		$(GO) test -run '^$$' -bench '$(BENCH_STORE_RUN)' -benchmem -benchtime $(BENCH_STORE_TIME) -cpu "$$cpus" -count 1 -timeout 30m ./store \
			| tee -a $(BIN)/bench-store.txt; \
	done
	rm -f $(BENCH_STORE_OUT)/bench.txt
	gzip -9n < $(BIN)/bench-store.txt > $(BENCH_STORE_OUT)/bench.txt.gz
	$(GO) run ./cmd/benchreport -command "$(strip make bench-store $(foreach v,BENCH_STORE_TIME BENCH_STORE_ROUNDS BENCH_STORE_CPUS BENCH_STORE_RUN,$(if $(filter command line environment,$(origin $(v))),$(v)='$($(v))')))" -out $(BENCH_STORE_OUT) $(BIN)/bench-store.txt
	@echo "bench-store: $(BENCH_STORE_OUT)/store.md"
