package controllers_test

import (
	"os"
	"testing"

	"github.com/apimsync/apimsync/controllers/internal/harness"
)

// The tests at controllers' top are those that span kinds (cascade, deletion order, convergence,
// resilience, identity, export and diff of a whole tenant); each kind's own tests live in its room. They
// run on the harness: a real kube-apiserver and etcd, the simulator as 3scale, and the manager wired as
// cmd/manager wires it.
func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
