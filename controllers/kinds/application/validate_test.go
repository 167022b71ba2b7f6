package application_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/internal/harness"
	"github.com/apimsync/apimsync/controllers/kinds/application"
)

// TestValidateCredentialsSecret: a credentials Secret whose name alone makes it the default
// provider-account Secret, or the spec.credentialsRef Secret (by default name too), is Invalid before
// anything is read; a Secret the account's provider account may be named after is not Validate's to
// tell (Resolve checks it).
func TestValidateCredentialsSecret(t *testing.T) {
	ref := func(name string) *v1alpha1.ProviderAccountRef { return &v1alpha1.ProviderAccountRef{Name: name} }
	cases := map[string]struct {
		secretName string
		ref        *v1alpha1.ProviderAccountRef
		want       string // the message, "" when valid
	}{
		"its own Secret":  {secretName: "app-creds", ref: ref("mine")},
		"by default name": {ref: ref("mine")},
		"a Secret that may be an account's provider-account Secret": {secretName: "team-tenant"},
		"the default provider-account Secret": {secretName: v1alpha1.DefaultProviderAccountSecret,
			want: `the credentials Secret "threescale-provider-account" is the provider-account Secret: name another one in spec.credentialsSecretName`},
		"the credentialsRef Secret": {secretName: "mine", ref: ref("mine"),
			want: `the credentials Secret "mine" is the spec.credentialsRef Secret, which is yours: name another one in spec.credentialsSecretName`},
		"the credentialsRef Secret by default name": {ref: ref("app-credentials"),
			want: `the credentials Secret "app-credentials" is the spec.credentialsRef Secret, which is yours: name another one in spec.credentialsSecretName`},
	}
	for name, c := range cases {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "app"},
			Spec: v1alpha1.ApplicationSpec{CredentialsSecretName: c.secretName, CredentialsRef: c.ref}}
		err := (&application.Syncer{}).Validate(a)
		harness.WantValidation(t, name, err, v1alpha1.ReasonInvalidSpec, c.want)
	}
}
