package product

// Whether staging's gateway configuration is behind is decided from state, never from "this attempt
// wrote something". porta builds a product's APIcast configuration from the product (its proxy,
// authentication, policy chain, mapping rules, backend usages) and from every backend it uses (private
// endpoint, metrics, methods, mapping rules), and a deploy saves it as a new staging version only when
// it differs from the latest (ApicastV2DeploymentService): a deploy of an unchanged product makes
// nothing. apimsync records in status.deployedHash the keyed hash of that gateway-relevant state as it
// was when staging last answered a deploy, and deploys whenever the current state's hash differs — so an
// edited Backend deploys each Product that uses it once, and a write whose answer was lost, a restart
// between a write and its deploy, or a deploy that failed all end deployed on the next attempt.

import (
	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit/children"
)

// DeployOwed is status.deployedHash while writes apimsync made wait for their deploy: it matches no hash,
// so the deploy is made by whichever attempt comes next, even one that finds nothing left to write.
const DeployOwed = "Undeployed"

// backendGateway is what of a Backend goes into the configuration of a Product that uses it. The Backend
// is usable (its current generation synced), so its spec is what 3scale holds.
type backendGateway struct {
	ID             int64
	PrivateBaseURL string
	Children       children.Spec
	// Revision is the Backend's status.gatewayRevision: a drift repair of the backend, which changes no
	// spec, still deploys its products.
	Revision int64
}

// gatewayState is everything a product's staging configuration is built from.
type gatewayState struct {
	Tenant, SystemName         string
	Deployment, BackendVersion string
	Children                   children.Spec
	Usages                     map[int64]string
	Backends                   []backendGateway
	Desired                    Desired
}

// gatewayHash is the keyed hash of a product's gateway-relevant state.
func gatewayHash(sess *engine.Session, g gatewayState) string {
	g.Desired.BackendIDs = nil // in Usages
	return sess.HashOf(g)
}

// deployPending reports whether staging's configuration is behind the product's gateway-relevant state
// (d.GatewayHash): a deploy was owed, or that state changed since the last deploy. A product apimsync
// never deployed (status.deployedHash empty: adopted, restored without status, synced by an earlier
// version) takes staging as deployed (recordDeployedIfUnknown), so that adoption writes nothing.
func deployPending(p *v1alpha1.Product, d Desired) bool {
	return p.Status.DeployedHash != d.GatewayHash
}

// recordDeployedIfUnknown takes staging as deployed from the current state when apimsync has no record
// of a deploy of its own.
func recordDeployedIfUnknown(p *v1alpha1.Product, d Desired) {
	if p.Status.DeployedHash == "" {
		p.Status.DeployedHash = d.GatewayHash
	}
}

// oweDeploy records, before a write that changes what staging is built from, that a deploy is owed.
func oweDeploy(p *v1alpha1.Product) { p.Status.DeployedHash = DeployOwed }

// gatewayMatches reports whether 3scale holds every gateway-relevant setting of the product as d wants
// (the service's own name and description are not among them).
func gatewayMatches(p *v1alpha1.Product, d Desired, snap *Snapshot) bool {
	deployment, backendVersion := serviceAttrs(p)
	return snap.Product.DeploymentOption == deployment && snap.Product.BackendVersion == backendVersion &&
		proxyMatches(snap.Proxy, d.Proxy) && oidcMatches(snap.OIDC, d.OIDC) && policiesMatch(snap.Policies, d.Policies) &&
		usagesMatch(snap.Usages, d.BackendIDs) && children.UpToDate(snap.Children, productChildren(p))
}
