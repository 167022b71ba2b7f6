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
	// ObserveOnly reports whether spec.management is Observe: the 3scale object is read, never written.
	ObserveOnly() bool
	// ForgetTenantIDs forgets every remote id (and record of remote objects) the status holds: they
	// belong to the tenant that gave them.
	ForgetTenantIDs()
}

// ObserveOnly implements SyncedObject.
func (b *Backend) ObserveOnly() bool { return b.Spec.ObserveOnly() }

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

// ObserveOnly implements SyncedObject.
func (p *Product) ObserveOnly() bool { return p.Spec.ObserveOnly() }

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
	return effectiveDeletionPolicy(a.Spec.DeletionPolicy, a.Spec.Management)
}

// ObserveOnly implements SyncedObject.
func (a *ApplicationPlan) ObserveOnly() bool { return a.Spec.Management == ManagementObserve }

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

// ObserveOnly implements SyncedObject.
func (d *DeveloperAccount) ObserveOnly() bool { return d.Spec.ObserveOnly() }

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
	return effectiveDeletionPolicy(a.Spec.DeletionPolicy, a.Spec.Management)
}

// ObserveOnly implements SyncedObject.
func (a *Application) ObserveOnly() bool { return a.Spec.Management == ManagementObserve }

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

// ObserveOnly implements SyncedObject.
func (d *ActiveDoc) ObserveOnly() bool { return d.Spec.ObserveOnly() }

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

// ObserveOnly implements SyncedObject.
func (c *CustomPolicyDefinition) ObserveOnly() bool { return c.Spec.ObserveOnly() }

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

// ObserveOnly implements SyncedObject.
func (d *DeveloperPortal) ObserveOnly() bool { return d.Spec.ObserveOnly() }

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

// Remote ids belong to the tenant that gave them: when an object's provider account points at another
// tenant, the engine calls ForgetTenantIDs, which forgets every id and every record of the old tenant's
// objects its status holds — its own id, those of what it holds (a portal's items, an account's users,
// features, metrics) and what it learnt of them (built-in originals, passwords set, versions) — so that
// nothing is ever read, written or deleted on the new tenant by an id of the old one. (The engine
// records the object's own id in status.leftBehind first.)

// forgetTenantIDs forgets what every kind records in CommonStatus of its tenant's objects.
func (s *CommonStatus) forgetTenantIDs() {
	s.MetricIDs, s.MetricsHash, s.SyncedHash = nil, "", ""
}

// ForgetTenantIDs implements SyncedObject.
func (b *Backend) ForgetTenantIDs() {
	b.Status.forgetTenantIDs()
	b.Status.BackendID = 0
}

// ForgetTenantIDs implements SyncedObject.
func (p *Product) ForgetTenantIDs() {
	p.Status.forgetTenantIDs()
	p.Status.ProductID, p.Status.FeatureIDs, p.Status.DeployedHash = 0, nil, ""
	p.Status.Production, p.Status.Usage, p.Status.RetirementSweepPending, p.Status.Gateway = nil, nil, false, nil
}

// ForgetTenantIDs implements SyncedObject.
func (a *ApplicationPlan) ForgetTenantIDs() {
	a.Status.forgetTenantIDs()
	a.Status.PlanID, a.Status.ProductID, a.Status.FeatureIDs = 0, 0, nil
}

// ForgetTenantIDs implements SyncedObject.
func (d *DeveloperAccount) ForgetTenantIDs() {
	d.Status.forgetTenantIDs()
	d.Status.AccountID, d.Status.UserIDs, d.Status.PasswordVersions, d.Status.CreditCardStored = 0, nil, nil, false
	d.Status.ServiceSubscriptionIDs = nil
}

// ForgetTenantIDs implements SyncedObject.
func (a *Application) ForgetTenantIDs() {
	a.Status.forgetTenantIDs()
	a.Status.ApplicationID, a.Status.AccountID, a.Status.PlanID, a.Status.ProductID = 0, 0, 0, 0
}

// ForgetTenantIDs implements SyncedObject.
func (d *ActiveDoc) ForgetTenantIDs() {
	d.Status.forgetTenantIDs()
	d.Status.ActiveDocID, d.Status.ProductID = 0, 0
}

// ForgetTenantIDs implements SyncedObject.
func (c *CustomPolicyDefinition) ForgetTenantIDs() {
	c.Status.forgetTenantIDs()
	c.Status.PolicyID = 0
}

// ForgetTenantIDs implements SyncedObject: the root section, every item with its "made by apimsync"
// mark, and the built-in originals (never restored onto another tenant).
func (d *DeveloperPortal) ForgetTenantIDs() {
	d.Status.forgetTenantIDs()
	d.Status.RootSectionID, d.Status.Items, d.Status.BuiltinOriginals, d.Status.Drafts, d.Status.EditedByHand = 0, nil, nil, 0, 0
}

// ForgetTenantIDs implements SyncedObject: a Tenant's ids are its master's.
func (t *Tenant) ForgetTenantIDs() {
	t.Status.forgetTenantIDs()
	t.Status.TenantID, t.Status.AdminURL, t.Status.State = 0, "", ""
}

// ObserveOnly implements SyncedObject.
func (a *AccountPlan) ObserveOnly() bool { return a.Spec.ObserveOnly() }

// GetSyncStatus implements SyncedObject.
func (a *AccountPlan) GetSyncStatus() *CommonStatus { return &a.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (a *AccountPlan) GetDeletionPolicy() DeletionPolicy { return a.Spec.EffectiveDeletionPolicy() }

// GetRemoteID implements SyncedObject.
func (a *AccountPlan) GetRemoteID() int64 { return a.Status.AccountPlanID }

// SetRemoteID implements SyncedObject.
func (a *AccountPlan) SetRemoteID(id int64) { a.Status.AccountPlanID = id }

// GetAdoptionPolicy implements SyncedObject.
func (a *AccountPlan) GetAdoptionPolicy() AdoptionPolicy { return a.Spec.EffectiveAdoption() }

// ForgetTenantIDs implements SyncedObject.
func (a *AccountPlan) ForgetTenantIDs() {
	a.Status.forgetTenantIDs()
	a.Status.AccountPlanID, a.Status.FeatureIDs = 0, nil
}

// GetSyncStatus implements SyncedObject.
func (p *ServicePlan) GetSyncStatus() *CommonStatus { return &p.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (p *ServicePlan) GetDeletionPolicy() DeletionPolicy {
	return effectiveDeletionPolicy(p.Spec.DeletionPolicy, p.Spec.Management)
}

// ObserveOnly implements SyncedObject.
func (p *ServicePlan) ObserveOnly() bool { return p.Spec.Management == ManagementObserve }

// GetRemoteID implements SyncedObject.
func (p *ServicePlan) GetRemoteID() int64 { return p.Status.ServicePlanID }

// SetRemoteID implements SyncedObject.
func (p *ServicePlan) SetRemoteID(id int64) { p.Status.ServicePlanID = id }

// GetAdoptionPolicy implements SyncedObject.
func (p *ServicePlan) GetAdoptionPolicy() AdoptionPolicy {
	if p.Spec.Adoption == "" {
		return AdoptionIfExists
	}
	return p.Spec.Adoption
}

// ForgetTenantIDs implements SyncedObject.
func (p *ServicePlan) ForgetTenantIDs() {
	p.Status.forgetTenantIDs()
	p.Status.ServicePlanID, p.Status.ProductID, p.Status.FeatureIDs = 0, 0, nil
}

// ObserveOnly implements SyncedObject.
func (f *FieldDefinition) ObserveOnly() bool { return f.Spec.ObserveOnly() }

// GetSyncStatus implements SyncedObject.
func (f *FieldDefinition) GetSyncStatus() *CommonStatus { return &f.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (f *FieldDefinition) GetDeletionPolicy() DeletionPolicy { return f.Spec.EffectiveDeletionPolicy() }

// GetRemoteID implements SyncedObject.
func (f *FieldDefinition) GetRemoteID() int64 { return f.Status.FieldDefinitionID }

// SetRemoteID implements SyncedObject.
func (f *FieldDefinition) SetRemoteID(id int64) { f.Status.FieldDefinitionID = id }

// GetAdoptionPolicy implements SyncedObject.
func (f *FieldDefinition) GetAdoptionPolicy() AdoptionPolicy { return f.Spec.EffectiveAdoption() }

// ForgetTenantIDs implements SyncedObject.
func (f *FieldDefinition) ForgetTenantIDs() {
	f.Status.forgetTenantIDs()
	f.Status.FieldDefinitionID = 0
}

// ObserveOnly implements SyncedObject.
func (s *TenantSettings) ObserveOnly() bool { return s.Spec.ObserveOnly() }

// GetSyncStatus implements SyncedObject.
func (s *TenantSettings) GetSyncStatus() *CommonStatus { return &s.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject: deleting TenantSettings leaves the tenant's settings as
// they are (a tenant always has its provider account and its webhook settings).
func (s *TenantSettings) GetDeletionPolicy() DeletionPolicy { return DeletionPolicyRetain }

// GetRemoteID implements SyncedObject.
func (s *TenantSettings) GetRemoteID() int64 { return s.Status.ProviderAccountID }

// SetRemoteID implements SyncedObject.
func (s *TenantSettings) SetRemoteID(id int64) { s.Status.ProviderAccountID = id }

// GetAdoptionPolicy implements SyncedObject.
func (s *TenantSettings) GetAdoptionPolicy() AdoptionPolicy { return s.Spec.EffectiveAdoption() }

// ForgetTenantIDs implements SyncedObject.
func (s *TenantSettings) ForgetTenantIDs() {
	s.Status.forgetTenantIDs()
	s.Status.ProviderAccountID, s.Status.WebhooksWritten, s.Status.AdminSignIn, s.Status.Pruning = 0, "", nil, nil
}

// GetSyncStatus implements SyncedObject.
func (u *AdminUser) GetSyncStatus() *CommonStatus { return &u.Status.CommonStatus }

// GetDeletionPolicy implements SyncedObject.
func (u *AdminUser) GetDeletionPolicy() DeletionPolicy {
	return effectiveDeletionPolicy(u.Spec.DeletionPolicy, u.Spec.Management)
}

// ObserveOnly implements SyncedObject.
func (u *AdminUser) ObserveOnly() bool { return u.Spec.Management == ManagementObserve }

// GetRemoteID implements SyncedObject.
func (u *AdminUser) GetRemoteID() int64 { return u.Status.UserID }

// SetRemoteID implements SyncedObject.
func (u *AdminUser) SetRemoteID(id int64) { u.Status.UserID = id }

// GetAdoptionPolicy implements SyncedObject: a tenant's user is taken over only on purpose (IfExists).
func (u *AdminUser) GetAdoptionPolicy() AdoptionPolicy {
	if u.Spec.Adoption == "" {
		return AdoptionNever
	}
	return u.Spec.Adoption
}

// ForgetTenantIDs implements SyncedObject.
func (u *AdminUser) ForgetTenantIDs() {
	u.Status.forgetTenantIDs()
	u.Status.UserID, u.Status.State, u.Status.PasswordWritten = 0, "", ""
}
