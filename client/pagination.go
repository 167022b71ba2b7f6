package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
)

// perPage is the page size every paginated list is read with, to exhaustion: the most porta allows.
// Every paginated list the client reads — services, backend APIs, a backend's metrics, methods and
// mapping rules, a product's backend usages, a plan's limits — pages with Admin::Api::Filters::Pagination,
// whose per_page_range is 1..500 (porta app/controllers/admin/api/filters/pagination.rb:26-27; backend
// usages: app/controllers/admin/api/services/backend_usages_controller.rb:14,19; limits:
// app/controllers/admin/api/application_plan_limits_controller.rb:7). A larger per_page would be
// answered with pages of 500, which the short-page test below would take for the end of the list.
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

// listKeys are the keys of porta's list answers that are not the endpoint's last path segment; "" is a
// bare array (porta app/representers/application_plans_representer.rb:4 wraps_collection :plans;
// backend_api_configs_representer.rb, a Roar collection without wrapper;
// api_docs/services_representer.rb:4 wraps_collection :api_docs).
var listKeys = map[string]string{
	"application_plans": "plans",
	"account_plans":     "plans",
	"service_plans":     "plans",
	"backend_usages":    "",
	"active_docs":       "api_docs",
	// The CMS's lists (app/lib/three_scale/api/collection.rb: wraps_collection :collection).
	"sections":  "collection",
	"templates": "collection",
	"files":     "collection",
}

// listKeysByParent are the keys of the lists whose last path segment is a value, by the segment before
// it: a product's proxy configs of one environment, /proxy/configs/{environment}.json (porta
// app/representers/proxy_configs_representer.rb: wraps_collection :proxy_configs).
var listKeysByParent = map[string]string{
	"configs": "proxy_configs",
}

// listKey is the key under which porta answers the list of endpoint (a template or a path): its last
// path segment ("/admin/api/services.json": "services") unless listKeys or listKeysByParent say
// otherwise; "" for a bare array.
func listKey(endpoint string) string {
	segs := strings.Split(strings.TrimSuffix(endpoint, ".json"), "/")
	if len(segs) >= 2 {
		if key, ok := listKeysByParent[segs[len(segs)-2]]; ok {
			return key
		}
	}
	seg := segs[len(segs)-1]
	if key, ok := listKeys[seg]; ok {
		return key
	}
	return seg
}

// decodeList reads a list answer of porta's: {"<key>":[...]} (with other keys, such as the pagination
// "metadata", ignored), or a bare array when key is "". Each item is an object, wrapped
// ({"service":{...}}) or not. Any other shape is an error, never an empty list: a JSON object without
// the key, a key that is not an array, null, an item that is not an object.
func decodeList[T any](raw []byte, key string) ([]T, error) {
	arr := json.RawMessage(raw)
	if key != "" {
		var outer map[string]json.RawMessage
		if err := json.Unmarshal(raw, &outer); err != nil {
			return nil, fmt.Errorf("want a JSON object with %q: %w", key, err)
		}
		var found bool
		if arr, found = outer[key]; !found {
			return nil, fmt.Errorf("the answer has no %q", key)
		}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(arr, &items); err != nil || items == nil {
		return nil, fmt.Errorf("want a JSON array%s, got %.40s", map[bool]string{true: " under " + strconv.Quote(key)}[key != ""], bytes.TrimSpace(arr))
	}
	out := make([]T, 0, len(items))
	for i, it := range items {
		if it = bytes.TrimSpace(it); len(it) == 0 || it[0] != '{' {
			return nil, fmt.Errorf("item %d is not a JSON object: %.40s", i, it)
		}
		var t T
		if err := json.Unmarshal(unwrapItem(it), &t); err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
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

// list reads a list endpoint; when paginated, page after page with per_page=500 until a short page. An
// answer that is not the list porta sends (see decodeList) is an error.
func list[T any](ctx context.Context, c *Client, endpoint string, paginated bool, args ...any) ([]T, error) {
	return listWith[T](ctx, c, endpoint, paginated, nil, args...)
}

// listWith is list with filters in the query (e.g. service_id).
func listWith[T any](ctx context.Context, c *Client, endpoint string, paginated bool, filters url.Values, args ...any) ([]T, error) {
	size := 0
	if paginated {
		size = perPage
	}
	return listPages[T](ctx, c, endpoint, size, filters, args...)
}

// listPages reads a list endpoint page after page of size items until a short page (size 0: one
// unpaged request), with filters in the query.
func listPages[T any](ctx context.Context, c *Client, endpoint string, size int, filters url.Values, args ...any) ([]T, error) {
	key := listKey(endpoint)
	paginated := size > 0
	var all []T
	for page := 1; page <= c.maxPages; page++ {
		r := call{method: "GET", endpoint: endpoint, args: args, query: url.Values{}}
		if paginated {
			r.query = url.Values{"page": {strconv.Itoa(page)}, "per_page": {strconv.Itoa(size)}}
		}
		for k, v := range filters {
			r.query[k] = v
		}
		var body rawBody
		if err := c.do(ctx, r, &body); err != nil {
			return nil, err
		}
		items, err := decodeList[T](body, key)
		if err != nil {
			return nil, &APIError{StatusCode: 200, Method: "GET", Endpoint: endpoint, Message: fmt.Sprintf("cannot decode the list: %v", err)}
		}
		all = append(all, items...)
		if !paginated || len(items) < size {
			return all, nil
		}
	}
	return nil, &APIError{StatusCode: 200, Method: "GET", Endpoint: endpoint,
		Message: fmt.Sprintf("the list has more than %d pages of %d items, the most this client reads", c.maxPages, size)}
}

// one sends a call whose answer is one wrapped object and decodes it.
func one[T any](ctx context.Context, c *Client, r call) (*T, error) {
	if c.dryRun != nil && r.method != http.MethodGet {
		if err := c.do(ctx, r, nil); err != nil {
			return nil, err
		}
		var base *T
		if r.method == http.MethodPut && strings.HasSuffix(r.endpoint, "/{id}.json") {
			// porta answers an update with the object as it is after it: read it as it is now, and lay
			// what the update sets over it, so that what follows sees every field (a plan id, a state).
			if cur, err := one[T](ctx, c, call{method: http.MethodGet, endpoint: r.endpoint, args: r.args}); err == nil {
				base = cur
			}
		}
		return echo(r, base), nil
	}
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

// dryRunIDs numbers what a dry run creates.
var dryRunIDs atomic.Int64

// echo is the answer to a write a dry-run client did not send, as if 3scale had taken it: a T with the
// fields the request's form sets (by their JSON names, top-level fields only) and the id its path names.
// What the caller does next then follows from what it asked for, as after a real answer.
func echo[T any](r call, base *T) *T {
	var t T
	if base != nil {
		t = *base
	}
	v := reflect.ValueOf(&t).Elem()
	if v.Kind() != reflect.Struct {
		return &t
	}
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		value := r.form.Get(name)
		if name == "id" && value == "" && strings.HasSuffix(r.endpoint, "/{id}.json") && len(r.args) > 0 {
			value = fmt.Sprint(r.args[len(r.args)-1])
		}
		if name == "id" && value == "" && r.method == http.MethodPost {
			// A create's echo: an id of its own, negative (never one of 3scale's), so that what the dry
			// run writes next refers to it (a mapping rule counting a method just created).
			value = fmt.Sprint(dryRunIDs.Add(-1))
		}
		if name == "" || value == "" {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(value)
		case reflect.Int, reflect.Int32, reflect.Int64:
			if n, err := strconv.ParseInt(value, 10, 64); err == nil {
				f.SetInt(n)
			}
		case reflect.Bool:
			if b, err := strconv.ParseBool(value); err == nil {
				f.SetBool(b)
			}
		}
	}
	return &t
}
