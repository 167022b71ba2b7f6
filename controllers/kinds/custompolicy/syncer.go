package custompolicy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kit"
)

const (
	maxPolicySummary              = 75
	customPolicyIdentifierSpacing = "-"
)

// policyVersionPattern is the version pattern of APIcast's policy manifest (apicast-policy-v1.1.schema.json),
// which porta applies unanchored, as a Ruby regular expression: multi-line.
var policyVersionPattern = regexp.MustCompile(`(?m)^((\d+\.)?(\d+\.)?(\*|\d+))|builtin$`)

// Syncer syncs CustomPolicyDefinitions to the tenant's APIcast policy registry.
type Syncer struct {
	Reader   client.Reader
	Accounts *kit.ProviderAccounts
}

// Desired is the manifest to store, as compact JSON.
type Desired struct {
	Schema json.RawMessage
}

// Snapshot is the remote state of one custom policy.
type Snapshot struct{ tsclient.CustomPolicy }

// RemoteID implements engine.Snapshot.
func (s *Snapshot) RemoteID() int64 { return s.ID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.Schema = bytes.Clone(s.Schema)
	return &c
}

// customPolicyIdentifier is porta's identifier of a policy in the registry, "<name>-<version>": the
// effective system name of a CustomPolicyDefinition.
func customPolicyIdentifier(c *v1alpha1.CustomPolicyDefinition) string {
	return c.Spec.Name + customPolicyIdentifierSpacing + c.Spec.Version
}

// Validate implements engine.Validator: the manifest must be what porta's policy specification takes
// (an object with name, version equal to spec.version, a summary of at most 75 characters and a
// configuration), and its configuration must compile as a JSON Schema.
func (s *Syncer) Validate(c *v1alpha1.CustomPolicyDefinition) error {
	_, err := policyManifest(c)
	return err
}

// policyManifest checks a CustomPolicyDefinition's schema and returns it as compact JSON.
func policyManifest(c *v1alpha1.CustomPolicyDefinition) (json.RawMessage, error) {
	invalid := func(format string, args ...any) error {
		return engine.Invalid(v1alpha1.ReasonInvalidPolicySchema, "spec.schema: "+format, args...)
	}
	var manifest map[string]json.RawMessage
	if err := json.Unmarshal(c.Spec.Schema.Raw, &manifest); err != nil || manifest == nil {
		return nil, invalid("must be a JSON object (the APIcast policy manifest)")
	}
	var missing []string
	for _, key := range []string{"name", "version", "configuration", "summary"} {
		if _, ok := manifest[key]; !ok {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		return nil, invalid("missing %s (an APIcast policy manifest has name, version, summary and configuration)", strings.Join(missing, ", "))
	}
	str := func(key string) (string, error) {
		var v string
		if err := json.Unmarshal(manifest[key], &v); err != nil {
			return "", invalid("%s must be a string", key)
		}
		return v, nil
	}
	name, err := str("name")
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, invalid("name must not be empty")
	}
	version, err := str("version")
	if err != nil {
		return nil, err
	}
	if version != c.Spec.Version {
		return nil, invalid("version is %q but spec.version is %q: they must be equal", version, c.Spec.Version)
	}
	if !policyVersionPattern.MatchString(version) {
		return nil, invalid("version %q is not a version such as 1, 0.1 or 1.2.3", version)
	}
	summary, err := str("summary")
	if err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(summary); n > maxPolicySummary {
		return nil, invalid("summary has %d characters, at most %d are allowed", n, maxPolicySummary)
	}
	if err := compileConfigurationSchema(manifest["configuration"]); err != nil {
		return nil, invalid("configuration is not a valid JSON Schema: %v", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, c.Spec.Schema.Raw); err != nil {
		return nil, invalid("%v", err)
	}
	return compact.Bytes(), nil
}

// compileConfigurationSchema compiles a policy's configuration schema (JSON Schema, draft 7 unless it
// says otherwise, as APIcast's manifests are written). References are resolved only within the document:
// nothing is fetched.
func compileConfigurationSchema(raw json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if _, ok := doc.(map[string]any); !ok {
		return fmt.Errorf("it must be an object")
	}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft7)
	compiler.UseLoader(noRemoteSchemas{})
	const url = "urn:apimsync:policy-configuration"
	if err := compiler.AddResource(url, doc); err != nil {
		return err
	}
	_, err = compiler.Compile(url)
	return err
}

// noRemoteSchemas refuses to load a referenced schema: a manifest's references stay within it.
type noRemoteSchemas struct{}

// Load implements jsonschema.URLLoader.
func (noRemoteSchemas) Load(url string) (any, error) {
	return nil, fmt.Errorf("references outside the schema are not followed (%s)", url)
}

// The contract, and each optional part the syncer means to implement, checked by the compiler.
var (
	_ engine.TypedSyncer[*v1alpha1.CustomPolicyDefinition, Desired, *Snapshot] = (*Syncer)(nil)
	_ engine.Validator[*v1alpha1.CustomPolicyDefinition]                       = (*Syncer)(nil)
)

// Connect implements engine.TypedSyncer.
func (s *Syncer) Connect(ctx context.Context, c *v1alpha1.CustomPolicyDefinition) (*engine.Session, error) {
	return s.Accounts.Connect(ctx, c.Namespace, kit.SecretForSession(c, c.Spec.ProviderAccountSecretName()))
}

// SystemName is the system name of the object's remote object, from its spec alone: its policy's name and
// version.
func (s *Syncer) SystemName(c *v1alpha1.CustomPolicyDefinition) string {
	return customPolicyIdentifier(c)
}

// Resolve implements engine.TypedSyncer: one resource per policy name and version in a tenant.
func (s *Syncer) Resolve(ctx context.Context, c *v1alpha1.CustomPolicyDefinition, sess *engine.Session) (engine.Resolved[Desired], error) {
	r := engine.Resolved[Desired]{}
	schema, err := policyManifest(c)
	if err != nil {
		return r, err
	}
	r.Desired = Desired{Schema: schema}
	r.Hash = sess.HashOf(sess.Tenant, sess.SystemName, string(schema))
	return r, nil
}

func (s *Syncer) finder(ctx context.Context, sess *engine.Session) kit.RemoteFinder[tsclient.CustomPolicy] {
	f := kit.TenantFinder("custom policy", sess, nil,
		func(id int64) (*tsclient.CustomPolicy, error) { return sess.Remote.GetCustomPolicy(ctx, id) },
		func() ([]tsclient.CustomPolicy, error) { return sess.Remote.ListCustomPolicies(ctx) },
		func(r tsclient.CustomPolicy) (int64, string) {
			return r.ID, r.Name + customPolicyIdentifierSpacing + r.Version
		})
	f.UniqueField = "version" // porta: version "has already been taken" (for this name)
	return f
}

// Read implements engine.TypedSyncer.
func (s *Syncer) Read(ctx context.Context, c *v1alpha1.CustomPolicyDefinition, sess *engine.Session, _ Desired) (*Snapshot, bool, error) {
	remote, err := kit.Locate(c, sess, s.finder(ctx, sess))
	if err != nil || remote == nil {
		return nil, false, registryRefused(err, sess.Tenant)
	}
	return &Snapshot{*remote}, true, nil
}

// registryRefused turns porta's 403 on the policy registry into what it means: the registry is a feature
// porta grants per tenant (the policy_registry rolling update, config/abilities/provider_any.rb, and the
// user's policy_registry permission), not a broken token — the token check passed.
func registryRefused(err error, tenant string) error {
	if !tsclient.IsForbidden(err) {
		return err
	}
	return engine.Refused(v1alpha1.ReasonPolicyRegistryUnavailable,
		"tenant %s refuses its APIcast policy registry (403): the registry is a 3scale feature turned on per tenant (porta's policy_registry rolling update), "+
			"and the token's user needs the policy registry permission; ask the 3scale administrators to enable it for this tenant. Products can still use APIcast's built-in policies", tenant)
}

// Compare implements engine.TypedSyncer: the name, version and manifest (as JSON values: porta stores
// and answers the manifest as an object, its keys in its own order).
func (s *Syncer) Compare(_ context.Context, c *v1alpha1.CustomPolicyDefinition, _ *engine.Session, want Desired, snap *Snapshot) (bool, error) {
	return snap.Name == c.Spec.Name && snap.Version == c.Spec.Version && kit.JSONEqual(snap.Schema, want.Schema), nil
}

func customPolicyParams(c *v1alpha1.CustomPolicyDefinition, want Desired) tsclient.CustomPolicyParams {
	return tsclient.CustomPolicyParams{Name: c.Spec.Name, Version: c.Spec.Version, Schema: want.Schema}
}

// Create implements engine.TypedSyncer: adds the policy to the registry, or adopts the one with its name
// and version.
func (s *Syncer) Create(ctx context.Context, c *v1alpha1.CustomPolicyDefinition, sess *engine.Session, want Desired) (engine.Created[*Snapshot], error) {
	created, fresh, err := kit.CreateOrAdopt(sess.SystemName, func() (*tsclient.CustomPolicy, error) {
		return sess.Remote.CreateCustomPolicy(ctx, customPolicyParams(c, want))
	}, c, sess, s.finder(ctx, sess))
	if err != nil {
		return kit.Made[*Snapshot](nil, fresh, registryRefused(err, sess.Tenant))
	}
	c.Status.PolicyID = created.ID
	return kit.Made(&Snapshot{*created}, fresh, nil)
}

// Update implements engine.TypedSyncer. porta refuses to change a policy a product's chain uses: a new
// version is the way to change it then.
func (s *Syncer) Update(ctx context.Context, c *v1alpha1.CustomPolicyDefinition, sess *engine.Session, want Desired, snap *Snapshot) (*Snapshot, error) {
	updated, err := sess.Remote.UpdateCustomPolicy(ctx, snap.ID, customPolicyParams(c, want))
	if tsclient.IsInvalid(err) && strings.Contains(err.Error(), "currently being used") {
		return nil, engine.Invalid(v1alpha1.ReasonPolicyInUse, "3scale refuses to change custom policy %q while a product's policy chain uses it: "+
			"publish the change as a new version (a new CustomPolicyDefinition) and move the Products' spec.policies to it", sess.SystemName)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot update custom policy %q: %w", sess.SystemName, err)
	}
	return &Snapshot{*updated}, nil
}

// Delete implements engine.TypedSyncer. The engine waits first for the Products of the namespace that
// use the policy (a Blocks reference); a product elsewhere that uses it makes 3scale refuse (403), and
// the definition waits, naming it.
func (s *Syncer) Delete(ctx context.Context, c *v1alpha1.CustomPolicyDefinition, sess *engine.Session) error {
	err := kit.DeleteHeld(c, sess, s.finder(ctx, sess), func(id int64) error { return sess.Remote.DeleteCustomPolicy(ctx, id) })
	if tsclient.IsInUse(err) {
		return engine.Waiting(v1alpha1.ReasonDeletionBlocked,
			"3scale refuses to delete custom policy %q while a product's policy chain uses it: remove it from those products' policies", sess.SystemName)
	}
	return err
}

// customPolicyOfProduct is a custom policy of a Product's chain.
// PolicyKey is the policy a CustomPolicyDefinition defines (v1alpha1.PolicyKey), "" for other objects.
func PolicyKey(o client.Object) string {
	if c, ok := o.(*v1alpha1.CustomPolicyDefinition); ok {
		return v1alpha1.PolicyKey(c.Spec.Name, c.Spec.Version)
	}
	return ""
}

// SecretRefs lists the Secrets a CustomPolicyDefinition reads: its provider account.
func SecretRefs(c *v1alpha1.CustomPolicyDefinition) []string {
	return []string{c.Spec.ProviderAccountSecretName()}
}
