package convert

import (
	"cmp"
	"fmt"
	"maps"
	"strings"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MasterAccountSecretName is the name the conversion gives the master-account Secret of the Tenant made
// from the 3scale-operator Tenant named tenant (a Secret the user makes: see the Tenant's Finding).
func MasterAccountSecretName(tenant string) string { return ObjectName(tenant, "master-account") }

func (c *converter) convertTenant(it *item) {
	s, ok := decode[srcTenantSpec](c, it)
	if !ok {
		return
	}
	switch {
	case s.OrganizationName == "" || s.Username == "" || s.Email == "":
		c.skip(it, "spec", "a Tenant needs organizationName, username and email")
		return
	case tooLong(s.Username, 40):
		c.skip(it, "spec.username", "apimsync takes a username of at most 40 characters (porta's limit)")
		return
	case len(s.Email) < 3 || tooLong(s.Email, 255):
		c.skip(it, "spec.email", "not an email apimsync takes (3 to 255 characters)")
		return
	case s.PasswordCredentialsRef.Name == "":
		c.skip(it, "spec.passwordCredentialsRef", "a Tenant needs the Secret of its admin's password")
		return
	}
	// Where 3scale-operator wrote the tenant's Secret (its defaults: <name>-<organization>, the
	// Tenant's namespace); apimsync's Secret has the same keys, adminURL and token.
	secretNS := cmp.Or(s.TenantSecretRef.Namespace, it.namespace)
	secretName := cmp.Or(s.TenantSecretRef.Name, strings.ToLower(it.name)+"-"+strings.ToLower(s.OrganizationName))
	if secretNS == "" {
		c.skip(it, "spec.tenantSecretRef.namespace", "neither it nor the Tenant names a namespace, and apimsync needs the namespace the tenant's Secret goes to")
		return
	}
	if s.TenantSecretRef.Name == "" || s.TenantSecretRef.Namespace == "" {
		c.info(it, "spec.tenantSecretRef", "3scale-operator's default, Secret %s/%s, is written out as spec.providerAccountSecret", secretNS, secretName)
	}
	master := MasterAccountSecretName(it.name)
	t := &v1alpha1.Tenant{TypeMeta: typeMeta("Tenant"), ObjectMeta: c.meta(it, it.name)}
	// 3scale-operator scheduled the tenant's deletion when its Tenant was deleted: Delete does the same.
	t.Spec = v1alpha1.TenantSpec{MasterAccountRef: v1alpha1.ProviderAccountRef{Name: master}, OrganizationName: s.OrganizationName,
		Username: s.Username, Email: s.Email, PasswordRef: v1alpha1.LocalSecretKeyRef{Name: s.PasswordCredentialsRef.Name, Key: "admin_password"},
		ProviderAccountSecret: v1alpha1.TenantSecretRef{Namespace: secretNS, Name: secretName}, DeletionPolicy: v1alpha1.DeletionPolicyDelete}
	c.localSecret(it, "spec.passwordCredentialsRef", s.PasswordCredentialsRef)
	c.info(it, "spec.passwordCredentialsRef", "the key admin_password of Secret %q (3scale-operator's key), now named in spec.passwordRef", s.PasswordCredentialsRef.Name)
	masterNS := cmp.Or(s.MasterCredentialsRef.Namespace, it.namespace)
	ns := ""
	if it.outNS != "" {
		ns = " -n " + it.outNS
	}
	masterNSFlag := ""
	if masterNS != "" {
		masterNSFlag = " -n " + masterNS
	}
	url := cmp.Or(s.SystemMasterURL, "<the master portal's URL>")
	c.changed(it, "spec.masterCredentialsRef", "%s", fmt.Sprintf("apimsync reads the master portal's URL and a master access token from one Secret of the Tenant's namespace, "+
		"keys adminURL and token; 3scale-operator read the URL from spec.systemMasterUrl and the token from key MASTER_ACCESS_TOKEN of Secret %q. "+
		"Make the Secret %q that spec.masterAccountRef names: kubectl%s create secret generic %s --from-literal=adminURL='%s' "+
		"--from-literal=token=\"$(kubectl%s get secret %s -o jsonpath='{.data.MASTER_ACCESS_TOKEN}' | base64 -d)\"",
		cmp.Or(s.MasterCredentialsRef.Name, "system-seed"), master, ns, master, url, masterNSFlag, cmp.Or(s.MasterCredentialsRef.Name, "system-seed")))
	if s.SystemMasterURL != "" && !validURL(s.SystemMasterURL, "https", "http") {
		c.changed(it, "spec.systemMasterUrl", "%q is not an absolute URL: the master-account Secret's adminURL must be one (https)", s.SystemMasterURL)
	}
	c.convertTenantInfo(it, s, secretNS, secretName)
	c.changed(it, "", "apimsync never adopts a tenant (porta shows a tenant's access token only when it makes it): applied for a tenant 3scale-operator "+
		"made, this Tenant makes nothing and is Invalid (SecretNotControlled) while the Secret %s/%s exists, since apimsync did not write it. Keep that Secret as the "+
		"team's provider-account Secret instead (remove its owner reference to the 3scale-operator Tenant first, or it is deleted with it); "+
		"apply this Tenant only to make the tenant anew", secretNS, secretName)
	c.emit(it, t)
}

// convertTenantInfo makes the tenant's TenantSettings of the Tenant's provider-account details
// (fromEmail, supportEmail, financeSupportEmail, siteAccessCode), in the namespace of the tenant's Secret
// and synced with it: the settings are the tenant's own, which its provider account writes. An empty
// support or finance email is dropped (porta shows a fallback for it, which a spec could not match).
func (c *converter) convertTenantInfo(it *item, s *srcTenantSpec, secretNS, secretName string) {
	details := &v1alpha1.ProviderDetails{FromEmail: s.FromEmail, SiteAccessCode: s.SiteAccessCode}
	for _, f := range []struct {
		field string
		v     *string
		into  **string
	}{{"supportEmail", s.SupportEmail, &details.SupportEmail}, {"financeSupportEmail", s.FinanceSupportEmail, &details.FinanceSupportEmail}} {
		switch {
		case f.v == nil:
		case *f.v == "":
			c.dropped(it, "spec."+f.field, "empty: porta shows a fallback for an empty one (the admin's email, or the support email), which TenantSettings cannot match; it is left as 3scale has it")
		default:
			*f.into = f.v
		}
	}
	if *details == (v1alpha1.ProviderDetails{}) {
		return
	}
	settings := &v1alpha1.TenantSettings{TypeMeta: typeMeta("TenantSettings"),
		ObjectMeta: metav1.ObjectMeta{Name: ObjectName(it.name, "settings"), Namespace: secretNS, Labels: maps.Clone(it.obj.GetLabels())},
		Spec:       v1alpha1.TenantSettingsSpec{Account: details, CommonSpec: v1alpha1.CommonSpec{ProviderAccountRef: &v1alpha1.ProviderAccountRef{Name: secretName}}}}
	if c.emit(it, settings) {
		c.changed(it, "spec", "its fromEmail, supportEmail, financeSupportEmail and siteAccessCode are TenantSettings %s/%s's spec.account, synced with the tenant's Secret %q",
			secretNS, settings.Name, secretName)
	}
}
