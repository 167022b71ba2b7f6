package harness

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/test/simulator"
)

// TenantOf returns the simulator tenant of a test namespace, creating it: its admin URL and token.
func TenantOf(ns string) (adminURL, token string) {
	token = "token-" + ns
	Sim.AddTenant(ns, token)
	return SimURL + "/t/" + ns, token
}

// ProviderSecret is a provider-account Secret named name in ns for a 3scale admin URL and token (plain
// HTTP allowed: the simulator serves it).
func ProviderSecret(ns, name, adminURL, token string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		StringData: map[string]string{"adminURL": adminURL, "token": token, "allowInsecureHTTP": "true"}}
}

// DefaultSecret returns the namespace's threescale-provider-account Secret for its simulator tenant.
func DefaultSecret(ns string) *corev1.Secret {
	adminURL, token := TenantOf(ns)
	return ProviderSecret(ns, v1alpha1.DefaultProviderAccountSecret, adminURL, token)
}

// ByHand returns a 3scale client of a test tenant, to change 3scale behind apimsync's back.
func ByHand(t *testing.T, ns string) *tsclient.Client {
	t.Helper()
	adminURL, token := TenantOf(ns)
	c, err := tsclient.New(tsclient.Config{AdminURL: adminURL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TenantClient returns a client of the namespace's simulator tenant.
func TenantClient(t *testing.T, ns string) *tsclient.Client {
	t.Helper()
	adminURL, token := TenantOf(ns)
	c, err := tsclient.New(tsclient.Config{AdminURL: adminURL, Token: token, Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Send sends an authenticated request to the simulator, as a person in 3scale's admin portal would act,
// and wants a 2xx answer.
func Send(t *testing.T, method, url, token string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("", token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s", method, url, res.Status)
	}
}

// RemoteApp returns the 3scale application of a synced Application, as 3scale renders it.
func RemoteApp(t *testing.T, ns string, a *v1alpha1.Application) map[string]any {
	t.Helper()
	if err := K8s.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	for _, r := range Sim.Objects(ns, simulator.KindApplications) {
		if fmt.Sprint(r["id"]) == fmt.Sprint(a.Status.ApplicationID) {
			return r
		}
	}
	t.Fatalf("application %s (id %d) is not in 3scale", a.Name, a.Status.ApplicationID)
	return nil
}

// RemoteCalls counts the requests the simulator served for a tenant since the start.
func RemoteCalls(tenant string) int {
	n := 0
	for _, c := range Sim.Stats().Calls {
		if c.Tenant == tenant {
			n += c.Count
		}
	}
	return n
}

// RemoteCalls returns the requests the simulator served for a tenant since the start.
// RemoteDeletions lists a tenant's DELETE requests from the from-th write on, in the order 3scale
// answered them, as "kind code" ("applications 200"): kind is the last collection in the path template.
func RemoteDeletions(tenant string, from int) []string {
	var out []string
	for _, w := range Sim.Writes(tenant)[from:] {
		if w.Method != http.MethodDelete {
			continue
		}
		parts := strings.Split(strings.TrimSuffix(w.Endpoint, ".json"), "/")
		kind := parts[len(parts)-1]
		if strings.HasPrefix(kind, "{") && len(parts) > 1 {
			kind = parts[len(parts)-2]
		}
		out = append(out, fmt.Sprintf("%s %d", kind, w.Code))
	}
	return out
}

// RefusedCalls counts a tenant's calls answered 401 or 403 (a refused token).
func RefusedCalls(tenant string) int {
	n := 0
	for _, c := range Sim.Stats().Calls {
		if c.Tenant == tenant && (c.Code == http.StatusUnauthorized || c.Code == http.StatusForbidden) {
			n += c.Count
		}
	}
	return n
}

// RefusedWrites returns a tenant's writes from the from-th on that 3scale refused (4xx).
func RefusedWrites(tenant string, from int) []string {
	var out []string
	for _, w := range Sim.Writes(tenant)[from:] {
		if w.Code >= 400 && w.Code < 500 {
			out = append(out, fmt.Sprintf("%s %s %d", w.Method, w.Endpoint, w.Code))
		}
	}
	return out
}

// WritesTo counts the non-GET calls the simulator served for a tenant.
func WritesTo(tenant string) int {
	n := 0
	for _, c := range Sim.Stats().Calls {
		if c.Tenant == tenant && c.Method != "GET" {
			n += c.Count
		}
	}
	return n
}

// LastWrites lists a tenant's last n writes (method and endpoint), for a failure's message.
func LastWrites(tenant string, n int) []string {
	var out []string
	for _, w := range Sim.Writes(tenant) {
		if w.Method != http.MethodGet {
			out = append(out, w.Method+" "+w.Endpoint)
		}
	}
	return out[max(0, len(out)-n):]
}

// LostAnswers counts a tenant's requests whose answer the simulator lost on purpose (a scripted fault).
func LostAnswers(tenant string) int {
	n := 0
	for _, c := range Sim.Stats().Calls {
		if c.Tenant == tenant && c.Code == 0 {
			n += c.Count
		}
	}
	return n
}

// RequestsTo counts a tenant's writes (answered or not) to one endpoint template.
func RequestsTo(tenant, method, template string) int {
	n := 0
	for _, w := range Sim.Writes(tenant) {
		if w.Method == method && w.Endpoint == template {
			n++
		}
	}
	return n
}

// StagingRuns waits until the latest staging configuration of p's product holds every string of want,
// and returns its version.
func StagingRuns(t *testing.T, p *v1alpha1.Product, want ...string) int {
	t.Helper()
	version := 0
	Eventually(t, WaitTimeout, func() string {
		if err := K8s.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
			return err.Error()
		}
		v, content, ok := Sim.LatestConfig(p.Namespace, p.Status.ProductID, "sandbox")
		if !ok {
			return "staging has no configuration"
		}
		for _, w := range want {
			if !strings.Contains(string(content), w) {
				return fmt.Sprintf("staging's configuration %d lacks %s", v, w)
			}
		}
		version = v
		return ""
	})
	return version
}
