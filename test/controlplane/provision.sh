#!/usr/bin/env bash
# provision.sh DIR — builds the test control plane (kube-apiserver and etcd) from Go modules into DIR,
# once: if both binaries are there and were built from this module's go.sum, it does nothing.
# DIR is what envtest reads as KUBEBUILDER_ASSETS. Nothing is downloaded but Go modules.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:?usage: provision.sh DIR}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
stamp=$(cat "$here/go.mod" "$here/go.sum" "$here/provision.sh" "$here/etcd/main.go" | sha256sum | cut -c1-16)
if [ -x "$dest/kube-apiserver" ] && [ -x "$dest/etcd" ] && [ "$(cat "$dest/.stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$here/go.mod")
major=${k8s_version#v}; minor=${major#*.}; major=${major%%.*}; minor=${minor%%.*}
ldflags="-s -w \
 -X k8s.io/component-base/version.gitVersion=${k8s_version} \
 -X k8s.io/component-base/version.gitMajor=${major} \
 -X k8s.io/component-base/version.gitMinor=${minor} \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"
echo "provisioning the test control plane (kube-apiserver ${k8s_version} and etcd) into $dest; the first build takes minutes" >&2
cd "$here"
start=$(date +%s)
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$dest/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dest/etcd" ./etcd
echo "$stamp" > "$dest/.stamp"
echo "control plane ready in $(( $(date +%s) - start ))s" >&2
