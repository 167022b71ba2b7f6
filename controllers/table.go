package controllers

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/cache"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/kinds/accountplan"
	"github.com/apimsync/apimsync/controllers/kinds/activedoc"
	"github.com/apimsync/apimsync/controllers/kinds/adminuser"
	appkind "github.com/apimsync/apimsync/controllers/kinds/application"
	"github.com/apimsync/apimsync/controllers/kinds/applicationplan"
	"github.com/apimsync/apimsync/controllers/kinds/backend"
	"github.com/apimsync/apimsync/controllers/kinds/custompolicy"
	"github.com/apimsync/apimsync/controllers/kinds/developeraccount"
	"github.com/apimsync/apimsync/controllers/kinds/developerportal"
	"github.com/apimsync/apimsync/controllers/kinds/fielddefinition"
	productkind "github.com/apimsync/apimsync/controllers/kinds/product"
	"github.com/apimsync/apimsync/controllers/kinds/serviceplan"
	"github.com/apimsync/apimsync/controllers/kinds/tenant"
	"github.com/apimsync/apimsync/controllers/kinds/tenantsettings"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/kit/children"
	"github.com/apimsync/apimsync/controllers/openapi"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// The table of kinds: one row per kind the engine syncs, from which the manager's controllers
// (SetupWithManager), diff's plans (DiffObjects), the export (ExportTenant), the indexes and watches over all kinds, the Secret
// controller's lists and the creation and deletion orders are derived. Adding a kind is its syncer and
// one row.

// kindDeps is what every kind's syncer is built from; the manager and diff give the same, but diff's
// Reader is an in-memory copy of the namespace and its writes are recorded, not sent.
type kindDeps struct {
	Reader client.Reader
	// Writer writes to the cluster (an Application's credentials Secret, a Tenant's provider account).
	Writer client.Client
	// APIReader reads the cluster without the cache (a Tenant's Secrets, which the cache does not hold).
	APIReader client.Reader
	Accounts  *kit.ProviderAccounts
	Snapshots *cache.Snapshots
	Lists     *kit.BurstLists
	// Recorder returns the Event recorder of a controller; nil in diff, which emits none.
	Recorder func(name string) events.EventRecorder
	Opts     Options
	// Dry: the syncers decide, they do not sync (admission, diff): no metrics of a sync.
	Dry bool
}

// recorder returns the Event recorder named name, or nil (no Events) when d has none.
func (d kindDeps) recorder(name string) events.EventRecorder {
	if d.Recorder == nil {
		return nil
	}
	return d.Recorder(name)
}

// claims returns a fresh ownership-claims checker over d's reader.

// typeRow is what the manager asks of every kind it reconciles: the row of each kind the engine syncs
// (kindRow), and the row of the OpenAPI generator, whose controller makes objects of the table's kinds
// instead of syncing to 3scale (generatorRow). The cache, the indexes, the readiness check, the shards'
// selectors and kubectl apimsync status take every row; diff, export and the graph only the synced ones.
type typeRow interface {
	// Name is the kind's name (Backend).
	Name() string
	// New returns an empty object of the kind; NewList an empty list.
	New() client.Object
	NewList() client.ObjectList
	// indexes are the kind's own field indexes (beyond its Secrets, its remote object and the graph's).
	indexes() []fieldIndex
	// controller builds the kind's controller and its watches.
	controller(sh shared, d kindDeps) error
	// secrets lists the Secrets obj reads by its spec, for an object of the kind.
	secrets(obj client.Object) []string
}

// kindRow is one row of the table of kinds the engine syncs.
type kindRow interface {
	typeRow
	// Planned tells whether diff plans the kind's objects (a Tenant's master API is not planned).
	Planned() bool
	// ownerScope is the scope of an object's remote object in its owner key (kit.OwnerKey).
	ownerScope(obj client.Object) string
	// checkOwner is the one-owner check the engine runs after each Resolve of the kind's objects.
	checkOwner(d kindDeps) func(ctx context.Context, obj client.Object, s *engine.Session) error
	// admit decides an object of the kind at apply time (engine.Reconciler.Admit) and adds the kind's
	// warnings of its change from old (nil on create), for the webhook.
	admit(d kindDeps) func(ctx context.Context, old, obj client.Object) ([]string, error)
	// plan plans obj as diff does (Planned kinds only).
	plan(ctx context.Context, mem client.Client, d kindDeps, obj client.Object, plan *plugin.Plan) error
	// export adds the kind's objects to an export of a tenant (nothing for a kind that exports none).
	export(ctx context.Context, x *plugin.Exporter) error
	// remoteItems lists the kind's objects on a tenant (nil, false for a kind with no inventory).
	remoteItems() (plugin.Inventory, bool)
	// prune deletes one of them for a TenantSettings' prune (nil: the kind is not pruned).
	prune() plugin.Pruner
	// heldKeys are the inventory's items obj holds (RemoteItem.HeldKey).
	heldKeys(obj client.Object) []string
}

// kindOf is the row of the kind of T.
type kindOf[T engine.Object, D any, S engine.Snapshot[S]] struct {
	name    string
	newObj  func() T
	newList func() client.ObjectList
	// syncer builds the kind's syncer from d: D is its desired state, S its remote snapshot.
	syncer func(d kindDeps) engine.TypedSyncer[T, D, S]
	// watches are the kind's own extra watches (what its syncer reads beyond the reference graph), and
	// ownIndexes the field indexes they use.
	watches    func(reader client.Reader) []watch
	ownIndexes []fieldIndex
	// notPlanned keeps diff from planning the kind.
	notPlanned bool
	// secretRefs lists the Secrets an object reads by its spec (the provider account it last synced with
	// is added), and scope the scope of its owner key ("": the tenant).
	secretRefs func(obj T) []string
	scope      func(obj T) string
	// claimScope is the scope of an object's remote object read from its references, before it synced
	// (a rename's new plan: its Product's id); nil: scope.
	claimScope func(ctx context.Context, reader client.Reader, obj T) string
	// ownerRemedy is what a second object owning the same remote object is told to do ("": change its
	// systemName or remove one).
	ownerRemedy string
	// secretFields name the form fields of obj's writes whose values come from a Secret (diff hides them).
	secretFields func(obj T) []string
	// exporter exports the kind's objects from a tenant (nil: the kind exports none).
	exporter func(ctx context.Context, x *plugin.Exporter) error
	// inventory lists the kind's objects on a tenant, for diff --unmanaged (nil: not listed), and
	// pruner deletes one of them for a TenantSettings' prune.
	inventory plugin.Inventory
	pruner    plugin.Pruner
	// holds are the inventory's keys (RemoteItem.HeldKey) an object holds; nil: its remote id.
	holds func(obj T) []string
	// warn lists what a change of an object is warned of at apply time, legal but risky (old nil on
	// create); nil: nothing.
	warn func(ctx context.Context, reader client.Reader, old, obj T) []string
}

func (k kindOf[T, D, S]) remoteItems() (plugin.Inventory, bool) {
	return k.inventory, k.inventory != nil
}

func (k kindOf[T, D, S]) prune() plugin.Pruner { return k.pruner }

func (k kindOf[T, D, S]) heldKeys(obj client.Object) []string {
	o, ok := obj.(T)
	switch {
	case !ok:
		return nil
	case k.holds != nil:
		return k.holds(o)
	case o.GetRemoteID() != 0:
		return []string{plugin.RemoteItem{ID: o.GetRemoteID()}.HeldKey()}
	}
	return nil
}

func (k kindOf[T, D, S]) Name() string               { return k.name }
func (k kindOf[T, D, S]) New() client.Object         { return k.newObj() }
func (k kindOf[T, D, S]) NewList() client.ObjectList { return k.newList() }
func (k kindOf[T, D, S]) Planned() bool              { return !k.notPlanned }
func (k kindOf[T, D, S]) indexes() []fieldIndex      { return k.ownIndexes }

func (k kindOf[T, D, S]) secrets(obj client.Object) []string {
	if o, ok := obj.(T); ok && k.secretRefs != nil {
		return k.secretRefs(o)
	}
	return nil
}

func (k kindOf[T, D, S]) ownerScope(obj client.Object) string {
	if o, ok := obj.(T); ok && k.scope != nil {
		return k.scope(o)
	}
	return ""
}

func (k kindOf[T, D, S]) controller(sh shared, d kindDeps) error {
	var watches []watch
	if k.watches != nil {
		watches = k.watches(sh.reader)
	}
	return kindController(sh, k.reconciler(d), k.newList(), watches...)
}

func (k kindOf[T, D, S]) export(ctx context.Context, x *plugin.Exporter) error {
	if k.exporter == nil {
		return nil
	}
	return k.exporter(ctx, x)
}

func (k kindOf[T, D, S]) plan(ctx context.Context, mem client.Client, d kindDeps, obj client.Object, plan *plugin.Plan) error {
	o, ok := obj.(T)
	if !ok {
		return fmt.Errorf("a %T is not a %s", obj, k.name)
	}
	if k.secretFields != nil {
		plan.SecretFields = append(plan.SecretFields, k.secretFields(o)...)
	}
	return plugin.PlanOne(ctx, mem, k.reconciler(d), o, plan)
}

// reconciler is the kind's engine, its syncer built from d; kindController fills in the rest.
func (k kindOf[T, D, S]) reconciler(d kindDeps) *engine.Reconciler[T, D, S] {
	r := &engine.Reconciler[T, D, S]{Kind: k.name, New: k.newObj, Syncer: k.syncer(d), Snapshots: d.Snapshots,
		SoleOwner: k.soleOwner(d, &kit.Claims{Reader: d.Reader})}
	if k.scope != nil {
		r.SameScope = k.sameScope(d.Reader)
	}
	return r
}

// soleOwner is the kind's one-owner check as the engine runs it (engine.Reconciler.SoleOwner), with claims
// (nil at admission, which must claim nothing).
func (k kindOf[T, D, S]) soleOwner(d kindDeps, claims *kit.Claims) func(ctx context.Context, obj T, s *engine.Session) error {
	return func(ctx context.Context, obj T, s *engine.Session) error {
		return kit.CheckSoleOwner(ctx, d.Reader, claims, obj, k.newList(), kit.OwnerKey(s.Tenant, k.ownerScope(obj), s.SystemName), k.ownerRemedy)
	}
}

// checkOwner is the kind's one-owner check, by the owner key the owner-key index holds (ownerKeyOf):
// tenant, the row's scope of obj (read after Resolve, which records it: a plan's Product id, an
// application's account id) and system name. Its claims arbitrate, within this manager, objects that
// hold no remote id yet.
func (k kindOf[T, D, S]) checkOwner(d kindDeps) func(ctx context.Context, obj client.Object, s *engine.Session) error {
	check := k.soleOwner(d, &kit.Claims{Reader: d.Reader})
	return func(ctx context.Context, obj client.Object, s *engine.Session) error {
		o, ok := obj.(T)
		if !ok {
			return fmt.Errorf("a %T is not a %s", obj, k.name)
		}
		return check(ctx, o, s)
	}
}

// admit is the kind's admission check: its engine's Admit, with a syncer whose cluster writes are dry runs
// and a one-owner check that claims nothing.
func (k kindOf[T, D, S]) admit(d kindDeps) func(ctx context.Context, old, obj client.Object) ([]string, error) {
	if d.Writer != nil {
		d.Writer = client.NewDryRunClient(d.Writer)
	}
	d.Recorder, d.Dry = nil, true
	r := k.reconciler(d)
	r.SoleOwner = k.soleOwner(d, nil)
	return func(ctx context.Context, old, obj client.Object) ([]string, error) {
		o, ok := obj.(T)
		if !ok {
			return nil, fmt.Errorf("a %T is not a %s", obj, k.name)
		}
		warnings, err := r.Admit(ctx, o)
		if k.warn != nil && err == nil {
			var was T
			if old != nil {
				was, _ = old.(T)
			}
			warnings = append(warnings, k.warn(ctx, d.Reader, was, o)...)
		}
		return warnings, err
	}
}

// sameScope tells whether a claimant's remote object would live where obj's does (engine.Reconciler.SameScope).
func (k kindOf[T, D, S]) sameScope(reader client.Reader) func(ctx context.Context, obj, other client.Object) bool {
	return func(ctx context.Context, obj, other client.Object) bool {
		o, ok := obj.(T)
		c, isT := other.(T)
		if !ok || !isT {
			return false
		}
		if k.claimScope != nil {
			return k.claimScope(ctx, reader, c) == k.scope(o)
		}
		return k.scope(c) == k.scope(o)
	}
}

// backendWarnings are what a Backend's change is warned of at apply time (old nil on create): a metric or
// method removed while a plan limits or prices it.
func backendWarnings(ctx context.Context, reader client.Reader, old, b *v1alpha1.Backend) []string {
	if old == nil {
		return nil
	}
	removed := kit.RemovedNames(old.Spec.Metrics, b.Spec.Metrics, old.Spec.Methods, b.Spec.Methods)
	return applicationplan.StillNaming(ctx, reader, b.Namespace, removed, func(_ string, ref v1alpha1.MetricMethodRef) bool { return ref.Backend == b.Name })
}

// productWarnings are what a Product's change is warned of at apply time (old nil on create): a metric or
// method removed while a plan limits or prices it, and Retain taken while applications use its plans.
func productWarnings(ctx context.Context, reader client.Reader, old, p *v1alpha1.Product) []string {
	var out []string
	if old != nil {
		removed := kit.RemovedNames(old.Spec.Metrics, p.Spec.Metrics, old.Spec.Methods, p.Spec.Methods)
		out = applicationplan.StillNaming(ctx, reader, p.Namespace, removed, func(product string, ref v1alpha1.MetricMethodRef) bool {
			return product == p.Name && ref.Backend == ""
		})
	}
	return append(out, productkind.RetainWarning(old, p, func() int {
		return appkind.OnPlans(ctx, reader, p.Namespace, applicationplan.OfProduct(ctx, reader, p.Namespace, p.Name))
	})...)
}

// kinds is the table of kinds, in the order kinds are created when nothing else decides it (creationOrder).
var kinds = []kindRow{
	kindOf[*v1alpha1.CustomPolicyDefinition, custompolicy.Desired, *custompolicy.Snapshot]{name: "CustomPolicyDefinition", inventory: custompolicy.Inventory, pruner: custompolicy.Prune, exporter: custompolicy.Export, secretRefs: custompolicy.SecretRefs,
		newObj:  func() *v1alpha1.CustomPolicyDefinition { return &v1alpha1.CustomPolicyDefinition{} },
		newList: func() client.ObjectList { return &v1alpha1.CustomPolicyDefinitionList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.CustomPolicyDefinition, custompolicy.Desired, *custompolicy.Snapshot] {
			return &custompolicy.Syncer{Reader: d.Reader, Accounts: d.Accounts}
		}},
	kindOf[*v1alpha1.Backend, children.Spec, *backend.Snapshot]{name: "Backend", warn: backendWarnings, inventory: backend.Inventory, pruner: backend.Prune, exporter: backend.Export, secretRefs: backend.SecretRefs,
		newObj:  func() *v1alpha1.Backend { return &v1alpha1.Backend{} },
		newList: func() client.ObjectList { return &v1alpha1.BackendList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.Backend, children.Spec, *backend.Snapshot] {
			return &backend.Syncer{Reader: d.Reader, Accounts: d.Accounts, Lists: d.Lists}
		}},
	kindOf[*v1alpha1.Product, productkind.Desired, *productkind.Snapshot]{name: "Product", warn: productWarnings, inventory: productkind.Inventory, pruner: productkind.Prune, exporter: productkind.Export, secretRefs: productkind.SecretRefs,
		newObj:  func() *v1alpha1.Product { return &v1alpha1.Product{} },
		newList: func() client.ObjectList { return &v1alpha1.ProductList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.Product, productkind.Desired, *productkind.Snapshot] {
			return &productkind.Syncer{Reader: d.Reader, Accounts: d.Accounts, Suspended: appkind.SuspendedIn(d.Snapshots), Lists: d.Lists,
				Lifecycle: productkind.Lifecycle{Recorder: d.recorder("apimsync-product"), UsagePeriod: d.Opts.UsageReportPeriod, Quiet: d.Dry}}
		}},
	kindOf[*v1alpha1.ApplicationPlan, applicationplan.Desired, *applicationplan.Snapshot]{name: "ApplicationPlan", inventory: applicationplan.Inventory, pruner: applicationplan.Prune, exporter: applicationplan.Export, scope: applicationplan.Scope, claimScope: applicationplan.ClaimScope,
		newObj:  func() *v1alpha1.ApplicationPlan { return &v1alpha1.ApplicationPlan{} },
		newList: func() client.ObjectList { return &v1alpha1.ApplicationPlanList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.ApplicationPlan, applicationplan.Desired, *applicationplan.Snapshot] {
			return &applicationplan.Syncer{Reader: d.Reader, Fates: fatesOf(d.Reader), Accounts: d.Accounts, Peers: d.Snapshots, Lists: d.Lists}
		},
		watches: func(reader client.Reader) []watch {
			return []watch{
				// A plan's limits may name a Backend's metrics.
				{&v1alpha1.Backend{}, kit.Referencing(reader, &v1alpha1.ApplicationPlanList{}, kit.IndexBackendRefs)},
				// A product has one default plan: a plan refused as a second one waits for the first.
				{&v1alpha1.ApplicationPlan{}, applicationplan.DefaultRivals(reader)},
			}
		},
		ownIndexes: []fieldIndex{{&v1alpha1.ApplicationPlan{}, kit.IndexBackendRefs, applicationplan.BackendRefs}}},
	kindOf[*v1alpha1.ServicePlan, serviceplan.Desired, *serviceplan.Snapshot]{name: "ServicePlan", inventory: serviceplan.Inventory, pruner: serviceplan.Prune, exporter: serviceplan.Export,
		scope: serviceplan.Scope, claimScope: serviceplan.ClaimScope,
		newObj:  func() *v1alpha1.ServicePlan { return &v1alpha1.ServicePlan{} },
		newList: func() client.ObjectList { return &v1alpha1.ServicePlanList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.ServicePlan, serviceplan.Desired, *serviceplan.Snapshot] {
			return &serviceplan.Syncer{Reader: d.Reader, Fates: fatesOf(d.Reader), Accounts: d.Accounts, Lists: d.Lists}
		},
		// A product has one default service plan: a plan refused as a second one waits for the first.
		watches: func(reader client.Reader) []watch {
			return []watch{{&v1alpha1.ServicePlan{}, serviceplan.DefaultRivals(reader)}}
		}},
	kindOf[*v1alpha1.FieldDefinition, fielddefinition.Desired, *fielddefinition.Snapshot]{name: "FieldDefinition", inventory: fielddefinition.Inventory, pruner: fielddefinition.Prune, exporter: fielddefinition.Export,
		secretRefs: fielddefinition.SecretRefs,
		newObj:     func() *v1alpha1.FieldDefinition { return &v1alpha1.FieldDefinition{} },
		newList:    func() client.ObjectList { return &v1alpha1.FieldDefinitionList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.FieldDefinition, fielddefinition.Desired, *fielddefinition.Snapshot] {
			return &fielddefinition.Syncer{Accounts: d.Accounts, Lists: d.Lists}
		}},
	kindOf[*v1alpha1.AccountPlan, accountplan.Desired, *accountplan.Snapshot]{name: "AccountPlan", inventory: accountplan.Inventory, pruner: accountplan.Prune, exporter: accountplan.Export, secretRefs: accountplan.SecretRefs,
		newObj:  func() *v1alpha1.AccountPlan { return &v1alpha1.AccountPlan{} },
		newList: func() client.ObjectList { return &v1alpha1.AccountPlanList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.AccountPlan, accountplan.Desired, *accountplan.Snapshot] {
			return &accountplan.Syncer{Reader: d.Reader, Accounts: d.Accounts, Lists: d.Lists}
		},
		// A tenant has one default account plan: a plan refused as a second one waits for the first.
		watches: func(reader client.Reader) []watch {
			return []watch{{&v1alpha1.AccountPlan{}, accountplan.DefaultRivals(reader)}}
		}},
	kindOf[*v1alpha1.DeveloperAccount, developeraccount.Desired, *developeraccount.Snapshot]{name: "DeveloperAccount", inventory: developeraccount.Inventory, pruner: developeraccount.Prune, exporter: developeraccount.Export, secretRefs: developeraccount.SecretRefs,
		newObj:  func() *v1alpha1.DeveloperAccount { return &v1alpha1.DeveloperAccount{} },
		newList: func() client.ObjectList { return &v1alpha1.DeveloperAccountList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.DeveloperAccount, developeraccount.Desired, *developeraccount.Snapshot] {
			return &developeraccount.Syncer{Reader: d.Reader, Accounts: d.Accounts, Lists: d.Lists, FieldsKey: fielddefinition.AccountFieldsKey(d.Reader),
				Sent: &developeraccount.SentPasswords{}}
		},
		// An account waiting for a field of its spec.fields is woken when the field is defined.
		watches: func(reader client.Reader) []watch {
			return []watch{{&v1alpha1.FieldDefinition{}, developeraccount.FieldDefiners(reader)}}
		}},
	kindOf[*v1alpha1.Application, appkind.Desired, *appkind.Snapshot]{name: "Application", inventory: appkind.Inventory, pruner: appkind.Prune, exporter: appkind.Export, secretRefs: appkind.SecretRefs, scope: appkind.Scope, claimScope: appkind.ClaimScope,
		newObj:  func() *v1alpha1.Application { return &v1alpha1.Application{} },
		newList: func() client.ObjectList { return &v1alpha1.ApplicationList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.Application, appkind.Desired, *appkind.Snapshot] {
			return &appkind.Syncer{Reader: d.Reader, Fates: fatesOf(d.Reader), Writer: d.Writer, Accounts: d.Accounts}
		},
		watches: func(reader client.Reader) []watch {
			return []watch{
				// The plan's Product decides the kind of credentials.
				{&v1alpha1.Product{}, appkind.OfProduct(reader)},
				// The account's provider-account Secret is the application's: a fixed token wakes it at once.
				{&corev1.Secret{}, appkind.OfAccountsReading(reader)},
			}
		}},
	kindOf[*v1alpha1.ActiveDoc, activedoc.Desired, *activedoc.Snapshot]{name: "ActiveDoc", inventory: activedoc.Inventory, pruner: activedoc.Prune, exporter: activedoc.Export, secretRefs: activedoc.SecretRefs,
		newObj:  func() *v1alpha1.ActiveDoc { return &v1alpha1.ActiveDoc{} },
		newList: func() client.ObjectList { return &v1alpha1.ActiveDocList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.ActiveDoc, activedoc.Desired, *activedoc.Snapshot] {
			return &activedoc.Syncer{Reader: d.Reader, Fates: fatesOf(d.Reader), Accounts: d.Accounts}
		},
		watches: func(reader client.Reader) []watch {
			return []watch{{&corev1.ConfigMap{}, kit.Referencing(reader, &v1alpha1.ActiveDocList{}, kit.IndexConfigMapRefs)}}
		},
		ownIndexes: []fieldIndex{{&v1alpha1.ActiveDoc{}, kit.IndexConfigMapRefs, func(o client.Object) []string {
			return kit.ConfigMapOf(o.(*v1alpha1.ActiveDoc).Spec.DocumentRef)
		}}},
		secretFields: func(o *v1alpha1.ActiveDoc) []string {
			if ref := o.Spec.DocumentRef; ref != nil && ref.SecretKeyRef != nil {
				return []string{activedoc.BodyField}
			}
			return nil
		}},
	kindOf[*v1alpha1.TenantSettings, tenantsettings.Desired, *tenantsettings.Snapshot]{name: "TenantSettings", exporter: tenantsettings.Export, secretRefs: tenantsettings.SecretRefs,
		inventory: tenantsettings.Inventory, holds: tenantsettings.Holds,
		secretFields: func(*v1alpha1.TenantSettings) []string { return []string{"client_secret"} },
		// The settings have no system name to change: a tenant has one set.
		ownerRemedy: "a tenant has one set of settings, kept by one TenantSettings: remove one of them",
		newObj:      func() *v1alpha1.TenantSettings { return &v1alpha1.TenantSettings{} },
		newList:     func() client.ObjectList { return &v1alpha1.TenantSettingsList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.TenantSettings, tenantsettings.Desired, *tenantsettings.Snapshot] {
			return &tenantsettings.Syncer{Accounts: d.Accounts, Reader: d.Reader, Unmanaged: func(ctx context.Context, c *tsclient.Client, tenant string) ([]plugin.RemoteItem, error) {
				return listUnmanaged(ctx, d.Reader, c, tenant)
			}, Prune: func(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
				return pruneItem(ctx, c, it)
			},
				Unsettled: unsettledIn(d.Reader), PartialView: d.Opts.PartialView || d.Opts.WatchLabelSelector != nil,
				Recorder: d.recorder("apimsync-prune")}
		}},
	kindOf[*v1alpha1.AdminUser, adminuser.Desired, *adminuser.Snapshot]{name: "AdminUser", inventory: adminuser.Inventory, pruner: adminuser.Prune, exporter: adminuser.Export, secretRefs: adminuser.SecretRefs,
		newObj:  func() *v1alpha1.AdminUser { return &v1alpha1.AdminUser{} },
		newList: func() client.ObjectList { return &v1alpha1.AdminUserList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.AdminUser, adminuser.Desired, *adminuser.Snapshot] {
			return &adminuser.Syncer{Reader: d.Reader, Accounts: d.Accounts, Lists: d.Lists}
		},
		secretFields: func(*v1alpha1.AdminUser) []string { return []string{"password"} }},
	kindOf[*v1alpha1.DeveloperPortal, developerportal.Desired, *developerportal.Snapshot]{name: "DeveloperPortal", exporter: developerportal.Export, secretRefs: developerportal.SecretRefs,
		inventory: developerportal.Inventory, holds: developerportal.Holds,
		// The portal has no system name to change: a tenant has one.
		ownerRemedy: "a tenant has one developer portal, kept by one DeveloperPortal: remove one of them",
		newObj:      func() *v1alpha1.DeveloperPortal { return &v1alpha1.DeveloperPortal{} },
		newList:     func() client.ObjectList { return &v1alpha1.DeveloperPortalList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.DeveloperPortal, developerportal.Desired, *developerportal.Snapshot] {
			return &developerportal.Syncer{Reader: d.Reader, Accounts: d.Accounts}
		},
		// Its content is in ConfigMaps: an edit re-syncs.
		watches: func(reader client.Reader) []watch {
			return []watch{{&corev1.ConfigMap{}, kit.Referencing(reader, &v1alpha1.DeveloperPortalList{}, kit.IndexConfigMapRefs)}}
		},
		ownIndexes: []fieldIndex{{&v1alpha1.DeveloperPortal{}, kit.IndexConfigMapRefs, func(o client.Object) []string {
			return developerportal.ConfigMapRefs(o.(*v1alpha1.DeveloperPortal))
		}}}},
	kindOf[*v1alpha1.Tenant, tenant.Desired, *tenant.Snapshot]{name: "Tenant", secretRefs: tenant.SecretRefs, scope: tenant.Scope, notPlanned: true,
		newObj:  func() *v1alpha1.Tenant { return &v1alpha1.Tenant{} },
		newList: func() client.ObjectList { return &v1alpha1.TenantList{} },
		syncer: func(d kindDeps) engine.TypedSyncer[*v1alpha1.Tenant, tenant.Desired, *tenant.Snapshot] {
			return &tenant.Syncer{Reader: d.Reader, Writer: d.Writer, SecretReader: d.APIReader,
				Accounts: d.Accounts, Recorder: d.recorder("apimsync-tenant")}
		}},
}

// referenceGraph is every reference between apimsync's kinds. Deletion order derives from it; nothing
// is ordered per kind pair anywhere else.
var referenceGraph = []reference{
	{From: "Application", To: "DeveloperAccount", Field: "spec.accountRef", Index: kit.IndexAccountRef, Owned: true,
		Names: refField(func(o *v1alpha1.Application) string { return o.Spec.AccountRef }),
		List:  func() client.ObjectList { return &v1alpha1.ApplicationList{} }},
	{From: "Application", To: "ApplicationPlan", Field: "spec.planRef", Index: kit.IndexPlanRef, Owned: true,
		Names: refField(func(o *v1alpha1.Application) string { return o.Spec.PlanRef }),
		List:  func() client.ObjectList { return &v1alpha1.ApplicationList{} }},
	{From: "ServicePlan", To: "Product", Field: "spec.productRef", Index: kit.IndexProductRef, Owned: true,
		Names: refField(func(o *v1alpha1.ServicePlan) string { return o.Spec.ProductRef }),
		List:  func() client.ObjectList { return &v1alpha1.ServicePlanList{} }},
	{From: "DeveloperAccount", To: "ServicePlan", Field: "spec.servicePlanRefs", Index: kit.IndexServicePlanRefs, Blocks: true,
		Names: func(o client.Object) []string {
			if a, ok := o.(*v1alpha1.DeveloperAccount); ok {
				return a.Spec.ServicePlanRefs
			}
			return nil
		},
		List: func() client.ObjectList { return &v1alpha1.DeveloperAccountList{} }},
	{From: "DeveloperAccount", To: "AccountPlan", Field: "spec.accountPlanRef", Index: kit.IndexAccountPlanRef, Blocks: true,
		Names: refField(func(o *v1alpha1.DeveloperAccount) string { return o.Spec.AccountPlanRef }),
		List:  func() client.ObjectList { return &v1alpha1.DeveloperAccountList{} }},
	{From: "ApplicationPlan", To: "Product", Field: "spec.productRef", Index: kit.IndexProductRef, Owned: true,
		Names: refField(func(o *v1alpha1.ApplicationPlan) string { return o.Spec.ProductRef }),
		List:  func() client.ObjectList { return &v1alpha1.ApplicationPlanList{} }},
	{From: "Product", To: "Backend", Field: "spec.backendUsages", Index: kit.IndexBackendRefs, Blocks: true, Names: productkind.BackendRefs,
		List: func() client.ObjectList { return &v1alpha1.ProductList{} }},
	{From: "ActiveDoc", To: "Product", Field: "spec.productRef", Index: kit.IndexProductRef, Along: true,
		Names: refField(func(o *v1alpha1.ActiveDoc) string { return o.Spec.ProductRef }),
		List:  func() client.ObjectList { return &v1alpha1.ActiveDocList{} }},
	// A member's permissions name products; a product deleted just leaves them (porta forgets its id).
	{From: "AdminUser", To: "Product", Field: "spec.permissions.productRefs", Index: kit.IndexProductRef, Names: adminuser.ProductRefs,
		List: func() client.ObjectList { return &v1alpha1.AdminUserList{} }},
	{From: "Product", To: "CustomPolicyDefinition", Field: "spec.policies", Index: kit.IndexCustomPolicyRefs, Blocks: true,
		Names: productkind.PolicyRefs, Key: custompolicy.PolicyKey, KeyIndex: kit.IndexPolicyKey, List: func() client.ObjectList { return &v1alpha1.ProductList{} }},
}

// generatorRow is the row of a kind whose controller generates objects of the table's kinds from a
// document (an OpenAPI: a Backend, a Product, an ActiveDoc): cached, indexed, watched and listed like the
// synced kinds, but never synced to 3scale, planned by diff or exported.
type generatorRow struct {
	name    string
	newObj  func() client.Object
	newList func() client.ObjectList
	// ownIndexes are its field indexes beyond its Secrets'; secretRefs the Secrets an object reads.
	ownIndexes []fieldIndex
	secretRefs func(obj client.Object) []string
	// setup builds its controller.
	setup func(sh shared, d kindDeps) error
}

func (g generatorRow) Name() string                           { return g.name }
func (g generatorRow) New() client.Object                     { return g.newObj() }
func (g generatorRow) NewList() client.ObjectList             { return g.newList() }
func (g generatorRow) indexes() []fieldIndex                  { return g.ownIndexes }
func (g generatorRow) secrets(obj client.Object) []string     { return g.secretRefs(obj) }
func (g generatorRow) controller(sh shared, d kindDeps) error { return g.setup(sh, d) }

// generators are the rows of the kinds that generate the table's kinds rather than sync to 3scale.
var generators = []typeRow{
	generatorRow{name: "OpenAPI", newObj: openapi.New, newList: openapi.NewList, secretRefs: openapi.SecretRefs,
		ownIndexes: []fieldIndex{{openapi.New(), kit.IndexConfigMapRefs, openapi.ConfigMapRefs}},
		setup: func(sh shared, d kindDeps) error {
			r := &openapi.Reconciler{Client: d.Writer, Reader: d.Reader, Recorder: d.recorder("apimsync-openapi"),
				FluxSources: openapi.FluxSources{SourceHost: d.Opts.FluxSourceHost, SourceLocalhost: d.Opts.FluxSourceLocalhost}}
			return r.SetupWithManager(sh.mgr, sh.ctrlOpts())
		}},
}

// rows returns every row: the synced kinds' (in the table's order), then the generators'.
func rows() []typeRow {
	out := make([]typeRow, 0, len(kinds)+len(generators))
	for _, k := range kinds {
		out = append(out, k)
	}
	return append(out, generators...)
}

// rowNamed returns the row of the kind named name, synced or generator, or nil.
func rowNamed(name string) typeRow {
	for _, r := range rows() {
		if r.Name() == name {
			return r
		}
	}
	return nil
}

// rowObjects returns an empty object of every row's kind: what the manager caches and watches.
func rowObjects() []client.Object {
	var out []client.Object
	for _, r := range rows() {
		out = append(out, r.New())
	}
	return out
}

// kindNamed returns the row of the kind named name, or nil.
func kindNamed(name string) kindRow {
	for _, k := range kinds {
		if k.Name() == name {
			return k
		}
	}
	return nil
}

// syncedKinds returns an empty object of every kind apimsync syncs.
func syncedKinds() []client.Object {
	out := make([]client.Object, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.New())
	}
	return out
}

// newKind returns an empty object of a kind of the table.
func newKind(kind string) client.Object {
	if k := kindNamed(kind); k != nil {
		return k.New()
	}
	panic("unknown kind " + kind)
}

// listOfKind returns an empty list of kind's objects, or nil for a kind not in the table.
func listOfKind(kind string) client.ObjectList {
	if k := kindNamed(kind); k != nil {
		return k.NewList()
	}
	return nil
}

// ObjectLists returns an empty list of every kind of apimsync's, the synced ones in creation order, then
// the generators' (kubectl apimsync status lists them all).
func ObjectLists() []client.ObjectList {
	order, err := creationOrder(referenceGraph)
	if err != nil {
		// The graph is the code's own (refgraph.go), checked by TestCreationOrderFollowsTheGraph: a cycle
		// is a bug to stop on, not an order to guess.
		panic(err)
	}
	out := make([]client.ObjectList, 0, len(order)+len(generators))
	for _, name := range order {
		out = append(out, listOfKind(name))
	}
	for _, g := range generators {
		out = append(out, g.NewList())
	}
	return out
}

// creationOrder returns the kinds of the table in the order their objects are made when everything is
// applied at once: every kind after the kinds it references (a topological order of the graph), ties in
// the table's order. A cycle is an error, as for deletionOrder.
func creationOrder(graph []reference) ([]string, error) {
	refs := map[string][]string{} // kind -> kinds it references
	for _, r := range graph {
		if !slices.Contains(refs[r.From], r.To) {
			refs[r.From] = append(refs[r.From], r.To)
		}
	}
	var order []string
	placed := map[string]bool{}
	for len(order) < len(kinds) {
		next := ""
		for _, k := range kinds {
			if name := k.Name(); !placed[name] && !slices.ContainsFunc(refs[name], func(to string) bool { return !placed[to] }) {
				next = name
				break
			}
		}
		if next == "" {
			if _, err := deletionOrder(graph); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("no creation order: the kinds placed are %v", order)
		}
		placed[next] = true
		order = append(order, next)
	}
	return order, nil
}
