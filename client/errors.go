package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// APIError is an error answer of the 3scale API, or the absence of one (StatusCode 0: timeout, connection
// refused...). Its message never contains the access token.
type APIError struct {
	// StatusCode is the HTTP status, 0 when no answer came.
	StatusCode int
	// Method and Endpoint (path template) of the request.
	Method, Endpoint string
	// Message is porta's error text, or the transport error.
	Message string
	// Errors are the field errors of a 422 answer: {"errors":{"field":["msg"]}}.
	Errors map[string][]string
	// RetryAfter is the delay a 429 (or 503) answer asked for, at most Config.MaxRetryAfter.
	RetryAfter time.Duration
	// RetryAfterAsked is the delay the answer asked for when it was longer than Config.MaxRetryAfter, which
	// RetryAfter is then; 0 otherwise. Error() says so.
	RetryAfterAsked time.Duration
	// Cause is the transport error when no answer came.
	Cause error
	// NotSent: the request never left, because the wait for the tenant's pacing ended first (the
	// context's deadline or cancellation). See NotSent.
	NotSent bool
	// TooLarge: the answer was larger than the most the client reads (Config.MaxResponseBytes).
	TooLarge bool
}

// Error implements error, e.g. `3scale: POST /admin/api/services.json: 422 Unprocessable Entity:
// system_name has already been taken`.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "3scale: %s %s: ", e.Method, e.Endpoint)
	if e.StatusCode == 0 {
		b.WriteString("no answer")
	} else {
		fmt.Fprintf(&b, "%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
	detail := e.detail()
	if e.RetryAfterAsked > 0 {
		if detail != "" {
			detail += "; "
		}
		detail += fmt.Sprintf("3scale asked to wait %s; waiting %s at most (--max-retry-after)", shortDuration(e.RetryAfterAsked), shortDuration(e.RetryAfter))
	}
	if detail != "" {
		b.WriteString(": " + detail)
	}
	return b.String()
}

// shortDuration writes d to the second without zero units at its end: "2h", "5m", "1h30m", "90ms".
func shortDuration(d time.Duration) string {
	if d >= time.Second {
		d = d.Round(time.Second)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func (e *APIError) detail() string {
	if len(e.Errors) == 0 {
		return e.Message
	}
	fields := make([]string, 0, len(e.Errors))
	for f := range e.Errors {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		for _, m := range e.Errors[f] {
			if f == "base" {
				parts = append(parts, m)
			} else {
				parts = append(parts, f+" "+m)
			}
		}
	}
	// Each message is capped already (parseError); many of them are capped together, for they all go
	// into the object's status.
	return plainMessage(strings.Join(parts, "; "), maxDetail)
}

// maxDetail caps the field errors of one answer together, in Error().
const maxDetail = 2 * maxMessage

// Unwrap returns the transport error, if any.
func (e *APIError) Unwrap() error { return e.Cause }

func asAPIError(err error) (*APIError, bool) {
	var e *APIError
	ok := errors.As(err, &e)
	return e, ok
}

func hasStatus(err error, codes ...int) bool {
	e, ok := asAPIError(err)
	if !ok {
		return false
	}
	for _, c := range codes {
		if e.StatusCode == c {
			return true
		}
	}
	return false
}

// IsNotFound reports a 404: the object is not there.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsInvalid reports a 422: 3scale rejected the request's content.
func IsInvalid(err error) bool { return hasStatus(err, http.StatusUnprocessableEntity) }

// IsInUse reports a refusal to delete an object others depend on: a DELETE answered with an errors body
// and 403, 409, or 422. Porta's ThreeScale::Api::Responder renders the errors of a refused DELETE with
// 403 (porta app/lib/three_scale/api/responder.rb:67-75), e.g. an application plan that applications
// use, {"errors":{"base":["This application plan cannot be deleted! At least one application depends
// on it."]}} (app/models/plan.rb:174-186, config/locales/en.yml:2053), a backend still used by a
// product, or a custom policy of the registry that a product's policy chain uses, {"errors":{"base":
// ["This policy is currently being used in one of your APIs and cannot be modified."]}}
// (app/models/policy.rb:14,98-102, en.yml:2000); a 422 or 409 refusal is understood too. Such a refusal
// passes once the dependants are gone: the caller waits, it is not an invalid spec. A 403 without an
// errors body — a token without the scope, {"error":"Your access token does not have the correct
// permissions"} — is not one: IsForbidden.
func IsInUse(err error) bool {
	e, ok := asAPIError(err)
	if !ok || e.Method != http.MethodDelete || len(e.Errors) == 0 {
		return false
	}
	switch e.StatusCode {
	case http.StatusForbidden, http.StatusConflict, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// NotSent reports a request that never reached 3scale: its wait for the tenant's pacing ended first, or
// the admin URL policy refused the connection at dial time. It changed nothing there. (Any other failure
// without an answer may have reached it.)
func NotSent(err error) bool {
	e, ok := asAPIError(err)
	return ok && (e.NotSent || errors.Is(err, errAddressRefused))
}

// IsTooLarge reports an answer larger than the most the client reads: the same request would meet it
// again (a list asks for smaller pages instead).
func IsTooLarge(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.TooLarge
}

// IsConflict reports a 409.
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

// IsUnauthorized reports a 401: the token is missing or wrong.
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsForbidden reports a 403 that is a permission error (the token lacks access), not an in-use refusal.
func IsForbidden(err error) bool {
	return hasStatus(err, http.StatusForbidden) && !IsInUse(err)
}

// IsRateLimited reports a 429.
func IsRateLimited(err error) bool { return hasStatus(err, http.StatusTooManyRequests) }

// RetryAfter returns the delay a rate-limited (429) or unavailable (503) answer asked for.
func RetryAfter(err error) (time.Duration, bool) {
	e, ok := asAPIError(err)
	if !ok || (e.StatusCode != http.StatusTooManyRequests && e.StatusCode != http.StatusServiceUnavailable) || e.RetryAfter <= 0 {
		return 0, false
	}
	return e.RetryAfter, true
}

// IsUnavailable reports a 5xx, a timeout or a connection error.
func IsUnavailable(err error) bool {
	e, ok := asAPIError(err)
	if !ok {
		return errors.Is(err, context.DeadlineExceeded)
	}
	return e.StatusCode == 0 || e.StatusCode >= 500
}

// IsRetryable reports an error that may pass by itself: unavailable, rate limited, or a conflict.
func IsRetryable(err error) bool {
	return IsUnavailable(err) || IsRateLimited(err) || IsConflict(err)
}

// IsTerminal reports an error that retrying the same request cannot fix.
func IsTerminal(err error) bool {
	return err != nil && !IsRetryable(err) && !IsNotFound(err)
}

// HasAlreadyBeenTaken reports porta's 422 "has already been taken" on field (e.g. system_name): the
// object exists already, typically created by a request whose answer was lost.
func HasAlreadyBeenTaken(err error, field string) bool {
	e, ok := asAPIError(err)
	if !ok || e.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	for _, m := range e.Errors[field] {
		if strings.Contains(m, "already been taken") {
			return true
		}
	}
	return false
}
