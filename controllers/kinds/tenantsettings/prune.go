package tenantsettings

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// DefaultPruneGrace is how long an object must stay unmanaged before a prune deletes it, by default.
const DefaultPruneGrace = 24 * time.Hour

// TrafficWindow is how recent an application's traffic must be to count as live: porta's "active since"
// (Cinstance.by_active_since) over its first_daily_traffic_at.
const TrafficWindow = 30 * 24 * time.Hour

// pruning is what Resolve learns of a spec's prune: its kinds, grace period and traffic opt-ins.
type pruning struct {
	Kinds       []string
	Grace       time.Duration
	WithTraffic []string `json:",omitempty"`
}

// pruningOf is the spec's prune, nil when it has none.
func pruningOf(t *v1alpha1.TenantSettings) *pruning {
	u := t.Spec.Unmanaged
	if u == nil || u.Prune == nil || len(u.Prune.Kinds) == 0 {
		return nil
	}
	p := &pruning{Grace: DefaultPruneGrace}
	if g := u.Prune.GracePeriod; g != nil {
		p.Grace = g.Duration
	}
	for _, k := range u.Prune.Kinds {
		p.Kinds = append(p.Kinds, string(k))
	}
	for _, k := range u.Prune.WithTraffic {
		p.WithTraffic = append(p.WithTraffic, string(k))
	}
	slices.Sort(p.Kinds)
	slices.Sort(p.WithTraffic)
	return p
}

// itemKey is how status.pruning knows an unmanaged object: "Kind/id".
func itemKey(it plugin.RemoteItem) string { return it.Kind + "/" + strconv.FormatInt(it.ID, 10) }

// due tells when the next recorded candidate's grace period ends (zero: none recorded), and whether one
// has ended already.
func (s *Syncer) due(t *v1alpha1.TenantSettings, p *pruning) (bool, time.Duration) {
	if p == nil || len(t.Status.Pruning) == 0 {
		return false, 0
	}
	next := time.Duration(-1)
	for _, seen := range t.Status.Pruning {
		left := seen.Add(p.Grace).Sub(s.now())
		if next < 0 || left < next {
			next = left
		}
	}
	if next <= 0 {
		return true, 0
	}
	return false, next
}

func (s *Syncer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// candidates keeps status.pruning in step with the unmanaged objects of the pruned kinds a listing
// found: a new one is recorded as first seen now, one no longer unmanaged (an object took it, or it is
// gone) is dropped.
func (s *Syncer) candidates(t *v1alpha1.TenantSettings, p *pruning, items []plugin.RemoteItem) {
	if p == nil {
		t.Status.Pruning = nil
		return
	}
	next := map[string]metav1.Time{}
	for _, it := range items {
		if !slices.Contains(p.Kinds, it.Kind) {
			continue
		}
		key := itemKey(it)
		if seen, ok := t.Status.Pruning[key]; ok {
			next[key] = seen
		} else {
			next[key] = metav1.NewTime(s.now().Truncate(time.Second))
		}
	}
	t.Status.Pruning = next
	if len(next) == 0 {
		t.Status.Pruning = nil
	}
}

// Refresh implements engine.Refresher: when a candidate's grace period has passed, the tenant is listed
// again (decided from what 3scale holds now) and each candidate still unmanaged is deleted, with an
// Event — unless its kind waits for an object of the cluster about to take one of its kind, its
// deletion would take an application with live traffic the spec did not opt in for, or its kind keeps
// it (an admin). What was kept is said in an Event and stays a candidate.
func (s *Syncer) Refresh(ctx context.Context, t *v1alpha1.TenantSettings, sess *engine.Session, snap *Snapshot) (*Snapshot, error) {
	p := pruningOf(t)
	if due, _ := s.due(t, p); !due || s.Prune == nil {
		return snap, nil
	}
	items, err := s.Unmanaged(ctx, sess.Remote, sess.Tenant)
	if err != nil {
		return nil, fmt.Errorf("cannot list what no object holds: %w", err)
	}
	s.candidates(t, p, items)
	live, err := s.liveTraffic(ctx, sess, p, t, items)
	if err != nil {
		return nil, err
	}
	waits := map[string]string{}
	for _, it := range items {
		seen, ok := t.Status.Pruning[itemKey(it)]
		if !ok || seen.Add(p.Grace).After(s.now()) {
			continue
		}
		if _, known := waits[it.Kind]; !known {
			if waits[it.Kind], err = s.Unsettled(ctx, sess.Tenant, it.Kind); err != nil {
				return nil, err
			}
		}
		kept := ""
		switch {
		case waits[it.Kind] != "":
			kept = fmt.Sprintf("%s %s holds no 3scale id yet and may be about to take it", it.Kind, waits[it.Kind])
		case live[itemKey(it)] != "" && !slices.Contains(p.WithTraffic, it.Kind):
			kept = live[itemKey(it)]
		default:
			if kept, err = s.Prune(ctx, sess.Remote, it); err != nil && !tsclient.IsNotFound(err) {
				return nil, fmt.Errorf("cannot prune %s %d (%s): %w", it.Kind, it.ID, it.SystemName, err)
			}
		}
		if kept != "" {
			// Checked again one grace period from now (traffic stops, an object syncs), not at every
			// reconcile.
			t.Status.Pruning[itemKey(it)] = metav1.NewTime(s.now().Truncate(time.Second))
			s.event(t, it, "Warning", "PruneKept", "kept %s %d (%s), unmanaged since %s or before: %s; checked again in %s", it.Kind, it.ID, it.SystemName,
				seen.UTC().Format(time.RFC3339), kept, p.Grace)
			continue
		}
		delete(t.Status.Pruning, itemKey(it))
		s.event(t, it, "Normal", "Pruned", "deleted %s %d (%s)%s from 3scale: no apimsync object held it since %s (spec.unmanaged.prune)",
			it.Kind, it.ID, it.SystemName, parentOf(it), seen.UTC().Format(time.RFC3339))
	}
	if len(t.Status.Pruning) == 0 {
		t.Status.Pruning = nil
	}
	fresh := snap.Clone()
	fresh.Items, fresh.Unmanaged = nil, nil
	if reports(t) {
		fresh.Unmanaged = counts(items)
	}
	return fresh, nil
}

func parentOf(it plugin.RemoteItem) string {
	if it.Parent == "" {
		return ""
	}
	return " of " + it.Parent
}

// event emits an Event about one object pruned or kept; its action names the object ("Prune
// Product/42"), so that the recorder, which folds Events of one object, reason and action into a
// series, keeps one per object.
func (s *Syncer) event(t *v1alpha1.TenantSettings, it plugin.RemoteItem, kind, reason, format string, args ...any) {
	if s.Recorder != nil {
		s.Recorder.Eventf(t, nil, kind, reason, "Prune "+itemKey(it), format, args...)
	}
}

// liveTraffic tells, for the due candidates whose deletion takes applications (an application, a
// product, an account) and whose kind the spec did not opt in for, which have an application with
// traffic in the last TrafficWindow: one list of the tenant's applications, none when no such candidate
// is due.
func (s *Syncer) liveTraffic(ctx context.Context, sess *engine.Session, p *pruning, t *v1alpha1.TenantSettings, items []plugin.RemoteItem) (map[string]string, error) {
	guarded := func(it plugin.RemoteItem) bool {
		seen, ok := t.Status.Pruning[itemKey(it)]
		return ok && !seen.Add(p.Grace).After(s.now()) && !slices.Contains(p.WithTraffic, it.Kind) &&
			slices.Contains([]string{"Application", "Product", "DeveloperAccount"}, it.Kind)
	}
	if !slices.ContainsFunc(items, guarded) {
		return nil, nil
	}
	apps, err := sess.Remote.ListAllApplications(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot list the applications to check their traffic: %w", err)
	}
	since := s.now().Add(-TrafficWindow)
	live := map[string]string{}
	for _, a := range apps {
		if a.FirstDailyTrafficAt == nil || a.FirstDailyTrafficAt.Before(since) {
			continue
		}
		why := fmt.Sprintf("application %d had traffic on %s; list the kind in spec.unmanaged.prune.withTraffic to prune it anyway", a.ID, a.FirstDailyTrafficAt.UTC().Format(time.DateOnly))
		for _, key := range []string{"Application/" + strconv.FormatInt(a.ID, 10), "Product/" + strconv.FormatInt(a.ServiceID, 10), "DeveloperAccount/" + strconv.FormatInt(a.AccountID, 10)} {
			if _, ok := live[key]; !ok {
				live[key] = why
			}
		}
	}
	return live, nil
}

// counts are the unmanaged objects by kind.
func counts(items []plugin.RemoteItem) map[string]int32 {
	out := map[string]int32{}
	for _, it := range items {
		out[it.Kind]++
	}
	return out
}
