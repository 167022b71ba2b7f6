// Package application syncs Applications: developers' applications on a plan, their credentials, and the
// Secret they are written to.
package application
