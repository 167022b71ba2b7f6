package developeraccount

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Export exports the developer accounts (all when nothing is filtered, or those of the organizations
// named; none when only products or backends are asked for) with their users, admins first, to
// "accounts". Passwords are not exported (3scale does not give them back; a user without passwordRef
// keeps the one it has); with CredentialsToSecrets every user gets a passwordRef to a Secret template.
func Export(ctx context.Context, x *plugin.Exporter) error {
	only := x.Options.Accounts
	if !x.Everything() && len(only) == 0 {
		return nil
	}
	accounts, err := x.Client.ListAccounts(ctx)
	if err != nil {
		return fmt.Errorf("cannot list the developer accounts: %w", err)
	}
	taken := map[string]bool{}
	for _, a := range accounts {
		if len(only) > 0 && !slices.Contains(only, a.OrgName) {
			continue
		}
		if err := export(ctx, x, a, taken); err != nil {
			return err
		}
	}
	return nil
}

// export exports one account, its object's name not one of taken.
func export(ctx context.Context, x *plugin.Exporter, a tsclient.Account, taken map[string]bool) error {
	what := fmt.Sprintf("DeveloperAccount %q", a.OrgName)
	users, err := x.Client.ListUsers(ctx, a.ID)
	if tsclient.IsForbidden(err) { // a tenant without multiple_users: the account's XML lists them
		users, err = x.Client.UsersOfAccount(ctx, a.ID)
	}
	if err != nil {
		return fmt.Errorf("cannot read the users of %s: %w", what, err)
	}
	slices.SortStableFunc(users, func(p, q tsclient.User) int {
		return boolRank(q.Role == roleAdmin) - boolRank(p.Role == roleAdmin)
	})
	name := plugin.ObjectName(a.OrgName)
	if taken[name] {
		name = kit.CutString(name, 50) + "-" + strconv.FormatInt(a.ID, 10)
	}
	taken[name] = true
	billing, charging := a.MonthlyBillingEnabled, a.MonthlyChargingEnabled
	spec := v1alpha1.DeveloperAccountSpec{OrgName: a.OrgName, MonthlyBillingEnabled: &billing, MonthlyChargingEnabled: &charging}
	for name, v := range a.Fields { // the values of the fields the tenant defines
		if v != "" {
			if spec.Fields == nil {
				spec.Fields = map[string]string{}
			}
			spec.Fields[name] = v
		}
	}
	var passwords *corev1.Secret
	if x.Options.CredentialsToSecrets && len(users) > 0 {
		passwords = x.Template(name+"-passwords", nil)
	}
	for _, u := range users {
		user := v1alpha1.DeveloperUserSpec{Username: u.Username, Email: u.Email, Role: v1alpha1.DeveloperUserRole(u.Role), Suspended: u.State == userSuspended}
		if passwords != nil {
			key := secretKeyOf(u.Username, passwords.StringData)
			passwords.StringData[key] = ""
			user.PasswordRef = &v1alpha1.LocalSecretKeyRef{Name: passwords.Name, Key: key}
		}
		spec.Users = append(spec.Users, user)
		if u.State != userActive {
			x.Leave("%s: user %q is %s; applying activates it", what, u.Username, u.State)
		}
	}
	if len(spec.Users) == 0 {
		x.Leave("%s has no user: not exported (an account needs one)", what)
		return nil
	}
	if a.State != accountApproved {
		x.Leave("%s is %s; applying approves it", what, a.State)
	}
	if err := exportPlans(ctx, x, a.ID, what, &spec); err != nil {
		return err
	}
	x.Add("accounts", &v1alpha1.DeveloperAccount{TypeMeta: plugin.TypeMeta("DeveloperAccount"), ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	x.Accounts = append(x.Accounts, plugin.ExportedAccount{Account: a, Name: name})
	return nil
}

// exportPlans writes where the account stands: its account plan, when the tenant has several (one call),
// and the service plans it subscribes through, when service plans were exported (one call).
func exportPlans(ctx context.Context, x *plugin.Exporter, accountID int64, what string, spec *v1alpha1.DeveloperAccountSpec) error {
	if len(x.AccountPlanNames) > 1 {
		p, err := x.Client.AccountPlanOf(ctx, accountID)
		if err != nil {
			return fmt.Errorf("cannot read the account plan of %s: %w", what, err)
		}
		spec.AccountPlanRef = x.AccountPlanNames[p.ID]
	}
	if len(x.ServicePlanNames) == 0 {
		return nil
	}
	subs, err := x.Client.ListSubscriptions(ctx, accountID)
	if err != nil {
		return fmt.Errorf("cannot read the service subscriptions of %s: %w", what, err)
	}
	for _, s := range subs {
		name, exported := x.ServicePlanNames[s.PlanID]
		if !exported {
			continue
		}
		spec.ServicePlanRefs = append(spec.ServicePlanRefs, name)
		if s.State != "live" {
			x.Leave("%s: its subscription through ServicePlan %q is %s; applying approves it", what, name, s.State)
		}
	}
	slices.Sort(spec.ServicePlanRefs)
	return nil
}

// notSecretKey is what a Secret's key cannot hold (keys are [-._a-zA-Z0-9]+); a username can hold '@'
// and '+'.
var notSecretKey = regexp.MustCompile(`[^-._a-zA-Z0-9]`)

// secretKeyOf makes a Secret key of a username that no key of taken has yet ("." and ".." are no keys).
func secretKeyOf(username string, taken map[string]string) string {
	base := notSecretKey.ReplaceAllString(username, "_")
	if strings.Trim(base, ".") == "" {
		base = "_" + base
	}
	key := base
	for i := 2; ; i++ {
		if _, ok := taken[key]; !ok {
			return key
		}
		key = base + "-" + strconv.Itoa(i)
	}
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Inventory lists the tenant's developer accounts for `kubectl apimsync diff --unmanaged` (one list).
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	all, err := c.ListAccounts(ctx)
	return plugin.Items("DeveloperAccount", "developer accounts", all, err, func(r tsclient.Account) (int64, string, string) { return r.ID, r.OrgName, "" })
}

// Prune deletes one of the tenant's objects of this kind that a TenantSettings' prune found unmanaged
// (plugin.Pruner).
func Prune(ctx context.Context, c *tsclient.Client, it plugin.RemoteItem) (string, error) {
	return "", c.DeleteAccount(ctx, it.ID)
}
