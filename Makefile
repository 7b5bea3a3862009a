# hap-reconciler's tasks. `make help` lists them.
GO      ?= go
# The version and commit `hap-reconciler --version` prints: the chart's
# appVersion is the released version; a build between releases says how far
# past the last tag it is.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Where build writes the binary.
OUT     ?= bin/hap-reconciler
# The Go FIPS 140-3 module the binary is built with, as Kyma builds its
# images; the image runs it with GODEBUG=fips140=only,tlsmlkem=0.
GOFIPS140 ?= v1.0.0

.PHONY: help build image test e2e e2e-upgrade pick-cost resolve-cost claim-wait vet testbed-tools etcd kube-apiserver gardener-apiserver helm clean reliability differential soak fuzz demo bench

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

build: ## build bin/hap-reconciler (with the FIPS 140-3 module, GOFIPS140=v1.0.0)
	CGO_ENABLED=0 GOFIPS140=$(GOFIPS140) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(OUT) ./cmd/hap-reconciler

# The image: an OCI image archive, built by buildah without a Docker engine
# (docs/deployment.md); IMAGE is the name recorded in it.
IMAGE_ARCHIVE ?= bin/hap-reconciler-image.tar
IMAGE         ?= europe-docker.pkg.dev/kyma-project/prod/hap-reconciler:$(VERSION)

image: ## build the image without Docker (buildah from Debian, installed when missing) into IMAGE_ARCHIVE, an OCI archive, then check it: layout, user, no shell, the binary's --version
	VERSION='$(VERSION)' COMMIT='$(COMMIT)' OUT='$(IMAGE_ARCHIVE)' IMAGE='$(IMAGE)' bash hack/build-image.sh >/dev/null
	$(GO) test -count=1 -run '^TestImageArchive$$' ./test/image/ \
		-args -image.archive='$(abspath $(IMAGE_ARCHIVE))' -image.version='$(VERSION)' -image.commit='$(COMMIT)'

demo: ## run every job once on a throwaway landscape, print the report, serve the metrics until Ctrl-C (DEMO_RELEASE=1 releases for real)
	$(GO) build -o bin/hap-demo ./test/demo
	bin/hap-demo $(DEMO_FLAGS)

test: ## gofmt, vet and run every test against real PostgreSQL, kube-apiserver and gardener-apiserver (installs what is missing)
	bash hack/test.sh

e2e: image ## as root: the chart with KEB's values on a real kubelet (containerd, runc and a kubelet beside the test bed): install, the migrate hook, serve Ready, /metrics, helm test, a CronJob run, upgrade, uninstall leaving nothing; prints each step's time (docs/e2e.md)
	bash hack/e2e.sh '$(IMAGE_ARCHIVE)'

e2e-upgrade: image ## as root: on the e2e's kubelet, the release before this tree's schema (its chart and image) upgraded to this tree's, rolled back as docs/deployment.md says and upgraded again, while KEB's replicas provision through both module pins (docs/e2e.md)
	E2E_TEST=TestChartUpgradeAndRollbackWhileKEBProvisions bash hack/e2e.sh '$(IMAGE_ARCHIVE)'

# The long randomized runs; `make test` runs a few of each.
TRIALS   ?= 1000
CRASHES  ?= 50
FUZZTIME ?= 30s

reliability: ## race trials under faults (TRIALS=1000, about 19 s each on 2 cores) and SIGKILL (CRASHES=50) trials on the real test bed; a failure prints its seed
	bash hack/ensure-tools.sh
	bash hack/build-etcd.sh >/dev/null
	bash hack/build-kube-apiserver.sh >/dev/null
	bash hack/build-gardener-apiserver.sh >/dev/null
	$(GO) test -count=1 -timeout 600m -run 'TestRacesUnderFaults|TestKilledRunsLeaveNothingHalfDone' -v ./test/reliability/ \
		-args -reliability.trials=$(TRIALS) -reliability.crashes=$(CRASHES)

# The pick-time differential stream; `make test` runs 300 picks of it.
PICKS ?= 10000
SEED  ?= 0

differential: ## a seeded stream of KEB's actions and job runs (CronJob, then serve) on the real test bed, every pick compared with KEB's rules on the live state (PICKS=10000, about 0.25 s a pick on 2 cores; SEED=0 takes one from the clock); a failure prints its seed
	bash hack/ensure-tools.sh
	bash hack/build-etcd.sh >/dev/null
	bash hack/build-kube-apiserver.sh >/dev/null
	bash hack/build-gardener-apiserver.sh >/dev/null
	$(GO) test -count=1 -timeout 600m -run TestPicksAgreeWithKEBAtTheMomentItAsks -v ./test/differential/ \
		-args -differential.picks=$(PICKS) -differential.seed=$(SEED)

# The soak: serve, the built binary, on the real test bed for DURATION of
# compressed time (schedules of seconds, retentions of minutes) while KEB's
# actions stream and the servers are restarted; `make test` runs 90 s of it.
DURATION ?= 10m

soak: ## serve on the real test bed for DURATION (10m) of compressed time, KEB's actions streaming, the API servers and PostgreSQL restarted now and then; fits each series' slope per hour (memory, goroutines, fds, DB connections, every table's rows) and fails on one not flat; writes test/soak/results/<start>.json and .md (docs/benchmarks.md)
	bash hack/ensure-tools.sh
	bash hack/build-etcd.sh >/dev/null
	bash hack/build-kube-apiserver.sh >/dev/null
	bash hack/build-gardener-apiserver.sh >/dev/null
	$(GO) test -count=1 -timeout 600m -run '^TestSoak$$' -v ./test/differential/ \
		-args -soak.duration=$(DURATION) -soak.out=$(abspath test/soak/results) -soak.commit=$(shell git rev-parse --short HEAD 2>/dev/null)

fuzz: ## run each fuzz target for FUZZTIME (default 30s); new failing inputs land in testdata/fuzz
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/config/
	$(GO) test -run '^$$' -fuzz '^FuzzBindingFromLabels$$' -fuzztime $(FUZZTIME) ./internal/hap/
	$(GO) test -run '^$$' -fuzz '^FuzzProviderNames$$' -fuzztime $(FUZZTIME) ./internal/hap/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/hap/rules/
	$(GO) test -run '^$$' -fuzz '^FuzzScannerAgreesWithTheReference$$' -fuzztime $(FUZZTIME) ./internal/gardener/wire/
	$(GO) test -short -run '^$$' -fuzz '^FuzzRedact$$' -fuzztime $(FUZZTIME) ./internal/db/

# The 2,000, 10,000 and 20,000 shoot landscapes; all three take about 35 minutes
# on 2 cores, BENCH_SIZES=S about 5 minutes. XL, 100,000 shoots, is opt-in
# (BENCH_SIZES=XL, 3 run/floor pairs; about 36 minutes on 2 cores, 4 of them
# seeding; it starts both API servers without etcd compaction, see
# docs/benchmarks.md). BENCH_PICKS sets the picks per path.
BENCH_SIZES ?= S,M,L
BENCH_PICKS ?= 10000

bench: build ## on the real gardener-apiserver, measure run against its floor (protobuf and JSON), KEB's live pick against the one-query read, and serve's watched cycle (BENCH_SIZES=S for a quick look, BENCH_SIZES=XL for 100,000 shoots)
	bash hack/ensure-tools.sh
	bash hack/build-etcd.sh >/dev/null
	bash hack/build-kube-apiserver.sh >/dev/null
	bash hack/build-gardener-apiserver.sh >/dev/null
	$(GO) run ./test/bench/cmd/hap-bench -binary bin/hap-reconciler -sizes $(BENCH_SIZES) -picks $(BENCH_PICKS)

# A pick's cost at XL on PostgreSQL alone, through lib/pq and pgx, with and
# without KEB's index, with 0 to 20,000 instances created in the last hour.
PICK_COST_PICKS ?= 2000

pick-cost: ## a pick's p50/p99 at XL (400,000 instance rows) by driver, KEB's index and recent instances of other GAs (about 10 minutes on 2 cores); figures in docs/benchmarks.md
	bash hack/ensure-tools.sh
	@mkdir -p bin
	$(GO) test -count=1 -timeout 120m -run '^TestPickCostAtXL$$' -v ./test/provisioning/ \
		-args -pick.cost -pick.cost.picks=$(PICK_COST_PICKS) -pick.cost.out=$(abspath bin/pick-cost.json)

# KEB's resolve step end to end on the real gardener-apiserver and PostgreSQL:
# KEB's live path, the adopted step (NextBinding) and its statement alone,
# asked in turn for the same requests, both pool kinds, one worker and
# RESOLVE_COST_WORKERS at once. SIZES as BENCH_SIZES (S, M, L, XL or a number
# of shoots); S, M and L take about 12 minutes on 2 cores, XL about 22.
SIZES                  ?= S,M
RESOLVE_COST_DEDICATED ?= 300
RESOLVE_COST_SHARED    ?= 8
RESOLVE_COST_WORKERS   ?= 8

resolve-cost: ## KEB's resolve step end to end, live path against the adopted step, dedicated and shared pools, quiet and 8 workers (SIZES=S,M); writes bin/resolve-cost.json and .md; figures in docs/benchmarks.md
	bash hack/ensure-tools.sh
	bash hack/build-etcd.sh >/dev/null
	bash hack/build-kube-apiserver.sh >/dev/null
	bash hack/build-gardener-apiserver.sh >/dev/null
	mkdir -p bin
	$(GO) test -count=1 -timeout 240m -run '^TestResolveCost$$' -v ./test/resolvecost/ \
		-args -resolve.cost -resolve.cost.sizes=$(SIZES) -resolve.cost.dedicated=$(RESOLVE_COST_DEDICATED) \
		-resolve.cost.shared=$(RESOLVE_COST_SHARED) -resolve.cost.workers=$(RESOLVE_COST_WORKERS) -resolve.cost.out=$(abspath bin/resolve-cost.json)

# Bursts of KEB's workers for one GA whose bindings are full, on the real
# gardener-apiserver and PostgreSQL.
CLAIM_WAIT_ROUNDS ?= 20

claim-wait: ## the retries for another worker's claim: bursts of 8 and 20 of KEB's workers for one full GA, p50/p99 (a few minutes); figures in docs/benchmarks.md
	bash hack/ensure-tools.sh
	@mkdir -p bin
	$(GO) test -count=1 -timeout 60m -run '^TestClaimWaitCost$$' -v ./test/confirm/ \
		-args -claim.wait -claim.wait.rounds=$(CLAIM_WAIT_ROUNDS) -claim.wait.out=$(abspath bin/claim-wait.json)

vet: ## go vet
	$(GO) vet ./...

testbed-tools: ## install PostgreSQL, promtool and Pushgateway from Debian when missing
	bash hack/ensure-tools.sh

etcd: ## build and cache etcd 3.5 (the module graph's version) for the test bed
	bash hack/build-etcd.sh

kube-apiserver: ## build and cache kube-apiserver for the test bed
	bash hack/build-kube-apiserver.sh

gardener-apiserver: ## build and cache gardener-apiserver (go.mod's gardener version) for the test bed
	bash hack/build-gardener-apiserver.sh

helm: ## build and cache helm for the chart's tests (unless one is installed)
	bash hack/install-helm.sh

clean: ## remove build output
	rm -rf bin
