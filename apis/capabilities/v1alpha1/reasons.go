package v1alpha1

// The reasons of apimsync's conditions and Events: every one the controllers set, each with when. They
// are part of the API (Argo CD health checks, alerts and scripts match them); docs/status.md explains
// what to do about each, and a test keeps the two in step.

// Reasons of the Synced condition set by the engine, for every kind.
const (
	// ReasonSynced: 3scale matches this generation of the spec.
	ReasonSynced = "Synced"
	// ReasonRemoteUnavailable: 3scale answered 5xx, timed out or was unreachable; retried with backoff.
	ReasonRemoteUnavailable = "RemoteUnavailable"
	// ReasonRateLimited: 3scale answered 429; retried after its Retry-After.
	ReasonRateLimited = "RateLimited"
	// ReasonRemoteRejected: 3scale refused the spec (422 and the like) with the message shown.
	ReasonRemoteRejected = "RemoteRejected"
	// ReasonUnauthorized: 3scale refused the provider account's token (401/403).
	ReasonUnauthorized = "ProviderAccountUnauthorized"
	// ReasonProviderAccountNotFound: the provider-account Secret (or 3scale installation) is missing.
	ReasonProviderAccountNotFound = "ProviderAccountNotFound"
	// ReasonProviderAccountInvalid: the provider-account Secret lacks a usable adminURL or token.
	ReasonProviderAccountInvalid = "ProviderAccountInvalid"
	// ReasonDeletionBlocked: a deletion waits for the objects that use the object (a Backend for its
	// Products).
	ReasonDeletionBlocked = "DeletionBlocked"
	// ReasonRemoteOwnedByOtherResource: another resource already manages the same 3scale object.
	ReasonRemoteOwnedByOtherResource = "OwnedByAnotherResource"
	// ReasonRemoteBeingDeleted: a resource being deleted still holds the same 3scale object; this one
	// waits for that deletion before it creates.
	ReasonRemoteBeingDeleted = "HeldByResourceBeingDeleted"
	// ReasonAdoptionRefused: a 3scale object with this system name exists and spec.adoption is Never.
	ReasonAdoptionRefused = "AdoptionRefused"
	// ReasonObserved (Synced): the object is only observed (spec.management: Observe) and 3scale matches
	// its spec.
	ReasonObserved = "Observed"
	// ReasonObservedDifferences (Synced): the object is only observed and 3scale differs from its spec:
	// status.observation lists the writes a full sync would make; none is made.
	ReasonObservedDifferences = "ObservedDifferences"
	// ReasonNothingToObserve (Orphan): the object is only observed and its tenant has no 3scale object
	// of its system name (or id); nothing is created, it looks again with backoff.
	ReasonNothingToObserve = "NothingToObserve"
	// ReasonDeletingDependants: the object being deleted deletes the objects that cannot exist without
	// it first.
	ReasonDeletingDependants = "DeletingDependants"
	// ReasonWaitingForOwner: a plan or application being deleted leaves its owner's deletion time to
	// delete it (--dependant-deletion-grace).
	ReasonWaitingForOwner = "WaitingForOwner"
)

// Events of the engine, for every kind.
const (
	// ReasonHandedOver (Event, on both): a resource being deleted handed the remote object it held over
	// to a resource of the same kind, namespace, tenant and system name (a rename), instead of deleting it.
	ReasonHandedOver = "HandedOver"
	// ReasonAdopted (Event): an existing 3scale object was adopted.
	ReasonAdopted = "AdoptedExisting"
	// ReasonDriftRepaired (Warning Event): what was changed in 3scale behind apimsync's back was put back.
	ReasonDriftRepaired = "DriftRepaired"
	// ReasonTenantChanged (Warning Event): the provider account points at another tenant; what the
	// object held on the old one is left there (status.leftBehind).
	ReasonTenantChanged = "TenantChanged"
	// ReasonKeptForRetained (Warning Event): the object was deleted but its 3scale object kept, for
	// objects with deletionPolicy Retain live under it.
	ReasonKeptForRetained = "KeptForRetainedDependants"
)

// Reasons of the kinds' syncers about what a spec references or says.
const (
	// ReasonInvalidSpec: the spec contradicts itself or its references.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonBackendNotFound: a Backend the spec names does not exist.
	ReasonBackendNotFound = "BackendNotFound"
	// ReasonBackendNotSynced: a Backend the spec names is not Synced yet.
	ReasonBackendNotSynced = "BackendNotSynced"
	// ReasonBackendInvalid: a Backend the spec names is Invalid.
	ReasonBackendInvalid = "BackendInvalid"
	// ReasonBackendDeleting: a Backend the spec names is being deleted.
	ReasonBackendDeleting = "BackendDeleting"
	// ReasonProductNotFound: the Product the spec names does not exist.
	ReasonProductNotFound = "ProductNotFound"
	// ReasonProductNotSynced: the Product the spec names is not Synced yet.
	ReasonProductNotSynced = "ProductNotSynced"
	// ReasonProductInvalid: the Product the spec names is Invalid.
	ReasonProductInvalid = "ProductInvalid"
	// ReasonProductDeleting: the Product the spec names is being deleted.
	ReasonProductDeleting = "ProductDeleting"
	// ReasonMetricNotFound: a limit or pricing rule names a metric or method its Backend does not have.
	ReasonMetricNotFound = "MetricNotFound"
	// ReasonSecretNotFound: a Secret (and key) a policy's configurationRef or an issuerEndpointRef names
	// is missing.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonMetricInUseByGateway: a metric or method removed from the spec is kept by 3scale while the
	// latest staging or production configuration still counts it; waits for production to move on.
	ReasonMetricInUseByGateway = "MetricInUseByGateway"
	// ReasonMetricStillLimited: a metric or method removed from the spec is kept while a plan of 3scale
	// still limits or prices it (3scale would delete those with it); waits, naming the plans.
	ReasonMetricStillLimited = "MetricStillLimited"
)

// Reasons and Events of Products: lifecycle and promotion.
const (
	// ReasonLifecycleChanged (Event): the product moved to another lifecycle stage.
	ReasonLifecycleChanged = "LifecycleChanged"
	// ReasonProductDraft: an Application's product is in Draft and its plan does not allowInDraft.
	ReasonProductDraft = "ProductDraft"
	// ReasonProductDeprecated: an Application's product takes no new application.
	ReasonProductDeprecated = "ProductDeprecated"
	// ReasonProductRetired: an Application's product is retired (an existing one is suspended).
	ReasonProductRetired = "ProductRetired"
	// ReasonApplicationsSuspended (Event): a retired product suspended its applications.
	ReasonApplicationsSuspended = "ApplicationsSuspended"
	// ReasonDeploySettled (Event): a deploy's answer was lost, and staging's latest configuration, read
	// then, holds the product's state: the deploy is done, not sent again.
	ReasonDeploySettled = "DeploySettled"
	// ReasonPromoted (Event): the product's staging configuration was promoted to production.
	ReasonPromoted = "Promoted"
	// ReasonPromotionRefused (Warning Event): a promotion the spec asks for was refused.
	ReasonPromotionRefused = "PromotionRefused"
)

// Reasons of Applications.
const (
	// ReasonFieldNotDefined: a DeveloperAccount's spec.fields names a field its tenant does not define
	// for accounts.
	ReasonFieldNotDefined = "FieldNotDefined"
	// ReasonServicePlanNotFound: a ServicePlan a DeveloperAccount's spec.servicePlanRefs names does not
	// exist.
	ReasonServicePlanNotFound = "ServicePlanNotFound"
	// ReasonServicePlanNotSynced: a ServicePlan a DeveloperAccount subscribes through is not Synced yet.
	ReasonServicePlanNotSynced = "ServicePlanNotSynced"
	// ReasonServicePlanInvalid: a ServicePlan a DeveloperAccount subscribes through is Invalid.
	ReasonServicePlanInvalid = "ServicePlanInvalid"
	// ReasonServicePlanDeleting: a ServicePlan a DeveloperAccount subscribes through is being deleted.
	ReasonServicePlanDeleting = "ServicePlanDeleting"
	// ReasonSubscriptionInUse: 3scale refuses to end a subscription a DeveloperAccount let go while the
	// account has applications on the product that are not suspended.
	ReasonSubscriptionInUse = "SubscriptionInUse"
	// ReasonAccountPlanNotFound: the AccountPlan a DeveloperAccount's spec.accountPlanRef names does not
	// exist.
	ReasonAccountPlanNotFound = "AccountPlanNotFound"
	// ReasonAccountPlanNotSynced: the AccountPlan a DeveloperAccount is on is not Synced yet.
	ReasonAccountPlanNotSynced = "AccountPlanNotSynced"
	// ReasonAccountPlanInvalid: the AccountPlan a DeveloperAccount is on is Invalid.
	ReasonAccountPlanInvalid = "AccountPlanInvalid"
	// ReasonAccountPlanDeleting: the AccountPlan a DeveloperAccount is on is being deleted.
	ReasonAccountPlanDeleting = "AccountPlanDeleting"
	// ReasonAccountNotFound: the DeveloperAccount spec.accountRef names does not exist.
	ReasonAccountNotFound = "AccountNotFound"
	// ReasonAccountNotSynced: the DeveloperAccount spec.accountRef names is not Synced yet.
	ReasonAccountNotSynced = "AccountNotSynced"
	// ReasonAccountInvalid: the DeveloperAccount spec.accountRef names is Invalid.
	ReasonAccountInvalid = "AccountInvalid"
	// ReasonAccountDeleting: the DeveloperAccount spec.accountRef names is being deleted.
	ReasonAccountDeleting = "AccountDeleting"
	// ReasonPlanNotFound: the ApplicationPlan spec.planRef names does not exist.
	ReasonPlanNotFound = "PlanNotFound"
	// ReasonPlanNotSynced: the ApplicationPlan spec.planRef names is not Synced yet.
	ReasonPlanNotSynced = "PlanNotSynced"
	// ReasonPlanInvalid: the ApplicationPlan spec.planRef names is Invalid.
	ReasonPlanInvalid = "PlanInvalid"
	// ReasonPlanDeleting: the ApplicationPlan spec.planRef names is being deleted.
	ReasonPlanDeleting = "PlanDeleting"
	// ReasonPlanOfAnotherProduct: the plan changed to one of another product, which 3scale cannot do.
	ReasonPlanOfAnotherProduct = "PlanOfAnotherProduct"
	// ReasonCredentialsUnavailable: the Secret spec.credentialsRef names is missing.
	ReasonCredentialsUnavailable = "CredentialsNotFound"
)

// Reasons of DeveloperAccounts.
const (
	// ReasonMultipleUsersDenied: the account has more than one user in its spec on a tenant whose
	// multiple_users switch is denied.
	ReasonMultipleUsersDenied = "MultipleUsersDenied"
)

// Reasons of ActiveDocs (and OpenAPIs).
const (
	// ReasonDocumentNotFound: the ConfigMap or Secret (and key) spec.documentRef names is missing, or a
	// ConfigMap (and key) a DeveloperPortal reads content from; for an OpenAPI's spec.sourceRef, the
	// Flux source, its artifact or the file in it is not there (yet).
	ReasonDocumentNotFound = "DocumentNotFound"
	// ReasonInvalidDocument: the document is not JSON or YAML OpenAPI.
	ReasonInvalidDocument = "InvalidDocument"
)

// Reasons of CustomPolicyDefinitions and of the Products that use them.
const (
	// ReasonInvalidPolicySchema: the policy's manifest cannot work.
	ReasonInvalidPolicySchema = "InvalidPolicySchema"
	// ReasonPolicyInUse: 3scale refuses to change a policy a product's chain uses.
	ReasonPolicyInUse = "PolicyInUse"
	// ReasonPolicyRegistryUnavailable: the tenant refuses its policy registry (a feature porta turns on
	// per tenant).
	ReasonPolicyRegistryUnavailable = "PolicyRegistryUnavailable"
	// ReasonCustomPolicyNotFound: a Product's chain names a custom policy no CustomPolicyDefinition defines.
	ReasonCustomPolicyNotFound = "CustomPolicyNotFound"
	// ReasonCustomPolicyDeleting: the CustomPolicyDefinition a Product's chain uses is being deleted.
	ReasonCustomPolicyDeleting = "CustomPolicyDeleting"
	// ReasonCustomPolicyInvalid: the CustomPolicyDefinition a Product's chain uses is Invalid.
	ReasonCustomPolicyInvalid = "CustomPolicyInvalid"
	// ReasonCustomPolicyNotSynced: the CustomPolicyDefinition a Product's chain uses is not Synced yet.
	ReasonCustomPolicyNotSynced = "CustomPolicyNotSynced"
)

// Reasons and Events of OpenAPIs.
const (
	// ReasonNotGenerated: a resource with a name the OpenAPI generates exists and is not its own.
	ReasonNotGenerated = "NotGeneratedByThisOpenAPI"
	// ReasonSourceNotTrusted: the artifact of the Flux source an OpenAPI's spec.sourceRef names is not
	// fetched: its URL is not source-controller's for that source, or its digest cannot be checked.
	ReasonSourceNotTrusted = "SourceNotTrusted"
	// ReasonGeneratedWaiting: the generated resources are not all Synced yet.
	ReasonGeneratedWaiting = "GeneratedResourcesSyncing"
	// ReasonOperationStillLimited: the document no longer has an operation (or metric) whose method an
	// ApplicationPlan not generated by the OpenAPI still limits or prices: nothing is regenerated meanwhile.
	ReasonOperationStillLimited = "OperationStillLimited"
	// ReasonGeneratedInvalid: a generated resource is Invalid.
	ReasonGeneratedInvalid = "GeneratedResourceInvalid"
	// ReasonEditReverted (Warning Event): a hand edit of a generated resource was put back.
	ReasonEditReverted = "EditReverted"
	// ReasonRegenerated (Event): the generated resources were written anew from the document.
	ReasonRegenerated = "Regenerated"
	// ReasonOIDCIssuerNeeded: the document asks for OpenID Connect and spec.oidc names no issuer.
	ReasonOIDCIssuerNeeded = "OIDCIssuerNeeded"
)

// Reasons and Events of Tenants.
const (
	// ReasonTenantTokenLost: a restored Tenant's tenant exists but no Secret of this Tenant holds its
	// token; the message says how to hand one over.
	ReasonTenantTokenLost = "TenantTokenLost"
	// ReasonSecretNotOurs: the provider-account Secret to write exists and was not written by this Tenant.
	ReasonSecretNotOurs = "SecretNotControlled"
	// ReasonSecretNotWritable: the provider-account Secret cannot be written (its namespace is missing or
	// refuses the write).
	ReasonSecretNotWritable = "ProviderAccountSecretNotWritable"
	// ReasonTenantScheduled (Event): the tenant is scheduled for deletion in 3scale (with the date porta
	// deletes it for good), or was found so and resumed.
	ReasonTenantScheduled = "TenantScheduledForDeletion"
	// ReasonNamespaceNotConsented: the namespace named in spec.providerAccountSecret has not allowed this
	// Tenant to write a Secret there.
	ReasonNamespaceNotConsented = "NamespaceNotConsented"
	// ReasonTenantAmbiguous: master holds several tenants of this organization and admin.
	ReasonTenantAmbiguous = "TenantAmbiguous"
	// ReasonLockOut: the spec would suspend, demote or delete the user apimsync's token belongs to, or
	// the tenant's last active admin (or an admin while apimsync cannot tell whose its token is).
	ReasonLockOut = "WouldLockOut"
)
