package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/test/testenv"
)

// NewNamespace creates a namespace for one test, with its own 3scale tenant in the simulator and the
// default provider-account Secret's contents (not created: tests choose when).
func NewNamespace(t *testing.T) string {
	t.Helper()
	return newNamespace(t, nil)
}

// NewAdmissionNamespace is NewNamespace, with the objects created in it going through the validating
// webhook (testenv.AdmissionLabel), as in an installation.
func NewAdmissionNamespace(t *testing.T) string {
	t.Helper()
	return newNamespace(t, map[string]string{testenv.AdmissionLabel: "true"})
}

func newNamespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + "-" + fmt.Sprint(time.Now().UnixNano()%100000)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := K8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

// Create creates the objects, failing the test on an error.
func Create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := K8s.Create(context.Background(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// Update reads obj, changes it and writes it, again on a conflict with the controllers' writes.
func Update(t *testing.T, obj client.Object, change func()) {
	t.Helper()
	UpdateWith(t, K8s, obj, change)
}

// conflictBackoff is how an update retries on a conflict with the manager's writes (its status writes
// change the object's resourceVersion too): client-go's DefaultRetry gives up after about 50 ms, which a
// manager busy on a loaded machine outlasts; this one keeps trying for about 10 s. No Cap: wait.Backoff
// ends its steps once a delay reaches the cap, which cut the 10 s it was meant to give to about 2.5 s (a
// CI run failed on it).
var conflictBackoff = wait.Backoff{Steps: 14, Duration: 20 * time.Millisecond, Factor: 1.5, Jitter: 0.1}

// UpdateWith is Update through the client c (one that keeps the admission warnings of its writes).
func UpdateWith(t *testing.T, c client.Client, obj client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(conflictBackoff, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return c.Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// WantValidation checks a Validator's answer err for the case name: valid when want is "", else Invalid
// with reason and exactly the message want.
func WantValidation(t *testing.T, name string, err error, reason, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v, want valid", name, err)
	case want != "" && err == nil:
		t.Errorf("%s: valid, want Invalid: %s", name, want)
	case want != "":
		if class, got, msg := engine.Classify(err); class != engine.ClassInvalid || got != reason || msg != want {
			t.Errorf("%s: %v, want Invalid (%s): %s", name, err, reason, want)
		}
	}
}

// DeleteObjects deletes objects; one already gone (its owner deleted it first) is fine.
func DeleteObjects(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := K8s.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
			t.Fatalf("delete %s: %v", o.GetName(), err)
		}
	}
}

// SyncState reads an object and returns its sync state and the reason and message of that condition.
func SyncState(t *testing.T, obj engine.Object) (state, reason, message string) {
	t.Helper()
	if err := K8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		return "error: " + err.Error(), "", ""
	}
	st := obj.GetSyncStatus()
	for _, ct := range v1alpha1.SyncConditions {
		if c := meta.FindStatusCondition(st.Conditions, ct); c != nil && c.Status == metav1.ConditionTrue {
			return ct, c.Reason, c.Message
		}
	}
	return "", "", ""
}

// Eventually polls cond until it returns "" (success) or the timeout passes, then fails with its last word.
func Eventually(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if last = cond(); last == "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("not within %s: %s", timeout, last)
}

// WaitState waits until every object is in the sync state given at its current generation.
func WaitState(t *testing.T, want string, objs ...engine.Object) {
	t.Helper()
	Eventually(t, WaitTimeout, func() string {
		for _, o := range objs {
			state, reason, msg := SyncState(t, o)
			if state != want || (want == v1alpha1.ConditionSynced && o.GetSyncStatus().ObservedGeneration != o.GetGeneration()) {
				return fmt.Sprintf("%T %s is %s (%s: %s), want %s", o, o.GetName(), state, reason, msg, want)
			}
		}
		return ""
	})
}

// WaitReason waits for a sync state with a given reason.
func WaitReason(t *testing.T, obj engine.Object, state, reason string) {
	t.Helper()
	Eventually(t, WaitTimeout, func() string {
		s, r, m := SyncState(t, obj)
		if s != state || r != reason {
			return obj.GetName() + " is " + s + "/" + r + ": " + m + "; want " + state + "/" + reason
		}
		return ""
	})
}

// EditAndWait reads obj, changes it, updates it (again on a conflict with the controllers' status
// writes), waits until it is Synced at its new generation, and a second more for any call that follows.
func EditAndWait(t *testing.T, obj engine.Object, change func()) {
	t.Helper()
	Update(t, obj, change)
	WaitState(t, v1alpha1.ConditionSynced, obj)
	time.Sleep(time.Second)
}

// WaitGone waits until the objects no longer exist.
func WaitGone(t *testing.T, objs ...client.Object) {
	t.Helper()
	Eventually(t, WaitTimeout, func() string {
		for _, o := range objs {
			err := K8s.Get(context.Background(), client.ObjectKeyFromObject(o), o)
			if err == nil {
				return fmt.Sprintf("%T %s still exists (finalizers %v)", o, o.GetName(), o.GetFinalizers())
			}
			if !apierrors.IsNotFound(err) {
				return err.Error()
			}
		}
		return ""
	})
}

// EventsOf returns "reason: note" of the events about one object.
func EventsOf(t *testing.T, obj client.Object) []string {
	t.Helper()
	var list eventsv1.EventList
	if err := K8s.List(context.Background(), &list, client.InNamespace(obj.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == obj.GetName() && e.Regarding.Kind == fmt.Sprintf("%T", obj)[len("*v1alpha1."):] {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	return out
}

// WantEvent waits for an event of obj whose "Reason: note" contains want, and reports an error with the
// events seen when none comes: the event recorder sends events asynchronously, in no set order.
func WantEvent(t *testing.T, obj client.Object, want string) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		ev := strings.Join(EventsOf(t, obj), "\n")
		if strings.Contains(ev, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: no event %q among: %s", obj.GetName(), want, ev)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SyncNow asks for a drift check of obj (the sync-now annotation set to value) and waits until it is done.
func SyncNow(t *testing.T, obj engine.Object, value string) {
	t.Helper()
	Update(t, obj, func() { obj.SetAnnotations(map[string]string{v1alpha1.SyncNowAnnotation: value}) })
	Eventually(t, WaitTimeout, func() string {
		if err := K8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil || obj.GetSyncStatus().SyncNow != value {
			return "the drift check has not run"
		}
		return ""
	})
}
