package v1alpha1_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	. "github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

func jsonObj(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func TestCommonSpecHelpers(t *testing.T) {
	cases := map[string]struct {
		spec       CommonSpec
		wantSecret string
		wantPolicy DeletionPolicy
	}{
		"defaults":  {spec: CommonSpec{}, wantSecret: "threescale-provider-account", wantPolicy: DeletionPolicyDelete},
		"set":       {spec: CommonSpec{ProviderAccountRef: &ProviderAccountRef{Name: "team-a"}, DeletionPolicy: DeletionPolicyRetain}, wantSecret: "team-a", wantPolicy: DeletionPolicyRetain},
		"empty ref": {spec: CommonSpec{ProviderAccountRef: &ProviderAccountRef{}}, wantSecret: "threescale-provider-account", wantPolicy: DeletionPolicyDelete},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.spec.ProviderAccountSecretName(); got != tc.wantSecret {
				t.Errorf("secret = %q, want %q", got, tc.wantSecret)
			}
			if got := tc.spec.EffectiveDeletionPolicy(); got != tc.wantPolicy {
				t.Errorf("policy = %q, want %q", got, tc.wantPolicy)
			}
		})
	}
}
