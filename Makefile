# Two commands matter: `make run` and `make test`. Both provision local Redis
# and PostgreSQL processes (installing them from the OS packages when missing).
SHELL := /bin/bash
RUN_DIR := $(CURDIR)/.data/run
GO ?= go

.PHONY: run test fuzz smoke bench hammer compare stop build vet fmt docker-config

run: build
	@bash scripts/run.sh "$(RUN_DIR)"

test:
	@bash scripts/devenv.sh test bash scripts/test.sh

# Every fuzz target in turn for FUZZTIME each: `make fuzz FUZZTIME=10m`.
# (make test runs each for a few seconds.)
FUZZTIME ?= 1m
fuzz:
	@FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

# api.http in httpyac against `make run`'s service, or one started for it.
smoke:
	@bash scripts/smoke.sh "$(RUN_DIR)"

# The lock adapter against the raw go-redis floor, bsm/redislock and
# go-redsync on one Redis: one table, medians of three rounds.
bench:
	@bash scripts/devenv.sh test $(GO) test -count=1 -v ./internal/lock/redislock/bench -args -table

# Load test against `make run`: `make hammer ARGS='-scenario hot-seat -duration 10s'`;
# HAMMER_* variables work too, and the target follows HTTP_ADDR.
hammer:
	@test -f "$(RUN_DIR)/env" || { echo "start the service first: make run"; exit 1; }
	@set -a && . "$(RUN_DIR)/env" && set +a && $(GO) run ./cmd/hammer $(ARGS)

# The service against ../shared/baseline on the same servers and hammer:
# ROUNDS, DURATION, CONNECTIONS and BASELINE_DIR tune it.
compare:
	@bash scripts/compare.sh

stop:
	@bash scripts/devenv.sh stop "$(RUN_DIR)"

build:
	@mkdir -p bin && $(GO) build -o bin/api ./cmd/api && $(GO) build -o bin/hammer ./cmd/hammer

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# Checks docker-compose.yml where a compose command exists (no engine needed).
docker-config:
	@if command -v docker-compose >/dev/null 2>&1; then AUTH_SECRET=check-only docker-compose config -q && echo "docker-compose.yml ok"; \
	elif docker compose version >/dev/null 2>&1; then AUTH_SECRET=check-only docker compose config -q && echo "docker-compose.yml ok"; \
	else echo "no docker compose command on this machine: docker-compose.yml not checked"; fi
