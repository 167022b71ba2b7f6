package openapi_test

import (
	"os"
	"testing"

	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// The tests of this room run on the harness: a real kube-apiserver and etcd, the simulator as 3scale, and
// the manager wired as cmd/manager wires it.
// The manager trusts fluxSourceController as Flux's source-controller (source_test.go).
func TestMain(m *testing.M) {
	harness.FluxSourceHost = fluxSourceController.host()
	code := harness.Main(m)
	fluxSourceController.srv.Close()
	os.Exit(code)
}
