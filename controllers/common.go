package controllers

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
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

// checkSoleOwner makes obj Invalid when another resource of the same kind, in any namespace, claims the
// same remote object and owns it first (see ownsBefore). list is an empty list of the kind; key is obj's owner key. It reads the
// manager's cache only.
func checkSoleOwner(ctx context.Context, reader client.Reader, obj syncedObject, list client.ObjectList, key string) error {
	if err := reader.List(ctx, list, client.MatchingFields{indexOwnerKey: key}); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	for _, item := range items {
		other, ok := item.(syncedObject)
		if !ok || other.GetUID() == obj.GetUID() || !other.GetDeletionTimestamp().IsZero() {
			continue
		}
		if ownsBefore(other, obj) {
			return engine.Invalid(engine.ReasonRemoteOwnedByOtherResource,
				"the same 3scale object (tenant, system name) is already managed by %s/%s; give this resource another systemName or remove one of them",
				other.GetNamespace(), other.GetName())
		}
	}
	return nil
}

// syncedObject is an apimsync object: a client.Object with the common status.
type syncedObject interface {
	client.Object
	v1alpha1.SyncedObject
}

// ownsBefore decides which of two resources claiming one remote object keeps it: the one that already
// holds it (has its remote id) over one that does not; otherwise the older one.
func ownsBefore(a, b syncedObject) bool {
	if holdsA, holdsB := a.GetRemoteID() != 0, b.GetRemoteID() != 0; holdsA != holdsB {
		return holdsA
	}
	return olderThan(a, b)
}

func olderThan(a, b client.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
}

// createOrAdopt creates a remote object; when 3scale answers that its system name is taken — typically
// because the answer to an earlier create was lost — it adopts the existing one instead of duplicating it.
func createOrAdopt[T any](kind, systemName string, create, find func() (*T, error)) (*T, error) {
	created, err := create()
	if tsclient.HasAlreadyBeenTaken(err, "system_name") {
		created, err = find()
		if err == nil && created == nil {
			err = fmt.Errorf("3scale says system name %q is taken but lists no such %s", systemName, kind)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot create %s %q: %w", kind, systemName, err)
	}
	return created, nil
}
