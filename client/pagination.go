package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
)

// perPage is the page size porta allows at most; every paginated list is read with it to exhaustion.
const perPage = 500

// unwrapItem removes porta's single-key wrapper of one object: {"service":{...}} -> {...}.
func unwrapItem(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil && len(m) == 1 {
		for _, v := range m {
			if len(v) > 0 && v[0] == '{' {
				return v
			}
		}
	}
	return raw
}

// decodeList reads porta's list shapes: {"services":[{"service":{...}}]}, a bare array of wrapped
// objects (backend usages), or a bare array of objects.
func decodeList[T any](raw []byte) ([]T, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		var outer map[string]json.RawMessage
		if err := json.Unmarshal(raw, &outer); err != nil {
			return nil, err
		}
		for _, v := range outer {
			if len(v) > 0 && v[0] == '[' {
				if err := json.Unmarshal(v, &items); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		var t T
		if err := json.Unmarshal(unwrapItem(it), &t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// rawBody captures an answer's body for decoding by the caller.
type rawBody []byte

// UnmarshalJSON implements json.Unmarshaler.
func (r *rawBody) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// list reads a list endpoint; when paginated, page after page with per_page=500 until a short page.
func list[T any](ctx context.Context, c *Client, endpoint string, paginated bool, args ...any) ([]T, error) {
	var all []T
	for page := 1; page <= c.maxPages; page++ {
		r := call{method: "GET", endpoint: endpoint, args: args}
		if paginated {
			r.query = url.Values{"page": {strconv.Itoa(page)}, "per_page": {strconv.Itoa(perPage)}}
		}
		var body rawBody
		if err := c.do(ctx, r, &body); err != nil {
			return nil, err
		}
		items, err := decodeList[T](body)
		if err != nil {
			return nil, &APIError{StatusCode: 200, Method: "GET", Endpoint: endpoint, Message: fmt.Sprintf("cannot decode the list: %v", err)}
		}
		all = append(all, items...)
		if !paginated || len(items) < perPage {
			return all, nil
		}
	}
	return nil, &APIError{StatusCode: 200, Method: "GET", Endpoint: endpoint,
		Message: fmt.Sprintf("the list has more than %d pages of %d items, the most this client reads", c.maxPages, perPage)}
}

// one sends a call whose answer is one wrapped object and decodes it.
func one[T any](ctx context.Context, c *Client, r call) (*T, error) {
	var body rawBody
	if err := c.do(ctx, r, &body); err != nil {
		return nil, err
	}
	var t T
	if len(body) == 0 {
		return &t, nil
	}
	if err := json.Unmarshal(unwrapItem(json.RawMessage(body)), &t); err != nil {
		return nil, &APIError{StatusCode: 200, Method: r.method, Endpoint: r.endpoint, Message: "cannot decode the answer: " + err.Error()}
	}
	return &t, nil
}

// form builds form values, leaving out nil pointers and empty strings marked optional.
type form url.Values

func (f form) str(key, v string) form {
	if v != "" {
		url.Values(f).Set(key, v)
	}
	return f
}

func (f form) strPtr(key string, v *string) form {
	if v != nil {
		url.Values(f).Set(key, *v)
	}
	return f
}

func (f form) boolPtr(key string, v *bool) form {
	if v != nil {
		url.Values(f).Set(key, strconv.FormatBool(*v))
	}
	return f
}

func (f form) int(key string, v int64) form {
	if v != 0 {
		url.Values(f).Set(key, strconv.FormatInt(v, 10))
	}
	return f
}

func (f form) intPtr(key string, v *int64) form {
	if v != nil {
		url.Values(f).Set(key, strconv.FormatInt(*v, 10))
	}
	return f
}

func (f form) values() url.Values { return url.Values(f) }
