package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

func validAccount() *DeveloperAccount {
	return &DeveloperAccount{ObjectMeta: metav1.ObjectMeta{Name: "acme"}, Spec: DeveloperAccountSpec{OrgName: "ACME",
		Users: []DeveloperUserSpec{
			{Username: "alice", Email: "alice@example.com", Role: "admin", PasswordRef: &LocalSecretKeyRef{Name: "pw", Key: "alice"}},
			{Username: "bob", Email: "bob@example.com", Role: "member"},
		}}}
}

func validApplication() *Application {
	return &Application{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: ApplicationSpec{AccountRef: "acme", PlanRef: "basic", Name: "App"}}
}

func validActiveDoc() *ActiveDoc {
	return &ActiveDoc{ObjectMeta: metav1.ObjectMeta{Name: "petstore"},
		Spec: ActiveDocSpec{Name: "Petstore", SystemName: "petstore", Document: `{"openapi":"3.0.0"}`}}
}

// TestAccountsApplicationsAndActiveDocsAreValidated: the schema and CEL rules of the account-side kinds
// refuse what cannot work, with a message a person understands.
func TestAccountsApplicationsAndActiveDocsAreValidated(t *testing.T) {
	ns := namespace(t)
	cases := map[string]rejection{
		"account: no admin": {obj: with(validAccount(), func(a *DeveloperAccount) { a.Spec.Users[0].Role = "member" }),
			want: "an account needs at least one user with role admin"},
		"account: no users": {obj: with(validAccount(), func(a *DeveloperAccount) { a.Spec.Users = nil }), want: "spec.users"},
		"account: one username twice": {obj: with(validAccount(), func(a *DeveloperAccount) { a.Spec.Users[1].Username = "alice" }),
			want: "Duplicate value"},
		"account: unknown role": {obj: with(validAccount(), func(a *DeveloperAccount) { a.Spec.Users[1].Role = "owner" }),
			want: "Unsupported value: \"owner\""},
		"account: password reference without key": {obj: with(validAccount(), func(a *DeveloperAccount) { a.Spec.Users[0].PasswordRef.Key = "" }),
			want: "spec.users[0].passwordRef.key"},
		"application: no account": {obj: with(validApplication(), func(a *Application) { a.Spec.AccountRef = "" }), want: "spec.accountRef"},
		"application: no plan":    {obj: with(validApplication(), func(a *Application) { a.Spec.PlanRef = "" }), want: "spec.planRef"},
		"activedoc: document and documentRef": {obj: with(validActiveDoc(), func(d *ActiveDoc) {
			d.Spec.DocumentRef = &DocumentRef{ConfigMapKeyRef: &LocalSecretKeyRef{Name: "cm", Key: "openapi.json"}}
		}), want: "set exactly one of document and documentRef"},
		"activedoc: no document": {obj: with(validActiveDoc(), func(d *ActiveDoc) { d.Spec.Document = "" }),
			want: "set exactly one of document and documentRef"},
		"activedoc: a ConfigMap and a Secret": {obj: with(validActiveDoc(), func(d *ActiveDoc) {
			d.Spec.Document = ""
			d.Spec.DocumentRef = &DocumentRef{ConfigMapKeyRef: &LocalSecretKeyRef{Name: "cm", Key: "k"}, SecretKeyRef: &LocalSecretKeyRef{Name: "s", Key: "k"}}
		}), want: "set exactly one of configMapKeyRef and secretKeyRef"},
		"activedoc: document over 1 MiB": {obj: with(validActiveDoc(), func(d *ActiveDoc) {
			d.Spec.Document = `{"openapi":"3.0.0","x":"` + strings.Repeat("x", 1<<20) + `"}`
		}), want: "spec.document"},
	}
	checkRejected(t, ns, cases)
	for _, o := range []client.Object{validAccount(), validApplication(), validActiveDoc()} {
		o.SetNamespace(ns)
		if err := k8s.Create(context.Background(), o); err != nil {
			t.Errorf("a valid %T was refused: %v", o, err)
		}
	}
}

// TestAccountSideImmutableFields: an application's account and an ActiveDoc's system name never change.
func TestAccountSideImmutableFields(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	app, doc := validApplication(), validActiveDoc()
	app.Namespace, doc.Namespace = ns, ns
	for _, o := range []client.Object{app, doc} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]refusedChange{
		"moving an application to another account": {obj: app, change: func() { app.Spec.AccountRef = "other" }, want: "accountRef is immutable"},
		"changing an ActiveDoc's systemName":       {obj: doc, change: func() { doc.Spec.SystemName = "petstore_v2" }, want: "systemName is immutable"},
		"removing an ActiveDoc's systemName":       {obj: doc, change: func() { doc.Spec.SystemName = "" }, want: "systemName cannot be added or removed"},
	}
	checkUpdatesRefused(t, cases)
	// The plan may change (to another plan of the same product: porta's change_plan).
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	app.Spec.PlanRef = "gold"
	if err := k8s.Update(ctx, app); err != nil {
		t.Errorf("a planRef edit was refused: %v", err)
	}
}
