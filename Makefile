# apimsync — build, test and demo. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN ?= $(CURDIR)/bin
# The test control plane (kube-apiserver + etcd), built from Go modules by test/controlplane.
ENVTEST_ASSETS ?= $(BIN)/k8s
# The binaries are built as the test control plane is (test/controlplane/provision.sh: CGO_ENABLED=0,
# -trimpath), and test/controlplane/go.mod requires the versions go.mod does of every module both use:
# the Kubernetes packages the manager shares with kube-apiserver are compiled once, not twice.
GOBUILD := CGO_ENABLED=0 go build -trimpath
export KUBEBUILDER_ASSETS := $(ENVTEST_ASSETS)

CONTROLLER_TOOLS_VERSION ?= v0.23.0
STATICCHECK_VERSION ?= v0.8.2
KUSTOMIZE_VERSION ?= v5.8.1
CONTROLLER_GEN ?= $(BIN)/controller-gen
STATICCHECK ?= $(BIN)/staticcheck
KUSTOMIZE ?= $(BIN)/kustomize

# The manager's image (make image, image-push, deploy). IMG names it; VERSION and REVISION go into the
# manager's --version and the image's OCI labels; the commit's time makes the build reproducible.
IMG ?= ghcr.io/apimsync/apimsync:latest
PLATFORMS ?= linux/amd64,linux/arm64
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_ARCHIVE ?= $(BIN)/image/apimsync.tar

# The release's semantic version: a version bump changes this line only (then make bundle). The OLM
# bundle (bundle/, make bundle) installs IMAGE_REPO:vRELEASE in CHANNEL.
RELEASE ?= 0.1.0
IMAGE_REPO ?= ghcr.io/apimsync/apimsync
CHANNEL ?= candidate
# The kustomization make deploy applies: default (cluster-wide) or namespaced (see docs/install.md).
DEPLOY_CONFIG ?= default

# go test flags; CI and `make test` run every package with the race detector (the controllers share
# caches across goroutines). TEST_PKGS narrows it, e.g. TEST_PKGS=./client/...
# -p 4: each envtest package (the top of controllers/, each kind's room) has its own control plane and
# mostly waits on it and on the simulator, so four packages at a time keep two cores busy: the suite
# took 291 s with -p 4 against about 470 s with Go's default (one package per core) on the 2-core machine.
TEST_PKGS ?= ./...
TEST_FLAGS ?= -count=1 -race -timeout 25m -p 4

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ { printf "  %-16s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object paths=./apis/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs (config/crd/bases, copied into charts/apimsync/files/crds), the RBAC role (config/rbac), the webhook configuration (config/webhook); copy the alerts and the user roles into the chart.
	$(CONTROLLER_GEN) crd rbac:roleName=apimsync-manager webhook paths=./apis/... paths=./controllers/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac output:webhook:artifacts:config=config/webhook
	mkdir -p charts/apimsync/files/crds && rm -f charts/apimsync/files/crds/*.yaml && cp config/crd/bases/*.yaml charts/apimsync/files/crds/
	cp config/prometheus/rules.yaml charts/apimsync/files/prometheus-rules.yaml
	cp config/grafana/apimsync-dashboard.json charts/apimsync/files/grafana-dashboard.json
	cp config/rbac/tenant_admin_role.yaml charts/apimsync/templates/user_roles.yaml

.PHONY: bundle
bundle: ## Write the OLM bundle (bundle/: CSV, CRDs, metadata, bundle.Dockerfile) from config/, samples/ and RELEASE.
	go run ./cmd/bundle --version $(RELEASE) --image $(IMAGE_REPO):v$(RELEASE) --channel $(CHANNEL) --out bundle

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
verify: generate manifests bundle ## Regenerate code, manifests and the bundle; fail if that changed anything tracked by git.
	@git diff --exit-code -- apis config charts bundle || { echo "generated files are out of date: run 'make generate manifests bundle' and commit"; exit 1; }

##@ Build and run

.PHONY: build
build: ## Build the manager, the kubectl plugin (kubectl-apimsync) and the 3scale simulator into bin/.
	$(GOBUILD) -o $(BIN)/manager ./cmd/manager
	$(GOBUILD) -o $(BIN)/kubectl-apimsync ./cmd/kubectl-apimsync
	$(GOBUILD) -o $(BIN)/apimsync-sim ./cmd/apimsync-sim

.PHONY: image
image: ## Build the manager's image for PLATFORMS into IMAGE_ARCHIVE (an OCI layout tar; docker/podman load it), no daemon needed.
	go run ./cmd/image build --tag $(IMG) --out $(IMAGE_ARCHIVE) --platforms $(PLATFORMS) \
		--version $(VERSION) --revision "$(REVISION)" --created $(SOURCE_DATE_EPOCH)

.PHONY: image-push
image-push: image ## Build the image and push it as IMG (credentials of docker login / podman login).
	go run ./cmd/image push --archive $(IMAGE_ARCHIVE) $(IMG)

.PHONY: run
run: ## Run the manager against the cluster of the current kubeconfig.
	go run ./cmd/manager

.PHONY: demo
demo: envtest-assets build ## Start a local control plane, the simulator and the manager; apply samples/ and watch them converge.
	CGO_ENABLED=0 go run -trimpath ./cmd/demo

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

# deploy renders config/$(DEPLOY_CONFIG) through a kustomization in bin/deploy that sets the image to IMG
# (kustomize edit set image), so that no tracked file changes.
DEPLOY_DIR := $(BIN)/deploy

.PHONY: deploy-manifests
deploy-manifests: $(KUSTOMIZE) ## Render config/$(DEPLOY_CONFIG) with image IMG into bin/deploy/apimsync.yaml.
	rm -rf $(DEPLOY_DIR) && mkdir -p $(DEPLOY_DIR)
	printf 'resources:\n  - %s\n' "$$(realpath --relative-to=$(DEPLOY_DIR) config/$(DEPLOY_CONFIG))" > $(DEPLOY_DIR)/kustomization.yaml
	cd $(DEPLOY_DIR) && $(KUSTOMIZE) edit set image ghcr.io/apimsync/apimsync=$(IMG)
	$(KUSTOMIZE) build $(DEPLOY_DIR) > $(DEPLOY_DIR)/apimsync.yaml

.PHONY: deploy
deploy: deploy-manifests ## Deploy CRDs, RBAC and the manager with image IMG (config/$(DEPLOY_CONFIG): default or namespaced).
	kubectl apply --server-side -f $(DEPLOY_DIR)/apimsync.yaml

.PHONY: undeploy
undeploy: deploy-manifests ## Remove everything deploy created.
	kubectl delete --ignore-not-found -f $(DEPLOY_DIR)/apimsync.yaml

##@ Tools (pinned, built with go install into bin/)

$(CONTROLLER_GEN):
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

$(STATICCHECK):
	GOBIN=$(BIN) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(KUSTOMIZE):
	GOBIN=$(BIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
