// Package serviceplan syncs ServicePlans: a Product's service plans, the terms a developer account
// subscribes to the product under. porta shows a service plan without its system name, so a ServicePlan
// holds its plan by the id it records, and finds one by its name only to adopt it.
package serviceplan
