// Package bench is apimsync's benchmark (`make bench`, cmd/bench): it generates a seeded workload of
// Backends, Products, ApplicationPlans, ServicePlans and AccountPlans over several namespaces, each its
// own simulator tenant; runs
// the real manager and simulator binaries against a real control plane; and measures calls, time and
// memory against the bounds the workload allows (minimal calls, time bound).
package bench

import (
	"fmt"
	"math/rand"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// Workload is what the bench applies: one Namespace per tenant.
type Workload struct {
	Namespaces []Namespace
}

// Namespace is one namespace's objects, synced to its own tenant.
type Namespace struct {
	Name     string
	Backends []*v1alpha1.Backend
	Products []*v1alpha1.Product
	Plans    []*v1alpha1.ApplicationPlan
	// ServicePlans belong to the namespace's first products; AccountPlans to its tenant.
	ServicePlans []*v1alpha1.ServicePlan
	AccountPlans []*v1alpha1.AccountPlan
	// Settings is the tenant's TenantSettings (nil when the share is too small).
	Settings *v1alpha1.TenantSettings
	// AdminUsers are members of the tenant's admin portal.
	AdminUsers []*v1alpha1.AdminUser
}

// Objects returns the namespace's objects in dependency order (backends, products, application plans,
// service plans, account plans); the bench applies them all at once anyway.
func (n Namespace) Objects() []client.Object {
	out := make([]client.Object, 0, n.Size())
	for _, b := range n.Backends {
		out = append(out, b)
	}
	for _, p := range n.Products {
		out = append(out, p)
	}
	for _, p := range n.Plans {
		out = append(out, p)
	}
	for _, p := range n.ServicePlans {
		out = append(out, p)
	}
	for _, p := range n.AccountPlans {
		out = append(out, p)
	}
	if n.Settings != nil {
		out = append(out, n.Settings)
	}
	for _, u := range n.AdminUsers {
		out = append(out, u)
	}
	return out
}

// Size is the number of objects of the namespace, every kind.
func (n Namespace) Size() int {
	size := len(n.Backends) + len(n.Products) + len(n.Plans) + len(n.ServicePlans) + len(n.AccountPlans) + len(n.AdminUsers)
	if n.Settings != nil {
		size++
	}
	return size
}

// Size is the number of objects of the workload: the objects Generate was asked for.
func (w Workload) Size() int {
	n := 0
	for _, ns := range w.Namespaces {
		n += ns.Size()
	}
	return n
}

// Generate makes a workload of objects objects over tenants namespaces, reproducibly for a seed. Each
// namespace gets a share of the objects in the mix of a real catalogue: a fifth backends, a fifth
// products, and the rest plans: 2 ServicePlans (on the first two products), 2 AccountPlans, one
// TenantSettings, 2 AdminUsers (members: one seeing the first product's partners and plans, one the
// monitoring of every product), and application plans (about three per product). The service and
// account plans, the settings and the users are counted inside objects, taken from the application
// plans' share, so that objects stays the workload's total (Size).
// Each backend has 2 metrics, 1 method and 3 mapping rules; each product uses 1 or 2 of the namespace's
// backends and has 2 metrics, 3 mapping rules, a policy and self-managed APIcast URLs; each application
// plan has 2 limits and 1 pricing rule; the first service and account plan are published with approval
// required, the second hidden with approval not managed.
func Generate(seed int64, objects, tenants int) Workload {
	tenants = max(1, min(tenants, objects))
	rnd := rand.New(rand.NewSource(seed))
	w := Workload{}
	for i := range tenants {
		share := objects / tenants
		if i < objects%tenants {
			share++
		}
		ns := generateNamespace(rnd, fmt.Sprintf("bench-%03d", i), share)
		for _, o := range ns.Objects() {
			o.SetLabels(map[string]string{tenthLabel: tenthOf(i, tenants)})
		}
		w.Namespaces = append(w.Namespaces, ns)
	}
	return w
}

// tenthLabel labels every object of the workload with the tenth of the namespaces its own is in
// (tenthOf), so that a manager can be given a share of them by label selector (the memory phase).
const tenthLabel = "bench.apimsync.io/tenth"

// tenthOf is the tenth of n namespaces the i-th is in, "0" to "9".
func tenthOf(i, n int) string { return strconv.Itoa(i * 10 / max(n, 1)) }

func generateNamespace(rnd *rand.Rand, name string, n int) Namespace {
	ns := Namespace{Name: name}
	backends := max(1, n/5)
	products := max(0, min(backends, n-backends))
	rest := n - backends - products
	// Service and account plans come out of the application plans' share, leaving at least one
	// application plan (the edits phase edits one).
	room := max(0, rest-1)
	servicePlans := 0
	if products > 0 {
		servicePlans = min(planKinds, room)
	}
	accountPlans := min(planKinds, room-servicePlans)
	settings := min(1, room-servicePlans-accountPlans)
	users := 0
	if products > 0 {
		users = min(adminUsers, room-servicePlans-accountPlans-settings)
	}
	plans := rest - servicePlans - accountPlans - settings - users
	for b := range backends {
		ns.Backends = append(ns.Backends, backend(name, b))
	}
	for p := range products {
		used := []int{p % backends}
		if backends > 1 && rnd.Intn(2) == 0 {
			used = append(used, (p+1+rnd.Intn(backends-1))%backends)
		}
		ns.Products = append(ns.Products, product(name, p, used))
	}
	for k := range plans {
		if products == 0 {
			break
		}
		p := k % products
		ns.Plans = append(ns.Plans, plan(name, k, ns.Products[p], rnd))
	}
	for k := range servicePlans {
		ns.ServicePlans = append(ns.ServicePlans, servicePlan(name, k, ns.Products[k%products]))
	}
	for k := range accountPlans {
		ns.AccountPlans = append(ns.AccountPlans, accountPlan(name, k))
	}
	if settings > 0 {
		ns.Settings = tenantSettings(name)
	}
	for k := range users {
		ns.AdminUsers = append(ns.AdminUsers, adminUser(name, k, ns.Products[0]))
	}
	return ns
}

// adminUsers is how many AdminUsers each namespace has (fewer only when its share is under 10 objects).
const adminUsers = 2

// adminUser is the k-th member of the namespace's tenant: the first sees the partners and plans of
// product p, the others the monitoring of every product. No password: they sign in through SSO.
func adminUser(ns string, k int, p *v1alpha1.Product) *v1alpha1.AdminUser {
	name := fmt.Sprintf("member-%04d", k)
	perms := &v1alpha1.AdminPermissions{Sections: []v1alpha1.AdminSection{"monitoring"}}
	if k == 0 {
		perms = &v1alpha1.AdminPermissions{Sections: []v1alpha1.AdminSection{"partners", "plans"}, ProductRefs: &[]string{p.Name}}
	}
	return &v1alpha1.AdminUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.AdminUserSpec{Username: name, Email: name + "@" + ns + ".example.com", Role: v1alpha1.AdminRoleMember, Permissions: perms}}
}

// tenantSettings is a namespace's TenantSettings: two of its provider account's emails and a webhook.
func tenantSettings(ns string) *v1alpha1.TenantSettings {
	from, support := "no-reply@"+ns+".example.com", "support@"+ns+".example.com"
	return &v1alpha1.TenantSettings{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
		Spec: v1alpha1.TenantSettingsSpec{Account: &v1alpha1.ProviderDetails{FromEmail: &from, SupportEmail: &support},
			Webhooks: &v1alpha1.WebhooksSpec{URL: "https://hooks." + ns + ".example.com/3scale", Events: []v1alpha1.WebhookEvent{"account_created", "application_created"}}}}
}

// planKinds is how many ServicePlans, and how many AccountPlans, each namespace has (fewer only when its
// share is under 7 objects).
const planKinds = 2

// planTerms are the k-th service or account plan's state and approval: the first published with approval
// required, the others hidden (the default) with approval not managed, so that the plans differ.
func planTerms(k int) (published, approvalRequired *bool) {
	if k == 0 {
		published, approvalRequired := true, true
		return &published, &approvalRequired
	}
	return nil, nil
}

// servicePlan is the k-th service plan of the namespace, on product p. Its name is not "Default", the
// plan porta makes with every product: the bench's plans are created, not adopted.
func servicePlan(ns string, k int, p *v1alpha1.Product) *v1alpha1.ServicePlan {
	published, approval := planTerms(k)
	return &v1alpha1.ServicePlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("service-plan-%04d", k)},
		Spec: v1alpha1.ServicePlanSpec{ProductRef: p.Name, Name: fmt.Sprintf("Service plan %d", k),
			Published: published, ApprovalRequired: approval},
	}
}

// accountPlan is the k-th account plan of the namespace, on its tenant (the namespace's provider-account
// Secret, as the products). Its name is not "Default", the account plan porta's signup gives a tenant.
func accountPlan(ns string, k int) *v1alpha1.AccountPlan {
	published, approval := planTerms(k)
	return &v1alpha1.AccountPlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("account-plan-%04d", k)},
		Spec:       v1alpha1.AccountPlanSpec{Name: fmt.Sprintf("Account plan %d", k), Published: published, ApprovalRequired: approval},
	}
}

func backendName(b int) string { return fmt.Sprintf("backend-%04d", b) }

func backend(ns string, b int) *v1alpha1.Backend {
	return &v1alpha1.Backend{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: backendName(b)},
		Spec: v1alpha1.BackendSpec{
			Name:           fmt.Sprintf("Backend %d", b),
			PrivateBaseURL: fmt.Sprintf("https://backend-%d.internal.example.com", b),
			Metrics: map[string]v1alpha1.MetricSpec{
				"bytes_out": {FriendlyName: "Bytes out", Unit: "byte"},
				"items":     {FriendlyName: "Items", Unit: "item"},
			},
			Methods: map[string]v1alpha1.MethodSpec{"list": {FriendlyName: "List"}},
			MappingRules: []v1alpha1.MappingRuleSpec{
				{HTTPMethod: "GET", Pattern: "/items$", MetricMethodRef: "list", Increment: 1},
				{HTTPMethod: "GET", Pattern: "/items/{id}$", MetricMethodRef: "items", Increment: 1},
				{HTTPMethod: "GET", Pattern: "/download", MetricMethodRef: "bytes_out", Increment: 5},
			},
		},
	}
}

func product(ns string, p int, backends []int) *v1alpha1.Product {
	usages := map[string]v1alpha1.BackendUsageSpec{}
	for i, b := range backends {
		path := "/"
		if i > 0 {
			path = "/v" + fmt.Sprint(i+1)
		}
		usages[backendName(b)] = v1alpha1.BackendUsageSpec{Path: path}
	}
	return &v1alpha1.Product{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("product-%04d", p)},
		Spec: v1alpha1.ProductSpec{
			Name: fmt.Sprintf("Product %d", p),
			Deployment: &v1alpha1.DeploymentSpec{ApicastSelfManaged: &v1alpha1.ApicastSelfManagedSpec{
				ProductionPublicBaseURL: fmt.Sprintf("https://api-%d.example.com", p),
				StagingPublicBaseURL:    fmt.Sprintf("https://staging-%d.example.com", p)}},
			Metrics: map[string]v1alpha1.MetricSpec{
				"searches": {FriendlyName: "Searches", Unit: "search"},
				"exports":  {FriendlyName: "Exports", Unit: "export"},
			},
			MappingRules: []v1alpha1.MappingRuleSpec{
				{HTTPMethod: "GET", Pattern: "/search", MetricMethodRef: "searches", Increment: 1},
				{HTTPMethod: "POST", Pattern: "/export", MetricMethodRef: "exports", Increment: 1},
				{HTTPMethod: "GET", Pattern: "/", MetricMethodRef: "hits", Increment: 1, Last: true},
			},
			Policies: []v1alpha1.PolicySpec{{Name: "cors", Version: "builtin", Enabled: true,
				Configuration: &apiextensionsv1.JSON{Raw: []byte(`{"allow_origin":"*"}`)}}},
			BackendUsages: usages,
		},
	}
}

func plan(ns string, k int, p *v1alpha1.Product, rnd *rand.Rand) *v1alpha1.ApplicationPlan {
	published := rnd.Intn(3) > 0
	var backend string
	for b := range p.Spec.BackendUsages {
		if backend == "" || b < backend {
			backend = b
		}
	}
	return &v1alpha1.ApplicationPlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("plan-%04d", k)},
		Spec: v1alpha1.ApplicationPlanSpec{
			ProductRef: p.Name, Name: fmt.Sprintf("Plan %d", k), Published: &published,
			Limits: []v1alpha1.LimitSpec{
				{Period: "minute", Value: int64(10 + rnd.Intn(990)), MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "searches"}},
				{Period: "day", Value: int64(1000 + rnd.Intn(9000)), MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "hits", Backend: backend}},
			},
			PricingRules: []v1alpha1.PricingRuleSpec{
				{From: 1, To: 1000, PricePerUnit: fmt.Sprintf("0.%02d", 1+rnd.Intn(98)), MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "list", Backend: backend}},
			},
		},
	}
}
