package product

import (
	"fmt"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// RetainWarning warns, at apply time, of a Retain deletion policy taken (old nil on create) while
// applications use p's plans (applications counts them, asked only then).
func RetainWarning(old, p *v1alpha1.Product, applications func() int) []string {
	if p.Spec.EffectiveDeletionPolicy() != v1alpha1.DeletionPolicyRetain ||
		(old != nil && old.Spec.EffectiveDeletionPolicy() == v1alpha1.DeletionPolicyRetain) {
		return nil
	}
	n := applications()
	if n == 0 {
		return nil
	}
	return []string{fmt.Sprintf("deletionPolicy Retain while %d Applications use this Product's plans: deleting this resource leaves "+
		"the product in 3scale with those applications' access to it, and apimsync no longer manages it", n)}
}
