package engine

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func testutilCounter(t *testing.T, kind string) float64 {
	t.Helper()
	return testutil.ToFloat64(DriftRepairs.WithLabelValues(kind))
}
