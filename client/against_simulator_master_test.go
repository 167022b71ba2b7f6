package client

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apimsync/apimsync/test/simulator"
)

// simMasterToken is the master token of the master fixture's simulator.
const simMasterToken = "tok-master"

// masterFixture is a simulator with a master account behind a real HTTP listener, whose new tenants'
// admin_domain is the simulator itself (addr/t/<slug>, plain HTTP), and a client of master's admin host
// (addr/t/master) that records the endpoints it calls.
type masterFixture struct {
	sim    *simulator.Simulator
	addr   string
	master *Client
	mu     sync.Mutex
	called map[string]bool // "METHOD endpoint template"
}

func newMasterFixture(t *testing.T) *masterFixture {
	t.Helper()
	// Listen first, so that the simulator knows the address it gives the tenants' admin domains.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &masterFixture{addr: l.Addr().String(), called: map[string]bool{}}
	f.sim = simulator.New(simulator.Options{Tenants: map[string]string{simTenant: simToken}, MasterToken: simMasterToken, PlainHTTP: true,
		AdminDomain: func(slug string) string { return f.addr + "/t/" + slug }})
	srv := httptest.NewUnstartedServer(f.sim)
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	f.master = f.client(t, "/t/master", simMasterToken)
	return f
}

// client returns a client of the simulator's path prefix (a tenant's admin host) with token; its calls
// are recorded.
func (f *masterFixture) client(t *testing.T, prefix, token string) *Client {
	t.Helper()
	c, err := New(Config{AdminURL: "http://" + f.addr + prefix, Token: token, QPS: 1e6, Burst: 1e6, ReadRetries: -1,
		Observer: func(ci CallInfo) {
			f.mu.Lock()
			f.called[ci.Method+" "+ci.Endpoint] = true
			f.mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tenantClient returns a client of a new tenant: its admin URL and token, as a controller keeps them.
func (f *masterFixture) tenantClient(t *testing.T, s *TenantSignup) *Client {
	t.Helper()
	c, err := New(Config{AdminURL: s.Tenant.AdminBaseURL, Token: s.AccessToken, QPS: 1e6, Burst: 1e6, ReadRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMasterFlowAgainstSimulator runs the life of a tenant with every master call against the
// simulator over HTTP: signup, the returned token on the new tenant's admin API, its admin activated,
// a second signup of the same org name, deletion scheduled and resumed, a signup whose answer was lost
// found again.
func TestMasterFlowAgainstSimulator(t *testing.T) {
	f := newMasterFixture(t)
	c, ctx := f.master, context.Background()
	params := TenantParams{OrgName: "Globex", Username: "admin", Email: "admin@globex.example", Password: "a-strong-passw0rd-1"}

	signup := outcome(c.SignupTenant(ctx, params)).must(t, "signup")
	checkSame(t, "new tenant", Tenant{ID: signup.Tenant.ID, OrgName: "Globex", State: "approved", AdminDomain: f.addr + "/t/globex",
		Domain: "globex.simulator.invalid", AdminBaseURL: "http://" + f.addr + "/t/globex"}, signup.Tenant)
	if len(signup.AccessToken) != 64 || signup.AdminUserID == 0 {
		t.Fatalf("signup %v: want a token of 64 hex digits and the admin's id", signup)
	}

	// The token works on the new tenant's admin API, where porta's first service waits.
	tc := f.tenantClient(t, signup)
	products := outcome(tc.ListProducts(ctx)).must(t, "the new tenant's products")
	checkSame(t, "the new tenant's products", []string{"api"}, ids(products, func(p Product) string { return p.SystemName }))
	outcome(tc.CreateBackend(ctx, BackendParams{Name: "Stock", SystemName: "stock", PrivateEndpoint: "https://stock.internal"})).
		must(t, "a backend in the new tenant")
	if n := f.sim.Count("globex", simulator.KindBackendAPIs); n != 2 {
		t.Errorf("%d backends in the new tenant, want the first service's and ours", n)
	}

	// Its admin, pending, is activated through master.
	users := outcome(c.ListTenantUsers(ctx, signup.Tenant.ID)).must(t, "the tenant's users")
	checkSame(t, "the tenant's users", []User{
		{ID: signup.AdminUserID, Username: "admin", Email: "admin@globex.example", Role: "admin", State: "pending"},
		{ID: users[len(users)-1].ID, Username: "3scaleadmin", Email: "3scaleadmin+globex.simulator.invalid@3scale.net", Role: "admin", State: "active"},
	}, users)
	mustDo(t, "activate the admin", c.ActivateTenantUser(ctx, signup.Tenant.ID, signup.AdminUserID))
	mustDo(t, "activate the admin again", c.ActivateTenantUser(ctx, signup.Tenant.ID, signup.AdminUserID))
	if users := outcome(c.ListTenantUsers(ctx, signup.Tenant.ID)).must(t, "the users again"); users[0].State != "active" {
		t.Errorf("admin after activation: %+v", users[0])
	}
	checkSame(t, "read tenant", &signup.Tenant, outcome(c.GetTenant(ctx, signup.Tenant.ID)).must(t, "get tenant"))

	// The same org name again: a second tenant, its domains suffixed, its own token.
	second := outcome(c.SignupTenant(ctx, params)).must(t, "signup again")
	if second.Tenant.ID == signup.Tenant.ID || second.Tenant.AdminDomain != f.addr+"/t/globex-2" || second.AccessToken == signup.AccessToken {
		t.Errorf("second signup of the org name: %v", second)
	}
	otherHost := f.tenantClient(t, &TenantSignup{Tenant: second.Tenant, AccessToken: signup.AccessToken})
	if _, err := otherHost.ListProducts(ctx); !IsForbidden(err) {
		t.Errorf("the first tenant's token on the second's admin host: %v, want forbidden", err)
	}

	// Deletion: scheduled, the tenant's API refused, GET still answers; a second DELETE is not found;
	// resumed, it serves again.
	mustDo(t, "schedule the deletion", c.DeleteTenant(ctx, signup.Tenant.ID))
	scheduled := outcome(c.GetTenant(ctx, signup.Tenant.ID)).must(t, "read the scheduled tenant")
	if scheduled.State != "scheduled_for_deletion" {
		t.Errorf("state %q, want scheduled_for_deletion", scheduled.State)
	}
	if d, err := time.Parse(time.RFC3339, scheduled.DeletionDate); err != nil || time.Until(d) < 15*24*time.Hour-time.Hour {
		t.Errorf("deletion date %q, want 15 days from now", scheduled.DeletionDate)
	}
	if _, err := tc.ListProducts(ctx); !IsForbidden(err) {
		t.Errorf("the tenant's API while scheduled for deletion: %v, want forbidden", err)
	}
	if err := c.DeleteTenant(ctx, signup.Tenant.ID); !IsNotFound(err) {
		t.Errorf("a second DELETE: %v, want not found", err)
	}
	resumed := outcome(c.ResumeTenant(ctx, signup.Tenant.ID)).must(t, "resume")
	checkSame(t, "resumed tenant", &signup.Tenant, resumed)
	outcome(tc.ListProducts(ctx)).must(t, "the tenant's API resumed")
	if _, err := c.ResumeTenant(ctx, signup.Tenant.ID); !IsInvalid(err) || !strings.Contains(err.Error(), "cannot transition when approved") {
		t.Errorf("resuming an approved tenant: %v, want porta's 422", err)
	}

	// A signup whose answer is lost made its tenant: FindTenant finds it by its admin, whose username
	// the Globex admins have too (porta's find by username answers the first Globex: FindTenant goes on
	// by email).
	f.sim.SetFaults(simulator.Faults{LostResponseRate: 1})
	lost := TenantParams{OrgName: "Initech", Username: "admin", Email: "admin@initech.example", Password: "a-strong-passw0rd-2"}
	if _, err := c.SignupTenant(ctx, lost); !IsUnavailable(err) {
		t.Fatalf("signup with a lost answer: %v, want unavailable", err)
	}
	f.sim.SetFaults(simulator.Faults{})
	found := outcome(c.FindTenant(ctx, lost.Username, lost.Email)).must(t, "find the tenant of the lost answer")
	if found.OrgName != "Initech" || found.AdminDomain != f.addr+"/t/initech" || found.State != "approved" {
		t.Errorf("found %+v", found)
	}
	checkSame(t, "found by email alone", found, outcome(c.FindTenant(ctx, "", lost.Email)).must(t, "find by email"))
	// Both Globex tenants have admin@globex.example as "admin": porta's find answers the first.
	if got := outcome(c.FindTenant(ctx, "admin", "admin@globex.example")).must(t, "find globex"); got.ID != signup.Tenant.ID {
		t.Errorf("found %+v, want the first Globex", got)
	}
	for _, who := range [][2]string{{"admin", "nobody@example.com"}, {"nobody", "nobody@example.com"}, {"boss", "admin@initech.example"}} {
		if _, err := c.FindTenant(ctx, who[0], who[1]); !IsNotFound(err) {
			t.Errorf("finding a tenant with a user %q of %q: %v, want not found", who[0], who[1], err)
		}
	}
	tenants := outcome(c.ListTenants(ctx)).must(t, "list tenants")
	checkSame(t, "tenants", []string{"Globex", "Globex", "Initech"}, ids(tenants, func(t Tenant) string { return t.OrgName }))

	// Every master call was made and answered.
	checkSame(t, "master requests the flow never made", []string(nil), callsNotMade(t, &f.mu, f.called, true))
}

// TestMasterRefusalsAgainstSimulator: the simulator refuses master calls as porta does, and the client
// classifies the refusals: a token that is not master's is unauthorized; a host that is not master's,
// or a master token without the account_management scope, is forbidden.
func TestMasterRefusalsAgainstSimulator(t *testing.T) {
	f := newMasterFixture(t)
	ctx := context.Background()
	signup := outcome(f.master.SignupTenant(ctx, TenantParams{OrgName: "Globex", Username: "admin", Email: "admin@globex.example",
		Password: "a-strong-passw0rd-1"})).must(t, "signup")
	f.sim.AddTenant(simulator.MasterTenant, "tok-master-registry")
	f.sim.SetTokenScopes("tok-master-registry", "policy_registry")
	const password = "short-pw"
	cases := map[string]struct {
		call  func() error
		check func(error) bool
		want  string
	}{
		"a wrong token on master's host: unauthorized": {
			call: func() error {
				_, err := f.client(t, "/t/master", "not-the-token").GetTenant(ctx, signup.Tenant.ID)
				return err
			},
			check: func(err error) bool {
				return IsUnauthorized(err) && IsTerminal(err) && strings.HasSuffix(err.Error(), "401 Unauthorized: unauthorized")
			},
			want: "IsUnauthorized",
		},
		"a tenant's token on master's host: unauthorized": {
			call:  func() error { return f.client(t, "/t/master", signup.AccessToken).DeleteTenant(ctx, signup.Tenant.ID) },
			check: IsUnauthorized, want: "IsUnauthorized",
		},
		"the master API on a tenant's admin URL: forbidden": {
			call: func() error {
				_, err := f.tenantClient(t, signup).SignupTenant(ctx, TenantParams{OrgName: "Evil", Username: "evil", Email: "evil@example.com"})
				return err
			},
			check: func(err error) bool { return IsForbidden(err) && !IsInUse(err) }, want: "IsForbidden",
		},
		"the master token on a tenant's admin URL: forbidden": {
			call: func() error {
				_, err := f.client(t, "/t/globex", simMasterToken).GetTenant(ctx, signup.Tenant.ID)
				return err
			},
			check: IsForbidden, want: "IsForbidden",
		},
		"a master token without the account_management scope: forbidden": {
			call: func() error {
				_, err := f.client(t, "", "tok-master-registry").ResumeTenant(ctx, signup.Tenant.ID)
				return err
			},
			check: func(err error) bool {
				return IsForbidden(err) && strings.Contains(err.Error(), "Your access token does not have the correct permissions")
			},
			want: "IsForbidden, porta's message",
		},
		"an unknown tenant: not found": {
			call:  func() error { _, err := f.master.GetTenant(ctx, 9999); return err },
			check: IsNotFound, want: "IsNotFound",
		},
		"a short password: invalid, and not quoted": {
			call: func() error {
				_, err := f.master.SignupTenant(ctx, TenantParams{OrgName: "Initech", Username: "boss", Email: "boss@initech.example", Password: password})
				return err
			},
			check: func(err error) bool {
				return IsInvalid(err) && strings.Contains(err.Error(), "Password is too short") && !strings.Contains(err.Error(), password)
			},
			want: "IsInvalid without the password",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := tc.call(); !tc.check(err) {
				t.Errorf("error %v, want %s", err, tc.want)
			}
		})
	}
	if n := f.sim.Count(simulator.MasterTenant, simulator.KindAccounts); n != 1 {
		t.Errorf("%d tenants after the refusals, want 1", n)
	}
}
