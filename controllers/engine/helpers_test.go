package engine

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func testutilCounter(t *testing.T, kind string) float64 {
	t.Helper()
	return testutil.ToFloat64(DriftRepairs.WithLabelValues(kind))
}

// reconcileTerminal returns the terminal-error sentinel when err is terminal, nil otherwise.
func reconcileTerminal(err error) error {
	if errors.Is(err, reconcile.TerminalError(nil)) {
		return reconcile.TerminalError(nil)
	}
	return nil
}
