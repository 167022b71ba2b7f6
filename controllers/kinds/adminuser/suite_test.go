package adminuser_test

import (
	"os"
	"testing"

	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// The tests of this room run on the harness: a real kube-apiserver and etcd, the simulator as 3scale, and
// the manager wired as cmd/manager wires it.
func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
