package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeletionPolicy says what happens to the 3scale object when its resource is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type DeletionPolicy string

const (
	// DeletionPolicyDelete deletes the 3scale object with the resource (the default).
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyRetain keeps the 3scale object when the resource is deleted.
	DeletionPolicyRetain DeletionPolicy = "Retain"
)

// AdoptionPolicy says whether a resource may take over a 3scale object that it did not create and that
// has its system name (restore after losing a cluster, migration from another tool).
// +kubebuilder:validation:Enum=IfExists;Never
type AdoptionPolicy string

const (
	// AdoptionIfExists adopts an existing 3scale object with the same system name, and says so in an
	// Event and the Synced condition (the default).
	AdoptionIfExists AdoptionPolicy = "IfExists"
	// AdoptionNever refuses to adopt: the resource is Invalid while a 3scale object with its system name
	// exists that it did not create.
	AdoptionNever AdoptionPolicy = "Never"
)

// Sync condition types (the sync state): exactly one of them is True at any time.
const (
	// ConditionInSync is True while a sync with 3scale is under way or failed for a passing reason.
	ConditionInSync = "InSync"
	// ConditionOrphan is True while something the object references is missing or not yet Synced.
	ConditionOrphan = "Orphan"
	// ConditionSynced is True when 3scale matches the current generation of the spec.
	ConditionSynced = "Synced"
	// ConditionInvalid is True when the spec cannot work; nothing is retried until it changes.
	ConditionInvalid = "Invalid"
)

// kstatus conditions (Flux, kstatus), derived from the sync conditions.
const (
	// ConditionReady is True iff the object is Synced at its current generation; its reason is the sync state.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the object is InSync or Orphan.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True while the object is Invalid.
	ConditionStalled = "Stalled"
)

// SyncConditions lists the sync condition types (the sync state) in their natural order.
var SyncConditions = []string{ConditionInSync, ConditionOrphan, ConditionSynced, ConditionInvalid}

// SyncNowAnnotation forces a re-read of the remote state (drift check) whenever its value changes.
const SyncNowAnnotation = "apimsync.io/sync-now"

// CreatePendingAnnotation is the create-pending marker: apimsync writes it, with its remote-cleanup
// finalizer and in the same update, just before it sends a create of the remote object; its value is
// "<tenant>#<n>#<uid>", n counting the creates of this resource, uid the resource's own (a copy of the
// annotation in another object means nothing). While status.createSettled differs from it, the answer to
// that create has not been seen: the object found by system name on that tenant is this resource's own.
// A resource finds by system name only what it created itself (this marker) or what it adopts on purpose.
const CreatePendingAnnotation = "apimsync.io/create-pending"

// ProviderAccountRef names the Secret, in the resource's own namespace, that holds the 3scale tenant's
// admin URL (key `adminURL`) and access token (key `token`); optional keys: `caBundle` (PEM) and
// `insecureSkipVerify` ("true" turns TLS verification off; only for test tenants).
// When no reference is given, the Secret named `threescale-provider-account` is used.
type ProviderAccountRef struct {
	// Name of the Secret in the same namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// CommonSpec holds the fields every synced kind has.
type CommonSpec struct {
	// ProviderAccountRef names the Secret with the 3scale tenant's credentials. Default: the Secret
	// `threescale-provider-account` in the same namespace. References never cross namespaces.
	// +optional
	ProviderAccountRef *ProviderAccountRef `json:"providerAccountRef,omitempty"`

	// DeletionPolicy says what happens to the 3scale object when this resource is deleted:
	// Delete (default) removes it from 3scale, Retain leaves it there.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
	// Adoption says whether this resource may take over an existing 3scale object with its system name
	// that it did not create: IfExists (default; announced in an Event) or Never (the resource is Invalid
	// instead).
	// +kubebuilder:default=IfExists
	// +optional
	Adoption AdoptionPolicy `json:"adoption,omitempty"`
	// Management says what apimsync may do with the 3scale object: Full (the default) creates, updates
	// and deletes it; Observe only finds it (by the id recorded, or by system name, whatever adoption
	// says), records its id and tells in status.observation the writes a full sync would make, writing
	// nothing; deleting the resource then deletes nothing (deletionPolicy counts as Retain). Switching to
	// Full makes exactly the writes status.observation lists.
	// +optional
	Management ManagementPolicy `json:"management,omitempty"`
}

// ManagementPolicy says what apimsync may do with an object's 3scale counterpart.
// +kubebuilder:validation:Enum=Full;Observe
type ManagementPolicy string

const (
	// ManagementFull creates, updates and deletes the 3scale object (the default).
	ManagementFull ManagementPolicy = "Full"
	// ManagementObserve only reads it: the resource finds it (by the id it recorded, or by system name),
	// records its id, and tells in status.observation what a full sync would write, writing nothing, ever;
	// deleting the resource deletes nothing in 3scale.
	ManagementObserve ManagementPolicy = "Observe"
)

// CommonStatus holds the status fields every synced kind has.
type CommonStatus struct {
	// ObservedGeneration is the generation last handled completely (synced, or invalid for good).
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: exactly one of InSync, Orphan, Synced, Invalid is True; Ready, Reconciling and Stalled
	// say the same for kstatus and Flux.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// TenantHost is the host of the 3scale admin portal the object is synced to.
	// +optional
	TenantHost string `json:"tenantHost,omitempty"`

	// SystemName is the effective 3scale system name: spec.systemName, or one derived from metadata.name.
	// +optional
	SystemName string `json:"systemName,omitempty"`

	// SyncedHash is the hash of the spec (and of the dependencies it was synced with) last written to 3scale.
	// An object whose hash is unchanged costs no remote call until the next drift check.
	// +optional
	SyncedHash string `json:"syncedHash,omitempty"`

	// LastSyncTime is when the remote state was last read or written.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`

	// Observation is what the last look at 3scale found, while spec.management is Observe: the writes a
	// full sync would make. Gone once the object is fully managed.
	// +optional
	Observation *Observation `json:"observation,omitempty"`

	// SyncNow is the value of the apimsync.io/sync-now annotation last acted upon.
	// +optional
	SyncNow string `json:"syncNow,omitempty"`

	// ProviderAccountSecret is the provider-account Secret the object was last synced with; the object
	// needs it to clean up in 3scale when it is deleted.
	// +optional
	ProviderAccountSecret string `json:"providerAccountSecret,omitempty"`
	// ProviderAccountVersion identifies the content of the provider-account Secret last synced with (its
	// UID and a keyed hash of its data; metadata changes leave it as it is): when the content changes,
	// the credentials are checked once per tenant before anything else.
	// +optional
	ProviderAccountVersion string `json:"providerAccountVersion,omitempty"`
	// CreateSettled is the value of the apimsync.io/create-pending annotation whose create is settled: its
	// answer was seen (the remote id is recorded), or it surely made nothing (3scale refused it, or it was
	// never sent). The annotation marks a create in doubt only while it differs from this.
	// +optional
	CreateSettled string `json:"createSettled,omitempty"`
	// MetricsHash is the hash of the remote ids of the object's metrics and methods: objects that refer to
	// them (plans' limits and pricing rules) re-sync when it changes, e.g. after a metric deleted in 3scale
	// was re-created with a new id.
	// +optional
	MetricsHash string `json:"metricsHash,omitempty"`
	// MetricIDs are the remote ids of a Product's or Backend's metrics and methods, by system name: the
	// plans that use them resolve the ids their limits and pricing rules need from here, with no call of
	// their own, after a restart too.
	// +optional
	MetricIDs map[string]int64 `json:"metricIDs,omitempty"`
	// LeftBehind lists the remote objects this resource held on tenants its provider account no longer
	// points at (the Secret edited, or created after the 3scale installation's tenant served): apimsync
	// leaves them there untouched, and says so in the Synced message until the resource is deleted.
	// +listType=atomic
	// +optional
	LeftBehind []RemoteCopy `json:"leftBehind,omitempty"`
}

// RemoteCopy is a remote object a resource left on a tenant it no longer syncs to.
type RemoteCopy struct {
	// Tenant is the host of that tenant's admin portal.
	Tenant string `json:"tenant"`
	// ID is the object's id there.
	ID int64 `json:"id"`
	// Since is when the resource moved away.
	Since metav1.Time `json:"since"`
}

// MetricSpec is a 3scale metric: something a limit or pricing rule counts. The map key is its system name.
type MetricSpec struct {
	// FriendlyName is the name shown in 3scale.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	FriendlyName string `json:"friendlyName"`

	// Unit counted, e.g. "hit" or "MB".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Unit string `json:"unit"`

	// Description of the metric.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Description string `json:"description,omitempty"`
}

// MethodSpec is a 3scale method: a metric under `hits` that counts calls to one operation.
// The map key is its system name.
type MethodSpec struct {
	// FriendlyName is the name shown in 3scale.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	FriendlyName string `json:"friendlyName"`

	// Description of the method.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Description string `json:"description,omitempty"`
}

// MappingRuleSpec maps requests (HTTP method and path pattern) to the metric or method they increment.
type MappingRuleSpec struct {
	// HTTPMethod the rule matches.
	// +kubebuilder:validation:Enum=GET;HEAD;POST;PUT;DELETE;OPTIONS;TRACE;PATCH;CONNECT
	HTTPMethod string `json:"httpMethod"`

	// Pattern is the path pattern, starting with "/", with optional {placeholders} and a trailing "$" to
	// match the end of the path, e.g. "/pets/{id}$".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="a mapping rule pattern must start with '/'"
	Pattern string `json:"pattern"`

	// MetricMethodRef is the system name of the metric or method (of this object) that the rule increments.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	MetricMethodRef string `json:"metricMethodRef"`

	// Increment is how much a matching request adds to the metric.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	Increment int32 `json:"increment,omitempty"`

	// Last stops the matching of further rules when this one matches.
	// +optional
	Last bool `json:"last,omitempty"`
}

// ProviderAccountSecretName returns the name of the provider-account Secret to use: the referenced one
// or the default `threescale-provider-account`.
func (c *CommonSpec) ProviderAccountSecretName() string {
	if c.ProviderAccountRef != nil && c.ProviderAccountRef.Name != "" {
		return c.ProviderAccountRef.Name
	}
	return DefaultProviderAccountSecret
}

// EffectiveAdoption returns the adoption policy, IfExists when unset.
func (c *CommonSpec) EffectiveAdoption() AdoptionPolicy {
	if c.Adoption == "" {
		return AdoptionIfExists
	}
	return c.Adoption
}

// EffectiveDeletionPolicy returns the deletion policy, Delete when unset, and Retain while the object
// is only observed (spec.management: Observe).
func (c *CommonSpec) EffectiveDeletionPolicy() DeletionPolicy {
	return effectiveDeletionPolicy(c.DeletionPolicy, c.Management)
}

func effectiveDeletionPolicy(d DeletionPolicy, m ManagementPolicy) DeletionPolicy {
	switch {
	case m == ManagementObserve:
		return DeletionPolicyRetain
	case d == "":
		return DeletionPolicyDelete
	}
	return d
}

// ObserveOnly reports whether spec.management is Observe.
func (c *CommonSpec) ObserveOnly() bool { return c.Management == ManagementObserve }

// Observation is what a look at 3scale found for an object that is only observed.
type Observation struct {
	// Differences is the number of writes a full sync would make now: 0 when 3scale matches the spec.
	Differences int `json:"differences"`
	// Writes are those writes, each its method and endpoint template (never a value), the first 50; a
	// missing object is one line, "create ...".
	// +optional
	Writes []string `json:"writes,omitempty"`
	// ObservedAt is when 3scale was read.
	ObservedAt metav1.Time `json:"observedAt"`
}

// DefaultProviderAccountSecret is the Secret used when spec.providerAccountRef is not set.
const DefaultProviderAccountSecret = "threescale-provider-account"

// LocalSecretKeyRef selects one key of a Secret in the resource's own namespace.
type LocalSecretKeyRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key in the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}
