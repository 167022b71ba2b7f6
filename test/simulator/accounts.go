package simulator

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
)

// Developer accounts, their users and applications, as porta's admin API serves them
// (app/controllers/admin/api/{signups,accounts,buyers_users,buyers_applications}_controller.rb).

type account struct {
	id                                            int64
	orgName, state                                string
	monthlyBillingEnabled, monthlyChargingEnabled bool
	stamps
}

func (a *account) json() map[string]any {
	return map[string]any{"id": a.id, "org_name": a.orgName, "state": a.state, "monthly_billing_enabled": a.monthlyBillingEnabled,
		"monthly_charging_enabled": a.monthlyChargingEnabled, "credit_card_stored": false, "created_at": a.created, "updated_at": a.updated}
}

type user struct {
	id, accountID                int64
	username, email, role, state string
	stamps
}

func (u *user) json() map[string]any {
	return map[string]any{"id": u.id, "account_id": u.accountID, "username": u.username, "email": u.email, "role": u.role, "state": u.state,
		"created_at": u.created, "updated_at": u.updated}
}

type application struct {
	id, accountID, serviceID, planID int64
	name, description, state         string
	userKey, appID                   string
	keys                             []string
	stamps
}

// json is porta's CinstanceRepresenter: user_key for user-key services (backend_version 1),
// application_id for the others.
func (a *application) json(t *tenant) map[string]any {
	out := map[string]any{"id": a.id, "state": a.state, "enabled": a.state == "live", "account_id": a.accountID, "service_id": a.serviceID,
		"plan_id": a.planID, "name": a.name, "description": a.description, "created_at": a.created, "updated_at": a.updated}
	if p := t.plans[a.planID]; p != nil {
		out["plan_name"] = p.name
	}
	if acc := t.accounts[a.accountID]; acc != nil {
		out["org_name"] = acc.orgName
	}
	if a.appID != "" {
		out["application_id"] = a.appID
	} else {
		out["user_key"] = a.userKey
	}
	return out
}

// randomHex is a random key as porta generates them (SecureRandom.hex).
func randomHex(bytes int) string {
	b := make([]byte, bytes)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func accountRoutes() []route {
	return []route{
		handle("POST", "/admin/api/signup.json", signup),
		handle("GET", "/admin/api/accounts.json", func(r *request) answer {
			return wrapList("accounts", "account", r.t.accounts, nil, (*account).json, r.form, true)
		}),
		handle("GET", "/admin/api/accounts/find.json", func(r *request) answer {
			for _, id := range sortedIDs(r.t.users, func(u *user) bool { return u.username == r.form.Get("username") }) {
				return ok("account", r.t.accounts[r.t.users[id].accountID].json())
			}
			return notFound()
		}),
		handle("GET", "/admin/api/accounts/{id}.json", func(r *request) answer {
			return withAccount(r, "id", func(a *account) answer { return ok("account", a.json()) })
		}),
		handle("PUT", "/admin/api/accounts/{id}.json", func(r *request) answer {
			return withAccount(r, "id", func(a *account) answer {
				if v := r.form.Get("org_name"); has(r, "org_name") {
					if strings.TrimSpace(v) == "" {
						return unprocessable("org_name", "can't be blank")
					}
					a.orgName = v
				}
				if has(r, "monthly_billing_enabled") {
					a.monthlyBillingEnabled = flag(r.form.Get("monthly_billing_enabled"))
				}
				if has(r, "monthly_charging_enabled") {
					a.monthlyChargingEnabled = flag(r.form.Get("monthly_charging_enabled"))
				}
				a.touch()
				return ok("account", a.json())
			})
		}),
		handle("PUT", "/admin/api/accounts/{id}/approve.json", func(r *request) answer {
			return withAccount(r, "id", func(a *account) answer {
				a.state = "approved"
				return ok("account", a.json())
			})
		}),
		// Account#destroy takes its users and its applications (bought_cinstances) with it.
		handle("DELETE", "/admin/api/accounts/{id}.json", func(r *request) answer {
			return withAccount(r, "id", func(a *account) answer {
				for id, u := range r.t.users {
					if u.accountID == a.id {
						delete(r.t.users, id)
					}
				}
				for id, app := range r.t.apps {
					if app.accountID == a.id {
						delete(r.t.apps, id)
					}
				}
				delete(r.t.accounts, a.id)
				return deleted()
			})
		}),

		handle("GET", "/admin/api/accounts/{account_id}/users.json", func(r *request) answer {
			return withAccount(r, "account_id", func(a *account) answer {
				return wrapList("users", "user", r.t.users, func(u *user) bool { return u.accountID == a.id }, (*user).json, r.form, false)
			})
		}),
		// A user created by the provider is a pending member until activated.
		handle("POST", "/admin/api/accounts/{account_id}/users.json", func(r *request) answer {
			return withAccount(r, "account_id", func(a *account) answer {
				u := &user{accountID: a.id, username: r.form.Get("username"), email: r.form.Get("email"), role: "member", state: "pending", stamps: newStamps()}
				if errs := r.t.validateUser(u); len(errs) > 0 {
					return errs.answer()
				}
				u.id = r.t.id()
				r.t.users[u.id] = u
				return created("user", u.json())
			})
		}),
		handle("PUT", "/admin/api/accounts/{account_id}/users/{id}.json", func(r *request) answer {
			return withUser(r, func(u *user) answer {
				changed := *u
				if has(r, "username") {
					changed.username = r.form.Get("username")
				}
				if has(r, "email") {
					changed.email = r.form.Get("email")
				}
				if errs := r.t.validateUser(&changed); len(errs) > 0 {
					return errs.answer()
				}
				*u = changed
				u.touch()
				return ok("user", u.json())
			})
		}),
		handle("PUT", "/admin/api/accounts/{account_id}/users/{id}/activate.json", userTransition(func(u *user) { u.state = "active" })),
		handle("PUT", "/admin/api/accounts/{account_id}/users/{id}/admin.json", userTransition(func(u *user) { u.role = "admin" })),
		handle("PUT", "/admin/api/accounts/{account_id}/users/{id}/member.json", userTransition(func(u *user) { u.role = "member" })),
		handle("DELETE", "/admin/api/accounts/{account_id}/users/{id}.json", func(r *request) answer {
			return withUser(r, func(u *user) answer {
				// An account keeps at least one admin (porta's User#can_be_destroyed? and abilities).
				admins := 0
				for _, o := range r.t.users {
					if o.accountID == u.accountID && o.role == "admin" {
						admins++
					}
				}
				if u.role == "admin" && admins == 1 {
					return answer{http.StatusForbidden, map[string]string{"error": "Access Denied"}}
				}
				delete(r.t.users, u.id)
				return deleted()
			})
		}),
	}
}

// signup creates an account with its first user, an active admin, approved as the default account
// plan (no approval required) makes it (Signup::DeveloperAccountManager).
func signup(r *request) answer {
	errs := fieldErrors{}
	orgName := r.form.Get("org_name")
	if strings.TrimSpace(orgName) == "" {
		errs.add("org_name", "can't be blank")
	}
	u := &user{username: r.form.Get("username"), email: r.form.Get("email"), role: "admin", state: "active", stamps: newStamps()}
	for f, msgs := range r.t.validateUser(u) {
		for _, m := range msgs {
			errs.add(f, m)
		}
	}
	if len(errs) > 0 {
		return errs.answer()
	}
	a := &account{id: r.t.id(), orgName: orgName, state: "approved", stamps: newStamps()}
	r.t.accounts[a.id] = a
	u.id, u.accountID = r.t.id(), a.id
	r.t.users[u.id] = u
	return created("account", a.json())
}

// validateUser checks what porta's User validates: username and email present and unique in the
// tenant.
func (t *tenant) validateUser(u *user) fieldErrors {
	errs := fieldErrors{}
	if strings.TrimSpace(u.username) == "" {
		errs.add("username", "can't be blank")
	}
	if !strings.Contains(u.email, "@") {
		errs.add("email", "should look like an email address")
	}
	for _, o := range t.users {
		if o.id == u.id {
			continue
		}
		if o.username == u.username && u.username != "" {
			errs.add("username", "has already been taken")
		}
		if o.email == u.email && u.email != "" {
			errs.add("email", "has already been taken")
		}
	}
	return errs
}

func withAccount(r *request, param string, f func(*account) answer) answer {
	a, found := r.t.accounts[r.params[param]]
	if !found {
		return notFound()
	}
	return f(a)
}

func withUser(r *request, f func(*user) answer) answer {
	return withAccount(r, "account_id", func(a *account) answer {
		u, found := r.t.users[r.params["id"]]
		if !found || u.accountID != a.id {
			return notFound()
		}
		return f(u)
	})
}

func userTransition(change func(*user)) handlerFunc {
	return func(r *request) answer {
		return withUser(r, func(u *user) answer {
			change(u)
			u.touch()
			return ok("user", u.json())
		})
	}
}
