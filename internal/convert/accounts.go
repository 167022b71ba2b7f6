package convert

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// convertAccount makes a DeveloperAccount with the DeveloperUsers of the input that name it.
func (c *converter) convertAccount(it *item) {
	s, ok := decode[srcDeveloperAccountSpec](c, it)
	userItems := c.users[nsKey(it.namespace, it.name)]
	for _, u := range userItems {
		c.consumed[u] = true
	}
	if !ok {
		return
	}
	if s.OrgName == "" {
		c.skip(it, "spec.orgName", "a DeveloperAccount needs an orgName")
		return
	}
	a := &v1alpha1.DeveloperAccount{TypeMeta: typeMeta("DeveloperAccount"), ObjectMeta: c.meta(it, it.name)}
	a.Spec = v1alpha1.DeveloperAccountSpec{OrgName: s.OrgName, CommonSpec: common(s.ProviderAccountRef, v1alpha1.DeletionPolicyDelete)}
	// 3scale-operator keeps both switches on unless the spec says otherwise; apimsync leaves them alone
	// when they are not set.
	a.Spec.MonthlyBillingEnabled, a.Spec.MonthlyChargingEnabled = s.MonthlyBillingEnabled, s.MonthlyChargingEnabled
	for _, f := range []struct {
		field string
		to    **bool
	}{{"monthlyBillingEnabled", &a.Spec.MonthlyBillingEnabled}, {"monthlyChargingEnabled", &a.Spec.MonthlyChargingEnabled}} {
		if *f.to == nil {
			*f.to = ptr(true)
			c.info(it, "spec."+f.field, "not set: 3scale-operator keeps it true; written out (apimsync leaves it as 3scale has it when it is not set)")
		}
	}
	var admins, members []v1alpha1.DeveloperUserSpec
	var adminItems, memberItems []*item
	usernames := map[string]string{}
	passwords := false
	for _, u := range userItems {
		us, ok := decode[srcDeveloperUserSpec](c, u)
		if !ok {
			c.skip(it, "", "its DeveloperUser %q cannot be read, and apimsync deletes in 3scale the users its list lacks", u.name)
			return
		}
		role := "member"
		if us.Role != nil && *us.Role != "" {
			role = *us.Role
		}
		problem := ""
		switch {
		case role != "admin" && role != "member":
			problem = fmt.Sprintf("role %q is neither admin nor member", role)
		case !usernamePattern.MatchString(us.Username) || tooLong(us.Username, 255):
			problem = fmt.Sprintf("username %q does not fit apimsync's pattern ^[A-Za-z0-9_.@+-]+$ (at most 255 characters)", us.Username)
		case !validEmail(us.Email):
			problem = fmt.Sprintf("email %q is not an address apimsync takes", us.Email)
		case usernames[us.Username] != "":
			problem = fmt.Sprintf("username %q is the username of DeveloperUser %q too", us.Username, usernames[us.Username])
		}
		if problem != "" {
			c.skip(it, "", "its DeveloperUser %q cannot be a user of the account in apimsync (%s), and apimsync deletes in 3scale the users its list lacks", u.name, problem)
			c.skip(u, "", "%s", problem)
			c.failed[u] = true // reported
			return
		}
		usernames[us.Username] = u.name
		user := v1alpha1.DeveloperUserSpec{Username: us.Username, Email: us.Email, Role: v1alpha1.DeveloperUserRole(role), Suspended: us.Suspended}
		if ref := us.PasswordCredentialsRef; ref.Name != "" {
			user.PasswordRef = &v1alpha1.LocalSecretKeyRef{Name: ref.Name, Key: "password"}
			user.PasswordPolicy = v1alpha1.PasswordOnCreate
			c.localSecret(u, "spec.passwordCredentialsRef", ref)
			passwords = true
		} else {
			c.changed(u, "spec.passwordCredentialsRef", "names no Secret: the user gets no passwordRef (it signs in through the portal's password reset or SSO)")
		}
		if us.Role == nil || *us.Role == "" {
			c.info(u, "spec.role", "not set: member, as 3scale-operator keeps it; written out")
		}
		if userProvider, accountProvider := providerRef(us.ProviderAccountRef), a.Spec.ProviderAccountRef; userProvider != nil &&
			(accountProvider == nil || userProvider.Name != accountProvider.Name) {
			c.dropped(u, "spec.providerAccountRef", "a user is synced with its account's provider account in apimsync (%s)", a.Spec.ProviderAccountSecretName())
		}
		if role == "admin" {
			admins, adminItems = append(admins, user), append(adminItems, u)
		} else {
			members, memberItems = append(members, user), append(memberItems, u)
		}
	}
	if len(admins) == 0 {
		c.skip(it, "", "no DeveloperUser of the input with role admin names this account: apimsync needs the account's users in spec.users, "+
			"at least one admin (the first admin identifies the account in 3scale); add its DeveloperUsers to the input")
		return
	}
	a.Spec.Users = append(admins, members...)
	c.changed(it, "", "its users are spec.users in apimsync, the complete list: a user of the account in 3scale that is not listed (made in the developer portal, "+
		"or whose DeveloperUser is not in the input) is deleted at the first sync; add such users to spec.users before applying")
	if passwords {
		c.info(it, "", "3scale-operator set a user's password once, when it made the user: passwordPolicy OnCreate does the same, so the users "+
			"keep the passwords they have in 3scale (changed in the portal or not); set it to Always for apimsync to set them from their Secrets, "+
			"at adoption and whenever a Secret changes")
	}
	if !c.emit(it, a) {
		return
	}
	for i, u := range slices.Concat(adminItems, memberItems) {
		c.info(u, "", "now users[%d] of DeveloperAccount %q", i, a.Name)
		if labels := u.obj.GetLabels(); len(labels) > 0 {
			c.dropped(u, "metadata.labels", "a user lives in its account's spec: its labels (%s) have nowhere to go", strings.Join(slices.Sorted(maps.Keys(labels)), ", "))
		}
		c.reportMetadata(u)
	}
}

// convertApplication makes an Application on the ApplicationPlan converted from its product's plan.
func (c *converter) convertApplication(it *item) {
	s, ok := decode[srcApplicationSpec](c, it)
	if !ok {
		return
	}
	switch {
	case s.AccountCR == nil || s.AccountCR.Name == "":
		c.skip(it, "spec.accountCR", "an Application needs its DeveloperAccount")
		return
	case s.ProductCR == nil || s.ProductCR.Name == "":
		c.skip(it, "spec.productCR", "an Application needs its Product")
		return
	case s.ApplicationPlanName == "":
		c.skip(it, "spec.applicationPlanName", "an Application needs its plan")
		return
	case s.Name == "":
		c.skip(it, "spec.name", "an Application needs a name")
		return
	}
	account, productName, plan := s.AccountCR.Name, s.ProductCR.Name, s.ApplicationPlanName
	switch {
	case !c.accounts[nsKey(it.namespace, account)]:
		c.info(it, "spec.accountCR", "the DeveloperAccount %q is not in the input: accountRef names it as it is", account)
	case c.emitted["DeveloperAccount|"+it.outNS+"|"+account] == "":
		c.changed(it, "spec.accountCR", "the DeveloperAccount %q is not converted (see its findings): the Application waits for it (Orphan) until it exists", account)
	}
	var planRef string
	switch product := c.products[nsKey(it.namespace, productName)]; {
	case product == nil:
		planRef = PlanObjectName(productName, plan)
		c.changed(it, "spec.applicationPlanName", "the Product %q is not in the input: planRef %q is the name its conversion gives its plan %q; "+
			"check that it names the ApplicationPlan", productName, planRef, plan)
	case product.openAPI != "":
		planRef = PlanObjectName(product.outName, plan)
		if _, generated := product.plans[plan]; generated {
			c.info(it, "spec.applicationPlanName", "planRef %q: the ApplicationPlan the OpenAPI %q generates from plan %q of its document's x-3scale-product", planRef, product.outName, plan)
		} else {
			c.changed(it, "spec.applicationPlanName", "the Product %q was generated by the OpenAPI %q, whose document's x-3scale-product has no plan %q "+
				"(3scale-operator found it in 3scale): write the ApplicationPlan %q (productRef %q, systemName %q), or set --expand-openapi",
				productName, product.openAPI, plan, planRef, product.outName, plan)
		}
	default:
		name, found := product.plans[plan]
		if !found {
			name = PlanObjectName(product.outName, plan)
			c.changed(it, "spec.applicationPlanName", "the Product %q has no plan %q in spec.applicationPlans (3scale-operator found it in 3scale): "+
				"planRef %q names an ApplicationPlan to write for it", productName, plan, name)
		} else if c.emitted["ApplicationPlan|"+it.outNS+"|"+name] == "" {
			c.changed(it, "spec.applicationPlanName", "planRef %q: the ApplicationPlan that plan %q of Product %q would become, which is not converted "+
				"(see the Product's findings): the Application waits for it (Orphan) until it exists", name, plan, productName)
		} else {
			c.changed(it, "spec.applicationPlanName", "planRef %q: the ApplicationPlan made from plan %q of Product %q (the plan names its product: spec.productCR goes)",
				name, plan, productName)
		}
		planRef = name
	}
	app := &v1alpha1.Application{TypeMeta: typeMeta("Application"), ObjectMeta: c.meta(it, it.name)}
	app.Spec = v1alpha1.ApplicationSpec{AccountRef: account, PlanRef: planRef, Name: s.Name, Description: s.Description, Suspended: s.Suspend,
		DeletionPolicy: v1alpha1.DeletionPolicyDelete, Adoption: v1alpha1.AdoptionIfExists}
	secret := it.name + "-credentials"
	if ref := s.AuthSecretRef; ref != nil && ref.Name != "" {
		c.dropped(it, "spec.authSecretRef", "3scale-operator used this Secret's credentials once, to make the application; apimsync adopts the application with "+
			"the credentials 3scale has. To manage them from a Secret, set spec.credentialsRef to one with apimsync's keys (user_key, or app_id and app_keys) "+
			"instead of 3scale-operator's (UserKey, ApplicationID and ApplicationKey, ClientID and ClientSecret); its app_keys are then the complete set")
		if ref.Name == secret || ref.Name == v1alpha1.DefaultProviderAccountSecret {
			secret = it.name + "-apimsync-credentials"
			app.Spec.CredentialsSecretName = secret
			c.changed(it, "spec.authSecretRef", "names the Secret apimsync would write the credentials to: spec.credentialsSecretName is %q instead", secret)
		}
	}
	c.info(it, "", "apimsync writes the application's credentials to a Secret it owns, %q (spec.credentialsSecretName): make sure no other Secret has that name", secret)
	c.emit(it, app)
}
