# turncli — see README.md. Every target works from a fresh clone with Go installed.
SHELL := /bin/bash
BUF := go tool -modfile=tools/buf/go.mod buf
GO_PACKAGES := ./...
STATE_DIR ?= $(CURDIR)/.turncli

.PHONY: all build proto lint check-gen breaking test test-short fuzz bench bench-smoke run run-worker shell images clean

all: build

# Every binary's --version names its build even where GOFLAGS=-buildvcs=false keeps the
# toolchain from stamping it: the linker gets git's description and commit (empty without git,
# and then --version says unknown as before). internal/buildinfo prefers the toolchain's own
# stamp when there is one.
BUILDINFO := github.com/turncli/turncli/internal/buildinfo
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X $(BUILDINFO).linkedVersion=$(VERSION) -X $(BUILDINFO).linkedRevision=$(REVISION)

build:
	go build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

## proto: regenerate gen/ from proto/.
proto:
	rm -rf gen
	$(BUF) generate

## lint: gofmt, go vet, buf lint and buf format.
lint:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './gen/*'))"; \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet $(GO_PACKAGES)
	$(BUF) lint
	$(BUF) format --diff --exit-code proto

## check-gen: fail if gen/ is not what proto/ generates.
check-gen:
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	  $(BUF) generate -o "$$tmp" && diff -r "$$tmp/gen" gen && echo "gen/ is current"

## breaking: fail if proto/ breaks what its last release promised (buf's FILE rules, buf.yaml),
## judged against tools/buf/baseline.binpb, the image of proto/ as released. Moving the baseline
## is part of a release, never of a change: at a release, run
## `$(BUF) build proto -o tools/buf/baseline.binpb` and commit the image with the release.
breaking:
	$(BUF) breaking proto --against tools/buf/baseline.binpb

## test: everything CI runs.
test: lint check-gen breaking
	$(ISOLATED_HOME) go test -race -count=1 -timeout 30m $(GO_PACKAGES)

test-short:
	$(ISOLATED_HOME) go test -count=1 $(GO_PACKAGES)

## fuzz: run every fuzz target for FUZZTIME each, one at a time (about 15 minutes at 60s).
## A crash stops the run; its input is saved under the package's testdata/fuzz/, where
## `make test` runs it from then on. FUZZ_ARGS passes flags, e.g. FUZZ_ARGS='-parallel 1'.
FUZZTIME ?= 60s
FUZZ_TARGETS := \
	./internal/canonjson:FuzzParse ./internal/canonjson:FuzzCanonicalize \
	./primary/api/agentcli:FuzzParseOperation ./primary/api/agentcli:FuzzParseWait \
	./primary/interaction:FuzzRunInBackgroundArgs ./primary/interaction:FuzzRunAgentInBackgroundArgs \
	./primary/interaction:FuzzRequestApprovalArgs ./primary/interaction:FuzzPermissionPromptArgs \
	./primary/interaction:FuzzReportProgressArgs ./primary/interaction:FuzzAskQuestionsArgs \
	./client/mcp:FuzzMCPServe ./client/mcp:FuzzMCPLineReader \
	./primary/mcpbridge:FuzzConvertResult ./primary/mcpbridge:FuzzToolFunction \
	./primary/workerhub:FuzzHubConnect
fuzz:
	$(ISOLATED_HOME) FUZZ_TARGETS="$(FUZZ_TARGETS)" FUZZTIME="$(FUZZTIME)" FUZZ_ARGS="$(FUZZ_ARGS)" bash -ec \
	  'for t in $$FUZZ_TARGETS; do pkg="$${t%%:*}" name="$${t##*:}"; echo "== $$name ($$pkg), $$FUZZTIME"; \
	    go test -run "^$$" -fuzz "^$$name\$$" -fuzztime "$$FUZZTIME" $$FUZZ_ARGS "$$pkg"; done'

# Jobs run in login shells (`bash -lc`), which read $$HOME's profile. Tests get a throwaway
# HOME so a developer's profile (pyenv, nvm, ...) neither slows nor breaks them, and a job a
# test kills mid-profile leaves nothing behind there. Go keeps its own caches and settings.
ISOLATED_HOME = home="$$(mktemp -d)"; trap 'rm -rf "$$home"' EXIT; \
  GOCACHE="$$(go env GOCACHE)" GOMODCACHE="$$(go env GOMODCACHE)" GOPATH="$$(go env GOPATH)" \
  GOENV="$$(go env GOENV)" HOME="$$home"

## bench: measure every goal beside floors measured in the same run (12-15 minutes on 2 cores;
## see docs/PERFORMANCE.md). BENCH_ARGS passes flags, e.g. BENCH_ARGS='-v -markdown bench.md'.
BENCH_BINARIES := ./cmd/mindroom-agent ./cmd/mindroom-primary ./cmd/mindroom-worker ./cmd/turncli-bench ./internal/benchfloor/floorclient ./internal/benchfloor/pollclient
bench:
	CGO_ENABLED=0 go build -ldflags "$(LDFLAGS)" -o bin/ $(BENCH_BINARIES)
	./bin/turncli-bench -bin bin $(BENCH_ARGS)

## bench-smoke: every measure of `make bench` briefly (seconds), judging no target.
bench-smoke:
	CGO_ENABLED=0 go build -ldflags "$(LDFLAGS)" -o bin/ $(BENCH_BINARIES)
	./bin/turncli-bench -bin bin -smoke $(BENCH_ARGS)

## run: start the primary with embedded defaults (state under .turncli/): gRPC on 7420, REST and
## the dashboard on 7421, the Agent CLI on 7422, metrics, /healthz and /readyz on 7423.
## RUN_ARGS passes more flags, e.g.
## RUN_ARGS='--grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --agent-cli-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0'.
METRICS_LISTEN ?= 127.0.0.1:7423
run: build
	@echo "primary starting; in another terminal: make shell (or make run-worker, then make shell MODE_ARGS=--worker-key=local)"
	./bin/mindroom-primary --state-dir "$(STATE_DIR)" --metrics-listen "$(METRICS_LISTEN)" --enable-test-toolkit --agent-engine test --worker-keys local $(RUN_ARGS)

## run-worker: start a worker with key "local" next to the primary of `make run` (metrics on 7424).
run-worker: build
	MINDROOM_WORKER_CREDENTIAL_FILE="$(STATE_DIR)/credentials/workers/local.token" \
	  ./bin/mindroom-worker --primary 127.0.0.1:7420 --key local --id local-1 --state-dir "$(STATE_DIR)-worker" --metrics-listen 127.0.0.1:7424

## shell: open a response on the running primary and an interactive Bash inside a window.
## MODE_ARGS passes its flags, e.g. MODE_ARGS='--shell-mode minimal --thread t1'.
shell: build
	./bin/mindroom-primary shell --state-dir "$(STATE_DIR)" $(MODE_ARGS)

## images: build the primary and worker images with any OCI builder that takes docker's build
## arguments (OCI_BUILDER=podman, ...), tagged IMAGE_REPO/primary and IMAGE_REPO/worker, both :IMAGE_TAG.
## deploy/ refers to them as turncli/primary and turncli/worker: see docs/DEPLOY.md.
OCI_BUILDER ?= docker
IMAGE_REPO ?= turncli
IMAGE_TAG ?= dev
IMAGE_BUILD_ARGS := --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION)
images:
	$(OCI_BUILDER) build $(IMAGE_BUILD_ARGS) -f deploy/images/primary.Dockerfile -t $(IMAGE_REPO)/primary:$(IMAGE_TAG) .
	$(OCI_BUILDER) build $(IMAGE_BUILD_ARGS) -f deploy/images/worker.Dockerfile -t $(IMAGE_REPO)/worker:$(IMAGE_TAG) .

clean:
	rm -rf bin
