// Command etcd is etcd's own server entry point (go.etcd.io/etcd/server/v3/etcdmain),
// built here because Debian's etcd is too old for the kube-apiserver we test against.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
