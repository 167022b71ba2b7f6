package controllers

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/controllers/engine"
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
)

// Condition reasons of the per-kind syncers.
const (
	ReasonInvalidSpec      = "InvalidSpec"
	ReasonBackendNotFound  = "BackendNotFound"
	ReasonBackendNotSynced = "BackendNotSynced"
	ReasonBackendInvalid   = "BackendInvalid"
	ReasonBackendDeleting  = "BackendDeleting"
	ReasonProductNotFound  = "ProductNotFound"
	ReasonProductNotSynced = "ProductNotSynced"
	ReasonProductInvalid   = "ProductInvalid"
	ReasonProductDeleting  = "ProductDeleting"
	ReasonMetricNotFound   = "MetricNotFound"
	ReasonSecretNotFound   = "SecretNotFound"
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

// checkSoleOwner makes obj Invalid when an older resource of the same kind, in any namespace, already
// claims the same remote object. list is an empty list of the kind; key is obj's owner key. It reads the
// manager's cache only.
func checkSoleOwner(ctx context.Context, reader client.Reader, obj client.Object, list client.ObjectList, key string) error {
	if err := reader.List(ctx, list, client.MatchingFields{indexOwnerKey: key}); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	for _, item := range items {
		other, ok := item.(client.Object)
		if !ok || other.GetUID() == obj.GetUID() || !other.GetDeletionTimestamp().IsZero() {
			continue
		}
		if olderThan(other, obj) {
			return engine.Invalid(engine.ReasonRemoteOwnedByOtherResource,
				"the same 3scale object (tenant, system name) is already managed by %s/%s; give this resource another systemName or remove one of them",
				other.GetNamespace(), other.GetName())
		}
	}
	return nil
}

func olderThan(a, b client.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
}
