package simulator

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fieldsDefinitions is the fields definitions endpoint.
const fieldsDefinitions = "/admin/api/fields_definitions"

// fieldsSummary lists the fields definitions as (target, name, label, required, hidden, read_only,
// position), in the order given.
func fieldsSummary(objs []map[string]any) [][]any {
	out := [][]any{}
	for _, o := range objs {
		out = append(out, []any{o["target"], o["name"], o["label"], o["required"], o["hidden"], o["read_only"], o["position"]})
	}
	return out
}

// listedFields decodes GET /admin/api/fields_definitions.json.
func (h *harness) listedFields() []map[string]any {
	h.t.Helper()
	res := h.check("list fields", "GET", fieldsDefinitions+".json", nil, 200, "")
	items, _ := res.body.(map[string]any)["fields_definitions"].([]any)
	out := []map[string]any{}
	for _, it := range items {
		obj, _ := it.(map[string]any)["fields_definition"].(map[string]any)
		out = append(out, obj)
	}
	return out
}

// TestFieldsDefinitionDefaults: every tenant starts with FieldsDefinition.create_defaults!
// (fields_definition.rb:63-72; provider_methods.rb:132,296-300; db/seeds.rb:28): each target's default
// fields, labelled DEFAULT_LABELS or humanized, required when required on the target.
func TestFieldsDefinitionDefaults(t *testing.T) {
	h := newHarness(t)
	want := [][]any{
		{"Account", "org_name", "Organization/Group Name", true, false, false, float64(1)},
		{"User", "username", "Username", true, false, false, float64(1)},
		{"Cinstance", "name", "Name", true, false, false, float64(1)},
		{"User", "email", "Email", true, false, false, float64(2)},
		{"Cinstance", "description", "Description", false, false, false, float64(2)},
	}
	got := h.listedFields()
	if diff := cmp.Diff(want, fieldsSummary(got)); diff != "" {
		t.Errorf("default fields (-want +got):\n%s", diff)
	}
	for _, f := range got {
		if c, ok := f["choices"].([]any); !ok || len(c) != 0 {
			t.Errorf("%v: choices %v, want []", f["name"], f["choices"])
		}
	}
	if n := h.sim.Count("other", KindFieldsDefinitions); n != 5 {
		t.Errorf("tenant other has %d fields definitions, want 5", n)
	}
	if n := h.sim.Count("acme", KindServices); n != 0 {
		t.Errorf("the defaults made %d services", n)
	}
}

// TestFieldsDefinitionCreate: create permits target, label, required, hidden, read_only, choices[] and
// name (fields_definitions_controller.rb:47,58-60); a new field is last of its target
// (set_last_position_in_target_scope, fields_definition.rb:132-136).
func TestFieldsDefinitionCreate(t *testing.T) {
	h := newHarness(t)
	res := h.check("create", "POST", fieldsDefinitions+".json", url.Values{"fields_definition[target]": {"Account"},
		"fields_definition[name]": {"department"}, "fields_definition[label]": {"Department"}, "fields_definition[hidden]": {"1"},
		"fields_definition[choices][]": {"Sales", "R&D"}, "fields_definition[hint]": {"dropped"}}, 201, "")
	if diff := cmp.Diff(map[string]any{"target": "Account", "name": "department", "label": "Department", "required": false,
		"hidden": true, "read_only": false, "choices": []any{"Sales", "R&D"}, "position": float64(2), "hint": nil},
		fields(res.body, "fields_definition", "target", "name", "label", "required", "hidden", "read_only", "choices", "position", "hint")); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	// Flat form parameters are wrapped (ApiSupport::Params, app/lib/api_support/params.rb:7); a JSON body
	// too, bare or under fields_definition.
	res = h.check("flat form", "POST", fieldsDefinitions+".json", url.Values{"target": {"User"}, "name": {"nickname"}, "label": {"Nickname"}}, 201, "")
	if got := fields(res.body, "fields_definition", "position")["position"]; got != float64(3) {
		t.Errorf("a new User field at %v, want 3 (after username and email)", got)
	}
	res = h.sendJSON("POST", fieldsDefinitions+".json", `{"fields_definition":{"target":"Cinstance","name":"purpose","label":"Purpose","choices":["a","b"]}}`)
	if res.code != 201 || !strings.Contains(res.raw, `"choices":["a","b"]`) {
		t.Errorf("JSON create: %d %s", res.code, res.raw)
	}
	// The same name on another target is another field (uniqueness scoped to account and target,
	// fields_definition.rb:37).
	h.check("same name, other target", "POST", fieldsDefinitions+".json", url.Values{"target": {"User"}, "name": {"department"}, "label": {"Dept"}}, 201, "")

	cases := []struct {
		name    string
		form    url.Values
		wantRaw string
	}{
		{"no attribute at all", url.Values{"other": {"x"}}, ""},
		{"only a dropped attribute", url.Values{"hint": {"x"}}, `{"errors":{"label":["can't be blank"],"name":["can't be blank",` +
			`"` + msgFieldNameFormat + `"],"target":["can't be blank"]}}`},
		// target= ignores a target outside FieldsDefinition.targets (fields_definition.rb:88-90).
		{"unknown target", url.Values{"target": {"Service"}, "name": {"x"}, "label": {"X"}}, `{"errors":{"target":["can't be blank"]}}`},
		{"name format", url.Values{"target": {"Account"}, "name": {"1st"}, "label": {"X"}}, `{"errors":{"name":["` + msgFieldNameFormat + `"]}}`},
		{"name taken on the target", url.Values{"target": {"Account"}, "name": {"department"}, "label": {"X"}}, `{"errors":{"name":["has already been taken"]}}`},
		{"name reserved", url.Values{"target": {"Account"}, "name": {"send"}, "label": {"X"}}, `{"errors":{"name":["is reserved"]}}`},
		// allowed_fields_definition_name (fields_definition.rb:138-146): a column not built in.
		{"a column of the target", url.Values{"target": {"Account"}, "name": {"state"}, "label": {"X"}}, `{"errors":{"name":["` + msgFieldNameForbidden + `"]}}`},
		{"the extra_fields column", url.Values{"target": {"User"}, "name": {"extra_fields"}, "label": {"X"}}, `{"errors":{"name":["` + msgFieldNameForbidden + `"]}}`},
		{"required and hidden", url.Values{"target": {"Account"}, "name": {"x"}, "label": {"X"}, "required": {"true"}, "hidden": {"true"}},
			`{"errors":{"required":["` + msgRequiredHidden + `"]}}`},
		{"required and read-only", url.Values{"target": {"Account"}, "name": {"x"}, "label": {"X"}, "required": {"1"}, "read_only": {"1"}},
			`{"errors":{"required":["` + msgRequiredHidden + `"]}}`},
		{"billing_address not read-only", url.Values{"target": {"Account"}, "name": {"billing_address"}, "label": {"X"}},
			`{"errors":{"read_only":["` + msgBillingReadOnly + `"]}}`},
		// only_choices_for_text (fields_definition.rb:154-162).
		{"choices for a decimal", url.Values{"target": {"Account"}, "name": {"vat_rate"}, "label": {"X"}, "choices[]": {"1", "2"}},
			`{"errors":{"choices":["are not allowed for decimal fields"]}}`},
		{"choices for an association", url.Values{"target": {"Account"}, "name": {"country"}, "label": {"X"}, "choices[]": {"ES"}},
			`{"errors":{"choices":["are not allowed for this type of fields"]}}`},
		{"label too long", url.Values{"target": {"Account"}, "name": {"x"}, "label": {strings.Repeat("l", 256)}}, `{"errors":{"label":["` + msgTooLong255 + `"]}}`},
	}
	for _, tc := range cases {
		if tc.wantRaw == "" {
			h.check(tc.name, "POST", fieldsDefinitions+".json", tc.form, 400, "Required parameter missing: fields_definition")
			continue
		}
		h.check(tc.name, "POST", fieldsDefinitions+".json", tc.form, 422, tc.wantRaw)
	}
	// A built-in field is allowed, with choices when its column is text.
	h.check("built-in vat_code with choices", "POST", fieldsDefinitions+".json", url.Values{"target": {"Account"}, "name": {"vat_code"},
		"label": {"VAT"}, "choices[]": {"A", "B"}}, 201, "")
	h.check("billing_address read-only", "POST", fieldsDefinitions+".json", url.Values{"target": {"Account"}, "name": {"billing_address"},
		"label": {"Billing"}, "read_only": {"true"}}, 201, "")
	// A column the model ignores is no attribute: allowed (account.rb:5-7, user.rb:26).
	h.check("ignored column", "POST", fieldsDefinitions+".json", url.Values{"target": {"User"}, "name": {"salt"}, "label": {"Salt"}}, 201, "")
	if n := h.sim.Count("acme", KindFieldsDefinitions); n != 12 {
		t.Errorf("%d fields definitions, want 12", n)
	}
}

// TestFieldsDefinitionUpdate: update permits the same minus name plus position
// (fields_definitions_controller.rb:62-64); target is attr_readonly (fields_definition.rb:51).
func TestFieldsDefinitionUpdate(t *testing.T) {
	h := newHarness(t)
	a := h.create(fieldsDefinitions+".json", url.Values{"target": {"Account"}, "name": {"a"}, "label": {"A"}}, "fields_definition")
	b := h.create(fieldsDefinitions+".json", url.Values{"target": {"Account"}, "name": {"b"}, "label": {"B"}}, "fields_definition")
	res := h.check("update", "PUT", path(fieldsDefinitions+"/%d.json", a), url.Values{"label": {"Alpha"}, "name": {"renamed"}, "read_only": {"true"}}, 200, "")
	if diff := cmp.Diff(map[string]any{"label": "Alpha", "name": "a", "read_only": true},
		fields(res.body, "fields_definition", "label", "name", "read_only")); diff != "" {
		t.Errorf("updated (-want +got):\n%s", diff)
	}
	h.check("no attribute", "PUT", path(fieldsDefinitions+"/%d.json", a), url.Values{"foo": {"x"}}, 400, "Required parameter missing: fields_definition")
	h.check("required and read-only", "PUT", path(fieldsDefinitions+"/%d.json", a), url.Values{"required": {"true"}}, 422,
		`{"errors":{"required":["`+msgRequiredHidden+`"]}}`)
	h.check("unknown", "PUT", fieldsDefinitions+"/999.json", url.Values{"label": {"x"}}, 404, `{"status":"Not found"}`)

	// The answer shows the target asked for; it is never stored.
	res = h.check("change target", "PUT", path(fieldsDefinitions+"/%d.json", b), url.Values{"target": {"User"}}, 200, "")
	if got := fields(res.body, "fields_definition", "target")["target"]; got != "User" {
		t.Errorf("answered target %v, want User (in memory)", got)
	}
	res = h.check("read", "GET", path(fieldsDefinitions+"/%d.json", b), nil, 200, "")
	if got := fields(res.body, "fields_definition", "target")["target"]; got != "Account" {
		t.Errorf("stored target %v, want Account", got)
	}

	// A required field of its target stays required, visible and writable.
	org := int64(1)
	res = h.check("org_name", "PUT", path(fieldsDefinitions+"/%d.json", org), url.Values{"required": {"false"}, "hidden": {"true"}, "label": {"Company"}}, 200, "")
	if diff := cmp.Diff(map[string]any{"name": "org_name", "label": "Company", "required": true, "hidden": false},
		fields(res.body, "fields_definition", "name", "label", "required", "hidden")); diff != "" {
		t.Errorf("org_name (-want +got):\n%s", diff)
	}

	// position: org_name 1, a 2, b 3; b to 1 shifts the others down (acts_as_list); below 1 is 1.
	h.check("move b", "PUT", path(fieldsDefinitions+"/%d.json", b), url.Values{"position": {"0"}}, 200, "")
	var got [][]any
	for _, f := range h.sim.Objects("acme", KindFieldsDefinitions) {
		if f["target"] == "Account" {
			got = append(got, []any{f["name"], f["position"]})
		}
	}
	if diff := cmp.Diff([][]any{{"b", int64(1)}, {"org_name", int64(2)}, {"a", int64(3)}}, got); diff != "" {
		t.Errorf("Account fields after the move (-want +got):\n%s", diff)
	}
}

// TestFieldsDefinitionDelete: a field required on its target is not destroyed (before_destroy throws
// :abort, fields_definition.rb:46,182-184), yet the responder answers 200 as for a deletion
// (responder.rb:16-17); another goes, and the lower fields of its target move up.
func TestFieldsDefinitionDelete(t *testing.T) {
	h := newHarness(t)
	a := h.create(fieldsDefinitions+".json", url.Values{"target": {"User"}, "name": {"a"}, "label": {"A"}}, "fields_definition")
	b := h.create(fieldsDefinitions+".json", url.Values{"target": {"User"}, "name": {"b"}, "label": {"B"}}, "fields_definition")
	h.check("delete a", "DELETE", path(fieldsDefinitions+"/%d.json", a), nil, 200, "")
	h.check("deleted", "GET", path(fieldsDefinitions+"/%d.json", a), nil, 404, `{"status":"Not found"}`)
	res := h.check("b moved up", "GET", path(fieldsDefinitions+"/%d.json", b), nil, 200, "")
	if got := fields(res.body, "fields_definition", "position")["position"]; got != float64(3) {
		t.Errorf("b at %v, want 3", got)
	}
	for _, id := range []int64{1, 2, 3, 4} { // org_name, username, email, name: required on their targets
		h.check("delete a required field", "DELETE", path(fieldsDefinitions+"/%d.json", id), nil, 200, "")
		h.check("still there", "GET", path(fieldsDefinitions+"/%d.json", id), nil, 200, "")
	}
	h.check("delete description", "DELETE", path(fieldsDefinitions+"/%d.json", 5), nil, 200, "")
	h.check("unknown", "DELETE", fieldsDefinitions+"/999.json", nil, 404, `{"status":"Not found"}`)
	if n := h.sim.Count("acme", KindFieldsDefinitions); n != 5 {
		t.Errorf("%d fields definitions, want 5", n)
	}
}

// TestAccountExtraFields: an account's defined extra fields are top-level properties of its JSON
// (ExtraFieldsRepresenter) and in <extra_fields> of its XML (extra_fields.rb:57-71); they are written by
// name or under extra_fields[...] (base_controller.rb:98-113); the signup checks required ones
// (signup_params.rb:22, extra_fields.rb:12-19), the update nothing, and choices are never checked.
func TestAccountExtraFields(t *testing.T) {
	h := newHarness(t)
	dept := h.create(fieldsDefinitions+".json", url.Values{"target": {"Account"}, "name": {"department"}, "label": {"Department"},
		"choices[]": {"Sales", "Support"}}, "fields_definition")
	acc, _ := h.signup("ACME", "alice", url.Values{"department": {"Sales"}, "undefined": {"dropped"}})
	res := h.check("read", "GET", path("/admin/api/accounts/%d.json", acc), nil, 200, "")
	if diff := cmp.Diff(map[string]any{"department": "Sales", "undefined": nil}, fields(res.body, "account", "department", "undefined")); diff != "" {
		t.Errorf("signed-up account (-want +got):\n%s", diff)
	}
	// Outside the choices is taken, by name or under extra_fields[...], which wins.
	res = h.check("update outside the choices", "PUT", path("/admin/api/accounts/%d.json", acc), url.Values{"department": {"Legal"}}, 200, "")
	if got := fields(res.body, "account", "department")["department"]; got != "Legal" {
		t.Errorf("department %v, want Legal", got)
	}
	res = h.check("update nested", "PUT", path("/admin/api/accounts/%d.json", acc), url.Values{"department": {"A"}, "extra_fields[department]": {"B"}}, 200, "")
	if got := fields(res.body, "account", "department")["department"]; got != "B" {
		t.Errorf("department %v, want B", got)
	}
	if got := h.sim.Objects("acme", KindAccounts)[0]["department"]; got != "B" {
		t.Errorf("Objects: department %v, want B", got)
	}
	res = h.check("XML", "GET", path("/admin/api/accounts/%d.xml", acc), nil, 200, "")
	if want := "<org_name>ACME</org_name><extra_fields><department>B</department></extra_fields><monthly_billing_enabled>"; !strings.Contains(res.raw, want) {
		t.Errorf("account XML %s lacks %s", res.raw, want)
	}

	// A required extra field: the signup refuses it blank; the update does not check it.
	h.create(fieldsDefinitions+".json", url.Values{"target": {"Account"}, "name": {"tax_id"}, "label": {"Tax"}, "required": {"true"}}, "fields_definition")
	h.create(fieldsDefinitions+".json", url.Values{"target": {"User"}, "name": {"nickname"}, "label": {"Nick"}, "required": {"true"}}, "fields_definition")
	h.check("signup without them", "POST", "/admin/api/signup.json", url.Values{"org_name": {"B"}, "username": {"bob"}}, 422,
		`{"errors":{"nickname":["can't be blank"],"tax_id":["can't be blank"]}}`)
	h.check("update without it", "PUT", path("/admin/api/accounts/%d.json", acc), url.Values{"org_name": {"ACME 2"}}, 200, "")
	b, bob := h.signup("B", "bob", url.Values{"tax_id": {"T1"}, "nickname": {"bobby"}})
	res = h.check("user", "GET", path("/admin/api/accounts/%d/users/%d.json", b, bob), nil, 200, "")
	if got := fields(res.body, "user", "nickname")["nickname"]; got != "bobby" {
		t.Errorf("user nickname %v, want bobby", got)
	}

	// A required optional built-in field is checked too, with its choices ("illegal value", fields.rb:291-304).
	h.create(fieldsDefinitions+".json", url.Values{"target": {"Account"}, "name": {"vat_code"}, "label": {"VAT"}, "required": {"true"},
		"choices[]": {"V1", "V2"}}, "fields_definition")
	h.check("signup with a built-in outside its choices", "POST", "/admin/api/signup.json", url.Values{"org_name": {"C"}, "username": {"carol"},
		"tax_id": {"T"}, "nickname": {"c"}, "vat_code": {"V3"}}, 422, `{"errors":{"vat_code":["illegal value"]}}`)
	c, _ := h.signup("C", "carol", url.Values{"tax_id": {"T"}, "nickname": {"c"}, "vat_code": {"V2"}})
	if got := fields(h.send("GET", path("/admin/api/accounts/%d.json", c), nil).body, "account", "vat_code")["vat_code"]; got != "V2" {
		t.Errorf("vat_code %v, want V2", got)
	}

	// The values outlive their definition: gone from the JSON with it, back when it is defined again.
	h.check("delete department", "DELETE", path(fieldsDefinitions+"/%d.json", dept), nil, 200, "")
	res = h.check("without the definition", "GET", path("/admin/api/accounts/%d.json", acc), nil, 200, "")
	if got := fields(res.body, "account", "department")["department"]; got != nil {
		t.Errorf("undefined department shown: %v", got)
	}
	h.check("ignored when undefined", "PUT", path("/admin/api/accounts/%d.json", acc), url.Values{"department": {"Z"}}, 200, "")
	h.create(fieldsDefinitions+".json", url.Values{"target": {"Account"}, "name": {"department"}, "label": {"Department"}}, "fields_definition")
	res = h.check("defined again", "GET", path("/admin/api/accounts/%d.json", acc), nil, 200, "")
	if got := fields(res.body, "account", "department")["department"]; got != "B" {
		t.Errorf("department %v, want B kept", got)
	}
}
