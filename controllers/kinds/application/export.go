package application

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the exported accounts' applications on exported plans, to "accounts". Credentials are
// not exported: an Application without credentialsRef keeps 3scale's and writes them to its own Secret;
// with CredentialsToSecrets it gets a credentialsRef to a Secret template.
func Export(ctx context.Context, x *plugin.Exporter) error {
	taken := map[string]bool{} // Application object names given so far
	for _, a := range x.Accounts {
		apps, err := x.Client.ListApplications(ctx, a.ID)
		if err != nil {
			return fmt.Errorf("cannot list the applications of account %q: %w", a.OrgName, err)
		}
		for _, app := range apps {
			plan, ok := x.PlanNames[app.PlanID]
			if !ok {
				x.Leave("Application %q of %q: its plan %d was not exported", app.Name, a.OrgName, app.PlanID)
				continue
			}
			name := kit.CutString(a.Name+"-"+plugin.ObjectName(app.Name), 240)
			if taken[name] { // within the account, or account "a" app "b-c" and account "a-b" app "c"
				name += "-" + strconv.FormatInt(app.ID, 10)
			}
			taken[name] = true
			spec := v1alpha1.ApplicationSpec{AccountRef: a.Name, PlanRef: plan, Name: app.Name, Description: app.Description, Suspended: app.State == kit.AppSuspended,
				RedirectURL: app.RedirectURL}
			if x.Options.CredentialsToSecrets {
				keys := []string{"app_id", "app_keys"}
				if app.UserKey != "" {
					keys = []string{"user_key"}
				}
				spec.CredentialsRef = &v1alpha1.ProviderAccountRef{Name: x.Template(name+"-keys", keys).Name}
			}
			x.Add("accounts", &v1alpha1.Application{TypeMeta: plugin.TypeMeta("Application"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
		}
	}
	return nil
}

// Inventory lists the tenant's applications for `kubectl apimsync diff --unmanaged` (one list).
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListAllApplications(ctx)
	return plugin.Items("Application", "applications", all, err, func(r tsclient.Application) (int64, string, string) {
		return r.ID, r.Name, plugin.Parent("account", r.AccountID)
	})
}

// Prune deletes one of the tenant's objects of this kind that a TenantSettings' prune found unmanaged
// (plugin.Pruner).
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	return "", c.DeleteApplication(ctx, it.ParentID, it.ID)
}
