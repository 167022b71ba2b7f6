package product

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPolicyCredentials: a policy configuration holds a credential under a key that names one, when its
// value can hold one (a string, an object, a list; not a flag such as CORS's allow_credentials), and in
// the value that sets a header (or parameter) whose name is a credential's, as the headers policy does.
func TestPolicyCredentials(t *testing.T) {
	cases := map[string][]string{
		`{"password":"s3cret"}`:                         {"password"},
		`{"headers":{"Authorization" : "Bearer x"}}`:    {"headers.Authorization"},
		`{"credentials":{"user":"a","pass":"b"}}`:       {"credentials"},
		`{"api_keys":["k1"]}`:                           {"api_keys"},
		`{"allow_origin":"*","allow_credentials":true}`: nil,
		`{"token_introspection_ttl":30,"cache":null}`:   nil,
		`{"rules":[{"header":"X-Cache","cache":true}]}`: nil,
		`{"request":[{"op":"set","header":"X-Cache","value_type":"plain","value":"1"},{"op":"set","header":"Authorization","value_type":"plain","value":"Bearer x"}]}`: {
			"request[1].value"},
		`{"request":[{"op":"push","header":"X-Api-Key","value":"k"}],"response":[{"op":"delete","header":"Cookie"}]}`: {"request[0].value"},
		`{"rules":[{"op":"add","arg":"access_token","value":"t"}]}`:                                                   {"rules[0].value"},
	}
	for conf, want := range cases {
		if diff := cmp.Diff(want, policyCredentials([]byte(conf))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", conf, diff)
		}
	}
}
