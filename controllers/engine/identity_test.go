package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
)

// TestCreatePendingMarkerIsWrittenBeforeTheCreate: the marker and the finalizer are in the API server
// when the create call is made, written in one update, so a lost answer is recognised as our own create
// on the next reconcile; the marker is settled once the id is recorded, and a later create (the remote
// object deleted behind our back) writes a new one.
func TestCreatePendingMarkerIsWrittenBeforeTheCreate(t *testing.T) {
	h := newHarness(t, newBackend())
	writes := countWrites(h)
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: false}, nil }
	lost := errors.New("connection reset after the write")
	h.syncer.create = func(b *v1alpha1.Backend) error {
		stored := h.get()
		if got := PendingCreate(stored); got != "acme-admin.example.com" {
			t.Errorf("stored marker %q (annotation %q) when the create is sent, want the tenant", got, stored.Annotations[v1alpha1.CreatePendingAnnotation])
		}
		if !controllerutil.ContainsFinalizer(stored, Finalizer) {
			t.Errorf("no finalizer when the create is sent")
		}
		b.Status.BackendID = 0 // the answer, and the id in it, were lost
		return lost
	}
	if _, err := h.reconcile(); !errors.Is(err, lost) {
		t.Fatalf("reconcile error = %v", err)
	}
	if h.syncer.lastS.CreatePending {
		t.Errorf("the first attempt was told a create was pending")
	}
	if diff := cmp.Diff(map[string]int{"update": 1, "status": 1}, writes); diff != "" {
		t.Errorf("writes of a create whose answer was lost (-want +got):\n%s", diff)
	}
	h.syncer.create = nil
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if !h.syncer.lastS.CreatePending {
		t.Errorf("the retry after a lost create was not told that the create is pending (it would adopt, not recover)")
	}
	b := h.get()
	if got := PendingCreate(b); got != "" || b.Status.BackendID != 42 {
		t.Errorf("after the create: marker %q, id %d", got, b.Status.BackendID)
	}
	if writes["update"] != 1 {
		t.Errorf("%d metadata updates, want the one before the first create", writes["update"])
	}

	// Deleted in 3scale behind our back: created again, under a new marker.
	h.syncer.create = func(*v1alpha1.Backend) error {
		stored := h.get()
		if tenant, n, _ := parseCreateMark(stored.Annotations[v1alpha1.CreatePendingAnnotation]); tenant != "acme-admin.example.com" || n != 2 || PendingCreate(stored) == "" {
			t.Errorf("marker %q when the second create is sent, want a new one", stored.Annotations[v1alpha1.CreatePendingAnnotation])
		}
		return nil
	}
	h.now = h.now.Add(2 * time.Hour) // a drift check is due: the engine observes
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if h.syncer.lastS.CreatePending || h.syncer.calls["Create"] != 3 {
		t.Errorf("second create: told pending %v, creates %d", h.syncer.lastS.CreatePending, h.syncer.calls["Create"])
	}
	if got := PendingCreate(h.get()); got != "" {
		t.Errorf("marker %q left after the second create", got)
	}
}

// TestFirstSyncWritesTheObjectTwice: a new object that syncs at once costs the API server one metadata
// update (finalizer and create-pending marker together) and one status write.
func TestFirstSyncWritesTheObjectTwice(t *testing.T) {
	h := newHarness(t, newBackend())
	writes := countWrites(h)
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: false}, nil }
	reconcileToState(t, h, "first sync", "Synced/Synced", "Ready/Synced")
	if diff := cmp.Diff(map[string]int{"update": 1, "status": 1}, writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

// countWrites counts the harness' writes of the object from now on: metadata updates and patches
// ("update") and status patches ("status").
func countWrites(h *harness) map[string]int {
	writes := map[string]int{}
	h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			writes["update"]++
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes["update"]++
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes[sub]++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	return writes
}

// TestCreatePendingMarkerLastsOnlyWhileInDoubt: a create that surely made nothing (3scale refused it, or
// the syncer refused an adoption) leaves no marker, or a stranger's object given the same system name
// later would be taken and deleted as this resource's own; one that may have made something (a 5xx, no
// answer) keeps it; one that recorded an id needs it no more.
func TestCreatePendingMarkerLastsOnlyWhileInDoubt(t *testing.T) {
	const tenant = "acme-admin.example.com"
	cases := map[string]struct {
		err           error
		recordedID    bool
		pendingBefore bool // the marker of an earlier try: the safe side is to drop it on a refusal too
		want          string
	}{
		"422: refused":     {err: &tsclient.APIError{StatusCode: 422, Method: "POST", Errors: map[string][]string{"private_endpoint": {"Sorry, this domain is protected"}}}},
		"429 given up":     {err: &tsclient.APIError{StatusCode: 429, Method: "POST", RetryAfter: time.Minute}},
		"adoption refused": {err: Refused(v1alpha1.ReasonAdoptionRefused, "a backend with system name %q already exists", "pets")},
		"taken, and nothing of its own listed (being deleted)": {err: fmt.Errorf("3scale says system name %q is taken but lists no such backend: %w", "pets",
			&tsclient.APIError{StatusCode: 422, Method: "POST", Errors: map[string][]string{"system_name": {"has already been taken"}}})},
		"503: may have made":             {err: &tsclient.APIError{StatusCode: 503, Method: "POST"}, want: tenant},
		"no answer":                      {err: &tsclient.APIError{Method: "POST", Cause: errors.New("connection reset")}, want: tenant},
		"never sent (pacing wait ended)": {err: &tsclient.APIError{Method: "POST", Message: "waiting for the tenant's pacing: context deadline exceeded", NotSent: true}},
		"taken, then the lookup failed":  {err: NothingMade(&tsclient.APIError{StatusCode: 503, Method: "GET", Endpoint: "/admin/api/backend_apis.json"})},
		"a marker from an earlier try whose answer was lost, then a 429": {pendingBefore: true, err: &tsclient.APIError{StatusCode: 429, Method: "POST"}},
		"a marker from an earlier try, then no answer again":             {pendingBefore: true, err: &tsclient.APIError{Method: "POST", Cause: errors.New("EOF")}, want: tenant},
		"id recorded, then a child refused": {err: &tsclient.APIError{StatusCode: 422, Method: "POST", Endpoint: "/admin/api/backend_apis/{backend_api_id}/metrics.json"},
			recordedID: true},
		"id recorded, then no answer": {err: errors.New("timeout"), recordedID: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := newBackend()
			b.UID = "uid-1"
			if tc.pendingBefore {
				b.Annotations = map[string]string{v1alpha1.CreatePendingAnnotation: tenant + "#1#uid-1"}
				b.Finalizers = []string{Finalizer}
			}
			h := newHarness(t, b)
			h.syncer.observe = func(s *Session) (Observation, error) {
				if s.CreatePending != tc.pendingBefore {
					t.Errorf("session.CreatePending = %v", s.CreatePending)
				}
				return Observation{Exists: false}, nil
			}
			h.syncer.create = func(b *v1alpha1.Backend) error {
				if !tc.recordedID {
					b.Status.BackendID = 0
				}
				return tc.err
			}
			_, _ = h.reconcile()
			stored := h.get()
			if got := PendingCreate(stored); got != tc.want {
				t.Errorf("marker %q after the failed create, want %q", got, tc.want)
			}
			if !controllerutil.ContainsFinalizer(stored, Finalizer) {
				t.Errorf("no finalizer after a create was sent")
			}
		})
	}
}

// TestRefusedCreateWhoseSettlingWriteFailedClaimsNothing: a create refused (it made nothing) settles the
// marker; when the status write recording that fails, the next reconcile still knows the create is
// settled: it does not look for the object by system name as its own (a stranger's would be taken
// silently, bypassing adoption: Never and the adoption Event).
func TestRefusedCreateWhoseSettlingWriteFailedClaimsNothing(t *testing.T) {
	b := newBackend()
	b.UID = "uid-1"
	h := newHarness(t, b)
	var pending []bool
	h.syncer.observe = func(s *Session) (Observation, error) {
		pending = append(pending, s.CreatePending)
		return Observation{Exists: false}, nil
	}
	h.syncer.create = func(b *v1alpha1.Backend) error {
		b.Status.BackendID = 0
		return &tsclient.APIError{StatusCode: 422, Method: "POST", Errors: map[string][]string{"name": {"is invalid"}}}
	}
	failing := true
	h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if failing {
				return errors.New("etcdserver: request timed out")
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	_, _ = h.reconcile()
	if stored := h.get(); PendingCreate(stored) == "" {
		t.Fatalf("the failed status write recorded the settle anyway: the test shows nothing")
	}
	failing = false
	h.rec.InvalidRetryPeriod = 0 // the same attempt is tried again at once
	h.rec.rejected.Clear()
	_, _ = h.reconcile()
	if len(pending) != 2 || pending[1] {
		t.Errorf("create pending seen by each Observe: %v, want false after the refused create", pending)
	}
	if stored := h.get(); PendingCreate(stored) != "" {
		t.Errorf("marker %q still pending after the settle was written", PendingCreate(stored))
	}
}

// TestFailedMarkerWriteClaimsNothing: when the create-pending marker cannot be written, no create is
// sent, and the status written at the end of the reconcile does not claim one either.
func TestFailedMarkerWriteClaimsNothing(t *testing.T) {
	h := newHarness(t, newBackend())
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: false}, nil }
	failed := false
	h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if !failed && obj.GetAnnotations()[v1alpha1.CreatePendingAnnotation] != "" {
				failed = true
				return errors.New("etcdserver: request timed out")
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	if _, err := h.reconcile(); err == nil {
		t.Fatal("the reconcile succeeded")
	}
	if !failed || h.syncer.calls["Create"] != 0 {
		t.Fatalf("marker write failed: %v; creates sent: %d", failed, h.syncer.calls["Create"])
	}
	if b := h.get(); PendingCreate(b) != "" || b.Status.CreateSettled != "" || len(b.Finalizers) != 0 {
		t.Errorf("stored: marker %q, settled %q, finalizers %v, although no create was sent", PendingCreate(b), b.Status.CreateSettled, b.Finalizers)
	}
}

// TestChangedObjectIsReadAgainQuietly: when the object changed between its read and the metadata update
// before its create (a spec edit applied meanwhile), nothing is sent to 3scale and nothing is written:
// no condition, no event; the object is looked at again.
func TestChangedObjectIsReadAgainQuietly(t *testing.T) {
	h := newHarness(t, newBackend())
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: false}, nil }
	conflicts := 0
	h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if conflicts == 0 {
				conflicts++
				return apierrors.NewConflict(schema.GroupResource{Group: "capabilities.apimsync.io", Resource: "backends"}, obj.GetName(),
					errors.New("the object has been modified; please apply your changes to the latest version and try again"))
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	before := h.get().ResourceVersion
	res, err := h.reconcile()
	if err != nil || res.RequeueAfter <= 0 {
		t.Errorf("result %+v, %v: want a quiet requeue", res, err)
	}
	if b := h.get(); b.ResourceVersion != before || h.syncer.calls["Create"] != 0 {
		t.Errorf("after the conflict: stored %q (was %q), conditions %v, creates %d", b.ResourceVersion, before, state(b), h.syncer.calls["Create"])
	}
	if ev := drainEvents(h.events); len(ev) != 0 {
		t.Errorf("events %q after a conflict", ev)
	}
	reconcileToState(t, h, "next pass", "Synced/Synced", "Ready/Synced")
}

// TestFinalizerGoesOnBeforeAnythingIsHeld: an object that holds a remote id without the finalizer (from
// an earlier version, or the finalizer removed by hand) gets it back at once; one that adopts an
// existing object gets it before the adoption is recorded or the object written to.
func TestFinalizerGoesOnBeforeAnythingIsHeld(t *testing.T) {
	t.Run("an id held", func(t *testing.T) {
		b := newBackend()
		b.Status.BackendID = 42
		h := newHarness(t, b)
		h.syncer.connect = func() error {
			if !controllerutil.ContainsFinalizer(h.get(), Finalizer) {
				t.Errorf("no finalizer before anything else")
			}
			return nil
		}
		if _, err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		if got := h.get(); !controllerutil.ContainsFinalizer(got, Finalizer) || got.Status.BackendID != 42 {
			t.Errorf("finalizers %v, id %d", got.Finalizers, got.Status.BackendID)
		}
	})
	t.Run("an adoption", func(t *testing.T) {
		h := newHarness(t, newBackend())
		h.syncer.observe = func(s *Session) (Observation, error) {
			h.syncer.lastObj.Status.BackendID = 7
			return Observation{Exists: true, UpToDate: false, Report: Report{Adopted: 7}}, nil
		}
		h.syncer.update = func() error {
			if !controllerutil.ContainsFinalizer(h.get(), Finalizer) {
				t.Errorf("no finalizer when the adopted object is written to")
			}
			return nil
		}
		reconcileToState(t, h, "adopted", "Synced/Synced", "Ready/Synced")
		if got := h.get(); !controllerutil.ContainsFinalizer(got, Finalizer) || got.Status.BackendID != 7 || PendingCreate(got) != "" {
			t.Errorf("finalizers %v, id %d, marker %q", got.Finalizers, got.Status.BackendID, PendingCreate(got))
		}
	})
}

// TestAdoptionIsAnnounced: a syncer that adopted an existing object makes an Event and says so in the
// Synced condition.
func TestAdoptionIsAnnounced(t *testing.T) {
	h := newHarness(t, newBackend())
	h.syncer.observe = func(s *Session) (Observation, error) {
		return Observation{Exists: true, UpToDate: true, Report: Report{Adopted: 7}}, nil
	}
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	events := strings.Join(drainEvents(h.events), "\n")
	if !strings.Contains(events, "AdoptedExisting adopted existing Backend 7") {
		t.Errorf("no adoption event in %q", events)
	}
	_, _, msg := syncStateOf(h.get())
	if !strings.Contains(msg, "adopted the existing Backend 7") {
		t.Errorf("Synced message does not tell the adoption: %q", msg)
	}
}

// TestTenantChangeForgetsTheOldID: an id recorded on one tenant is never used on another; the object is
// resolved again on the new tenant, with an event, and deleting it does not touch the old tenant.
func TestTenantChangeForgetsTheOldID(t *testing.T) {
	b := newBackend()
	h := newHarness(t, b)
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{Exists: false}, nil }
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	drainEvents(h.events)
	h.syncer.tenant = "other-admin.example.com"
	var idSeen int64 = -1
	h.syncer.observe = func(*Session) (Observation, error) {
		idSeen = h.syncer.lastObj.Status.BackendID
		return Observation{Exists: false}, nil
	}
	h.syncer.create = func(b *v1alpha1.Backend) error { b.Status.BackendID = 99; return nil }
	h.now = h.now.Add(2 * time.Hour) // a drift check is due: the engine observes
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if idSeen != 0 {
		t.Errorf("Observe on the new tenant saw id %d, want 0 (the old tenant's id must not be used)", idSeen)
	}
	if !strings.Contains(strings.Join(drainEvents(h.events), "\n"), "TenantChanged") {
		t.Errorf("no TenantChanged event")
	}
	if got := h.get().Status; got.BackendID != 99 || got.TenantHost != "other-admin.example.com" {
		t.Errorf("status after the move: id %d on %q", got.BackendID, got.TenantHost)
	}
}

// TestInvalidFromARemoteAnswerIsRetriedSlowly: an Invalid caused by 3scale's answer is tried again after
// the safety-net period; one caused by the spec is not.
func TestInvalidFromARemoteAnswerIsRetriedSlowly(t *testing.T) {
	for name, refusal := range map[string]error{
		"3scale's 422":                &tsclient.APIError{StatusCode: 422, Method: "POST", Errors: map[string][]string{"name": {"is invalid"}}},
		"a decision on what it holds": Refused(v1alpha1.ReasonAdoptionRefused, "a backend %q exists", "pets"),
	} {
		h := newHarness(t, newBackend())
		h.rec.InvalidRetryPeriod = 10 * time.Minute
		observed := 0
		h.syncer.observe = func(*Session) (Observation, error) {
			observed++
			return Observation{}, refusal
		}
		res, err := h.reconcile()
		if err != nil || res.RequeueAfter != 10*time.Minute {
			t.Errorf("%s: result %+v, %v; want a retry after 10m", name, res, err)
		}
		// Woken again with nothing changed (a watch event): the refused attempt is not sent again.
		h.get()
		res, err = h.reconcile()
		if err != nil || res.RequeueAfter <= 0 || res.RequeueAfter > 10*time.Minute || observed != 1 {
			t.Errorf("%s, unchanged: result %+v, %v, %d observations; want no call and a retry within 10m", name, res, err, observed)
		}
	}

	h := newHarness(t, newBackend())
	h.rec.InvalidRetryPeriod = 10 * time.Minute
	h.syncer.observe = func(*Session) (Observation, error) { return Observation{}, Invalid("InvalidSpec", "bad") }
	res, err := h.reconcile()
	if err != nil || res.RequeueAfter != 0 {
		t.Errorf("spec Invalid: result %+v, %v; want no retry", res, err)
	}
}

// TestChangedProviderAccountIsCheckedOnce: a new Secret version makes the engine check the credentials
// before anything else; a refusal is Invalid without calling the syncer.
func TestChangedProviderAccountIsCheckedOnce(t *testing.T) {
	h := newHarness(t, newBackend())
	checks := 0
	var refuse error
	h.rec.Credentials = checkerFunc(func() error { checks++; return refuse })
	h.syncer.version = "1"
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if checks != 0 {
		t.Errorf("a first sync checked the credentials %d times; its own calls check them", checks)
	}
	h.syncer.version = "2"
	refuse = &tsclient.APIError{StatusCode: 403, Method: "GET", Message: "Access denied"}
	h.syncer.calls = nil
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if state, reason, _ := syncStateOf(h.get()); checks != 1 || state != v1alpha1.ConditionInvalid || reason != v1alpha1.ReasonUnauthorized {
		t.Errorf("after a refused token: %d checks, %s/%s", checks, state, reason)
	}
	if h.syncer.calls["Observe"] != 0 {
		t.Errorf("the syncer was called despite the refused token")
	}
	refuse = nil
	h.syncer.version = "3"
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if state, _, _ := syncStateOf(h.get()); checks != 2 || state != v1alpha1.ConditionSynced {
		t.Errorf("after a good token: %d checks, %s", checks, state)
	}
}

type checkerFunc func() error

func (f checkerFunc) Check(context.Context, *Session) error { return f() }

func syncStateOf(b *v1alpha1.Backend) (state, reason, message string) {
	for _, ct := range v1alpha1.SyncConditions {
		for _, c := range b.Status.Conditions {
			if c.Type == ct && c.Status == "True" {
				return ct, c.Reason, c.Message
			}
		}
	}
	return "", "", ""
}

// TestStatusHashIsKeyed: the hash in status depends on the session's key, so whoever reads the resource
// cannot test guesses of the values it covers (a policy configuration, an issuer's client secret).
func TestStatusHashIsKeyed(t *testing.T) {
	values := []any{"tenant", map[string]string{"client_secret": "s3cret"}}
	a := (&Session{HashKey: []byte("key-a")}).HashOf(values...)
	b := (&Session{HashKey: []byte("key-b")}).HashOf(values...)
	if a == b || a == HashOf(values...) {
		t.Errorf("the hash does not depend on its key: %s %s %s", a, b, HashOf(values...))
	}
	if a != (&Session{HashKey: []byte("key-a")}).HashOf(values...) {
		t.Errorf("the keyed hash is not stable")
	}
}

// TestAddressRefusedAtDialTimeIsInvalid: an admin host that resolves to an internal address is a
// provider-account problem (Invalid), not a passing failure retried forever.
func TestAddressRefusedAtDialTimeIsInvalid(t *testing.T) {
	c, err := tsclient.New(tsclient.Config{AdminURL: "http://127.0.0.1:1", Token: "tok-refused-1234",
		Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: true}})
	if err != nil {
		t.Fatal(err)
	}
	callErr := c.ProbeCredentials(context.Background())
	if class, reason, _ := Classify(callErr); class != ClassInvalid || reason != v1alpha1.ReasonProviderAccountInvalid {
		t.Errorf("a refused address (%v) is %v/%s, want Invalid/%s", callErr, class, reason, v1alpha1.ReasonProviderAccountInvalid)
	}
}

// TestStatusRecordedBeforeTheMetadataUpdateIsWritten: the API server's answer to the metadata update is
// decoded into the object sent without clearing it first; what this reconcile recorded before it (an
// adopted object's id) is still written to status afterwards.
func TestStatusRecordedBeforeTheMetadataUpdateIsWritten(t *testing.T) {
	h := newHarness(t, newBackend())
	h.rec.Client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			// What a real API server client does: the answer is unmarshalled over the object sent.
			answer := obj.DeepCopyObject().(client.Object)
			if err := c.Update(ctx, answer, opts...); err != nil {
				return err
			}
			data, err := json.Marshal(answer)
			if err != nil {
				return err
			}
			return json.Unmarshal(data, obj)
		},
	})
	h.syncer.observe = func(s *Session) (Observation, error) {
		h.syncer.lastObj.Status.BackendID = 7
		return Observation{Exists: true, UpToDate: true, Report: Report{Adopted: 7}}, nil
	}
	reconcileToState(t, h, "adopted", "Synced/Synced", "Ready/Synced")
	if got := h.get(); got.Status.BackendID != 7 || got.Status.TenantHost == "" {
		t.Errorf("stored id %d, tenant %q: want what the reconcile recorded", got.Status.BackendID, got.Status.TenantHost)
	}
}

// TestCreateMarkerBelongsToItsObject: a marker copied with the object into a new one (an export applied
// again, a restore: a new UID) claims nothing; a new marker never repeats one settled before, even when
// the annotation was removed meanwhile (kubectl replace).
func TestCreateMarkerBelongsToItsObject(t *testing.T) {
	const tenant = "acme-admin.example.com"
	t.Run("copied into a new object", func(t *testing.T) {
		b := newBackend()
		b.UID = "uid-new"
		b.Annotations = map[string]string{v1alpha1.CreatePendingAnnotation: tenant + "#1#uid-old"}
		h := newHarness(t, b)
		h.syncer.observe = func(s *Session) (Observation, error) {
			if s.CreatePending {
				t.Errorf("a copied marker made the create pending: a same-named object would be taken as its own")
			}
			return Observation{Exists: false}, nil
		}
		reconcileToState(t, h, "created", "Synced/Synced", "Ready/Synced")
		if got := h.get().Annotations[v1alpha1.CreatePendingAnnotation]; got != tenant+"#2#uid-new" {
			t.Errorf("marker %q, want this object's own", got)
		}
	})
	t.Run("annotation removed after a settled create", func(t *testing.T) {
		b := newBackend()
		b.UID = "uid-1"
		b.Finalizers = []string{Finalizer}
		b.Status.CreateSettled = tenant + "#3#uid-1"
		h := newHarness(t, b)
		h.syncer.observe = func(s *Session) (Observation, error) { return Observation{Exists: false}, nil }
		h.syncer.create = func(*v1alpha1.Backend) error {
			if got := h.get().Annotations[v1alpha1.CreatePendingAnnotation]; got != tenant+"#4#uid-1" {
				t.Errorf("marker %q when the create is sent, want a new one", got)
			}
			return nil
		}
		reconcileToState(t, h, "created", "Synced/Synced", "Ready/Synced")
	})
}

// TestPendingCreateOnDeletionAndTenantChange: a resource deleted while its create is in doubt deletes by
// system name on the marker's tenant (its own create); one whose provider account moved to another
// tenant forgets the marker and creates there under a new one.
func TestPendingCreateOnDeletionAndTenantChange(t *testing.T) {
	const tenant = "acme-admin.example.com"
	pending := func() *v1alpha1.Backend {
		b := newBackend()
		b.UID = "uid-1"
		b.Spec.DeletionPolicy = v1alpha1.DeletionPolicyDelete
		b.Finalizers = []string{Finalizer}
		b.Annotations = map[string]string{v1alpha1.CreatePendingAnnotation: tenant + "#1#uid-1"}
		return b
	}
	t.Run("deletion", func(t *testing.T) {
		h := newHarness(t, pending())
		if err := h.client.Delete(context.Background(), h.get()); err != nil {
			t.Fatal(err)
		}
		if _, err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		if h.syncer.calls["Delete"] != 1 || !h.syncer.lastS.CreatePending {
			t.Errorf("deletes %d: want one, by system name (told the create is pending)", h.syncer.calls["Delete"])
		}
		if _, err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		if h.syncer.calls["Delete"] != 1 {
			t.Errorf("deleted again")
		}
	})
	t.Run("tenant change", func(t *testing.T) {
		h := newHarness(t, pending())
		h.syncer.tenant = "other-admin.example.com"
		h.syncer.observe = func(s *Session) (Observation, error) {
			if s.CreatePending {
				t.Errorf("the old tenant's marker made a create pending on the new one")
			}
			return Observation{Exists: false}, nil
		}
		h.syncer.create = func(*v1alpha1.Backend) error {
			if got := h.get().Annotations[v1alpha1.CreatePendingAnnotation]; got != "other-admin.example.com#2#uid-1" {
				t.Errorf("marker %q when the create is sent on the new tenant", got)
			}
			return nil
		}
		reconcileToState(t, h, "created on the new tenant", "Synced/Synced", "Ready/Synced")
	})
}
