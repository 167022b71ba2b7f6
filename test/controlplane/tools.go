//go:build tools

// Package controlplane pins the commands this module builds: kube-apiserver and etcd.
package controlplane

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
