package tenant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

const (
	// SecretWritersAnnotation, on a Namespace, lists the Tenants ("namespace/name", comma-separated)
	// allowed to write their provider-account Secret into it.
	SecretWritersAnnotation   = "apimsync.io/tenant-secret-writers"
	tenantStateApproved       = "approved"
	tenantStateScheduled      = "scheduled_for_deletion"
	UIDAnnotation             = "apimsync.io/tenant-uid"
	Annotation                = "apimsync.io/tenant"
	userStateActive           = "active"
	tenantSecretNameByDefault = v1alpha1.DefaultProviderAccountSecret
)

// A Tenant is a provider account of an on-premises 3scale, made through the master API with a master
// token (its session is the master portal's). porta shows a new tenant's access token once, in the
// signup's answer: apimsync writes it at once into the provider-account Secret the Tenant names, which
// it then controls (annotated with the Tenant's UID; no owner reference can cross namespaces). It writes
// there only into its own namespace or one whose Namespace consents (SecretWritersAnnotation). A
// Tenant applied without its status (a restore, a new cluster) finds its tenant on master (organization
// and admin username) and adopts it, announced, with the Secret a Tenant of its name wrote — porta
// accepts a second tenant of one organization name, so a second signup would move the team's objects to
// an empty tenant; without such a Secret it says what to do. A signup whose answer was lost leaves a
// tenant whose token nobody can read: it is reported, never deleted on a guess.

// Syncer syncs Tenants to the master API.
type Syncer struct {
	// Reader reads Kubernetes objects (the manager's cache; Secrets' data on demand).
	Reader client.Reader
	// Writer writes the provider-account Secrets of new tenants.
	Writer client.Client
	// SecretReader reads those Secrets from the API server itself: one just written is not in the
	// manager's metadata cache yet, and "not found" there would be taken for a lost token.
	SecretReader client.Reader
	// Accounts connects to the master portal (a Secret shaped like a provider account's).
	Accounts *kit.ProviderAccounts
	// Recorder announces scheduled deletions.
	Recorder events.EventRecorder
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.Tenant, Desired, *Snapshot] = (*Syncer)(nil)
)

// Desired is the admin's password read from its Secret.
type Desired struct {
	Password string `json:"-"`
	// PasswordVersion is the password Secret's version (UID and resourceVersion), for the hash.
	PasswordVersion string
	// AllowInsecureHTTP is the master Secret's opt-in to plain http, which the tenant's Secret inherits.
	AllowInsecureHTTP bool
}

// Snapshot is a tenant and its first admin user.
type Snapshot struct {
	Tenant tsclient.Tenant
	Admin  *tsclient.User
}

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.Tenant.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	if s.Admin != nil {
		admin := *s.Admin
		c.Admin = &admin
	}
	return &c
}

// SecretKey is where a Tenant writes its provider-account Secret.
func SecretKey(t *v1alpha1.Tenant) client.ObjectKey {
	name := t.Spec.ProviderAccountSecret.Name
	if name == "" {
		name = tenantSecretNameByDefault
	}
	return client.ObjectKey{Namespace: t.Spec.ProviderAccountSecret.Namespace, Name: name}
}

// Connect implements engine.TypedSyncer: the master portal's session.
func (s *Syncer) Connect(ctx context.Context, t *v1alpha1.Tenant) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, t.Namespace, kit.SecretForSession(t, t.Spec.MasterAccountRef.Name))
}

// SystemName is the system name of the object's remote object, from its spec alone: its organization name.
func (s *Syncer) SystemName(t *v1alpha1.Tenant) string { return t.Spec.OrganizationName }

// Resolve implements engine.TypedSyncer: the admin's password, and one Tenant per organization on a master.
func (s *Syncer) Resolve(ctx context.Context, t *v1alpha1.Tenant, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	password, version, err := kit.SecretKey(ctx, s.Reader, t.Namespace, &t.Spec.PasswordRef, "spec.passwordRef")
	if err != nil {
		return r, err
	}
	key := SecretKey(t)
	if err := s.checkConsent(ctx, t, key.Namespace); err != nil {
		return r, err
	}
	r.Desired = Desired{Password: password, PasswordVersion: version}
	var master corev1.Secret
	if err := s.Accounts.Reader.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Spec.MasterAccountRef.Name}, &master); err == nil {
		r.Desired.AllowInsecureHTTP = kit.SecretFlag(&master, kit.SecretKeyAllowInsecureHTTP)
	}
	r.Hash = sess.HashOf(sess.Tenant, t.Spec.OrganizationName, t.Spec.Username, t.Spec.Email, key.String(), version)
	return r, nil
}

// checkConsent checks that the Tenant may write its provider-account Secret into namespace: its own, or
// one whose Namespace lists it in the annotation apimsync.io/tenant-secret-writers. Anything else waits,
// saying how to consent: a Secret planted in another team's namespace would send that team's objects,
// passwords and keys to this Tenant's tenant.
func (s *Syncer) checkConsent(ctx context.Context, t *v1alpha1.Tenant, namespace string) error {
	if namespace == t.Namespace {
		return nil
	}
	var ns corev1.Namespace
	if err := s.apiReader().Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return engine.Waiting(v1alpha1.ReasonSecretNotWritable, "namespace %q, where spec.providerAccountSecret is to be written, does not exist: no tenant is made until it does", namespace)
		case apierrors.IsForbidden(err):
			return engine.Waiting(v1alpha1.ReasonNamespaceNotConsented, "the manager may not read namespace %q to see whether it consents (the namespaced install grants no get on namespaces): "+
				"name a Secret of the Tenant's own namespace, or grant the manager get on namespaces", namespace)
		}
		return err
	}
	self := t.Namespace + "/" + t.Name
	for _, allowed := range strings.Split(ns.Annotations[SecretWritersAnnotation], ",") {
		if strings.TrimSpace(allowed) == self {
			return nil
		}
	}
	return engine.Waiting(v1alpha1.ReasonNamespaceNotConsented,
		"namespace %q has not allowed this Tenant to write its provider-account Secret there: its owner consents with "+
			"kubectl annotate namespace %s %s=%s (a comma-separated list of Tenants)", namespace, namespace, SecretWritersAnnotation, self)
}

// apiReader reads from the API server itself (SecretReader), or the manager's cache without one.
func (s *Syncer) apiReader() client.Reader {
	if s.SecretReader != nil {
		return s.SecretReader
	}
	return s.Reader
}

// Read implements engine.TypedSyncer: the tenant this Tenant made (by its recorded id). A create in
// doubt (its answer lost) that made one is reported: its token is lost.
func (s *Syncer) Read(ctx context.Context, t *v1alpha1.Tenant, sess *engine.Session, _ Desired) (*Snapshot, bool, error) {
	id := t.Status.TenantID
	if id == 0 {
		if !sess.CreatePending {
			return s.adopt(ctx, t, sess)
		}
		found, err := sess.Remote.FindTenant(ctx, t.Spec.Username, t.Spec.Email)
		if tsclient.IsNotFound(err) || (err == nil && found.OrgName != t.Spec.OrganizationName) {
			return nil, false, nil // none, or another organization's admin of the same name: not ours
		}
		if err != nil {
			return nil, false, fmt.Errorf("cannot look for the tenant of a signup in doubt: %w", err)
		}
		return nil, false, engine.Invalid(v1alpha1.ReasonTenantTokenLost,
			"3scale made tenant %q (id %d) but the answer to the signup, the only one that shows its access token, was lost: "+
				"delete that tenant in the master portal and apimsync signs up again, or create an access token for its admin and write Secret %s yourself "+
				"(with adminURL and token), then delete this Tenant with deletionPolicy: Retain", found.OrgName, found.ID, SecretKey(t))
	}
	tenant, err := sess.Remote.GetTenant(ctx, id)
	if tsclient.IsNotFound(err) {
		t.Status.TenantID = 0 // deleted for good in 3scale: made again (a drift repair)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot read tenant %d: %w", id, err)
	}
	snap := &Snapshot{Tenant: *tenant}
	if snap.Admin, err = s.admin(ctx, sess, t, id); err != nil {
		return nil, false, err
	}
	return snap, true, nil
}

// adopt looks, for a Tenant that records no tenant and sent no signup, for the tenant master holds for
// its organization and admin username (a restore, a new cluster, a re-created object). None: a signup
// follows. One: adopted (the engine announces it; one scheduled for deletion is announced as such, and
// Update resumes it) when the provider-account Secret holds its admin URL and was written by a Tenant of
// this name (or by a person who annotated it so): this Tenant takes control of that Secret. Otherwise it
// is Invalid, saying how to give it a token — never a second signup.
func (s *Syncer) adopt(ctx context.Context, t *v1alpha1.Tenant, sess *engine.Session) (*Snapshot, bool, error) {
	all, err := sess.Remote.ListTenants(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("cannot list master's tenants to look for this Tenant's: %w", err)
	}
	var found []Snapshot
	for _, tenant := range all {
		if tenant.OrgName != t.Spec.OrganizationName {
			continue
		}
		admin, err := s.admin(ctx, sess, t, tenant.ID)
		if err != nil {
			return nil, false, err
		}
		if admin != nil {
			found = append(found, Snapshot{Tenant: tenant, Admin: admin})
		}
	}
	switch {
	case len(found) == 0:
		return nil, false, nil
	case len(found) > 1:
		ids := make([]string, len(found))
		for i, f := range found {
			ids[i] = fmt.Sprint(f.Tenant.ID)
		}
		return nil, false, engine.Invalid(v1alpha1.ReasonTenantAmbiguous, "master holds %d tenants of organization %q with admin %q (ids %s): apimsync cannot tell which is this Tenant's "+
			"and signs up none; delete the extra ones in the master portal", len(found), t.Spec.OrganizationName, t.Spec.Username, strings.Join(ids, ", "))
	}
	snap := &found[0]
	key := SecretKey(t)
	var secret corev1.Secret
	err = s.apiReader().Get(ctx, key, &secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, false, err
	}
	self := t.Namespace + "/" + t.Name
	if err != nil || secret.Annotations[Annotation] != self || string(secret.Data[kit.SecretKeyAdminURL]) != snap.Tenant.AdminBaseURL || len(secret.Data[kit.SecretKeyToken]) == 0 {
		return nil, false, engine.Invalid(v1alpha1.ReasonTenantTokenLost,
			"tenant %q (id %d, admin %s) exists on master, and this Tenant records none: it adopts it rather than sign up a second one, but porta shows a tenant's "+
				"access token only to its signup, and Secret %s holds none of it written for this Tenant. Create an access token (Account Management API, read-write) "+
				"for its admin in its admin portal and write Secret %s with adminURL=%s and token=<the token>, annotated %s=%s; this Tenant then adopts the tenant",
			snap.Tenant.OrgName, snap.Tenant.ID, t.Spec.Username, key, key, snap.Tenant.AdminBaseURL, Annotation, self)
	}
	if secret.Annotations[UIDAnnotation] != string(t.UID) {
		taken := secret.DeepCopy()
		taken.Annotations[UIDAnnotation] = string(t.UID)
		if err := s.Writer.Update(ctx, taken); err != nil {
			return nil, false, fmt.Errorf("cannot take control of Secret %s: %w", key, err)
		}
	}
	if snap.Tenant.State == tenantStateScheduled && s.Recorder != nil {
		s.Recorder.Eventf(t, nil, "Warning", v1alpha1.ReasonTenantScheduled, "Adopt",
			"adopting tenant %q (id %d), which 3scale had scheduled for deletion on %s: it is resumed, as this Tenant asks for it", snap.Tenant.OrgName, snap.Tenant.ID, snap.Tenant.DeletionDate)
	}
	t.Status.TenantID = snap.Tenant.ID
	return snap, true, nil
}

// admin reads the tenant's first admin user (nil when it is not found).
func (s *Syncer) admin(ctx context.Context, sess *engine.Session, t *v1alpha1.Tenant, id int64) (*tsclient.User, error) {
	users, err := sess.Remote.ListTenantUsers(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("cannot list the users of tenant %d: %w", id, err)
	}
	i := slices.IndexFunc(users, func(u tsclient.User) bool { return u.Username == t.Spec.Username })
	if i < 0 {
		return nil, nil
	}
	return &users[i], nil
}

// Compare implements engine.TypedSyncer: the tenant is approved (not scheduled for deletion), its admin
// active, and the provider-account Secret this Tenant controls holds its admin URL.
func (s *Syncer) Compare(ctx context.Context, t *v1alpha1.Tenant, _ *engine.Session, _ Desired, snap *Snapshot) (bool, error) {
	t.Status.AdminURL, t.Status.State = snap.Tenant.AdminBaseURL, snap.Tenant.State
	secret, err := s.secret(ctx, t)
	if err != nil {
		return false, err
	}
	return snap.Tenant.State == tenantStateApproved && (snap.Admin == nil || snap.Admin.State == userStateActive) &&
		secret != nil && string(secret.Data[kit.SecretKeyAdminURL]) == snap.Tenant.AdminBaseURL, nil
}

// secret reads the provider-account Secret this Tenant wrote: nil when there is none, an Invalid error
// when one of that name is not this Tenant's.
func (s *Syncer) secret(ctx context.Context, t *v1alpha1.Tenant) (*corev1.Secret, error) {
	var secret corev1.Secret
	key := SecretKey(t)
	if err := s.apiReader().Get(ctx, key, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if secret.Annotations[UIDAnnotation] != string(t.UID) {
		return nil, engine.Invalid(v1alpha1.ReasonSecretNotOurs, "Secret %s exists and was not written by this Tenant: it is left as it is; name another one in spec.providerAccountSecret", key)
	}
	return &secret, nil
}

// Create implements engine.TypedSyncer: signs the tenant up and writes its provider-account Secret at
// once, before anything else (the token is in this answer only), then activates its admin.
func (s *Syncer) Create(ctx context.Context, t *v1alpha1.Tenant, sess *engine.Session, want Desired) (engine.Created[*Snapshot], error) {
	var none engine.Created[*Snapshot]
	if existing, err := s.secret(ctx, t); err != nil || existing != nil {
		if err == nil { // a Secret of ours with a token of a tenant we no longer know: keep it, and stop
			err = engine.Invalid(v1alpha1.ReasonTenantTokenLost, "Secret %s holds the token of a tenant this Tenant made earlier and no longer records: "+
				"delete that Secret (and that tenant in 3scale) to sign up again", SecretKey(t))
		}
		return none, engine.NothingMade(err)
	}
	// The Secret must be writable before the tenant is made: its token exists nowhere else afterwards.
	if err := s.Writer.Create(ctx, s.secretOf(t, "https://check.invalid", "check"), client.DryRunAll); err != nil {
		return none, engine.NothingMade(engine.Waiting(v1alpha1.ReasonSecretNotWritable, "the provider-account Secret %s cannot be written (%v): no tenant is made until it can "+
			"(does the namespace exist, and may the manager write Secrets there?)", SecretKey(t), apierrors.ReasonForError(err)))
	}
	signup, err := sess.Remote.SignupTenant(ctx, tsclient.TenantParams{OrgName: t.Spec.OrganizationName, Username: t.Spec.Username,
		Email: t.Spec.Email, Password: want.Password})
	if err != nil {
		return none, fmt.Errorf("cannot sign tenant %q up: %w", t.Spec.OrganizationName, err)
	}
	if err := s.WriteSecret(ctx, t, want, signup.Tenant.AdminBaseURL, signup.AccessToken); err != nil {
		return none, fmt.Errorf("tenant %q (id %d) was made but its provider-account Secret could not be written: %w", t.Spec.OrganizationName, signup.Tenant.ID, err)
	}
	t.Status.TenantID = signup.Tenant.ID
	snap := &Snapshot{Tenant: signup.Tenant}
	if signup.AdminUserID != 0 {
		snap.Admin = &tsclient.User{ID: signup.AdminUserID, Username: t.Spec.Username, State: "pending"}
	} else if snap.Admin, err = s.admin(ctx, sess, t, signup.Tenant.ID); err != nil {
		return none, err
	}
	return engine.Created[*Snapshot]{Snapshot: snap}, nil
}

// WriteSecret writes the tenant's provider-account Secret (adminURL, token), controlled by this Tenant.
// A plain-http admin URL keeps the master Secret's opt-in to plain http (a test or demo install), and
// only that: the tenant's Secret never allows what the master's did not.
func (s *Syncer) WriteSecret(ctx context.Context, t *v1alpha1.Tenant, want Desired, adminURL, token string) error {
	secret := s.secretOf(t, adminURL, token)
	if want.AllowInsecureHTTP && strings.HasPrefix(adminURL, "http://") {
		secret.Data[kit.SecretKeyAllowInsecureHTTP] = []byte("true")
	}
	err := s.Writer.Create(ctx, secret)
	for try := 0; err != nil && !apierrors.IsAlreadyExists(err) && try < 3; try++ {
		err = s.Writer.Create(ctx, secret) // the token exists nowhere else: a passing failure is retried here
	}
	return err
}

// secretOf is the provider-account Secret of a tenant: its admin URL and token, annotated with the
// Tenant that wrote it (annotations, not labels: no length limit on the Tenant's namespace and name).
func (s *Syncer) secretOf(t *v1alpha1.Tenant, adminURL, token string) *corev1.Secret {
	key := SecretKey(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
		Annotations: map[string]string{UIDAnnotation: string(t.UID), Annotation: t.Namespace + "/" + t.Name}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{kit.SecretKeyAdminURL: []byte(adminURL), kit.SecretKeyToken: []byte(token), kit.SecretKeyTokenUser: []byte(t.Spec.Username)}}
	return secret
}

// Update implements engine.TypedSyncer: resumes a tenant scheduled for deletion behind apimsync's back,
// activates its admin, and puts the Secret's admin URL right (its token is never rewritten: a Secret that
// lost its token cannot be repaired, and says so).
func (s *Syncer) Update(ctx context.Context, t *v1alpha1.Tenant, sess *engine.Session, _ Desired, snap *Snapshot) (*Snapshot, error) {
	c, id := sess.Remote, snap.Tenant.ID
	if snap.Tenant.State == tenantStateScheduled {
		resumed, err := c.ResumeTenant(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("cannot resume tenant %d: %w", id, err)
		}
		snap.Tenant = *resumed
	}
	if snap.Admin != nil && snap.Admin.State != userStateActive {
		if err := c.ActivateTenantUser(ctx, id, snap.Admin.ID); err != nil {
			return nil, fmt.Errorf("cannot activate the admin of tenant %d: %w", id, err)
		}
		snap.Admin.State = userStateActive
	}
	secret, err := s.secret(ctx, t)
	switch {
	case err != nil:
		return nil, err
	case secret == nil:
		return nil, engine.Invalid(v1alpha1.ReasonTenantTokenLost, "Secret %s, the only copy of tenant %d's access token, was deleted: create an access token for its admin in its admin portal "+
			"and write the Secret yourself (adminURL, token), or delete the tenant in 3scale and this Tenant's status to sign up again", SecretKey(t), id)
	case string(secret.Data[kit.SecretKeyAdminURL]) != snap.Tenant.AdminBaseURL:
		secret = secret.DeepCopy()
		if secret.Data == nil {
			secret.Data = map[string][]byte{}
		}
		secret.Data[kit.SecretKeyAdminURL] = []byte(snap.Tenant.AdminBaseURL)
		if err := s.Writer.Update(ctx, secret); err != nil {
			return nil, err
		}
	}
	t.Status.AdminURL, t.Status.State, t.Status.SecretWritten = snap.Tenant.AdminBaseURL, snap.Tenant.State, SecretKey(t).String()
	return snap, nil
}

// Delete implements engine.TypedSyncer: schedules the tenant's deletion (porta deletes it for good
// later, announced with the date) and deletes the Secret this Tenant wrote.
func (s *Syncer) Delete(ctx context.Context, t *v1alpha1.Tenant, sess *engine.Session) error {
	if id := t.Status.TenantID; id != 0 {
		tenant, err := sess.Remote.GetTenant(ctx, id)
		switch {
		case tsclient.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("cannot read tenant %d: %w", id, err)
		case tenant.State != tenantStateScheduled:
			if err := sess.Remote.DeleteTenant(ctx, id); err != nil && !tsclient.IsNotFound(err) {
				return fmt.Errorf("cannot schedule the deletion of tenant %d: %w", id, err)
			}
			if tenant, err = sess.Remote.GetTenant(ctx, id); err == nil && s.Recorder != nil {
				s.Recorder.Eventf(t, nil, "Normal", v1alpha1.ReasonTenantScheduled, "Delete",
					"3scale scheduled tenant %q (id %d) for deletion; it deletes it for good on %s", tenant.OrgName, id, tenant.DeletionDate)
			}
		}
	}
	secret, err := s.secret(ctx, t)
	if err != nil || secret == nil {
		return client.IgnoreNotFound(ignoreReasoned(err))
	}
	return client.IgnoreNotFound(s.Writer.Delete(ctx, secret))
}

// ignoreReasoned drops a Secret-not-ours verdict on deletion: that Secret is left as it is.
func ignoreReasoned(err error) error {
	var reasoned *engine.ReasonedError
	if errors.As(err, &reasoned) {
		return nil
	}
	return err
}

// SecretRefs lists the Secrets a Tenant reads: the master account and its admin's password.
func SecretRefs(t *v1alpha1.Tenant) []string {
	return []string{t.Spec.MasterAccountRef.Name, t.Spec.PasswordRef.Name}
}

// Scope is the scope of a Tenant's remote object: the master's tenants.
func Scope(*v1alpha1.Tenant) string { return "tenant" }
