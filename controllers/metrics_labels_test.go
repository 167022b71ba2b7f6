package controllers

import "testing"

// TestTenantLabelsAreBounded: the first tenants keep their own label, later ones share "other", and a
// tenant keeps the label it got.
func TestTenantLabelsAreBounded(t *testing.T) {
	l := &tenantLabels{max: 2}
	for _, tc := range []struct{ tenant, want string }{
		{"a.example.com", "a.example.com"}, {"b.example.com", "b.example.com"}, {"c.example.com", otherTenants},
		{"a.example.com", "a.example.com"}, {"d.example.com", otherTenants},
	} {
		if got := l.of(tc.tenant); got != tc.want {
			t.Errorf("label of %s = %q, want %q", tc.tenant, got, tc.want)
		}
	}
}
