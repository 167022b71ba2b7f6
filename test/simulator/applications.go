package simulator

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Applications (porta's Cinstance) of developer accounts and their keys, as porta's admin API serves
// them: app/controllers/admin/api/{buyers_applications,applications,buyer_application_keys}_controller.rb.

// Application states (Contract::States, app/models/contract/states.rb:7-42).
const (
	appPending   = "pending"
	appLive      = "live"
	appSuspended = "suspended"
)

// appKey is an application key (ApplicationKey, app/models/application_key.rb).
type appKey struct {
	value string
	stamps
}

type application struct {
	id, accountID, serviceID, planID int64
	name, description, state         string
	nameSet, descriptionSet          bool // sent at least once (porta leaves out nil fields)
	userKey, appID, verificationKey  string
	// redirectURL is the OAuth/OIDC redirect URL, stripped (cinstance.rb:78-80); nil until one is sent.
	redirectURL *string
	keys        []appKey
	// firstDailyTraffic is the first hit of the latest day with traffic, as apisonator reports it to
	// porta (first_daily_traffic_importer.rb:9); "" while the application never had any (SetTraffic).
	firstDailyTraffic string
	stamps
}

// Authentication modes of a service, as the simulator stores backend_version: "1" user key, "2" app
// id/key, "oidc" (porta stores "oauth" for an OIDC product, with the proxy's authentication_method
// "oidc", app/models/service.rb:475-481).
func isUserKey(svc *service) bool { return svc != nil && svc.backendVersion == "1" }
func isOAuth(svc *service) bool {
	return svc != nil && (svc.backendVersion == "oidc" || svc.backendVersion == "oauth")
}

// json is CinstanceRepresenter (app/representers/cinstance_representer.rb:8-43): user_key and
// provider_verification_key for user-key services (backend_version 1), application_id for the others,
// and for OAuth/OIDC ones redirect_url, client_id (the application id) and client_secret (the first key)
// with the service's oidc_configuration; name and description (the defined fields) when set. Links are
// left out.
func (a *application) json(t *tenant) map[string]any {
	out := map[string]any{"id": a.id, "state": a.state, "enabled": a.enabled(), "created_at": a.created, "updated_at": a.updated,
		"service_id": a.serviceID, "plan_id": a.planID, "account_id": a.accountID, "first_traffic_at": nil, "first_daily_traffic_at": nil}
	if a.firstDailyTraffic != "" {
		out["first_traffic_at"], out["first_daily_traffic_at"] = a.firstDailyTraffic, a.firstDailyTraffic
	}
	svc := t.services[a.serviceID]
	if svc != nil {
		out["service_name"] = svc.name
	}
	if p := t.plans[a.planID]; p != nil {
		out["plan_name"] = p.name
	}
	if acc := t.accounts[a.accountID]; acc != nil {
		out["org_name"] = acc.orgName
	}
	if isUserKey(svc) {
		out["user_key"], out["provider_verification_key"] = a.userKey, a.verificationKey
	} else {
		out["application_id"] = a.appID
	}
	if isOAuth(svc) {
		out["redirect_url"], out["client_id"], out["client_secret"] = nil, a.appID, nil
		if a.redirectURL != nil {
			out["redirect_url"] = *a.redirectURL
		}
		if len(a.keys) > 0 {
			out["client_secret"] = a.keys[0].value
		}
		out["oidc_configuration"] = svc.oidcJSON()
	}
	if a.name != "" || a.nameSet {
		out["name"] = a.name
	}
	if a.descriptionSet {
		out["description"] = a.description
	}
	return out
}

// enabled is Contract#enabled?: live, and the account not scheduled for deletion (states.rb:44-46); the
// simulator has no account scheduled for deletion.
func (a *application) enabled() bool { return a.state == appLive }

func applicationRoutes() []route {
	return []route{
		// Admin::Api::ApplicationsController#index (applications_controller.rb:8-12): the tenant's
		// applications, filtered by the search scopes (Cinstance allowed_search_scopes, cinstance.rb:70:
		// service_id, plan_id and state here), paged; CinstancesRepresenter is a wraps_collection.
		handle("GET", "/admin/api/applications.json", func(r *request) answer {
			keep := func(a *application) bool {
				return (r.form.Get("service_id") == "" || r.form.Get("service_id") == itoa(a.serviceID)) &&
					(r.form.Get("plan_id") == "" || r.form.Get("plan_id") == itoa(a.planID)) &&
					(r.form.Get("state") == "" || r.form.Get("state") == a.state)
			}
			return listOf("applications", "application", sortedIDs(r.t.apps, keep), r.t.appJSONByID, r.form, pagedWithMetadata)
		}),
		// ApplicationsController#find (applications_controller.rb:16-18,30-48): by user_key (user-key
		// services), app_id (the others) or application_id / id (the application's id), optionally within
		// service_id.
		handle("GET", "/admin/api/applications/find.json", func(r *request) answer {
			return findApplication(r, func(a *application) bool {
				return r.form.Get("service_id") == "" || r.form.Get("service_id") == itoa(a.serviceID)
			}, true)
		}),
		// BuyersApplicationsController#index (buyers_applications_controller.rb:8-10): the account's
		// applications, by state, not paged.
		handle("GET", "/admin/api/accounts/{account_id}/applications.json", func(r *request) answer {
			return withAccount(r, "account_id", func(acc *account) answer {
				keep := func(a *application) bool {
					return a.accountID == acc.id && (r.form.Get("state") == "" || r.form.Get("state") == a.state)
				}
				return listOf("applications", "application", sortedIDs(r.t.apps, keep), r.t.appJSONByID, r.form, unpaged)
			})
		}),
		handle("POST", "/admin/api/accounts/{account_id}/applications.json", createApplication),
		// BuyersApplicationsController#find (buyers_applications_controller.rb:51-55).
		handle("GET", "/admin/api/accounts/{account_id}/applications/find.json", func(r *request) answer {
			return withAccount(r, "account_id", func(acc *account) answer {
				return findApplication(r, func(a *application) bool { return a.accountID == acc.id }, false)
			})
		}),
		handle("GET", "/admin/api/accounts/{account_id}/applications/{id}.json", func(r *request) answer {
			return withApp(r, "id", func(a *application) answer { return ok("application", a.json(r.t)) })
		}),
		handle("PUT", "/admin/api/accounts/{account_id}/applications/{id}.json", updateApplication),
		// Cinstance#destroy; its keys go with it (cinstance.rb:21-24).
		handle("DELETE", "/admin/api/accounts/{account_id}/applications/{id}.json", func(r *request) answer {
			return withApp(r, "id", func(a *application) answer { delete(r.t.apps, a.id); return deleted() })
		}),
		// accept, suspend and resume fire the event without bang (buyers_applications_controller.rb:84-104):
		// a transition the state does not allow is 422 (porta's tests "nothing happens on already accepted
		// one", "resume live apps").
		handle("PUT", "/admin/api/accounts/{account_id}/applications/{id}/accept.json", appEvent("accept", appLive, appPending)),
		handle("PUT", "/admin/api/accounts/{account_id}/applications/{id}/suspend.json", appEvent("suspend", appSuspended, appLive)),
		handle("PUT", "/admin/api/accounts/{account_id}/applications/{id}/resume.json", appEvent("resume", appLive, appSuspended)),
		handle("PUT", "/admin/api/accounts/{account_id}/applications/{id}/change_plan.json", changeApplicationPlan),

		// BuyerApplicationKeysController (buyer_application_keys_controller.rb): ApplicationKeysRepresenter,
		// {"keys":[{"key":{"value","created_at","updated_at"}}]} (application_key{,s}_representer.rb).
		handle("GET", "/admin/api/accounts/{account_id}/applications/{application_id}/keys.json", func(r *request) answer {
			return withApp(r, "application_id", func(a *application) answer {
				keys := make([]any, 0, len(a.keys))
				for _, k := range a.keys {
					keys = append(keys, map[string]any{"key": map[string]any{"value": k.value, "created_at": k.created, "updated_at": k.updated}})
				}
				return answer{http.StatusOK, map[string]any{"keys": keys}}
			})
		}),
		handle("POST", "/admin/api/accounts/{account_id}/applications/{application_id}/keys.json", createApplicationKey),
		// remove! (buyer_application_keys_controller.rb:20) finds the key by value (404 when absent) and
		// deletes it; unlike the portals' remove (application_key.rb:45-47,66-68, used by
		// provider/admin/keys_controller.rb:48 and the developer portal's keys_controller.rb:36) it does not
		// keep the last key of a service with mandatory app keys (application_key.rb:49-54).
		handle("DELETE", "/admin/api/accounts/{account_id}/applications/{application_id}/keys/{key}.json", func(r *request) answer {
			return withApp(r, "application_id", func(a *application) answer {
				i := slices.IndexFunc(a.keys, func(k appKey) bool { return k.value == r.key })
				if i < 0 {
					return notFound()
				}
				a.keys = slices.Delete(a.keys, i, i+1)
				a.touch()
				return deleted()
			})
		}),
	}
}

// Formats and messages of Cinstance's and ApplicationKey's validations (cinstance.rb:121-128,
// application_key.rb:15-17; a failed format is "invalid", activerecord.errors.messages.invalid,
// config/locales/en.yml:1957).
var (
	appIDFormat   = regexp.MustCompile(`^[\x21-\x7E]+$`)
	userKeyFormat = regexp.MustCompile(`^(?:[\w\-.]+|(?:[A-Za-z0-9+]{4})*(?:[A-Za-z0-9+]{4}|[A-Za-z0-9+]{3}=|[A-Za-z0-9+]{2}==))$`)
)

const (
	msgInvalid      = "invalid"
	msgTaken        = "has already been taken"
	msgLimitReached = "Limit reached"               // activerecord.errors.models.application_key.attributes.base.limit_reached, en.yml:2066
	msgPlanNotHere  = "not allowed in this context" // cinstance.attributes.plan.not_allowed, en.yml:2061
)

// createApplication is BuyersApplicationsController#create (buyers_applications_controller.rb:14-25,
// 117-125): the plan (a plan of the tenant's services, else 404), the defined fields name and
// description, user_key and application_id, and application_key (one or several) as its first keys.
// Porta requires no name here (Cinstance validates it only for a human edition, cinstance.rb:86,454-456;
// porta's test "special characters in application fields" creates applications without one). It generates
// a user_key (SecureRandom.hex(16), cinstance.rb:27,512-514,524-526) and an application_id
// (SecureRandom.hex(4), app/lib/backend/model_extensions/cinstance.rb:9,82-84) whatever the service's
// authentication, and for an app id/key service (mandatory app key, on by default, db/schema.rb:1212) or
// an OAuth/OIDC one a first key when none is given (cinstance.rb:40,430-432, app/lib/logic/keys.rb:6-12).
// The application is live unless its plan requires approval: pending (Contract#accept_on_create,
// app/models/contract.rb:333-341). 201 with the application; 422 with the errors.
func createApplication(r *request) answer {
	return withAccount(r, "account_id", func(acc *account) answer {
		p, found := r.t.plans[formID(r, "plan_id")]
		if !found || r.t.services[p.serviceID] == nil {
			return notFound()
		}
		svc := r.t.services[p.serviceID]
		if refusal := r.t.findOrCreateServiceContract(acc, svc.id); refusal.code != 0 {
			return refusal
		}
		a := newApplication(acc, p)
		if has(r, "name") {
			a.name, a.nameSet = r.form.Get("name"), true
		}
		if has(r, "description") {
			a.description, a.descriptionSet = r.form.Get("description"), true
		}
		a.setRedirectURL(r)
		errs := fieldErrors{}
		// Generated only when not given: a blank one is kept, and refused by the validations
		// (cinstance.rb:27,512-514 `self.user_key ||= generate_key`; backend/model_extensions/
		// cinstance.rb:82-83 `self.application_id ||= SecureRandom.hex(4)`; "" is not nil in Ruby).
		if has(r, "user_key") {
			a.userKey = r.form.Get("user_key")
		}
		if has(r, "application_id") {
			a.appID = r.form.Get("application_id")
		}
		r.t.checkCredentials(a, errs)
		now := newStamps()
		for _, v := range r.form["application_key"] {
			a.keys = append(a.keys, appKey{value: v, stamps: now})
		}
		// Keys built with the application are validated with it: any invalid one is reported as
		// "application_keys is invalid" (has_many autosave validation).
		for i, k := range a.keys {
			if keyErrors(svc, k.value, a.keys[:i], i+1).answer().code != 0 {
				errs.add("application_keys", "is invalid")
				break
			}
		}
		if refusal := errs.answer(); refusal.code != 0 {
			return refusal
		}
		r.t.store(a, svc)
		return created("application", a.json(r.t))
	})
}

// newApplication is an application of the account on the plan with generated credentials: live, or
// pending when the plan requires approval (Contract#accept_on_create, app/models/contract.rb:333-341).
func newApplication(acc *account, p *plan) *application {
	a := &application{accountID: acc.id, serviceID: p.serviceID, planID: p.id, state: appLive, stamps: newStamps()}
	if p.approvalRequired {
		a.state = appPending
	}
	a.userKey, a.appID, a.verificationKey = randomHex(16), randomHex(4), randomHex(16)
	return a
}

// store gives a new application its id, and a first key when it has none and porta makes one:
// create_key_after_create? (app/lib/logic/keys.rb:6-12), for OAuth/OIDC, or app id/key with
// mandatory_app_key.
func (t *tenant) store(a *application, svc *service) {
	if len(a.keys) == 0 && (isOAuth(svc) || (svc.backendVersion == "2" && !svc.optionalAppKey)) {
		a.keys = append(a.keys, appKey{value: randomHex(16), stamps: newStamps()})
	}
	a.id = t.id()
	t.apps[a.id] = a
}

// checkCredentials validates an application's user_key and application_id as Cinstance does
// (cinstance.rb:106-111,121-128,486-508): formats, lengths, and unique among the tenant's applications.
func (t *tenant) checkCredentials(a *application, errs fieldErrors) {
	switch {
	case len(a.appID) < 4:
		errs.add("application_id", "is too short (minimum is 4 characters)")
	case len(a.appID) > 255:
		errs.add("application_id", "is too long (maximum is 255 characters)")
	}
	if !appIDFormat.MatchString(a.appID) {
		errs.add("application_id", msgInvalid)
	}
	if !userKeyFormat.MatchString(a.userKey) {
		errs.add("user_key", msgInvalid)
	}
	if len(a.userKey) > 256 {
		errs.add("user_key", "is too long (maximum is 256 characters)")
	}
	for _, o := range t.apps {
		if o.id == a.id {
			continue
		}
		if o.appID == a.appID {
			errs.add("application_id", msgTaken)
		}
		if o.userKey == a.userKey {
			errs.add("user_key", msgTaken)
		}
	}
}

// keysLimit is Cinstance#keys_limit: 1 for OAuth (OIDC) services, ApplicationKey::KEYS_LIMIT (5)
// otherwise (cinstance.rb:219-226, application_key.rb:4).
func keysLimit(svc *service) int {
	if isOAuth(svc) {
		return 1
	}
	return 5
}

// keyErrors validates a key as ApplicationKey does (application_key.rb:15-19,56-59,142-148): 5 to 255
// printable ASCII characters, unique (case-insensitively) among the application's other keys, and no
// more than the service's limit with it (count: the keys with this one).
func keyErrors(svc *service, value string, others []appKey, count int) fieldErrors {
	errs := fieldErrors{}
	if !appIDFormat.MatchString(value) {
		errs.add("value", msgInvalid)
	}
	switch n := len(value); {
	case n < 5:
		errs.add("value", "is too short (minimum is 5 characters)")
	case n > 255:
		errs.add("value", "is too long (maximum is 255 characters)")
	}
	for _, k := range others {
		if strings.EqualFold(k.value, value) {
			errs.add("value", msgTaken)
			break
		}
	}
	if count > keysLimit(svc) {
		errs.add("base", msgLimitReached)
	}
	return errs
}

// createApplicationKey is BuyerApplicationKeysController#create (buyer_application_keys_controller.rb:11-15):
// the key sent, or a generated one (SecureRandom.hex(16), application_key.rb:41-43,168-170) when there is
// no key parameter; 201 with the application, or 422 with the key's errors.
func createApplicationKey(r *request) answer {
	return withApp(r, "application_id", func(a *application) answer {
		value := randomHex(16)
		if has(r, "key") {
			value = r.form.Get("key")
		}
		if errs := keyErrors(r.t.services[a.serviceID], value, a.keys, len(a.keys)+1); len(errs) > 0 {
			return errs.answer()
		}
		a.keys = append(a.keys, appKey{value: value, stamps: newStamps()})
		a.touch()
		return created("application", a.json(r.t))
	})
}

// setRedirectURL takes redirect_url from the request when it has one, for any application (the
// controller permits it, buyers_applications_controller.rb:122-123), stripped as Cinstance#redirect_url=
// does (cinstance.rb:78-80); CinstanceRepresenter shows it only for OAuth/OIDC services (:35-39).
func (a *application) setRedirectURL(r *request) {
	if has(r, "redirect_url") {
		v := strings.TrimSpace(r.form.Get("redirect_url"))
		a.redirectURL = &v
	}
}

// updateApplication is BuyersApplicationsController#update (buyers_applications_controller.rb:35-39,
// 127-129): name, description, redirect_url and user_key; application_id is not writable (attr_readonly,
// app/lib/backend/model_extensions/cinstance.rb:17).
func updateApplication(r *request) answer {
	return withApp(r, "id", func(a *application) answer {
		next := *a
		if has(r, "name") {
			next.name, next.nameSet = r.form.Get("name"), true
		}
		if has(r, "description") {
			next.description, next.descriptionSet = r.form.Get("description"), true
		}
		if has(r, "user_key") {
			next.userKey = r.form.Get("user_key")
		}
		next.setRedirectURL(r)
		errs := fieldErrors{}
		r.t.checkCredentials(&next, errs)
		if a := errs.answer(); a.code != 0 {
			return a
		}
		next.touch()
		*a = next
		return ok("application", a.json(r.t))
	})
}

// changeApplicationPlan is BuyersApplicationsController#change_plan (buyers_applications_controller.rb:59-64):
// the plan is looked up among all the tenant's application plans (404 if none); Contract#change_plan
// (app/models/contract.rb:206-211,274-275) does nothing for the same plan, and Cinstance refuses a plan
// of another service (same_service, cinstance.rb:113,445-448): 422 {"errors":{"plan":[...]}}. The answer
// is the plan (ApplicationPlanRepresenter).
func changeApplicationPlan(r *request) answer {
	return withApp(r, "id", func(a *application) answer {
		p, found := r.t.plans[formID(r, "plan_id")]
		if !found {
			return notFound()
		}
		if p.serviceID != a.serviceID {
			return unprocessable("plan", msgPlanNotHere)
		}
		if p.id != a.planID {
			a.planID = p.id
			a.touch()
		}
		return ok("application_plan", p.json())
	})
}

// findApplication finds one application kept by keep: by user_key among user-key services' ones, by
// app_id among the others', else, when byID, by application_id or id; 404 when none.
func findApplication(r *request, keep func(*application) bool, byID bool) answer {
	var match func(*application) bool
	switch {
	case has(r, "user_key"):
		match = func(a *application) bool {
			return isUserKey(r.t.services[a.serviceID]) && a.userKey == r.form.Get("user_key")
		}
	case has(r, "app_id"):
		match = func(a *application) bool {
			return !isUserKey(r.t.services[a.serviceID]) && a.appID == r.form.Get("app_id")
		}
	case byID && (has(r, "application_id") || has(r, "id")):
		id := formID(r, "application_id")
		if !has(r, "application_id") {
			id = formID(r, "id")
		}
		match = func(a *application) bool { return a.id == id }
	default:
		return notFound()
	}
	for _, id := range sortedIDs(r.t.apps, func(a *application) bool { return keep(a) && match(a) }) {
		return ok("application", r.t.apps[id].json(r.t))
	}
	return notFound()
}

func (t *tenant) appJSONByID(id int64) map[string]any { return t.apps[id].json(t) }

// withApp finds the application among the account's (buyer.bought_cinstances.find,
// buyers_base_controller.rb:9-11, buyers_applications_controller.rb:113-115).
func withApp(r *request, param string, f func(*application) answer) answer {
	return withAccount(r, "account_id", func(acc *account) answer {
		a, found := r.t.apps[r.params[param]]
		if !found || a.accountID != acc.id {
			return notFound()
		}
		return f(a)
	})
}

// appEvent fires an application event allowed from one state (Contract::States, states.rb:27-37).
func appEvent(event, to, from string) handlerFunc {
	return func(r *request) answer {
		return withApp(r, "id", func(a *application) answer {
			if a.state != from {
				return invalidTransition(event)
			}
			a.state = to
			a.touch()
			return ok("application", a.json(r.t))
		})
	}
}

// formID reads an id parameter of the form; 0 when absent or not a number.
func formID(r *request, key string) int64 {
	var id int64
	_ = json.Unmarshal([]byte(r.form.Get(key)), &id)
	return id
}

func itoa(i int64) string { b, _ := json.Marshal(i); return string(b) }
