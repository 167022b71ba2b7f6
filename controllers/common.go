package controllers

import (
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// Field indexes the controllers register; watches use them to find the objects a change concerns.
const (
	// indexSecretRefs indexes objects by the names of the Secrets they read (provider account, policy
	// configuration, OIDC issuer).
	indexSecretRefs = "apimsync.secretRefs"
	// indexBackendRefs indexes Products by the Backends of spec.backendUsages, and ApplicationPlans by the
	// Backends their limits and pricing rules name.
	indexBackendRefs = "apimsync.backendRefs"
	// indexProductRef indexes ApplicationPlans by spec.productRef.
	indexProductRef = "apimsync.productRef"
	// indexOwnerKey indexes objects by the remote object they own: tenant, scope and system name.
	indexOwnerKey = "apimsync.ownerKey"
	// indexAccountRef indexes Applications by spec.accountRef.
	indexAccountRef = "apimsync.accountRef"
	// indexPlanRef indexes Applications by spec.planRef.
	indexPlanRef = "apimsync.planRef"
	// indexConfigMapRefs indexes ActiveDocs by the ConfigMap they read their document from.
	indexConfigMapRefs = "apimsync.configMapRefs"
	// indexCustomPolicyRefs indexes Products by the custom policies of their chain (v1alpha1.PolicyKey).
	indexCustomPolicyRefs = "apimsync.customPolicyRefs"
	// indexPolicyKey indexes CustomPolicyDefinitions by the policy they define (v1alpha1.PolicyKey).
	indexPolicyKey = "apimsync.policyKey"
)

// systemNameOf returns the system name given in the spec, or one derived from the object's name (which
// never changes): dots become underscores, as 3scale system names take no dots.
func systemNameOf(specSystemName, objectName string) string {
	if specSystemName != "" {
		return specSystemName
	}
	return strings.ReplaceAll(objectName, ".", "_")
}

// ownerKey identifies a remote object across the cluster: tenant, scope (e.g. the product of a plan) and
// system name.
func ownerKey(tenant, scope, systemName string) string {
	return tenant + "|" + scope + "|" + systemName
}

// syncedObject is an apimsync object: a client.Object with the common status.
type syncedObject interface {
	client.Object
	v1alpha1.SyncedObject
}

func olderThan(a, b client.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
}

// itoa64 formats an id.
func itoa64(i int64) string { return strconv.FormatInt(i, 10) }
