// Package plugin is the machinery of what kubectl apimsync runs against a tenant or a cluster, knowing no
// kind: export's walk (Exporter), which the kinds' Export functions fill in the order the table of kinds
// derives, and diff's plans (Plan, PlanOne, Memory), which the kinds' syncers make.
package plugin

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/kit/children"
)

// Export reads a tenant and writes it as apimsync resources that adopt what is there with no write: the
// inverse of the syncers' mappings, each kind's beside its syncer (Export in the kind's folder), so that
// both read 3scale the same way. What the kinds cannot model is reported, never dropped silently.

// ExportOptions select what is exported.
type ExportOptions struct {
	// Products and Backends, by system name, restrict the export (with the backends the products use);
	// Accounts (organization names) the accounts, with their applications. All empty: everything.
	Products, Backends, Accounts []string
	// Portal adds the developer portal (a DeveloperPortal, its content as files); OnlyPortal exports
	// nothing else.
	Portal, OnlyPortal bool
	// CredentialsToSecrets makes users' passwords and applications' credentials references to Secrets
	// whose templates (keys, no values) are in Exported.Templates, for the user to fill in: each user gets
	// passwordRef (the Secret becomes the password: adopting sets it, one write per user) and each
	// application credentialsRef (a user_key or app_keys filled in replace 3scale's, or match them: no
	// write; an app_id must be 3scale's, it cannot change). By
	// default users get no passwordRef (passwords stay as they are) and applications no credentialsRef
	// (each keeps 3scale's credentials and writes them to its own Secret). A policy whose configuration
	// holds what looks like a credential reads it from a Secret (configurationRef, a template too) instead
	// of having it inline, flagged in Left, as by default.
	CredentialsToSecrets bool
}

// Exported is a tenant as apimsync resources, by the file they belong in ("backends", "product-<name>",
// "custom-policies"), and what could not be exported.
type Exported struct {
	Files map[string][]client.Object
	// Templates are Secrets to fill in (values 3scale does not give back, or that must not be written):
	// names only, their keys empty.
	Templates []*corev1.Secret
	// Left lists what the kinds cannot model, one line each, with the object it is in.
	Left []string
	// Tree are files written beside the objects, by path relative to the export's directory (the
	// developer portal's content), and Generators the ConfigMaps kustomize makes of them.
	Tree       map[string][]byte
	Generators []Generator
}

// Generator is a ConfigMap kustomize's configMapGenerator makes of files of Exported.Tree (its keys:
// their base names).
type Generator struct {
	Name  string
	Files []string
}

// Exporter is one export's walk over a tenant. The kinds' Export functions run in creation order, each
// adding its objects and recording what the kinds after it name: a Product's backend usages name the
// Backends exported before it, a plan's limits their metrics, an Application its account and plan.
type Exporter struct {
	Client  *tsclient.Client
	Options ExportOptions
	Out     *Exported

	// BackendNames are the exported Backends' object names by backend id.
	BackendNames map[int64]string
	// MetricRefs are the references of the exported products' and backends' metrics and methods, by id.
	MetricRefs map[int64]v1alpha1.MetricMethodRef
	// Products are the exported products, in the order they were exported.
	Products []ExportedProduct
	// PlanNames are the exported ApplicationPlans' object names by plan id.
	PlanNames map[int64]string
	// AccountPlanNames and ServicePlanNames are the exported AccountPlans' and ServicePlans' object names
	// by plan id.
	AccountPlanNames, ServicePlanNames map[int64]string
	// Accounts are the exported developer accounts, in the order they were exported.
	Accounts []ExportedAccount

	products []tsclient.Product // the tenant's products, once read
	usages   map[int64][]tsclient.BackendUsage
}

// ExportedProduct is a product that was exported: its object's name, the file it is in (its plans and
// ActiveDocs go there too) and its features' system names by id.
type ExportedProduct struct {
	tsclient.Product
	Name, File string
	Features   map[int64]string
}

// EnabledFeatures are the system names of the product's features a plan of kind enables, sorted: one
// list call, none for a product with no feature (no plan can enable one).
func (p ExportedProduct) EnabledFeatures(ctx context.Context, c *tsclient.Client, kind tsclient.PlanKind, planID int64) ([]string, error) {
	if len(p.Features) == 0 {
		return nil, nil
	}
	enabled, err := c.ListPlanFeatures(ctx, kind, planID)
	if err != nil {
		return nil, fmt.Errorf("cannot list the features of plan %d of product %q: %w", planID, p.SystemName, err)
	}
	var names []string
	for _, f := range enabled {
		names = append(names, p.Features[f.ID])
	}
	slices.Sort(names)
	return names, nil
}

// ExportedAccount is a developer account that was exported, with its object's name.
type ExportedAccount struct {
	tsclient.Account
	Name string
}

// NewExporter starts an export of the tenant c talks to.
func NewExporter(c *tsclient.Client, opts ExportOptions) *Exporter {
	return &Exporter{Client: c, Options: opts, Out: &Exported{Files: map[string][]client.Object{}, Tree: map[string][]byte{}},
		BackendNames: map[int64]string{}, MetricRefs: map[int64]v1alpha1.MetricMethodRef{}, PlanNames: map[int64]string{},
		AccountPlanNames: map[int64]string{}, ServicePlanNames: map[int64]string{}, usages: map[int64][]tsclient.BackendUsage{}}
}

// Add adds obj to file.
func (x *Exporter) Add(file string, obj client.Object) {
	x.Out.Files[file] = append(x.Out.Files[file], obj)
}

// Leave says what could not be exported, one line (fmt.Sprintf of format and args).
func (x *Exporter) Leave(format string, args ...any) {
	x.Out.Left = append(x.Out.Left, fmt.Sprintf(format, args...))
}

// Everything tells whether neither products nor backends are filtered: the whole tenant's API side is
// exported (accounts may still be).
func (x *Exporter) Everything() bool {
	return len(x.Options.Products) == 0 && len(x.Options.Backends) == 0
}

// WholeTenant tells whether nothing at all is filtered out (no product, backend or account filter, not
// the portal alone): what belongs to the tenant itself (its settings, its users) is exported only then.
func (x *Exporter) WholeTenant() bool {
	return x.Everything() && len(x.Options.Accounts) == 0 && !x.Options.OnlyPortal
}

// ListProducts returns the tenant's products, read once per export.
func (x *Exporter) ListProducts(ctx context.Context) ([]tsclient.Product, error) {
	if x.products == nil {
		products, err := x.Client.ListProducts(ctx)
		if err != nil {
			return nil, fmt.Errorf("cannot list the products: %w", err)
		}
		x.products = append([]tsclient.Product{}, products...)
	}
	return x.products, nil
}

// ProductSelected tells whether the options select product p: no filter on products or backends, or p
// named by --product.
func (x *Exporter) ProductSelected(p tsclient.Product) bool {
	return x.Everything() || slices.Contains(x.Options.Products, p.SystemName)
}

// EachSelectedProduct calls f with each product the options select and its backend usages, in the
// tenant's order; both are read once per export.
func (x *Exporter) EachSelectedProduct(ctx context.Context, f func(p tsclient.Product, usages []tsclient.BackendUsage) error) error {
	products, err := x.ListProducts(ctx)
	if err != nil {
		return err
	}
	for _, p := range products {
		if !x.ProductSelected(p) {
			continue
		}
		usages, err := x.backendUsages(ctx, p)
		if err != nil {
			return err
		}
		if err := f(p, usages); err != nil {
			return err
		}
	}
	return nil
}

// backendUsages returns the backend usages of product p, read once per export.
func (x *Exporter) backendUsages(ctx context.Context, p tsclient.Product) ([]tsclient.BackendUsage, error) {
	if u, ok := x.usages[p.ID]; ok {
		return u, nil
	}
	u, err := x.Client.ListBackendUsages(ctx, p.ID)
	if err != nil {
		return nil, fmt.Errorf("cannot list the backend usages of product %q: %w", p.SystemName, err)
	}
	x.usages[p.ID] = u
	return u, nil
}

// RecordRefs records the metric references of kids' metrics and methods (backend: "" for a product's).
func (x *Exporter) RecordRefs(kids *children.Snapshot, backend string) {
	for _, set := range []map[string]tsclient.Metric{kids.Metrics, kids.Methods} {
		for name, m := range set {
			x.MetricRefs[m.ID] = v1alpha1.MetricMethodRef{SystemName: name, Backend: backend}
		}
	}
}

// SpecOf is children.SpecOf, what it leaves out said in Left.
func (x *Exporter) SpecOf(kids *children.Snapshot, what string) children.Spec {
	spec, left := children.SpecOf(kids, what)
	x.Out.Left = append(x.Out.Left, left...)
	return spec
}

// Template adds a Secret to fill in, with the keys given and no value; a name taken by another template
// (two policies of one name in a chain) gets a number.
func (x *Exporter) Template(name string, keys []string) *corev1.Secret {
	name = kit.CutString(name, 240)
	for i, base := 2, name; slices.ContainsFunc(x.Out.Templates, func(s *corev1.Secret) bool { return s.Name == name }); i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{}}
	for _, k := range keys {
		secret.StringData[k] = ""
	}
	x.Out.Templates = append(x.Out.Templates, secret)
	return secret
}

// notDNS is what a DNS label cannot hold.
var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// ObjectName makes a Kubernetes object name of a 3scale system name (lowercase, '-' for what a DNS label
// cannot hold).
func ObjectName(systemName string) string {
	name := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(systemName), "-"), "-")
	if name == "" {
		name = "x"
	}
	return kit.CutString(name, 63)
}

// TypeMeta is the type of an apimsync object of kind.
func TypeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: kind}
}

// Observe sets spec.management to Observe on every object of e that has it: applied, each finds its 3scale
// object and tells in status.observation what a full sync would write, writing nothing (export and
// convert --observe: look first, then switch each to Full).
func Observe(e *Exported) {
	for _, objs := range e.Files {
		for _, o := range objs {
			v := reflect.ValueOf(o)
			if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
				continue
			}
			spec := v.Elem().FieldByName("Spec")
			if !spec.IsValid() {
				continue
			}
			if m := spec.FieldByName("Management"); m.IsValid() && m.CanSet() && m.Kind() == reflect.String {
				m.SetString(string(v1alpha1.ManagementObserve))
			}
		}
	}
}
