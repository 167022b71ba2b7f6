package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/internal/openapiimport"
)

// snapshotKindActiveDoc is the kind under which ActiveDocs snapshots are cached.
const snapshotKindActiveDoc = "activedoc"

// Condition reasons of ActiveDocs.
const (
	ReasonDocumentNotFound = "DocumentNotFound"
	ReasonInvalidDocument  = "InvalidDocument"
)

// productOfActiveDoc is an ActiveDoc's spec.productRef. Being deleted, the Product takes its ActiveDocs
// along in 3scale: the ActiveDoc waits (Orphan) for it to be gone or back.
var productOfActiveDoc = dependency{Kind: "Product", Field: "spec.productRef", NotFound: ReasonProductNotFound, Deleting: ReasonProductDeleting,
	Invalid: ReasonProductInvalid, NotSynced: ReasonProductNotSynced, WhileDeleting: waitingFor}

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
	// Claims arbitrates resources that resolve to the same spec.
	Claims *Claims
}

var _ engine.TypedSyncer[*v1alpha1.ActiveDoc, activeDocDesired, *activeDocSnapshot] = &ActiveDocSyncer{}

// activeDocSnapshot is the remote state of one ActiveDocs spec.
type activeDocSnapshot struct{ tsclient.ActiveDoc }

// RemoteID implements engine.Snapshot.
func (s *activeDocSnapshot) RemoteID() int64 { return s.ID }

// Clone implements engine.Snapshot.
func (s *activeDocSnapshot) Clone() *activeDocSnapshot { c := *s; return &c }

// Connect implements engine.TypedSyncer.
func (s *ActiveDocSyncer) Connect(ctx context.Context, d *v1alpha1.ActiveDoc) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, d.Namespace, secretForSession(d, d.Spec.ProviderAccountSecretName()))
}

// Resolve implements engine.TypedSyncer: the document must be JSON or YAML OpenAPI (or Swagger); a product
// must be Synced on the ActiveDoc's own tenant.
func (s *ActiveDocSyncer) Resolve(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) (engine.Resolved[activeDocDesired], error) {
	r := engine.Resolved[activeDocDesired]{SystemName: systemNameOf(d.Spec.SystemName, d.Name)}
	body, err := s.document(ctx, d)
	if err != nil {
		return r, err
	}
	body, err = openAPIAsJSON(body)
	if err == nil && !d.Spec.SkipSwaggerValidations {
		// Validated as the OpenAPI kind validates documents (kin-openapi), unless 3scale is told to
		// skip its own validation too.
		_, err = openapiimport.Parse(ctx, []byte(body))
	}
	if err != nil {
		return r, engine.Invalid(ReasonInvalidDocument, "the document is not an OpenAPI document: %v", err)
	}
	desired := activeDocDesired{Body: body}
	if ref := d.Spec.ProductRef; ref != "" {
		var p v1alpha1.Product
		if err := checkDependency(ctx, s.Reader, d.Namespace, ref, &p, productOfActiveDoc); err != nil {
			return r, err
		}
		if p.Status.TenantHost != sess.Tenant {
			return r, engine.Invalid(ReasonInvalidSpec, "Product %q is synced to tenant %s, but this ActiveDoc to %s: an ActiveDoc can only be bound to a product of its own tenant",
				ref, p.Status.TenantHost, sess.Tenant)
		}
		desired.ProductID = p.Status.ProductID
	}
	if err := checkSoleOwner(ctx, s.Reader, s.Claims, d, &v1alpha1.ActiveDocList{}, ownerKey(sess.Tenant, "", r.SystemName)); err != nil {
		return r, err
	}
	d.Status.ProductID = desired.ProductID
	r.Desired = desired
	// The hash covers what it always covered (a pointer to the desired state hashes as its value).
	r.Hash = sess.HashOf(sess.Tenant, r.SystemName, d.Spec.Name, d.Spec.Description, d.Spec.Published, d.Spec.SkipSwaggerValidations, &desired)
	return r, nil
}

// document returns the OpenAPI document from the spec, a ConfigMap or a Secret.
func (s *ActiveDocSyncer) document(ctx context.Context, d *v1alpha1.ActiveDoc) (string, error) {
	return readDocument(ctx, s.Reader, d.Namespace, d.Spec.Document, d.Spec.DocumentRef)
}

// readDocument returns a document given inline, or by ref from a ConfigMap or a Secret key of namespace;
// a missing ConfigMap or key makes the object wait (DocumentNotFound), a missing Secret or key too
// (SecretNotFound).
func readDocument(ctx context.Context, reader client.Reader, namespace, inline string, ref *v1alpha1.DocumentRef) (string, error) {
	switch {
	case ref == nil:
		return inline, nil
	case ref.SecretKeyRef != nil:
		return secretValue(ctx, reader, namespace, ref.SecretKeyRef, "spec.documentRef.secretKeyRef")
	case ref.ConfigMapKeyRef != nil:
		var cm corev1.ConfigMap
		if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.ConfigMapKeyRef.Name}, &cm); err != nil {
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

// Read implements engine.TypedSyncer.
func (s *ActiveDocSyncer) Read(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) (*activeDocSnapshot, bool, error) {
	remote, err := locate(d, sess, s.finder(ctx, sess))
	if err != nil || remote == nil {
		return nil, false, err
	}
	return &activeDocSnapshot{*remote}, true, nil
}

// Compare implements engine.TypedSyncer.
func (s *ActiveDocSyncer) Compare(_ context.Context, d *v1alpha1.ActiveDoc, _ *engine.Session, want activeDocDesired, snap *activeDocSnapshot) (bool, error) {
	return activeDocMatches(snap.ActiveDoc, d, want), nil
}

func (s *ActiveDocSyncer) finder(ctx context.Context, sess *engine.Session) remoteFinder[tsclient.ActiveDoc] {
	return tenantFinder("ActiveDocs spec", sess, nil,
		func(id int64) (*tsclient.ActiveDoc, error) { return sess.Remote.GetActiveDoc(ctx, id) },
		func() ([]tsclient.ActiveDoc, error) { return sess.Remote.ListActiveDocs(ctx) },
		func(r tsclient.ActiveDoc) (int64, string) { return r.ID, r.SystemName })
}

func activeDocMatches(r tsclient.ActiveDoc, d *v1alpha1.ActiveDoc, want activeDocDesired) bool {
	return r.Name == d.Spec.Name && r.Description == d.Spec.Description && r.Published == d.Spec.Published &&
		r.SkipSwaggerValidations == d.Spec.SkipSwaggerValidations && r.Body == want.Body && r.ServiceID == want.ProductID
}

func activeDocParams(d *v1alpha1.ActiveDoc, want activeDocDesired, systemName string) tsclient.ActiveDocParams {
	productID := want.ProductID
	return tsclient.ActiveDocParams{Name: d.Spec.Name, SystemName: systemName, Description: &d.Spec.Description, Published: &d.Spec.Published,
		SkipSwaggerValidations: &d.Spec.SkipSwaggerValidations, Body: want.Body, ServiceID: &productID}
}

// Create implements engine.TypedSyncer.
func (s *ActiveDocSyncer) Create(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session, want activeDocDesired) (engine.Created[*activeDocSnapshot], error) {
	created, fresh, err := createOrAdopt(sess.SystemName, func() (*tsclient.ActiveDoc, error) {
		return sess.Remote.CreateActiveDoc(ctx, activeDocParams(d, want, sess.SystemName))
	}, d, sess, s.finder(ctx, sess))
	if err != nil {
		return made[*activeDocSnapshot](nil, fresh, err)
	}
	d.Status.ActiveDocID = created.ID
	return made(&activeDocSnapshot{*created}, fresh, nil)
}

// Update implements engine.TypedSyncer.
func (s *ActiveDocSyncer) Update(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session, want activeDocDesired, snap *activeDocSnapshot) (*activeDocSnapshot, error) {
	updated, err := sess.Remote.UpdateActiveDoc(ctx, snap.ID, activeDocParams(d, want, ""))
	if err != nil {
		return nil, fmt.Errorf("cannot update ActiveDocs spec %q: %w", sess.SystemName, err)
	}
	return &activeDocSnapshot{*updated}, nil
}

// Owners implements engine.OwnedBy: porta destroys a service's ActiveDocs with the service (the reference
// graph's Along edge).
func (s *ActiveDocSyncer) Owners(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) []engine.Owner {
	return []engine.Owner{{Kind: "Product", Name: d.Spec.ProductRef,
		Fate: fateOf(ctx, s.Reader, d.Namespace, d.Spec.ProductRef, sess.Tenant, d.Status.ProductID, &v1alpha1.Product{})}}
}

// Delete implements engine.TypedSyncer.
func (s *ActiveDocSyncer) Delete(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) error {
	sess.SystemName = systemNameOf(d.Spec.SystemName, d.Name)
	return deleteHeld(d, sess, s.finder(ctx, sess), func(id int64) error { return sess.Remote.DeleteActiveDoc(ctx, id) })
}
