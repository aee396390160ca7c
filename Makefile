# Two commands matter: `make run` and `make test`. Both provision local Redis
# and PostgreSQL processes (installing them from the OS packages when missing).
SHELL := /bin/bash
RUN_DIR := $(CURDIR)/.data/run
GO ?= go

# Every go command here builds with these tags. validator's `validateFn` rule
# and gRPC's x/net/trace pages (through html/template) call methods by names
# known only at run time, and one such call makes the linker keep every
# exported method of every type: a quarter of the api binary, and as much
# resident memory, since its pages are mapped in. Neither is used here.
# The Dockerfile builds with the same tags (TestBuildTagsKeepMethodsOut).
# -trimpath keeps the clone's directory out of what is compiled, so a second
# clone (CI's, the walkthrough's) reuses the build cache instead of
# compiling every package of the module again.
export GOFLAGS := -tags=validator_novalidatefn,grpcnotrace -trimpath $(GOFLAGS)

.PHONY: apiclient run cluster rolling-restart pg-failovers test walkthrough fuzz smoke bench hammer compare pairs soak sustain stop clean token build vet fmt docker-config

# The address `make run` or `make cluster` serves on (recorded in
# .data/run/served.env while it serves), unless HTTP_ADDR is given:
# smoke, hammer and token follow it.
SERVED_ADDR = HTTP_ADDR="$$($(GO) run ./cmd/devenv served-addr "$(RUN_DIR)")"

# Redis and PostgreSQL under .data/run (kept between runs; make stop stops
# them), then the API in the foreground on HTTP_ADDR (127.0.0.1:8080), its
# tokens in .data/run/tokens.env.
run: build
	@bin/devenv run "$(RUN_DIR)"

# The test binaries start the servers their tests need (lockenv.Run):
# cmd/devenv only installs what is missing (HAProxy too, which a test of
# make cluster's configuration runs).
test:
	@$(GO) run ./cmd/devenv install && $(GO) run ./cmd/devenv haproxy && bash scripts/test.sh

# A newcomer's first steps in a fresh mode-700 clone: make run, every sh
# block of README.md and docs/*.md pasted into bash, make smoke, a failed
# start, make stop.
walkthrough:
	@$(GO) run ./tools/walkthrough

# Every fuzz target in turn for FUZZTIME each: `make fuzz FUZZTIME=10m`.
# (make test runs each for a few seconds.)
FUZZTIME ?= 1m
fuzz:
	@FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

# api.http in httpyac against `make run`'s (or `make cluster`'s) service,
# or one started for it when none serves.
smoke: build
	@$(SERVED_ADDR) bin/devenv smoke "$(RUN_DIR)"

# Three instances behind HAProxy on HTTP_ADDR, beside make run's servers
# (its Redis gets a replica and three Sentinels), on a PostgreSQL pair
# under Patroni (a leader, its synchronous standby, one etcd).
cluster: build
	@bin/devenv cluster up "$(RUN_DIR)"

# A rolling restart under a 2,000-user hammer, three times, on servers of
# its own: no request may fail, no seat event may be lost; then a Redis
# Sentinel failover, a PostgreSQL switchover and a PostgreSQL failover
# under the same hammer.
rolling-restart:
	@$(GO) run ./cmd/drill rolling "$(CURDIR)/.data/rolling"

# N (default 20) PostgreSQL failovers (devenv cluster pg-failover: the leader
# SIGKILLed 5 s into a 30 s hammer of 2,000 users) on servers of its own:
# a row per run (promotion, longest time without a booking, the counts
# behind the verdict), then the median and worst; no booking answered 200
# may be lost, nothing but 503 unavailable may fail.
pg-failovers:
	@$(GO) run ./cmd/drill pg-failovers "$(CURDIR)/.data/pgfailovers"

# The lock adapter against the raw go-redis floor, bsm/redislock and
# go-redsync on one Redis, and its own batching against every call alone
# and go-redis's auto-pipelining: ten interleaved rounds (several minutes;
# a line on stderr as each benchmark ends) into .data/bench.txt, judged by
# benchstat.
bench:
	@$(GO) run ./cmd/devenv install && mkdir -p .data && \
		$(GO) test -c -o .data/bench.test ./internal/lock/redislock/bench && \
		(cd internal/lock/redislock/bench && $(CURDIR)/.data/bench.test -table) >.data/bench.txt && \
		echo "Batching: two lanes (the service's), eight (redislock.New's), go-redis's AutoPipeliner, against every call alone" && \
		$(GO) tool benchstat -col '/contender@(alone lanes2 defaults autopipeline)' .data/bench.txt && \
		echo && echo "The lock client against the floor and other Go locks" && \
		$(GO) tool benchstat -col '/contender@(floor defaults bsm redsync)' .data/bench.txt

# Load test against `make run` (or `make cluster`), on the address it serves:
# `make hammer ARGS='-scenario hot-seat -duration 10s'`, or a venue sold to
# parties of 1-6: `make hammer ARGS='-scenario best-available -users 2000'`,
# or 40 on-sales at once with Redis's CPU: `make hammer ARGS='-scenario
# on-sales -rows 10 -row-seats 50 -users 250 -quantity 1-4 -admit-rate 5
# -redis-url $$REDIS_URL'` (docs/operations.md has the rest);
# HAMMER_* variables work too, and HTTP_ADDR or HAMMER_URL name another target.
hammer:
	@test -f "$(RUN_DIR)/env" || { echo "start the service first: make run"; exit 1; }
	@set -a && . "$(RUN_DIR)/env" && set +a && $(SERVED_ADDR) $(GO) run ./cmd/hammer $(ARGS)

# The service against the shared baseline (BASELINE_DIR, default
# ../shared/baseline) in its three modes, on the same servers and hammer,
# 2,000 users, ten rounds, judged by benchstat. ROUNDS, DURATION,
# CONNECTIONS, USERS, SCENARIOS (add fresh-new: 8,000-booking rounds from
# new databases on) and BASELINE_DIR tune it; BEFORE=<revision> adds that
# build, TRACED=1 the service with tracing on, VARIANT="NAME=VALUE ..." the
# service with those settings.
compare:
	@$(GO) run ./cmd/measure compare

# Builds or settings side by side in ROUNDS (default 10) rotated rounds of
# SCENARIOS (default hot seat and fresh seats), judged by benchstat:
# INSTANCES="before=<revision> after=." (the default, before=HEAD), or
# INSTANCES="off=. sampled=.,traced" for tracing at 1% (cmd/measure).
pairs:
	@$(GO) run ./cmd/measure pairs

# A 2,000-user crowd for about three minutes against one instance: ROUNDS
# (default 3) rounds of fresh seats and hot seat (SLICE each, default 20s)
# and a contended run, every verdict passing; then its memory, goroutines
# and open files before and after.
soak:
	@$(GO) run ./cmd/measure soak

# Fresh seats at full speed for DURATION (default 5m) on a new database,
# one instance, 2,000 users: bookings a second and PostgreSQL's CPU per
# booking every 10 s, then the verdict (every window at least 0.85x the
# median; CPU per booking in the last minute at most 1.15x the first's).
sustain:
	@DURATION=$(or $(DURATION),5m) $(GO) run ./cmd/measure sustain

# Stops what make run and make cluster started (their API processes,
# HAProxy, the Sentinels, Redis, PostgreSQL, the Patroni nodes and etcd),
# by their pid files.
stop:
	@$(GO) run ./cmd/devenv stop "$(RUN_DIR)"

# make stop, then deletes .data/ and every PostgreSQL cluster kept for it
# elsewhere (PG_DIR in .data/*/env and PGHA_DIR in .data/*/pgha/env: as
# root in a directory the postgres user cannot enter, under that user's
# home), and the clusters there whose clone is gone.
clean:
	@for d in .data/*/; do [ ! -f "$$d/env" ] && [ ! -f "$$d/pgha/env" ] || $(GO) run ./cmd/devenv remove "$$d"; done
	@rm -rf .data
	@$(GO) run ./cmd/devenv orphans
	@echo "removed .data/ and its PostgreSQL clusters"

# Another development token for `make run`'s service (stderr names the
# address it serves on): `make token USER=carol` or
# `make token USER=root ROLE=admin TTL=1h`.
USER_NAME = $(if $(filter command line,$(origin USER)),$(USER))
token: build
	@test -f "$(RUN_DIR)/env" || { echo "start the service first: make run"; exit 1; }
	@test -n "$(USER_NAME)" || { echo "usage: make token USER=name [ROLE=admin] [TTL=24h]"; exit 2; }
	@set -a && . "$(RUN_DIR)/env" && set +a && bin/api token --user "$(USER_NAME)" $(if $(ROLE),--role "$(ROLE)") --ttl "$(or $(TTL),24h)"
	@$(SERVED_ADDR) && if curl -fsS -o /dev/null --max-time 2 "http://$$HTTP_ADDR/readyz" 2>/dev/null; then \
		echo "make token: for the service on http://$$HTTP_ADDR" >&2; \
	else echo "make token: nothing answers on http://$$HTTP_ADDR now (make run, or HTTP_ADDR=...)" >&2; fi

# The Go client generated from api/openapi.json (internal/apiclient),
# regenerated after a change to the document; make test checks it is current.
apiclient:
	bash scripts/clients.sh write

build:
	@mkdir -p bin && $(GO) build -o bin/api ./cmd/api && $(GO) build -o bin/hammer ./cmd/hammer && $(GO) build -o bin/devenv ./cmd/devenv

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# Checks docker-compose.yml where a compose command exists (no engine needed).
docker-config:
	@if command -v docker-compose >/dev/null 2>&1; then AUTH_SECRET=check-only docker-compose config -q && echo "docker-compose.yml ok"; \
	elif docker compose version >/dev/null 2>&1; then AUTH_SECRET=check-only docker compose config -q && echo "docker-compose.yml ok"; \
	else echo "no docker compose command on this machine: docker-compose.yml not checked"; fi
