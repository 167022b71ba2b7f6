package engine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// TestLeaveToOwners: a dependant being deleted makes no call when an owner goes with its remote object,
// waits quietly for one that may go while its deletion grace lasts, and deletes its own otherwise.
func TestLeaveToOwners(t *testing.T) {
	plan := &v1alpha1.ApplicationPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "basic", DeletionTimestamp: &metav1.Time{Time: time.Now()}}}
	account, product := Owner{Kind: "DeveloperAccount", Name: "acme"}, Owner{Kind: "Product", Name: "petstore"}
	with := func(o Owner, f OwnerFate) Owner { o.Fate = f; return o }
	for name, tc := range map[string]struct {
		owners             []Owner
		grace              time.Duration
		wantLeft, wantWent bool
		wantWait           string // the waiting error's message, "" for none
	}{
		"an owner goes": {owners: []Owner{with(account, OwnerMayGo), with(product, OwnerGoes)}, grace: time.Second, wantLeft: true, wantWent: true},
		"an owner may go, within grace": {owners: []Owner{with(account, OwnerMayGo), with(product, OwnerStays)}, grace: 1500 * time.Millisecond, wantLeft: true,
			wantWait: "waiting a moment for DeveloperAccount acme to be deleted too (a prune), whose deletion in 3scale would take this one along"},
		"both may go, within grace": {owners: []Owner{with(account, OwnerMayGo), with(product, OwnerMayGo)}, grace: time.Second, wantLeft: true,
			wantWait: "waiting a moment for DeveloperAccount acme or Product petstore to be deleted too (a prune), whose deletion in 3scale would take this one along"},
		"an owner may go, past grace": {owners: []Owner{with(product, OwnerMayGo)}},
		"owners stay":                 {owners: []Owner{with(account, OwnerStays), with(product, OwnerStays)}, grace: time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			left, went, err := leaveToOwners(plan, tc.grace, tc.owners)
			if left != tc.wantLeft || went != tc.wantWent {
				t.Errorf("left %v, went with owner %v; want %v, %v", left, went, tc.wantLeft, tc.wantWent)
			}
			switch {
			case err == nil && tc.wantWait != "":
				t.Errorf("no error, want waiting/%s %q", v1alpha1.ReasonWaitingForOwner, tc.wantWait)
			case err != nil && tc.wantWait == "":
				t.Errorf("error %v, want none", err)
			case err != nil:
				if class, reason, message := Classify(err); class != ClassWaiting || reason != v1alpha1.ReasonWaitingForOwner || message != tc.wantWait {
					t.Errorf("error %v/%s %q, want waiting/%s %q", class, reason, message, v1alpha1.ReasonWaitingForOwner, tc.wantWait)
				}
			}
		})
	}
}
