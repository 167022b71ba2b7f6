// Package custompolicy syncs CustomPolicyDefinitions: custom policies in the APIcast policy registry.
package custompolicy
