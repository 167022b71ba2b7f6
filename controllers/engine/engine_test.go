package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// fakeSyncer is a TypedSyncer made of funcs; nil funcs succeed. It counts calls (its Read as "Observe").
type fakeSyncer struct {
	// lastBackground: the last Observe was made as background work (a drift check).
	lastBackground bool
	hash           string
	connect        func() error
	resolve        func() error
	observe        func(s *Session) (Observation, error)
	create         func(b *v1alpha1.Backend) error
	update         func() error
	delete         func() error
	calls          map[string]int
	lastS          *Session
	lastObj        *v1alpha1.Backend
	tenant         string // default acme-admin.example.com
	version        string // the provider account's version
}

// Observation is what the fake's observe finds: whether the remote object exists and matches, and the
// id of one found that the resource does not record (Adopted: the engine announces it as an adoption).
type Observation struct {
	Exists, UpToDate bool
	Report
}

// fakeSnapshot is the fake's remote state: its id and whether it matches.
type fakeSnapshot struct {
	id       int64
	upToDate bool
}

func (f *fakeSnapshot) RemoteID() int64 { return f.id }
func (f *fakeSnapshot) Clone() *fakeSnapshot {
	c := *f
	return &c
}

var _ TypedSyncer[*v1alpha1.Backend, struct{}, *fakeSnapshot] = &fakeSyncer{}

func (f *fakeSyncer) count(name string) {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[name]++
}

func (f *fakeSyncer) Connect(_ context.Context, _ *v1alpha1.Backend) (*Session, error) {
	f.count("Connect")
	if f.connect != nil {
		if err := f.connect(); err != nil {
			return nil, err
		}
	}
	tenant := f.tenant
	if tenant == "" {
		tenant = "acme-admin.example.com"
	}
	return &Session{Tenant: tenant, SecretName: "threescale-provider-account", AccountVersion: f.version}, nil
}

func (f *fakeSyncer) SystemName(*v1alpha1.Backend) string { return "pets" }

func (f *fakeSyncer) Resolve(context.Context, *v1alpha1.Backend, *Session) (Resolved[struct{}], error) {
	f.count("Resolve")
	if f.resolve != nil {
		if err := f.resolve(); err != nil {
			return Resolved[struct{}]{}, err
		}
	}
	return Resolved[struct{}]{Hash: f.hash}, nil
}

func (f *fakeSyncer) Read(ctx context.Context, b *v1alpha1.Backend, s *Session, _ struct{}) (*fakeSnapshot, bool, error) {
	f.count("Observe")
	f.lastS, f.lastObj, f.lastBackground = s, b, tsclient.IsBackground(ctx)
	o := Observation{Exists: true, UpToDate: true}
	if f.observe != nil {
		var err error
		if o, err = f.observe(s); err != nil {
			return nil, false, err
		}
	}
	if !o.Exists {
		return nil, false, nil
	}
	id := o.Adopted
	if id == 0 {
		id = b.Status.BackendID
	}
	return &fakeSnapshot{id: id, upToDate: o.UpToDate}, true, nil
}

func (f *fakeSyncer) Compare(_ context.Context, _ *v1alpha1.Backend, _ *Session, _ struct{}, snap *fakeSnapshot) (bool, error) {
	return snap.upToDate, nil
}

func (f *fakeSyncer) Create(_ context.Context, b *v1alpha1.Backend, _ *Session, _ struct{}) (Created[*fakeSnapshot], error) {
	f.count("Create")
	b.Status.BackendID = 42
	if f.create != nil {
		if err := f.create(b); err != nil {
			return Created[*fakeSnapshot]{}, err
		}
	}
	return Created[*fakeSnapshot]{Snapshot: &fakeSnapshot{id: b.Status.BackendID, upToDate: true}}, nil
}

func (f *fakeSyncer) Update(context.Context, *v1alpha1.Backend, *Session, struct{}, *fakeSnapshot) (*fakeSnapshot, error) {
	f.count("Update")
	if f.update != nil {
		return nil, f.update()
	}
	return nil, nil
}

func (f *fakeSyncer) Delete(_ context.Context, _ *v1alpha1.Backend, s *Session) error {
	f.count("Delete")
	f.lastS = s
	if f.delete != nil {
		return f.delete()
	}
	return nil
}

type harness struct {
	t      *testing.T
	client client.Client
	syncer *fakeSyncer
	rec    *Reconciler[*v1alpha1.Backend, struct{}, *fakeSnapshot]
	events *events.FakeRecorder
	now    time.Time
	key    types.NamespacedName
}

func newHarness(t *testing.T, obj *v1alpha1.Backend) *harness {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1alpha1.Backend{}).WithObjects(obj).Build()
	h := &harness{t: t, client: c, syncer: &fakeSyncer{hash: "h1"}, events: events.NewFakeRecorder(100),
		now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), key: client.ObjectKeyFromObject(obj)}
	h.rec = &Reconciler[*v1alpha1.Backend, struct{}, *fakeSnapshot]{
		Client: c, Kind: "Backend", New: func() *v1alpha1.Backend { return &v1alpha1.Backend{} },
		Syncer: h.syncer, Recorder: h.events, Backoff: NewOrphanBackoff(time.Second, time.Minute),
		DriftCheckPeriod: time.Hour, Now: func() time.Time { return h.now }, States: NewStateTracker(),
	}
	return h
}

func (h *harness) reconcile() (ctrl.Result, error) {
	h.t.Helper()
	return h.rec.Reconcile(context.Background(), ctrl.Request{NamespacedName: h.key})
}

func (h *harness) get() *v1alpha1.Backend {
	h.t.Helper()
	var b v1alpha1.Backend
	if err := h.client.Get(context.Background(), h.key, &b); err != nil {
		h.t.Fatal(err)
	}
	return &b
}

// state returns the True sync condition with its reason, and the kstatus conditions that are set.
func state(b *v1alpha1.Backend) []string {
	var out []string
	for _, c := range b.Status.Conditions {
		if c.Status == metav1.ConditionTrue {
			out = append(out, c.Type+"/"+c.Reason)
		}
	}
	return out
}

func newBackend() *v1alpha1.Backend {
	return &v1alpha1.Backend{
		ObjectMeta: metav1.ObjectMeta{Name: "pets", Namespace: "team-a", Generation: 1},
		Spec:       v1alpha1.BackendSpec{Name: "Pets", PrivateBaseURL: "https://pets.internal"},
	}
}

func drainEvents(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestFirstSyncCreatesThenSteadyStateMakesNoRemoteCall(t *testing.T) {
	h := newHarness(t, newBackend())
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: false}, nil }

	res, err := h.reconcile()
	if err != nil {
		t.Fatal(err)
	}
	b := h.get()
	if !controllerutil.ContainsFinalizer(b, Finalizer) {
		t.Errorf("finalizer missing after first sync: %v", b.Finalizers)
	}
	if diff := cmp.Diff([]string{"Synced/Synced", "Ready/Synced"}, state(b)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	for _, c := range b.Status.Conditions {
		if c.ObservedGeneration != 1 {
			t.Errorf("condition %s has observedGeneration %d, want 1", c.Type, c.ObservedGeneration)
		}
	}
	want := v1alpha1.CommonStatus{ObservedGeneration: 1, TenantHost: "acme-admin.example.com", SystemName: "pets", SyncedHash: "h1",
		ProviderAccountSecret: "threescale-provider-account", LastSyncTime: &metav1.Time{Time: h.now}, CreateSettled: "acme-admin.example.com#1#"}
	got := b.Status.CommonStatus
	got.Conditions = nil
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if b.Status.BackendID != 42 {
		t.Errorf("backendID = %d, want 42", b.Status.BackendID)
	}
	due := driftSlot(b.UID, h.now.Add(30*time.Minute), time.Hour)
	if res.RequeueAfter != due.Sub(h.now) || res.RequeueAfter < 30*time.Minute || res.RequeueAfter >= 90*time.Minute {
		t.Errorf("requeue after %v, want the object's drift-check slot %v (between half a period and one and a half)", res.RequeueAfter, due.Sub(h.now))
	}
	if ev := drainEvents(h.events); len(ev) != 0 {
		t.Errorf("events = %q, want none: a first Synced is told by the condition alone", ev)
	}

	// Nothing changed: no Observe, no Create, no Update, no event.
	h.syncer.calls = nil
	h.now = h.now.Add(10 * time.Minute)
	res, err = h.reconcile()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"Connect": 1, "Resolve": 1}, h.syncer.calls); diff != "" {
		t.Errorf("calls in steady state (-want +got):\n%s", diff)
	}
	if want := due.Sub(h.now); res.RequeueAfter != want {
		t.Errorf("requeue after %v, want the time left until the drift-check slot (%v)", res.RequeueAfter, want)
	}
	if ev := drainEvents(h.events); len(ev) != 0 {
		t.Errorf("events in steady state = %q, want none", ev)
	}
}

func TestChangedHashObservesAndUpdates(t *testing.T) {
	h := newHarness(t, newBackend())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	h.syncer.hash = "h2"
	h.syncer.calls = nil
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: true, UpToDate: false}, nil }
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.syncer.calls["Observe"] != 1 || h.syncer.calls["Update"] != 1 || h.syncer.calls["Create"] != 0 {
		t.Errorf("calls = %v, want one Observe and one Update", h.syncer.calls)
	}
	if h.syncer.lastS.ForceRead || h.syncer.lastBackground {
		t.Errorf("a spec change must be allowed to use cached snapshots, and is not background work (forceRead %v, background %v)",
			h.syncer.lastS.ForceRead, h.syncer.lastBackground)
	}
	if got := h.get().Status.SyncedHash; got != "h2" {
		t.Errorf("syncedHash = %q, want h2", got)
	}
}

func TestErrorClasses(t *testing.T) {
	cases := map[string]struct {
		err         error
		wantState   []string
		wantErr     bool
		wantRequeue time.Duration
		wantObsGen  int64
	}{
		"waiting makes the object Orphan and requeues with backoff": {
			err:         Waiting("BackendNotFound", "backend %q does not exist", "pets"),
			wantState:   []string{"Orphan/BackendNotFound", "Reconciling/Orphan"},
			wantRequeue: time.Second,
		},
		"invalid is terminal: no error, no requeue, the generation is handled": {
			err:        Invalid(v1alpha1.ReasonProviderAccountInvalid, "no token"),
			wantState:  []string{"Invalid/ProviderAccountInvalid", "Stalled/Invalid"},
			wantObsGen: 1,
		},
		"retryable keeps the object InSync and returns the error": {
			err:       errors.New("connection refused"),
			wantState: []string{"InSync/RemoteUnavailable", "Reconciling/InSync"},
			wantErr:   true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, newBackend())
			h.syncer.resolve = func() error { return tc.err }
			res, err := h.reconcile()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tc.wantErr)
			}
			// Backoff has 10% jitter.
			if d := res.RequeueAfter - tc.wantRequeue; d < -tc.wantRequeue/5 || d > tc.wantRequeue/5 {
				t.Errorf("requeue after %v, want about %v", res.RequeueAfter, tc.wantRequeue)
			}
			b := h.get()
			if diff := cmp.Diff(tc.wantState, state(b)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if b.Status.ObservedGeneration != tc.wantObsGen {
				t.Errorf("observedGeneration = %d, want %d", b.Status.ObservedGeneration, tc.wantObsGen)
			}
			if h.syncer.calls["Observe"] != 0 {
				t.Errorf("a failed Resolve must not reach 3scale")
			}
			if ev := drainEvents(h.events); len(ev) != 1 {
				t.Errorf("events = %q, want one for the transition", ev)
			}
			// The same error again: same state, no new event.
			if _, err := h.reconcile(); (err != nil) != tc.wantErr {
				t.Fatalf("second reconcile err = %v", err)
			}
			if ev := drainEvents(h.events); len(ev) != 0 {
				t.Errorf("events on a repeated error = %q, want none", ev)
			}
		})
	}
}

func TestOrphanBackoffGrowsAndResetsOnSuccess(t *testing.T) {
	h := newHarness(t, newBackend())
	waiting := true
	h.syncer.resolve = func() error {
		if waiting {
			return Waiting("BackendNotSynced", "waiting")
		}
		return nil
	}
	var delays []time.Duration
	for range 4 {
		res, err := h.reconcile()
		if err != nil {
			t.Fatal(err)
		}
		delays = append(delays, res.RequeueAfter)
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] <= delays[i-1] {
			t.Errorf("backoff did not grow: %v", delays)
		}
	}
	waiting = false
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := meta.IsStatusConditionTrue(h.get().Status.Conditions, v1alpha1.ConditionSynced); !got {
		t.Fatalf("not Synced once the dependency is there")
	}
	waiting = true
	res, _ := h.reconcile()
	if res.RequeueAfter > 2*time.Second {
		t.Errorf("backoff not reset after a success: %v", res.RequeueAfter)
	}
}

func TestDriftCheckReadsAndRepairs(t *testing.T) {
	h := newHarness(t, newBackend())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	h.now = h.now.Add(2 * time.Hour)
	h.syncer.calls = nil
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: true, UpToDate: false}, nil }
	before := testutilCounter(t, "Backend")
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.syncer.calls["Observe"] != 1 || h.syncer.calls["Update"] != 1 || !h.syncer.lastS.ForceRead || !h.syncer.lastBackground {
		t.Errorf("drift check: calls = %v, forceRead = %v, background = %v; want a forced Observe and an Update, as background work",
			h.syncer.calls, h.syncer.lastS.ForceRead, h.syncer.lastBackground)
	}
	if got := testutilCounter(t, "Backend") - before; got != 1 {
		t.Errorf("drift repairs metric grew by %v, want 1", got)
	}
	found := false
	for _, e := range drainEvents(h.events) {
		found = found || strings.Contains(e, "DriftRepaired")
	}
	if !found {
		t.Errorf("no DriftRepaired event")
	}
}

func TestSyncNowAnnotationForcesARead(t *testing.T) {
	h := newHarness(t, newBackend())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	b := h.get()
	b.Annotations = map[string]string{v1alpha1.SyncNowAnnotation: "1"}
	if err := h.client.Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	h.syncer.calls = nil
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.syncer.calls["Observe"] != 1 || !h.syncer.lastS.ForceRead {
		t.Errorf("sync-now: calls = %v; want a forced Observe", h.syncer.calls)
	}
	if got := h.get().Status.SyncNow; got != "1" {
		t.Errorf("status.syncNow = %q, want 1", got)
	}
	h.syncer.calls = nil
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.syncer.calls["Observe"] != 0 {
		t.Errorf("the same sync-now value forced another read")
	}
}

func TestDeletion(t *testing.T) {
	cases := map[string]struct {
		policy       v1alpha1.DeletionPolicy
		deleteErr    error
		wantDeletes  int
		wantGone     bool
		wantStateHas string
	}{
		"Delete removes the remote object, then the finalizer": {policy: v1alpha1.DeletionPolicyDelete, wantDeletes: 1, wantGone: true},
		"Retain keeps the remote object":                       {policy: v1alpha1.DeletionPolicyRetain, wantDeletes: 0, wantGone: true},
		"a blocked delete keeps the finalizer and waits": {policy: v1alpha1.DeletionPolicyDelete, wantDeletes: 1,
			deleteErr: Waiting(v1alpha1.ReasonDeletionBlocked, "used by product x"), wantStateHas: "Orphan/DeletionBlocked"},
		"porta's refusal of a plan with applications waits": {policy: v1alpha1.DeletionPolicyDelete, wantDeletes: 1,
			deleteErr: &tsclient.APIError{StatusCode: 422, Method: "DELETE", Endpoint: "/admin/api/services/{service_id}/application_plans/{id}.json",
				Errors: map[string][]string{"base": {"This application plan cannot be deleted"}}}, wantStateHas: "Orphan/DeletionBlocked"},
		"a 403 without body on delete (quota, last product) waits": {policy: v1alpha1.DeletionPolicyDelete, wantDeletes: 1,
			deleteErr: &tsclient.APIError{StatusCode: 403, Method: "DELETE", Endpoint: "/admin/api/services/{id}.json"}, wantStateHas: "Orphan/DeletionBlocked"},
		"an object that never held a remote object deletes nothing": {policy: v1alpha1.DeletionPolicyDelete, wantDeletes: 0, wantGone: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := newBackend()
			obj.Spec.DeletionPolicy = tc.policy
			h := newHarness(t, obj)
			if !strings.Contains(name, "never held") {
				h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: false}, nil }
			}
			if _, err := h.reconcile(); err != nil {
				t.Fatal(err)
			}
			if err := h.client.Delete(context.Background(), h.get()); err != nil {
				t.Fatal(err)
			}
			h.syncer.delete = func() error { return tc.deleteErr }
			if _, err := h.reconcile(); err != nil {
				t.Fatal(err)
			}
			if h.syncer.calls["Delete"] != tc.wantDeletes {
				t.Errorf("Delete called %d times, want %d", h.syncer.calls["Delete"], tc.wantDeletes)
			}
			var b v1alpha1.Backend
			err := h.client.Get(context.Background(), h.key, &b)
			if gone := err != nil; gone != tc.wantGone {
				t.Fatalf("object gone = %v, want %v", gone, tc.wantGone)
			}
			if tc.wantStateHas != "" && !strings.Contains(strings.Join(state(&b), " "), tc.wantStateHas) {
				t.Errorf("state = %v, want %s", state(&b), tc.wantStateHas)
			}
			if tc.wantStateHas != "" && !strings.HasPrefix(meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionOrphan).Message, "deleting:") {
				t.Errorf("message does not say the object is being deleted")
			}
		})
	}
}

// createdThenDeleted returns a harness whose Backend (deletion policy Delete, with the extra finalizers
// given) was created remotely by a first reconcile and then deleted in Kubernetes.
func createdThenDeleted(t *testing.T, finalizers ...string) *harness {
	t.Helper()
	obj := newBackend()
	obj.Spec.DeletionPolicy = v1alpha1.DeletionPolicyDelete
	obj.Finalizers = append(obj.Finalizers, finalizers...)
	h := newHarness(t, obj)
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: false}, nil }
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if err := h.client.Delete(context.Background(), h.get()); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRemoteDeleteIsNotRepeatedAfterAFinalizerConflict: when removing the finalizer conflicts (another
// writer changed the object), the retry removes it without deleting the remote object a second time.
func TestRemoteDeleteIsNotRepeatedAfterAFinalizerConflict(t *testing.T) {
	h := createdThenDeleted(t)
	conflicts := 1
	h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			if conflicts > 0 {
				conflicts--
				return apierrors.NewConflict(schema.GroupResource{Resource: "backends"}, o.GetName(), errors.New("modified"))
			}
			return c.Patch(ctx, o, p, opts...)
		}})
	for range 2 {
		if _, err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
	}
	if h.syncer.calls["Delete"] != 1 {
		t.Errorf("Delete called %d times, want 1", h.syncer.calls["Delete"])
	}
	if err := h.client.Get(context.Background(), h.key, &v1alpha1.Backend{}); !apierrors.IsNotFound(err) {
		t.Errorf("object still there after the retry: %v", err)
	}
}

// TestStaleCopyAfterTheFinalizerGoesDeletesNothing: a reconcile that still gets the copy from before
// the finalizer was removed (the cache lags) does not delete the remote object again.
func TestStaleCopyAfterTheFinalizerGoesDeletesNothing(t *testing.T) {
	h := createdThenDeleted(t, "example.com/keep") // keeps the object readable after ours goes
	stale := h.get()
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			stale.DeepCopyInto(o.(*v1alpha1.Backend))
			return nil
		}})
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.syncer.calls["Delete"] != 1 {
		t.Errorf("Delete called %d times, want 1", h.syncer.calls["Delete"])
	}
}

// TestObjectHeldByAnotherFinalizerIsNotRequeued: once apimsync's finalizer is gone, an object that another
// finalizer keeps (Argo CD's foreground prune, another controller) is not looked at again and again: the
// current copy (without our finalizer) needs nothing more, and only its own changes wake it.
func TestObjectHeldByAnotherFinalizerIsNotRequeued(t *testing.T) {
	h := createdThenDeleted(t, "example.com/keep")
	if _, err := h.reconcile(); err != nil { // deletes remotely, removes our finalizer
		t.Fatal(err)
	}
	if b := h.get(); controllerutil.ContainsFinalizer(b, Finalizer) || len(b.Finalizers) != 1 {
		t.Fatalf("finalizers after the deletion: %v", b.Finalizers)
	}
	for i := range 3 {
		res, err := h.reconcile()
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != 0 {
			t.Fatalf("reconcile %d of an object held only by another finalizer requeued after %s", i+1, res.RequeueAfter)
		}
	}
	if h.syncer.calls["Delete"] != 1 || h.syncer.calls["Connect"] != 2 { // the create's and the deletion's
		t.Errorf("calls after the deletion: %v", h.syncer.calls)
	}
}

func TestNeverSyncedObjectIsDeletedWithoutRemoteCall(t *testing.T) {
	h := newHarness(t, newBackend())
	h.syncer.connect = func() error { return Waiting(v1alpha1.ReasonProviderAccountNotFound, "no secret") }
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if err := h.client.Delete(context.Background(), h.get()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.syncer.calls["Delete"] != 0 {
		t.Errorf("Delete called for an object never synced")
	}
	var b v1alpha1.Backend
	if err := h.client.Get(context.Background(), h.key, &b); err == nil {
		t.Errorf("object still there with finalizers %v", b.Finalizers)
	}
}

func TestSetLifecycleKeepsExactlyOneTrue(t *testing.T) {
	var st v1alpha1.CommonStatus
	for _, s := range []string{v1alpha1.ConditionInSync, v1alpha1.ConditionOrphan, v1alpha1.ConditionInvalid, v1alpha1.ConditionSynced} {
		SetSyncState(&st, s, "R", "m", 3)
		n := 0
		for _, t := range v1alpha1.SyncConditions {
			if meta.IsStatusConditionTrue(st.Conditions, t) {
				n++
			}
		}
		if n != 1 || SyncState(&st) != s {
			t.Errorf("after %s: %d True sync conditions, lifecycle %q", s, n, SyncState(&st))
		}
		if ready := meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionReady); ready != (s == v1alpha1.ConditionSynced) {
			t.Errorf("after %s: Ready = %v", s, ready)
		}
		if stalled := meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionStalled); stalled != (s == v1alpha1.ConditionInvalid) {
			t.Errorf("after %s: Stalled = %v", s, stalled)
		}
	}
}

// TestSetSyncStateWritesOnlyTheTrueConditions: a status carries its one sync condition, Ready, and
// Reconciling or Stalled while True, in one order; the sync conditions a manager before kept False (a
// copy of the message each) go at the next change of state.
func TestSetSyncStateWritesOnlyTheTrueConditions(t *testing.T) {
	st := v1alpha1.CommonStatus{Conditions: []metav1.Condition{
		{Type: v1alpha1.ConditionInSync, Status: metav1.ConditionFalse, Reason: "Synced", Message: "old"},
		{Type: v1alpha1.ConditionOrphan, Status: metav1.ConditionFalse, Reason: "Synced", Message: "old"},
		{Type: v1alpha1.ConditionSynced, Status: metav1.ConditionTrue, Reason: "Synced", Message: "old"},
		{Type: v1alpha1.ConditionInvalid, Status: metav1.ConditionFalse, Reason: "Synced", Message: "old"},
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Synced", Message: "old"},
	}}
	types := func() string {
		var out []string
		for _, c := range st.Conditions {
			out = append(out, c.Type+"="+string(c.Status))
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct{ state, want string }{
		{v1alpha1.ConditionOrphan, "Orphan=True Ready=False Reconciling=True"},
		{v1alpha1.ConditionSynced, "Synced=True Ready=True"},
		{v1alpha1.ConditionInvalid, "Invalid=True Ready=False Stalled=True"},
		{v1alpha1.ConditionInSync, "InSync=True Ready=False Reconciling=True"},
	} {
		SetSyncState(&st, tc.state, "R", "m", 2)
		if got := types(); got != tc.want {
			t.Errorf("after %s: conditions %s, want %s", tc.state, got, tc.want)
		}
	}
}

// TestDriftChecksAreSpreadOverThePeriod: objects synced at the same instant (a cold start) get their
// first drift checks spread evenly over a period, between half a period and one and a half after the
// sync; after that, each is checked exactly once a period, at its slot.
func TestDriftChecksAreSpreadOverThePeriod(t *testing.T) {
	t.Parallel()
	const n, buckets = 2000, 10
	period := 10 * time.Minute
	synced := time.Date(2026, 11, 23, 9, 3, 17, 0, time.UTC)
	counts := make([]int, buckets)
	for i := range n {
		uid := types.UID(fmt.Sprintf("4f9c2a1e-%04d-4b7e-9a51-%012d", i, i*7919))
		first := driftSlot(uid, synced.Add(period/2), period)
		d := first.Sub(synced)
		if d < period/2 || d >= period*3/2 {
			t.Fatalf("first drift check %v after the sync, want within [%v, %v)", d, period/2, period*3/2)
		}
		counts[int((d-period/2)*buckets/period)]++
		// The check runs a little after its slot; the next one is a period later, at the same slot.
		if next := driftSlot(uid, first.Add(3*time.Second+period/2), period); !next.Equal(first.Add(period)) {
			t.Fatalf("drift check after %v at %v, want %v", first, next, first.Add(period))
		}
	}
	for i, c := range counts {
		if c < n/buckets*6/10 || c > n/buckets*14/10 {
			t.Errorf("drift checks in tenth %d of the period: %d of %d, want about %d (evenly spread): %v", i, c, n, n/buckets, counts)
		}
	}
}

// TestOverdueDriftChecksWaitForTheirSlot: an object whose drift check is long overdue when the manager
// starts (it was down for hours) is checked at its next slot, not at once with every other such object.
func TestOverdueDriftChecksWaitForTheirSlot(t *testing.T) {
	h := newHarness(t, newBackend())
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	b := h.get()
	// A new manager (a fresh reconciler) five hours later.
	h.now = h.now.Add(5 * time.Hour)
	h.rec = &Reconciler[*v1alpha1.Backend, struct{}, *fakeSnapshot]{Client: h.client, Kind: "Backend", New: h.rec.New, Syncer: h.syncer, Recorder: h.events,
		Backoff: NewOrphanBackoff(time.Second, time.Minute), DriftCheckPeriod: time.Hour, Now: func() time.Time { return h.now }, States: NewStateTracker()}
	h.syncer.calls = nil
	res, err := h.reconcile()
	if err != nil {
		t.Fatal(err)
	}
	want := driftSlot(b.UID, h.now, time.Hour).Sub(h.now)
	if h.syncer.calls["Observe"] != 0 || (want >= time.Second && res.RequeueAfter != want) {
		t.Errorf("overdue at start: calls %v, requeue after %v; want no read before the object's slot, in %v", h.syncer.calls, res.RequeueAfter, want)
	}
	h.now = h.now.Add(want)
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.syncer.calls["Observe"] != 1 || !h.syncer.lastBackground {
		t.Errorf("at its slot: calls %v, background %v; want one background drift check", h.syncer.calls, h.syncer.lastBackground)
	}
}

// TestDeletingDependantsCountsAndNamesThem: an owner being deleted deletes its dependants and, while they
// are there, says how many of which kind it waits for, by name, why one whose deletion fails is stuck,
// what one waiting for its own dependants waits for, and which other finalizer keeps one; Retain neither
// deletes nor waits for them.
func TestDeletingDependantsCountsAndNamesThem(t *testing.T) {
	app := func(name string) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}}
	}
	deleting := func(o interface {
		client.Object
		v1alpha1.SyncedObject
	}, reason, message string) {
		o.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
		o.SetFinalizers([]string{Finalizer})
		SetSyncState(o.GetSyncStatus(), v1alpha1.ConditionInvalid, reason, message, 1)
		if reason == v1alpha1.ReasonDeletingDependants {
			SetSyncState(o.GetSyncStatus(), v1alpha1.ConditionOrphan, reason, message, 1)
		}
	}
	stuck := app("b")
	deleting(stuck, v1alpha1.ReasonUnauthorized, "deleting: the token was refused")
	before := app("d") // Orphan before its deletion, which is under way: not stuck
	deleting(before, "PlanDeleting", "ApplicationPlan \"basic\" is being deleted")
	held := app("e") // apimsync is done with it, another finalizer keeps it
	deleting(held, v1alpha1.ReasonUnauthorized, "deleting: the token was refused")
	held.SetFinalizers([]string{"example.com/backup"})
	plan := &v1alpha1.ApplicationPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "basic"}}
	deleting(plan, v1alpha1.ReasonDeletingDependants, "deleting 1 application first: x")

	for name, tc := range map[string]struct {
		policy      v1alpha1.DeletionPolicy
		deps        []client.Object
		wantMessage string // "" : gone
		wantDeleted []string
	}{
		"one kind, counted in the plural, sorted, the stuck one says why": {policy: v1alpha1.DeletionPolicyDelete,
			deps: []client.Object{app("c"), stuck, app("a")}, wantDeleted: []string{"a", "c"},
			wantMessage: "deleting 3 applications first: a, b (stuck: the token was refused), c"},
		"neither a condition from before the deletion nor another's finalizer is stuck": {policy: v1alpha1.DeletionPolicyDelete,
			deps: []client.Object{before, held}, wantMessage: "deleting 2 applications first: d, e (waiting for finalizer example.com/backup)"},
		"one of a kind, in the singular": {policy: v1alpha1.DeletionPolicyDelete, deps: []client.Object{app("a")},
			wantDeleted: []string{"a"}, wantMessage: "deleting 1 application first: a"},
		"a dependant waiting for its own says for what, and is not stuck": {policy: v1alpha1.DeletionPolicyDelete,
			deps: []client.Object{plan}, wantMessage: "deleting 1 application plan first: basic (deleting 1 application first: x)"},
		"several kinds": {policy: v1alpha1.DeletionPolicyDelete, deps: []client.Object{app("a"), plan, app("b")},
			wantDeleted: []string{"a", "b"},
			wantMessage: "deleting 2 applications (a, b) and 1 application plan (basic (deleting 1 application first: x)) first"},
		"Retain keeps them": {policy: v1alpha1.DeletionPolicyRetain, deps: []client.Object{app("a"), app("b")}},
	} {
		t.Run(name, func(t *testing.T) {
			h := createdThenDeleted(t)
			obj := h.get()
			obj.Spec.DeletionPolicy = tc.policy
			if err := h.client.Update(context.Background(), obj); err != nil {
				t.Fatal(err)
			}
			for _, d := range tc.deps {
				if d.GetDeletionTimestamp().IsZero() {
					if err := h.client.Create(context.Background(), d.DeepCopyObject().(client.Object)); err != nil {
						t.Fatal(err)
					}
				}
			}
			asked := 0
			h.rec.Dependants = func(context.Context, client.Object) ([]client.Object, error) {
				asked++
				return tc.deps, nil
			}
			if _, err := h.reconcile(); err != nil {
				t.Fatal(err)
			}
			var deleted []string
			for _, d := range tc.deps {
				if d.GetDeletionTimestamp().IsZero() && apierrors.IsNotFound(h.client.Get(context.Background(), client.ObjectKeyFromObject(d), &v1alpha1.Application{})) {
					deleted = append(deleted, d.GetName())
				}
			}
			slices.Sort(deleted)
			if !cmp.Equal(deleted, tc.wantDeleted) {
				t.Errorf("dependants deleted: %v, want %v", deleted, tc.wantDeleted)
			}
			var b v1alpha1.Backend
			err := h.client.Get(context.Background(), h.key, &b)
			if tc.wantMessage == "" {
				if err == nil || h.syncer.calls["Delete"] != 0 || asked != 0 {
					t.Errorf("with Retain: gone %v, %d remote deletes, dependants listed %d times; want gone, 0, 0", err != nil, h.syncer.calls["Delete"], asked)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionOrphan)
			if c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonDeletingDependants || c.Message != tc.wantMessage {
				t.Errorf("condition %+v, want Orphan/%s %q", c, v1alpha1.ReasonDeletingDependants, tc.wantMessage)
			}
			if h.syncer.calls["Delete"] != 0 {
				t.Errorf("the owner was deleted remotely before its dependants")
			}
		})
	}
}

// TestPendingDependencyIsWaitedForQuietly: a new object whose dependency is itself being synced (Pending)
// writes nothing and emits nothing during its QuietWait, and is looked at again when that ends; past
// it, or once the object has a sync condition, the same wait is an Orphan like any other. A missing
// dependency (Missing) is waited for quietly by a new object only; a plain Waiting error (a dependency
// stuck) is an Orphan at once.
func TestPendingDependencyIsWaitedForQuietly(t *testing.T) {
	newObj := func(h *harness) {
		b := h.get()
		b.CreationTimestamp = metav1.NewTime(h.now.Add(-10 * time.Second))
		if err := h.client.Update(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("pending within the quiet wait", func(t *testing.T) {
		h := newHarness(t, newBackend())
		h.rec.QuietWait = 30 * time.Second
		newObj(h)
		h.syncer.resolve = func() error { return Pending("ProductNotSynced", "waiting for Product %q to be Synced", "p") }
		before := h.get().ResourceVersion
		res, err := h.reconcile()
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != 20*time.Second {
			t.Errorf("requeue after %v, want the 20s left of the quiet wait", res.RequeueAfter)
		}
		b := h.get()
		if got := state(b); len(got) != 0 {
			t.Errorf("conditions %v, want none while waiting quietly", got)
		}
		if b.Status.TenantHost != "" {
			t.Errorf("status written (tenantHost %q) during a quiet wait", b.Status.TenantHost)
		}
		if ev := drainEvents(h.events); len(ev) != 0 {
			t.Errorf("events %q during a quiet wait", ev)
		}
		// Nothing was written: the finalizer goes on with the first create.
		if b.ResourceVersion != before || len(b.Finalizers) != 0 {
			t.Errorf("object written (finalizers %v) while waiting quietly", b.Finalizers)
		}

		h.now = h.now.Add(25 * time.Second) // 35s after creation: past the quiet wait
		reconcileToState(t, h, "past the quiet wait", "Orphan/ProductNotSynced", "Reconciling/Orphan")
		if ev := drainEvents(h.events); len(ev) != 1 {
			t.Errorf("events %q, want the Orphan one", ev)
		}
		// The dependency comes: back from a wait a person was told of, Synced is an Event too.
		h.syncer.resolve = nil
		reconcileToState(t, h, "the dependency synced", "Synced/Synced", "Ready/Synced")
		if ev := drainEvents(h.events); len(ev) != 1 || !strings.Contains(ev[0], "Synced") {
			t.Errorf("events %q, want the Synced one that ends the wait", ev)
		}
	})
	t.Run("a dependency not yet through a sync of its own is waited for longer", func(t *testing.T) {
		h := newHarness(t, newBackend())
		h.rec.QuietWait = 30 * time.Second
		newObj(h) // created 10s ago
		h.syncer.resolve = func() error { return Queued("ProductNotSynced", "waiting for Product %q to be Synced", "p") }
		h.now = h.now.Add(50 * time.Second) // 60s after its creation: past QuietWait, within 10 times it
		res, err := h.reconcile()
		if err != nil {
			t.Fatal(err)
		}
		if want := 10*h.rec.QuietWait - 60*time.Second; res.RequeueAfter != want {
			t.Errorf("requeue after %v, want the %v left of the longer wait", res.RequeueAfter, want)
		}
		if got := state(h.get()); len(got) != 0 || len(drainEvents(h.events)) != 0 {
			t.Errorf("conditions %v, or events, while waiting quietly", got)
		}
		h.now = h.now.Add(res.RequeueAfter + time.Second)
		reconcileToState(t, h, "past 10 times the quiet wait", "Orphan/ProductNotSynced", "Reconciling/Orphan")
	})
	t.Run("a missing dependency: quiet for a new object, or one synced elsewhere, within the quiet wait", func(t *testing.T) {
		h := newHarness(t, newBackend())
		h.rec.QuietWait = 30 * time.Second
		newObj(h) // created 10s ago
		// Found missing in Connect (a plan's Product, whose provider account is the plan's).
		h.syncer.connect = func() error { return Missing("ProductNotFound", "waiting for Product %q to be created", "p") }
		res, err := h.reconcile()
		if err != nil {
			t.Fatal(err)
		}
		if got := state(h.get()); res.RequeueAfter != 20*time.Second || len(got) != 0 || len(drainEvents(h.events)) != 0 {
			t.Errorf("requeue after %v, conditions %v; want 20s, none and no event", res.RequeueAfter, got)
		}
		h.now = h.now.Add(21 * time.Second)
		reconcileToState(t, h, "past the quiet wait", "Orphan/ProductNotFound", "Reconciling/Orphan")

		// syncedHarness is a Synced Backend (its dependencies resolved here) on a reconciler with a quiet
		// wait of 30s, a shard's or not; productMissing is its dependency gone.
		syncedHarness := func(sharded bool) *harness {
			h := newHarness(t, newBackend())
			h.rec.QuietWait, h.rec.Sharded = 30*time.Second, sharded
			newObj(h)
			if _, err := h.reconcile(); err != nil {
				t.Fatal(err)
			}
			return h
		}
		productMissing := func() error { return Missing("ProductNotFound", "waiting for Product %q to be created", "p") }
		h = syncedHarness(false)
		h.syncer.resolve = productMissing
		b := h.get()
		b.Generation = 2
		if err := h.client.Update(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		reconcileToState(t, h, "a synced object whose dependency went", "Orphan/ProductNotFound", "Reconciling/Orphan")

		// Synced by another reconciler (a shard it was relabelled from, a manager before a restart): this
		// one waits quietly for its dependencies to reach its cache, from when it first met the wait.
		h = syncedHarness(false)
		fresh := func() { // as a reconciler that never met the object
			key := client.ObjectKeyFromObject(h.get())
			h.rec.resolved.Delete(key)
			h.rec.written.Delete(key)
		}
		fresh()
		// Once its dependencies resolved here (its first reconcile after a restart, in sync: no write),
		// one that goes makes it Orphan at once.
		if _, err := h.reconcile(); err != nil || len(drainEvents(h.events)) != 0 {
			t.Fatalf("in sync: %v, or events", err)
		}
		h.syncer.resolve = productMissing
		reconcileToState(t, h, "a synced object whose dependency went after a restart", "Orphan/ProductNotFound", "Reconciling/Orphan")

		// A shard's cache: the dependency may have been relabelled to another shard, the object follows.
		h = syncedHarness(true)
		h.syncer.resolve = productMissing
		if res, err := h.reconcile(); err != nil || res.RequeueAfter != 30*time.Second || len(drainEvents(h.events)) != 0 {
			t.Errorf("a shard's Synced object missing a dependency: %v, %v, or events; want a quiet wait of 30s", res, err)
		}
		h.now = h.now.Add(31 * time.Second)
		reconcileToState(t, h, "a shard's synced object, past the quiet wait", "Orphan/ProductNotFound", "Reconciling/Orphan")

		h = syncedHarness(false)
		fresh()
		h.syncer.resolve = productMissing
		before := h.get()
		res, err = h.reconcile()
		if err != nil {
			t.Fatal(err)
		}
		if after := h.get(); res.RequeueAfter != 30*time.Second || after.ResourceVersion != before.ResourceVersion || len(drainEvents(h.events)) != 0 {
			t.Errorf("requeue after %v, resourceVersion %s → %s, or events; want 30s, no write and no event", res.RequeueAfter, before.ResourceVersion, after.ResourceVersion)
		}
		// The dependency arrives within the wait: nothing changed, so no remote call and no write.
		h.syncer.resolve = nil
		observed := h.syncer.calls["Observe"]
		h.now = h.now.Add(10 * time.Second)
		if _, err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		if after := h.get(); after.ResourceVersion != before.ResourceVersion || h.syncer.calls["Observe"] != observed || len(drainEvents(h.events)) != 0 {
			t.Errorf("the dependency arrived: resourceVersion %s → %s, reads %d → %d, or events; want none", before.ResourceVersion, after.ResourceVersion, observed, h.syncer.calls["Observe"])
		}

		fresh()
		h.syncer.resolve = productMissing
		if res, err := h.reconcile(); err != nil || res.RequeueAfter != 30*time.Second {
			t.Fatalf("quiet wait: %v, %v", res, err)
		}
		h.now = h.now.Add(31 * time.Second)
		reconcileToState(t, h, "a synced object never resolved here, past the quiet wait", "Orphan/ProductNotFound", "Reconciling/Orphan")
	})
	t.Run("an API server clock ahead of ours does not lengthen it", func(t *testing.T) {
		h := newHarness(t, newBackend())
		h.rec.QuietWait = 30 * time.Second
		b := h.get()
		b.CreationTimestamp = metav1.NewTime(h.now.Add(time.Hour)) // its clock is an hour ahead
		if err := h.client.Update(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		h.syncer.resolve = func() error { return Pending("ProductNotSynced", "waiting for Product %q to be Synced", "p") }
		res, err := h.reconcile()
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != 30*time.Second || len(state(h.get())) != 0 {
			t.Errorf("first pass: requeue after %v, conditions %v; want 30s and none", res.RequeueAfter, state(h.get()))
		}
		h.now = h.now.Add(31 * time.Second)
		reconcileToState(t, h, "30s after it first waited", "Orphan/ProductNotSynced", "Reconciling/Orphan")
	})
	t.Run("a stuck dependency is an Orphan at once, and an Orphan records any wait", func(t *testing.T) {
		h := newHarness(t, newBackend())
		h.rec.QuietWait = 30 * time.Second
		newObj(h)
		h.syncer.resolve = func() error { return Waiting("ProductNotFound", "waiting for Product %q to be created", "p") }
		reconcileToState(t, h, "a missing dependency", "Orphan/ProductNotFound", "Reconciling/Orphan")
		h.syncer.resolve = func() error { return Pending("ProductNotSynced", "waiting for Product %q to be Synced", "p") }
		reconcileToState(t, h, "an Orphan object waiting", "Orphan/ProductNotSynced", "Reconciling/Orphan")
	})
	t.Run("a synced object waits quietly too, from when the wait was first met", func(t *testing.T) {
		h := newHarness(t, newBackend())
		h.rec.QuietWait = 30 * time.Second
		newObj(h)
		if _, err := h.reconcile(); err != nil { // Synced
			t.Fatal(err)
		}
		drainEvents(h.events)
		b := h.get()
		b.Generation = 2
		if err := h.client.Update(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		h.now = h.now.Add(time.Minute) // long after its creation: the wait counts from now
		h.syncer.resolve = func() error { return Pending("ProductNotSynced", "waiting for Product %q to be Synced", "p") }
		reconcileToState(t, h, "a synced object waiting quietly", "Synced/Synced", "Ready/Synced")
		if ev := drainEvents(h.events); len(ev) != 0 {
			t.Errorf("events %q during a quiet wait", ev)
		}
		h.now = h.now.Add(31 * time.Second)
		reconcileToState(t, h, "past the quiet wait", "Orphan/ProductNotSynced", "Reconciling/Orphan")
	})
}

// TestStatusPatchCarriesOnlyStatus: the first reconcile adds the finalizer (an update of the object),
// then writes status with a merge patch computed against the object as that update left it, so that the
// patch carries no metadata: no resourceVersion (a merge patch without one never conflicts), no
// finalizers, no managedFields.
func TestStatusPatchCarriesOnlyStatus(t *testing.T) {
	h := newHarness(t, newBackend())
	var patches []string
	h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			patches = append(patches, string(data))
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if len(patches) == 0 {
		t.Fatal("no status patch")
	}
	for _, p := range patches {
		if strings.Contains(p, `"metadata"`) {
			t.Errorf("status patch carries metadata: %s", p)
		}
	}
}

// TestDependantDeletionIsAskedForOnce: an owner whose cache still shows a dependant undeleted (its
// deletion not seen yet) does not delete it again on every wake-up within dependantDeleteMemory, but does
// after it.
func TestDependantDeletionIsAskedForOnce(t *testing.T) {
	h := createdThenDeleted(t)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "a", UID: "u-a"}}
	h.rec.Dependants = func(context.Context, client.Object) ([]client.Object, error) {
		return []client.Object{app}, nil // a stale cache: never shows the deletion
	}
	deletes := 0
	h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			deletes++
			return nil
		},
	})
	for range 3 {
		if _, err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
	}
	if deletes != 1 {
		t.Errorf("%d deletes of the dependant in three wake-ups, want 1", deletes)
	}
	h.now = h.now.Add(dependantDeleteMemory + time.Second)
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if deletes != 2 {
		t.Errorf("%d deletes after the memory ran out, want 2", deletes)
	}
}

// TestDependantsAreLeftToTheirDeleterForTheGrace: an owner being deleted does not delete its dependants
// for DependantGrace (whoever deleted it deletes them a moment later: a prune), looks again when the grace
// ends, and deletes those still there then. The grace counts from the earlier of the deletion timestamp
// (whole seconds: plus one; an old deletion met after a restart deletes them at once) and when this
// reconciler first saw the owner going (an API server clock ahead of ours does not make it longer);
// deletions seen in the owner's namespace since (a prune under way) extend it, up to dependantGraceCap
// graces; other namespaces' do not. An owner apimsync deleted itself (a cascade) has no grace.
func TestDependantsAreLeftToTheirDeleterForTheGrace(t *testing.T) {
	const g = 2 * time.Second
	type step struct {
		at        time.Duration // after the owner's deletion timestamp
		deletedIn string        // "": a reconcile of the owner; else a deletion seen in that namespace
	}
	reconcileAt := func(at time.Duration) step { return step{at: at} }
	for name, tc := range map[string]struct {
		steps       []step
		ours        bool            // apimsync deleted the owner (its own owner's cascade)
		deletes     []time.Duration // when the owner deleted the dependant
		wantRequeue time.Duration   // of the first reconcile, when it deletes nothing
	}{
		"deleted by apimsync's cascade": {steps: []step{reconcileAt(g / 4)}, ours: true, deletes: []time.Duration{g / 4}},
		"a prune deletes them":          {steps: []step{reconcileAt(g / 4), reconcileAt(3 * g / 4)}, wantRequeue: g},
		"left by the grace's end":       {steps: []step{reconcileAt(g / 4), reconcileAt(g + g/4)}, deletes: []time.Duration{g + g/4}, wantRequeue: g},
		"an old deletion, a restart":    {steps: []step{reconcileAt(time.Hour)}, deletes: []time.Duration{time.Hour}},
		"the API server's clock ahead": {steps: []step{reconcileAt(-time.Hour), reconcileAt(-time.Hour + g)},
			deletes: []time.Duration{-time.Hour + g}, wantRequeue: g},
		"a prune under way in the namespace": {
			steps:   []step{reconcileAt(g / 4), {at: g / 2, deletedIn: "team-a"}, reconcileAt(g + g/4), reconcileAt(g + g/2)},
			deletes: []time.Duration{g + g/2}, wantRequeue: g},
		"deletions in another namespace": {
			steps:   []step{reconcileAt(g / 4), {at: g / 2, deletedIn: "team-b"}, reconcileAt(g + g/4)},
			deletes: []time.Duration{g + g/4}, wantRequeue: g},
		"deletions all the time, up to the cap": {
			steps: []step{reconcileAt(g / 4), {at: dependantGraceCap*g - g/2, deletedIn: "team-a"}, reconcileAt(dependantGraceCap*g - g/4),
				reconcileAt(dependantGraceCap*g + g/4)},
			deletes: []time.Duration{dependantGraceCap*g + g/4}, wantRequeue: g},
	} {
		t.Run(name, func(t *testing.T) {
			h := createdThenDeleted(t)
			deleted := h.get().DeletionTimestamp.Time
			h.rec.QuietWait, h.rec.DependantGrace, h.rec.Deletions = time.Minute, g, NewDeletions()
			h.rec.Deletions.now = func() time.Time { return h.now }
			if tc.ours {
				owner := h.get()
				if owner.UID == "" { // the fake client sets none
					owner.UID = "u-owner"
					if err := h.client.Update(context.Background(), owner); err != nil {
						t.Fatal(err)
					}
				}
				h.rec.Deletions.Ours(h.get().UID)
			}
			plan := &v1alpha1.ApplicationPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "basic", UID: "u-basic"}}
			h.rec.Dependants = func(context.Context, client.Object) ([]client.Object, error) { return []client.Object{plan}, nil }
			var deletedAt []time.Duration
			h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
				Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
					deletedAt = append(deletedAt, h.now.Sub(deleted))
					return nil
				},
			})
			for i, st := range tc.steps {
				h.now = deleted.Add(st.at)
				if st.deletedIn != "" {
					h.rec.Deletions.Saw(st.deletedIn)
					continue
				}
				res, err := h.reconcile()
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 && len(deletedAt) == 0 && res.RequeueAfter != tc.wantRequeue {
					t.Errorf("requeue after %v, want %v (the grace's end)", res.RequeueAfter, tc.wantRequeue)
				}
			}
			if !cmp.Equal(deletedAt, tc.deletes) {
				t.Errorf("deleted the dependant at %v after the owner's deletion, want %v", deletedAt, tc.deletes)
			}
			if h.syncer.calls["Delete"] != 0 {
				t.Errorf("deleted remotely with a dependant left")
			}
		})
	}
}

// TestDeletionWaitsAreQuiet: an object being deleted that waits for the Products using it (a Backend),
// whether they are being deleted already or not yet (a mass deletion reaches them a moment later), or
// for its dependants to go (an owner), writes nothing and emits nothing during QuietWait after its own
// deletion began (it stays Synced, as written); past it, it is Orphan (DeletionBlocked,
// DeletingDependants), naming them, and makes no remote delete meanwhile.
func TestDeletionWaitsAreQuiet(t *testing.T) {
	product := func(name string, going bool) client.Object {
		p := &v1alpha1.Product{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}}
		if going {
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return p
	}
	plan := &v1alpha1.ApplicationPlan{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "basic",
		DeletionTimestamp: &metav1.Time{Time: time.Now()}, Finalizers: []string{Finalizer}}}
	for name, tc := range map[string]struct {
		users, dependants []client.Object
		after             time.Duration
		wantReason        string // "": quiet
	}{
		"users all going, within the quiet wait":  {users: []client.Object{product("a", true), product("b", true)}, after: 5 * time.Second},
		"users all going, past it":                {users: []client.Object{product("a", true)}, after: time.Minute, wantReason: v1alpha1.ReasonDeletionBlocked},
		"a user not going yet, within it":         {users: []client.Object{product("a", true), product("b", false)}, after: time.Second},
		"a user not going yet, past it":           {users: []client.Object{product("a", true), product("b", false)}, after: 31 * time.Second, wantReason: v1alpha1.ReasonDeletionBlocked},
		"dependants going, within the quiet wait": {dependants: []client.Object{plan}, after: 5 * time.Second},
		"dependants going, past it":               {dependants: []client.Object{plan}, after: 31 * time.Second, wantReason: v1alpha1.ReasonDeletingDependants},
	} {
		t.Run(name, func(t *testing.T) {
			h := createdThenDeleted(t)
			h.rec.QuietWait = 30 * time.Second
			drainEvents(h.events)
			h.rec.Users = func(context.Context, client.Object) ([]client.Object, error) { return tc.users, nil }
			h.rec.Dependants = func(context.Context, client.Object) ([]client.Object, error) { return tc.dependants, nil }
			h.now = h.get().DeletionTimestamp.Add(tc.after)
			res, err := h.reconcile()
			if err != nil {
				t.Fatal(err)
			}
			got, events := state(h.get()), drainEvents(h.events)
			if h.syncer.calls["Delete"] != 0 {
				t.Errorf("deleted remotely while waiting")
			}
			if tc.wantReason == "" {
				if !cmp.Equal(got, []string{"Synced/Synced", "Ready/Synced"}) || len(events) != 0 {
					t.Errorf("conditions %v, events %q; want Synced kept as written, no event", got, events)
				}
				if want := h.rec.QuietWait - tc.after; res.RequeueAfter != want {
					t.Errorf("requeue after %v, want %v (the end of the quiet wait)", res.RequeueAfter, want)
				}
				return
			}
			if !cmp.Equal(got, []string{"Orphan/" + tc.wantReason, "Reconciling/Orphan"}) || len(events) != 1 {
				t.Errorf("conditions %v, events %q; want Orphan/%s and its event", got, events, tc.wantReason)
			}
		})
	}
}

// reconcileToState reconciles once and checks the True conditions that result (what names the step in
// a failure message).
func reconcileToState(t *testing.T, h *harness, what string, want ...string) {
	t.Helper()
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, state(h.get())); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// validatingSyncer is fakeSyncer with a Validator.
type validatingSyncer struct {
	*fakeSyncer
	validate func(b *v1alpha1.Backend) error
}

func (v validatingSyncer) Validate(b *v1alpha1.Backend) error { return v.validate(b) }

// TestSpecErrorsShowBeforeAnyWait: what the spec alone says cannot work is Invalid at once, even while the
// object would wait quietly for a dependency (a new object whose provider account or owner is not there
// yet); nothing else is asked, nothing is written but the condition; the fixed spec goes on to the wait.
func TestSpecErrorsShowBeforeAnyWait(t *testing.T) {
	h := newHarness(t, newBackend())
	h.rec.QuietWait = 30 * time.Second
	h.syncer.connect = func() error { return Missing("ProductNotFound", "waiting for Product %q", "petstore") }
	h.rec.Syncer = validatingSyncer{fakeSyncer: h.syncer, validate: func(b *v1alpha1.Backend) error {
		if b.Spec.PrivateBaseURL == "" {
			return Invalid("InvalidSpec", "no private base URL")
		}
		return nil
	}}
	b := h.get()
	b.Spec.PrivateBaseURL = ""
	if err := h.client.Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if res, err := h.reconcile(); err != nil || res.RequeueAfter != 0 {
		t.Fatalf("reconcile = %v, %v; want no error and no requeue (Invalid is terminal)", res, err)
	}
	b = h.get()
	if diff := cmp.Diff([]string{"Invalid/InvalidSpec", "Stalled/Invalid"}, state(b)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if h.syncer.calls["Connect"] != 0 || len(b.Finalizers) != 0 {
		t.Errorf("Connect calls %d, finalizers %v: an invalid spec goes no further", h.syncer.calls["Connect"], b.Finalizers)
	}
	if ev := drainEvents(h.events); len(ev) != 1 || !strings.Contains(ev[0], "no private base URL") {
		t.Errorf("events = %q, want the Invalid one", ev)
	}

	b.Spec.PrivateBaseURL = "https://pets.internal"
	if err := h.client.Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	// It goes on to the wait, and holds nothing yet: no finalizer until its first create.
	if b = h.get(); h.syncer.calls["Connect"] != 1 || len(b.Finalizers) != 0 {
		t.Errorf("Connect calls %d, finalizers %v: a valid spec goes on to the wait", h.syncer.calls["Connect"], b.Finalizers)
	}
}

// TestDeletionsRecordsWhatBeginsToGo: the informer handler records a namespace's deletion when an
// object's deletion timestamp is set or the object goes without one, and nothing for other changes, for
// the end of a deletion already counted, or for what apimsync deleted itself.
func TestDeletionsRecordsWhatBeginsToGo(t *testing.T) {
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	d := NewDeletions()
	d.now = func() time.Time { return at }
	h := d.Handler()
	ctx := context.Background()
	plan := func(ns, uid string, going bool) client.Object {
		p := &v1alpha1.ApplicationPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "basic", UID: types.UID(uid)}}
		if going {
			p.DeletionTimestamp = &metav1.Time{Time: at}
		}
		return p
	}
	d.Ours("ours")
	h.Update(ctx, event.UpdateEvent{ObjectOld: plan("a", "1", false), ObjectNew: plan("a", "1", false)}, nil)
	h.Update(ctx, event.UpdateEvent{ObjectOld: plan("b", "2", true), ObjectNew: plan("b", "2", true)}, nil)
	h.Delete(ctx, event.DeleteEvent{Object: plan("b", "2", true)}, nil)
	h.Update(ctx, event.UpdateEvent{ObjectOld: plan("d", "ours", false), ObjectNew: plan("d", "ours", true)}, nil)
	h.Delete(ctx, event.DeleteEvent{Object: plan("d", "ours", false)}, nil)
	for _, ns := range []string{"a", "b", "d"} {
		if !d.Last(ns).IsZero() {
			t.Errorf("namespace %s: recorded a deletion for an event that began none", ns)
		}
	}
	h.Update(ctx, event.UpdateEvent{ObjectOld: plan("a", "1", false), ObjectNew: plan("a", "1", true)}, nil)
	at = at.Add(time.Second)
	h.Delete(ctx, event.DeleteEvent{Object: plan("c", "3", false)}, nil)
	if got := d.Last("a"); !got.Equal(at.Add(-time.Second)) {
		t.Errorf("namespace a: last deletion %v, want %v", got, at.Add(-time.Second))
	}
	if got := d.Last("c"); !got.Equal(at) {
		t.Errorf("namespace c: last deletion %v, want %v", got, at)
	}
	if got := (*Deletions)(nil).Last("a"); !got.IsZero() {
		t.Errorf("no record: %v, want none", got)
	}
}

// TestDeletionsForgetsTheOldOnceGrown: the record keeps the namespaces and objects of the last
// deletionsMemory once it has grown, not every namespace that ever saw a deletion.
func TestDeletionsForgetsTheOldOnceGrown(t *testing.T) {
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	d := NewDeletions()
	d.now = func() time.Time { return at }
	for i := range 2000 {
		d.Saw(fmt.Sprintf("ns-%d", i))
		d.Ours(types.UID(fmt.Sprintf("uid-%d", i)))
	}
	at = at.Add(deletionsMemory + time.Minute)
	d.Saw("recent")
	if n := len(d.last) + len(d.ours); n != 1 {
		t.Errorf("%d entries kept, want the 1 recent", n)
	}
	if d.IsOurs("uid-1") || d.Last("ns-1") != (time.Time{}) {
		t.Errorf("old entries still answered")
	}
}
