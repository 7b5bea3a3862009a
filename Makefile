# hap-reconciler's tasks. `make help` lists them.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: help build test vet testbed-tools kube-apiserver clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

build: ## build bin/hap-reconciler
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/hap-reconciler ./cmd/hap-reconciler

test: ## vet and run every test against real PostgreSQL and kube-apiserver (installs what is missing)
	bash hack/test.sh

vet: ## go vet
	$(GO) vet ./...

testbed-tools: ## install etcd, PostgreSQL, promtool and Pushgateway from Debian when missing
	bash hack/ensure-tools.sh

kube-apiserver: ## build and cache kube-apiserver for the test bed
	bash hack/build-kube-apiserver.sh

clean: ## remove build output
	rm -rf bin
