package kit

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
)

// Reading the Secrets and ConfigMaps objects name, on demand (the manager caches only their metadata).

// SecretValue reads one key of a Secret in the namespace; a missing Secret or key makes the object wait.
func SecretValue(ctx context.Context, reader client.Reader, namespace string, ref *v1alpha1.LocalSecretKeyRef, usedFor string) (string, error) {
	v, _, err := SecretKey(ctx, reader, namespace, ref, usedFor)
	return v, err
}

// SecretKey is SecretValue with the Secret's version: its UID and resourceVersion, which change with
// its content and tell nothing of it.
func SecretKey(ctx context.Context, reader client.Reader, namespace string, ref *v1alpha1.LocalSecretKeyRef, usedFor string) (string, string, error) {
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

// ReadDocument returns a document given inline, or by ref from a ConfigMap or a Secret key of namespace;
// a missing ConfigMap or key makes the object wait (DocumentNotFound), a missing Secret or key too
// (SecretNotFound).
func ReadDocument(ctx context.Context, reader client.Reader, namespace, inline string, ref *v1alpha1.DocumentRef) (string, error) {
	switch {
	case ref == nil:
		return inline, nil
	case ref.SecretKeyRef != nil:
		return SecretValue(ctx, reader, namespace, ref.SecretKeyRef, "spec.documentRef.secretKeyRef")
	case ref.ConfigMapKeyRef != nil:
		var cm corev1.ConfigMap
		if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.ConfigMapKeyRef.Name}, &cm); err != nil {
			if apierrors.IsNotFound(err) {
				return "", engine.Waiting(v1alpha1.ReasonDocumentNotFound, "waiting for ConfigMap %q (spec.documentRef.configMapKeyRef) to be created", ref.ConfigMapKeyRef.Name)
			}
			return "", err
		}
		v, ok := cm.Data[ref.ConfigMapKeyRef.Key]
		if !ok {
			return "", engine.Waiting(v1alpha1.ReasonDocumentNotFound, "ConfigMap %q has no key %q (spec.documentRef.configMapKeyRef)", ref.ConfigMapKeyRef.Name, ref.ConfigMapKeyRef.Key)
		}
		return v, nil
	}
	return "", engine.Invalid(v1alpha1.ReasonInvalidSpec, "spec.documentRef names neither a ConfigMap nor a Secret")
}
