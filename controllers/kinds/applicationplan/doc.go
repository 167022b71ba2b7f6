// Package applicationplan syncs ApplicationPlans: a product's plans with their limits, pricing rules and
// the features they enable.
package applicationplan
