package simulator

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Fields definitions (custom fields) and the values of the fields they define, as porta's admin API
// serves them: app/controllers/admin/api/fields_definitions_controller.rb; app/models/fields_definition.rb;
// app/lib/fields/{fields,extra_fields,extra_field,provider}.rb; app/representers/
// fields_definition{,s}_representer.rb, fields_representer.rb, extra_fields_representer.rb.
//
// A tenant's fields definitions say which fields its developer accounts (target "Account"), their users
// ("User") and their applications ("Cinstance") have. A definition named after one of the target's
// built-in fields (its required, optional and internal fields: columns) makes that field shown; any
// other name defines an extra field, whose values porta keeps in the object's extra_fields column (a
// serialized hash). The simulator keeps the values of accounts' and users' extra fields and of their
// optional built-in text fields (fieldValues); applications' are not modelled.

// fieldsTarget is a class that includes Fields::Fields (and so calls FieldsDefinition.push_target,
// app/lib/fields/fields.rb:22): its required_fields_are, optional_fields_are, internal_fields_are and
// default_fields_are, and its attributes (columns, with their types) as the model has them.
type fieldsTarget struct {
	name                                   string
	required, optional, internal, defaults []string
	columns                                map[string]string // column name -> type, "id" included, ignored_columns left out
}

// builtin is builtin_fields: required | optional | internal (fields.rb:92-94).
func (c *fieldsTarget) builtin(name string) bool {
	return slices.Contains(c.required, name) || slices.Contains(c.optional, name) || slices.Contains(c.internal, name)
}

// columnsOf reads "name:type name:type ..." (db/schema.rb's columns, in its order).
func columnsOf(spec string) map[string]string {
	out := map[string]string{"id": "integer"}
	for _, col := range strings.Fields(spec) {
		name, typ, _ := strings.Cut(col, ":")
		out[name] = typ
	}
	return out
}

// Target names (FieldsDefinition.targets: the classes' names, fields_definition.rb:14-16).
const (
	targetAccount   = "Account"
	targetUser      = "User"
	targetCinstance = "Cinstance"
)

// fieldsTargets are FieldsDefinition.targets in the order create_defaults! walks them. porta's order is
// the order the three classes are loaded in; the simulator takes Account, User, Cinstance (it only shows
// in the seeded definitions' ids).
var fieldsTargets = []*fieldsTarget{
	// app/models/account.rb:15-21. Columns: db/schema.rb:38-115 (create_table "accounts"), less the
	// ignored proxy_configs_* columns (account.rb:5-7).
	{name: targetAccount, required: []string{"org_name"},
		optional: []string{"org_legaladdress", "org_legaladdress_cont", "telephone_number", "vat_code", "vat_rate", "fiscal_code",
			"state_region", "city", "country", "zip", "primary_business", "business_category", "po_number"},
		internal: []string{"billing_address"}, defaults: []string{"org_name"},
		columns: columnsOf(`org_name:string org_legaladdress:string created_at:datetime updated_at:datetime provider:boolean
			buyer:boolean country_id:bigint provider_account_id:bigint domain:string telephone_number:string site_access_code:string
			credit_card_partial_number:string credit_card_expires_on:date credit_card_auth_code:string master:boolean
			billing_address_name:string billing_address_address1:string billing_address_address2:string billing_address_city:string
			billing_address_state:string billing_address_country:string billing_address_zip:string billing_address_phone:string
			org_legaladdress_cont:string city:string state_region:string state:string paid:boolean paid_at:datetime
			signs_legal_terms:boolean timezone:string delta:boolean from_email:string primary_business:string
			business_category:string zip:string extra_fields:text vat_code:string fiscal_code:string vat_rate:decimal
			invoice_footnote:text vat_zero_text:text default_account_plan_id:bigint default_service_id:bigint
			credit_card_authorize_net_payment_profile_token:string tenant_id:bigint self_domain:string s3_prefix:string
			prepared_assets_version:integer sample_data:boolean support_email:string finance_support_email:string
			billing_address_first_name:string billing_address_last_name:string email_all_users:boolean partner_id:bigint
			hosted_proxy_deployed_at:datetime po_number:string state_changed_at:datetime`)},
	// app/models/user.rb:9-12. Columns: db/schema.rb:1424-1460, less the ignored crypted_password and salt
	// (user.rb:26).
	{name: targetUser, required: []string{"username", "email"}, optional: []string{"title", "first_name", "last_name", "job_role"},
		defaults: []string{"username", "email"},
		columns: columnsOf(`username:string email:string created_at:datetime updated_at:datetime remember_token:string
			remember_token_expires_at:datetime activation_code:string activated_at:datetime state:string role:string
			lost_password_token:string posts_count:integer account_id:bigint first_name:string last_name:string signup_type:string
			job_role:string last_login_at:datetime last_login_ip:string email_verification_code:string title:string
			extra_fields:text tenant_id:bigint cas_identifier:string lost_password_token_generated_at:datetime
			authentication_id:string open_id:string password_digest:string`)},
	// app/models/cinstance.rb:48-52. Columns: db/schema.rb:297-329.
	{name: targetCinstance, required: []string{"name"}, optional: []string{"description"}, defaults: []string{"name", "description"},
		columns: columnsOf(`plan_id:bigint user_account_id:bigint user_key:string provider_public_key:string created_at:datetime
			updated_at:datetime state:string description:text paid_until:datetime application_id:string name:string
			trial_period_expires_at:datetime setup_fee:decimal type:string redirect_url:text variable_cost_paid_until:datetime
			extra_fields:text tenant_id:bigint create_origin:string first_traffic_at:datetime first_daily_traffic_at:datetime
			service_id:bigint accepted_at:datetime`)},
}

func targetNamed(name string) *fieldsTarget {
	for _, c := range fieldsTargets {
		if c.name == name {
			return c
		}
	}
	return nil
}

// fieldsDefinition is one FieldsDefinition (db/schema.rb:547-562). hint is not in the API.
type fieldsDefinition struct {
	id                         int64
	target, name, label        string
	required, hidden, readOnly bool
	choices                    []any
	pos                        int64
	stamps
}

// json is FieldsDefinitionRepresenter (fields_definition_representer.rb:8-18): choices an array ([]
// when none: serialize :choices, type: Array), position the pos column (fields_definition.rb:53-60).
func (f *fieldsDefinition) json() map[string]any {
	choices := f.choices
	if choices == nil {
		choices = []any{}
	}
	return map[string]any{"id": f.id, "target": f.target, "name": f.name, "label": f.label, "required": f.required,
		"hidden": f.hidden, "read_only": f.readOnly, "choices": choices, "position": f.pos,
		"created_at": f.created, "updated_at": f.updated}
}

// defaultLabels is FieldsDefinition::DEFAULT_LABELS (fields_definition.rb:3-6); other default fields are
// labelled field.humanize.
var defaultLabels = map[string]string{"org_name": "Organization/Group Name", "org_legaladdress": "Legal Address"}

// humanize is ActiveSupport's String#humanize for a field name: "_" to " ", a trailing "_id" dropped,
// the first letter capitalised.
func humanize(name string) string {
	s := strings.ReplaceAll(strings.TrimSuffix(name, "_id"), "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// createDefaultFields is FieldsDefinition.create_defaults! (fields_definition.rb:63-72): for each target,
// each of its default fields, labelled DEFAULT_LABELS or humanized, required when it is a required field
// of the target. porta runs it for every new provider (Account#create_default_fields_definitions,
// after_create, app/models/account/provider_methods.rb:132,296-300) and for master at installation
// (db/seeds.rb:28), so every simulator tenant has them.
func (t *tenant) createDefaultFields() {
	for _, c := range fieldsTargets {
		for _, name := range c.defaults {
			label := defaultLabels[name]
			if label == "" {
				label = humanize(name)
			}
			f := &fieldsDefinition{target: c.name, name: name, label: label, required: slices.Contains(c.required, name), stamps: newStamps()}
			f.pos = t.lastFieldPosition(c.name) + 1
			f.id = t.fieldsID()
			t.fieldDefs[f.id] = f
		}
	}
}

// fieldsID numbers the fields definitions apart from the other objects (porta's ids are per table), so
// that the defaults every tenant gets leave the other objects' ids as they were.
func (t *tenant) fieldsID() int64 { t.fieldsNextID++; return t.fieldsNextID }

// lastFieldPosition is the largest pos among the tenant's fields of target, 0 for none
// (set_last_position_in_target_scope, fields_definition.rb:132-136).
func (t *tenant) lastFieldPosition(target string) int64 {
	var last int64
	for _, f := range t.fieldDefs {
		if f.target == target && f.pos > last {
			last = f.pos
		}
	}
	return last
}

// definedFields are the tenant's fields definitions of target in position order: the provider's
// fields_definitions association is ordered by pos (provider_methods.rb:110-121, by_position); id breaks
// ties.
func (t *tenant) definedFields(target string) []*fieldsDefinition {
	var out []*fieldsDefinition
	for _, f := range t.fieldDefs {
		if target == "" || f.target == target {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].pos != out[j].pos {
			return out[i].pos < out[j].pos
		}
		return out[i].id < out[j].id
	})
	return out
}

// definedExtra reports whether name is a defined extra field of target: defined, and not one of the
// target's built-in fields (Fields::Fields#extra_field?, fields.rb:312-314).
func (t *tenant) definedExtra(target, name string) bool {
	c := targetNamed(target)
	if c == nil || c.builtin(name) {
		return false
	}
	return t.fieldDefined(target, name)
}

func (t *tenant) fieldDefined(target, name string) bool {
	for _, f := range t.fieldDefs {
		if f.target == target && f.name == name {
			return true
		}
	}
	return false
}

// fieldsDefinitionAttributes are what wrap_parameters puts under fields_definition:
// FieldsDefinition.attribute_names + position (fields_definitions_controller.rb:6; db/schema.rb:547-562);
// ApiSupport::Params wraps form and JSON bodies alike (app/lib/api_support/params.rb:7).
var fieldsDefinitionAttributes = []string{"id", "account_id", "created_at", "updated_at", "target", "hidden", "required", "label",
	"name", "choices", "hint", "read_only", "pos", "tenant_id", "position"}

// fieldsDefinitionSent is params.require(:fields_definition) passing: the wrapper, or an attribute Rails
// wraps under it (as elsewhere in the simulator, the query's count too).
func fieldsDefinitionSent(r *request) bool {
	if r.top["fields_definition"] {
		return true
	}
	for _, k := range fieldsDefinitionAttributes {
		if r.top[k] {
			return true
		}
	}
	return false
}

// fieldsDefinitionExcludes is Fields::ExtraField::InputField.excludes (app/lib/fields/extra_field.rb:7-11):
// the public instance methods of a BasicObject subclass, BasicObject's and the class's own
// (method_missing, send and public_send, :18-27). Only those the name format lets through matter.
var fieldsDefinitionExcludes = []string{"!", "!=", "==", "__id__", "__send__", "equal?", "instance_eval", "instance_exec",
	"method_missing", "send", "public_send"}

// fieldNameFormat is the name format (fields_definition.rb:36).
var fieldNameFormat = regexp.MustCompile(`^[A-Za-z][A-Za-z\d_-]*$`)

// Messages of FieldsDefinition's validations (fields_definition.rb:36,144,150,161,178) and of Rails'.
const (
	msgFieldNameFormat    = "Name should start with letters, and can contain numbers, - and _"
	msgFieldNameForbidden = "Field name is not allowed"
	msgRequiredHidden     = "Fields cannot be required AND hidden/read_only"
	msgBillingReadOnly    = "billing_address has to be read_only"
	msgTooLong255         = "is too long (maximum is 255 characters)"
)

func fieldsDefinitionRoutes() []route {
	return []route{
		// index: current_account.fields_definitions, ordered by pos, not paged (fields_definitions_controller.rb:11-13);
		// FieldsDefinitionsRepresenter wraps_resource :fields_definitions, items wrapped each
		// (fields_definitions_representer.rb:6-8).
		handle("GET", "/admin/api/fields_definitions.json", func(r *request) answer {
			defs := r.t.definedFields("")
			ids := make([]int64, 0, len(defs))
			for _, f := range defs {
				ids = append(ids, f.id)
			}
			return listOf("fields_definitions", "fields_definition", ids, jsonOf(r.t.fieldDefs), r.form, unpaged)
		}),
		handle("POST", "/admin/api/fields_definitions.json", createFieldsDefinition),
		handle("GET", "/admin/api/fields_definitions/{id}.json", func(r *request) answer {
			return withFieldsDefinition(r, func(f *fieldsDefinition) answer { return ok("fields_definition", f.json()) })
		}),
		handle("PUT", "/admin/api/fields_definitions/{id}.json", updateFieldsDefinition),
		// destroy (fields_definitions_controller.rb:40-43): before_destroy throws :abort for a field required
		// on its target (avoid_destroy_required_field_on_target, fields_definition.rb:46,182-184) without
		// adding an error, so the responder, seeing no errors, answers as for a deletion: 200 with no body
		// (ActionController::Responder#to_format; ThreeScale::Api::Responder#api_behavior, head :ok,
		// app/lib/three_scale/api/responder.rb:16-17). The field stays. Otherwise acts_as_list closes the
		// gap: the lower fields of the target move up (after_destroy decrement_positions_on_lower_items).
		handle("DELETE", "/admin/api/fields_definitions/{id}.json", func(r *request) answer {
			return withFieldsDefinition(r, func(f *fieldsDefinition) answer {
				if c := targetNamed(f.target); c != nil && slices.Contains(c.required, f.name) {
					return deleted()
				}
				delete(r.t.fieldDefs, f.id)
				for _, o := range r.t.fieldDefs {
					if o.target == f.target && o.pos > f.pos {
						o.pos--
					}
				}
				return deleted()
			})
		}),
	}
}

// withFieldsDefinition finds {id} among the tenant's (current_account.fields_definitions.find, 404).
func withFieldsDefinition(r *request, f func(*fieldsDefinition) answer) answer {
	x, found := r.t.fieldDefs[r.params["id"]]
	if !found {
		return notFound()
	}
	return f(x)
}

// createFieldsDefinition is FieldsDefinitionsController#create (fields_definitions_controller.rb:17-23,
// 58-60): target, label, required, hidden, read_only, choices[] and name (others dropped); the new field
// last among its target's (set_last_position_in_target_scope, before_create, fields_definition.rb:44,
// 132-136). 201 with the field; 422 with the errors.
func createFieldsDefinition(r *request) answer {
	if !fieldsDefinitionSent(r) {
		return parameterMissing("fields_definition")
	}
	f := &fieldsDefinition{}
	applyFieldsDefinitionForm(r, f)
	if has(r, "name") {
		f.name = r.form.Get("name")
	}
	if a := r.t.validateFieldsDefinition(f, 0); a.code != 0 {
		return a
	}
	f.pos = r.t.lastFieldPosition(f.target) + 1
	f.id, f.stamps = r.t.fieldsID(), newStamps()
	r.t.fieldDefs[f.id] = f
	return created("fields_definition", f.json())
}

// updateFieldsDefinition is FieldsDefinitionsController#update (fields_definitions_controller.rb:33-36,
// 62-64): target, label, required, hidden, read_only, choices[] and position; name is not permitted.
// target and name are attr_readonly (fields_definition.rb:51) and Rails is told not to raise on assigning
// them (config/application.rb:100): a target given is assigned in memory, validated and shown in the
// answer, but never stored, so the next read shows the field's target as it was. position moves the field
// within its target's list as acts_as_list 0.9.17 does (Gemfile.lock:163): below 1 it is 1
// (check_top_position); the fields between the old and the new position shift by one when another field
// held the new one (update_positions). 200 with the field; 422 with the errors, nothing changed.
func updateFieldsDefinition(r *request) answer {
	return withFieldsDefinition(r, func(f *fieldsDefinition) answer {
		if !fieldsDefinitionSent(r) {
			return parameterMissing("fields_definition")
		}
		next := *f
		applyFieldsDefinitionForm(r, &next)
		newPos, moved := int64(0), false
		if v, err := strconv.ParseInt(strings.TrimSpace(r.form.Get("position")), 10, 64); has(r, "position") && err == nil {
			newPos, moved = max(v, 1), true
		}
		if a := r.t.validateFieldsDefinition(&next, f.id); a.code != 0 {
			return a
		}
		shown := next.target
		next.target = f.target // attr_readonly: not written
		if moved && newPos != f.pos {
			collides := false
			for _, o := range r.t.fieldDefs {
				if o.id != f.id && o.target == f.target && o.pos == newPos {
					collides = true
				}
			}
			if collides {
				for _, o := range r.t.fieldDefs {
					switch {
					case o.id == f.id || o.target != f.target:
					case f.pos < newPos && o.pos > f.pos && o.pos <= newPos:
						o.pos--
					case f.pos > newPos && o.pos >= newPos && o.pos < f.pos:
						o.pos++
					}
				}
			}
			next.pos = newPos
		}
		next.touch()
		*f = next
		out := f.json()
		out["target"] = shown
		return ok("fields_definition", out)
	})
}

// applyFieldsDefinitionForm applies the permitted attributes common to create and update (DEFAULT_PARAMS,
// fields_definitions_controller.rb:47): target only when it is one of FieldsDefinition.targets
// (target=, fields_definition.rb:88-90: another is ignored, and a new field is then without target);
// booleans cast as Rails does; choices only as an array of scalars (choices: [], a scalar is dropped).
// Then set_required_if_required_field_on_target (before_validation, fields_definition.rb:33,164-174): a
// required field of the target is required, neither hidden nor read-only, whatever was asked.
func applyFieldsDefinitionForm(r *request, f *fieldsDefinition) {
	if has(r, "target") && targetNamed(r.form.Get("target")) != nil {
		f.target = r.form.Get("target")
	}
	if has(r, "label") {
		f.label = r.form.Get("label")
	}
	for name, to := range map[string]*bool{"required": &f.required, "hidden": &f.hidden, "read_only": &f.readOnly} {
		if has(r, name) {
			b := railsBool(r.form.Get(name))
			*to = b != nil && *b
		}
	}
	if choices, given := formChoices(r); given {
		f.choices = choices
	}
	if c := targetNamed(f.target); c != nil && slices.Contains(c.required, f.name) {
		f.required, f.hidden, f.readOnly = true, false, false
	}
}

// formChoices reads choices[]: form values of choices[] or fields_definition[choices][], or a JSON array
// (the simulator's form holds it as JSON text). An array holding an object or an array is not permitted.
func formChoices(r *request) ([]any, bool) {
	for _, k := range []string{"fields_definition[choices][]", "choices[]"} {
		if vs, found := r.form[k]; found {
			out := make([]any, 0, len(vs))
			for _, v := range vs {
				out = append(out, v)
			}
			return out, true
		}
	}
	raw := strings.TrimSpace(r.form.Get("choices"))
	if !strings.HasPrefix(raw, "[") {
		return nil, false
	}
	var list []any
	if json.Unmarshal([]byte(raw), &list) != nil {
		return nil, false
	}
	for _, v := range list {
		switch v.(type) {
		case map[string]any, []any:
			return nil, false
		}
	}
	return list, true
}

// validateFieldsDefinition runs FieldsDefinition's validations (fields_definition.rb:33-42) in their
// order; self is the id of the field being updated (0 for a new one), left out of the uniqueness check.
func (t *tenant) validateFieldsDefinition(f *fieldsDefinition, self int64) answer {
	errs := fieldErrors{}
	// validates :label, :target, :name, presence: true, length: { maximum: 255 } (:35): the presence of
	// the three, then their lengths.
	for _, v := range []struct{ field, value string }{{"label", f.label}, {"target", f.target}, {"name", f.name}} {
		if strings.TrimSpace(v.value) == "" {
			errs.add(v.field, "can't be blank")
		}
	}
	for _, v := range []struct{ field, value string }{{"label", f.label}, {"target", f.target}, {"name", f.name}} {
		if len([]rune(v.value)) > 255 {
			errs.add(v.field, msgTooLong255)
		}
	}
	if !fieldNameFormat.MatchString(f.name) { // :36, nil not allowed
		errs.add("name", msgFieldNameFormat)
	}
	for _, o := range t.fieldDefs { // :37, scope account and target, case sensitive
		if o.id != self && f.name != "" && o.target == f.target && o.name == f.name {
			errs.add("name", "has already been taken")
			break
		}
	}
	if slices.Contains(fieldsDefinitionExcludes, f.name) { // :38
		errs.add("name", "is reserved")
	}
	if c := targetNamed(f.target); c != nil { // validate ..., if: :target? (:41-42)
		// allowed_fields_definition_name (:138-146): a column (or attribute) of the target that is not
		// one of its built-in fields.
		if _, column := c.columns[f.name]; column && !c.builtin(f.name) {
			errs.add("name", msgFieldNameForbidden)
		}
		// check_base_validations (:148-152).
		if f.required && (f.hidden || f.readOnly) {
			errs.add("required", msgRequiredHidden)
		}
		// read_only_billing_address (:176-180).
		if c.name == targetAccount && f.name == "billing_address" && !f.readOnly {
			errs.add("read_only", msgBillingReadOnly)
		}
		// only_choices_for_text (:154-162), if choices.any?: a built-in field takes choices only when its
		// column is a string or text; an extra field always.
		if choicesAny(f.choices) && c.builtin(f.name) {
			typ := c.columns[f.name]
			if typ != "string" && typ != "text" {
				if typ == "" {
					typ = "this type of"
				}
				errs.add("choices", "are not allowed for "+typ+" fields")
			}
		}
	}
	return errs.answer()
}

// choicesAny is Array#any?: an element that is neither nil nor false.
func choicesAny(choices []any) bool {
	for _, c := range choices {
		if c != nil && c != false {
			return true
		}
	}
	return false
}

// fieldValues are the values an account or user has for fields the simulator has no attribute for: its
// extra fields (porta's extra_fields hash, in the order they were first set, which its XML keeps,
// extra_fields.rb:57-71) and its optional built-in text fields (columns). Values stay when their
// definition goes (extra_fields= never erases a key, extra_fields.rb:43-55; columns stay), and show again
// when it comes back.
type fieldValues struct {
	keys []string
	vals map[string]string
}

func (v *fieldValues) set(name, value string) {
	if v.vals == nil {
		v.vals = map[string]string{}
	}
	if _, found := v.vals[name]; !found {
		v.keys = append(v.keys, name)
	}
	v.vals[name] = value
}

func (v *fieldValues) get(name string) (string, bool) {
	value, found := v.vals[name]
	return value, found
}

// clone copies v, for an update that may be refused.
func (v fieldValues) clone() fieldValues {
	out := fieldValues{keys: slices.Clone(v.keys), vals: map[string]string{}}
	for k, x := range v.vals {
		out.vals[k] = x
	}
	return out
}

// textBuiltin reports whether name is an optional built-in field of the target whose column is text:
// those the simulator keeps (vat_rate, a decimal, and country, an association, are not modelled).
func textBuiltin(c *fieldsTarget, name string) bool {
	typ := c.columns[name]
	return slices.Contains(c.optional, name) && (typ == "string" || typ == "text")
}

// writeFields takes the values of the target's defined fields from the request into v, as porta's
// controllers permit them: each defined field by its name at the top level (account_params,
// app/controllers/admin/api/base_controller.rb:98-113; user_params, signups_controller.rb:18-21,
// buyers_users_controller.rb:125-127), and, for an account, each defined extra field also under
// extra_fields[...] (base_controller.rb:102), which wins over the top-level one (assign_attributes
// extracts the top-level extra fields first, then assigns extra_fields, fields.rb:118-130). Only scalars
// are permitted. The built-in fields the simulator has attributes for (org_name, username, email) and the
// built-in ones it does not model are left to the caller.
func (t *tenant) writeFields(r *request, target string, v *fieldValues) {
	c := targetNamed(target)
	for _, f := range t.definedFields(target) {
		extra := !c.builtin(f.name)
		if !extra && !textBuiltin(c, f.name) {
			continue
		}
		if target == targetAccount && extra {
			if vs, found := r.form["extra_fields["+f.name+"]"]; found {
				v.set(f.name, vs[0])
				continue
			}
		}
		if has(r, f.name) && !jsonArray(r.form.Get(f.name)) {
			v.set(f.name, r.form.Get(f.name))
		}
	}
}

// jsonArray reports whether a form value is a JSON body's array (the simulator's form holds it as JSON
// text), which permit drops for a scalar parameter.
func jsonArray(v string) bool {
	var list []any
	return strings.HasPrefix(strings.TrimSpace(v), "[") && json.Unmarshal([]byte(v), &list) == nil
}

// validateFields adds to errs what validate_fields! turns on (fields.rb:7,283-304; extra_fields.rb:9,
// 12-19), which only the API signup does (Signup::SignupParams, app/lib/signup/signup_params.rb:5,15,22):
// a required extra field blank is "can't be blank"; a required optional built-in field blank is too, and
// one with choices whose value is not among them is "illegal value". An extra field's choices are never
// checked, there nor anywhere else.
func (t *tenant) validateFields(target string, v *fieldValues, errs fieldErrors) {
	c := targetNamed(target)
	for _, f := range t.definedFields(target) {
		value, _ := v.get(f.name)
		switch {
		case !f.required:
		case !c.builtin(f.name): // extra_fields_valid?
			if strings.TrimSpace(value) == "" {
				errs.add(f.name, "can't be blank")
			}
		case slices.Contains(c.optional, f.name): // optional_fields_valid?
			if strings.TrimSpace(value) == "" {
				errs.add(f.name, "can't be blank")
			} else if choicesAny(f.choices) && !slices.ContainsFunc(f.choices, func(x any) bool { return jsonParam(x) == value }) {
				errs.add(f.name, "illegal value")
			}
		}
	}
}

// renderFields adds an object's defined fields to its JSON, as FieldsRepresenter and
// ExtraFieldsRepresenter do (fields_representer.rb, extra_fields_representer.rb): each defined built-in
// field kept here and each defined extra field, by its name, at the top level, with its value (field_value,
// fields.rb:328-341); one without a value (nil) is left out, as representable leaves out nil properties.
// An extra field named as one of the representer's properties replaces it.
func (t *tenant) renderFields(target string, v *fieldValues, out map[string]any) {
	c := targetNamed(target)
	for _, f := range t.definedFields(target) {
		extra := !c.builtin(f.name)
		if !extra && !textBuiltin(c, f.name) {
			continue
		}
		if value, found := v.get(f.name); found {
			out[f.name] = value
		} else if extra {
			delete(out, f.name)
		}
	}
}

// fieldsXML writes an object's fields as to_xml does (app/models/account.rb:472-473, user.rb:308-309):
// fields_to_xml, each defined built-in field with a value that is not blank, in position order
// (fields.rb:343-354), builtin giving those the simulator has attributes for; then extra_fields_to_xml,
// <extra_fields> with each kept value, in the order first set, that is a defined extra field and not
// blank (extra_fields.rb:57-71). Values are stripped.
func (t *tenant) fieldsXML(target string, v *fieldValues, builtin map[string]string, field func(name, value string), raw func(string)) {
	c := targetNamed(target)
	for _, f := range t.definedFields(target) {
		if !c.builtin(f.name) {
			continue
		}
		value, found := builtin[f.name]
		if !found {
			value, _ = v.get(f.name)
		}
		if strings.TrimSpace(value) != "" {
			field(f.name, strings.TrimSpace(value))
		}
	}
	raw("<extra_fields>")
	for _, name := range v.keys {
		if value := v.vals[name]; t.definedExtra(target, name) && strings.TrimSpace(value) != "" {
			field(name, strings.TrimSpace(value))
		}
	}
	raw("</extra_fields>")
}
