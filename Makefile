# slotgate — see README.md. Two commands matter:
#   make conformance   the main job: full profile, every implemented row, report in ./slotgate-report
#   make test          what CI runs: unit tests + the smoke profile of every row
SHELL := /bin/bash
GO    ?= go
OUT   ?= slotgate-report
ARGS  ?=

.PHONY: all deps build test unit locality smoke conformance stability mutate bench size images containers vet fmt clean

all: build

deps:
	@bash scripts/deps.sh

build:
	$(GO) build -o bin/slotgate ./cmd/slotgate

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# Unit tests of every library package, then the smoke profile of every row
# through the real CLI, so the gate, the report and the exit code are tested too.
test: deps vet build unit locality smoke

unit:
	$(GO) test -count=1 ./impl/... ./check/... ./report/... ./fixtures/... ./fault/... ./traffic/... ./model/... ./validate/... ./sizing/... ./cmd/... ./suites/harness/ ./history/... ./recheck/... ./runenv/... ./mutate/... $$($(GO) list ./rows/... | grep -E '/(judge|workload)$$')

# The locality validator over the reference implementation (spec 000 §Conformance, Locality contract).
locality: build
	./bin/slotgate validate ./impl

smoke: build
	./bin/slotgate run --profile smoke --out $(OUT)-smoke $(ARGS)

conformance: deps build
	./bin/slotgate run --profile full --out $(OUT) $(ARGS)

# A profile (smoke unless PROFILE=full) N times with fresh seeds: a flip
# table (cell × run), every non-pass cell with its seed, and whether a replay
# of that row with that seed reproduces it. Not part of make test.
# make stability N=5 ROWS=routing,axioms; make stability PROFILE=full N=3
N       ?= 5
ROWS    ?=
PROFILE ?= smoke
stability: build
	./bin/slotgate stability --runs $(N) --profile $(PROFILE) --out $(OUT)-stability $(if $(ROWS),--row $(ROWS))

# Mutation testing (README "Mutation testing"): mutants of the fencing scripts
# (and impl's Go with -tags gomut) through the rows that cover them; a kill rate.
# Not part of make test. make mutate ARGS="--max 80 --seed 3"
mutate: build
	./bin/slotgate mutate --profile smoke --out $(OUT)-mutation $(ARGS)

# Local images from the host's Debian packages (no registry needed), and the
# smoke profile on the container provider (testcontainers; Docker required).
images:
	bash scripts/images.sh

containers: build
	eval "$$(bash scripts/images.sh)"; export SLOTGATE_VALKEY_IMAGE SLOTGATE_POSTGRES_IMAGE; ./bin/slotgate run --provider containers --profile smoke --out $(OUT)-containers $(ARGS)

# Fan-out sizing for the shard-count decision D1 (spec 000 §Open Decisions).
size: build
	./bin/slotgate size --out $(OUT)-sizing

# Speed and memory, as ratios against a baseline measured in the same run.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 5x ./fixtures/...
	$(GO) test -run '^$$' -bench FanoutCurve -benchtime 1x ./sizing/...
	$(GO) test -run '^$$' -bench SendLatency -benchtime 3000x ./impl/marconi
	$(GO) test -run '^$$' -bench 'RenewVsRawEvalSHA|DurabilityCost' -benchtime 2000x ./impl/fencing

clean:
	rm -rf bin $(OUT) $(OUT)-smoke $(OUT)-mutation $(OUT)-sizing $(OUT)-containers $(OUT)-stability
