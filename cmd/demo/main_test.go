package main

import (
	"testing"
)

// TestDemoConverges runs `DEMO_EXIT_WHEN_SYNCED=1 make demo` in-process: it must exit cleanly once every
// sample object is Synced.
func TestDemoConverges(t *testing.T) {
	t.Setenv("DEMO_EXIT_WHEN_SYNCED", "1")
	if err := run(); err != nil {
		t.Fatal(err)
	}
}
