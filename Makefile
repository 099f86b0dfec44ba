# Energy Flexibility Enrollment Service — developer and CI entry points.
#   make run     the main command: install, then every service in one process (in-process
#                transport, embedded PGlite under .data/) unless DATABASE_URL / KAFKA_BROKERS are set
#   make up      distributed mode: real Kafka + schema registry + Postgres, one process per service
#   make down    stop the distributed services (make infra-down stops Kafka and the registry)
#   make portal  build the embedded portal UI (Vite) into portal/dist, which the gateway serves
#   make test    install, start the infrastructure, lint, type-check, contract check, all test tiers
#   make test-fuzz  the property-based fuzz tier alone (FUZZ_SEED, FUZZ_REQUESTS to vary it)
#   make bench   autocannon against a bare Fastify, the embedded default and distributed mode:
#                req/s, p50, p99, errors and CPU per request of every process (BENCH_ARGS="--rate 500")
#   make bench-messaging  the Kafka transport's request/reply latency for several fetch waits
#                (BENCH_ARGS="--load [--rate 500]": broker requests and CPU per answer under load)
#   make bench-telemetry  telemetry ingest at fleet scale in distributed mode, next to a raw COPY
#                (BENCH_ARGS="--mode embedded" for the main command's default mode)
#   make bench-dispatch   a PROGRAM event's fan-out to 100,000 devices in distributed mode, next to
#                a plain multi-row insert (BENCH_ARGS="--devices 10000" for a quicker run)
#   make bench-storm  1,000 concurrent commissions against the main command: what was answered, stored, and retried
#   make bench-statements  SQL statements per commission across every service, by statement (Kafka between them)
#   make bench-webhooks   webhook delivery of a 100,000-device event's commands to a local receiver, next to a bare sender

SHELL := /bin/bash
NODE_BIN := $(shell bash deploy/local/node.sh)
export PATH := $(NODE_BIN):$(PATH)

.PHONY: install portal run up down infra-up infra-down lint typecheck contracts test test-unit test-fuzz bench bench-messaging bench-telemetry bench-storm bench-webhooks bench-dispatch bench-statements bench-allocations migrate

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

install: node_modules/.installed

PORTAL_SOURCES := $(shell find portal/src portal/public -type f 2>/dev/null) portal/index.html portal/vite.config.ts portal/package.json

portal/dist/index.html: node_modules/.installed $(PORTAL_SOURCES)
	npm run build --silent -w @efs/portal

portal: portal/dist/index.html

# Local development only: sandbox credentials and a known key-encryption key for the signing keys
# and webhook secrets
# (production sets its own SIGNING_KEY_ENCRYPTION_KEY from a secret store).
SANDBOX_ENV = SANDBOX_CLIENT_TOKEN="$${SANDBOX_CLIENT_TOKEN-efs_ct_sandbox_local_development_token}" \
	SANDBOX_UTILITY_API_KEY="$${SANDBOX_UTILITY_API_KEY-efs_uk_sandbox_local_development_key}" \
	SIGNING_KEY_ENCRYPTION_KEY="$${SIGNING_KEY_ENCRYPTION_KEY-dev:ZWZzLWxvY2FsLWRldmVsb3BtZW50LW9ubHkta2V5ISE=}"

run: install portal
	$(SANDBOX_ENV) node cli/src/main.ts run

migrate: install
	node cli/src/main.ts migrate

infra-up:
	bash deploy/local/infra.sh up

infra-down:
	bash deploy/local/infra.sh down

up: install infra-up portal
	$(SANDBOX_ENV) bash deploy/local/services.sh up

down:
	bash deploy/local/services.sh down

lint: install
	npx eslint .

typecheck: install
	npx tsc -p tsconfig.json
	npx tsc -p portal/tsconfig.json
	npx tsc -p test/browser/tsconfig.json

contracts: install
	node libs/contracts/src/checkCompatibility.ts

test-unit: install
	npx vitest run --dir . unit

test-fuzz: install
	npx vitest run test/fuzz $(FUZZ_ARGS)

test: install infra-up lint typecheck contracts portal
	@mkdir -p .run
	@# A run that writes no report is named as such, never summarised from an earlier run's report.
	@rm -f .run/vitest.json .run/vitest-distributed.json
	@# test/distributed stops and restarts the broker, so it runs on its own after every other file,
	@# one file at a time (each starts every service as a process of its own).
	npx vitest run --exclude 'test/distributed/**' --reporter=default --reporter=json --outputFile=.run/vitest.json; status=$$?; \
	npx vitest run test/distributed --no-file-parallelism --reporter=default --reporter=json --outputFile=.run/vitest-distributed.json || status=1; \
	node test/harness/summary.ts .run/vitest.json .run/vitest-distributed.json; \
	exit $$status

bench: install infra-up
	node bench/run.ts $(BENCH_ARGS)

bench-messaging: install infra-up
	node bench/messagingLatency.ts $(BENCH_ARGS)

bench-storm: install portal
	node bench/commissionStorm.ts $(BENCH_ARGS)

bench-telemetry: install infra-up
	node bench/telemetryIngest.ts $(BENCH_ARGS)

bench-webhooks: install infra-up
	node bench/webhookDelivery.ts $(BENCH_ARGS)

bench-dispatch: install infra-up
	node bench/dispatchFanout.ts $(BENCH_ARGS)

bench-statements: install infra-up
	node bench/commissionStatements.ts --kafka $(BENCH_ARGS)

bench-allocations: install
	node bench/allocations.ts $(BENCH_ARGS)
