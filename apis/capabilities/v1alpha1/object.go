package v1alpha1

// SyncedObject is implemented by every kind apimsync syncs: it gives the generic engine the status and
// settings all kinds share.
// +kubebuilder:object:generate=false
type SyncedObject interface {
	// GetSyncStatus returns the status fields all kinds share.
	GetSyncStatus() *CommonStatus
	// GetDeletionPolicy returns the effective deletion policy.
	GetDeletionPolicy() DeletionPolicy
	// GetRemoteID returns the id of the 3scale object, 0 when not created yet.
	GetRemoteID() int64
	// SetRemoteID records the id of the 3scale object (0 forgets it).
	SetRemoteID(id int64)
	// GetAdoptionPolicy returns the effective adoption policy.
	GetAdoptionPolicy() AdoptionPolicy
}

// GetSyncStatus implements SyncedObject.
func (b *Backend) GetSyncStatus() *CommonStatus { return &b.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (b *Backend) GetDeletionPolicy() DeletionPolicy { return b.Spec.EffectiveDeletionPolicy() }

// GetRemoteID implements SyncedObject.
func (b *Backend) GetRemoteID() int64 { return b.Status.BackendID }

// SetRemoteID implements SyncedObject.
func (b *Backend) SetRemoteID(id int64) { b.Status.BackendID = id }

// GetAdoptionPolicy implements SyncedObject.
func (b *Backend) GetAdoptionPolicy() AdoptionPolicy { return b.Spec.EffectiveAdoption() }

// GetSyncStatus implements SyncedObject.
func (p *Product) GetSyncStatus() *CommonStatus { return &p.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (p *Product) GetDeletionPolicy() DeletionPolicy { return p.Spec.EffectiveDeletionPolicy() }

// GetRemoteID implements SyncedObject.
func (p *Product) GetRemoteID() int64 { return p.Status.ProductID }

// SetRemoteID implements SyncedObject.
func (p *Product) SetRemoteID(id int64) { p.Status.ProductID = id }

// GetAdoptionPolicy implements SyncedObject.
func (p *Product) GetAdoptionPolicy() AdoptionPolicy { return p.Spec.EffectiveAdoption() }

// GetSyncStatus implements SyncedObject.
func (a *ApplicationPlan) GetSyncStatus() *CommonStatus { return &a.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (a *ApplicationPlan) GetDeletionPolicy() DeletionPolicy {
	if a.Spec.DeletionPolicy == "" {
		return DeletionPolicyDelete
	}
	return a.Spec.DeletionPolicy
}

// GetRemoteID implements SyncedObject.
func (a *ApplicationPlan) GetRemoteID() int64 { return a.Status.PlanID }

// SetRemoteID implements SyncedObject.
func (a *ApplicationPlan) SetRemoteID(id int64) { a.Status.PlanID = id }

// GetAdoptionPolicy implements SyncedObject.
func (a *ApplicationPlan) GetAdoptionPolicy() AdoptionPolicy {
	if a.Spec.Adoption == "" {
		return AdoptionIfExists
	}
	return a.Spec.Adoption
}

// GetSyncStatus implements SyncedObject.
func (d *DeveloperAccount) GetSyncStatus() *CommonStatus { return &d.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (d *DeveloperAccount) GetDeletionPolicy() DeletionPolicy {
	return d.Spec.EffectiveDeletionPolicy()
}

// GetRemoteID implements SyncedObject.
func (d *DeveloperAccount) GetRemoteID() int64 { return d.Status.AccountID }

// SetRemoteID implements SyncedObject.
func (d *DeveloperAccount) SetRemoteID(id int64) { d.Status.AccountID = id }

// GetAdoptionPolicy implements SyncedObject.
func (d *DeveloperAccount) GetAdoptionPolicy() AdoptionPolicy { return d.Spec.EffectiveAdoption() }

// GetSyncStatus implements SyncedObject.
func (a *Application) GetSyncStatus() *CommonStatus { return &a.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (a *Application) GetDeletionPolicy() DeletionPolicy {
	if a.Spec.DeletionPolicy == "" {
		return DeletionPolicyDelete
	}
	return a.Spec.DeletionPolicy
}

// GetRemoteID implements SyncedObject.
func (a *Application) GetRemoteID() int64 { return a.Status.ApplicationID }

// SetRemoteID implements SyncedObject.
func (a *Application) SetRemoteID(id int64) { a.Status.ApplicationID = id }

// GetAdoptionPolicy implements SyncedObject.
func (a *Application) GetAdoptionPolicy() AdoptionPolicy {
	if a.Spec.Adoption == "" {
		return AdoptionIfExists
	}
	return a.Spec.Adoption
}

// GetSyncStatus implements SyncedObject.
func (d *ActiveDoc) GetSyncStatus() *CommonStatus { return &d.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (d *ActiveDoc) GetDeletionPolicy() DeletionPolicy { return d.Spec.EffectiveDeletionPolicy() }

// GetRemoteID implements SyncedObject.
func (d *ActiveDoc) GetRemoteID() int64 { return d.Status.ActiveDocID }

// SetRemoteID implements SyncedObject.
func (d *ActiveDoc) SetRemoteID(id int64) { d.Status.ActiveDocID = id }

// GetAdoptionPolicy implements SyncedObject.
func (d *ActiveDoc) GetAdoptionPolicy() AdoptionPolicy { return d.Spec.EffectiveAdoption() }

// GetSyncStatus implements SyncedObject.
func (c *CustomPolicyDefinition) GetSyncStatus() *CommonStatus { return &c.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (c *CustomPolicyDefinition) GetDeletionPolicy() DeletionPolicy {
	return c.Spec.EffectiveDeletionPolicy()
}

// GetRemoteID implements SyncedObject.
func (c *CustomPolicyDefinition) GetRemoteID() int64 { return c.Status.PolicyID }

// SetRemoteID implements SyncedObject.
func (c *CustomPolicyDefinition) SetRemoteID(id int64) { c.Status.PolicyID = id }

// GetAdoptionPolicy implements SyncedObject.
func (c *CustomPolicyDefinition) GetAdoptionPolicy() AdoptionPolicy {
	return c.Spec.EffectiveAdoption()
}

// GetSyncStatus implements SyncedObject.
func (d *DeveloperPortal) GetSyncStatus() *CommonStatus { return &d.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (d *DeveloperPortal) GetDeletionPolicy() DeletionPolicy { return d.Spec.EffectiveDeletionPolicy() }

// GetRemoteID implements SyncedObject: the tenant's root section.
func (d *DeveloperPortal) GetRemoteID() int64 { return d.Status.RootSectionID }

// SetRemoteID implements SyncedObject.
func (d *DeveloperPortal) SetRemoteID(id int64) { d.Status.RootSectionID = id }

// GetAdoptionPolicy implements SyncedObject.
func (d *DeveloperPortal) GetAdoptionPolicy() AdoptionPolicy { return d.Spec.EffectiveAdoption() }
