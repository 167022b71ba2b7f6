package client

import (
	"context"
	"errors"
	"fmt"
)

// A create whose answer was lost (the connection closed after the request was sent) may or may not have
// been applied. Rather than fail the caller's whole sync — which then reads everything again — the
// client settles it with one read of the collection: the object the create made, found by what it was
// created with, is the answer; when there is none, the create made nothing and is sent again, once.
// Only a dropped connection is settled so: a timeout may still be running in porta, where a read could
// miss it and a second create duplicate it.

// AnswerLost reports a request that was sent and whose connection closed without an answer: it may or
// may not have been applied, and what 3scale holds now tells which (a deploy is settled so, by reading
// staging's latest configuration).
func AnswerLost(err error) bool { return answerLost(err) }

// answerLost reports a request that was sent and whose connection closed without an answer.
func answerLost(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.StatusCode == 0 && !e.NotSent && !errors.Is(err, context.DeadlineExceeded) &&
		!errors.Is(err, context.Canceled) && !isTimeout(err) && !errors.Is(err, errAddressRefused)
}

// settled sends a create through send and, when its answer was lost, settles it with find (one read):
// what find returns is the created object; nil means nothing was made, and the create is sent again.
// A read that fails leaves the lost answer's error to the caller.
func settled[T any](ctx context.Context, c *Client, send func() (*T, error), find func() (*T, error)) (*T, error) {
	made, err := send()
	if err == nil || c.dryRun != nil || !answerLost(err) {
		return made, err
	}
	found, ferr := find()
	switch {
	case ferr != nil:
		return nil, err
	case found != nil:
		return found, nil
	}
	return send()
}

// settledByName is settled for the create of a top-level object (a product, a backend, a plan), found
// again by the system name it was created with: that of the apimsync object making it, which the engine
// looked for before it created (an object already there is adopted, and says so). Without a system name
// (porta would derive one) a lost answer is left to the caller, whose next attempt settles it from state.
func settledByName[T any](ctx context.Context, c *Client, systemName string, send func() (*T, error), find func() (*T, error)) (*T, error) {
	if systemName == "" {
		return send()
	}
	return settled(ctx, c, send, find)
}

// first returns the first item of items for which match is true, nil when none is.
func first[T any](items []T, err error, match func(T) bool) (*T, error) {
	if err != nil {
		return nil, err
	}
	for i := range items {
		if match(items[i]) {
			return &items[i], nil
		}
	}
	return nil, nil
}

// sameMetricName reports whether a metric listed in scope s has the system name a create asked for:
// porta keeps a backend's metric as "<name>.<backend id>".
func sameMetricName(s Scope, listed, asked string) bool {
	return listed == asked || listed == fmt.Sprintf("%s.%d", asked, s.id)
}
