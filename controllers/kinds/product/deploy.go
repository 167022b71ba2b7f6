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
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
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
	g.Desired.BackendIDs, g.Desired.Backends = nil, nil // in Usages and Backends
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

// deploy deploys the product's configuration to staging. A deploy whose answer was lost (porta's deploy
// can outlast a proxy's timeout, and land) is settled from state, as a lost create is by a list read:
// staging's latest configuration is read, and when it holds what the product's state wants
// (stagingHolds), the deploy is done; otherwise the lost answer is the caller's error, and the next
// attempt deploys again. It is never sent again until an answer comes.
func (s *Syncer) deploy(ctx context.Context, c *tsclient.Client, p *v1alpha1.Product, d Desired, snap *Snapshot) error {
	err := c.DeployProxy(ctx, snap.Product.ID)
	if err == nil || !tsclient.AnswerLost(err) {
		return err
	}
	_, content, rerr := c.LatestProxyConfigContent(ctx, snap.Product.ID, tsclient.EnvironmentSandbox)
	if rerr != nil || content == nil || !stagingHolds(content, p, d, snap) {
		return err
	}
	s.event(p, "Normal", v1alpha1.ReasonDeploySettled, "the answer to the deploy was lost; staging's latest configuration holds the product's state, so the deploy is done")
	return nil
}

// stagingHolds reports whether a staging configuration carries the product's gateway state as 3scale
// holds it after this sync's writes: the authentication mode, every proxy attribute apimsync manages,
// the policy chain (its enabled policies in order, apicast appended when missing, as
// Proxy::PoliciesConfig#chain builds it), the product's mapping rules (as stored) and each used backend's
// rules under the usage's path (ProxyRuleDecorator#pattern: File.join('/', path, pattern)), and no other
// rule.
func stagingHolds(content *tsclient.ProxyConfigContent, p *v1alpha1.Product, d Desired, snap *Snapshot) bool {
	if content.BackendVersion != snap.Product.BackendVersion {
		return false
	}
	for k, v := range snap.Proxy {
		raw, ok := content.Proxy.Attributes[k]
		var got string
		if ok && json.Unmarshal(raw, &got) == nil && got != v {
			return false
		}
	}
	if snap.Policies != nil {
		var want []string
		hasAPIcast := false
		for _, pol := range snap.Policies {
			hasAPIcast = hasAPIcast || pol.Name == "apicast"
			if pol.Enabled {
				want = append(want, pol.Name+"@"+pol.Version)
			}
		}
		if !hasAPIcast {
			want = append(want, "apicast@builtin")
		}
		got := make([]string, 0, len(content.Proxy.PolicyChain))
		for _, pol := range content.Proxy.PolicyChain {
			got = append(got, pol.Name+"@"+pol.Version)
		}
		if !slices.Equal(got, want) {
			return false
		}
	}
	type rule struct {
		method, pattern string
		delta           int64
		last            bool
	}
	var want []rule
	for _, r := range snap.Children.Rules {
		want = append(want, rule{r.HTTPMethod, r.Pattern, r.Delta, r.Last})
	}
	for _, b := range d.Backends {
		for _, r := range b.Children.Rules {
			want = append(want, rule{r.HTTPMethod, strings.TrimRight(d.BackendIDs[b.ID], "/") + "/" + strings.TrimLeft(r.Pattern, "/"), int64(max(r.Increment, 1)), r.Last})
		}
	}
	got := make([]rule, 0, len(content.Proxy.ProxyRules))
	for _, r := range content.Proxy.ProxyRules {
		got = append(got, rule{r.HTTPMethod, r.Pattern, r.Delta, r.Last})
	}
	key := func(r rule) string { return fmt.Sprintf("%s %s %d %t", r.method, r.pattern, r.delta, r.last) }
	sortRules := func(rs []rule) {
		slices.SortFunc(rs, func(a, b rule) int {
			if key(a) < key(b) {
				return -1
			}
			if key(a) > key(b) {
				return 1
			}
			return 0
		})
	}
	sortRules(want)
	sortRules(got)
	return slices.Equal(want, got)
}
