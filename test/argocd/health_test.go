package argocd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestHealthOfEachLifecycleState(t *testing.T) {
	script, err := Script(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	cases := map[string]struct {
		state      string
		generation int64
		deleting   bool
		want       string
	}{
		"Synced is Healthy":                          {state: v1alpha1.ConditionSynced, generation: 1, want: "Healthy"},
		"Synced at an older generation: Progressing": {state: v1alpha1.ConditionSynced, generation: 2, want: "Progressing"},
		"InSync is Progressing":                      {state: v1alpha1.ConditionInSync, generation: 1, want: "Progressing"},
		"Orphan is Progressing":                      {state: v1alpha1.ConditionOrphan, generation: 1, want: "Progressing"},
		"Invalid is Degraded":                        {state: v1alpha1.ConditionInvalid, generation: 1, want: "Degraded"},
		"being deleted is Progressing":               {state: v1alpha1.ConditionOrphan, generation: 1, deleting: true, want: "Progressing"},
		"no status yet is Progressing":               {generation: 1, want: "Progressing"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := &v1alpha1.Backend{ObjectMeta: metav1.ObjectMeta{Name: "pets", Generation: tc.generation}}
			if tc.deleting {
				b.DeletionTimestamp = &now
			}
			if tc.state != "" {
				engine.SetSyncState(&b.Status.CommonStatus, tc.state, "SomeReason", "the message", 1)
				b.Status.ObservedGeneration = 1
			}
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
			if err != nil {
				t.Fatal(err)
			}
			h, err := Evaluate(script, u)
			if err != nil {
				t.Fatal(err)
			}
			if h.Status != tc.want {
				t.Errorf("health = %s (%q), want %s", h.Status, h.Message, tc.want)
			}
			if tc.state != "" && !strings.Contains(h.Message, "the message") {
				t.Errorf("message %q does not carry the condition's message", h.Message)
			}
			if tc.deleting && !strings.HasPrefix(h.Message, "Deleting") {
				t.Errorf("message %q does not say the object is being deleted", h.Message)
			}
		})
	}
}

// TestConfigMapPatchCarriesTheScript keeps the argocd-cm snippet in step with health.lua.
func TestConfigMapPatchCarriesTheScript(t *testing.T) {
	script, err := Script(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "argocd", "argocd-cm-patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"Backend", "Product", "ApplicationPlan"} {
		key := "resource.customizations.health.capabilities.apimsync.io_" + kind
		if got := cm.Data[key]; strings.TrimSpace(got) != strings.TrimSpace(script) {
			t.Errorf("%s differs from config/argocd/health.lua; regenerate the snippet", key)
		}
	}
}
