package product

import (
	"context"
	"fmt"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/kit"
)

// Production promotion, declared in spec.production. 3scale keeps numbered versions of each product's
// gateway configuration per APIcast environment: every deploy that changes it makes a new staging
// ("sandbox") version, and a promotion copies a staging version to production under the same number.
// porta refuses to promote a version number twice (422), so "production runs what staging runs" is
// "production's latest version is staging's latest version". apimsync reads both latest versions only for
// a Product with spec.production; it promotes at most once per staging version, and a promotion 3scale
// refuses is recorded and not tried again until staging moves on or the spec changes: a refusal is a
// note and an Event on a Synced product, never a loop.

// promotionTarget is the staging version apimsync is to promote now, 0 for none: nothing with Manual, when
// production runs the target already, when staging has no such version yet, or when 3scale refused that
// very promotion for this generation of the spec.
func promotionTarget(p *v1alpha1.Product, v *kit.ConfigVersions) int {
	spec := p.Spec.Production
	if spec == nil || v == nil {
		return 0
	}
	target := 0
	switch spec.Promote {
	case v1alpha1.PromoteLatest:
		target = v.Staging
	case v1alpha1.PromotePinned:
		if spec.Version != nil && *spec.Version <= v.Staging {
			target = *spec.Version
		}
	}
	if target == 0 || target == v.Production {
		return 0
	}
	if st := p.Status.Production; st != nil && st.RefusedVersion == target && st.RefusedGeneration == p.Generation {
		return 0
	}
	return target
}

// recordProduction records in status what the versions tell (status.production, kept only with
// spec.production).
func recordProduction(p *v1alpha1.Product, v *kit.ConfigVersions) {
	if p.Spec.Production == nil || v == nil {
		p.Status.Production = nil
		return
	}
	st := p.Status.Production
	if st == nil {
		st = &v1alpha1.ProductionStatus{}
		p.Status.Production = st
	}
	st.StagingVersion, st.ProductionVersion = v.Staging, v.Production
	st.Current = v.Staging == v.Production
}

// promote promotes the staging version production is to run, if any (promotionTarget), and records the
// outcome in snap and in status. A refusal (4xx) is recorded and announced, not returned: the product
// itself is in sync.
func (s *Syncer) promote(ctx context.Context, c *tsclient.Client, p *v1alpha1.Product, snap *Snapshot) error {
	target := promotionTarget(p, snap.Configs)
	if target == 0 {
		recordProduction(p, snap.Configs)
		return nil
	}
	promoted, err := c.PromoteProxyConfig(ctx, snap.Product.ID, tsclient.EnvironmentSandbox, target, tsclient.EnvironmentProduction)
	if tsclient.AnswerLost(err) {
		// Settled from state: production's latest version is the target when the promotion landed.
		if v, rerr := kit.LatestConfigVersion(ctx, c, snap.Product.ID, tsclient.EnvironmentProduction); rerr == nil && v == target {
			promoted, err = &tsclient.ProxyConfig{Version: v, Environment: tsclient.EnvironmentProduction}, nil
		}
	}
	if err != nil && !tsclient.IsInvalid(err) && !tsclient.IsNotFound(err) {
		return fmt.Errorf("cannot promote configuration %d of product %q to production: %w", target, p.Spec.Name, err)
	}
	recordProduction(p, snap.Configs)
	st := p.Status.Production
	if err != nil {
		st.RefusedVersion, st.RefusedGeneration = target, p.Generation
		st.RefusedMessage = fmt.Sprintf("3scale refused to promote staging configuration %d to production: %v", target, err)
		s.event(p, "Warning", v1alpha1.ReasonPromotionRefused, st.RefusedMessage)
		return nil
	}
	st.PromotedVersion = target
	if newer := snap.Configs.Production; newer > promoted.Version {
		// porta keeps the copy, but production's latest version, the one APIcast loads, stays the newer.
		st.RefusedVersion, st.RefusedGeneration = target, p.Generation
		st.RefusedMessage = fmt.Sprintf("staging configuration %d was promoted, but production keeps running its latest, %d: "+
			"APIcast loads production's highest version, so a version older than that cannot take effect", target, newer)
		s.event(p, "Warning", v1alpha1.ReasonPromotionRefused, st.RefusedMessage)
		return nil
	}
	snap.Configs.Production = promoted.Version
	recordProduction(p, snap.Configs)
	st.RefusedVersion, st.RefusedMessage, st.RefusedGeneration = 0, "", 0
	s.event(p, "Normal", v1alpha1.ReasonPromoted, fmt.Sprintf("promoted staging configuration %d to production", target))
	return nil
}

// event emits an Event on p (the lifecycle's recorder).
func (s *Syncer) event(p *v1alpha1.Product, kind, reason, message string) {
	if s.Lifecycle.Recorder != nil {
		s.Lifecycle.Recorder.Eventf(p, nil, kind, reason, "Promote", "%s", message)
	}
}

// productionNote is what the Synced message says of production, with spec.production.
func productionNote(p *v1alpha1.Product) string {
	st := p.Status.Production
	if p.Spec.Production == nil || st == nil {
		return ""
	}
	note := fmt.Sprintf("production runs configuration %d, staging %d", st.ProductionVersion, st.StagingVersion)
	if st.Current {
		note = fmt.Sprintf("production runs staging's configuration %d", st.StagingVersion)
	}
	if pin := p.Spec.Production.Version; p.Spec.Production.Promote == v1alpha1.PromotePinned && pin != nil && *pin > st.StagingVersion {
		note += fmt.Sprintf("; pinned configuration %d is not in staging yet", *pin)
	}
	if st.RefusedVersion != 0 && st.RefusedGeneration == p.Generation {
		note += "; " + st.RefusedMessage
	}
	return note
}

// syncProduction brings snap's configuration versions up to date after Update's writes (a deploy, or a
// proxy or policy chain update, which porta deploys to staging itself, may have made a staging version),
// then promotes what spec.production asks for.
func (s *Syncer) syncProduction(ctx context.Context, c *tsclient.Client, p *v1alpha1.Product, snap *Snapshot, deployed bool) error {
	var err error
	switch {
	case snap.Configs == nil:
		snap.Configs, err = kit.ReadConfigVersions(ctx, c, snap.Product.ID)
	case deployed:
		snap.Configs.Staging, err = kit.LatestConfigVersion(ctx, c, snap.Product.ID, tsclient.EnvironmentSandbox)
	}
	if err != nil {
		return err
	}
	return s.promote(ctx, c, p, snap)
}
