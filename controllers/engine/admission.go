package engine

import (
	"context"
	"fmt"
)

// Admission: what apply time can decide of an object by the very rules its syncs apply, for the
// validating webhook. One definition of each rule: the webhook asks the kind's syncer, as a sync does.

// Refusal is an object refused at apply time: the reason and message it would be Invalid with.
type Refusal struct {
	Reason  string
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Admit decides obj at apply time, reading the cluster (through the syncer's reader) and never 3scale:
//   - what obj's spec alone refuses (Validator) is refused, with the message obj would be Invalid with;
//   - what Connect or Resolve would make Invalid is a warning, not a refusal: it depends on other objects
//     (a plan's limit on a metric its Product lacks, a policy with no definition), which a GitOps tool may
//     be applying in the same change, after this one (Flux's dry-run of the whole set would never pass);
//   - so is a remote object another resource holds (SoleOwner, once Resolve found obj's scope): a GitOps
//     rename or namespace move applies the new resource before it prunes the old one, which then hands
//     the remote object over; refused, the new one would never be stored, and the old one, pruned by a
//     tool that goes on, would delete the remote object instead;
//   - a wait (Orphan) is neither: GitOps applies in any order, and the wait ends by itself.
//
// SoleOwner must claim nothing (no kit.Claims): admission sees objects that may never be stored.
func (r *Reconciler[T, D, S]) Admit(ctx context.Context, obj T) (warnings []string, err error) {
	if err := r.validate(obj); err != nil {
		return nil, refusalOf(err)
	}
	s, err := r.connect(ctx, obj)
	if err != nil {
		return warningOf(err), nil
	}
	if _, err := r.Syncer.Resolve(ctx, obj, s); err != nil {
		return warningOf(err), nil
	}
	if r.SoleOwner == nil {
		return nil, nil
	}
	return warningOf(r.SoleOwner(ctx, obj, s)), nil
}

// refusalOf is err as a Refusal when it is Invalid; an error of another class (a failed read) is
// returned as it is: the webhook answers it as an error of its own, and its failure policy decides.
func refusalOf(err error) error {
	class, reason, message := Classify(err)
	if class != ClassInvalid {
		return err
	}
	return &Refusal{Reason: reason, Message: message}
}

// warningOf is the admission warning for an Invalid err, none for any other (nil included).
func warningOf(err error) []string {
	if err == nil {
		return nil
	}
	class, reason, message := Classify(err)
	if class != ClassInvalid {
		return nil
	}
	return []string{fmt.Sprintf("would be Invalid (%s) with what the cluster holds now: %s", reason, message)}
}
