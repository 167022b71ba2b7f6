# apimsync — build, test and demo. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN ?= $(CURDIR)/bin
# The test control plane (kube-apiserver + etcd), built from Go modules by test/controlplane.
ENVTEST_ASSETS ?= $(BIN)/k8s
export KUBEBUILDER_ASSETS := $(ENVTEST_ASSETS)

CONTROLLER_TOOLS_VERSION ?= v0.23.0
STATICCHECK_VERSION ?= v0.8.2
KUSTOMIZE_VERSION ?= v5.8.1
CONTROLLER_GEN ?= $(BIN)/controller-gen
STATICCHECK ?= $(BIN)/staticcheck
KUSTOMIZE ?= $(BIN)/kustomize

# go test flags; CI and `make test` run every package with the race detector (the controllers share
# caches across goroutines). TEST_PKGS narrows it, e.g. TEST_PKGS=./client/...
TEST_PKGS ?= ./...
TEST_FLAGS ?= -count=1 -race -timeout 25m

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ { printf "  %-16s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object paths=./apis/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs (config/crd/bases) and the manager's RBAC role (config/rbac).
	$(CONTROLLER_GEN) crd rbac:roleName=apimsync-manager paths=./apis/... paths=./controllers/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: fmt
fmt: ## Format the Go code.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: $(STATICCHECK) ## Run gofmt (check only), go vet and staticcheck.
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go vet ./...
	$(STATICCHECK) ./...

.PHONY: envtest-assets
envtest-assets: ## Build the test control plane (kube-apiserver + etcd) into bin/k8s, once.
	bash test/controlplane/provision.sh $(ENVTEST_ASSETS)

.PHONY: test
test: envtest-assets ## Run every test: unit, client contract, simulator, envtest controllers.
	go test $(TEST_FLAGS) $(TEST_PKGS)

.PHONY: cover
cover: envtest-assets ## Run the tests with a coverage report per package.
	go test $(TEST_FLAGS) -cover $(TEST_PKGS)

.PHONY: verify
verify: generate manifests ## Regenerate code and manifests; fail if that changed anything tracked by git.
	@git diff --exit-code -- apis config || { echo "generated files are out of date: run 'make generate manifests' and commit"; exit 1; }

##@ Build and run

.PHONY: build
build: ## Build the manager and the 3scale simulator into bin/.
	go build -o $(BIN)/manager ./cmd/manager
	go build -o $(BIN)/apimsync-sim ./cmd/apimsync-sim

.PHONY: run
run: ## Run the manager against the cluster of the current kubeconfig.
	go run ./cmd/manager

.PHONY: demo
demo: envtest-assets build ## Start a local control plane, the simulator and the manager; apply samples/ and watch them converge.
	go run ./cmd/demo

.PHONY: bench
bench: envtest-assets build ## Benchmark calls, time and memory at scale (BENCH_OBJECTS=5000 BENCH_TENANTS=10 ...; see cmd/bench).
	go run ./cmd/bench

##@ Deployment (kustomize, config/)

.PHONY: install
install: $(KUSTOMIZE) ## Install the CRDs into the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/crd | kubectl apply --server-side -f -

.PHONY: uninstall
uninstall: $(KUSTOMIZE) ## Remove the CRDs.
	$(KUSTOMIZE) build config/crd | kubectl delete --ignore-not-found -f -

.PHONY: deploy
deploy: $(KUSTOMIZE) ## Deploy CRDs, RBAC and the manager (config/default).
	$(KUSTOMIZE) build config/default | kubectl apply --server-side -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) ## Remove everything deploy created.
	$(KUSTOMIZE) build config/default | kubectl delete --ignore-not-found -f -

##@ Tools (pinned, built with go install into bin/)

$(CONTROLLER_GEN):
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

$(STATICCHECK):
	GOBIN=$(BIN) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(KUSTOMIZE):
	GOBIN=$(BIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
