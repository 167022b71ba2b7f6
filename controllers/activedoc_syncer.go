package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/cache"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// snapshotKindActiveDoc is the kind under which ActiveDocs snapshots are cached.
const snapshotKindActiveDoc = "activedoc"

// Condition reasons of ActiveDocs.
const (
	ReasonDocumentNotFound = "DocumentNotFound"
	ReasonInvalidDocument  = "InvalidDocument"
)

// activeDocDesired is the document and product Resolve found.
type activeDocDesired struct {
	Body      string
	ProductID int64
}

// ActiveDocSyncer syncs ActiveDocs to 3scale ActiveDocs specs.
type ActiveDocSyncer struct {
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *ProviderAccounts
	// Snapshots caches remote state between reconciles.
	Snapshots *cache.Snapshots
	// Claims arbitrates resources that resolve to the same spec.
	Claims *Claims
}

var _ engine.Syncer[*v1alpha1.ActiveDoc] = &ActiveDocSyncer{}

// Connect implements engine.Syncer.
func (s *ActiveDocSyncer) Connect(ctx context.Context, d *v1alpha1.ActiveDoc) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, d.Namespace, secretForSession(d, d.Spec.ProviderAccountSecretName()))
}

// Resolve implements engine.Syncer: the document must be JSON or YAML OpenAPI (or Swagger); a product
// must be Synced on the ActiveDoc's own tenant.
func (s *ActiveDocSyncer) Resolve(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) error {
	sess.SystemName = systemNameOf(d.Spec.SystemName, d.Name)
	body, err := s.document(ctx, d)
	if err != nil {
		return err
	}
	body, err = openAPIAsJSON(body)
	if err != nil {
		return engine.Invalid(ReasonInvalidDocument, "the document is not an OpenAPI document: %v", err)
	}
	desired := &activeDocDesired{Body: body}
	if ref := d.Spec.ProductRef; ref != "" {
		var p v1alpha1.Product
		if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: ref}, &p); err != nil {
			if apierrors.IsNotFound(err) {
				return engine.Missing(ReasonProductNotFound, "waiting for Product %q (spec.productRef) to be created", ref)
			}
			return err
		}
		if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionInvalid); c != nil && c.Status == metav1.ConditionTrue {
			return engine.Invalid(ReasonProductInvalid, "Product %q is invalid: %s", ref, c.Message)
		}
		if !usable(&p, p.Status.CommonStatus, p.Status.ProductID) {
			return notSyncedYet(&p, p.Status.CommonStatus, ReasonProductNotSynced, "waiting for Product %q to be Synced", ref)
		}
		if p.Status.TenantHost != sess.Tenant {
			return engine.Invalid(ReasonInvalidSpec, "Product %q is synced to tenant %s, but this ActiveDoc to %s: an ActiveDoc can only be bound to a product of its own tenant",
				ref, p.Status.TenantHost, sess.Tenant)
		}
		desired.ProductID = p.Status.ProductID
	}
	if err := checkSoleOwner(ctx, s.Reader, s.Claims, d, &v1alpha1.ActiveDocList{}, ownerKey(sess.Tenant, "", sess.SystemName)); err != nil {
		return err
	}
	d.Status.ProductID = desired.ProductID
	sess.Desired = desired
	sess.Hash = sess.HashOf(sess.Tenant, sess.SystemName, d.Spec.Name, d.Spec.Description, d.Spec.Published, d.Spec.SkipSwaggerValidations, desired)
	return nil
}

// document returns the OpenAPI document from the spec, a ConfigMap or a Secret.
func (s *ActiveDocSyncer) document(ctx context.Context, d *v1alpha1.ActiveDoc) (string, error) {
	ref := d.Spec.DocumentRef
	switch {
	case ref == nil:
		return d.Spec.Document, nil
	case ref.SecretKeyRef != nil:
		return secretValue(ctx, s.Reader, d.Namespace, ref.SecretKeyRef, "spec.documentRef.secretKeyRef")
	case ref.ConfigMapKeyRef != nil:
		var cm corev1.ConfigMap
		if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: ref.ConfigMapKeyRef.Name}, &cm); err != nil {
			if apierrors.IsNotFound(err) {
				return "", engine.Waiting(ReasonDocumentNotFound, "waiting for ConfigMap %q (spec.documentRef.configMapKeyRef) to be created", ref.ConfigMapKeyRef.Name)
			}
			return "", err
		}
		v, ok := cm.Data[ref.ConfigMapKeyRef.Key]
		if !ok {
			return "", engine.Waiting(ReasonDocumentNotFound, "ConfigMap %q has no key %q (spec.documentRef.configMapKeyRef)", ref.ConfigMapKeyRef.Name, ref.ConfigMapKeyRef.Key)
		}
		return v, nil
	}
	return "", engine.Invalid(ReasonInvalidSpec, "spec.documentRef names neither a ConfigMap nor a Secret")
}

// openAPIAsJSON checks that body is a JSON or YAML object with an "openapi" or "swagger" version and
// returns it as JSON, the only form porta takes (ThreeScale::Swagger::Specification parses the body with
// JSON.parse). A JSON document is sent as written.
func openAPIAsJSON(body string) (string, error) {
	raw, err := yaml.YAMLToJSON([]byte(body))
	if err != nil {
		return "", err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return "", fmt.Errorf("the top level is not an object: %w", err)
	}
	if v, ok := doc["openapi"].(string); !ok || v == "" {
		if v, ok := doc["swagger"].(string); !ok || v == "" {
			return "", fmt.Errorf(`it has no "openapi" (or "swagger") version field`)
		}
	}
	if json.Valid([]byte(body)) {
		return body, nil
	}
	return string(raw), nil
}

// Observe implements engine.Syncer.
func (s *ActiveDocSyncer) Observe(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) (engine.Observation, error) {
	remote, err := s.read(ctx, d, sess)
	if err != nil || remote == nil {
		return engine.Observation{}, err
	}
	return engine.Observation{Exists: true, UpToDate: activeDocMatches(*remote, d, sess.Desired.(*activeDocDesired)), Diff: remote}, nil
}

func (s *ActiveDocSyncer) read(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) (*tsclient.ActiveDoc, error) {
	if id := d.Status.ActiveDocID; id != 0 && !sess.ForceRead {
		if snap, ok := cache.Get[*tsclient.ActiveDoc](s.Snapshots, sess.Tenant, snapshotKindActiveDoc, id); ok {
			return snap, nil
		}
	}
	remote, err := locate(d, sess, s.finder(ctx, sess))
	if err == nil && remote != nil {
		s.Snapshots.Put(sess.Tenant, snapshotKindActiveDoc, remote.ID, remote)
	}
	return remote, err
}

func (s *ActiveDocSyncer) finder(ctx context.Context, sess *engine.Session) remoteFinder[tsclient.ActiveDoc] {
	return remoteFinder[tsclient.ActiveDoc]{kind: "ActiveDocs spec",
		get:    func(id int64) (*tsclient.ActiveDoc, error) { return sess.Remote.GetActiveDoc(ctx, id) },
		list:   func() ([]tsclient.ActiveDoc, error) { return sess.Remote.ListActiveDocs(ctx) },
		idName: func(r tsclient.ActiveDoc) (int64, string) { return r.ID, r.SystemName },
		forget: func(id int64) { s.Snapshots.Forget(sess.Tenant, snapshotKindActiveDoc, id) },
	}
}

func activeDocMatches(r tsclient.ActiveDoc, d *v1alpha1.ActiveDoc, want *activeDocDesired) bool {
	return r.Name == d.Spec.Name && r.Description == d.Spec.Description && r.Published == d.Spec.Published &&
		r.SkipSwaggerValidations == d.Spec.SkipSwaggerValidations && r.Body == want.Body && r.ServiceID == want.ProductID
}

func activeDocParams(d *v1alpha1.ActiveDoc, want *activeDocDesired, systemName string) tsclient.ActiveDocParams {
	productID := want.ProductID
	return tsclient.ActiveDocParams{Name: d.Spec.Name, SystemName: systemName, Description: &d.Spec.Description, Published: &d.Spec.Published,
		SkipSwaggerValidations: &d.Spec.SkipSwaggerValidations, Body: want.Body, ServiceID: &productID}
}

// Create implements engine.Syncer.
func (s *ActiveDocSyncer) Create(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) error {
	want := sess.Desired.(*activeDocDesired)
	created, _, err := createOrAdopt(sess.SystemName, func() (*tsclient.ActiveDoc, error) {
		return sess.Remote.CreateActiveDoc(ctx, activeDocParams(d, want, sess.SystemName))
	}, d, sess, s.finder(ctx, sess))
	if err != nil {
		return err
	}
	d.Status.ActiveDocID = created.ID
	if !activeDocMatches(*created, d, want) {
		return s.Update(ctx, d, sess, engine.Observation{Exists: true, Diff: created})
	}
	s.Snapshots.Put(sess.Tenant, snapshotKindActiveDoc, created.ID, created)
	return nil
}

// Update implements engine.Syncer.
func (s *ActiveDocSyncer) Update(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session, o engine.Observation) error {
	id := o.Diff.(*tsclient.ActiveDoc).ID
	s.Snapshots.Forget(sess.Tenant, snapshotKindActiveDoc, id)
	updated, err := sess.Remote.UpdateActiveDoc(ctx, id, activeDocParams(d, sess.Desired.(*activeDocDesired), ""))
	if err != nil {
		return fmt.Errorf("cannot update ActiveDocs spec %q: %w", sess.SystemName, err)
	}
	s.Snapshots.Put(sess.Tenant, snapshotKindActiveDoc, id, updated)
	return nil
}

// Delete implements engine.Syncer.
func (s *ActiveDocSyncer) Delete(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) error {
	sess.SystemName = systemNameOf(d.Spec.SystemName, d.Name)
	// Porta destroys a service's ActiveDocs with the service (the reference graph's Along edge).
	product := owner{kind: "Product", name: d.Spec.ProductRef,
		fate: fateOf(ctx, s.Reader, d.Namespace, d.Spec.ProductRef, sess.Tenant, d.Status.ProductID, &v1alpha1.Product{})}
	if left, err := leftToOwners(d, sess, product); left {
		return err
	}
	return deleteHeld(d, sess, s.finder(ctx, sess), func(id int64) error { return sess.Remote.DeleteActiveDoc(ctx, id) })
}
