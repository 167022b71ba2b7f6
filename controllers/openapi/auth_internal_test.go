package openapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/internal/openapiimport"
)

// TestAuthenticationOf: what the document's security and the OpenAPI's spec make the Product's
// authentication: spec.security under whichever authentication (a user key when the document asks for
// none), the OIDC issuer, claims and gateway answers from spec.oidc, and the flows: the document's, or
// spec.oidc.authenticationFlow instead — with 3scale-operator's conventions only for an OpenID Connect
// scheme, whose flows are otherwise all off, its credentials in headers, as 3scale-operator generates them.
func TestAuthenticationOf(t *testing.T) {
	security := &v1alpha1.SecuritySpec{HostHeader: "pets.internal", SecretToken: "t"}
	answers := &v1alpha1.GatewayResponseSpec{NoMatch: &v1alpha1.GatewayErrorResponse{Status: 418}}
	override := &v1alpha1.OIDCAuthenticationFlowSpec{ServiceAccountsEnabled: true}
	oidc := func(conventions v1alpha1.OpenAPIConventions) *v1alpha1.OpenAPI {
		return &v1alpha1.OpenAPI{Spec: v1alpha1.OpenAPISpec{Conventions: conventions, Security: security,
			OIDC: &v1alpha1.OpenAPIOIDCSpec{IssuerEndpoint: "https://sso.example.com/realms/r", AuthenticationFlow: override,
				JWTClaimWithClientID: "cid", JWTClaimWithClientIDType: "plain", GatewayResponse: answers}}}
	}
	oauth2 := openapiimport.Auth{Kind: "oidc", Scheme: "o", Flows: []string{"authorizationCode"}}
	openIDConnect := openapiimport.Auth{Kind: "oidc", Scheme: "oc"}
	withOIDC := func(flow *v1alpha1.OIDCAuthenticationFlowSpec, credentials v1alpha1.CredentialsLocation) *v1alpha1.AuthenticationSpec {
		return &v1alpha1.AuthenticationSpec{OIDC: &v1alpha1.OIDCAuthSpec{IssuerType: "rest", IssuerEndpoint: "https://sso.example.com/realms/r",
			AuthenticationFlow: flow, JWTClaimWithClientID: "cid", JWTClaimWithClientIDType: "plain",
			GatewayOptions: v1alpha1.GatewayOptions{CredentialsLocation: credentials, Security: security, GatewayResponse: answers}}}
	}
	for name, c := range map[string]struct {
		o    *v1alpha1.OpenAPI
		auth openapiimport.Auth
		want *v1alpha1.AuthenticationSpec
	}{
		"no security, no spec.security": {&v1alpha1.OpenAPI{}, openapiimport.Auth{}, nil},
		"no security, spec.security: a user key": {&v1alpha1.OpenAPI{Spec: v1alpha1.OpenAPISpec{Security: security}}, openapiimport.Auth{},
			&v1alpha1.AuthenticationSpec{UserKey: &v1alpha1.UserKeyAuthSpec{GatewayOptions: v1alpha1.GatewayOptions{Security: security}}}},
		"an API key": {&v1alpha1.OpenAPI{Spec: v1alpha1.OpenAPISpec{Security: security}}, openapiimport.Auth{Kind: "userKey", Param: "X-Key", Location: "headers"},
			&v1alpha1.AuthenticationSpec{UserKey: &v1alpha1.UserKeyAuthSpec{AuthUserKey: "X-Key", GatewayOptions: v1alpha1.GatewayOptions{CredentialsLocation: "headers", Security: security}}}},
		"OAuth 2.0, the flows overridden":               {oidc(v1alpha1.ConventionsApimsync), oauth2, withOIDC(override, "")},
		"OAuth 2.0, 3scale-operator: the document's":    {oidc(v1alpha1.ConventionsThreescaleOperator), oauth2, withOIDC(&v1alpha1.OIDCAuthenticationFlowSpec{StandardFlowEnabled: true}, "headers")},
		"OpenID Connect, 3scale-operator: the override": {oidc(v1alpha1.ConventionsThreescaleOperator), openIDConnect, withOIDC(override, "headers")},
	} {
		got, err := authenticationOf(c.o, c.auth)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	// 3scale-operator's conventions, OpenID Connect, no override: every flow off.
	o := oidc(v1alpha1.ConventionsThreescaleOperator)
	o.Spec.OIDC.AuthenticationFlow = nil
	if got, _ := authenticationOf(o, openIDConnect); *got.OIDC.AuthenticationFlow != (v1alpha1.OIDCAuthenticationFlowSpec{}) {
		t.Errorf("flows %+v, want none", got.OIDC.AuthenticationFlow)
	}
}
