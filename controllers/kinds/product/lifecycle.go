package product

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
)

// defaultUsageReportTop is how many accounts a usage report lists unless spec.usageReport.top says.
const defaultUsageReportTop = 10

// Lifecycle keeps a Product's lifecycle bookkeeping: the stage acted upon and when it was
// entered (status, an Event, a metric), and the usage report of a Deprecated or Retired product,
// refreshed at most once per period with one paginated list call.
type Lifecycle struct {
	// Recorder emits an Event on each lifecycle move.
	Recorder events.EventRecorder
	// UsagePeriod is how often the usage report is refreshed.
	UsagePeriod time.Duration
	// Now returns the time; tests replace it.
	Now func() time.Time
	// Quiet keeps the lifecycle metrics as they are: what admission and diff resolve is not a sync.
	Quiet bool
}

// publish sets the lifecycle metrics of p, at stage.
func (l *Lifecycle) publish(p *v1alpha1.Product, stage v1alpha1.ProductLifecycle) {
	for _, s := range []v1alpha1.ProductLifecycle{v1alpha1.LifecycleDraft, v1alpha1.LifecyclePublished, v1alpha1.LifecycleDeprecated, v1alpha1.LifecycleRetired} {
		if s != stage {
			ProductLifecycleChanged.DeleteLabelValues(p.Namespace, p.Name, string(s))
		}
	}
	if at := p.Status.LifecycleChangedAt; at != nil {
		ProductLifecycleChanged.WithLabelValues(p.Namespace, p.Name, string(stage)).Set(float64(at.Unix()))
	}
	if stage != v1alpha1.LifecycleDeprecated {
		DeprecatedProductApplications.DeleteLabelValues(p.Namespace, p.Name)
	}
}

func (l *Lifecycle) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// track records a lifecycle move and says whether a usage report is due (and when the next one is). It
// makes no remote call.
func (l *Lifecycle) Track(p *v1alpha1.Product) (due bool, in time.Duration) {
	stage := p.Spec.EffectiveLifecycle()
	if p.Status.Lifecycle != stage {
		from := p.Status.Lifecycle
		p.Status.Lifecycle, p.Status.LifecycleChangedAt = stage, &metav1.Time{Time: l.now()}
		// The sweep is due on a move apimsync saw, never on a status it has no past of.
		p.Status.RetirementSweepPending = stage == v1alpha1.LifecycleRetired && from != ""
		if from != "" && l.Recorder != nil {
			l.Recorder.Eventf(p, nil, "Normal", v1alpha1.ReasonLifecycleChanged, "Lifecycle", "the product moved from %s to %s", from, stage)
		}
	}
	if !l.Quiet {
		l.publish(p, stage)
	}
	if stage != v1alpha1.LifecycleDeprecated && stage != v1alpha1.LifecycleRetired {
		p.Status.Usage = nil
		return false, 0
	}
	period := l.UsagePeriod
	if period <= 0 {
		period = 10 * time.Minute
	}
	u := p.Status.Usage
	if u == nil || u.Lifecycle != stage || u.RefreshedAt.Before(p.Status.LifecycleChangedAt) || l.now().Sub(u.RefreshedAt.Time) >= period {
		return true, period
	}
	return false, period - l.now().Sub(u.RefreshedAt.Time)
}

// RetirementSweepDue reports whether the product is Retired and its retirement sweep, due once per
// move to Retired that apimsync saw (status.retirementSweepPending), has not been made yet.
func RetirementSweepDue(p *v1alpha1.Product) bool {
	return p.Spec.EffectiveLifecycle() == v1alpha1.LifecycleRetired && p.Status.RetirementSweepPending
}

// refreshUsage reads the product's applications (one paginated list) into its usage report. When a
// retired product still has live applications to suspend (RetirementSweepDue), it stores no report and
// returns them all: suspendAll suspends the live ones and reports what that leaves.
func (l *Lifecycle) refreshUsage(ctx context.Context, c *tsclient.Client, p *v1alpha1.Product) (retiring []tsclient.Application, err error) {
	apps, err := c.ListProductApplications(ctx, p.Status.ProductID)
	if err != nil {
		return nil, fmt.Errorf("cannot list the applications of product %d for its usage report: %w", p.Status.ProductID, err)
	}
	if RetirementSweepDue(p) && slices.ContainsFunc(apps, func(a tsclient.Application) bool { return a.State == kit.AppLive }) {
		return apps, nil
	}
	p.Status.RetirementSweepPending = false // nothing live to suspend: the sweep is done
	l.StoreUsage(p, apps)
	return nil, nil
}

// suspendAll suspends the live ones of a retired product's applications: every application on the
// product, whether an Application object manages it or not (a developer-portal sign-up, one made by
// hand), since retiring a product cuts every key to it. Nothing outside the product is touched: apps
// is the product's own list. suspended is told of each application it suspended (or found gone), for
// the snapshot cache. It then stores the usage report of the
// applications as they now are (no second list) and emits an Event with the count.
func (l *Lifecycle) suspendAll(ctx context.Context, c *tsclient.Client, p *v1alpha1.Product, apps []tsclient.Application, suspended func(id int64, gone bool)) error {
	now := make([]tsclient.Application, 0, len(apps))
	count := 0
	for _, a := range apps {
		if a.ServiceID != p.Status.ProductID {
			continue // porta's service filter is not trusted blindly: another product's application is never touched
		}
		if a.State == kit.AppLive {
			_, err := c.SuspendApplication(ctx, a.AccountID, a.ID)
			if err == nil {
				count++
			}
			switch {
			case tsclient.IsNotFound(err): // deleted meanwhile
				suspended(a.ID, true)
				continue
			case err == nil, tsclient.IsInvalid(err):
				// porta suspends only a live application (app/models/contract/states.rb:31-33): a
				// refusal means someone suspended it first.
				a.State = kit.AppSuspended
			default:
				return fmt.Errorf("cannot suspend application %d (account %d) of retired product %d: %w", a.ID, a.AccountID, p.Status.ProductID, err)
			}
			suspended(a.ID, false)
		}
		now = append(now, a)
	}
	p.Status.RetirementSweepPending = false
	l.StoreUsage(p, now)
	if l.Recorder != nil {
		l.Recorder.Eventf(p, nil, "Normal", v1alpha1.ReasonApplicationsSuspended, "Retire",
			"the product is retired: %d applications suspended in 3scale now (every live one on it, with or without an Application object); %d suspended in all, %d still live (pending ones, which porta cannot suspend)",
			count, p.Status.Usage.SuspendedApplications, p.Status.Usage.LiveApplications)
	}
	return nil
}

// storeUsage makes apps the product's usage report, taken now in its current stage, and sets the
// metric of a Deprecated product.
func (l *Lifecycle) StoreUsage(p *v1alpha1.Product, apps []tsclient.Application) {
	top := defaultUsageReportTop
	if p.Spec.UsageReport != nil && p.Spec.UsageReport.Top > 0 {
		top = int(p.Spec.UsageReport.Top)
	}
	p.Status.Usage = usageReport(apps, top, l.now())
	p.Status.Usage.Lifecycle = p.Spec.EffectiveLifecycle()
	if p.Status.Usage.Lifecycle == v1alpha1.LifecycleDeprecated && !l.Quiet {
		DeprecatedProductApplications.WithLabelValues(p.Namespace, p.Name).Set(float64(p.Status.Usage.LiveApplications))
	}
}

// usageReport counts live and suspended applications and lists the accounts with the most live ones
// (then by account id), each with its applications by name.
func usageReport(apps []tsclient.Application, top int, now time.Time) *v1alpha1.ProductUsage {
	u := &v1alpha1.ProductUsage{RefreshedAt: metav1.Time{Time: now}}
	byAccount := map[int64]*v1alpha1.AccountUsage{}
	for _, a := range apps {
		if a.State == kit.AppSuspended {
			u.SuspendedApplications++
			continue
		}
		u.LiveApplications++
		acc := byAccount[a.AccountID]
		if acc == nil {
			acc = &v1alpha1.AccountUsage{Account: a.OrgName, AccountID: a.AccountID}
			byAccount[a.AccountID] = acc
		}
		acc.Applications = append(acc.Applications, v1alpha1.ApplicationUsage{Name: a.Name, Plan: a.PlanName})
	}
	for _, acc := range byAccount {
		slices.SortFunc(acc.Applications, func(a, b v1alpha1.ApplicationUsage) int { return cmp.Compare(a.Name, b.Name) })
		u.Accounts = append(u.Accounts, *acc)
	}
	slices.SortFunc(u.Accounts, func(a, b v1alpha1.AccountUsage) int {
		if c := cmp.Compare(len(b.Applications), len(a.Applications)); c != 0 {
			return c
		}
		return cmp.Compare(a.AccountID, b.AccountID)
	})
	if len(u.Accounts) > top {
		u.Accounts = u.Accounts[:top]
	}
	return u
}

// usageNote is what the Synced condition of a Deprecated or Retired product adds.
func usageNote(p *v1alpha1.Product) string {
	u, at := p.Status.Usage, p.Status.LifecycleChangedAt
	if u == nil || at == nil {
		return fmt.Sprintf("%s; usage report pending", p.Spec.EffectiveLifecycle())
	}
	date := at.UTC().Format(time.DateOnly)
	if p.Spec.EffectiveLifecycle() == v1alpha1.LifecycleRetired {
		return fmt.Sprintf("retired on %s: %d applications suspended, %d still live", date, u.SuspendedApplications, u.LiveApplications)
	}
	return fmt.Sprintf("deprecated since %s: %d live applications in %d accounts still use it", date, u.LiveApplications, len(u.Accounts))
}
