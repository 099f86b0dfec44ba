# Energy Flexibility Enrollment Service — developer and CI entry points.
#   make run     the main command: install, then every service in one process (in-process
#                transport, embedded PGlite under .data/) unless DATABASE_URL / KAFKA_BROKERS are set
#   make up      distributed mode: real Kafka + schema registry + Postgres, one process per service
#   make down    stop the distributed services (make infra-down stops Kafka and the registry)
#   make test    install, start the infrastructure, lint, type-check, contract check, all test tiers
#   make bench   request/reply latency and throughput through the gateway vs. a direct Fastify call,
#                and the Kafka transport's latency for several fetch-wait settings

SHELL := /bin/bash
NODE_BIN := $(shell bash deploy/local/node.sh)
export PATH := $(NODE_BIN):$(PATH)

.PHONY: install run up down infra-up infra-down lint typecheck contracts test test-unit bench migrate

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

install: node_modules/.installed

SANDBOX_ENV = SANDBOX_CLIENT_TOKEN="$${SANDBOX_CLIENT_TOKEN-efs_ct_sandbox_local_development_token}" \
	SANDBOX_UTILITY_API_KEY="$${SANDBOX_UTILITY_API_KEY-efs_uk_sandbox_local_development_key}"

run: install
	$(SANDBOX_ENV) node cli/src/main.ts run

migrate: install
	node cli/src/main.ts migrate

infra-up:
	bash deploy/local/infra.sh up

infra-down:
	bash deploy/local/infra.sh down

up: install infra-up
	$(SANDBOX_ENV) bash deploy/local/services.sh up

down:
	bash deploy/local/services.sh down

lint: install
	npx eslint .

typecheck: install
	npx tsc -p tsconfig.json

contracts: install
	node libs/contracts/src/checkCompatibility.ts

test-unit: install
	npx vitest run --dir . unit

test: install infra-up lint typecheck contracts
	@mkdir -p .run
	npx vitest run --reporter=default --reporter=json --outputFile=.run/vitest.json; status=$$?; \
	node -e 'const r = require("./.run/vitest.json"); console.log("tests: " + r.numPassedTests + " passed, " + r.numFailedTests + " failed, " + (r.numPendingTests + r.numTodoTests) + " skipped")'; \
	exit $$status

bench: install infra-up
	node bench/requestReply.ts
	node bench/messagingLatency.ts
