# locklab's commands: build, install, test. `make help` lists the targets
# and the studies; `make test` is what CI runs (scripts/test.sh).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO      ?= go
BIN     := $(CURDIR)/bin
TOOLS   := $(CURDIR)/tools
PROTOC_VERSION := 3.21.12

.PHONY: help
help: ## list the targets, then the studies with the runner's estimate of each
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'
	@echo; echo "studies (make study NAME=..., the catalogue in internal/lab/study):"
	@$(GO) run ./cmd/compare -study list

# --- Debian's packages: one list, one rule --------------------------------------

# The Debian packages locklab uses, each as the command it provides and its
# package: protoc (make proto, pinned by PROTOC_VERSION), h2load (the
# counter's ceiling driver), Chromium (the browser test), MariaDB's and
# Redis's servers (the bank over a database: locklab starts private
# instances, never the packages' services; mariadbd lives in /usr/sbin),
# HAProxy and nginx. A target that needs some depends on deb-<command>;
# `make debs` installs every one missing in one apt-get.
DEBS    := protoc:protobuf-compiler h2load:nghttp2-client chromium:chromium mariadbd:mariadb-server redis-server:redis-server haproxy:haproxy nginx:nginx
SUDO    := $(if $(filter 0,$(shell id -u)),,sudo)
debs-of  = $(foreach d,$(DEBS),$(if $(filter $(1),$(firstword $(subst :, ,$(d)))),$(d)))

.PHONY: debs
debs: ## install Debian's packages (DEBS: protoc, h2load, Chromium, MariaDB, Redis, HAProxy, nginx), those missing, in one apt-get
	@$(MAKE) --no-print-directory deb-install PAIRS='$(DEBS)'
deb-%:
	@test -n '$(call debs-of,$*)' || { echo 'make deb-$*: DEBS has no command $*' >&2; exit 2; }
	@$(MAKE) --no-print-directory deb-install PAIRS='$(call debs-of,$*)'
.PHONY: deb-install
deb-install:
	@missing=""; for d in $(PAIRS); do PATH="$$PATH:/usr/sbin" command -v "$${d%%:*}" >/dev/null || missing="$$missing $${d#*:}"; done; \
	if [ -n "$$missing" ]; then echo "installing$$missing from Debian"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing >/dev/null; fi
.PHONY: db-servers
db-servers: deb-mariadbd deb-redis-server ## install Debian's MariaDB and Redis servers if missing (the bank over a database)

# --- tools: every version pinned in tools/go.mod or here -----------------------

# protoc's Go plugins and k6, as tools/go.mod names them. tools/go.mod
# requires the modules k6 shares with the server at go.mod's versions, so
# that make test compiles each shared package once for both
# (internal/housecheck's TestToolsShareVersions keeps them so).
PROTOC_PLUGINS := google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc
K6_PKG         := go.k6.io/k6

$(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc &: $(TOOLS)/go.mod $(TOOLS)/go.sum
	@mkdir -p $(BIN)
	cd $(TOOLS) && $(GO) build -o $(BIN)/ $(PROTOC_PLUGINS)

# k6 is built from source at the version tools/go.mod pins (no prebuilt
# downloads), again only when tools/go.mod or tools/go.sum change.
$(BIN)/k6: $(TOOLS)/go.mod $(TOOLS)/go.sum
	@mkdir -p $(BIN)
	cd $(TOOLS) && $(GO) build -o $(BIN)/k6 $(K6_PKG)
	@touch $@

# ghz (the bank seed's load generator) from its own tools module, so that its
# dependencies cannot move k6's; the runner refuses any other version.
$(BIN)/ghz: $(TOOLS)/ghz/go.mod $(TOOLS)/ghz/go.sum
	@mkdir -p $(BIN)
	cd $(TOOLS)/ghz && $(GO) build -o $(BIN)/ghz github.com/bojand/ghz/cmd/ghz
	@touch $@

$(BIN)/benchstat: $(TOOLS)/go.mod $(TOOLS)/go.sum
	@mkdir -p $(BIN)
	cd $(TOOLS) && $(GO) build -o $(BIN)/ golang.org/x/perf/cmd/benchstat
	@touch $@

.PHONY: k6 ghz tools
k6: $(BIN)/k6 ## build the pinned k6 (tools/go.mod) into bin/k6
ghz: $(BIN)/ghz ## build the pinned ghz (tools/ghz/go.mod) into bin/ghz
tools: ## build the pinned k6 and protoc's Go plugins (tools/go.mod) into bin/, in one go build
	@mkdir -p $(BIN)
	cd $(TOOLS) && $(GO) build -o $(BIN)/ $(K6_PKG) $(PROTOC_PLUGINS)
	@touch $(BIN)/k6 $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc

.PHONY: proto proto-check
proto: deb-protoc $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc ## regenerate the Go code from proto/
	@v=$$(protoc --version | awk '{print $$2}'); if [ "$$v" != "$(PROTOC_VERSION)" ]; then \
		echo "protoc $$v found, $(PROTOC_VERSION) wanted: generated code would differ" >&2; exit 1; fi
	PATH=$(BIN):$$PATH protoc -I proto \
		--go_out=proto --go_opt=paths=source_relative \
		--go-grpc_out=proto --go-grpc_opt=paths=source_relative \
		proto/locklab/v1/locklab.proto
proto-check: proto ## fail if the checked-in generated code is stale
	@git diff --exit-code -- proto || { echo "generated code in proto/ is stale: run 'make proto' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- proto 2>/dev/null)"

# --- the server, the comparison and the studies ---------------------------------

.PHONY: build
build: ## build the server into bin/locklab and the Go load driver into bin/load
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/locklab .
	$(GO) build -o $(BIN)/load ./cmd/load

# ARGS go to the runner, e.g. make compare ARGS="-driver k6 -ladder -reps 3"; see `go run ./cmd/compare -h`
# and docs/methodology.md. STARTED, make's start: make compare's budget counts from it (-started).
ARGS ?=
RUNNER = GHZ=$(BIN)/ghz $(GO) run ./cmd/compare -k6 $(BIN)/k6 -load $(BIN)/load -server $(BIN)/locklab
with-args = $(if $(ARGS), ARGS="$(ARGS)")
STARTED := $(shell date +%s)

.PHONY: compare compare-busy study
compare: build deb-h2load ## the main job: the runner's defaults (go run ./cmd/compare -h), through the validity gate, with an A/A control → results/<timestamp>/ (< 8 min)
	LOCKLAB_COMMAND='make compare$(with-args)' $(RUNNER) -started $(STARTED) $(ARGS)

# The validity gate's own trial (docs/validity.md): make compare beside a
# bursty background load (scripts/burst.sh, which BURST_ON and BURST_EVERY
# tune), which the runner must notice.
compare-busy: build deb-h2load ## make compare beside a bursty background load (busy loops on every CPU, 1.5 s of every 6 s): the gate must see it
	LOCKLAB_COMMAND='make compare-busy$(with-args)' scripts/burst.sh env $(RUNNER) -started $(STARTED) $(ARGS)

# A study is a row of internal/lab/study: its plans, its folder under
# docs/results/, its budget. make help lists them with their times.
$(if $(filter study,$(MAKECMDGOALS)),$(if $(NAME),,$(error make study: give the study, NAME=...; make help lists them)))
study: build deb-h2load db-servers $(BIN)/k6 $(BIN)/ghz ## run a study into its folder under docs/results/: make study NAME=cores (ARGS add flags to each of its plans)
	LOCKLAB_COMMAND='make study NAME=$(NAME)$(with-args)' $(RUNNER) -study $(NAME) $(ARGS)

.PHONY: replicas
replicas: deb-haproxy deb-nginx ## the replicas study, as make study NAME=replicas: replicas on hosts of their own behind a balancer (root)
	$(MAKE) study NAME=replicas

# One run's server profiled over its measured window (docs/methodology.md): PROFILE
# picks the run (its number or id) of the plan that PROFILE_ARGS and ARGS describe.
PROFILE ?= 1
PROFILE_ARGS ?= -driver go -workloads counter -modes inputQ -baseline inputQ -aa=false -vus 100 -reps 1 -duration 5s
.PHONY: profile
profile: build ## CPU profile and runtime trace of one run's server → results/<timestamp>/runs/ (~6 s)
	LOCKLAB_COMMAND="make profile" $(RUNNER) $(PROFILE_ARGS) -profile $(PROFILE) $(ARGS)

# A finished study folder packed for readers: runs/ and logs.tar.gz become
# one runs.tar.gz, once the report renders the same bytes from it.
.PHONY: pack-results
pack-results: ## pack a finished study's raw runs into one archive: make pack-results DIR=docs/results/<study> (checks its report first)
	@test -n "$(DIR)" || { echo 'make pack-results: give the study folder, DIR=docs/results/<study>' >&2; exit 2; }
	$(GO) run ./cmd/compare -pack $(DIR)

# Every archive under docs/results in this code's layout (record.ArchiveSchema); one in it is left as it is.
.PHONY: repack-results
repack-results: ## repack every archive under docs/results in this code's layout, each checked as pack-results checks it
	@for dir in $$(git ls-files docs/results | grep '/runs\.tar\.gz$$' | xargs -n1 dirname); do \
		$(GO) run ./cmd/compare -pack $$dir || exit 1; \
	done

# --- tests -------------------------------------------------------------------------

# make test: scripts/test.sh says what it runs, in what order, and why.
.PHONY: test unit e2e
test: ## everything CI runs: tracked files in order, generated code fresh, vet, race tests, k6 end to end, report.html in a browser
	GO=$(GO) scripts/test.sh
unit: debs $(BIN)/k6 ## go test -race over every package (the runner's end-to-end test drives k6 and h2load; the database's tests start MariaDB and Redis)
	GO=$(GO) scripts/test.sh unit
e2e: $(BIN)/k6 $(BIN)/ghz ## end-to-end: every k6 script, the Go driver and ghz against the server in every mode, invariants checked
	GO=$(GO) scripts/test.sh e2e

# The repository's own rules for what it tracks (internal/housecheck).
.PHONY: house fmt vet browser-test
house: ## tracked files: executables are scripts, none over the size limit (internal/housecheck), build outputs ignored; tools/go.mod shares go.mod's versions
	$(GO) test -count=1 ./internal/housecheck
fmt: ## gofmt: every tracked Go file formatted
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed" >&2; exit 1; }
vet: fmt ## gofmt and go vet
	$(GO) vet ./...
	$(GO) vet -tags browser ./internal/lab/report ./internal/lab/storebench
browser-test: deb-chromium ## report.html and the store's charts opened in headless Chromium, network cut off: the charts are drawn
	$(GO) test -race -count=1 -tags browser -run 'InBrowser' ./internal/lab/report ./internal/lab/storebench

# Every native fuzz target, found with go test -list, runs for FUZZTIME; a
# finding fails the run and lands in testdata/fuzz/ (docs/operations.md).
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

# --- benchmarks: scripts/bench.sh says how each is cut ----------------------------

.PHONY: bench-store bench-store-runtimes bench-measure
bench-store: ## benchmark every store design × op × parallelism × critical section × CPU count, in rounds → docs/results/store/
	GO=$(GO) scripts/bench.sh store
bench-store-runtimes: $(BIN)/benchstat ## the store's designs built by each Go release (BENCH_RUNTIMES), rounds interleaved, and benchstat's comparison → docs/results/runtimes/store/
	GO=$(GO) BENCHSTAT=$(BIN)/benchstat scripts/bench.sh runtimes
bench-measure: $(BIN)/benchstat ## price the server's measurements (store latency, serial demand) per design → docs/results/measure-bench.txt and its raw output measure-bench.raw.txt
	GO=$(GO) BENCHSTAT=$(BIN)/benchstat scripts/bench.sh measure
