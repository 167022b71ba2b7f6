package product

// What a Product sets in its service's gateway: proxy settings, authentication (OIDC), the policy chain and backend usages, resolved from the spec and compared with 3scale's.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

func (s *Syncer) resolvePolicies(ctx context.Context, p *v1alpha1.Product) ([]tsclient.Policy, error) {
	if len(p.Spec.Policies) == 0 {
		return nil, nil
	}
	out := make([]tsclient.Policy, 0, len(p.Spec.Policies))
	for i, pol := range p.Spec.Policies {
		config := json.RawMessage(`{}`)
		switch {
		case pol.Configuration != nil && len(pol.Configuration.Raw) > 0:
			config = json.RawMessage(pol.Configuration.Raw)
		case pol.ConfigurationRef != nil:
			v, err := kit.SecretValue(ctx, s.Reader, p.Namespace, pol.ConfigurationRef, fmt.Sprintf("configuration of policy %q", pol.Name))
			if err != nil {
				return nil, err
			}
			if !json.Valid([]byte(v)) {
				return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "policies[%d] (%s): the configuration in Secret %q is not JSON", i, pol.Name, pol.ConfigurationRef.Name)
			}
			config = json.RawMessage(v)
		}
		out = append(out, tsclient.Policy{Name: pol.Name, Version: pol.Version, Configuration: config, Enabled: pol.Enabled})
	}
	return out, nil
}

// resolveProxy returns the proxy attributes the spec sets, by porta name, and porta's defaults for the
// managed ones it does not set; others are left as 3scale has them.
func (s *Syncer) resolveProxy(ctx context.Context, p *v1alpha1.Product) (map[string]string, *tsclient.OIDCConfiguration, error) {
	proxy := maps.Clone(proxyDefaults)
	set := func(key, value string) {
		if value != "" {
			proxy[key] = value
		}
	}
	if d := p.Spec.Deployment; d != nil && d.ApicastSelfManaged != nil {
		set("sandbox_endpoint", d.ApicastSelfManaged.StagingPublicBaseURL)
		set("endpoint", d.ApicastSelfManaged.ProductionPublicBaseURL)
	}
	a := p.Spec.Authentication
	if a == nil {
		return proxy, nil, nil
	}
	var gw v1alpha1.GatewayOptions
	var oidc *tsclient.OIDCConfiguration
	switch {
	case a.UserKey != nil:
		gw = a.UserKey.GatewayOptions
		set("auth_user_key", a.UserKey.AuthUserKey)
	case a.AppKeyAppID != nil:
		gw = a.AppKeyAppID.GatewayOptions
		set("auth_app_id", a.AppKeyAppID.AppID)
		set("auth_app_key", a.AppKeyAppID.AppKey)
	case a.OIDC != nil:
		o := a.OIDC
		gw = o.GatewayOptions
		endpoint := o.IssuerEndpoint
		if o.IssuerEndpointRef != nil {
			v, err := kit.SecretValue(ctx, s.Reader, p.Namespace, o.IssuerEndpointRef, "OIDC issuer endpoint")
			if err != nil {
				return nil, nil, err
			}
			endpoint = v
		}
		set("oidc_issuer_endpoint", endpoint)
		set("oidc_issuer_type", o.IssuerType)
		set("jwt_claim_with_client_id", o.JWTClaimWithClientID)
		set("jwt_claim_with_client_id_type", o.JWTClaimWithClientIDType)
		oidc = &tsclient.OIDCConfiguration{}
		if f := o.AuthenticationFlow; f != nil {
			oidc = &tsclient.OIDCConfiguration{StandardFlowEnabled: f.StandardFlowEnabled, ImplicitFlowEnabled: f.ImplicitFlowEnabled,
				ServiceAccountsEnabled: f.ServiceAccountsEnabled, DirectAccessGrantsEnabled: f.DirectAccessGrantsEnabled}
		}
	}
	set("credentials_location", string(gw.CredentialsLocation))
	if sec := gw.Security; sec != nil {
		set("hostname_rewrite", sec.HostHeader)
		set("secret_token", sec.SecretToken)
	}
	if r := gw.GatewayResponse; r != nil {
		for suffix, e := range map[string]*v1alpha1.GatewayErrorResponse{"auth_failed": r.AuthFailed, "auth_missing": r.AuthMissing,
			"no_match": r.NoMatch, "limits_exceeded": r.LimitsExceeded} {
			if e == nil {
				continue
			}
			set("error_status_"+suffix, strconv.Itoa(int(e.Status)))
			set("error_headers_"+suffix, e.ContentType)
			set("error_"+suffix, e.Body)
		}
	}
	return proxy, oidc, nil
}

// syncUsages creates, updates and deletes backend usages to match want (backend id -> path).
func (s *Syncer) syncUsages(ctx context.Context, sess *engine.Session, snap *Snapshot, want map[int64]string) error {
	c, id := sess.Remote, snap.Product.ID
	kept := make([]tsclient.BackendUsage, 0, len(want))
	have := map[int64]tsclient.BackendUsage{}
	for _, u := range snap.Usages {
		if _, wanted := want[u.BackendID]; !wanted {
			if err := kit.IgnoreNotFound(c.DeleteBackendUsage(ctx, id, u.ID)); err != nil {
				return fmt.Errorf("cannot remove backend %d from product %q: %w", u.BackendID, sess.SystemName, err)
			}
			continue
		}
		have[u.BackendID] = u
	}
	for _, backendID := range kit.SortedKeys(want) {
		path := want[backendID]
		u, ok := have[backendID]
		switch {
		case !ok:
			created, err := c.CreateBackendUsage(ctx, id, tsclient.BackendUsageParams{BackendAPIID: backendID, Path: path})
			if err != nil {
				return fmt.Errorf("cannot add backend %d to product %q: %w", backendID, sess.SystemName, err)
			}
			u = *created
		case u.Path != path:
			updated, err := c.UpdateBackendUsage(ctx, id, u.ID, tsclient.BackendUsageParams{Path: path})
			if err != nil {
				return fmt.Errorf("cannot change the path of backend %d in product %q: %w", backendID, sess.SystemName, err)
			}
			u = *updated
		}
		kept = append(kept, u)
	}
	snap.Usages = kept
	return nil
}

// proxyAttributes flattens a proxy into its attributes by porta name, as strings.
func proxyAttributes(proxy *tsclient.Proxy) map[string]string {
	out := map[string]string{}
	raw, err := json.Marshal(proxy)
	if err != nil {
		return out
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return out
	}
	for k, v := range m {
		switch t := v.(type) {
		case nil:
		case string:
			out[k] = t
		case float64:
			out[k] = strconv.FormatFloat(t, 'f', -1, 64)
		default:
			out[k] = fmt.Sprint(t)
		}
	}
	return out
}

func proxyMatches(remote, want map[string]string) bool {
	for k, v := range want {
		if remote[k] != v && !(endpointAttributes[k] && kit.SameEndpoint(remote[k], v)) {
			return false
		}
	}
	return true
}

func oidcMatches(remote, want *tsclient.OIDCConfiguration) bool {
	return want == nil || (remote != nil && *remote == *want)
}

func policiesMatch(remote, want []tsclient.Policy) bool {
	if want == nil {
		return true
	}
	remote = kit.WithoutImplicitApicast(remote, want)
	if len(remote) != len(want) {
		return false
	}
	for i := range want {
		r, w := remote[i], want[i]
		if r.Name != w.Name || r.Version != w.Version || r.Enabled != w.Enabled || !kit.JSONEqual(r.Configuration, w.Configuration) {
			return false
		}
	}
	return true
}

func usagesMatch(remote []tsclient.BackendUsage, want map[int64]string) bool {
	if len(remote) != len(want) {
		return false
	}
	for _, u := range remote {
		if path, ok := want[u.BackendID]; !ok || path != u.Path {
			return false
		}
	}
	return true
}
