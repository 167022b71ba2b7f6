package activedoc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/internal/openapiimport"
)

// productOfActiveDoc is an ActiveDoc's spec.productRef. Being deleted, the Product takes its ActiveDocs
// along in 3scale: the ActiveDoc waits (Orphan) for it to be gone or back.
var productOfActiveDoc = kit.Dependency{Kind: "Product", Field: "spec.productRef", NotFound: v1alpha1.ReasonProductNotFound, Deleting: v1alpha1.ReasonProductDeleting,
	Invalid: v1alpha1.ReasonProductInvalid, NotSynced: v1alpha1.ReasonProductNotSynced, WhileDeleting: kit.WaitingFor}

// Desired is the document and product Resolve found.
type Desired struct {
	Body      string
	ProductID int64
}

// Syncer syncs ActiveDocs to 3scale ActiveDocs specs.
type Syncer struct {
	// Fates tells what becomes of its owner in 3scale when this object is deleted (the table gives it).
	Fates kit.Fates
	// Reader reads Kubernetes objects (the manager's cache).
	Reader client.Reader
	// Accounts resolves provider-account Secrets.
	Accounts *kit.ProviderAccounts
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.ActiveDoc, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.OwnedBy[*v1alpha1.ActiveDoc]                         = (*Syncer)(nil)
	_ engine.Validator[*v1alpha1.ActiveDoc]                       = (*Syncer)(nil)
)

// Snapshot is the remote state of one ActiveDocs spec.
type Snapshot struct{ tsclient.ActiveDoc }

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot { c := *s; return &c }

// Connect implements engine.TypedSyncer.
func (s *Syncer) Connect(ctx context.Context, d *v1alpha1.ActiveDoc) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, d.Namespace, kit.SecretForSession(d, d.Spec.ProviderAccountSecretName()))
}

// SystemName is the system name of the object's remote object, from its spec alone: its spec.systemName, or
// one derived from its name.
func (s *Syncer) SystemName(d *v1alpha1.ActiveDoc) string {
	return kit.SystemNameOf(d.Spec.SystemName, d.Name)
}

// Validate implements engine.Validator: an inline document (spec.document) must be JSON or YAML OpenAPI
// (or Swagger). One in a ConfigMap or a Secret is checked as Resolve reads it.
func (s *Syncer) Validate(d *v1alpha1.ActiveDoc) error {
	if d.Spec.DocumentRef != nil {
		return nil
	}
	_, err := openAPIDocument(context.Background(), d.Spec.Document, d.Spec.SkipSwaggerValidations)
	return err
}

// Resolve implements engine.TypedSyncer: a document from a ConfigMap or a Secret must be JSON or YAML
// OpenAPI (or Swagger), as Validate checks an inline one; a product must be Synced on the ActiveDoc's own
// tenant.
func (s *Syncer) Resolve(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	body, err := s.document(ctx, d)
	if err != nil {
		return r, err
	}
	if d.Spec.DocumentRef != nil {
		body, err = openAPIDocument(ctx, body, d.Spec.SkipSwaggerValidations)
	} else {
		body, err = openAPIAsJSON(body) // an OpenAPI document: Validate checked it
	}
	if err != nil {
		return r, err
	}
	desired := Desired{Body: body}
	if ref := d.Spec.ProductRef; ref != "" {
		var p v1alpha1.Product
		if err := kit.CheckDependency(ctx, s.Reader, d.Namespace, ref, &p, productOfActiveDoc); err != nil {
			return r, err
		}
		if p.Status.TenantHost != sess.Tenant {
			return r, engine.Invalid(v1alpha1.ReasonInvalidSpec, "Product %q is synced to tenant %s, but this ActiveDoc to %s: an ActiveDoc can only be bound to a product of its own tenant",
				ref, p.Status.TenantHost, sess.Tenant)
		}
		desired.ProductID = p.Status.ProductID
	}
	d.Status.ProductID = desired.ProductID
	r.Desired = desired
	// The hash covers what it always covered (a pointer to the desired state hashes as its value).
	r.Hash = sess.HashOf(sess.Tenant, sess.SystemName, d.Spec.Name, d.Spec.Description, d.Spec.Published, d.Spec.SkipSwaggerValidations, &desired)
	return r, nil
}

// document returns the OpenAPI document from the spec, a ConfigMap or a Secret.
func (s *Syncer) document(ctx context.Context, d *v1alpha1.ActiveDoc) (string, error) {
	return kit.ReadDocument(ctx, s.Reader, d.Namespace, d.Spec.Document, d.Spec.DocumentRef)
}

// openAPIDocument returns body as JSON when it is an OpenAPI (or Swagger) document, validated as the
// OpenAPI kind validates documents (kin-openapi) unless skipValidations (3scale is told to skip its own
// validation too); otherwise an Invalid error saying why.
func openAPIDocument(ctx context.Context, body string, skipValidations bool) (string, error) {
	body, err := openAPIAsJSON(body)
	if err == nil && !skipValidations {
		_, err = openapiimport.Parse(ctx, []byte(body))
	}
	if err != nil {
		return "", engine.Invalid(v1alpha1.ReasonInvalidDocument, "the document is not an OpenAPI document: %v", err)
	}
	return body, nil
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
func (s *Syncer) Read(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session, _ Desired) (*Snapshot, bool, error) {
	remote, err := kit.Locate(d, sess, s.finder(ctx, sess))
	if err != nil || remote == nil {
		return nil, false, err
	}
	return &Snapshot{*remote}, true, nil
}

// Compare implements engine.TypedSyncer.
func (s *Syncer) Compare(_ context.Context, d *v1alpha1.ActiveDoc, _ *engine.Session, want Desired, snap *Snapshot) (bool, error) {
	return activeDocMatches(snap.ActiveDoc, d, want), nil
}

func (s *Syncer) finder(ctx context.Context, sess *engine.Session) kit.RemoteFinder[tsclient.ActiveDoc] {
	return kit.TenantFinder("ActiveDocs spec", sess, nil,
		func(id int64) (*tsclient.ActiveDoc, error) { return sess.Remote.GetActiveDoc(ctx, id) },
		func() ([]tsclient.ActiveDoc, error) { return sess.Remote.ListActiveDocs(ctx) },
		func(r tsclient.ActiveDoc) (int64, string) { return r.ID, r.SystemName })
}

func activeDocMatches(r tsclient.ActiveDoc, d *v1alpha1.ActiveDoc, want Desired) bool {
	return r.Name == d.Spec.Name && r.Description == d.Spec.Description && r.Published == d.Spec.Published &&
		r.SkipSwaggerValidations == d.Spec.SkipSwaggerValidations && sameDocument(r.Body, want.Body) && r.ServiceID == want.ProductID
}

// sameDocument tells whether two documents (JSON or YAML) mean the same, so that one written by another
// tool is not rewritten for its form: porta keeps a body as it was sent, and 3scale-operator sends
// kin-openapi v0.94's serialization of the document it loaded (keys sorted, "components":{} always).
// Both are parsed into plain values and compared, so key order, spacing, JSON or YAML and the spelling of
// a number (1.0, 1) do not count. Beyond that the rule is deliberately small (documentMeaning): only empty
// members of an OpenAPI 3 document's top level that the specification makes equal to their absence are
// dropped. Any other difference counts, an empty object or list included: an empty "paths" is not a
// missing one (required in 3.0), an operation's "security": [] turns the top level's off, and a default
// written out ("nullable": false) is kept as a difference too (a write too many, never one too few).
// Text that does not parse is compared as text.
func sameDocument(a, b string) bool {
	if a == b {
		return true
	}
	ma, err := documentMeaning(a)
	if err != nil {
		return false
	}
	mb, err := documentMeaning(b)
	if err != nil {
		return false
	}
	return reflect.DeepEqual(ma, mb)
}

// emptyMeansAbsent are the top-level members of an OpenAPI 3 document whose empty value the
// specification defines as their absence: components (a container of optional maps of named objects:
// empty, it declares nothing), servers (none or empty: one server "/"), security (none or empty: no
// requirement; an operation's own is another matter, and is kept) and tags.
var emptyMeansAbsent = []string{"components", "servers", "security", "tags"}

// exactNumber is a number as exactNumbers writes it: a type of its own, so that it never equals a string.
type exactNumber string

// exactNumbers replaces the numbers of a decoded document by their exact value as a fraction, so that
// 1, 1.0 and 1e0 are equal and two numbers a float64 cannot tell apart are not.
func exactNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = exactNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = exactNumbers(e)
		}
	case json.Number:
		if r, ok := new(big.Rat).SetString(t.String()); ok {
			return exactNumber(r.RatString())
		}
	}
	return v
}

// componentMaps are the maps of named objects a components object holds (OpenAPI 3.0 and 3.1): empty,
// one declares nothing. An extension (x-...) is not among them: what an empty one means is its tool's.
var componentMaps = []string{"schemas", "responses", "parameters", "examples", "requestBodies", "headers",
	"securitySchemes", "links", "callbacks", "pathItems"}

// documentMeaning parses a JSON or YAML document into plain values (objects as maps, numbers exact:
// exactNumbers) and, for an OpenAPI 3 document (one with "openapi"), drops components' empty
// componentMaps, then the members of emptyMeansAbsent left empty.
func documentMeaning(body string) (any, error) {
	raw := []byte(body)
	if !json.Valid(raw) {
		var err error
		if raw, err = yaml.YAMLToJSON(raw); err != nil {
			return nil, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	doc = exactNumbers(doc)
	top, ok := doc.(map[string]any)
	if !ok {
		return doc, nil
	}
	if _, ok := top["openapi"]; !ok {
		return doc, nil // Swagger 2.0 (or not OpenAPI): taken as it is
	}
	if c, ok := top["components"].(map[string]any); ok {
		for _, k := range componentMaps {
			if m, ok := c[k].(map[string]any); ok && len(m) == 0 {
				delete(c, k)
			}
		}
	}
	for _, k := range emptyMeansAbsent {
		switch v := top[k].(type) {
		case map[string]any:
			if len(v) == 0 {
				delete(top, k)
			}
		case []any:
			if len(v) == 0 {
				delete(top, k)
			}
		}
	}
	return top, nil
}

func activeDocParams(d *v1alpha1.ActiveDoc, want Desired, systemName string) tsclient.ActiveDocParams {
	productID := want.ProductID
	return tsclient.ActiveDocParams{Name: d.Spec.Name, SystemName: systemName, Description: &d.Spec.Description, Published: &d.Spec.Published,
		SkipSwaggerValidations: &d.Spec.SkipSwaggerValidations, Body: want.Body, ServiceID: &productID}
}

// Create implements engine.TypedSyncer.
func (s *Syncer) Create(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session, want Desired) (engine.Created[*Snapshot], error) {
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName, func() (*tsclient.ActiveDoc, error) {
		return sess.Remote.CreateActiveDoc(ctx, activeDocParams(d, want, sess.SystemName))
	}, d, sess, s.finder(ctx, sess))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, err)
	}
	d.Status.ActiveDocID = created.ID
	return kit.Made(&Snapshot{*created}, fresh, nil)
}

// Update implements engine.TypedSyncer.
func (s *Syncer) Update(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session, want Desired, snap *Snapshot) (*Snapshot, error) {
	updated, err := sess.Remote.UpdateActiveDoc(ctx, snap.ID, activeDocParams(d, want, ""))
	if err != nil {
		return nil, fmt.Errorf("cannot update ActiveDocs spec %q: %w", sess.SystemName, err)
	}
	return &Snapshot{*updated}, nil
}

// Owners implements engine.OwnedBy: porta destroys a service's ActiveDocs with the service (the reference
// graph's Along edge).
func (s *Syncer) Owners(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) []engine.Owner {
	return []engine.Owner{{Kind: "Product", Name: d.Spec.ProductRef,
		Fate: s.Fates.Of(ctx, d.Namespace, d.Spec.ProductRef, sess.Tenant, d.Status.ProductID, &v1alpha1.Product{})}}
}

// Delete implements engine.TypedSyncer.
func (s *Syncer) Delete(ctx context.Context, d *v1alpha1.ActiveDoc, sess *engine.Session) error {
	return kit.DeleteHeld(d, sess, s.finder(ctx, sess), func(id int64) error { return sess.Remote.DeleteActiveDoc(ctx, id) })
}

// SecretRefs lists the Secrets an ActiveDoc reads: its provider account, its document's.
func SecretRefs(d *v1alpha1.ActiveDoc) []string {
	out := []string{d.Spec.ProviderAccountSecretName()}
	if r := d.Spec.DocumentRef; r != nil && r.SecretKeyRef != nil {
		out = append(out, r.SecretKeyRef.Name)
	}
	return out
}

// BodyField is the form field of an ActiveDoc's document in its writes.
const BodyField = "body"
