package tenantsettings

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/utils/ptr"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// signInWrite is one write to the admin portal's sign-in providers: a create (id 0) or an update.
type signInWrite struct {
	systemName string
	id         int64
	params     tsclient.AuthenticationProviderParams
}

// signInWrites are the writes that bring the admin portal's sign-in providers to the spec: each one
// asked for is created, or updated where it differs (found by its recorded id, else by system name);
// each one recorded that left the spec is unpublished. Client secrets are compared, never shown.
func signInWrites(t *v1alpha1.TenantSettings, d Desired, snap *Snapshot) []signInWrite {
	if !d.SignIn || snap.SignIn == nil {
		return nil
	}
	byID := map[int64]tsclient.AuthenticationProvider{}
	bySystemName := map[string]tsclient.AuthenticationProvider{}
	for _, r := range snap.SignIn {
		byID[r.ID], bySystemName[r.SystemName] = r, r
	}
	find := func(systemName string) (tsclient.AuthenticationProvider, bool) {
		if id := t.Status.AdminSignIn[systemName]; id != 0 {
			r, ok := byID[id]
			return r, ok
		}
		r, ok := bySystemName[systemName]
		return r, ok
	}
	var out []signInWrite
	for _, p := range t.Spec.AdminSignIn {
		secret, published := d.Secrets[p.SystemName], p.Published == nil || *p.Published
		params := tsclient.AuthenticationProviderParams{Kind: p.Kind, Name: p.Name, SystemName: p.SystemName, ClientID: ptr.To(p.ClientID),
			ClientSecret: ptr.To(secret), Site: ptr.To(p.Site), Published: ptr.To(published), SkipSSLCertificateVerification: ptr.To(p.SkipSSLCertificateVerification)}
		r, ok := find(p.SystemName)
		switch {
		case !ok:
			out = append(out, signInWrite{systemName: p.SystemName, params: params})
		case r.ClientID != p.ClientID || r.ClientSecret != secret || r.Site != p.Site || r.Published != published ||
			r.SkipSSLCertificateVerification != p.SkipSSLCertificateVerification:
			out = append(out, signInWrite{systemName: p.SystemName, id: r.ID, params: params})
		}
	}
	for _, systemName := range slices.Sorted(maps.Keys(t.Status.AdminSignIn)) {
		if slices.ContainsFunc(t.Spec.AdminSignIn, func(p v1alpha1.AdminSignInProvider) bool { return p.SystemName == systemName }) {
			continue
		}
		if r, ok := byID[t.Status.AdminSignIn[systemName]]; ok && r.Published {
			out = append(out, signInWrite{systemName: systemName, id: r.ID, params: tsclient.AuthenticationProviderParams{Published: ptr.To(false)}})
		}
	}
	return out
}

// recordSignIn records, by system name, the spec's providers found in 3scale — matching or not, made
// here or found there — so that the ones let go later are unpublished, and diff --unmanaged knows them
// held. Those no longer in the spec stay recorded until writeSignIn unpublishes them.
func recordSignIn(t *v1alpha1.TenantSettings, d Desired, snap *Snapshot) {
	if !d.SignIn || snap.SignIn == nil {
		return
	}
	for _, p := range t.Spec.AdminSignIn {
		for _, r := range snap.SignIn {
			if r.ID == t.Status.AdminSignIn[p.SystemName] || (t.Status.AdminSignIn[p.SystemName] == 0 && r.SystemName == p.SystemName) {
				if t.Status.AdminSignIn == nil {
					t.Status.AdminSignIn = map[string]int64{}
				}
				t.Status.AdminSignIn[p.SystemName] = r.ID
			}
		}
	}
}

// writeSignIn makes the sign-in writes, records the providers the spec holds by id, and forgets those it
// let go (unpublished: porta cannot delete one).
func (s *Syncer) writeSignIn(ctx context.Context, t *v1alpha1.TenantSettings, sess *engine.Session, d Desired, snap *Snapshot) error {
	if !d.SignIn {
		return nil
	}
	ids := map[string]int64{}
	for _, r := range snap.SignIn {
		ids[r.SystemName] = r.ID
	}
	for _, w := range signInWrites(t, d, snap) {
		var (
			r   *tsclient.AuthenticationProvider
			err error
		)
		if w.id == 0 {
			r, err = sess.Remote.CreateAdminAuthenticationProvider(ctx, w.params)
			if tsclient.HasAlreadyBeenTaken(err, "system_name") {
				// Made since the snapshot was read (by hand, or in the developer portal's namespace of
				// system names): take it, as one found by its system name, and write what the spec asks.
				r, err = s.takeSignIn(ctx, sess, w)
			}
		} else {
			r, err = sess.Remote.UpdateAdminAuthenticationProvider(ctx, w.id, w.params)
		}
		if err != nil {
			return fmt.Errorf("cannot write the admin portal's sign-in provider %q: %w", w.systemName, err)
		}
		ids[w.systemName] = r.ID
	}
	recorded := map[string]int64{}
	for _, p := range t.Spec.AdminSignIn {
		if id := ids[p.SystemName]; id != 0 {
			recorded[p.SystemName] = id
		}
	}
	t.Status.AdminSignIn = recorded
	if len(recorded) == 0 {
		t.Status.AdminSignIn = nil
	}
	snap.SignIn = nil // read again at the next check: the answers are not the whole list
	return nil
}

// takeSignIn updates the tenant's admin-portal provider of w's system name to w's settings; porta keeps
// one system name space for both portals' providers, so one of the developer portal's is not taken.
func (s *Syncer) takeSignIn(ctx context.Context, sess *engine.Session, w signInWrite) (*tsclient.AuthenticationProvider, error) {
	all, err := sess.Remote.ListAdminAuthenticationProviders(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range all {
		if r.SystemName == w.systemName {
			return sess.Remote.UpdateAdminAuthenticationProvider(ctx, r.ID, w.params)
		}
	}
	return nil, engine.Invalid(v1alpha1.ReasonInvalidSpec, "system name %q is a sign-in provider of the developer portal: porta keeps one system name per tenant for both portals' providers; choose another", w.systemName)
}
