package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// clientFor returns a client of the cluster kubectl's flags name, and the namespace they select.
func clientFor(flags *genericclioptions.ConfigFlags) (client.Client, string, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("cannot read the kubeconfig: %w", err)
	}
	namespace, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("cannot tell the namespace: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme()})
	if err != nil {
		return nil, "", fmt.Errorf("cannot reach the cluster: %w", err)
	}
	return c, namespace, nil
}

// scheme knows apimsync's kinds and Kubernetes' own.
func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	return s
}

// runtimeConvert fills a typed object from an unstructured one.
func runtimeConvert(u *unstructured.Unstructured, into runtime.Object) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true)
}
