// Package accountplan syncs AccountPlans: a tenant's account plans, the terms its developer accounts sign
// up under. porta shows an account plan without its system name, so an AccountPlan holds its plan by the
// id it records, and finds one by its name only to adopt it.
package accountplan
