package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
)

// Unmanaged is the diff --unmanaged phase: after the cold sync, a few objects made by hand in each
// tenant, then `kubectl apimsync diff --unmanaged`'s listing of what no object holds, per tenant.
type Unmanaged struct {
	// HandMade are the objects the bench made by hand; Listed what the listing found, of which PortaOwn
	// are porta's own (each product's "Default" service plan, the tenant's "Default" account plan, the
	// applications' built-in description field, the tenant's first admin), which no object of the
	// workload holds.
	HandMade int `json:"handMade"`
	Listed   int `json:"listed"`
	PortaOwn int `json:"portaOwn"`
	// Missed are hand-made objects the listing left out, Extra listed objects neither hand-made nor
	// porta's own (an object of the workload reported as unmanaged): both 0 when it is exact.
	Missed int `json:"missed"`
	Extra  int `json:"extra"`
	// Calls are the listing's requests, all tenants.
	Calls int64 `json:"calls"`
}

// portaOwn tells whether a listed object is one porta makes with a tenant or a product: the default
// plans, the built-in description field, the admin the tenant was signed up with ("admin"), and the
// developer portal's seeded content (the bench makes no DeveloperPortal: every portal item but the
// hand-made page is porta's).
func portaOwn(kind, name string) bool {
	return (kind == "ServicePlan" || kind == "AccountPlan") && name == "Default" || kind == "FieldDefinition" && name == "Cinstance/description" ||
		kind == "AdminUser" && name == "admin" || kind == "DeveloperPortal" && name != handMadePage
}

// handMadePage is the path of the portal page the bench makes by hand.
const handMadePage = "/hand-made"

// unmanaged makes a backend, an account plan and a developer account by hand in each tenant, lists what
// no object holds as diff --unmanaged does, counts it against what was made, then deletes what it made.
func (b *bench) unmanaged(ctx context.Context) error {
	u := &b.res.Unmanaged
	var mu sync.Mutex
	// Tenants one after another would take minutes at 500 tenants (25 calls each): 16 at a time, as the
	// apply goes; each tenant's calls are counted on its own client.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, ns := range b.work.Namespaces {
		g.Go(func() error {
			one, err := b.unmanagedOf(gctx, ns)
			mu.Lock()
			defer mu.Unlock()
			u.HandMade, u.Missed, u.Calls = u.HandMade+one.HandMade, u.Missed+one.Missed, u.Calls+one.Calls
			u.Listed, u.PortaOwn, u.Extra = u.Listed+one.Listed, u.PortaOwn+one.PortaOwn, u.Extra+one.Extra
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	b.logf("unmanaged: %d listed (%d hand-made of %d, %d porta's own, %d other) in %d calls", u.Listed, u.HandMade-u.Missed, u.HandMade, u.PortaOwn, u.Extra, u.Calls)
	return nil
}

// unmanagedOf is the unmanaged phase in one namespace's tenant.
func (b *bench) unmanagedOf(ctx context.Context, ns Namespace) (Unmanaged, error) {
	var u Unmanaged
	adminURL := b.simURL + "/t/" + ns.Name
	tenant, err := tsclient.NormalizeTenant(adminURL)
	if err != nil {
		return u, err
	}
	var calls atomic.Int64
	c, err := tsclient.New(tsclient.Config{AdminURL: adminURL, Token: b.tokens[ns.Name], Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true},
		Observer: func(tsclient.CallInfo) { calls.Add(1) }})
	if err != nil {
		return u, err
	}
	defer c.CloseIdleConnections()
	made, undo, err := handMade(ctx, c)
	if err != nil {
		return u, err
	}
	u.HandMade += len(made)
	calls.Store(0)
	// The bench's tenants are one per namespace: the cluster side is listed in that namespace only,
	// or 500 tenants would list every object 500 times (minutes, and nothing the listing's calls show).
	items, err := controllers.UnmanagedObjects(ctx, namespacedReader{b.k8s, ns.Name}, c, tenant)
	if err != nil {
		return u, err
	}
	u.Calls += calls.Load()
	u.Listed += len(items)
	found := map[string]bool{}
	for _, it := range items {
		key := fmt.Sprintf("%s/%d", it.Kind, it.ID)
		switch {
		case made[key]:
			found[key] = true
		case portaOwn(it.Kind, it.SystemName):
			u.PortaOwn++
		default:
			u.Extra++
			b.logf("unmanaged: %s %d %q of %s is neither hand-made nor porta's own", it.Kind, it.ID, it.SystemName, ns.Name)
		}
	}
	u.Missed += len(made) - len(found)
	return u, undo()
}

// handMade makes a backend, an account plan, a developer account, a member of the admin portal and a
// portal page in a tenant, as a person would in the admin portal; it answers them as "Kind/id" and how
// to delete them.
func handMade(ctx context.Context, c *tsclient.Client) (map[string]bool, func() error, error) {
	backend, err := c.CreateBackend(ctx, tsclient.BackendParams{Name: "Hand made", SystemName: "hand_made", PrivateEndpoint: "https://hand-made.internal"})
	if err != nil {
		return nil, nil, err
	}
	plan, err := c.CreateAccountPlan(ctx, tsclient.AccountPlanParams{Name: "Hand made"})
	if err != nil {
		return nil, nil, err
	}
	account, err := c.Signup(ctx, tsclient.SignupParams{OrgName: "Hand Made Inc", Username: "handmade", Email: "handmade@example.com", Password: "a-long-enough-password"})
	if err != nil {
		return nil, nil, err
	}
	member, err := c.CreateAdminUser(ctx, tsclient.UserParams{Username: "hand-made", Email: "hand-made@example.com"})
	if err != nil {
		return nil, nil, err
	}
	page, err := c.CreateCMSTemplate(ctx, tsclient.CMSTemplateParams{Type: tsclient.TemplatePage, Title: ptr.To("Hand made"), Path: ptr.To(handMadePage),
		Draft: ptr.To("<h1>Hand made</h1>")})
	if err != nil {
		return nil, nil, err
	}
	made := map[string]bool{fmt.Sprintf("Backend/%d", backend.ID): true, fmt.Sprintf("AccountPlan/%d", plan.ID): true, fmt.Sprintf("DeveloperAccount/%d", account.ID): true,
		fmt.Sprintf("AdminUser/%d", member.ID): true, fmt.Sprintf("DeveloperPortal/%d", page.ID): true}
	undo := func() error {
		if err := c.DeleteCMSTemplate(ctx, page.ID); err != nil {
			return err
		}
		if err := c.DeleteAdminUser(ctx, member.ID); err != nil {
			return err
		}
		if err := c.DeleteAccount(ctx, account.ID); err != nil {
			return err
		}
		if err := c.DeleteAccountPlan(ctx, plan.ID); err != nil {
			return err
		}
		return c.DeleteBackend(ctx, backend.ID)
	}
	return made, undo, nil
}

// namespacedReader is a Reader whose lists are of one namespace.
type namespacedReader struct {
	client.Reader
	namespace string
}

func (r namespacedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.Reader.List(ctx, list, append(opts, client.InNamespace(r.namespace))...)
}
