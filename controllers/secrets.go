package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
)

// Reading the Secrets objects name: their values on demand (the manager caches only Secrets'
// metadata), and which provider-account Secret an object syncs with.

// secretValue reads one key of a Secret in the namespace; a missing Secret or key makes the object wait.
func secretValue(ctx context.Context, reader client.Reader, namespace string, ref *v1alpha1.LocalSecretKeyRef, usedFor string) (string, error) {
	v, _, err := secretKey(ctx, reader, namespace, ref, usedFor)
	return v, err
}

// secretKey is secretValue with the Secret's version: its UID and resourceVersion, which change with
// its content and tell nothing of it.
func secretKey(ctx context.Context, reader client.Reader, namespace string, ref *v1alpha1.LocalSecretKeyRef, usedFor string) (string, string, error) {
	var secret corev1.Secret
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return "", "", engine.Waiting(v1alpha1.ReasonSecretNotFound, "waiting for Secret %q (%s) to be created", ref.Name, usedFor)
		}
		return "", "", err
	}
	v, ok := secret.Data[ref.Key]
	if !ok {
		return "", "", engine.Waiting(v1alpha1.ReasonSecretNotFound, "Secret %q has no key %q (%s)", ref.Name, ref.Key, usedFor)
	}
	return string(v), string(secret.UID) + "/" + secret.ResourceVersion, nil
}

// secretForSession returns the provider-account Secret to use: while the object is being deleted, the
// one it was synced with (the spec may have moved on), otherwise the spec's.
func secretForSession(obj engine.Object, fromSpec string) string {
	if !obj.GetDeletionTimestamp().IsZero() && obj.GetSyncStatus().ProviderAccountSecret != "" {
		return obj.GetSyncStatus().ProviderAccountSecret
	}
	return fromSpec
}
