// Package developeraccount syncs DeveloperAccounts: developer accounts with their users and passwords.
package developeraccount
