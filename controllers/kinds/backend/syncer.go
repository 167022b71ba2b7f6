package backend

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/kit/children"
)

// Snapshot is the remote state of one backend API with its children.
type Snapshot struct {
	Backend  tsclient.Backend
	Children *children.Snapshot
}

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.Backend.ID }

// ChildrenSnapshot implements children.Holder: a plan reads its metrics' ids.
func (s *Snapshot) ChildrenSnapshot() *children.Snapshot { return s.Children }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Children = s.Children.Clone()
	return &c
}

// Syncer syncs Backends to 3scale backend APIs with their metrics, methods and mapping rules.
type Syncer struct {
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
	// Lists shares the tenant's list of backends among the Backends looking for theirs in one burst.
	Lists *kit.BurstLists
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.Backend, children.Spec, *Snapshot] = (*Syncer)(nil)
	_ engine.Validator[*v1alpha1.Backend]                             = (*Syncer)(nil)
)

func backendChildren(b *v1alpha1.Backend) children.Spec {
	return children.Spec{Metrics: b.Spec.Metrics, Methods: b.Spec.Methods, Rules: b.Spec.MappingRules}
}

// Connect implements engine.TypedSyncer: the provider account of the spec, or the one last synced with
// while the Backend is being deleted.
func (s *Syncer) Connect(ctx context.Context, b *v1alpha1.Backend) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, b.Namespace, kit.SecretForSession(b, b.Spec.ProviderAccountSecretName()))
}

// Validate implements engine.Validator: every mapping rule names a metric or method of the backend.
func (s *Syncer) Validate(b *v1alpha1.Backend) error {
	return children.Invalid(backendChildren(b))
}

// SystemName is the system name of the object's remote object, from its spec alone: its spec.systemName, or
// one derived from its name.
func (s *Syncer) SystemName(b *v1alpha1.Backend) string {
	return kit.SystemNameOf(b.Spec.SystemName, b.Name)
}

// Resolve implements engine.TypedSyncer: sole ownership and the hash of the desired state (the
// backend's children).
func (s *Syncer) Resolve(ctx context.Context, b *v1alpha1.Backend, sess *engine.Session) (engine.Resolved[children.Spec], error) {
	r := engine.Resolved[children.Spec]{Desired: backendChildren(b)}
	r.Hash = sess.HashOf(sess.Tenant, sess.SystemName, b.Spec.Name, b.Spec.Description, b.Spec.PrivateBaseURL, r.Desired)
	return r, nil
}

// Read implements engine.TypedSyncer: the backend (by id, or by system name to adopt one created by a
// lost request) with its children.
func (s *Syncer) Read(ctx context.Context, b *v1alpha1.Backend, sess *engine.Session, _ children.Spec) (*Snapshot, bool, error) {
	remote, err := kit.Locate(b, sess, s.finder(ctx, sess))
	if err != nil || remote == nil {
		return nil, false, err
	}
	kids, err := children.Read(ctx, sess.Remote, tsclient.BackendScope(remote.ID))
	if err != nil {
		return nil, false, err
	}
	return &Snapshot{Backend: *remote, Children: kids}, true, nil
}

// Compare implements engine.TypedSyncer; it records the ids of the backend's metrics in status.
func (s *Syncer) Compare(_ context.Context, b *v1alpha1.Backend, _ *engine.Session, want children.Spec, snap *Snapshot) (bool, error) {
	children.RecordMetrics(&b.Status.CommonStatus, snap.Children)
	return backendAttrsMatch(snap.Backend, b) && children.UpToDate(snap.Children, want), nil
}

// finder reads backends of the session's tenant.
func (s *Syncer) finder(ctx context.Context, sess *engine.Session) kit.RemoteFinder[tsclient.Backend] {
	return kit.TenantFinder("backend", sess, s.Lists,
		func(id int64) (*tsclient.Backend, error) { return sess.Remote.GetBackend(ctx, id) },
		func() ([]tsclient.Backend, error) { return sess.Remote.ListBackends(ctx) },
		func(r tsclient.Backend) (int64, string) { return r.ID, r.SystemName })
}

func backendParams(b *v1alpha1.Backend, systemName string) tsclient.BackendParams {
	return tsclient.BackendParams{Name: b.Spec.Name, SystemName: systemName, Description: &b.Spec.Description, PrivateEndpoint: b.Spec.PrivateBaseURL}
}

func backendAttrsMatch(r tsclient.Backend, b *v1alpha1.Backend) bool {
	return r.Name == b.Spec.Name && r.Description == b.Spec.Description && kit.SameEndpoint(r.PrivateEndpoint, b.Spec.PrivateBaseURL)
}

// Create implements engine.TypedSyncer: creates the backend API (adopting it when a lost response
// already created it) and reads its children.
func (s *Syncer) Create(ctx context.Context, b *v1alpha1.Backend, sess *engine.Session, _ children.Spec) (engine.Created[*Snapshot], error) {
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName,
		func() (*tsclient.Backend, error) {
			return sess.Remote.CreateBackend(ctx, backendParams(b, sess.SystemName))
		}, b, sess, s.finder(ctx, sess))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	b.Status.BackendID = created.ID
	read := children.Read
	if fresh {
		// A new backend API holds its hits metric alone (BackendApi#create_default_metrics).
		read = children.ReadNew(false)
	}
	kids, err := read(ctx, sess.Remote, tsclient.BackendScope(created.ID))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	return kit.Made(&Snapshot{Backend: *created, Children: kids}, fresh, nil)
}

// Update implements engine.TypedSyncer: writes the attributes and children that differ, then removes
// the metrics and methods the spec no longer has. porta keeps a backend metric while the latest staging
// or production configuration of a product using the backend counts it (Metric#avoid_destruction): the
// Backend then waits on the gateway (MetricInUseByGateway) with what the products build from already
// written, so that they deploy (and promote, as their spec.production says) in their own syncs — they
// take such a Backend as usable (kit.WaitsOnGatewayOnly) — and their status changes wake it again. It
// deploys nothing itself: a deploy is the product's, decided from the product's state.
func (s *Syncer) Update(ctx context.Context, b *v1alpha1.Backend, sess *engine.Session, want children.Spec, snap *Snapshot) (*Snapshot, error) {
	id := snap.Backend.ID
	if !kit.SameEndpoint(snap.Backend.PrivateEndpoint, b.Spec.PrivateBaseURL) || !children.Written(snap.Children, want) {
		// Recorded before the writes, kept even if the sync fails after them: the products using the
		// backend deploy once it is usable again (product/deploy.go). Only a write the gateway carries
		// moves it: a removal waiting on the gateway changes nothing the products build from.
		b.Status.GatewayRevision++
	}
	if !backendAttrsMatch(snap.Backend, b) {
		updated, err := sess.Remote.UpdateBackend(ctx, id, backendParams(b, ""))
		if err != nil {
			return nil, fmt.Errorf("cannot update backend %q: %w", sess.SystemName, err)
		}
		snap.Backend = *updated
	}
	scope := tsclient.BackendScope(id)
	if err := children.Upsert(ctx, sess.Remote, scope, snap.Children, want); err != nil {
		return nil, err
	}
	err := children.Remove(ctx, sess.Remote, scope, snap.Children, want, sess.Remote.ListAllPlans)
	children.RecordMetrics(&b.Status.CommonStatus, snap.Children)
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// Delete implements engine.TypedSyncer: deletes the backend this Backend holds (by id, or by system name
// after its own lost create). 3scale refuses to delete a backend a product still uses: the Backend then
// waits, naming the Products to change.
func (s *Syncer) Delete(ctx context.Context, b *v1alpha1.Backend, sess *engine.Session) error {
	id := b.Status.BackendID
	if id == 0 {
		remote, err := kit.Locate(b, sess, s.finder(ctx, sess))
		if err != nil || remote == nil {
			return err
		}
		id = remote.ID
	}
	err := sess.Remote.DeleteBackend(ctx, id)
	if tsclient.IsInUse(err) {
		users, _ := s.productsUsing(ctx, b)
		who := "a product in 3scale"
		if len(users) > 0 {
			who = "the Products " + strings.Join(users, ", ")
		}
		return engine.Waiting(v1alpha1.ReasonDeletionBlocked,
			"3scale refuses to delete backend %q while %s use it: remove it from their spec.backendUsages (or delete them)", sess.SystemName, who)
	}
	if err != nil && !tsclient.IsNotFound(err) {
		return fmt.Errorf("cannot delete backend %q: %w", sess.SystemName, err)
	}
	return nil
}

// productsUsing names the Products of the namespace whose spec uses the Backend.
func (s *Syncer) productsUsing(ctx context.Context, b *v1alpha1.Backend) ([]string, error) {
	var products v1alpha1.ProductList
	if err := s.Reader.List(ctx, &products, client.InNamespace(b.Namespace), client.MatchingFields{kit.IndexBackendRefs: b.Name}); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(products.Items))
	for _, p := range products.Items {
		names = append(names, p.Name)
	}
	return names, nil
}

// SecretRefs lists the Secrets a Backend reads: its provider account.
func SecretRefs(b *v1alpha1.Backend) []string {
	return []string{b.Spec.ProviderAccountSecretName()}
}
